//! Backward differentiation formulas of order 1–5 in Nordsieck form, as CVODE/CVODES integrate
//! Cantera's reactor networks (Byrne & Hindmarsh, ACM TOMS 1 (1975); Hindmarsh et al.,
//! "SUNDIALS", ACM TOMS 31 (2005); the CVODE user guide, "Mathematical considerations").
//!
//! The history is the Nordsieck array z_j = h^j·y^(j)(t_n)/j!, j = 0..q, of the interpolating
//! polynomial, in the fixed-leading-coefficient form: a step predicts z by the Pascal triangle,
//! then solves for the correction Δ in  Δ − γ·f(t_{n+1}, z_0 + Δ) + z_1/ℓ_1 = 0,  γ = h/ℓ_1,
//! by a modified Newton iteration with M = I − γJ, and updates z_j += ℓ_j·Δ. The ℓ_j and the
//! error constants come from the step history (τ) exactly as CVODE's `cvSetBDF`/`cvSetTqBDF`, so
//! variable steps keep the order. Everything CVODE decides is decided here by its rules and
//! constants:
//! - Newton: at most 3 iterations, convergence rate estimate with CRDOWN = 0.3, divergence when
//!   a correction grows by RDIV = 2, test ‖Δ‖·min(1, rate) ≤ 0.1/tq₂ in the weighted RMS norm
//!   with weights 1/(rtol·|y_i| + atol).
//! - Pure quadratures — the states the system names in `OdeSystem::quadratures`, on which no
//!   derivative depends (the network's mass and energy accumulators and its walls' swept
//!   volumes) — are kept out of every
//!   norm of the adaptive method with a direct linear solver (weight 0, the RMS over the other
//!   states; the Krylov path keeps them; `jacobian_radius_bound` leaves them out), as CVODES keeps quadrature
//!   variables out of its error test by default (`errconQ = SUNFALSE`, cvodes.c; CVODES guide,
//!   `CVodeSetQuadErrCon`). They never feed back, so their error cannot move the other states;
//!   an accumulator (or a wall's swept volume) starts at 0, and with atol ≪ its scale its
//!   weight 1/(rtol·|y| + atol) would be huge early in a run and hold the steps small. Their
//!   value at a step is still the BDF formula's.
//! - Constant states — those the system names in `OdeSystem::constant_states` (f_i ≡ 0: the
//!   network's fixed chamber volumes and closed chambers' masses) whose row of J's pattern is
//!   empty — stay out of the direct solve (`Peel`) and out of the predictor and corrector
//!   (`Live`) whenever the direct solve is peeled (not on the Krylov path): their corrections
//!   and higher Nordsieck columns are exactly 0, so the results are the same bits as without
//!   the declaration. On small systems where the split would not halve the LU, the small LU
//!   leaves them out through a selection (`SmallSel`; their columns drop out, x being 0: the
//!   same results to round-off), and the passes skip them where that saves operations.
//! - On small systems without that split, trailing states with an empty column (quadratures)
//!   are solved from their rows after a smaller LU of the leading ones (`SmallLu::tail`).
//! - Iteration matrix M = I − γJ rebuilt and factored (LU with partial pivoting: as a band
//!   matrix below `SPARSE_MIN_STATES` states and for narrow bands (chains), else `faer`'s sparse
//!   LU over the pattern of M with the column order and symbolic analysis computed once, or
//!   `faer`'s dense LU; preallocated workspaces) on the first
//!   step and the second and third after a restart (below), every 20 steps (MSBP), when γ
//!   changed by more than 30 % (DGMAX), and after any failure; the Jacobian itself is
//!   re-evaluated on the first step, on the second and third after a restart (an event's
//!   restart stands on a law's switch within round-off, where J may have the branch the state
//!   leaves: `History::early_step_of_restart`), every 50 steps (MSBJ),
//!   after a Newton convergence failure with a Jacobian that was not fresh, and after a
//!   failure of the Newton iteration of any other cause; otherwise the saved J is reused with
//!   the new γ (and the correction is scaled by 2/(1 + γ/γ_M) when γ drifted).
//! - Local error test ‖Δ‖·tq₂ ≤ 1; on failure the step shrinks by 1/((6·dsm)^(1/(q+1)) + 1e-6)
//!   (at least 0.1, at most 0.2 after two failures), after three failures the order drops, at
//!   order 1 the history is reloaded; after Newton failures the step is quartered.
//! - Order and step selection after a success: the ratios η for orders q−1, q, q+1 from the
//!   error estimates (biases 6, 6, 10), the largest wins, an order change is considered only
//!   after q+1 steps at the same order, a change below 1.5× is not made, growth is at most
//!   10⁴ on the first step and 10 afterwards, and no growth right after a failure.
//!
//! Jacobian: stored as its values over the system's sparsity pattern with the diagonal added
//! (compressed sparse columns; the dense pattern when the system gives none). Exact columns
//! (`OdeSystem::jvp`) or finite differences, CVODE's increments σ_j = max(√ε·|y_j|, σ_min/w_j),
//! with the columns that the system's sparsity pattern (`OdeSystem::sparsity`, see
//! `crate::sparsity`) shows to be structurally orthogonal perturbed together (one right-hand
//! side per colour).
//!
//! Fixed-order, fixed-step variants `bdf1`..`bdf5` (for order-of-accuracy tests) take the
//! driver's step with order k throughout: no error test and no order or step selection. Their
//! start: `bdf1` starts from z = (y₀, h·f(y₀)) as CVODE does; `bdf2`..`bdf5` take k classical
//! RK4 steps (local error O(h⁵), below the O(h^k) global error of BDF-k, k ≤ 5, in any fixed
//! number) and build the Nordsieck array of the degree-k polynomial through those k + 1 points,
//! after which every step is exactly the classical BDF-k formula (on a uniform grid). Their
//! Newton iteration is converged to 1e-13 relative (up to 8 iterations) so that only the
//! truncation error of the formula is measured.
//!
//! Dense output inside the last step evaluates the Nordsieck polynomial (CVODE's `CVodeGetDky`
//! with k = 0); during an RK4 start step it recomputes a shorter RK4 step. The committed
//! history, the saved Jacobian and every counter are serde data; the LU factors are not: they
//! are recomputed from the saved J and γ when needed (same inputs, same bits), so a restored
//! integrator continues bit for bit. The working copy of a step is separate from the committed
//! history, so an attempt that the driver refuses changes nothing.
//!
//! Files: `step` (the step: predict, Newton, error test, order and step choice), `coefficients`
//! (ℓ_j, the error constants, order changes), `jacobian` (J and when to evaluate it and factor
//! M), `start` (the fixed-order variants), `history` (the serialized state), `workspace` (the
//! scratch and its set-up once per solve), and the vector kernels of the predictor and
//! corrector (`nordsieck`) and of the Newton iteration (`newton_passes`). The linear solvers
//! are `super::linsolve`'s.

