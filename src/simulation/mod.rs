//! The simulation driver: advances a network with an integrator to exact times, stops at table
//! breakpoints (restarting the integrator there), locates events (piston exits, and whatever
//! the network declares: [`Network::event_value`]) by root finding on the integrator's dense
//! output, and runs the run-time checks after every step. The whole value is plain serde data,
//! so a stored `Simulation` continues bit for bit when restored.
//!
//! Two stepping regimes, chosen by [`Integrator::fixed_step`]:
//! - **fixed-step methods** take equal steps of about `step` between stops (the requested time,
//!   breakpoints, `max_time`), landing on each stop exactly; the reported state *is* the
//!   integrator's state.
//! - **adaptive methods** choose their own steps. Output times and communication points do not
//!   shorten them: the integrator keeps its own point ([`Internal`]: time, state, compensation,
//!   and the start of its last step), which runs ahead of the reported one, and
//!   [`Simulation::advance_to`] steps while the internal time is before the target, then sets
//!   the reported (`t_s`, `y`) by dense output at the target. Whatever changes the right-hand
//!   side discontinuously forces a real stop: table breakpoints (the step is cut to end there
//!   exactly and the integrator restarts before the next), `max_time`, events (located inside
//!   the step, which then ends at the event; handled when the reported time reaches it), and
//!   live input changes (the caller calls [`Simulation::restart_at_reported_state`]).
//!
//! Forward parameter sensitivities (`[sensitivities] parameters`, see [`crate::sensitivity`])
//! go through the same driver: the state vector is then the network's n states followed by one
//! sensitivity vector of n per parameter, the integrator sees the augmented system
//! ([`System`]), and events apply the sensitivities' jump. Without parameters the augmented
//! system is the network itself (one length test per right-hand side).
//!
//! This file holds the simulation's value, its construction and the checks before a run; the
//! rest, one concern per file:
//! - `driver`: the stepping ([`Simulation::advance_to`]), fixed-step and adaptive;
//! - `events`: event location in a step and the handling of an event (with the sensitivities'
//!   jump);
//! - `stability`: run-time check 11, the explicit methods' stability watch;
//! - `system`: the sensitivity parameters and the augmented system the integrator sees;
//! - `queries`: the physical state read back (chambers, pistons, totals), raw and typed;
//! - `exchange`: the reported point driven from outside (Model Exchange).

#[macro_use]
mod system;
mod driver;
mod events;
mod exchange;
mod queries;
mod stability;

pub use events::{EventRecord, crosses};
pub use exchange::EventPass;
pub use queries::ChamberQuantities;
pub use stability::StabilityWatch;
pub use system::{Sensitivities, System};

use serde::{Deserialize, Serialize};

use crate::checks::{self, Checks, Thresholds};
use crate::integrators::{Integrator, Method, StepControl};
use crate::network::Network;
use crate::time_axis::time_resolution_s;

/// CVODE's default `mxstep` is 500 per output call; Plenum's calls may span a whole run (one
/// fmi2DoStep over the whole experiment), so the guard is set far above any shipped model's
/// needs (the stiffest takes a few thousand steps per run) and still ends a runaway call in
/// well under a second of release-build time.
pub const DEFAULT_MAX_STEPS: u64 = 100_000;

pub fn default_max_steps() -> u64 {
    DEFAULT_MAX_STEPS
}

/// Driver settings (built from a model's `[solver]` section).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Fixed step, s (fixed-step methods; adaptive methods ignore it).
    pub step_s: Option<f64>,
    pub max_time_s: Option<f64>,
    /// Most accepted adaptive steps in one [`Simulation::advance_to`] (CVODE's `mxstep`).
    #[serde(default = "default_max_steps")]
    pub max_steps: u64,
    pub stop_on_exit: bool,
    /// rtol, atol, max_step, initial_step of the adaptive methods (`max_step` also bounds every
    /// adaptive step in the driver).
    pub control: StepControl,
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
    /// Accepted steps.
    pub steps: u64,
    /// Trial steps rejected by an adaptive method's error control.
    pub rejected_steps: u64,
    /// Right-hand-side evaluations (all of them: stages, Jacobians, starting-step probes).
    pub rhs_evaluations: u64,
    /// Events handled (piston exits and the network's other events).
    pub events: u64,
}

