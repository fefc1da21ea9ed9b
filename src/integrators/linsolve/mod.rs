//! Linear solvers of the implicit methods' Newton systems M x = b, M = I − γJ (the BDF's and
//! backward Euler's): the choice of a solver for a pattern (`LinearSolver`), the direct LUs
//! (small fixed-size, band, faer's sparse and dense) and the split of M by its pattern
//! (`peel`), and GMRES (`krylov`, the BDF's only).

pub(crate) mod band;
pub(crate) mod dense;
pub mod krylov;
pub(crate) mod peel;
pub(crate) mod small;
pub(crate) mod sparse;
#[cfg(test)]
mod tests;

use faer::sparse::SymbolicSparseColMatRef;

use super::SolverError;
use crate::ode::{BlockLayout, OdeSystem};
use crate::sparsity::{Pattern, bandwidths_under, reverse_cuthill_mckee};
use band::{BandLu, bandwidths};
use dense::DenseLu;
use krylov::KrylovSolver;
use peel::Peel;
use small::{SMALL_MAX, SmallLu};
use sparse::SparseLu;

pub use band::BAND_MAX;

/// Below this many states M = I − γJ is never factored sparsely (`LinearSolver::Auto`): the
/// sparse LU overtakes the dense one from about here (`cargo bench --bench scale --
/// --crossover`). Below it `Auto` takes the band LU with the full band, a plain unblocked LU,
/// whose small-n cost is a fraction of faer's dense LU's set-up.
pub const SPARSE_MIN_STATES: usize = 10;

/// How the iteration matrix M = I − γJ is factored. Not part of the saved state: a restored
/// integrator uses `Auto`, which depends on n and the pattern only, so it continues bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinearSolver {
    /// Band below `SPARSE_MIN_STATES` states or when the band is narrow (`BAND_MAX`) in the
    /// states' own order or (below `BAND_RCM_MAX_STATES`) in reverse Cuthill–McKee order;
    /// else Krylov from `KRYLOV_MIN_STATES` states when a direct LU would fill M
    /// (`fill_ratio` ≥ `KRYLOV_MIN_FILL`: 2-D grids); else sparse when the pattern is at most
    /// half full, else dense.
    #[default]
    Auto,
    /// Dense LU with partial pivoting (faer).
    Dense,
    /// Sparse LU (faer: COLAMD column order and symbolic analysis once per pattern, numeric
    /// refactorization with partial pivoting when J or γ changes).
    Sparse,
    /// Band LU with partial pivoting in the pattern's own order (LAPACK's `dgbtf2`/`dgbtrs`
    /// algorithm, Anderson et al., *LAPACK Users' Guide*, §5.3.2), for patterns of small
    /// bandwidth (chains).
    Banded,
    /// No factorization: restarted GMRES on M preconditioned by ILU(0) of M (see
    /// `super::krylov`), with CVODE's linear tolerance; linear cost per step on patterns whose
    /// direct LU fills superlinearly (2-D grids). Each solution is corrected onto the system's
    /// linear invariants (`OdeSystem::linear_invariants`: the network's mass), which a direct
    /// solve keeps to round-off and GMRES alone only to its tolerance.
    Krylov,
}

/// `Auto` takes the band LU in reverse Cuthill–McKee order only below this many states in the
/// LU (the coupled ones, see `Peel`); above it, the sparse LU: on chains with pistons the
/// reordered band is faster up to about this size, and slower beyond, where its serial
/// substitutions through memory cost more than the sparse LU's bookkeeping.
pub const BAND_RCM_MAX_STATES: usize = 50_000;

/// `Auto` takes the Krylov path from this many states when `fill_ratio` ≥ `KRYLOV_MIN_FILL`:
/// GMRES's advantage over the sparse LU grows with the size of a grid, and below this it is
/// small, so the direct solve (exact Newton systems) is kept.
pub const KRYLOV_MIN_STATES: usize = 100;

/// Least structural fill ratio (`fill_ratio`) at which `Auto` takes the Krylov path: a chain
/// or tree (1.0) factors without fill and its band or sparse LU is faster than GMRES; a 2-D
/// grid's ratio grows with its size (3.3 at 1k states, 10.6 at 100k).
pub const KRYLOV_MIN_FILL: f64 = 2.0;