mod coefficients;
mod history;
mod jacobian;
#[cfg(test)]
mod kernel_tests;
pub(crate) mod newton_passes;
mod nordsieck;
mod start;
mod step;
#[cfg(test)]
mod tests;
mod workspace;

use serde::{Deserialize, Serialize};

use super::linsolve::Solver;
use super::linsolve::krylov::{GmresLimits, KrylovStats};
use super::{Integrator, SolverError, StepControl, check_finite};
use crate::ode::OdeSystem;
use crate::sparsity::Pattern;
use history::{History, LastStep, check_history};
use nordsieck::dense_sum;
use step::Step;
use workspace::Workspace;

pub use super::linsolve::{
    BAND_MAX, BAND_RCM_MAX_STATES, KRYLOV_MIN_FILL, KRYLOV_MIN_STATES, LinearSolver,
    MAX_FACTOR_VALUES, SPARSE_MIN_STATES, fill_ratio,
};
pub use history::{Stats, Tolerances};

pub const MAX_ORDER: usize = 5;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bdf {
    /// `Some(k)`: fixed order k and the driver's step; `None`: adaptive order and step.
    fixed: Option<usize>,
    n: usize,
    pub tolerances: Tolerances,
    pub stats: Stats,
    hist: Box<History>,
    /// The working copy: after an attempt, the history at its end (kept after `commit`, so
    /// that dense output over the committed step works, also after a restore).
    trial: Box<History>,
    last: LastStep,
    /// Dense or sparse factorization (a setting of this process, not saved).
    #[serde(skip)]
    linear: LinearSolver,
    /// GMRES restart and restarts on the Krylov path (a setting of this process, not saved).
    #[serde(skip)]
    gmres_limits: GmresLimits,
    /// A restored history had a constant state's higher Nordsieck columns nonzero: every
    /// state is stepped (`check_constant_states`).
    #[serde(skip)]
    const_refused: bool,
    /// The driver passed over a switch before the next attempt ([`Integrator::crossed_switch`];
    /// the driver keeps it in its saved state until then).
    #[serde(skip)]
    switch_crossed: bool,
    #[serde(skip)]
    ws: Box<Workspace>,
}

