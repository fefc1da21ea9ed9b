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

mod exchange;

pub use exchange::EventPass;

use serde::{Deserialize, Serialize};

use crate::checks::{self, Checks, Thresholds};
use crate::components::{chamber, piston};
use crate::integrators::stability::{SpectralRadius, explicit_bound};
use crate::integrators::{Integrator, Method, SolverError, StepControl};
use crate::network::{Network, SensitivityParameter};
use crate::ode::{BlockLayout, OdeSystem};
use crate::units::{
    Energy, Length, Mass, Pressure, ThermodynamicTemperature, Velocity, Volume, from_si,
};

/// The parameters of a forward-sensitivity run (empty: none), as named in the model file and
/// resolved against the network.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sensitivities {
    pub names: Vec<String>,
    pub params: Vec<SensitivityParameter>,
}

/// What the integrator sees: the network's states followed by one sensitivity vector per
/// parameter. ṡ = J·s + ∂f/∂p comes from one dual-number evaluation per parameter
/// ([`Network::sensitivity_rhs`]); the error test covers the sensitivities too (CVODES's
/// `errconS = true`). With no parameters this is the network unchanged.
pub struct System<'a> {
    pub net: &'a mut Network,
    pub params: &'a [SensitivityParameter],
}

impl OdeSystem for System<'_> {
    /// The network's: its states come first.
    const BLOCKS: Option<BlockLayout> = <Network as OdeSystem>::BLOCKS;

    fn dimension(&self) -> usize {
        self.net.layout.n_states * (1 + self.params.len())
    }

    #[inline]
    fn rhs(&mut self, t: f64, y: &[f64], dydt: &mut [f64]) {
        if self.params.is_empty() {
            return OdeSystem::rhs(self.net, t, y, dydt);
        }
        let n = self.net.layout.n_states;
        let (ys, ss) = y.split_at(n);
        let (f, ds) = dydt.split_at_mut(n);
        for (i, p) in self.params.iter().enumerate() {
            let r = i * n..(i + 1) * n;
            self.net
                .sensitivity_rhs(t, ys, &ss[r.clone()], p, f, &mut ds[r]);
        }
    }

    fn sparsity(&self) -> Option<crate::sparsity::Pattern> {
        if self.params.is_empty() {
            self.net.sparsity()
        } else {
            None
        }
    }

    #[inline]
    fn jvp(&mut self, t: f64, y: &[f64], v: &[f64], dydt: &mut [f64], jv: &mut [f64]) -> bool {
        self.params.is_empty() && self.net.jvp(t, y, v, dydt, jv)
    }

    /// The network's walls' swept volumes and accumulators, which come first (their
    /// sensitivities stay in the error test).
    fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
        self.net.quadratures()
    }

    /// The network's, on its own states, which come first (the sensitivity blocks' sums are
    /// conserved too, but not named).
    fn linear_invariants(&self) -> Vec<Vec<usize>> {
        self.net.linear_invariants()
    }
}

/// `$sim.integrator.$method(system, args…)` with the network itself as the system when there
/// are no sensitivity parameters (the plain path is monomorphized on `Network`, exactly as
/// without sensitivities), else the augmented [`System`].
macro_rules! integ {
    ($sim:ident . $method:ident ( $($arg:expr),* $(,)? )) => {
        if $sim.sensitivities.params.is_empty() {
            $sim.integrator.$method(&mut $sim.network, $($arg),*)
        } else {
            $sim.integrator.$method(
                &mut System {
                    net: &mut $sim.network,
                    params: &$sim.sensitivities.params,
                },
                $($arg),*
            )
        }
    };
}

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

/// An event as the driver handled it: which one, where it was located, and the state just
/// before and just after the network acted on it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventRecord {
    /// Event number (see [`Network::n_events`]).
    pub k: usize,
    pub t_s: f64,
    pub y_before: Vec<f64>,
    pub y_after: Vec<f64>,
    /// dt_e/dp per sensitivity parameter (empty without sensitivities).
    pub dt_dp: Vec<f64>,
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

