//! Time integrators behind one trait, chosen by name.
//!
//! An integrator sees only an [`OdeSystem`] and returns *increments* Δy, never y itself: the
//! driver adds them to the state with compensated (Kahan) summation, so round-off does not
//! accumulate over the 10⁴–10⁶ steps of a fine fixed-step run (Hairer, Lubich & Wanner,
//! *Geometric Numerical Integration*, §VIII.5). A step is two-phase so that the driver can locate
//! events and refuse steps that fail a run-time check: [`Integrator::attempt`] computes a
//! candidate without changing any history, [`Integrator::dense`] gives the state anywhere inside
//! the attempted step (for fixed-step methods by recomputing a shorter step with the same
//! formula, so event states carry the method's own accuracy), and [`Integrator::commit`] accepts
//! a step. All history is plain serde data: a restored integrator continues bit for bit.
//!
//! Fixed-step methods take the step the driver asks for. Adaptive methods
//! ([`Integrator::fixed_step`] false) choose their own step no longer than the `h` the driver
//! allows (the distance to the next breakpoint and `max_step`), retry rejected trials inside
//! `attempt`, and keep the dense output of their last step valid after `commit`: the driver
//! steps past output times and communication points and reports the state there by dense
//! output, so those times never shorten a step.
//!
//! Adding a method: a module, a variant of [`Method`], a line in [`METHODS`] and
//! [`Method::by_name`], and one arm in the `dispatch!` macro.

pub mod adams_bashforth;
pub mod auto;
pub mod backward_euler;
pub mod bdf;
pub mod dopri5;
pub mod euler;
pub(crate) mod fast_pow;
pub mod linsolve;
pub(crate) mod newton;
pub mod rk4;
pub mod stability;

use serde::{Deserialize, Serialize};

use crate::ode::OdeSystem;

pub use adams_bashforth::AdamsBashforth;
pub use auto::Auto;
pub use backward_euler::BackwardEuler;
pub use bdf::Bdf;
pub use dopri5::Dopri5;
pub use euler::Euler;
pub use linsolve::krylov;
pub use rk4::Rk4;

#[derive(Clone, Debug, PartialEq)]
pub enum SolverError {
    /// The system produced a non-finite derivative.
    NonFinite { t: f64 },
    /// An adaptive method could not meet its tolerance: its error test kept failing down to
    /// step size h (the smallest representable step, or the method's limit on retries).
    StepTooSmall { t: f64, h: f64 },
    /// An implicit method's Newton iteration did not converge at t, the last try with step
    /// size h (its smallest step, its limit on retries, or the fixed step given).
    NewtonFailed { t: f64, h: f64 },
    /// The BDF's band or dense LU of M = I − γJ (`band`: which) for `n` states would store
    /// `values` values (`usize::MAX`: more than that), above `linsolve::MAX_FACTOR_VALUES`:
    /// refused at setup (plain fields, so that the error type needs no drop).
    FactorTooLarge {
        linear: linsolve::LinearSolver,
        band: bool,
        n: usize,
        values: usize,
    },
}

/// Default relative tolerance of the adaptive methods (`[solver] rtol`).
pub const DEFAULT_RTOL: f64 = 1e-6;
/// Default absolute tolerance of the adaptive methods (`[solver] atol`), in state units (kg, J,
/// m³, m, m/s): scalar, so choose it below the smallest state magnitude that matters.
pub const DEFAULT_ATOL: f64 = 1e-12;

/// Step-size control settings from `[solver]`, given to every method by
/// [`Integrator::configure`] (fixed-step methods ignore them).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepControl {
    pub rtol: f64,
    pub atol: f64,
    /// Largest step, s (`None`: no limit but the method's own).
    pub max_step: Option<f64>,
    /// First step, s (`None`: the method chooses).
    pub initial_step: Option<f64>,
    /// Length of the run, t_end − t_start, s (for defaults that scale with it, as FONSim's).
    pub span_s: f64,
    /// Where the implicit methods' Newton Jacobian comes from (`[solver] jacobian`).
    pub jacobian: JacobianSource,
}

