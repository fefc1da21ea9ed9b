//! The Newton matrix M = I − γJ: when the Jacobian is evaluated again and when M is factored
//! again (CVODE's `cvLsSetup` policy), the Jacobian's evaluation by column groups (exact or
//! finite differences), and the factorizations and solves through the linear solver.

use super::Bdf;
use super::step::{ConvFail, DGMAX, MSBJ, Step, wrms};
use crate::integrators::JacobianSource;
use crate::integrators::linsolve::fill_ratio;
use crate::integrators::newton::jacobian_by_groups;
use crate::ode::OdeSystem;
use crate::sparsity::newton_groups;

impl<S: OdeSystem> Step<'_, S> {
    /// CVODE's dense linear solver setup: decide whether J is re-evaluated, then factor
    /// M = I − γJ. Returns whether J is fresh, or None when M is singular or f failed.
    pub(super) fn setup(&mut self, convfail: ConvFail) -> Option<bool> {
        let s = &*self.s;
        let dgamma = (s.gamma / s.gammap - 1.0).abs();
        let jbad = s.nst == 0
            || s.early_step_of_restart()
            || self.ws.force_jac
            || self.ws.new_jacobian
            || s.nst > s.nstlj + MSBJ
            || (convfail == ConvFail::FailBadJ && dgamma < DGMAX)
            || convfail == ConvFail::FailOther;
        if jbad {
            if !self.jacobian() {
                return None;
            }
            self.s.nstlj = self.s.nst;
            self.ws.force_jac = false;
            self.ws.new_jacobian = false;
        }
        if !self.factor(self.s.gamma) {
            return None;
        }
        Some(jbad)
    }

    /// Newton Jacobian at (tn, z_0) (the prediction, where `nls` evaluated f) with f =
    /// ws.ftemp, column groups at once: exact (`jvp`) or forward differences.
    fn jacobian(&mut self) -> bool {
        let n = self.n;
        self.stats.jacobian_evaluations += 1;
        let tn = self.s.tn;
        let srur = f64::EPSILON.sqrt();
        let fnorm = wrms(&self.ws.ftemp, &self.ws.ewt, self.ws.n_err);
        let min_inc = if fnorm != 0.0 {
            1000.0 * self.s.h.abs() * f64::EPSILON * n as f64 * fnorm
        } else {
            1.0
        };
        // A new number before any column changes, so that a half-written J (f not finite) is
        // never taken for the one it overwrote (see `History::assign`).
        self.s.jac_count += 1;
        let (pattern, coloring) = self.ws.groups.take().expect("workspace prepared");
        let (sys, ws, stats) = (&mut *self.sys, &mut *self.ws, &mut *self.stats);
        let s = &mut *self.s;
        let (y, ewt) = (&s.zn[..n], &ws.ewt);
        // CVODE's increment σ_j = max(√ε·|y_j|, σ_min/w_j) (`cvLsDQJac`).
        let increment = |j: usize| {
            let w = ewt[j];
            // A quadrature's weight is 0: its column is empty, any finite increment does.
            let floor = if w > 0.0 {
                min_inc / w
            } else {
                min_inc * (y[j].abs() + 1.0)
            };
            (srur * y[j].abs()).max(floor)
        };
        let ok = jacobian_by_groups(
            sys,
            tn,
            y,
            &ws.ftemp,
            (&pattern, &coloring),
            &ws.jpos,
            self.tol.jacobian == JacobianSource::Exact,
            increment,
            (&mut ws.ypert, &mut ws.fpert, &mut ws.fjvp),
            &mut s.jac,
            &mut stats.jacobian_rhs_evaluations,
        );
        ws.groups = Some((pattern, coloring));
        ok
    }

    /// Factor M = I − γJ through the linear solver (`Linsolve::factor`). False when M is
    /// singular.
    pub(super) fn factor(&mut self, gamma: f64) -> bool {
        self.stats.factorizations += 1;
        let ws = &mut *self.ws;
        let ok = ws
            .linsolve
            .factor(ws.m_pattern.as_ref(), &self.s.jac, gamma);
        ws.lu_tag = ok.then_some((self.s.jac_count, gamma.to_bits()));
        ok
    }

    /// Make sure the factors are those of the saved J and γ_M (after a restore or a refused
    /// attempt they may not be).
    pub(super) fn factor_current(&mut self) -> bool {
        let tag = (self.s.jac_count, self.s.gammap.to_bits());
        if self.ws.lu_tag == Some(tag) {
            return true;
        }
        self.factor(self.s.gammap)
    }

    /// Solve M x = tempv in place (`Linsolve::solve`). False when GMRES did not reach its
    /// tolerance (direct solves always return true; their failures show as non-finite values).
    /// Inlined into `newton`'s variants: a call per solve is a visible share on small systems.
    #[inline(always)]
    pub(super) fn solve(&mut self) -> bool {
        let n = self.n;
        let (ws, s) = (&mut *self.ws, &*self.s);
        let b = &mut ws.tempv[..n];
        ws.linsolve
            .solve::<S>(b, &ws.ewt, ws.n_err, s.tq[4], s.gamma, &s.jac)
    }

    /// The direct solve of the fused Newton iteration (`Workspace::fused`): the coupled block's
    /// right-hand side is already in `Peel::b` (and its solution stays there), the last states'
    /// in tempv.
    #[inline(always)]
    pub(super) fn solve_fused(&mut self) {
        let ws = &mut *self.ws;
        ws.linsolve.solve_fused(&mut ws.tempv);
    }
}