/// Run-time check 11 (see [`crate::integrators::stability`]): when the next estimate of ρ(J)
/// is due for an explicit fixed-step method, and the counts of DP5's stiffness detection for
/// a forced `dopri5`. Observation only (not part of a stored state: a restored run estimates
/// afresh at its first step).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StabilityWatch {
    /// Estimate when `stats.steps` reaches this (0: at the next step; `u64::MAX`: never).
    next_step: u64,
    radius: SpectralRadius,
    /// The method's bound on h·ρ, once known (`None`: not an explicit fixed-step method).
    bound: Option<f64>,
    /// Hairer's counters of DP5 steps held by stability, and of non-stiff ones since.
    dp5_stiff: u32,
    dp5_nonstiff: u32,
    /// The last estimate: ρ(J), s⁻¹, and the step it was tested with, s.
    pub last_radius_per_s: f64,
    pub last_step_s: f64,
}

/// Steps between two estimates of ρ(J) at most, and after one that fired.
const STABILITY_MAX_INTERVAL: u64 = 1024;
const STABILITY_FIRED_INTERVAL: u64 = 16;

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

/// The smallest step the time axis resolves at time t, s: CVODE's lower bound on a step,
/// 100·u·|t| with u the unit round-off (`cvHin`: hlb = 100·uround·max(|t0|, |tout|)). A
/// smaller step from t rounds to a time off by more than 1 % of the step, or to t itself.
#[inline]
pub fn time_resolution_s(t: f64) -> f64 {
    100.0 * f64::EPSILON * t.abs()
}

/// Whether an event function crossed zero upward between two of its values (`g_old` before,
/// `g_new` after): g_old < 0 ≤ g_new. Every event of [`Network::event_value`] fires this way,
/// in the driver's steps and in Model Exchange's event mode alike ([`exchange`]).
#[inline(always)]
pub fn crosses(g_old: f64, g_new: f64) -> bool {
    g_old < 0.0 && g_new >= 0.0
}

impl Simulation {
    /// How many values a BDF Jacobian of this simulation's system holds: over the network's
    /// pattern of M = I − γJ, or, with sensitivity parameters, n² of the augmented [`System`]
    /// (which has no pattern: see its `sparsity`).
    pub fn bdf_jacobian_len(&self) -> usize {
        if self.sensitivities.params.is_empty() {
            crate::integrators::bdf::Bdf::jacobian_len(&self.network)
        } else {
            self.y.len() * self.y.len()
        }
    }

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
                 [solver] max_steps = {} per advance (one fmi2DoStep, one output interval); \
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
        if self.y_new.len() != self.y.len() {
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
        i.t_s = self.t_s;
        i.t_prev_s = self.t_s;
        i.y.clone_from(&self.y);
        i.y_prev.clone_from(&self.y);
        i.compensation.clone_from(&self.y_compensation);
        i.compensation_prev.clone_from(&self.y_compensation);
    }

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