/// Source of the Newton Jacobian of the implicit methods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum JacobianSource {
    /// Exact, from the system's [`OdeSystem::jvp`] (forward-mode dual numbers), one directional
    /// derivative per group of structurally orthogonal columns; finite differences when the
    /// system has no `jvp`.
    #[default]
    Exact,
    /// Forward differences of the right-hand side, one evaluation per column group.
    FiniteDifference,
}

impl Default for StepControl {
    fn default() -> Self {
        StepControl {
            rtol: DEFAULT_RTOL,
            atol: DEFAULT_ATOL,
            max_step: None,
            initial_step: None,
            span_s: 1.0,
            jacobian: JacobianSource::default(),
        }
    }
}

impl std::fmt::Display for SolverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolverError::NonFinite { t } => {
                write!(f, "the right-hand side is not finite at t = {t} s")
            }
            SolverError::StepTooSmall { t, h } => write!(
                f,
                "the step size fell to {h:e} s at t = {t} s without meeting the tolerance"
            ),
            SolverError::NewtonFailed { t, h } => write!(
                f,
                "Newton's iteration did not converge at t = {t} s (last step size {h:e} s)"
            ),
            SolverError::FactorTooLarge {
                linear,
                band,
                n,
                values,
            } => linsolve::write_factor_too_large(f, *linear, *band, *n, *values),
        }
    }
}

pub trait Integrator {
    /// The method's name as written in model files.
    fn name(&self) -> &'static str;
    /// Theoretical order of accuracy.
    fn order(&self) -> usize;
    /// Whether the method takes the step the driver asks for (true) or chooses its own.
    fn fixed_step(&self) -> bool;
    /// Take the `[solver]` step-control settings (adaptive methods; the default ignores them).
    fn configure(&mut self, _control: &StepControl) {}
    /// Trial steps rejected by the error control so far (adaptive methods).
    fn rejected_steps(&self) -> u64 {
        0
    }
    /// Forget all history (after a discontinuity): the next step starts afresh.
    fn restart(&mut self);
    /// The driver passed over a switch of a law that the last step crossed within the
    /// tolerance's noise (no event, no restart): the next step must not keep what the method
    /// linearized on the other side (the BDF's Newton Jacobian). Called before that step.
    fn crossed_switch(&mut self) {}
    /// Compute the increment Δy of a step of size (at most) `h` from (t, y) into `inc`;
    /// returns the size taken (fixed-step methods: exactly `h`; adaptive methods: the accepted
    /// step, ≤ `h`, and exactly `h` when they take all of it).
    fn attempt<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<f64, SolverError>;
    /// The increment from t to t + h, 0 < h ≤ the size of the last attempt from (t, y).
    /// Adaptive methods keep this valid after `commit` (until the next `attempt` or `restart`),
    /// with (t, y) the start of the committed step.
    fn dense<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError>;
    /// Accept the step that ended at (t_new, y_new).
    fn commit<S: OdeSystem>(&mut self, sys: &mut S, t_new: f64, y_new: &[f64]);
    /// Check a restored (deserialized) history for a system of `n` states: vector lengths,
    /// counters and orders within their bounds, times and step sizes finite, so that no
    /// `attempt`, `dense` or `commit` can index out of range or overflow after a restore.
    /// `Err` says what is wrong. The default (no serialized history) accepts everything.
    fn validate_state(&self, _n: usize) -> Result<(), String> {
        Ok(())
    }
}

/// Every integrator, as one serializable value (static dispatch, no boxing).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Method {
    Euler(Euler),
    Rk4(Rk4),
    AdamsBashforth(AdamsBashforth),
    Bdf(Bdf),
    Dopri5(Dopri5),
    BackwardEuler(BackwardEuler),
    Auto(Box<Auto>),
}

