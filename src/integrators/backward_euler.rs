//! Backward Euler with Newton's method and FONSim's adaptive step, so FONSim's own method can
//! be compared with the others on equal terms.
//!
//! Each step solves y_{n+1} = y_n + h·f(t_{n+1}, y_{n+1}) for the increment d = y_{n+1} − y_n by
//! Newton's method on G(d) = d − h·f(t + h, y + d), with a forward-difference Jacobian refreshed
//! at every iteration and a dense LU (faer) — as FONSim's solver does.
//!
//! Step control mirrors FONSim 0.6.0, `fonsim/core/solver.py`, class `NewtonAdaptiveTimeStep02`
//! (and the tolerances of `fonsim/core/simulation.py`):
//! - the desired precision of state i is tolᵢ = max((maxᵢ − minᵢ)·rtol, atol), with maxᵢ, minᵢ
//!   the extremes of the values seen so far, both starting at 0 (`fill_state_tolerances`;
//!   FONSim's `relative_solving_tolerance` is our `rtol`, `minimum_solving_tolerance` our `atol`);
//! - interpolation criterion: with x solved at k−2, k−1, k, x^{k−1} must lie within tolᵢ of the
//!   straight line through x^{k−2} and x^k (for equal steps their mean); the error is
//!   maxᵢ |x^{k−1}ᵢ − x_ipᵢ| / tolᵢ;
//! - error > 1 (or Newton did not converge) and h > h_min: h ← max(h·0.5, h_min) and the last
//!   *two* steps are computed again ("each time the timestep is reduced, the simulator returns
//!   two steps"); error < 0.5: h ← min(h·1.5, h_max); no adjustment in the first five steps;
//! - h starts at h_min; defaults h_min = span·1e-4, h_max = span·1e-2 (`resolve_timestep_argument`);
//!   here `initial_step` sets h_min and `max_step` sets h_max;
//! - Newton: converged when maxᵢ |Gᵢ|/tolᵢ < 0.4 after at least two corrections (FONSim's "0.4
//!   to avoid triggering the timestep sizing interpolation check", `min_nb_iterations` = 1), at
//!   most 100 iterations.
//!
//! Two differences, both deliberate: (1) FONSim's code compares x^k (not x^{k−1}) with the line
//! at t_{k−1} (`phi[simstep] - phi_ip`), which measures the change over the last step rather
//! than the curvature its documentation describes; we follow the documentation (seed 004).
//! (2) The driver cannot take back an accepted step, so a step here is a *pair* of backward
//! Euler steps (k−1 and k from k−2): the criterion is checked on each pair and a failed pair is
//! recomputed from k−2 with half the step — FONSim's "returns two steps" exactly, on
//! non-overlapping triples. Dense output interpolates linearly between the three points (the
//! method's own order). (3) A Newton failure at h_min halves the step further, down to the
//! time axis's resolution and at most [`MAX_HALVINGS_BELOW_MIN`] times, where FONSim prints
//! it and goes on: a fast transient at the start (a light piston) then gets the small steps
//! it needs, which grow again by FONSim's factor 1.5 once the criterion allows. Newton failing
//! below all of that is an error.

use serde::{Deserialize, Serialize};

use super::newton::{DenseLu, fd_jacobian};
use super::{Integrator, SolverError, StepControl, ensure_len};
use crate::ode::OdeSystem;