/// Most values the band or dense LU may store (2^27 f64 = 1 GiB). A band as wide as the
/// system (a chain with pistons in its own order) or a dense M on a large network would ask
/// for n·(2kl + ku + 1) or n² values — ~61 GB at 50k states — and the allocation would abort
/// the process; above this the setup fails with a message instead.
pub const MAX_FACTOR_VALUES: usize = 1 << 27;

impl LinearSolver {
    /// The `[solver] linear_solver` value that selects it.
    pub fn setting(self) -> &'static str {
        match self {
            LinearSolver::Auto => "auto",
            LinearSolver::Dense => "dense",
            LinearSolver::Sparse => "sparse",
            LinearSolver::Banded => "band",
            LinearSolver::Krylov => "krylov",
        }
    }
}

/// The error of a band or dense LU of `values` values (None: more than `usize` holds) for n
/// states, above `MAX_FACTOR_VALUES`.
pub(crate) fn too_large(
    linear: LinearSolver,
    band: bool,
    n: usize,
    values: Option<usize>,
) -> SolverError {
    SolverError::FactorTooLarge {
        linear,
        band,
        n,
        values: values.unwrap_or(usize::MAX),
    }
}

/// The message of `SolverError::FactorTooLarge`.
pub(crate) fn write_factor_too_large(
    f: &mut std::fmt::Formatter<'_>,
    linear: LinearSolver,
    band: bool,
    n: usize,
    values: usize,
) -> std::fmt::Result {
    write!(
        f,
        "linear_solver = \"{}\": the {} LU of M = I − γJ for {n} states would store ",
        linear.setting(),
        if band { "band" } else { "dense" }
    )?;
    if values == usize::MAX {
        f.write_str("more values than memory can address")?;
    } else {
        let gib = values as f64 * 8.0 / (1u64 << 30) as f64;
        write!(f, "{values} values ({gib:.1} GiB)")?;
    }
    write!(
        f,
        ", above the limit of {MAX_FACTOR_VALUES} values (1 GiB); use linear_solver = \"auto\" \
         or \"sparse\""
    )
}

/// Structural fill of a direct factorization of a pattern: the Cholesky factor of the pattern
/// of M + Mᵀ under faer's AMD ordering (symbolic only), over nnz of its upper triangle. The
/// sparse LU pivots and orders by COLAMD, so this is an estimate of its fill, independent of
/// the states' order. `None` if faer's analysis fails (out of memory). `Auto` takes the Krylov
/// path at `KRYLOV_MIN_FILL`; the scale bench (`--krylov`) and `tests/solvers/krylov_bdf.rs` print it.
pub fn fill_ratio(p: &Pattern) -> Option<f64> {
    use faer::Side;
    use faer::sparse::linalg::SupernodalThreshold;
    use faer::sparse::linalg::cholesky::{
        CholeskySymbolicParams, SymmetricOrdering, factorize_symbolic_cholesky,
    };
    let n = p.n;
    let mut entries = Vec::with_capacity(p.nonzeros() + n);
    for j in 0..n {
        entries.push((j, j));
        for &i in p.column(j) {
            entries.push((i.max(j), i.min(j)));
        }
    }
    let upper = Pattern::from_entries(n, entries);
    let a = SymbolicSparseColMatRef::new_checked(n, n, &upper.col_start, None, &upper.rows);
    let params = CholeskySymbolicParams {
        supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
        ..Default::default()
    };
    let sym = factorize_symbolic_cholesky(a, Side::Upper, SymmetricOrdering::Amd, params).ok()?;
    Some(sym.len_val() as f64 / upper.nonzeros() as f64)
}