impl Bdf {
    /// Adaptive order 1–5 and step (`bdf`).
    pub fn adaptive(n: usize) -> Self {
        Bdf::build(None, n)
    }

    /// Fixed order `k` with the driver's step (`bdf1`..`bdf5`).
    pub fn fixed(k: usize, n: usize) -> Self {
        assert!((1..=MAX_ORDER).contains(&k), "BDF order 1..5");
        Bdf::build(Some(k), n)
    }

    fn build(fixed: Option<usize>, n: usize) -> Self {
        let mut b = Bdf {
            fixed,
            n,
            tolerances: Tolerances::default(),
            stats: Stats::default(),
            hist: Box::default(),
            trial: Box::default(),
            last: LastStep::default(),
            linear: LinearSolver::Auto,
            gmres_limits: GmresLimits::default(),
            const_refused: false,
            switch_crossed: false,
            ws: Box::default(),
        };
        b.hist.zn = vec![0.0; (MAX_ORDER + 1) * n];
        if let Some(k) = fixed {
            b.hist.start_y = vec![0.0; (k + 1) * n];
        }
        b
    }

    /// Current order (of the committed history).
    pub fn current_order(&self) -> usize {
        self.hist.q
    }

    /// Step size the next attempt will start from.
    pub fn next_step_size(&self) -> f64 {
        self.hist.hprime
    }

    /// Size of the last committed step, s.
    pub(crate) fn step_size(&self) -> f64 {
        self.hist.h
    }

    /// How many Jacobians the committed history has computed (identifies the saved one).
    pub(crate) fn jacobian_count(&self) -> u64 {
        self.hist.jac_count
    }

    /// Force the dense or the sparse factorization (`Auto` chooses by size); drops the
    /// workspace, so the next step prepares it again.
    pub fn set_linear_solver(&mut self, linear: LinearSolver) {
        self.linear = linear;
        *self.ws = Workspace::default();
    }

    /// GMRES's restart length and number of restarts on the Krylov path; drops the workspace.
    pub fn set_gmres_limits(&mut self, limits: GmresLimits) {
        self.gmres_limits = limits;
        *self.ws = Workspace::default();
    }

    /// Whether the Newton systems are solved by GMRES (after the first step or
    /// `jacobian_groups`).
    pub fn uses_krylov(&self) -> bool {
        self.ws.linsolve.is_krylov()
    }

    /// Counters of the GMRES solves since the workspace was prepared (`None` off the Krylov
    /// path). Not saved with the state.
    pub fn krylov_stats(&self) -> Option<KrylovStats> {
        match &self.ws.linsolve.solver {
            Solver::Krylov(k) => Some(k.stats),
            _ => None,
        }
    }

    /// Whether M is factored sparsely (after the first step or `jacobian_groups`).
    pub fn uses_sparse_lu(&self) -> bool {
        matches!(self.ws.linsolve.solver, Solver::Sparse(_))
    }

    /// Whether M is factored as a band matrix (after the first step or `jacobian_groups`).
    pub fn uses_band_lu(&self) -> bool {
        matches!(self.ws.linsolve.solver, Solver::Small(_) | Solver::Band(_))
    }

    /// Whether the band LU factors M in reverse Cuthill–McKee order (not the states' own).
    pub fn uses_reordered_band_lu(&self) -> bool {
        let peel = self.ws.linsolve.peel.as_ref();
        let in_peel = peel.is_some_and(|p| p.reordered);
        match &self.ws.linsolve.solver {
            Solver::Band(lu) => lu.reordered() || in_peel,
            Solver::Small(_) => in_peel,
            _ => false,
        }
    }