impl Method {
    /// `self = src` (fmi2GetFMUstate into an existing handle, fmi2SetFMUstate): the serialized
    /// history copied into storage of the same size, without allocating once it has its sizes;
    /// each integrator's scratch is kept. Euler and RK4 have no history (their fields are
    /// scratch). Another method: cloned.
    pub fn assign_from(&mut self, src: &Method) {
        match (self, src) {
            (Method::Euler(_), Method::Euler(_)) | (Method::Rk4(_), Method::Rk4(_)) => {}
            (Method::AdamsBashforth(d), Method::AdamsBashforth(s)) => d.assign(s),
            (Method::Bdf(d), Method::Bdf(s)) => d.assign(s),
            (Method::Dopri5(d), Method::Dopri5(s)) => d.assign(s),
            (Method::BackwardEuler(d), Method::BackwardEuler(s)) => d.assign(s),
            (Method::Auto(d), Method::Auto(s)) => d.assign(s),
            (d, s) => d.clone_from(s),
        }
    }

    /// How the BDF (`bdf`, `bdf1`..`bdf5`, `auto`'s) solves its Newton systems; other methods
    /// have none to solve.
    pub fn set_linear_solver(&mut self, linear: linsolve::LinearSolver) {
        match self {
            Method::Bdf(b) => b.set_linear_solver(linear),
            Method::Auto(a) => a.bdf_mut().set_linear_solver(linear),
            _ => {}
        }
    }

    /// The BDF whose saved Jacobian a state carries (`bdf`, `bdf1`..`bdf5`, `auto`).
    pub fn bdf(&self) -> Option<&Bdf> {
        match self {
            Method::Bdf(b) => Some(b),
            Method::Auto(a) => Some(a.bdf()),
            _ => None,
        }
    }
}

/// Names accepted in model files and by `--method`, with a short description.
pub const METHODS: &[(&str, &str)] = &[
    ("euler", "forward Euler, order 1, fixed step"),
    ("rk4", "classical Runge–Kutta, order 4, fixed step"),
    ("ab2", "Adams–Bashforth 2 (RK4 start), fixed step"),
    ("ab3", "Adams–Bashforth 3 (RK4 start), fixed step"),
    ("ab4", "Adams–Bashforth 4 (RK4 start), fixed step"),
    ("ab5", "Adams–Bashforth 5 (RK4 start), fixed step"),
    (
        "bdf",
        "variable-order (1–5), variable-step BDF as CVODES, for stiff networks",
    ),
    ("bdf1", "BDF order 1 (backward Euler, Newton), fixed step"),
    ("bdf2", "BDF order 2 (RK4 start), fixed step"),
    ("bdf3", "BDF order 3 (RK4 start), fixed step"),
    ("bdf4", "BDF order 4 (RK4 start), fixed step"),
    ("bdf5", "BDF order 5 (RK4 start), fixed step"),
    (
        "dopri5",
        "Dormand–Prince 5(4), adaptive (rtol, atol), dense output of order 4",
    ),
    (
        "backward-euler",
        "backward Euler with Newton, FONSim's adaptive step (interpolation criterion)",
    ),
    (
        "auto",
        "the default: dopri5, switching to bdf when the network turns stiff and back (as LSODA)",
    ),
];