/// FONSim's step factors (`factor_decrease`, `factor_increase`, `threshold_increase`).
const FACTOR_DECREASE: f64 = 0.5;
const FACTOR_INCREASE: f64 = 1.5;
const THRESHOLD_INCREASE: f64 = 0.5;
/// Steps taken before the criterion is applied (FONSim: `simstep < 5`).
const WARMUP_STEPS: u64 = 5;
/// Newton: scaled residual below which it has converged, iterations at most, corrections at
/// least (FONSim's `newton_solver`: 0.4, 100, `i > min_nb_iterations` with 1).
const NEWTON_TOL: f64 = 0.4;
const NEWTON_MAX_ITERATIONS: usize = 100;
const NEWTON_MIN_CORRECTIONS: usize = 2;
/// FONSim's defaults of the step range as fractions of the run's duration.
const H_MIN_OF_SPAN: f64 = 1e-4;
const H_MAX_OF_SPAN: f64 = 1e-2;
/// Halvings of a step below h_min when Newton does not converge (2⁻⁶⁰ ≈ 1e-18·h_min).
pub const MAX_HALVINGS_BELOW_MIN: u32 = 60;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackwardEuler {
    n: usize,
    rtol: f64,
    atol: f64,
    h_min: f64,
    h_max: f64,
    /// Current step size (of each of the two steps of a pair).
    h: f64,
    /// Extremes of the state seen so far (both start at 0, as FONSim's).
    state_min: Vec<f64>,
    state_max: Vec<f64>,
    /// Backward Euler steps accepted so far.
    pub steps: u64,
    /// Pairs recomputed with a smaller step.
    pub rejected: u64,
    pub newton_iterations: u64,
    /// Dense output of the last pair: the increment of its first step, of both, and the sizes.
    inc1: Vec<f64>,
    inc2: Vec<f64>,
    h1: f64,
    h2: f64,
    #[serde(skip)]
    s: Box<Scratch>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Scratch {
    d: Vec<f64>,
    z: Vec<f64>,
    f: Vec<f64>,
    r: Vec<f64>,
    tol: Vec<f64>,
    y1: Vec<f64>,
    yp: Vec<f64>,
    fp: Vec<f64>,
    scale: Vec<f64>,
    lu: DenseLu,
}

impl BackwardEuler {
    /// `self = o` without allocating once the vectors have their sizes (fmi2SetFMUstate into
    /// a running instance). The Newton scratch is rebuilt by every step: kept.
    pub(crate) fn assign(&mut self, o: &Self) {
        let BackwardEuler {
            n,
            rtol,
            atol,
            h_min,
            h_max,
            h,
            state_min,
            state_max,
            steps,
            rejected,
            newton_iterations,
            inc1,
            inc2,
            h1,
            h2,
            s: _,
        } = self;
        *n = o.n;
        *rtol = o.rtol;
        *atol = o.atol;
        *h_min = o.h_min;
        *h_max = o.h_max;
        *h = o.h;
        state_min.clone_from(&o.state_min);
        state_max.clone_from(&o.state_max);
        *steps = o.steps;
        *rejected = o.rejected;
        *newton_iterations = o.newton_iterations;
        inc1.clone_from(&o.inc1);
        inc2.clone_from(&o.inc2);
        *h1 = o.h1;
        *h2 = o.h2;
    }

    pub fn new(n: usize) -> Self {
        let mut be = BackwardEuler {
            n,
            rtol: 0.0,
            atol: 0.0,
            h_min: 0.0,
            h_max: 0.0,
            h: 0.0,
            state_min: vec![0.0; n],
            state_max: vec![0.0; n],
            steps: 0,
            rejected: 0,
            newton_iterations: 0,
            inc1: vec![0.0; n],
            inc2: vec![0.0; n],
            h1: 0.0,
            h2: 0.0,
            s: Box::default(),
        };
        be.configure(&StepControl::default());
        be
    }

    /// The current step size (each step of a pair), s.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// The smallest and largest step allowed, s.
    pub fn step_range(&self) -> (f64, f64) {
        (self.h_min, self.h_max)
    }

    fn ensure(&mut self) {
        let n = self.n;
        let s = &mut self.s;
        for v in [
            &mut s.d,
            &mut s.z,
            &mut s.f,
            &mut s.r,
            &mut s.tol,
            &mut s.y1,
            &mut s.yp,
            &mut s.fp,
            &mut s.scale,
        ] {
            ensure_len(v, n);
        }
        s.lu.ensure(n);
        for v in [
            &mut self.state_min,
            &mut self.state_max,
            &mut self.inc1,
            &mut self.inc2,
        ] {
            ensure_len(v, n);
        }
    }

    /// FONSim's `fill_state_tolerances`: tolᵢ = max(rangeᵢ·rtol, atol).
    fn fill_tolerances(&mut self) {
        for i in 0..self.n {
            let range = self.state_max[i] - self.state_min[i];
            self.s.tol[i] = (range * self.rtol).max(self.atol);
            self.s.scale[i] = range.max(self.atol);
        }
    }

    fn note_range(&mut self, y: &[f64]) {
        for i in 0..self.n {
            self.state_min[i] = self.state_min[i].min(y[i]);
            self.state_max[i] = self.state_max[i].max(y[i]);
        }
    }

    /// One backward Euler step of size h from (t, y): the increment into `self.s.d`. Returns
    /// whether Newton converged.
    fn solve_step<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
    ) -> Result<bool, SolverError> {
        let n = self.n;
        let tn = t + h;
        let s = &mut self.s;
        // FONSim's first guess: the previous step's values (d = 0).
        s.d.fill(0.0);
        for it in 0..NEWTON_MAX_ITERATIONS {
            for i in 0..n {
                s.z[i] = y[i] + s.d[i];
            }
            sys.rhs(tn, &s.z, &mut s.f);
            if !s.f.iter().all(|v| v.is_finite()) {
                return Ok(false);
            }
            let mut worst: f64 = 0.0;
            for i in 0..n {
                s.r[i] = s.d[i] - h * s.f[i];
                worst = worst.max((s.r[i] / s.tol[i]).abs());
            }
            if worst < NEWTON_TOL && it >= NEWTON_MIN_CORRECTIONS {
                return Ok(true);
            }
            if !worst.is_finite() {
                return Ok(false);
            }
            self.newton_iterations += 1;
            // A = I − h·∂f/∂y at z, by forward differences.
            let jacobian_ok = {
                let mut a = s.lu.matrix_mut();
                fd_jacobian(
                    sys,
                    tn,
                    &s.z,
                    &s.f,
                    &s.scale,
                    &mut s.yp,
                    &mut s.fp,
                    |i, j, dfdy| {
                        let identity = if i == j { 1.0 } else { 0.0 };
                        a[(i, j)] = identity - h * dfdy;
                    },
                )
                .is_ok()
            };
            if !jacobian_ok || s.lu.factor().is_err() {
                return Ok(false);
            }
            // d ← d − A⁻¹·G(d)
            s.lu.solve_in_place(&mut s.r);
            for i in 0..n {
                s.d[i] -= s.r[i];
            }
        }
        Ok(false)
    }
}

