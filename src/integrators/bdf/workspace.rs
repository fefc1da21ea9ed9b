//! The BDF's scratch, rebuilt once per solve (and after a restore or a change of the linear
//! solver): vectors, the Jacobian's pattern and column groups, the linear solver chosen for the
//! pattern, and the states the vector passes skip. Nothing here is serialized.

use super::newton_passes::Live;
use super::{Bdf, MAX_ORDER};
use crate::integrators::linsolve::krylov::KrylovSolver;
use crate::integrators::linsolve::{LinearSolver, Linsolve};
use crate::integrators::newton::constant_rows;
use crate::integrators::rk4::Rk4;
use crate::integrators::{SolverError, ensure_len};
use crate::ode::OdeSystem;
use crate::sparsity::{Coloring, Pattern, newton_groups};

/// Scratch: vectors, the LU workspace and the column groups. Never serialized; a clone starts
/// with an empty one (sized again on its first step).
#[derive(Default)]
pub(super) struct Workspace {
    pub(super) n: usize,
    /// The step being attempted is an RK4 start step.
    pub(super) starter: bool,
    pub(super) inc: Vec<f64>,
    /// Error weights 1/(rtol·|y_i| + atol); 0 for the quadratures (`quad`).
    pub(super) ewt: Vec<f64>,
    /// The system's quadratures (`OdeSystem::quadratures`: the network's accumulators)
    /// whatever the path: `jacobian_radius_bound` leaves them out.
    pub(super) quad: [std::ops::Range<usize>; 2],
    /// The adaptive method keeps `quad` out of the error norms (`set_weights`).
    pub(super) quad_out: bool,
    /// Per state, the bits that `set_weights` keeps of its weight: none for the quadratures
    /// when `quad_out` (weight +0), all for the others (a select without a branch, which the
    /// compiler vectorizes two states at a time).
    pub(super) weight_mask: Vec<u64>,
    /// Number of the states in the norms (≥ 1, as a float): the divisor of the weighted RMS
    /// norms.
    pub(super) n_err: f64,
    pub(super) acor: Vec<f64>,
    pub(super) y: Vec<f64>,
    pub(super) ftemp: Vec<f64>,
    pub(super) tempv: Vec<f64>,
    pub(super) fpert: Vec<f64>,
    pub(super) ypert: Vec<f64>,
    /// f(t, y) as the system's `jvp` returns it beside J·v (unused: `ftemp` has it already).
    pub(super) fjvp: Vec<f64>,
    /// (Jacobian id, γ bits) of the factored M = I − γJ.
    pub(super) lu_tag: Option<(u64, u64)>,
    pub(super) groups: Option<(Pattern, Coloring)>,
    /// Pattern of M (the system's with the diagonal): where J's values are stored.
    pub(super) m_pattern: Option<Pattern>,
    /// For each entry of the system's pattern its position in `m_pattern`.
    pub(super) jpos: Vec<usize>,
    /// The solver of the Newton systems chosen for the pattern: the states solved outside the
    /// LU (`Peel`) and the LU of the others, or GMRES.
    pub(super) linsolve: Linsolve,
    /// Scratch of n for the row sums of `jacobian_radius_bound`.
    pub(super) rowsum: Vec<f64>,
    /// The restored Jacobian did not fit the pattern: evaluate a new one at the next setup.
    pub(super) force_jac: bool,
    /// A switch of a law was passed over (`Bdf::crossed_switch`): set up M with a new J at
    /// the next step. The J kept from the other side of a kink is the one `History::
    /// early_step_of_restart` describes: modified Newton with it passes its test on the size
    /// of corrections it damps, with the residual large, and the state drifts (two relief
    /// valves in series: 1.5 kPa below a closing pressure in 1.3 s).
    pub(super) new_jacobian: bool,
    /// The system's constant states that the direct solve leaves out (`Peel::constant`, or the
    /// small LU's selection), and
    /// whether the committed history is to be checked against them before the next attempt (a
    /// new workspace, a restored state, a fixed-order start: `check_constant_states`).
    pub(super) constant: Vec<usize>,
    pub(super) check_const: bool,
    /// The states the predictor and the corrector run over when some are left out
    /// (`constant`), increasing; `None`: all n. The constant states' higher Nordsieck
    /// columns, corrections and increments stay exactly 0: skipped, the same bits.
    pub(super) live: Option<Live>,
    /// The Newton iteration runs fused with `Peel` (`newton_passes::<FUSED>`): the coupled
    /// states are exactly `live`'s groups (`Peel::groups`), there are no first states, and the
    /// other live states (`Live::rest`) are `Peel`'s last states. The residual of the coupled
    /// states is then written straight into the LU's right-hand side (`Peel::b`) and the update
    /// reads their solution there: no gather and no scatter per solve.
    pub(super) fused: bool,
    /// The working history equals the committed one (set by `commit`'s copy, cleared by
    /// anything that changes either alone): the next attempt need not copy it again.
    pub(super) trial_synced: bool,
    pub(super) rk4: Rk4,
}