    /// `dense` without a Nordsieck step to interpolate: no last step from t (a step of its
    /// own, not kept, then its dense output), or an RK4 start step (a shorter RK4 step). Out
    /// of line: the interpolation, at nearly every output time, then saves fewer registers.
    #[cold]
    #[inline(never)]
    fn dense_other<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        if !self.last.valid || self.last.t != t {
            // Nothing to interpolate (after a restart): a step of its own, not kept.
            self.attempt_inner(sys, t, y, h)?;
            self.last.pending = false;
        }
        if self.last.starter {
            self.prepare(sys)?;
            let k1 = self.ws.rk4.k1_mut();
            sys.rhs(t, y, k1);
            check_finite(t, k1)?;
            return self.ws.rk4.step_with_k1(sys, t, y, h, inc);
        }
        // Now valid from t and not a start step: the interpolation.
        self.dense(sys, t, y, h, inc)
    }

    /// `self = o` without allocating once the histories have their sizes (fmi2SetFMUstate into
    /// a running instance of the same model). The workspace (pattern, symbolic LU, scratch) is
    /// this model's and is kept; only the factored M is dropped, since it belongs to the
    /// history it replaces (it is refactored from the restored J and γ: same bits). The linear
    /// solver choice is this process's setting: kept.
    pub(crate) fn assign(&mut self, o: &Bdf) {
        let Bdf {
            fixed,
            n,
            tolerances,
            stats,
            hist,
            trial,
            last,
            linear: _,
            gmres_limits: _,
            const_refused: _,
            switch_crossed,
            ws,
        } = self;
        *switch_crossed = false;
        *fixed = o.fixed;
        *tolerances = o.tolerances.clone();
        *stats = o.stats;
        hist.assign(&o.hist);
        trial.assign(&o.trial);
        // `History::assign` skips J when the counts agree (one lineage); a restored state is
        // another lineage: copied always.
        hist.jac.clone_from(&o.hist.jac);
        trial.jac.clone_from(&o.trial.jac);
        last.valid = o.last.valid;
        last.pending = o.last.pending;
        last.t = o.last.t;
        last.h = o.last.h;
        last.starter = o.last.starter;
        last.inc.clone_from(&o.last.inc);
        ws.lu_tag = None;
        ws.force_jac = false;
        ws.new_jacobian = false;
        ws.trial_synced = false;
        ws.check_const = true;
        if *n != o.n {
            *n = o.n;
            **ws = Workspace::default();
        } else if let Some(nnz) = ws.m_pattern.as_ref().map(Pattern::nonzeros) {
            // A state saved before the first step has no J yet (`prepare` sizes it).
            for h in [&mut **hist, &mut **trial] {
                if h.jac.len() != nnz {
                    ws.force_jac |= h.jac_count > 0;
                    h.jac.clear();
                    h.jac.resize(nnz, 0.0);
                }
            }
        }
    }
}

impl Bdf {
    fn stepper<'a, S: OdeSystem>(&'a mut self, sys: &'a mut S) -> Step<'a, S> {
        Step {
            sys,
            s: &mut self.trial,
            ws: &mut self.ws,
            stats: &mut self.stats,
            tol: &self.tolerances,
            fixed: self.fixed,
            n: self.n,
        }
    }