/// The solver of M x = b chosen for a pattern by `Linsolve::select`, with its own factors and
/// scratch only.
// The small LU's arrays stay inline (the workspace holding this is boxed): no indirection on
// the small systems' path, whose solves are the shortest.
#[allow(clippy::large_enum_variant)]
#[derive(Default)]
pub(crate) enum Solver {
    /// Nothing to factor: no workspace yet, or every state is solved outside the LU (`Peel`).
    #[default]
    None,
    /// The band LU of at most `SMALL_MAX` states in the states' own order, on a fixed-size
    /// array.
    Small(SmallLu),
    /// The band LU (LAPACK's band storage), in the states' own order or reordered.
    Band(BandLu),
    /// faer's sparse LU.
    Sparse(SparseLu),
    /// faer's dense LU.
    Dense(DenseLu),
    /// GMRES preconditioned by ILU(0), over all of M (no `Peel`).
    Krylov(Box<KrylovSolver>),
}

/// How the BDF solves its Newton systems M x = b, M = I − γJ: the states split off by `Peel`
/// around one LU, or GMRES. Chosen once per pattern (`select`); nothing here is serialized.
#[derive(Default)]
pub(crate) struct Linsolve {
    /// The states solved outside the LU before and after it (`None`: the LU is over M, or
    /// GMRES).
    pub(crate) peel: Option<Box<Peel>>,
    pub(crate) solver: Solver,
}