impl Bdf {
    /// An upper bound on the spectral radius of the saved Jacobian: the smaller of Gershgorin's
    /// row and column bounds of W·J·W⁻¹, W = diag(1/(rtol·|y_i| + atol)) (a similarity, so the
    /// eigenvalues are J's; the scaling makes the bound independent of the states' units),
    /// over the states other than the system's quadratures: their columns of J are empty, so
    /// J is block-triangular and its eigenvalues are those of the other block and zeros. (Their
    /// rows would count, weighted by 1/(rtol·|q| + atol) of accumulators that start at 0.)
    /// `None` before the first Jacobian.
    pub(crate) fn jacobian_radius_bound(&mut self) -> Option<f64> {
        let n = self.n;
        let ws = &mut *self.ws;
        let p = ws.m_pattern.as_ref()?;
        if self.hist.jac_count == 0
            || self.hist.jac.len() != p.nonzeros()
            || self.hist.zn.len() < n
            || ws.rowsum.len() != n
        {
            return None;
        }
        let (rtol, atol) = (self.tolerances.rtol, self.tolerances.atol);
        let zn = &self.hist.zn;
        if ws.weight_mask.len() != n {
            return None;
        }
        let quad = |i: usize| ws.quad.iter().any(|r| r.contains(&i));
        let w = |i: usize| 1.0 / (rtol * zn[i].abs() + atol);
        let mut col_max = 0.0f64;
        ws.rowsum.fill(0.0);
        // Column sums directly, row sums accumulated (J is stored by columns).
        for j in (0..n).filter(|&j| !quad(j)) {
            let wj = w(j);
            let range = p.col_start[j]..p.col_start[j + 1];
            let mut s = 0.0;
            for (&i, a) in p.rows[range.clone()].iter().zip(&self.hist.jac[range]) {
                if quad(i) {
                    continue;
                }
                s += a.abs() * w(i);
                ws.rowsum[i] += a.abs() / wj;
            }
            col_max = col_max.max(s / wj);
        }
        let row_max = (0..n).fold(0.0f64, |m, i| m.max(ws.rowsum[i] * w(i)));
        let r = col_max.min(row_max);
        r.is_finite().then_some(r)
    }

    /// Number of values of the saved Jacobian for `sys`: the entries of the pattern of
    /// M = I − γJ (`newton_groups` of the system's pattern, with the diagonal), n² without one.
    pub fn jacobian_len<S: OdeSystem>(sys: &S) -> usize {
        let n = sys.dimension();
        match sys.sparsity().filter(|p| p.n == n) {
            Some(p) => newton_groups(p).0.with_diagonal().0.nonzeros(),
            None => n * n,
        }
    }

    /// [`fill_ratio`] of the pattern of M for `sys` (`None` without a pattern); a diagnostic.
    pub fn fill_ratio_of<S: OdeSystem>(sys: &S) -> Option<f64> {
        let n = sys.dimension();
        let p = sys.sparsity().filter(|p| p.n == n)?;
        fill_ratio(&newton_groups(p).0.with_diagonal().0)
    }

    /// The committed history's saved Jacobian (tests that corrupt a state).
    #[cfg(test)]
    pub(crate) fn saved_jacobian_mut(&mut self) -> &mut Vec<f64> {
        self.ws.trial_synced = false;
        &mut self.hist.jac
    }

    /// Lengths of the committed and the working history's saved Jacobian (0: none yet).
    pub fn saved_jacobian_lens(&self) -> [usize; 2] {
        [self.hist.jac.len(), self.trial.jac.len()]
    }

    /// Number of column groups of the finite-difference Jacobian and the number of columns.
    pub fn jacobian_groups<S: OdeSystem>(&mut self, sys: &S) -> (usize, usize) {
        // The groups are set up even when the factors' storage is refused.
        let _ = self.prepare(sys);
        let (_, c) = self.ws.groups.as_ref().unwrap();
        (c.n_colors(), self.n)
    }
}