    fn attempt_inner<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h_max: f64,
    ) -> Result<f64, SolverError> {
        self.prepare(sys)?;
        let n = self.n;
        self.last.valid = false;
        self.last.pending = false;
        if self.ws.check_const && !self.check_constant_states() {
            self.prepare(sys)?;
        }
        if !self.ws.trial_synced {
            self.trial.assign_live(&self.hist, self.fixed);
        }
        self.ws.trial_synced = false;
        self.ws.new_jacobian |= std::mem::take(&mut self.switch_crossed);
        let fixed = self.fixed;
        let h_cap = match self.tolerances.max_step {
            Some(m) if fixed.is_none() => h_max.min(m),
            _ => h_max,
        };
        let mut st = self.stepper(sys);
        let fresh = !st.s.started || st.s.tn != t;
        let h = match fixed {
            None => {
                if fresh {
                    st.initialize(t, y, h_cap)?;
                } else {
                    st.s.zn[..n].copy_from_slice(y);
                }
                st.ws.starter = false;
                st.step_adaptive(t, h_cap)?
            }
            Some(1) => {
                if fresh {
                    st.initialize(t, y, h_cap)?;
                } else {
                    st.s.zn[..n].copy_from_slice(y);
                }
                st.ws.starter = false;
                st.step_fixed(t, h_cap)?
            }
            Some(k) => {
                if fresh {
                    st.s.started = true;
                    st.s.tn = t;
                    st.s.start_len = 0;
                }
                if st.s.start_len == 0 {
                    st.s.start_t[0] = t;
                    st.s.start_y[..n].copy_from_slice(y);
                    st.s.start_len = 1;
                }
                if st.s.start_len <= k {
                    // RK4 start step.
                    st.ws.starter = true;
                    st.start_step(t, y, h_cap)?;
                    st.s.tn = t + h_cap;
                    h_cap
                } else {
                    st.ws.starter = false;
                    st.s.zn[..n].copy_from_slice(y);
                    st.step_fixed(t, h_cap)?
                }
            }
        };
        self.last.valid = true;
        self.last.pending = true;
        self.last.t = t;
        self.last.h = h;
        self.last.starter = self.ws.starter;
        // A swap, not a copy: every attempt writes `ws.inc` before reading it (the predictor,
        // or the start step's zeroing), so its old contents are scratch — except at the
        // constant states, which the predictor over the live states leaves alone: there both
        // buffers hold 0 (`check_constant_states` zeroes them in each).
        if self.last.inc.len() == self.ws.inc.len() {
            std::mem::swap(&mut self.last.inc, &mut self.ws.inc);
        } else {
            self.last.inc.clone_from(&self.ws.inc);
        }
        Ok(h)
    }
}

