//! The stepping: [`Simulation::advance_to`] with its fast path inside the last adaptive step,
//! the fixed-step segments between stops, the adaptive steps from the integrator's own point,
//! and the reported state by dense output (see [the module documentation](super)).

use super::{Advance, Finish, STEP_SLACK, Simulation, StepFailure};
use crate::checks::{self, Checks};
use crate::integrators::{Integrator, Method, SolverError};
use crate::time_axis::time_resolution_s;

impl Simulation {
    fn update_counters(&mut self) {
        self.stats.rejected_steps = self.integrator.rejected_steps();
        self.stats.rhs_evaluations = self.network.rhs_evaluations;
    }

    /// `update_counters` out of line, for the output path where it is rarely needed.
    #[cold]
    #[inline(never)]
    fn update_counters_cold(&mut self) {
        self.update_counters();
    }

    /// A table breakpoint at `t_s`: the next segment sees the tables' new values, and no
    /// multistep history from before the discontinuity is used across it.
    pub(super) fn start_segment(&mut self, t_s: f64) {
        self.network.segment_start_s = t_s;
        self.integrator.restart();
    }

    /// Advance to exactly `t_target_s` (or to the first event or failure before it).
    pub fn advance_to(&mut self, t_target_s: f64) -> Result<Advance, StepFailure> {
        // Most output times of an adaptive run fall inside the step already taken: the state
        // there by dense output, without the general driver's set-up (a quarter of a small
        // network's solve was this path). The same calls as the general path takes.
        if self.finished.is_none()
            && self.t_s < t_target_s
            && t_target_s < self.internal.t_s
            && self.increment.len() == self.y.len()
            && !self.integrator.fixed_step()
        {
            let r = self.report_inside_step(t_target_s);
            // Interpolation evaluates nothing. A dense output that could not interpolate (the
            // BDF after restoring a state without its last step) took a step of its own,
            // with right-hand sides and possibly rejections: both counters then.
            if self.stats.rhs_evaluations != self.network.rhs_evaluations {
                self.update_counters_cold();
            }
            return r;
        }
        self.advance_general(t_target_s)
    }

    /// [`Self::advance_to`] for a target inside the adaptive method's last step, after the
    /// reported time: what `advance_adaptive_inner` does there (`report_at`, then
    /// `check_max_time`).
    fn report_inside_step(&mut self, target: f64) -> Result<Advance, StepFailure> {
        // The increment vector lent to `report_at` (a move of the Vec, no allocation).
        let mut inc = std::mem::take(&mut self.increment);
        let r = self.interpolate_to(target, &mut inc);
        self.increment = inc;
        r?;
        self.check_max_time();
        Ok(Advance::Reached)
    }

