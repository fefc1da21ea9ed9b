//! The simulation driver: advances a network with an integrator to exact times, stops at table
//! breakpoints (restarting the integrator there), locates piston exits as events, and runs the
//! run-time checks after every step. The whole value is plain serde data, so a stored
//! `Simulation` continues bit for bit when restored.

use serde::{Deserialize, Serialize};

use crate::checks::{self, Checks};
use crate::components::{chamber, piston};
use crate::integrators::{Integrator, Method, SolverError};
use crate::model::spec::ChecksSection;
use crate::network::Network;
use crate::ode::OdeSystem;

/// Driver settings taken from the model's `[solver]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Fixed step, s.
    pub step_s: f64,
    pub max_time_s: Option<f64>,
    pub stop_on_exit: bool,
}

/// Why a run ended for good.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Finish {
    /// Every piston with an exit has exited and `stop_on_exit` is set.
    Exited { t_s: f64 },
    /// Check 1: `max_time` passed with a piston still in its bore.
    NeverExited { t_s: f64 },
}

/// What one call of [`Simulation::advance_to`] achieved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Advance {
    /// The target time was reached.
    Reached,
    /// Stopped early at an event (piston `piston` exited at `t_s`); call again to go on.
    Exit { piston: usize, t_s: f64 },
    /// The run is over (see [`Finish`]); the time is where it ended.
    Finished(Finish),
}

/// A step refused by a run-time check (code 2 or 3) or by the solver: the state is left at the
/// last good time.
#[derive(Clone, Debug, PartialEq)]
pub struct StepFailure {
    pub code: u8,
    pub last_good_t_s: f64,
    pub message: String,
}

impl std::fmt::Display for StepFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (state kept at t = {} s)",
            self.message, self.last_good_t_s
        )
    }
}

/// Counters reported by the CLI and the benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub steps: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Simulation {
    pub network: Network,
    pub integrator: Method,
    pub settings: Settings,
    pub checks: Checks,
    pub t_s: f64,
    pub y: Vec<f64>,
    /// Kahan compensation of `y`: the low-order bits lost when increments were added.
    pub y_compensation: Vec<f64>,
    /// Code of the last step's checks (0 = fine).
    pub rc: u8,
    /// Time each code first fired (index = code).
    pub first_fired_s: [Option<f64>; 10],
    pub finished: Option<Finish>,
    pub stats: Stats,
    #[serde(skip)]
    y_new: Vec<f64>,
    #[serde(skip)]
    compensation_new: Vec<f64>,
    #[serde(skip)]
    increment: Vec<f64>,
    #[serde(skip)]
    dy: Vec<f64>,
}

/// Relative slack when dividing a segment into steps, so that a segment of exactly k steps of
/// size h (up to round-off) is taken in k steps, not k + 1.
const STEP_SLACK: f64 = 1e-9;

impl Simulation {
    pub fn new(
        mut network: Network,
        integrator: Method,
        settings: Settings,
        thresholds: ChecksSection,
        t_start_s: f64,
    ) -> Self {
        network.segment_start_s = t_start_s;
        let y = network.initial_state();
        let checks = Checks::new(thresholds, &network, &y);
        let n = y.len();
        let mut sim = Simulation {
            network,
            integrator,
            settings,
            checks,
            t_s: t_start_s,
            y,
            y_compensation: vec![0.0; n],
            rc: 0,
            first_fired_s: [None; 10],
            finished: None,
            stats: Stats::default(),
            y_new: vec![0.0; n],
            compensation_new: vec![0.0; n],
            increment: vec![0.0; n],
            dy: vec![0.0; n],
        };
        // Codes 8 (and in principle 4, 5, 9) can already hold for the initial state.
        let rc = sim.checks.warnings(&sim.network, &sim.y);
        sim.set_rc(rc);
        sim
    }

    fn ensure_scratch(&mut self) {
        let n = self.y.len();
        if self.y_new.len() != n {
            self.y_new = vec![0.0; n];
            self.compensation_new = vec![0.0; n];
            self.increment = vec![0.0; n];
            self.dy = vec![0.0; n];
        }
    }

    fn set_rc(&mut self, rc: u8) {
        self.rc = rc;
        if rc != 0 && self.first_fired_s[rc as usize].is_none() {
            self.first_fired_s[rc as usize] = Some(self.t_s);
        }
    }