impl Integrator for Bdf {
    fn name(&self) -> &'static str {
        match self.fixed {
            None => "bdf",
            Some(k) => ["bdf1", "bdf2", "bdf3", "bdf4", "bdf5"][k - 1],
        }
    }
    fn order(&self) -> usize {
        self.fixed.unwrap_or(MAX_ORDER)
    }
    fn fixed_step(&self) -> bool {
        self.fixed.is_some()
    }
    fn configure(&mut self, control: &StepControl) {
        self.tolerances = Tolerances::from(control);
    }
    /// Trial steps rejected so far: failed error tests and failed Newton iterations (CVODE's
    /// netf + ncfn), each followed by a retry with a smaller step.
    fn rejected_steps(&self) -> u64 {
        self.stats.error_test_failures + self.stats.convergence_failures
    }
    fn crossed_switch(&mut self) {
        self.switch_crossed = true;
    }
    fn restart(&mut self) {
        self.ws.trial_synced = false;
        self.hist.started = false;
        self.last.valid = false;
        self.last.pending = false;
    }
    fn attempt<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<f64, SolverError> {
        let taken = self.attempt_inner(sys, t, y, h)?;
        inc.copy_from_slice(&self.last.inc);
        Ok(taken)
    }
    fn dense<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        if !self.last.valid || self.last.t != t || self.last.starter {
            return self.dense_other(sys, t, y, h, inc);
        }
        let n = self.n;
        if h == self.last.h {
            inc.copy_from_slice(&self.last.inc);
            return Ok(());
        }
        // p(t_n+1 + s·h) = Σ z_j s^j with z_0 = y + inc: the increment is inc + Σ_{j≥1} z_j s^j.
        let s = &self.trial;
        let sigma = (h - self.last.h) / s.h;
        let (z, last) = (&s.zn[n..], &self.last.inc);
        match s.q {
            1 => dense_sum::<1>(z, sigma, last, inc, n),
            2 => dense_sum::<2>(z, sigma, last, inc, n),
            3 => dense_sum::<3>(z, sigma, last, inc, n),
            4 => dense_sum::<4>(z, sigma, last, inc, n),
            5 => dense_sum::<5>(z, sigma, last, inc, n),
            q => unreachable!("BDF order {q}"),
        }
        Ok(())
    }
    // Inlined (see `History::assign_live`); `dense` is not, so that the default method's
    // dispatch stays small.
    #[inline(always)]
    fn commit<S: OdeSystem>(&mut self, sys: &mut S, t_new: f64, y_new: &[f64]) {
        let n = self.n;
        self.ws.trial_synced = false;
        if !self.last.pending {
            self.hist.started = false;
            return;
        }
        self.last.pending = false;
        let end = self.last.t + self.last.h;
        let tol = 8.0 * f64::EPSILON * end.abs().max(self.last.h.abs());
        if (t_new - end).abs() > tol {
            // Accepted inside the step (an event): start afresh from there.
            self.hist.started = false;
            return;
        }
        if self.last.starter {
            let s = &mut self.trial;
            let i = s.start_len;
            s.start_t[i] = t_new;
            s.start_y[i * n..(i + 1) * n].copy_from_slice(y_new);
            s.start_len += 1;
            s.tn = t_new;
            if s.start_len == self.fixed.unwrap_or(0) + 1 {
                // Enough points: the Nordsieck array of BDF-k.
                let mut st = Step {
                    sys,
                    s: &mut self.trial,
                    ws: &mut self.ws,
                    stats: &mut self.stats,
                    tol: &self.tolerances,
                    fixed: self.fixed,
                    n,
                };
                st.nordsieck_from_points();
            }
        } else {
            let s = &mut self.trial;
            s.zn[..n].copy_from_slice(y_new);
            s.tn = t_new;
        }
        // Copy (not swap): the trial stays, so `dense` over the committed step keeps working
        // until the next attempt.
        self.hist.assign_live(&self.trial, self.fixed);
        self.ws.trial_synced = true;
    }
    /// See `check_history` for what each of the committed and working histories must satisfy;
    /// besides: `fixed` is None or 1..=5, `n` is the model's, the tolerances are finite (rtol,
    /// atol ≥ 0; max_step, initial_step > 0), the last step's increment has 0 or n finite
    /// values (n when it is valid) with t and h finite, and while a start step is pending
    /// the working history has room for its point (start_len ≤ k).
    fn validate_state(&self, n: usize) -> Result<(), String> {
        use super::{MAX_RESTORED_COUNT, all_finite, check_len};
        let name = match self.fixed {
            None => "bdf".to_string(),
            Some(k) if (1..=MAX_ORDER).contains(&k) => format!("bdf{k}"),
            Some(k) => return Err(format!("BDF fixed order {k} (1..={MAX_ORDER})")),
        };
        if self.n != n {
            return Err(format!("{name} for {} states, the model has {n}", self.n));
        }
        let tol = &self.tolerances;
        let pos = |x: Option<f64>| x.is_none_or(|h| h.is_finite() && h > 0.0);
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        let tolerances_ok =
            nonneg(tol.rtol) && nonneg(tol.atol) && pos(tol.max_step) && pos(tol.initial_step);
        if !tolerances_ok {
            return Err(format!("{name} tolerances {tol:?}"));
        }
        let st = &self.stats;
        if [
            st.steps,
            st.error_test_failures,
            st.convergence_failures,
            st.jacobian_evaluations,
            st.jacobian_rhs_evaluations,
            st.factorizations,
            st.newton_iterations,
        ]
        .iter()
        .chain(&st.steps_at_order)
        .any(|&c| c >= MAX_RESTORED_COUNT)
        {
            return Err(format!("{name} work counters out of range"));
        }
        // Both copies: `dense` reads the working one after a restore, `attempt` the committed.
        check_history(&name, "history", &self.hist, self.fixed, n, true)?;
        check_history(
            &name,
            "working history",
            &self.trial,
            self.fixed,
            n,
            self.last.valid,
        )?;
        let last = &self.last;
        if last.inc.len() != n && (last.valid || !last.inc.is_empty()) {
            check_len(&format!("{name} last increment"), &last.inc, n)?;
        }
        all_finite(&format!("{name} last increment"), &last.inc)?;
        if !last.t.is_finite() || !last.h.is_finite() {
            return Err(format!(
                "{name} last step t = {:?}, h = {:?}",
                last.t, last.h
            ));
        }
        if let Some(k) = self.fixed
            && last.pending
            && last.starter
            && !(1..=k).contains(&self.trial.start_len)
        {
            return Err(format!(
                "{name} start step pending with {} start points (1..={k})",
                self.trial.start_len
            ));
        }
        // What `dense` reads of the last step: the RK4 starter exists only for bdf2..bdf5
        // (`prepare`), and an interpolation in the Nordsieck array needs an order.
        if last.valid && last.starter && self.fixed.is_none_or(|k| k < 2) {
            return Err(format!(
                "{name} last step taken by a starter it does not have"
            ));
        }
        if last.valid && !last.starter && !(1..=MAX_ORDER).contains(&self.trial.q) {
            return Err(format!(
                "{name} last step of order {} (1..={MAX_ORDER})",
                self.trial.q
            ));
        }
        Ok(())
    }
}