    /// [`Self::advance_to`] in general (out of line: the fast path above stays small). Its
    /// name must not contain `advance_to`: the benchmarks' callgrind runs toggle collection
    /// on every function of that name, and a nested one would switch it off.
    #[inline(never)]
    fn advance_general(&mut self, t_target_s: f64) -> Result<Advance, StepFailure> {
        if !t_target_s.is_finite() {
            return Err(StepFailure {
                code: 0,
                last_good_t_s: self.t_s,
                message: format!("target time {t_target_s} is not finite"),
            });
        }
        self.ensure_scratch();
        self.settle_modes();
        if !self.integrator.fixed_step() {
            let r = self.advance_adaptive(t_target_s);
            self.update_counters();
            return r;
        }
        if let Err(why) = self.fixed_step_work(t_target_s) {
            return Err(StepFailure {
                code: 0,
                last_good_t_s: self.t_s,
                message: format!("solver failure: {why}"),
            });
        }
        // The steps fixed_step_work allowed (at most max_steps), and as many again cut short by
        // events or split: beyond that, events keep cutting the steps without the time getting
        // on (a law chattering at one point), which no number of further steps would end. The
        // budget is enforced before every step, so no segment or split runs past it.
        let (first_step, step_limit) = (self.stats.steps, 2 * self.settings.max_steps);
        let budget_end = first_step.saturating_add(step_limit);
        loop {
            if let Some(f) = self.finished {
                self.update_counters();
                return Ok(Advance::Finished(f));
            }
            if self.t_s >= t_target_s {
                self.update_counters();
                return Ok(Advance::Reached);
            }
            if self.stats.steps >= budget_end {
                self.update_counters();
                let at = match &self.last_event {
                    Some(r) => format!(
                        "; the last: {} at t = {:?} s",
                        self.network.event_description(r.k),
                        r.t_s
                    ),
                    None => String::new(),
                };
                return Err(StepFailure {
                    code: 0,
                    last_good_t_s: self.t_s,
                    message: format!(
                        "solver failure: {} fixed steps in one advance without reaching t = \
                         {t_target_s:?} s (the time is {:?} s): events cut the steps short{at}",
                        self.stats.steps - first_step,
                        self.t_s
                    ),
                });
            }
            let mut stop = t_target_s;
            let breakpoint = self.network.next_breakpoint(self.t_s);
            if let Some(b) = breakpoint {
                stop = stop.min(b);
            }
            let max_time = self.settings.max_time_s.filter(|_| self.pending_exits());
            if let Some(mt) = max_time {
                stop = stop.min(mt.max(self.t_s));
            }
            if let Some(ev) = self.advance_segment(stop, budget_end)? {
                self.update_counters();
                return Ok(ev);
            }
            if breakpoint == Some(self.t_s) {
                self.start_segment(self.t_s);
            }
            if let Some(mt) = max_time {
                if self.t_s >= mt && self.pending_exits() {
                    self.set_rc(checks::NEVER_EXITED);
                    self.finished = Some(Finish::NeverExited { t_s: self.t_s });
                }
            }
        }
    }

    /// Equal steps of about `step_s` from the current time to exactly `stop`, or until the
    /// step count reaches `budget_end` (the caller then reports the work exceeded).
    fn advance_segment(
        &mut self,
        stop: f64,
        budget_end: u64,
    ) -> Result<Option<Advance>, StepFailure> {
        let t0 = self.t_s;
        let span = stop - t0;
        let step_s = self.settings.step_s.unwrap_or(span);
        let n = ((span / step_s) * (1.0 - STEP_SLACK)).ceil().max(1.0) as u64;
        let h_seg = span / n as f64;
        if n > 1 && h_seg < time_resolution_s(stop) {
            return Err(StepFailure {
                code: 0,
                last_good_t_s: self.t_s,
                message: format!(
                    "solver failure: the fixed step {h_seg:e} s is below the time axis's \
                     resolution {:e} s at t = {stop:?} s",
                    time_resolution_s(stop)
                ),
            });
        }
        for i in 1..=n {
            if self.stats.steps >= budget_end {
                return Ok(None);
            }
            if self.stats.steps >= self.stability.next_step {
                self.check_stability(h_seg);
            }
            let t_next = if i == n { stop } else { t0 + i as f64 * h_seg };
            if let Some(ev) = self.step_split(t_next, 0, budget_end)? {
                return Ok(Some(ev));
            }
        }
        Ok(None)
    }

    /// One step from the current time to `t_next`, split in halves where an implicit method's
    /// Newton iteration fails on a network with switches (a valve's band of 1 Pa is a slope no
    /// Newton iteration of the whole step converges on): each half from a restarted
    /// integrator, at most `MAX_SPLITS` halvings deep, until an event ends a piece on the
    /// switch. No piece starts once the step count reaches `budget_end`.
    fn step_split(
        &mut self,
        t_next: f64,
        depth: u32,
        budget_end: u64,
    ) -> Result<Option<Advance>, StepFailure> {
        const MAX_SPLITS: u32 = 40;
        let mut pieces = 0u32;
        loop {
            let (t, h) = (self.t_s, t_next - self.t_s);
            if h <= 0.0 || self.stats.steps >= budget_end {
                return Ok(None);
            }
            let mut inc = std::mem::take(&mut self.increment);
            let result = self.step_inner(t, h, t_next, &mut inc);
            self.increment = inc;
            match result {
                Err(f)
                    if f.code == 0
                        && depth < MAX_SPLITS
                        && pieces < 2 * MAX_SPLITS
                        && self.network.has_events() =>
                {
                    pieces += 1;
                    self.integrator.restart();
                    if let Some(a) = self.step_split(t + 0.5 * h, depth + 1, budget_end)? {
                        return Ok(Some(a));
                    }
                    if self.t_s >= t_next {
                        return Ok(None);
                    }
                }
                Ok(None) if self.t_s < t_next && depth > 0 => {
                    // An event ended the piece early: on to the piece's end.
                    pieces += 1;
                    if pieces >= 2 * MAX_SPLITS {
                        return Ok(None);
                    }
                }
                r => return r,
            }
        }
    }