impl Clone for Workspace {
    fn clone(&self) -> Self {
        Workspace::default()
    }
}

impl PartialEq for Workspace {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Workspace")
    }
}

impl Bdf {
    /// Size the workspace for `sys` (once; again after `set_linear_solver`). Fails, before
    /// allocating the factors, when the band or dense LU would store more than
    /// `MAX_FACTOR_VALUES` values; the column groups are set up even then.
    // Inlined: every attempt asks, and only the first of a solve does the work.
    #[inline(always)]
    pub(super) fn prepare<S: OdeSystem>(&mut self, sys: &S) -> Result<(), SolverError> {
        if self.ws.n == self.n && self.ws.m_pattern.is_some() {
            return Ok(());
        }
        self.prepare_workspace(sys)
    }

    /// `prepare`'s work: once per solve (and after a restore or a change of the linear solver).
    #[cold]
    #[inline(never)]
    fn prepare_workspace<S: OdeSystem>(&mut self, sys: &S) -> Result<(), SolverError> {
        let n = self.n;
        let ws = &mut self.ws;
        ws.n = n;
        for v in [
            &mut ws.inc,
            &mut ws.ewt,
            &mut ws.acor,
            &mut ws.y,
            &mut ws.ftemp,
            &mut ws.tempv,
            &mut ws.fpert,
            &mut ws.ypert,
            &mut ws.fjvp,
            &mut ws.rowsum,
        ] {
            ensure_len(v, n);
        }
        ws.lu_tag = None;
        let pattern = sys
            .sparsity()
            .filter(|p| p.n == n)
            .unwrap_or_else(|| Pattern::dense(n));
        // The system's constant states (GMRES keeps every state), taken only where J's own
        // pattern (diagonal included, before quadrature rows are dropped) has an empty row: a
        // state declared constant whose f_i depends on anything is stepped as any other.
        let mut constant = if !self.const_refused && self.linear != LinearSolver::Krylov {
            constant_rows(sys, &pattern)
        } else {
            vec![false; n]
        };
        // Quadrature rows (the accumulators) left out when they would multiply the groups.
        let (pattern, coloring) = newton_groups(pattern);
        let (m_pattern, jpos) = pattern.with_diagonal();
        ws.groups = Some((pattern, coloring));
        ws.jpos = jpos;
        let nnz = m_pattern.nonzeros();
        // The quadratures the system names, out of the adaptive method's norms (not in the
        // fixed-order variants). The Krylov path solves them outside GMRES.
        ws.quad = sys.quadratures();
        ws.quad_out = self.fixed.is_none();
        let quad = |j: usize| ws.quad.iter().any(|r| r.contains(&j));
        ws.weight_mask.clear();
        ws.weight_mask
            .extend((0..n).map(|j| if quad(j) && ws.quad_out { 0 } else { u64::MAX }));
        let in_norms = ws.weight_mask.iter().filter(|&&m| m != 0).count();
        ws.n_err = in_norms.max(1) as f64;
        let quad_out: &[std::ops::Range<usize>] = if ws.quad_out { &ws.quad } else { &[] };
        let krylov = || {
            let invariants = sys.linear_invariants();
            KrylovSolver::new(&m_pattern, self.gmres_limits, invariants, quad_out)
        };
        let linear = self.linear;
        let (linsolve, left_out) =
            Linsolve::select(linear, &m_pattern, &constant, S::BLOCKS, Some(krylov))?;
        ws.linsolve = linsolve;
        ws.constant = left_out;
        ws.live = None;
        let peel = ws.linsolve.peel.as_deref();
        if !ws.constant.is_empty() {
            constant.fill(false);
            for &i in &ws.constant {
                constant[i] = true;
            }
            let live = Live::of(&constant, S::BLOCKS);
            // The small LU's selection (no `Peel`): the passes over the live states only when
            // they take fewer operations (pairs and singles) than the full ones' pairs.
            let fewer = live.pairs.len() + live.singles.len() < n.div_ceil(2);
            if peel.is_some() || fewer {
                ws.live = Some(live);
            }
        }
        ws.fused = match (peel, ws.live.as_ref()) {
            (Some(peel), Some(live)) => {
                live.groups > 0
                    && peel.groups == live.groups
                    && peel.first.is_empty()
                    && live.rest.iter().eq(peel.last.iter().map(|s| &s.state))
            }
            _ => false,
        };
        ws.check_const = true;
        ws.m_pattern = Some(m_pattern);
        // J's storage follows the pattern; a restored one of another length is not this
        // system's: a new one is evaluated at the next setup (`validate_state` rejects it
        // unless it is empty, i.e. saved before the first step).
        ws.force_jac = false;
        if self.hist.jac.len() != nnz {
            ws.force_jac = self.hist.jac_count > 0;
            self.hist.jac.clear();
            self.hist.jac.resize(nnz, 0.0);
        }
        self.trial.assign(&self.hist);
        // The RK4 start steps are the fixed-order variants' (bdf2..bdf5) only.
        if self.fixed.is_some_and(|k| k > 1) {
            ws.rk4 = Rk4::new(n);
            ws.rk4.ensure(n);
        }
        Ok(())
    }
}