impl Linsolve {
    /// The solver for M's pattern `m` (diagonal included) under the setting `linear`:
    /// `constant[i]` marks the constant states with an empty row, which a direct solve may
    /// leave out (returned beside it: their corrections stay exactly 0); `blocks` is the
    /// system's block layout (`OdeSystem::BLOCKS`), which the split's gathers may follow;
    /// `krylov` builds the GMRES solver if it is chosen (`None`: direct solves only, for a
    /// Newton iteration without a linear tolerance: backward Euler's). Fails, before allocating
    /// the factors, when a forced band or dense LU (`LinearSolver::Banded`, `Dense`) would store
    /// more than `MAX_FACTOR_VALUES` values.
    pub(crate) fn select(
        linear: LinearSolver,
        m: &Pattern,
        constant: &[bool],
        blocks: Option<BlockLayout>,
        krylov: Option<impl FnOnce() -> KrylovSolver>,
    ) -> Result<(Linsolve, Vec<usize>), SolverError> {
        let n = m.n;
        // The direct paths factor the coupled states only (`Peel`); GMRES runs over M.
        // Up to `SMALL_MAX` states (the fixed-size LU, unrolled on n) the gathers, scatters and
        // row sweeps around a smaller LU cost about as much as they save: there only the first
        // states are split off, and only when that halves the LU. Without a split, trailing
        // quadratures still leave the LU, in place (`SmallLu::tail`).
        let mut peel = match linear {
            LinearSolver::Krylov => None,
            _ if n <= SMALL_MAX => Peel::of(m, false, n - n / 2, constant, blocks),
            _ => Peel::of(m, true, 1, constant, blocks),
        };
        // The pattern, size and entries of the matrix the LU factors.
        let fp = peel.as_ref().map_or(m, |p| &p.pattern);
        let (nf, fnnz) = (fp.n, fp.nonzeros());
        let (kl, ku) = bandwidths(fp);
        // A band in another order: a network numbers its states by component kind (every
        // chamber, then every piston), so a chain with pistons has a wide band in its own order
        // and a narrow one in reverse Cuthill–McKee order. Only for `Auto` from
        // `SPARSE_MIN_STATES` to `BAND_RCM_MAX_STATES` states (above, the sparse LU is faster)
        // when the own order's band is wide: a network whose own order gives a narrow band
        // keeps it.
        let (mut band_perm, mut band_pos) = (Vec::new(), Vec::new());
        let mut reordered = None;
        if linear == LinearSolver::Auto
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
                    (band_perm, band_pos) = (perm, pos);
                }
            }
        }
        let fp = peel.as_ref().map_or(m, |p| &p.pattern);
        // Krylov when asked for, or for `Auto` on a pattern whose direct LU fills (2-D grids):
        // there GMRES grows linearly with the size, where any elimination order fills
        // superlinearly (George 1973). The band choice comes first (a chain's fill ratio is
        // 1.0 anyway).
        let use_krylov = krylov.is_some()
            && match linear {
                LinearSolver::Krylov => true,
                LinearSolver::Auto => {
                    n >= KRYLOV_MIN_STATES
                        && !(kl + ku <= BAND_MAX || reordered.is_some())
                        && fill_ratio(m).is_some_and(|f| f >= KRYLOV_MIN_FILL)
                }
                _ => false,
            };
        if let (true, Some(krylov)) = (use_krylov, krylov) {
            let solver = Solver::Krylov(Box::new(krylov()));
            return Ok((Linsolve { peel: None, solver }, Vec::new()));
        }
        let band = match linear {
            // No coupled states: no LU at all.
            _ if nf == 0 => None,
            LinearSolver::Banded => Some((kl, ku)),
            LinearSolver::Auto if nf < SPARSE_MIN_STATES || kl + ku <= BAND_MAX => Some((kl, ku)),
            LinearSolver::Auto => reordered,
            _ => None,
        };
        let forced = matches!(linear, LinearSolver::Dense | LinearSolver::Banded);
        // The constant states left out besides `Peel`'s (the small LU's selection).
        let mut left_out = Vec::new();
        let mut solver = Solver::None;
        if let Some((bkl, bku)) = band {
            // Against all n states (not only the coupled ones): a bound on what is stored.
            let values = (2 * bkl + bku + 1).checked_mul(n);
            // Only a forced choice is refused: `Auto` takes a band only when it is narrow.
            if forced && values.is_none_or(|v| v > MAX_FACTOR_VALUES) {
                return Err(too_large(linear, true, n, values));
            }
            // The band's own widths (the reordered ones when reordered).
            solver = if band_perm.is_empty() && nf <= SMALL_MAX {
                let (small, sel) = SmallLu::new(fp, peel.is_some(), constant);
                left_out = sel;
                Solver::Small(small)
            } else {
                // Where each of J's values goes in the band (through `Peel::src` for the
                // coupled block): the fill is then one indexed store per entry.
                let src = peel.as_ref().map_or(&[][..], |p| &p.src[..]);
                Solver::Band(BandLu::new(fp, (bkl, bku), src, band_perm, &band_pos))
            };
        }
        let sparse = match linear {
            _ if nf == 0 => false,
            LinearSolver::Sparse => true,
            LinearSolver::Auto => band.is_none() && nf >= SPARSE_MIN_STATES && 2 * fnnz <= nf * nf,
            _ => false,
        };
        if sparse {
            // Out of memory in the analysis: the dense path (which may well fail too).
            if let Some(lu) = SparseLu::new(fp) {
                solver = Solver::Sparse(lu);
            }
        }
        // The dense path's n² matrix only where it is used.
        if matches!(solver, Solver::None) && nf > 0 {
            // Against all n states, as the band's.
            let values = n.checked_mul(n);
            // Only a forced choice is refused: `Auto` falls back to the dense LU where no
            // other fits (e.g. the dense pattern of a system with sensitivities).
            if forced && values.is_none_or(|v| v > MAX_FACTOR_VALUES) {
                return Err(too_large(linear, false, n, values));
            }
            solver = Solver::Dense(DenseLu::new(nf));
        }
        if let Some(p) = peel.as_ref() {
            left_out.clone_from(&p.constant);
        }
        let peel = peel.map(Box::new);
        Ok((Linsolve { peel, solver }, left_out))
    }

    /// Whether the Newton systems are solved by GMRES.
    #[inline(always)]
    pub(crate) fn is_krylov(&self) -> bool {
        matches!(self.solver, Solver::Krylov(_))
    }

    /// Factor M = I − γJ (`jac`: J's values over M's pattern `m`): the states split off
    /// (`Peel`) and an LU with partial pivoting of the coupled block, or ILU(0) of M on the
    /// Krylov path. False when M is singular.
    pub(crate) fn factor(&mut self, m: Option<&Pattern>, jac: &[f64], gamma: f64) -> bool {
        let Linsolve { peel, solver } = self;
        match (solver, peel.as_deref_mut()) {
            (Solver::Krylov(k), _) => k.factor(jac, gamma),
            // The band LU fills M's band from the whole J through its map (which holds
            // `Peel::src`, so no gather is needed); the others factor the gathered coupled
            // block.
            (s, Some(peel)) if matches!(s, Solver::Band(_)) => {
                peel.factor(jac, gamma, false) && s.factor_lu(&peel.pattern, jac, gamma)
            }
            (s, Some(peel)) => {
                peel.factor(jac, gamma, true) && s.factor_lu(&peel.pattern, &peel.jac, gamma)
            }
            (s, None) => s.factor_lu(m.expect("workspace prepared"), jac, gamma),
        }
    }

    /// Solve M x = b in place with the factors of `factor` (`b`: one value per state). GMRES
    /// applies M with the current γ and J's values `jac`, to the tolerance CVODE asks of a
    /// Newton iteration's linear solve (`ewt`: the error weights, `n_err` the states in the
    /// norms, `tq4`: the Newton test's tq₄); false when it does not reach it. A direct solve
    /// returns true (a singular M shows as non-finite values). `S`: the system, whose block
    /// layout the split's gathers follow.
    #[inline(always)]
    pub(crate) fn solve<S: OdeSystem>(
        &mut self,
        b: &mut [f64],
        ewt: &[f64],
        n_err: f64,
        tq4: f64,
        gamma: f64,
        jac: &[f64],
    ) -> bool {
        if let Solver::Krylov(k) = &mut self.solver {
            return k.solve(b, ewt, n_err, tq4, gamma, jac);
        }
        self.solve_direct::<S>(b);
        true
    }

    /// The direct solve of `solve` (the solver is not GMRES): the first states, the coupled
    /// block's LU, the last states (`Peel`).
    #[inline(always)]
    pub(crate) fn solve_direct<S: OdeSystem>(&mut self, b: &mut [f64]) {
        let Linsolve { peel, solver } = self;
        debug_assert!(!matches!(solver, Solver::Krylov(_)));
        if let Some(peel) = peel.as_deref_mut() {
            peel.before::<S>(b);
            solver.solve_lu(&mut peel.b);
            peel.after::<S>(b);
        } else {
            solver.solve_lu(b);
        }
    }

    /// The direct solve of the fused Newton iteration: the coupled block's right-hand side is
    /// already in `Peel::b` (and its solution stays there), the last states' in `b`.
    #[inline(always)]
    pub(crate) fn solve_fused(&mut self, b: &mut [f64]) {
        let Linsolve { peel, solver } = self;
        let peel = peel.as_deref_mut().expect("fused with a split");
        solver.solve_lu(&mut peel.b);
        peel.after_fused(b);
    }
}

