//! The BDF's scratch, rebuilt once per solve (and after a restore or a change of the linear
//! solver): vectors, the Jacobian's pattern and column groups, the linear solver chosen for the
//! pattern, and the states the vector passes skip. Nothing here is serialized.

use faer::dyn_stack::MemBuffer;
use faer::linalg::lu::partial_pivoting::{factor as lu_factor, solve as lu_solve};
use faer::sparse::SymbolicSparseColMatRef;
use faer::sparse::linalg::lu::{LuSymbolicParams, factorize_symbolic_lu};
use faer::{Mat, Par};

use super::newton_passes::Live;
use super::{Bdf, MAX_ORDER};
use crate::integrators::linsolve::band::FillMap;
use crate::integrators::linsolve::krylov::{Gmres, Ilu0, KrylovStats, KrylovWs};
use crate::integrators::linsolve::peel::Peel;
use crate::integrators::linsolve::small::{SMALL_MAX, SMALL_SEL, SmallSel};
use crate::integrators::linsolve::{
    BAND_MAX, BAND_RCM_MAX_STATES, Direct, KRYLOV_MIN_FILL, KRYLOV_MIN_STATES, LinearSolver,
    MAX_FACTOR_VALUES, SPARSE_MIN_STATES, bandwidths, fill_ratio, too_large, warm_sparse_lu,
};
use crate::integrators::rk4::Rk4;
use crate::integrators::{SolverError, ensure_len};
use crate::ode::OdeSystem;
use crate::sparsity::{Coloring, Pattern, bandwidths_under, newton_groups, reverse_cuthill_mckee};

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
    /// Direct paths: the LU of M or of its coupled block, and the states solved outside it
    /// (`Peel`; `None`: the LU is over M).
    pub(super) direct: Direct,
    pub(super) peel: Option<Box<Peel>>,
    /// Krylov path: ILU(0) of M (and J's pattern for M·u), GMRES and its counters.
    pub(super) krylov: Option<Box<KrylovWs>>,
    /// Scratch of n for the row sums of `jacobian_radius_bound`.
    pub(super) rowsum: Vec<f64>,
    /// The restored Jacobian did not fit the pattern: evaluate a new one at the next setup.
    pub(super) force_jac: bool,
    /// The system's constant states that the direct solve leaves out (`Peel::constant`), and
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
        let mut constant = vec![false; n];
        if !self.const_refused && self.linear != LinearSolver::Krylov {
            let declared = sys.constant_states();
            if !declared.is_empty() {
                for i in declared {
                    if let Some(c) = constant.get_mut(i) {
                        *c = true;
                    }
                }
                for &i in &pattern.rows {
                    constant[i] = false;
                }
            }
        }
        // Quadrature rows (the accumulators) left out when they would multiply the groups.
        let (pattern, coloring) = newton_groups(pattern);
        let (m_pattern, jpos) = pattern.with_diagonal();
        ws.groups = Some((pattern, coloring));
        ws.jpos = jpos;
        let nnz = m_pattern.nonzeros();
        // The direct paths factor the coupled states only (`Peel`); GMRES runs over M.
        // Up to `SMALL_MAX` states (the fixed-size LU, unrolled on n) the gathers, scatters and
        // row sweeps around a smaller LU cost about as much as they save: there only the first
        // states are split off, and only when that halves the LU. Without a split, trailing
        // quadratures still leave the LU, in place (`Direct::tail`).
        let small_system = n <= SMALL_MAX;
        let mut peel = match self.linear {
            LinearSolver::Krylov => None,
            _ if small_system => Peel::of(&m_pattern, false, n - n / 2, &constant),
            _ => Peel::of(&m_pattern, true, 1, &constant),
        };
        // The pattern, size and entries of the matrix the LU factors.
        let fp = peel.as_ref().map_or(&m_pattern, |p| &p.pattern);
        let (nf, fnnz) = (fp.n, fp.nonzeros());
        let (kl, ku) = bandwidths(fp);
        // A band in another order: a network numbers its states by component kind (every
        // chamber, then every piston), so a chain with pistons has a wide band in its own order
        // and a narrow one in reverse Cuthill–McKee order. Only for `Auto` from
        // `SPARSE_MIN_STATES` to `BAND_RCM_MAX_STATES` states (above, the sparse LU is faster)
        // when the own order's band is wide: a network whose own order gives a narrow band
        // keeps it.
        ws.direct.band_perm = Vec::new();
        ws.direct.band_pos = Vec::new();
        ws.direct.band_rhs = Vec::new();
        let mut reordered = None;
        if self.linear == LinearSolver::Auto
            && (SPARSE_MIN_STATES..BAND_RCM_MAX_STATES).contains(&nf)
            && kl + ku > BAND_MAX
        {
            let perm = reverse_cuthill_mckee(fp);
            let mut pos = vec![0; nf];
            for (k, &i) in perm.iter().enumerate() {
                pos[i] = k;
            }
            let (pkl, pku) = bandwidths_under(fp, &pos);
            if pkl + pku <= BAND_MAX {
                reordered = Some((pkl, pku));
                if let Some(peel) = peel.as_mut() {
                    // The coupled states taken in the band's order: their gather is the only
                    // one (the same matrix in the same order as through `band_pos`: the
                    // same bits).
                    peel.reorder(&perm, &pos);
                } else {
                    ws.direct.band_perm = perm;
                    ws.direct.band_pos = pos;
                    ws.direct.band_rhs = vec![0.0; nf];
                }
            }
        }
        ws.direct.reordered = reordered.is_some();
        let fp = peel.as_ref().map_or(&m_pattern, |p| &p.pattern);
        ws.direct.diag = (0..nf)
            .map(|j| fp.col_start[j] + fp.column(j).partition_point(|&i| i < j))
            .collect();
        // Krylov when asked for, or for `Auto` on a pattern whose direct LU fills (2-D grids):
        // there GMRES grows linearly with the size, where any elimination order fills
        // superlinearly (George 1973). The band choice
        // comes first (a chain's fill ratio is 1.0 anyway).
        let krylov = match self.linear {
            LinearSolver::Krylov => true,
            LinearSolver::Auto => {
                n >= KRYLOV_MIN_STATES
                    && !(kl + ku <= BAND_MAX || reordered.is_some())
                    && fill_ratio(&m_pattern).is_some_and(|f| f >= KRYLOV_MIN_FILL)
            }
            _ => false,
        };
        // The quadratures the system names, out of the adaptive method's norms (not in the
        // fixed-order variants). The Krylov path solves them outside GMRES (`quad_rows`).
        ws.quad = sys.quadratures();
        ws.quad_out = self.fixed.is_none();
        let quad = |j: usize| ws.quad.iter().any(|r| r.contains(&j));
        ws.weight_mask.clear();
        ws.weight_mask
            .extend((0..n).map(|j| if quad(j) && ws.quad_out { 0 } else { u64::MAX }));
        let in_norms = ws.weight_mask.iter().filter(|&&m| m != 0).count();
        ws.n_err = in_norms.max(1) as f64;
        ws.direct.band = match self.linear {
            // No coupled states: no LU at all.
            _ if nf == 0 => None,
            LinearSolver::Krylov => None,
            LinearSolver::Banded => Some((kl, ku)),
            LinearSolver::Auto if nf < SPARSE_MIN_STATES || kl + ku <= BAND_MAX => Some((kl, ku)),
            LinearSolver::Auto if krylov => None,
            LinearSolver::Auto => reordered,
            _ => None,
        };
        ws.direct.ab = Vec::new();
        ws.direct.fill_map = None;
        ws.direct.ipiv = Vec::new();
        ws.direct.band_counts = Vec::new();
        ws.direct.small = false;
        ws.direct.tail = 0;
        ws.direct.small_kind = 0;
        ws.direct.sel = SmallSel::default();
        // The constant states the small LU leaves out through `Direct::sel`.
        let mut small_constant = Vec::new();
        let forced = matches!(self.linear, LinearSolver::Dense | LinearSolver::Banded);
        if let Some((bkl, bku)) = ws.direct.band {
            // Against all n states (not only the coupled ones): a bound on what is stored.
            let values = (2 * bkl + bku + 1).checked_mul(n);
            // Only a forced choice is refused: `Auto` takes a band only when it is narrow.
            if forced && values.is_none_or(|v| v > MAX_FACTOR_VALUES) {
                ws.direct.band = None;
                return Err(too_large(self.linear, true, n, values));
            }
            // The band's own widths (the reordered ones when reordered).
            ws.direct.small = ws.direct.band_perm.is_empty() && nf <= SMALL_MAX;
            // Without a `Peel`, the trailing states whose column holds only the diagonal
            // (below `Peel`'s halving rule on small systems; at least one state left to the LU).
            if ws.direct.small && peel.is_none() {
                let t = (0..nf).rev().take_while(|&q| fp.column(q) == [q]).count();
                ws.direct.tail = t.min(nf - 1);
                if ws.direct.tail > 0 {
                    // The tail rows' entries outside the pattern are never written: zero
                    // from here on.
                    ws.direct.small_lu = [[0.0; SMALL_MAX]; SMALL_MAX];
                }
                ws.direct.small_kind = nf - ws.direct.tail;
                // The constant states before the tail left out of the LU (`SmallSel`), when
                // any state is left to it: a closed chamber's mass and a fixed volume.
                let head = nf - ws.direct.tail;
                let kept: Vec<usize> = (0..head).filter(|&i| !constant[i]).collect();
                if !kept.is_empty() && kept.len() < head {
                    let mut sel = SmallSel {
                        tail_start: head,
                        ..SmallSel::default()
                    };
                    for (k, &i) in kept.iter().enumerate() {
                        sel.state[k] = i;
                        sel.row[i] = k;
                    }
                    for (q, i) in (head..nf).enumerate() {
                        sel.row[i] = kept.len() + q;
                    }
                    ws.direct.sel = sel;
                    ws.direct.small_kind = SMALL_SEL + kept.len();
                    small_constant = (0..head).filter(|&i| constant[i]).collect();
                    ws.direct.small_lu = [[0.0; SMALL_MAX]; SMALL_MAX];
                }
            } else if ws.direct.small {
                ws.direct.small_kind = nf;
            }
            if !ws.direct.small {
                // Where each of J's values goes in the band (through `Peel::src` for the
                // coupled block): the fill is then one indexed store per entry.
                let src = peel.as_ref().map_or(&[][..], |p| &p.src[..]);
                ws.direct.fill_map = Some(FillMap::new(fp, bkl, bku, src, &ws.direct.band_pos));
                ws.direct.ab = vec![0.0; (2 * bkl + bku + 1) * nf];
                ws.direct.ipiv = vec![0; nf];
                ws.direct.band_counts = vec![0; 2 * nf];
            }
        }
        ws.direct.sparse = match self.linear {
            _ if nf == 0 => false,
            LinearSolver::Dense | LinearSolver::Banded | LinearSolver::Krylov => false,
            LinearSolver::Sparse => true,
            LinearSolver::Auto => {
                !krylov
                    && ws.direct.band.is_none()
                    && nf >= SPARSE_MIN_STATES
                    && 2 * fnnz <= nf * nf
            }
        };
        ws.direct.symbolic = None;
        ws.direct.sp_mem = None;
        ws.direct.m_vals = Vec::new();
        if ws.direct.sparse {
            // Symbolic analysis once per pattern (COLAMD column order, elimination tree).
            let a = SymbolicSparseColMatRef::new_checked(nf, nf, &fp.col_start, None, &fp.rows);
            match factorize_symbolic_lu(a, LuSymbolicParams::default()) {
                Ok(sym) => {
                    let req = sym
                        .factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default())
                        .or(sym.solve_in_place_scratch::<f64>(1, Par::Seq));
                    let mut mem = MemBuffer::new(req);
                    ws.direct.m_vals = vec![0.0; fnnz];
                    warm_sparse_lu(
                        &sym,
                        fp,
                        &mut ws.direct.numeric,
                        &mut ws.direct.m_vals,
                        &mut mem,
                    );
                    ws.direct.sp_mem = Some(mem);
                    ws.direct.symbolic = Some(sym);
                }
                // Out of memory in the analysis: the dense path (which may well fail too).
                Err(_) => ws.direct.sparse = false,
            }
        }
        ws.krylov = None;
        if krylov {
            let invariants: Vec<Vec<usize>> = sys
                .linear_invariants()
                .into_iter()
                .filter(|set| !set.is_empty() && set.iter().all(|&i| i < n))
                .collect();
            let mut quad_rows: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
            if ws.quad_out {
                quad_rows = (0..n)
                    .filter(|&q| ws.quad.iter().any(|r| r.contains(&q)))
                    .map(|q| (q, Vec::new()))
                    .collect();
                for j in 0..n {
                    let start = m_pattern.col_start[j];
                    for (k, &i) in m_pattern.column(j).iter().enumerate() {
                        if i != j
                            && let Some(row) = quad_rows.iter_mut().find(|(q, _)| *q == i)
                        {
                            row.1.push((j, start + k));
                        }
                    }
                }
            }
            ws.krylov = Some(Box::new(KrylovWs {
                ilu: Ilu0::new(&m_pattern),
                gmres: Gmres::new(n, self.gmres_limits),
                stats: KrylovStats::default(),
                inv_b: vec![0.0; invariants.len()],
                inv_w: vec![0.0; invariants.iter().map(Vec::len).max().unwrap_or(0)],
                invariants,
                quad_b: vec![0.0; quad_rows.len()],
                quad_rows,
            }));
        }
        // The dense path's n² matrix only where it is used.
        ws.direct.lu = None;
        ws.direct.rhs = None;
        ws.direct.mem = None;
        if !ws.direct.sparse && ws.direct.band.is_none() && ws.krylov.is_none() && nf > 0 {
            // Against all n states, as the band's.
            let values = n.checked_mul(n);
            // Only a forced choice is refused: `Auto` falls back to the dense LU where no
            // other fits (e.g. the dense pattern of a system with sensitivities).
            if forced && values.is_none_or(|v| v > MAX_FACTOR_VALUES) {
                return Err(too_large(self.linear, false, n, values));
            }
            ws.direct.lu = Some(Mat::zeros(nf, nf));
            ws.direct.rhs = Some(Mat::zeros(nf, 1));
            ws.direct.perm = vec![0; nf];
            ws.direct.perm_inv = vec![0; nf];
            let req =
                lu_factor::lu_in_place_scratch::<usize, f64>(nf, nf, Par::Seq, Default::default())
                    .or(lu_solve::solve_in_place_scratch::<usize, f64>(
                        nf,
                        1,
                        Par::Seq,
                    ));
            ws.direct.mem = Some(MemBuffer::new(req));
        }
        ws.peel = if ws.krylov.is_some() {
            None
        } else {
            peel.map(Box::new)
        };
        ws.constant = ws
            .peel
            .as_ref()
            .map_or(small_constant, |p| p.constant.clone());
        ws.live = None;
        if !ws.constant.is_empty() {
            constant.fill(false);
            for &i in &ws.constant {
                constant[i] = true;
            }
            let live = Live::of(&constant);
            // The small LU's selection (no `Peel`): the passes over the live states only when
            // they take fewer operations (pairs and singles) than the full ones' pairs.
            let fewer = live.pairs.len() + live.singles.len() < n.div_ceil(2);
            if ws.peel.is_some() || fewer {
                ws.live = Some(live);
            }
        }
        ws.fused = match (ws.peel.as_deref(), ws.live.as_ref()) {
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