/// The adaptive methods' own point, ahead of (or at) the reported one; unused by fixed-step
/// methods. The integrator's dense output covers the last step, from (`t_prev_s`, `y_prev`)
/// to (`t_s`, `y`), and the reported time always lies in it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Internal {
    pub t_s: f64,
    pub y: Vec<f64>,
    pub compensation: Vec<f64>,
    pub t_prev_s: f64,
    pub y_prev: Vec<f64>,
    pub compensation_prev: Vec<f64>,
    /// An event located at `t_s` (the step ended there), handled when the reported time
    /// reaches it.
    pub pending_event: Option<usize>,
    /// `t_s` is a table breakpoint: start a new segment (and restart) before the next step.
    pub at_breakpoint: bool,
    /// Whether `pending_event` was located crossing zero downward (an event located both
    /// ways).
    pub pending_downward: bool,
    /// The restart-only event (a kink of a law) the integrator restarted on at `t_s`, and
    /// whether downward, until the next accepted step: a crossing of it the same way in that
    /// step is the one the step starts on.
    pub restarted_on: Option<(usize, bool)>,
    /// The switches an event of which the integrator restarted on, one bit per event, until
    /// the state has left them by more than the tolerance's noise
    /// ([`Network::event_noise`]): a crossing of one that ends within that noise is passed
    /// over (docs/integrators.md, "Switches": chattering on the method's own error).
    pub disarmed: Vec<u64>,
    /// The last step crossed a disarmed switch, passed over: the integrator is told before
    /// the next ([`Integrator::crossed_switch`]).
    pub switch_crossed: bool,
    /// Whether the event [`Simulation::earliest_event`] last chose crosses downward (scratch
    /// of one step).
    #[serde(skip)]
    pub located_downward: bool,
}

impl Internal {
    /// Disarm switch `k` (its bit; sized at construction, so no allocation in the step loop).
    pub(crate) fn disarm(&mut self, k: usize) {
        let w = k / 64;
        if w >= self.disarmed.len() {
            self.disarmed.resize(w + 1, 0);
        }
        self.disarmed[w] |= 1 << (k % 64);
    }

    /// Whether switch `k` is disarmed.
    #[inline]
    pub(crate) fn is_disarmed(&self, k: usize) -> bool {
        self.disarmed
            .get(k / 64)
            .is_some_and(|b| (b >> (k % 64)) & 1 == 1)
    }
}

/// Which check codes fired since [`FiredWindow::open`], and when each first did: a bit mask
/// and a time per code, so that opening a window per fmi2DoStep costs one store.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FiredWindow {
    mask: u16,
    first_s: [f64; checks::CODES],
}

impl FiredWindow {
    /// Forget what fired before.
    #[inline]
    pub fn open(&mut self) {
        self.mask = 0;
    }

    fn note(&mut self, code: u8, t_s: f64) {
        debug_assert!((code as usize) < self.first_s.len());
        let bit = 1u16 << code;
        if self.mask & bit == 0 {
            self.mask |= bit;
            self.first_s[code as usize] = t_s;
        }
    }

    /// When `code` first fired inside the window, if it did.
    #[inline]
    pub fn first_fired_s(&self, code: u8) -> Option<f64> {
        (self.mask & (1u16 << code) != 0).then(|| self.first_s[code as usize])
    }