    /// y_new = y + inc with Kahan's compensated summation (Higham, *Accuracy and Stability of
    /// Numerical Algorithms*, §4.3); the new compensation goes to `compensation_new`.
    pub(super) fn apply_increment(&mut self, inc: &[f64]) {
        kahan_add(
            &self.y,
            &self.y_compensation,
            inc,
            &mut self.y_new,
            &mut self.compensation_new,
        );
    }

    fn step_inner(
        &mut self,
        t: f64,
        h: f64,
        t_next: f64,
        inc: &mut [f64],
    ) -> Result<Option<Advance>, StepFailure> {
        integ!(self.attempt(t, &self.y, h, inc)).map_err(|e| self.solver_failure(e))?;
        self.apply_increment(inc);

        // Earliest event inside the step, located on the method's own step formula.
        let event = self.earliest_event(t, h, inc, false)?;
        if let Some((_, he)) = event {
            integ!(self.dense(t, &self.y, he, inc)).map_err(|e| self.solver_failure(e))?;
            self.apply_increment(inc);
        }

        let totals = match Checks::hard_failure(&self.network, &self.y_new) {
            Ok(totals) => totals,
            Err(code) => return Err(self.refuse_step(code, t + event.map_or(h, |e| e.1))),
        };

        let t_new = match event {
            Some((_, he)) => t + he,
            None => t_next,
        };
        integ!(self.commit(t_new, &self.y_new));
        std::mem::swap(&mut self.y, &mut self.y_new);
        std::mem::swap(&mut self.y_compensation, &mut self.compensation_new);
        self.t_s = t_new;
        self.stats.steps += 1;
        let rc =
            self.checks
                .warnings_with(&self.network, &self.y, &self.sensitivities.params, totals);
        self.set_rc(rc);

        if let Some((k, _)) = event {
            return self.handle_event_at_reported(k);
        }
        Ok(None)
    }

    // ---- Adaptive methods -------------------------------------------------------------

    /// `advance_to` for adaptive methods (see the module documentation).
    fn advance_adaptive(&mut self, target: f64) -> Result<Advance, StepFailure> {
        let mut inc = std::mem::take(&mut self.increment);
        let r = self.advance_adaptive_inner(target, &mut inc);
        self.increment = inc;
        r
    }