impl Solver {
    /// LU with partial pivoting of M = I − γJ over the pattern `p` (J's values `jac` over it;
    /// for the band LU, J's values over M's whole pattern, which its map places): all of M, or
    /// the coupled block of `Peel`. False when M is singular.
    #[inline(always)]
    fn factor_lu(&mut self, p: &Pattern, jac: &[f64], gamma: f64) -> bool {
        match self {
            Solver::Small(lu) => lu.factor(p, jac, gamma),
            _ => self.factor_large(p, jac, gamma),
        }
    }

    /// `factor_lu` but the small LU's. Apart, so that the small path's call does not pay this
    /// one's register saves.
    #[inline(never)]
    fn factor_large(&mut self, p: &Pattern, jac: &[f64], gamma: f64) -> bool {
        match self {
            Solver::Band(lu) => lu.factor(jac, gamma),
            Solver::Sparse(lu) => lu.factor(p, jac, gamma),
            Solver::Dense(lu) => lu.factor(p, jac, gamma),
            Solver::None => true,
            Solver::Small(_) | Solver::Krylov(_) => unreachable!("factor_lu's path"),
        }
    }

    /// Solve with the factors of `factor_lu` in place (b: one value per state of its pattern).
    #[inline(always)]
    fn solve_lu(&mut self, b: &mut [f64]) {
        match self {
            Solver::Small(lu) => lu.solve(b),
            _ => self.solve_large(b),
        }
    }

    /// `solve_lu` but the small LU's (see `factor_large`).
    #[inline(never)]
    fn solve_large(&mut self, b: &mut [f64]) {
        match self {
            Solver::Band(lu) => lu.solve(b),
            Solver::Sparse(lu) => lu.solve(b),
            Solver::Dense(lu) => lu.solve(b),
            Solver::None => {}
            Solver::Small(_) | Solver::Krylov(_) => unreachable!("solve_lu's path"),
        }
    }
}