    /// The codes that fired inside the window, one bit per code.
    #[inline]
    pub fn mask(&self) -> u16 {
        self.mask
    }
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
    pub first_fired_s: [Option<f64>; checks::CODES],
    pub finished: Option<Finish>,
    pub stats: Stats,
    /// The adaptive methods' own point.
    pub internal: Internal,
    /// Forward-sensitivity parameters (empty: a plain run); `y` then holds their sensitivities.
    #[serde(default)]
    pub sensitivities: Sensitivities,
    /// The last event handled (not part of the stored state: observation only).
    #[serde(skip)]
    pub last_event: Option<EventRecord>,
    /// The record's storage before the first event, sized with the scratch vectors: the first
    /// event of a run allocates nothing in the step loop.
    #[serde(skip)]
    spare_event: EventRecord,
    /// A step's end state and its compensation while an event in it is located (scratch).
    #[serde(skip)]
    step_end: Vec<f64>,
    /// The codes fired since the caller last opened a window (fmi2DoStep reports the
    /// warnings of its own step); observation only, not part of the stored state.
    #[serde(skip)]
    pub window: FiredWindow,
    /// Run-time check 11's schedule and scratch (observation only).
    #[serde(skip)]
    pub stability: StabilityWatch,
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
        network: Network,
        integrator: Method,
        settings: Settings,
        thresholds: Thresholds,
        t_start_s: f64,
    ) -> Self {
        Self::with_sensitivities(
            network,
            integrator,
            settings,
            thresholds,
            t_start_s,
            Sensitivities::default(),
        )
    }

    /// [`Self::new`] with forward sensitivities to `sensitivities` (the integrator must have
    /// been made for n·(1 + k) states). s(t_start) = ∂y(t_start)/∂p
    /// ([`Network::initial_sensitivity`]).
    pub fn with_sensitivities(
        mut network: Network,
        mut integrator: Method,
        settings: Settings,
        thresholds: Thresholds,
        t_start_s: f64,
        sensitivities: Sensitivities,
    ) -> Self {
        network.segment_start_s = t_start_s;
        integrator.configure(&settings.control);
        let n_states = network.layout.n_states;
        let mut y = network.initial_state();
        y.resize(n_states * (1 + sensitivities.params.len()), 0.0);
        for (i, p) in sensitivities.params.iter().enumerate() {
            network.initial_sensitivity(p, &mut y[(i + 1) * n_states..(i + 2) * n_states]);
        }
        let checks = Checks::new(thresholds, &network, &y, &sensitivities.params, t_start_s);
        let n = y.len();
        let internal = Internal {
            t_s: t_start_s,
            y: y.clone(),
            compensation: vec![0.0; n],
            t_prev_s: t_start_s,
            y_prev: y.clone(),
            compensation_prev: vec![0.0; n],
            pending_event: None,
            at_breakpoint: false,
            pending_downward: false,
            restarted_on: None,
            disarmed: vec![0; network.n_events().div_ceil(64)],
            switch_crossed: false,
            located_downward: false,
        };
        let mut sim = Simulation {
            network,
            integrator,
            settings,
            checks,
            t_s: t_start_s,
            y,
            y_compensation: vec![0.0; n],
            rc: 0,
            first_fired_s: [None; checks::CODES],
            finished: None,
            stats: Stats::default(),
            internal,
            sensitivities,
            last_event: None,
            spare_event: EventRecord::default(),
            step_end: Vec::new(),
            window: FiredWindow::default(),
            stability: StabilityWatch::default(),
            y_new: vec![0.0; n],
            compensation_new: vec![0.0; n],
            increment: vec![0.0; n],
            dy: vec![0.0; n],
        };
        // Codes 8 (and in principle 4, 5, 9) can already hold for the initial state.
        let rc = sim
            .checks
            .warnings(&sim.network, &sim.y, &sim.sensitivities.params);
        sim.set_rc(rc);
        sim
    }

    /// Refuse a simulation that cannot start (`t_end_s`: the end of the run it is built for):
    /// an initial state no physics allows (checks 2, 3 and 10 on it), a fixed step or a span
    /// below the time axis's resolution ([`time_resolution_s`] at the farther of the start and
    /// the end).
    pub fn check_start(&self, t_end_s: f64) -> Result<(), String> {
        if let Err(code) = Checks::hard_failure(&self.network, &self.y) {
            return Err(format!(
                "the initial state is impossible (run-time check {code}: {}): {}",
                checks::describe(code),
                Checks::describe_failure(&self.network, &self.y)
            ));
        }
        // A pressure or temperature that overflows (values near the ends of the f64 range).
        for (i, c) in self.network.chambers().iter().enumerate() {
            let [p, t, m, v, u] = self.chamber_state(i);
            if !(p.is_finite() && t.is_finite()) {
                return Err(format!(
                    "the initial state is impossible (run-time check {}: {}): chamber `{}`: \
                     p = {p:e} Pa, T = {t:e} K from m = {m:e} kg, U = {u:e} J, V = {v:e} m^3",
                    checks::IMPOSSIBLE_STATE,
                    checks::describe(checks::IMPOSSIBLE_STATE),
                    c.name
                ));
            }
        }
        let t0 = self.t_s;
        let resolution = time_resolution_s(t0.abs().max(t_end_s.abs()));
        if let Some(h) = self.settings.step_s
            && self.integrator.fixed_step()
            && (h.is_nan() || h < resolution)
        {
            return Err(format!(
                "[solver] step = {h:e} s is below the time axis's resolution {resolution:e} s \
                 between t = {t0:e} s and {t_end_s:e} s (100·ε·|t|: t + step would not \
                 advance by step)"
            ));
        }
        if t_end_s > t0 && t_end_s - t0 < resolution {
            return Err(format!(
                "the span from t = {t0:e} s to {t_end_s:e} s is below the time axis's \
                 resolution {resolution:e} s there"
            ));
        }
        Ok(())
    }

    /// Whether an advance to `target` with a fixed-step method can be done: its steps must be
    /// resolved by the time axis and no more than `[solver] max_steps` (as the adaptive
    /// methods' steps are bounded per advance). Checked before any step, so a refused advance
    /// changes nothing. Adaptive methods: always `Ok`.
    pub fn fixed_step_work(&self, target: f64) -> Result<(), String> {
        if !self.integrator.fixed_step()
            || self.finished.is_some()
            || target.is_nan()
            || target <= self.t_s
        {
            return Ok(());
        }
        // The run stops at `max_time` while a piston has not exited (check 1).
        let end = match self.settings.max_time_s.filter(|_| self.pending_exits()) {
            Some(mt) => target.min(mt.max(self.t_s)),
            None => target,
        };
        if end <= self.t_s {
            return Ok(());
        }
        let span = end - self.t_s;
        let step = self.settings.step_s.unwrap_or(span);
        let steps = ((span / step) * (1.0 - STEP_SLACK)).ceil().max(1.0);
        if steps > self.settings.max_steps as f64 {
            return Err(format!(
                "{steps:e} fixed steps of {step:e} s from t = {:?} s to {target:?} s exceed \
                 [solver] max_steps = {} per advance (one communication step, one output interval); \
                 advance in shorter intervals or raise [solver] max_steps",
                self.t_s, self.settings.max_steps
            ));
        }
        let resolution = time_resolution_s(target);
        if steps > 1.0 && step < resolution {
            return Err(format!(
                "the fixed step {step:e} s is below the time axis's resolution {resolution:e} s \
                 at t = {target:?} s"
            ));
        }
        Ok(())
    }

    #[inline]
    fn ensure_scratch(&mut self) {
        if self.y_new.len() != self.y.len() || self.step_end.len() != 2 * self.y.len() {
            self.size_scratch();
        }
    }

    /// Once per run (and after a restore, whose scratch is not serialized).
    #[cold]
    fn size_scratch(&mut self) {
        let n = self.y.len();
        self.y_new = vec![0.0; n];
        self.compensation_new = vec![0.0; n];
        self.increment = vec![0.0; n];
        self.dy = vec![0.0; n];
        self.step_end = vec![0.0; 2 * n];
        if self.last_event.is_none() {
            let kp = self.sensitivities.params.len();
            self.spare_event = EventRecord {
                y_before: Vec::with_capacity(n),
                y_after: Vec::with_capacity(n),
                dt_dp: Vec::with_capacity(kp),
                ..EventRecord::default()
            };
        }
    }

    /// No event handled yet (a restored state): the record's storage is kept for the next.
    pub(crate) fn forget_last_event(&mut self) {
        if let Some(r) = self.last_event.take() {
            self.spare_event = r;
        }
    }

    fn set_rc(&mut self, rc: u8) {
        self.rc = rc;
        self.note_fired(rc, self.t_s);
    }

    fn note_fired(&mut self, rc: u8, t_s: f64) {
        if rc != 0 {
            if self.first_fired_s[rc as usize].is_none() {
                self.first_fired_s[rc as usize] = Some(t_s);
            }
            self.window.note(rc, t_s);
        }
    }

    /// Whether every state vector has length `n` (a restored state must fit its model).
    pub fn vectors_fit(&self, n: usize) -> bool {
        let i = &self.internal;
        [
            &self.y,
            &self.y_compensation,
            &i.y,
            &i.compensation,
            &i.y_prev,
            &i.compensation_prev,
        ]
        .iter()
        .all(|v| v.len() == n)
    }

    /// The integrator's own time (adaptive methods run ahead of `t_s`; fixed-step: `t_s`).
    pub fn internal_time_s(&self) -> f64 {
        if self.integrator.fixed_step() {
            self.t_s
        } else {
            self.internal.t_s
        }
    }

    /// After a change of the right-hand side at the reported time (a live input): the
    /// integrator forgets its history and, for adaptive methods, goes on from the reported
    /// state instead of its own point ahead of it.
    pub fn restart_at_reported_state(&mut self) {
        self.integrator.restart();
        if self.integrator.fixed_step() {
            return;
        }
        let i = &mut self.internal;
        let synced = i.t_s == self.t_s;
        i.at_breakpoint &= synced;
        i.pending_event = None;
        i.restarted_on = None;
        i.switch_crossed = false;
        i.t_s = self.t_s;
        i.t_prev_s = self.t_s;
        i.y.clone_from(&self.y);
        i.y_prev.clone_from(&self.y);
        i.compensation.clone_from(&self.y_compensation);
        i.compensation_prev.clone_from(&self.y_compensation);
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
            .pistons()
            .iter()
            .zip(&self.network.exited)
            .any(|(p, &e)| p.x_exit.is_some() && !e)
    }
}