    fn advance_adaptive_inner(
        &mut self,
        target: f64,
        inc: &mut [f64],
    ) -> Result<Advance, StepFailure> {
        let mut steps_left = self.settings.max_steps;
        loop {
            if let Some(f) = self.finished {
                return Ok(Advance::Finished(f));
            }
            // An event located ahead is handled once the request reaches its time.
            if let Some(k) = self.internal.pending_event
                && target >= self.internal.t_s
            {
                self.internal.pending_event = None;
                if self.network.event_is_switch(k) {
                    self.internal.disarm(k);
                }
                if self.network.event_only_restarts(k) {
                    // A kink of a continuous law: nothing to act on, the reported state stays
                    // (every output inside the step ending on it has been interpolated).
                    self.stats.events += 1;
                    self.integrator.restart();
                    self.internal.restarted_on = Some((k, self.internal.pending_downward));
                    continue;
                }
                self.report_internal();
                let advance = self.handle_event_at_reported(k)?;
                let i = &mut self.internal;
                i.y.copy_from_slice(&self.y);
                i.compensation.copy_from_slice(&self.y_compensation);
                i.t_prev_s = i.t_s;
                i.y_prev.copy_from_slice(&self.y);
                i.compensation_prev.copy_from_slice(&self.y_compensation);
                match advance {
                    Some(a) => return Ok(a),
                    None => continue,
                }
            }
            if self.t_s >= target {
                return Ok(Advance::Reached);
            }
            if self.internal.t_s >= target {
                self.report_at(target, inc)?;
                self.check_max_time();
                return Ok(Advance::Reached);
            }
            let max_time = self.settings.max_time_s.filter(|_| self.pending_exits());
            if let Some(mt) = max_time
                && self.internal.t_s >= mt
            {
                self.report_internal();
                self.check_max_time();
                continue;
            }
            if self.internal.at_breakpoint {
                self.internal.at_breakpoint = false;
                self.start_segment(self.internal.t_s);
            }
            let t = self.internal.t_s;
            let breakpoint = self.network.next_breakpoint(t);
            let mut stop = breakpoint.unwrap_or(f64::INFINITY);
            if let Some(mt) = max_time {
                stop = stop.min(mt);
            }
            let h_max = (stop - t).min(self.settings.control.max_step.unwrap_or(f64::INFINITY));
            if steps_left == 0 {
                // CVODE's CV_TOO_MUCH_WORK: the reported state stays where it was, consistent.
                return Err(StepFailure {
                    code: 0,
                    last_good_t_s: self.t_s,
                    message: format!(
                        "solver failure: {} steps in one advance without reaching t = {target} s \
                         (the method's own time is {t} s); the problem is too stiff for `{}` or \
                         its state is damaged (raise [solver] max_steps if the work is genuine)",
                        self.settings.max_steps,
                        self.integrator_name()
                    ),
                });
            }
            steps_left -= 1;
            self.adaptive_step(t, stop, breakpoint, h_max, inc)?;
        }
    }

    /// Run-time check 1 once the reported time reaches `max_time`.
    pub(super) fn check_max_time(&mut self) {
        if let Some(mt) = self.settings.max_time_s
            && self.t_s >= mt
            && self.pending_exits()
            && self.finished.is_none()
        {
            self.set_rc(checks::NEVER_EXITED);
            self.finished = Some(Finish::NeverExited { t_s: self.t_s });
        }
    }