    pub fn integrator_name(&self) -> &'static str {
        self.integrator.name()
    }

    pub fn rhs_evaluations(&self) -> u64 {
        self.network.rhs_evaluations
    }

    /// A table breakpoint at `t_s`: the next segment sees the tables' new values, and no
    /// multistep history from before the discontinuity is used across it.
    fn start_segment(&mut self, t_s: f64) {
        self.network.segment_start_s = t_s;
        self.integrator.restart();
    }

    /// Pistons that have an exit and have not passed it yet.
    fn pending_exits(&self) -> bool {
        self.network
            .pistons()
            .iter()
            .zip(&self.network.exited)
            .any(|(p, &e)| p.x_exit.is_some() && !e)
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
        loop {
            if let Some(f) = self.finished {
                self.update_counters();
                return Ok(Advance::Finished(f));
            }
            if self.t_s >= t_target_s {
                self.update_counters();
                return Ok(Advance::Reached);
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
            if let Some(ev) = self.advance_segment(stop)? {
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

    /// Equal steps of about `step_s` from the current time to exactly `stop`.
    fn advance_segment(&mut self, stop: f64) -> Result<Option<Advance>, StepFailure> {
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
            if self.stats.steps >= self.stability.next_step {
                self.check_stability(h_seg);
            }
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

    /// Handle event `k` at the reported state (the step has ended at its time): the network
    /// acts, the sensitivities jump, the integrator restarts (a discontinuity), and a piston
    /// exit is reported.
    ///
    /// Sensitivities: the event time moves with p, dt_e/dp = −∂g/∂y·s⁻/ġ with ġ = ∂g/∂y·f⁻
    /// (no event threshold is a parameter, so ∂g/∂p = 0). With the state jump y⁺ = h(y⁻, p)
    /// (the identity except at end-stop impacts) and H = ∂h/∂y,
    /// s⁺ = H·s⁻ + ∂h/∂p + (H·f⁻ − f⁺)·dt_e/dp (Hairer, Nørsett & Wanner, *Solving ODEs I*,
    /// §II.14; CVODES's root sensitivities), computed as H·(s⁻ + f⁻·dt_e/dp) + ∂h/∂p − f⁺·dt_e/dp
    /// by one dual-number evaluation of the jump ([`Network::event_jump_tangent`]).
    fn handle_event_at_reported(&mut self, k: usize) -> Result<Option<Advance>, StepFailure> {
        self.y_new.copy_from_slice(&self.y);
        let n = self.network.layout.n_states;
        let kp = self.sensitivities.params.len();
        let t = self.t_s;
        let record = self.last_event.get_or_insert_with(EventRecord::default);
        record.dt_dp.clear();
        if kp > 0 {
            // f⁻ into dy[..n] (dy has n·(1 + kp) entries).
            OdeSystem::rhs(&mut self.network, t, &self.y[..n], &mut self.dy[..n]);
            let gdot = self.network.event_gradient_dot(k, &self.dy[..n]);
            if gdot == 0.0 || !gdot.is_finite() {
                return Err(self.sensitivity_failure(
                    k,
                    "the event function does not cross (ġ = 0), so its time has no derivative",
                ));
            }
            for i in 0..kp {
                let s = &self.y[(i + 1) * n..(i + 2) * n];
                record
                    .dt_dp
                    .push(-self.network.event_gradient_dot(k, s) / gdot);
            }
        }
        let mut y = std::mem::take(&mut self.y);
        let outcome = self.network.handle_event(k, t, &mut y[..n]);
        if kp > 0 {
            // f⁺ into dy[n..2n]; the state before the event is still in y_new.
            let (f_before, rest) = self.dy.split_at_mut(n);
            OdeSystem::rhs(&mut self.network, t, &y[..n], &mut rest[..n]);
            let dt_dp = &self.last_event.as_ref().expect("set above").dt_dp;
            for (i, (dt, p)) in dt_dp.iter().zip(&self.sensitivities.params).enumerate() {
                let s = &mut y[(i + 1) * n..(i + 2) * n];
                if outcome.state_changed {
                    for j in 0..n {
                        s[j] += f_before[j] * dt;
                    }
                    self.network.event_jump_tangent(k, &self.y_new[..n], s, p);
                    for j in 0..n {
                        s[j] -= rest[j] * dt;
                    }
                } else {
                    for j in 0..n {
                        s[j] += (f_before[j] - rest[j]) * dt;
                    }
                }
            }
        }
        if outcome.state_changed || kp > 0 {
            // The compensation of a changed entry no longer belongs to it.
            for (c, (a, b)) in self
                .y_compensation
                .iter_mut()
                .zip(y.iter().zip(&self.y_new))
            {
                if a.to_bits() != b.to_bits() {
                    *c = 0.0;
                }
            }
        }
        self.y = y;
        let record = self.last_event.get_or_insert_with(EventRecord::default);
        record.k = k;
        record.t_s = t;
        record.y_before.clone_from(&self.y_new);
        record.y_after.clone_from(&self.y);
        self.stats.events += 1;
        self.integrator.restart();
        if outcome.state_changed || kp > 0 {
            let rc = self
                .checks
                .warnings(&self.network, &self.y, &self.sensitivities.params);
            self.set_rc(rc);
        }
        let Some(j) = outcome.exit_of_piston else {
            return Ok(None);
        };
        if self.settings.stop_on_exit && !self.pending_exits() {
            self.finished = Some(Finish::Exited { t_s: self.t_s });
        }
        Ok(Some(Advance::Exit {
            piston: j,
            t_s: self.t_s,
        }))
    }

    fn sensitivity_failure(&self, k: usize, why: &str) -> StepFailure {
        StepFailure {
            code: 0,
            last_good_t_s: self.t_s,
            message: format!(
                "sensitivities: {} at t = {} s: {why}",
                self.network.event_description(k),
                self.t_s
            ),
        }
    }

    /// The earliest event crossing (k, step size to it) in the step of size `h` from the
    /// current point whose end state is in `y_new`: g_k(old) < 0 ≤ g_k(new).
    // Always inlined: the test is three instructions, the call was ten.
    #[inline(always)]
    fn earliest_event(
        &mut self,
        t: f64,
        h: f64,
        inc: &mut [f64],
        adaptive: bool,
    ) -> Result<Option<(usize, f64)>, StepFailure> {
        // Networks without pistons or inertance valves have no event functions: no call.
        if self.network.n_events() == 0 {
            return Ok(None);
        }
        self.earliest_event_of_all(t, h, inc, adaptive)
    }

    fn earliest_event_of_all(
        &mut self,
        t: f64,
        h: f64,
        inc: &mut [f64],
        adaptive: bool,
    ) -> Result<Option<(usize, f64)>, StepFailure> {
        let mut event: Option<(usize, f64)> = None;
        for k in 0..self.network.n_events() {
            let y0 = if adaptive { &self.internal.y } else { &self.y };
            let (Some(g0), Some(g1)) = (
                self.network.event_value(k, t, y0),
                self.network.event_value(k, t + h, &self.y_new),
            ) else {
                continue;
            };
            if crosses(g0, g1) {
                let hk = self.locate_event(k, t, h, g0, g1, inc, adaptive)?;
                if event.is_none_or(|(_, he)| hk < he) {
                    event = Some((k, hk));
                }
            }
        }
        Ok(event)
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
    fn check_max_time(&mut self) {
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
        let event = self.earliest_event(t, h, inc, true)?;
        if let Some((_, he)) = event {
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
        i.at_breakpoint = event.is_none() && breakpoint == Some(t_new);
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
            let h_lambda = d.last_stiffness();
            self.watch_dp5(h_lambda, t_new);
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

    /// Run-time check 11 for a forced `dopri5`: Hairer's stiffness detection as `auto` runs it
    /// (HNW II, §IV.2; `dopri5.f`'s 15 stability-limited steps with fewer than 6 non-stiff
    /// ones in between), a warning instead of a switch to the BDF.
    #[inline]
    fn watch_dp5(&mut self, h_lambda: f64, t_s: f64) {
        use crate::integrators::auto::{NONSTIFF_STEPS, STIFF_H_LAMBDA, STIFF_STEPS};
        let w = &mut self.stability;
        if h_lambda > STIFF_H_LAMBDA {
            w.dp5_nonstiff = 0;
            w.dp5_stiff += 1;
            if w.dp5_stiff >= STIFF_STEPS {
                w.dp5_stiff = 0;
                self.note_fired(checks::BEYOND_STABILITY, t_s);
            }
        } else {
            w.dp5_nonstiff = w.dp5_nonstiff.saturating_add(1);
            if w.dp5_nonstiff >= NONSTIFF_STEPS {
                w.dp5_stiff = 0;
            }
        }
    }

    /// Run-time check 11 for an explicit fixed-step method about to step with `h`: h·ρ(J) at
    /// the current state against the method's stability bound. Runs when `stability.next_step`
    /// is due; the next estimate follows after as many steps as the margin bound/(h·ρ) (1 to
    /// 1,024), so a Jacobian that grows towards the bound is watched more closely.
    #[cold]
    #[inline(never)]
    fn check_stability(&mut self, h: f64) {
        let bound = match self.stability.bound {
            Some(b) => b,
            None => match explicit_bound(self.integrator.name()) {
                Some(b) => {
                    self.stability.bound = Some(b);
                    b
                }
                None => {
                    self.stability.next_step = u64::MAX;
                    return;
                }
            },
        };
        let n = self.network.layout.n_states;
        let count = self.network.rhs_evaluations;
        let rho = self.stability.radius.estimate(
            &mut self.network,
            self.t_s,
            &self.y[..n],
            h,
            self.settings.control.atol,
        );
        self.network.rhs_evaluations = count;
        let steps = self.stats.steps;
        let interval = match rho {
            None => STABILITY_MAX_INTERVAL,
            Some(r) => {
                self.stability.last_radius_per_s = r;
                self.stability.last_step_s = h;
                let margin = bound / (h * r);
                if margin < 1.0 {
                    self.note_fired(checks::BEYOND_STABILITY, self.t_s);
                    // Fired: look again later, not at every step of a run that is off anyway.
                    STABILITY_FIRED_INTERVAL
                } else if margin.is_nan() {
                    STABILITY_MAX_INTERVAL
                } else {
                    (margin.floor().min(STABILITY_MAX_INTERVAL as f64) as u64).max(1)
                }
            }
        };
        self.stability.next_step = steps.saturating_add(interval);
    }

    /// The reported point catches up with the internal one, whose checks ran on its step
    /// (`rc` holds their code).
    fn report_internal(&mut self) {
        let i = &self.internal;
        self.t_s = i.t_s;
        self.y.copy_from_slice(&i.y);
        self.y_compensation.copy_from_slice(&i.compensation);
        self.note_fired(self.rc, self.t_s);
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

    fn solver_failure(&self, e: SolverError) -> StepFailure {
        StepFailure {
            code: 0,
            last_good_t_s: self.t_s,
            message: format!("solver failure: {e}"),
        }
    }

    /// Step size in (0, h] at which event `k` crosses zero, by the Illinois variant of
    /// regula falsi on the method's own step or dense output (Dahlquist & Björck, *Numerical
    /// Methods*, §6.2), iterated to the resolution of the time axis (far below the 1e-12 s
    /// asked for). The state at the returned size is left in `y_new`'s role by the caller.
    #[allow(clippy::too_many_arguments)]
    fn locate_event(
        &mut self,
        k: usize,
        t: f64,
        h: f64,
        g0: f64,
        g1: f64,
        inc: &mut [f64],
        adaptive: bool,
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
            if adaptive {
                let i = &self.internal;
                integ!(self.dense(t, &i.y, c, inc)).map_err(|e| self.solver_failure(e))?;
                kahan_add(
                    &i.y,
                    &i.compensation,
                    inc,
                    &mut self.y_new,
                    &mut self.compensation_new,
                );
            } else {
                integ!(self.dense(t, &self.y, c, inc)).map_err(|e| self.solver_failure(e))?;
                self.apply_increment(inc);
            }
            let gc = self
                .network
                .event_value(k, t + c, &self.y_new)
                .unwrap_or(0.0);
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
        let o = self.network.layout.first::<crate::components::Piston>() + j * piston::STATES;
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
        if let Some((p, t)) = self.start_pressure_temperature(i, m, u, v) {
            return [p, t, m, v, u];
        }
        [gas.pressure_pa(u, v), gas.temperature_k(m, u), m, v, u]
    }

    /// Chamber `i`'s pressure and temperature as the model (or a master) set them, while no step
    /// has been taken and its state is still exactly the (m, U) they give at its volume: read
    /// back through m and U they would be off by round-off (1e6 Pa → 999999.9999999998 Pa).
    /// In exact arithmetic the two agree, so only the start row changes.
    fn start_pressure_temperature(&self, i: usize, m: f64, u: f64, v: f64) -> Option<(f64, f64)> {
        if self.stats.steps != 0 {
            return None;
        }
        let c = &self.network.chambers()[i];
        let (m0, u0) = c.initial_mass_energy(&self.network.gas, from_si(v));
        (m0.value.to_bits() == m.to_bits() && u0.value.to_bits() == u.to_bits())
            .then_some((c.initial_pressure.value, c.initial_temperature.value))
    }

    /// Chamber `i`'s state as typed quantities (the `[f64; 5]` of [`Self::chamber_state`] is what
    /// the output table reads).
    pub fn chamber(&self, i: usize) -> ChamberQuantities {
        let [p, t, m, v, u] = self.chamber_state(i);
        ChamberQuantities {
            pressure: from_si(p),
            temperature: from_si(t),
            mass: from_si(m),
            volume: from_si(v),
            internal_energy: from_si(u),
        }
    }

    /// Piston `j`'s position and velocity, typed.
    pub fn piston(&self, j: usize) -> (Length, Velocity) {
        let (x, v) = self.piston_state(j);
        (from_si(x), from_si(v))
    }

    /// Gas mass plus the net mass that left into reservoirs (output `mass_total`), typed.
    pub fn mass_total(&self) -> Mass {
        from_si(self.network.mass_total_kg(&self.y))
    }

    /// The closed energy balance (output `energy_total`), typed.
    pub fn energy_total(&self) -> Energy {
        from_si(self.network.energy_total_j(&self.y))
    }

    /// Refresh link flows for the current state (an output evaluation, not counted as work).
    pub fn refresh_flows(&mut self) {
        self.ensure_scratch();
        let count = self.network.rhs_evaluations;
        let n = self.network.layout.n_states;
        let mut dy = std::mem::take(&mut self.dy);
        self.network.rhs(self.t_s, &self.y[..n], &mut dy[..n]);
        self.dy = dy;
        self.network.rhs_evaluations = count;
    }
}

/// A chamber's state as typed quantities ([`Simulation::chamber`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChamberQuantities {
    pub pressure: Pressure,
    pub temperature: ThermodynamicTemperature,
    pub mass: Mass,
    pub volume: Volume,
    pub internal_energy: Energy,
}

/// out = y + inc with Kahan's compensated summation (Higham, *Accuracy and Stability of
/// Numerical Algorithms*, §4.3); `comp` is y's compensation, `out_comp` the new one.
#[inline]
fn kahan_add(y: &[f64], comp: &[f64], inc: &[f64], out: &mut [f64], out_comp: &mut [f64]) {
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
mod typed_query_tests {
    use crate::units::si::{cubic_meter, kelvin, kilogram, meter, meter_per_second, pascal};

    /// The typed queries of the shipped projectile at t = 0 against the model file's numbers:
    /// p and T as written, V = A·x0 (dead volume 0), m = p·V/(R·T) with R of air 287.05.
    #[test]
    fn typed_queries_of_the_projectile_match_the_model_file() {
        let src = include_str!("../models/projectile.toml");
        let model = crate::model::parse_str(src, "projectile.toml", &[]).unwrap();
        let sim = crate::model::build_simulation(&model.spec, None).unwrap();
        let c = sim.chamber(0);
        let v = 1.130_973_355_292_325_5e-4 * 0.1;
        let m = 701_325.0 * v / (287.05 * 300.0);
        println!(
            "p = {} Pa, T = {} K, V = {} m3 (A·x0 = {v}), m = {} kg (pV/RT = {m})",
            c.pressure.get::<pascal>(),
            c.temperature.get::<kelvin>(),
            c.volume.get::<cubic_meter>(),
            c.mass.get::<kilogram>()
        );
        assert!((c.pressure.get::<pascal>() - 701_325.0).abs() < 1e-6);
        assert!((c.temperature.get::<kelvin>() - 300.0).abs() < 1e-9);
        assert!((c.volume.get::<cubic_meter>() - v).abs() < 1e-18);
        assert!((c.mass.get::<kilogram>() - m).abs() < 1e-15);
        let (x, vel) = sim.piston(0);
        assert_eq!(
            (x.get::<meter>(), vel.get::<meter_per_second>()),
            (0.1, 0.0)
        );
        // Nothing has left yet: the total is the chamber's gas.
        assert!((sim.mass_total().get::<kilogram>() - m).abs() < 1e-15);
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
        let src = include_str!("../compliance-tests/peers/models/cantera_vent.toml");
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