impl Method {
    /// Build a method from its name for a system of `n` states.
    pub fn by_name(name: &str, n: usize) -> Option<Method> {
        Some(match name {
            "euler" => Method::Euler(Euler::new(n)),
            "rk4" => Method::Rk4(Rk4::new(n)),
            "auto" => Method::Auto(Box::new(Auto::new(n))),
            "ab2" => Method::AdamsBashforth(AdamsBashforth::new(2, n)),
            "ab3" => Method::AdamsBashforth(AdamsBashforth::new(3, n)),
            "ab4" => Method::AdamsBashforth(AdamsBashforth::new(4, n)),
            "ab5" => Method::AdamsBashforth(AdamsBashforth::new(5, n)),
            "bdf" => Method::Bdf(Bdf::adaptive(n)),
            "bdf1" => Method::Bdf(Bdf::fixed(1, n)),
            "bdf2" => Method::Bdf(Bdf::fixed(2, n)),
            "bdf3" => Method::Bdf(Bdf::fixed(3, n)),
            "bdf4" => Method::Bdf(Bdf::fixed(4, n)),
            "bdf5" => Method::Bdf(Bdf::fixed(5, n)),
            "dopri5" => Method::Dopri5(Dopri5::new(n)),
            "backward-euler" => Method::BackwardEuler(BackwardEuler::new(n)),
            _ => return None,
        })
    }

    /// Whether `name` needs a fixed `step` (adaptive methods choose their own: `rtol`, `atol`,
    /// `max_step`, `initial_step` instead).
    pub fn needs_step(name: &str) -> bool {
        matches!(
            name,
            "euler"
                | "rk4"
                | "ab2"
                | "ab3"
                | "ab4"
                | "ab5"
                | "bdf1"
                | "bdf2"
                | "bdf3"
                | "bdf4"
                | "bdf5"
        )
    }
}

/// `$small` with `$N` a constant equal to `$n` when `$n` is a small state count (every
/// Cantera single-tank network and the FONSim ones have 5 to 9 states), else `$general`: with
/// the length a constant, LLVM unrolls the per-state loops and drops their bounds checks and
/// remainder loops, which cost more than the arithmetic at n ≈ 5. The arithmetic is the same,
/// term for term, in either arm (no reassociation: results are bit-identical).
macro_rules! small_n {
    ($n:expr, $N:ident => $small:expr, _ => $general:expr) => {
        match $n {
            3 => {
                const $N: usize = 3;
                $small
            }
            4 => {
                const $N: usize = 4;
                $small
            }
            5 => {
                const $N: usize = 5;
                $small
            }
            6 => {
                const $N: usize = 6;
                $small
            }
            7 => {
                const $N: usize = 7;
                $small
            }
            8 => {
                const $N: usize = 8;
                $small
            }
            9 => {
                const $N: usize = 9;
                $small
            }
            10 => {
                const $N: usize = 10;
                $small
            }
            11 => {
                const $N: usize = 11;
                $small
            }
            _ => $general,
        }
    };
}
pub(crate) use small_n;

macro_rules! dispatch {
    ($self:ident, $m:ident => $e:expr) => {
        match $self {
            Method::Euler($m) => $e,
            Method::Rk4($m) => $e,
            Method::AdamsBashforth($m) => $e,
            Method::Bdf($m) => $e,
            Method::Dopri5($m) => $e,
            Method::BackwardEuler($m) => $e,
            Method::Auto($m) => $e,
        }
    };
}

impl Integrator for Method {
    fn name(&self) -> &'static str {
        dispatch!(self, m => m.name())
    }
    fn order(&self) -> usize {
        dispatch!(self, m => m.order())
    }
    fn fixed_step(&self) -> bool {
        dispatch!(self, m => m.fixed_step())
    }
    fn configure(&mut self, control: &StepControl) {
        dispatch!(self, m => m.configure(control))
    }
    fn rejected_steps(&self) -> u64 {
        dispatch!(self, m => m.rejected_steps())
    }
    fn restart(&mut self) {
        dispatch!(self, m => m.restart())
    }
    fn crossed_switch(&mut self) {
        dispatch!(self, m => m.crossed_switch())
    }
    fn attempt<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<f64, SolverError> {
        dispatch!(self, m => m.attempt(sys, t, y, h, inc))
    }
    fn dense<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        dispatch!(self, m => m.dense(sys, t, y, h, inc))
    }
    fn commit<S: OdeSystem>(&mut self, sys: &mut S, t_new: f64, y_new: &[f64]) {
        dispatch!(self, m => m.commit(sys, t_new, y_new))
    }
    fn validate_state(&self, n: usize) -> Result<(), String> {
        dispatch!(self, m => m.validate_state(n))
    }
}