    pub fn integrator_name(&self) -> &'static str {
        self.integrator.name()
    }

    pub fn rhs_evaluations(&self) -> u64 {
        self.network.rhs_evaluations
    }

    /// Pistons that have an exit and have not passed it yet.
    fn pending_exits(&self) -> bool {
        self.network
            .pistons
            .iter()
            .zip(&self.network.exited)
            .any(|(p, &e)| p.x_exit_m.is_some() && !e)
    }

    /// Advance to exactly `t_target_s` (or to the first event or failure before it).
    pub fn advance_to(&mut self, t_target_s: f64) -> Result<Advance, StepFailure> {
        if !t_target_s.is_finite() {
            return Err(StepFailure {
                code: 0,
                last_good_t_s: self.t_s,
                message: format!("target time {t_target_s} is not finite"),
            });
        }
        self.ensure_scratch();
        loop {
            if let Some(f) = self.finished {
                return Ok(Advance::Finished(f));
            }
            if self.t_s >= t_target_s {
                return Ok(Advance::Reached);
            }
            let mut stop = t_target_s;
            let breakpoint = self.network.next_breakpoint_after(self.t_s);
            if let Some(b) = breakpoint {
                stop = stop.min(b);
            }
            let max_time = self.settings.max_time_s.filter(|_| self.pending_exits());
            if let Some(mt) = max_time {
                stop = stop.min(mt.max(self.t_s));
            }
            if let Some(ev) = self.advance_segment(stop)? {
                return Ok(ev);
            }
            if breakpoint == Some(self.t_s) {
                // A table changes here: the next segment sees its new value, and multistep
                // history from before the discontinuity must not be used across it.
                self.network.segment_start_s = self.t_s;
                self.integrator.restart();
            }
            if let Some(mt) = max_time {
                if self.t_s >= mt && self.pending_exits() {
                    self.set_rc(checks::NEVER_EXITED);
                    self.finished = Some(Finish::NeverExited { t_s: self.t_s });
                }
            }
        }
    }

    /// Equal steps of about `step_s` from the current time to exactly `stop`.
    fn advance_segment(&mut self, stop: f64) -> Result<Option<Advance>, StepFailure> {
        let t0 = self.t_s;
        let span = stop - t0;
        let n = ((span / self.settings.step_s) * (1.0 - STEP_SLACK))
            .ceil()
            .max(1.0) as u64;
        let h_seg = span / n as f64;
        for i in 1..=n {
            let t_next = if i == n { stop } else { t0 + i as f64 * h_seg };
            if let Some(ev) = self.step_to(t_next)? {
                return Ok(Some(ev));
            }
        }
        Ok(None)
    }

    /// One step from the current time to `t_next`.
    fn step_to(&mut self, t_next: f64) -> Result<Option<Advance>, StepFailure> {
        let (t, h) = (self.t_s, t_next - self.t_s);
        let mut inc = std::mem::take(&mut self.increment);
        let result = self.step_inner(t, h, t_next, &mut inc);
        self.increment = inc;
        result
    }

    /// y_new = y + inc with Kahan's compensated summation (Higham, *Accuracy and Stability of
    /// Numerical Algorithms*, §4.3); the new compensation goes to `compensation_new`.
    fn apply_increment(&mut self, inc: &[f64]) {
        for i in 0..self.y.len() {
            let d = inc[i] - self.y_compensation[i];
            let sum = self.y[i] + d;
            self.compensation_new[i] = (sum - self.y[i]) - d;
            self.y_new[i] = sum;
        }
    }

    fn step_inner(
        &mut self,
        t: f64,
        h: f64,
        t_next: f64,
        inc: &mut [f64],
    ) -> Result<Option<Advance>, StepFailure> {
        self.integrator
            .attempt(&mut self.network, t, &self.y, h, inc)
            .map_err(|e| self.solver_failure(e))?;
        self.apply_increment(inc);

        // Earliest piston exit inside the step, located on the method's own step formula.
        let mut event: Option<(usize, f64)> = None;
        for j in 0..self.network.pistons.len() {
            let (Some(g0), Some(g1)) = (
                self.network.exit_event_value(j, &self.y),
                self.network.exit_event_value(j, &self.y_new),
            ) else {
                continue;
            };
            if g0 < 0.0 && g1 >= 0.0 {
                let hj = self.locate_exit(j, t, h, g0, g1, inc)?;
                if event.is_none_or(|(_, he)| hj < he) {
                    event = Some((j, hj));
                }
            }
        }
        if let Some((_, he)) = event {
            self.integrator
                .dense(&mut self.network, t, &self.y, he, inc)
                .map_err(|e| self.solver_failure(e))?;
            self.apply_increment(inc);
        }

        if let Some(code) = Checks::hard_failure(&self.network, &self.y_new) {
            self.set_rc(code);
            return Err(StepFailure {
                code,
                last_good_t_s: self.t_s,
                message: format!(
                    "run-time check {code}: {} in the step to t = {} s",
                    checks::describe(code),
                    t + event.map_or(h, |e| e.1)
                ),
            });
        }

        let t_new = match event {
            Some((_, he)) => t + he,
            None => t_next,
        };
        self.integrator
            .commit(&mut self.network, t_new, &self.y_new);
        std::mem::swap(&mut self.y, &mut self.y_new);
        std::mem::swap(&mut self.y_compensation, &mut self.compensation_new);
        self.t_s = t_new;
        self.stats.steps += 1;
        let rc = self.checks.warnings(&self.network, &self.y);
        self.set_rc(rc);

        if let Some((j, _)) = event {
            self.network.exited[j] = true;
            // The bore opens: a discontinuity, so the integrator starts afresh.
            self.integrator.restart();
            if self.settings.stop_on_exit && !self.pending_exits() {
                self.finished = Some(Finish::Exited { t_s: self.t_s });
            }
            return Ok(Some(Advance::Exit {
                piston: j,
                t_s: self.t_s,
            }));
        }
        Ok(None)
    }

    fn solver_failure(&self, e: SolverError) -> StepFailure {
        StepFailure {
            code: 0,
            last_good_t_s: self.t_s,
            message: format!("solver failure: {e}"),
        }
    }

    /// Step size in (0, h] at which piston `j` reaches its exit, by the Illinois variant of
    /// regula falsi on the method's own step (Dahlquist & Björck, *Numerical Methods*, §6.2),
    /// iterated to the resolution of the time axis (far below the 1e-12 s asked for).
    fn locate_exit(
        &mut self,
        j: usize,
        t: f64,
        h: f64,
        g0: f64,
        g1: f64,
        inc: &mut [f64],
    ) -> Result<f64, StepFailure> {
        let (mut a, mut ga, mut b, mut gb) = (0.0, g0, h, g1);
        let tol = 4.0 * f64::EPSILON * (t.abs() + h);
        let mut side = 0i8;
        for _ in 0..200 {
            if b - a <= tol || gb == 0.0 {
                break;
            }
            let mut c = (a * gb - b * ga) / (gb - ga);
            if !(c > a && c < b) {
                c = 0.5 * (a + b);
            }
            self.integrator
                .dense(&mut self.network, t, &self.y, c, inc)
                .map_err(|e| self.solver_failure(e))?;
            self.apply_increment(inc);
            let gc = self.network.exit_event_value(j, &self.y_new).unwrap_or(0.0);
            if gc >= 0.0 {
                b = c;
                gb = gc;
                if side == -1 {
                    ga *= 0.5;
                }
                side = -1;
            } else {
                a = c;
                ga = gc;
                if side == 1 {
                    gb *= 0.5;
                }
                side = 1;
            }
        }
        Ok(b)
    }

    /// Piston position and velocity.
    pub fn piston_state(&self, j: usize) -> (f64, f64) {
        let o = self.network.layout.piston_offset + j * piston::STATES;
        (self.y[o + piston::POSITION], self.y[o + piston::VELOCITY])
    }

    /// Chamber (p, T, m, V, U) at the current state.
    pub fn chamber_state(&self, i: usize) -> [f64; 5] {
        let o = i * chamber::STATES;
        let (m, u, v) = (
            self.y[o + chamber::MASS],
            self.y[o + chamber::ENERGY],
            self.y[o + chamber::VOLUME],
        );
        let gas = &self.network.gas;
        [gas.pressure_pa(u, v), gas.temperature_k(m, u), m, v, u]
    }

    /// Refresh link flows for the current state (an output evaluation, not counted as work).
    pub fn refresh_flows(&mut self) {
        self.ensure_scratch();
        let count = self.network.rhs_evaluations;
        let mut dy = std::mem::take(&mut self.dy);
        self.network.rhs(self.t_s, &self.y, &mut dy);
        self.dy = dy;
        self.network.rhs_evaluations = count;
    }
}