    /// One accepted step of the adaptive method from the internal point, at most `h_max` and
    /// ending exactly at `stop` when it reaches it; cut short at the earliest event.
    fn adaptive_step(
        &mut self,
        t: f64,
        stop: f64,
        breakpoint: Option<f64>,
        h_max: f64,
        inc: &mut [f64],
    ) -> Result<(), StepFailure> {
        if std::mem::take(&mut self.internal.switch_crossed) {
            self.integrator.crossed_switch();
        }
        let h = integ!(self.attempt(t, &self.internal.y, h_max, inc))
            .map_err(|e| self.solver_failure(e))?;
        let (mut h, mut t_new) = if h >= stop - t {
            (stop - t, stop)
        } else {
            (h, t + h)
        };
        kahan_add(
            &self.internal.y,
            &self.internal.compensation,
            inc,
            &mut self.y_new,
            &mut self.compensation_new,
        );
        let mut event = self.earliest_event(t, h, inc, true)?;
        if let Some((k, he)) = event.filter(|&(k, _)| self.network.event_is_switch(k)) {
            // The step to the event again, from the same point: the step that straddled it
            // integrated across a switch of the law, which its polynomial and its error
            // estimate do not see; on (t, t + he] the law is smooth. The method may take less
            // (its error test): then the event is searched for in that step again.
            let h2 = integ!(self.attempt(t, &self.internal.y, he, inc))
                .map_err(|e| self.solver_failure(e))?;
            let i = &self.internal;
            kahan_add(
                &i.y,
                &i.compensation,
                inc,
                &mut self.y_new,
                &mut self.compensation_new,
            );
            // An integrator's step to `he` may come back short of it in its last bits (its own
            // arithmetic on h): that is the step to the event, not a shorter one.
            if h2 >= he - 4.0 * f64::EPSILON * (t.abs() + he) {
                (h, t_new) = (he, t + he);
                event = Some((k, he));
            } else {
                (h, t_new) = (h2, t + h2);
                event = self.earliest_event(t, h2, inc, true)?;
                if let Some((_, he2)) = event {
                    let i = &self.internal;
                    integ!(self.dense(t, &i.y, he2, inc)).map_err(|e| self.solver_failure(e))?;
                    kahan_add(
                        &i.y,
                        &i.compensation,
                        inc,
                        &mut self.y_new,
                        &mut self.compensation_new,
                    );
                    (h, t_new) = (he2, t + he2);
                }
            }
        } else if let Some((_, he)) = event {
            let i = &self.internal;
            integ!(self.dense(t, &i.y, he, inc)).map_err(|e| self.solver_failure(e))?;
            kahan_add(
                &i.y,
                &i.compensation,
                inc,
                &mut self.y_new,
                &mut self.compensation_new,
            );
            h = he;
            t_new = t + he;
        }
        let totals = match Checks::hard_failure(&self.network, &self.y_new) {
            Ok(totals) => totals,
            Err(code) => return Err(self.refuse_step(code, t + h)),
        };
        integ!(self.commit(t_new, &self.y_new));
        let i = &mut self.internal;
        // prev ← current ← new, by swaps (no copies of the vectors' storage).
        std::mem::swap(&mut i.y_prev, &mut i.y);
        std::mem::swap(&mut i.compensation_prev, &mut i.compensation);
        std::mem::swap(&mut i.y, &mut self.y_new);
        std::mem::swap(&mut i.compensation, &mut self.compensation_new);
        i.t_prev_s = t;
        i.t_s = t_new;
        i.pending_event = event.map(|(k, _)| k);
        i.pending_downward = event.is_some() && i.located_downward;
        i.restarted_on = None;
        // A step that ends on a breakpoint starts the new segment there even when an event was
        // located at the same instant (handled first): the next breakpoint is sought after it.
        i.at_breakpoint = breakpoint == Some(t_new);
        if self.network.has_events() {
            self.rearm_switches();
            let switch = event.is_some_and(|(k, _)| self.network.event_is_switch(k));
            self.watch_chatter(switch);
        }
        self.stats.steps += 1;
        // The checks run once per step, here; every reported time inside this step carries
        // their code (`rc`) instead of running them again on an interpolated state.
        let rc = self.checks.warnings_with(
            &self.network,
            &self.internal.y,
            &self.sensitivities.params,
            totals,
        );
        self.rc = rc;
        self.note_fired(rc, t_new);
        if let Method::Dopri5(d) = &self.integrator {
            let (h_lambda, rejected) = (d.last_stiffness(), d.rejected_steps());
            self.watch_dp5(h_lambda, rejected, t_new);
        }
        Ok(())
    }

    /// A candidate state (in `y_new`) that check `code` (2, 3 or 10) refuses at time `t_to`:
    /// the failure, with the state kept at the last good time.
    #[cold]
    #[inline(never)]
    fn refuse_step(&mut self, code: u8, t_to: f64) -> StepFailure {
        self.set_rc(code);
        StepFailure {
            code,
            last_good_t_s: self.t_s,
            message: format!(
                "run-time check {code}: {} in the step to t = {t_to} s ({})",
                checks::describe(code),
                Checks::describe_failure(&self.network, &self.y_new)
            ),
        }
    }

    /// The reported point catches up with the internal one, whose checks ran on its step
    /// (`rc` holds their code). At a table breakpoint the new segment starts now, not before
    /// the next step: the state reported there shows the tables' values after it (a step
    /// table reads right-continuous), as the fixed-step methods' and a Model Exchange time
    /// event's do.
    fn report_internal(&mut self) {
        let i = &self.internal;
        self.t_s = i.t_s;
        self.y.copy_from_slice(&i.y);
        self.y_compensation.copy_from_slice(&i.compensation);
        self.note_fired(self.rc, self.t_s);
        if self.internal.at_breakpoint {
            self.internal.at_breakpoint = false;
            self.start_segment(self.t_s);
        }
    }

    /// Report the state at `target` in the last step (t_prev, t] by dense output.
    fn report_at(&mut self, target: f64, inc: &mut [f64]) -> Result<(), StepFailure> {
        if target >= self.internal.t_s {
            self.report_internal();
            return Ok(());
        }
        self.interpolate_to(target, inc)
    }