/// Largest counter a restored history may hold (far beyond any run; keeps `+= 1` from
/// overflowing).
pub(crate) const MAX_RESTORED_COUNT: u64 = 1 << 53;

/// `Err` naming `what` unless every value is finite (for `validate_state`).
pub(crate) fn all_finite(what: &str, v: &[f64]) -> Result<(), String> {
    match v.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(i) => Err(format!("{what}[{i}] = {} is not finite", v[i])),
    }
}

/// `Err` unless `v` has length `len` (for `validate_state`).
pub(crate) fn check_len(what: &str, v: &[f64], len: usize) -> Result<(), String> {
    if v.len() == len {
        Ok(())
    } else {
        Err(format!("{what} has {} values, expected {len}", v.len()))
    }
}

/// √(Σ wᵢ·(xᵢ/sᵢ)²) over i < n with wᵢ ≠ 0, formed so that it does not overflow where the
/// plain sum of squares would (tolerances near 0, states or rates near 1e±300): each quotient
/// is divided by the largest |xᵢ/sᵢ| before it is squared (the idea of LAPACK's `dnrm2`).
/// ∞ when a quotient itself is not finite. For initial-step estimates, off the step path.
pub(crate) fn scaled_norm(
    n: usize,
    x: impl Fn(usize) -> f64,
    s: impl Fn(usize) -> f64,
    w: impl Fn(usize) -> f64,
) -> f64 {
    let mut big: f64 = 0.0;
    for i in 0..n {
        if w(i) != 0.0 {
            big = big.max((x(i) / s(i)).abs());
        }
    }
    if !big.is_finite() {
        return f64::INFINITY;
    }
    if big == 0.0 {
        return 0.0;
    }
    let mut sum = 0.0;
    for i in 0..n {
        let wi = w(i);
        if wi != 0.0 {
            let q = x(i) / s(i) / big;
            sum += wi * q * q;
        }
    }
    big * sum.sqrt()
}

/// √(Σ (vᵢ·wᵢ)²/len), the BDF's weighted RMS norm, formed like [`scaled_norm`] so that it
/// does not overflow (for its initial step, where the plain form did).
pub(crate) fn wrms_scaled(v: &[f64], w: &[f64], len: f64) -> f64 {
    let n = v.len().min(w.len());
    scaled_norm(n, |i| v[i], |i| 1.0 / w[i], |_| 1.0) / len.max(1.0).sqrt()
}

/// Fail on a non-finite derivative (Cantera's `checkFinite`), so no NaN is ever committed.
#[inline]
pub(crate) fn check_finite(t: f64, v: &[f64]) -> Result<(), SolverError> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(SolverError::NonFinite { t })
    }
}

/// Whether every value is finite: Σ 0·v_i is ±0 when they all are and NaN when one is not
/// (0·∞ = NaN), two operations a value and no branch (`iter().all(is_finite)` branches per
/// value). Every term is ±0 or NaN, so the order of the sum does not matter: the odd value
/// first, then two sums over the pairs (one SSE2 operation a pair, where a single sum is one
/// dependent chain).
#[inline]
pub(crate) fn finite_values(v: &[f64]) -> bool {
    let mut acc = [0.0f64; 2];
    let odd = v.len() % 2;
    if odd == 1 {
        acc[0] = 0.0 * v[0];
    }
    for p in v[odd..].chunks_exact(2) {
        acc[0] += 0.0 * p[0];
        acc[1] += 0.0 * p[1];
    }
    acc[0] + acc[1] == 0.0
}

/// Resize a scratch buffer (only ever allocates on the first step after construction or
/// deserialization, never in steady stepping).
#[inline]
pub(crate) fn ensure_len(v: &mut Vec<f64>, n: usize) {
    if v.len() != n {
        v.resize(n, 0.0);
    }
}