impl Bdf {
    /// Before stepping with a new workspace, from a restored state or after a fixed-order
    /// start: the solve leaves the constant states out (their right-hand side is then their
    /// correction as is), which is exact while their higher Nordsieck columns are 0, as every
    /// step keeps them (and the start's polynomial through equal values). A committed history
    /// where they are not (restored from elsewhere) is stepped with them in the solve from then
    /// on, as without the declaration: false, and the workspace is dropped (`prepare` builds it
    /// again).
    #[cold]
    pub(super) fn check_constant_states(&mut self) -> bool {
        let n = self.n;
        self.ws.check_const = false;
        let zn = &self.hist.zn;
        let ok = zn.len() == (MAX_ORDER + 1) * n
            && self
                .ws
                .constant
                .iter()
                .all(|&i| (1..=MAX_ORDER).all(|j| zn[j * n + i] == 0.0));
        if !ok {
            self.const_refused = true;
            *self.ws = Workspace::default();
            return false;
        }
        // The predictor does not write their increments; the last step's is not read once an
        // attempt starts (and becomes the next one's scratch).
        for &i in &self.ws.constant {
            self.ws.inc[i] = 0.0;
            if let Some(v) = self.last.inc.get_mut(i) {
                *v = 0.0;
            }
        }
        // Their zeros as +0 in both copies (the start's Vandermonde solve leaves −0, which the
        // full corrector turned into +0 on the next step): a saved state keeps its bytes.
        for h in [&mut *self.hist, &mut *self.trial] {
            if h.zn.len() == (MAX_ORDER + 1) * n {
                for &i in &self.ws.constant {
                    for j in 1..=MAX_ORDER {
                        h.zn[j * n + i] = 0.0;
                    }
                }
            }
        }
        true
    }
}
