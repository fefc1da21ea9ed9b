//! The reported point driven from outside, for Model Exchange: the master's integrator owns the
//! time and the continuous states, and the simulation evaluates the right-hand side, the event
//! functions and the run-time checks at the point it is given. Events, table segments and
//! checks act through the driver's own code (`handle_event_at_reported`, `start_segment`,
//! `check_max_time`, [`Checks`]), so a Model Exchange run changes the network exactly where and
//! how a Co-Simulation run does; only who integrates differs.

use super::{Advance, Finish, Simulation, StepFailure, crosses};
use crate::checks::Checks;
use crate::ode::OdeSystem;

/// What one pass of event handling at the reported point did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventPass {
    /// A table breakpoint was reached: a new segment starts at the reported time.
    pub segment_started: bool,
    /// Events handled, in the order handled ([`crate::network::Network::event_description`]).
    pub events: Vec<usize>,
    /// Pistons that passed their exit.
    pub exits: Vec<usize>,
    /// An event changed the continuous state (an end-stop impact).
    pub states_changed: bool,
    /// The run is over: every exit passed with `stop_on_exit`, or check 1 at `max_time`.
    pub finished: Option<Finish>,
}

impl Simulation {
    /// Set the reported time. The integrator's own point follows it (Model Exchange does not
    /// use it), so that an FMU state taken here is one of the driver's consistent states.
    pub fn set_time_from_outside(&mut self, t_s: f64) {
        self.t_s = t_s;
        let i = &mut self.internal;
        i.t_s = t_s;
        i.t_prev_s = t_s;
        i.pending_event = None;
        i.at_breakpoint = false;
        i.restarted_on = None;
        i.disarmed.fill(0);
        i.switch_crossed = false;
    }

    /// Set the reported state (its length is the simulation's). The compensation of the
    /// driver's summation starts again from zero: the values are the master's.
    pub fn set_states_from_outside(&mut self, y: &[f64]) {
        debug_assert_eq!(y.len(), self.y.len());
        self.y.copy_from_slice(y);
        self.y_compensation.fill(0.0);
        let i = &mut self.internal;
        i.y.copy_from_slice(y);
        i.y_prev.copy_from_slice(y);
        i.compensation.fill(0.0);
        i.compensation_prev.fill(0.0);
        i.pending_event = None;
        i.at_breakpoint = false;
        i.restarted_on = None;
        i.disarmed.fill(0);
        i.switch_crossed = false;
    }

    /// f(t, y) at the reported point into `dydt` (one right-hand side, counted).
    pub fn derivatives_at_reported(&mut self, dydt: &mut [f64]) {
        let n = self.network.layout.n_states;
        OdeSystem::rhs(&mut self.network, self.t_s, &self.y[..n], &mut dydt[..n]);
        self.stats.rhs_evaluations = self.network.rhs_evaluations;
    }

    /// The event functions at the reported point (`None`: cannot fire now).
    pub fn event_values_at_reported(&self, out: &mut [Option<f64>]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.network.event_value(k, self.t_s, &self.y);
        }
    }

    /// Whether an event function crossed zero upward since `before` (its values at the last
    /// accepted point), as the driver's steps test it.
    pub fn crossed_since(&self, before: &[Option<f64>]) -> bool {
        before.iter().enumerate().any(|(k, b)| {
            let now = self.network.event_value(k, self.t_s, &self.y);
            matches!((b, now), (Some(g0), Some(g1)) if crosses(*g0, g1))
        })
    }

    /// Check 2, 3 or 10 at the reported state (a chamber mass or temperature below zero, a
    /// volume at or below zero, a state not finite: a state no physics allows), if one fires.
    pub fn domain_failure_at_reported(&self) -> Option<u8> {
        Checks::hard_failure(&self.network, &self.y).err()
    }

    /// Record a check that refused the reported state (code 2, 3 or 10).
    pub fn note_refusal(&mut self, code: u8) {
        self.set_rc(code);
    }

    /// Checks 4 to 9 on the reported state, as after an accepted step of the driver: their
    /// code becomes `rc` (and is noted in the open window). Counts the step.
    pub fn accept_reported_step(&mut self) -> u8 {
        self.stats.steps += 1;
        let rc = self
            .checks
            .warnings(&self.network, &self.y, &self.sensitivities.params);
        self.set_rc(rc);
        rc
    }

    /// The code of checks 4 to 9 on the reported state, changing nothing else: what `rc` shows
    /// after an event iteration in Model Exchange.
    pub fn warning_code_at_reported(&mut self) -> u8 {
        self.checks
            .warnings(&self.network, &self.y, &self.sensitivities.params)
    }

    /// Event mode at the reported point: a table breakpoint reached starts a new segment; every
    /// event whose function crossed zero upward since `before` (its values at the last accepted
    /// point) is handled, in the order of their numbers, each on the state the previous one
    /// left; check 1 fires at `max_time`. The events are the driver's
    /// (`handle_event_at_reported`): exits, end-stop impacts, flow reversals, static
    /// friction's switches. Then the held modes are put in line with the state, as the driver
    /// does at the start of an advance: a piston that starts at rest with a drive past its
    /// static friction is set sliding in the event iteration after initialization.
    pub fn handle_events_at_reported(
        &mut self,
        before: &[Option<f64>],
    ) -> Result<EventPass, StepFailure> {
        let mut pass = EventPass::default();
        let seg = self.network.segment_start_s;
        if self
            .network
            .next_breakpoint(seg)
            .is_some_and(|b| b <= self.t_s)
        {
            self.start_segment(self.t_s);
            pass.segment_started = true;
        }
        for (k, b) in before.iter().enumerate() {
            let now = self.network.event_value(k, self.t_s, &self.y);
            let (Some(g0), Some(g1)) = (*b, now) else {
                continue;
            };
            if !crosses(g0, g1) {
                continue;
            }
            let advance = self.handle_event_at_reported(k)?;
            pass.events.push(k);
            if let Some(r) = &self.last_event
                && r.y_before != r.y_after
            {
                pass.states_changed = true;
            }
            if let Some(Advance::Exit { piston, .. }) = advance {
                pass.exits.push(piston);
            }
        }
        if self.settle_modes() {
            pass.states_changed = true;
        }
        self.check_max_time();
        pass.finished = self.finished;
        self.stats.rhs_evaluations = self.network.rhs_evaluations;
        Ok(pass)
    }

    /// Whether a time event is due at the reported time: a table breakpoint reached, or
    /// `max_time` with an exit pending.
    pub fn time_event_due(&mut self) -> bool {
        let seg = self.network.segment_start_s;
        let breakpoint = self
            .network
            .next_breakpoint(seg)
            .is_some_and(|b| b <= self.t_s);
        let max_time = self.settings.max_time_s.is_some_and(|mt| self.t_s >= mt)
            && self.finished.is_none()
            && self.pending_exits();
        breakpoint || max_time
    }

    /// The next time event after the reported time: the next table breakpoint, or `max_time`
    /// while a piston with an exit is still in its bore.
    pub fn next_time_event(&mut self) -> Option<f64> {
        let t = self.t_s;
        let mut next = self.network.next_breakpoint(t).filter(|&b| b > t);
        if let Some(mt) = self.settings.max_time_s
            && self.finished.is_none()
            && self.pending_exits()
            && mt > t
        {
            next = Some(next.map_or(mt, |b| b.min(mt)));
        }
        next
    }
}