impl Integrator for BackwardEuler {
    fn name(&self) -> &'static str {
        "backward-euler"
    }
    fn order(&self) -> usize {
        1
    }
    fn fixed_step(&self) -> bool {
        false
    }
    fn configure(&mut self, control: &StepControl) {
        self.rtol = control.rtol;
        self.atol = control.atol;
        let span = if control.span_s > 0.0 && control.span_s.is_finite() {
            control.span_s
        } else {
            1.0
        };
        self.h_max = control.max_step.unwrap_or(span * H_MAX_OF_SPAN);
        self.h_min = control
            .initial_step
            .unwrap_or((span * H_MIN_OF_SPAN).min(self.h_max * 1e-2))
            .min(self.h_max);
        self.h = self.h_min;
    }
    fn rejected_steps(&self) -> u64 {
        self.rejected
    }
    fn restart(&mut self) {
        // The step size and the ranges describe the solution, not its history: FONSim keeps
        // them. Nothing else spans steps (each pair starts from the current point).
    }
    fn attempt<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h_max: f64,
        inc: &mut [f64],
    ) -> Result<f64, SolverError> {
        self.ensure();
        let n = self.n;
        if self.steps == 0 {
            self.note_range(y);
        }
        self.fill_tolerances();
        let mut below_min = 0u32;
        loop {
            // Both steps of the pair fit into the driver's limit (a breakpoint, max_step).
            let clipped = 2.0 * self.h >= h_max;
            let (h1, h2) = if clipped {
                let h1 = 0.5 * h_max;
                (h1, h_max - h1)
            } else {
                (self.h, self.h)
            };
            let mut converged = self.solve_step(sys, t, y, h1)?;
            if converged {
                self.inc1.copy_from_slice(&self.s.d);
                for i in 0..n {
                    self.s.y1[i] = y[i] + self.s.d[i];
                }
                let y1 = std::mem::take(&mut self.s.y1);
                let r = self.solve_step(sys, t + h1, &y1, h2);
                self.s.y1 = y1;
                converged = r?;
            }
            let mut err = 0.0_f64;
            if converged {
                // The second increment, relative to the start: inc2 = inc1 + d2.
                for i in 0..n {
                    self.inc2[i] = self.inc1[i] + self.s.d[i];
                }
                // x^{k−1} against the line through x^{k−2} = y and x^k = y + inc2 at t + h1.
                let w = h1 / (h1 + h2);
                for i in 0..n {
                    let ip = w * self.inc2[i];
                    err = err.max(((self.inc1[i] - ip) / self.s.tol[i]).abs());
                }
            }
            let checked = self.steps + 2 >= WARMUP_STEPS;
            if (!converged || (checked && err > 1.0)) && self.h > self.h_min {
                self.h = (self.h * FACTOR_DECREASE).max(self.h_min);
                self.rejected += 1;
                continue;
            }
            if !converged {
                let h_next = self.h.min(h1) * FACTOR_DECREASE;
                let resolved = h_next >= crate::time_axis::time_resolution_s(t + h_next);
                if below_min < MAX_HALVINGS_BELOW_MIN && resolved && h_next > 0.0 {
                    below_min += 1;
                    self.h = h_next;
                    self.rejected += 1;
                    continue;
                }
                return Err(SolverError::NewtonFailed { t, h: h1 });
            }
            if checked && err < THRESHOLD_INCREASE {
                self.h = (self.h * FACTOR_INCREASE).min(self.h_max);
            }
            self.steps += 2;
            inc.copy_from_slice(&self.inc2);
            self.h1 = h1;
            self.h2 = h2;
            // Ranges of the new points (FONSim updates them after every step).
            for i in 0..n {
                self.s.z[i] = y[i] + self.inc1[i];
            }
            let z = std::mem::take(&mut self.s.z);
            self.note_range(&z);
            for i in 0..n {
                self.s.y1[i] = y[i] + self.inc2[i];
            }
            self.s.z = z;
            let y2 = std::mem::take(&mut self.s.y1);
            self.note_range(&y2);
            self.s.y1 = y2;
            return Ok(if clipped { h_max } else { h1 + h2 });
        }
    }
    fn dense<S: OdeSystem>(
        &mut self,
        _sys: &mut S,
        _t: f64,
        _y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        // Piecewise linear through the three points of the last pair.
        if h >= self.h1 + self.h2 {
            inc.copy_from_slice(&self.inc2);
        } else if h <= self.h1 {
            let w = h / self.h1;
            for (d, &a) in inc.iter_mut().zip(&self.inc1) {
                *d = w * a;
            }
        } else {
            let w = ((h - self.h1) / self.h2).min(1.0);
            for i in 0..self.n {
                inc[i] = self.inc1[i] + w * (self.inc2[i] - self.inc1[i]);
            }
        }
        Ok(())
    }
    fn commit<S: OdeSystem>(&mut self, _sys: &mut S, _t_new: f64, _y_new: &[f64]) {}
    /// `n` states; state_min, state_max, inc1, inc2 of n finite values with min ≤ max; rtol,
    /// atol finite ≥ 0; 0 < h_min ≤ h ≤ h_max, all finite; h1, h2 finite ≥ 0; counters below
    /// 2^53.
    fn validate_state(&self, n: usize) -> Result<(), String> {
        use super::{all_finite, check_len};
        if self.n != n {
            return Err(format!(
                "backward-euler for {} states, the model has {n}",
                self.n
            ));
        }
        for (what, v) in [
            ("backward-euler state_min", &self.state_min),
            ("backward-euler state_max", &self.state_max),
            ("backward-euler inc1", &self.inc1),
            ("backward-euler inc2", &self.inc2),
        ] {
            check_len(what, v, n)?;
            all_finite(what, v)?;
        }
        if self
            .state_min
            .iter()
            .zip(&self.state_max)
            .any(|(a, b)| a > b)
        {
            return Err("backward-euler state range has min > max".into());
        }
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        if !nonneg(self.rtol) || !nonneg(self.atol) {
            return Err(format!(
                "backward-euler rtol {:?}, atol {:?}",
                self.rtol, self.atol
            ));
        }
        let (h_min, h, h_max) = (self.h_min, self.h, self.h_max);
        // h may be below h_min after Newton failures there (see the module documentation).
        if !(h_min.is_finite() && h_max.is_finite() && h_min > 0.0 && h > 0.0 && h <= h_max) {
            return Err(format!(
                "backward-euler steps h_min {h_min:?}, h {h:?}, h_max {h_max:?} \
                 (0 < h_min, 0 < h ≤ h_max)"
            ));
        }
        if !nonneg(self.h1) || !nonneg(self.h2) {
            return Err(format!(
                "backward-euler last pair {:?}, {:?}",
                self.h1, self.h2
            ));
        }
        if [self.steps, self.rejected, self.newton_iterations]
            .iter()
            .any(|&c| c >= super::MAX_RESTORED_COUNT)
        {
            return Err("backward-euler counters out of range".into());
        }
        Ok(())
    }
}