    /// The state at `target`, inside the last internal step, by the method's dense output.
    #[inline(always)]
    fn interpolate_to(&mut self, target: f64, inc: &mut [f64]) -> Result<(), StepFailure> {
        let i = &self.internal;
        let h = target - i.t_prev_s;
        integ!(self.dense(i.t_prev_s, &i.y_prev, h, inc)).map_err(|e| self.solver_failure(e))?;
        kahan_add(
            &i.y_prev,
            &i.compensation_prev,
            inc,
            &mut self.y_new,
            &mut self.compensation_new,
        );
        // The dense output between two accepted states can still leave the physical domain
        // (a mass near 0 undershooting): such a state is never reported.
        if let Err(code) = Checks::hard_failure(&self.network, &self.y_new) {
            return Err(self.refuse_step(code, target));
        }
        std::mem::swap(&mut self.y, &mut self.y_new);
        std::mem::swap(&mut self.y_compensation, &mut self.compensation_new);
        self.t_s = target;
        // The step's code, not the checks again on the interpolated state; noted at the
        // reported time so that a window opened since (one fmi2DoStep) sees it.
        self.note_fired(self.rc, target);
        Ok(())
    }

    pub(super) fn solver_failure(&self, e: SolverError) -> StepFailure {
        StepFailure {
            code: 0,
            last_good_t_s: self.t_s,
            message: format!("solver failure: {e}"),
        }
    }
}

/// out = y + inc with Kahan's compensated summation (Higham, *Accuracy and Stability of
/// Numerical Algorithms*, §4.3); `comp` is y's compensation, `out_comp` the new one.
#[inline]
pub(super) fn kahan_add(
    y: &[f64],
    comp: &[f64],
    inc: &[f64],
    out: &mut [f64],
    out_comp: &mut [f64],
) {
    // Every slice cut to n first: the loop runs without bounds checks.
    let n = y.len();
    let (comp, inc, out, out_comp) = (&comp[..n], &inc[..n], &mut out[..n], &mut out_comp[..n]);
    for i in 0..n {
        let d = inc[i] - comp[i];
        let sum = y[i] + d;
        out_comp[i] = (sum - y[i]) - d;
        out[i] = sum;
    }
}

#[cfg(test)]
mod counter_tests {
    use crate::integrators::Integrator;

    /// An output time inside the adaptive method's last step whose dense output cannot
    /// interpolate (the BDF forgot its last step, as after a restore of such a state): the BDF
    /// takes a step of its own there, with rejected trials and right-hand sides. The counters the
    /// driver reports afterwards are the integrator's and the network's own (the output path
    /// refreshed only the right-hand sides, so the rejections stayed stale until the next step).
    #[test]
    fn counters_follow_a_dense_output_that_steps_on_its_own() {
        let src = include_str!("../../compliance-tests/peers/models/cantera_vent.toml");
        let set = [
            "solver.rtol=1e-9".to_string(),
            "solver.atol=1e-15".to_string(),
            "solver.initial_step=0.05".to_string(),
        ];
        let model = crate::model::parse_str(src, "cantera_vent.toml", &set).unwrap();
        let mut sim = crate::model::build_simulation(&model.spec, Some("bdf")).unwrap();
        sim.advance_to(0.5).unwrap();
        let (t, ti) = (sim.t_s, sim.internal.t_s);
        assert!(ti > t, "the method's own point runs ahead: {t} < {ti}");
        assert_eq!(sim.stats.rejected_steps, sim.integrator.rejected_steps());
        sim.integrator.restart();
        let (rejected, rhs) = (sim.integrator.rejected_steps(), sim.rhs_evaluations());
        sim.advance_to(0.5 * (t + ti)).unwrap();
        println!(
            "own step: rejected {} → {}, rhs {rhs} → {}; reported {} / {}",
            rejected,
            sim.integrator.rejected_steps(),
            sim.rhs_evaluations(),
            sim.stats.rejected_steps,
            sim.stats.rhs_evaluations
        );
        assert!(
            sim.integrator.rejected_steps() > rejected,
            "the own step rejected trials"
        );
        assert!(sim.rhs_evaluations() > rhs);
        assert_eq!(sim.stats.rejected_steps, sim.integrator.rejected_steps());
        assert_eq!(sim.stats.rhs_evaluations, sim.rhs_evaluations());
    }
}
