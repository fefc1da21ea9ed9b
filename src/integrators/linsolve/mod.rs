//! Linear solvers of the BDF's Newton systems M x = b, M = I − γJ: the choice of a solver for
//! a pattern (`LinearSolver`), the direct LUs (small fixed-size, band, faer's sparse and dense)
//! and the split of M by its pattern (`peel`), and GMRES (`krylov`).

pub(crate) mod band;
pub mod krylov;
pub(crate) mod peel;
pub(crate) mod small;
#[cfg(test)]
mod tests;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::{factor as lu_factor, solve as lu_solve};
use faer::perm::PermRef;
use faer::sparse::linalg::lu::{NumericLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, Mat, MatMut, Par};

use super::SolverError;
use crate::sparsity::Pattern;
use band::{FillMap, band_factor, band_fill_mapped, band_solve};
use small::{SMALL_MAX, SmallSel, small_lu, small_solve};

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
/// path at `KRYLOV_MIN_FILL`; the scale bench (`--krylov`) and `tests/krylov_bdf.rs` print it.
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

/// The direct solvers' factors and scratch (see `Workspace::direct`), apart from the rest of
/// the workspace so that they are borrowed beside M's pattern and the right-hand side.
#[derive(Default)]
pub(crate) struct Direct {
    /// The band is in reverse Cuthill–McKee order (through `band_perm`, or `Peel::core`).
    pub(crate) reordered: bool,
    pub(crate) lu: Option<Mat<f64>>,
    pub(crate) rhs: Option<Mat<f64>>,
    pub(crate) perm: Vec<usize>,
    pub(crate) perm_inv: Vec<usize>,
    pub(crate) mem: Option<MemBuffer>,
    /// Position of each diagonal entry in `m_pattern`.
    pub(crate) diag: Vec<usize>,
    /// Factor M sparsely (else densely).
    pub(crate) sparse: bool,
    /// Sparse path: M's values, the symbolic and numeric factors, their workspace.
    pub(crate) m_vals: Vec<f64>,
    pub(crate) symbolic: Option<SymbolicLu<usize>>,
    pub(crate) numeric: NumericLu<usize, f64>,
    pub(crate) sp_mem: Option<MemBuffer>,
    /// Band path: (kl, ku) of M's pattern, the factors in LAPACK band storage (2kl + ku + 1
    /// rows per column, column-major) and the row interchanges.
    pub(crate) band: Option<(usize, usize)>,
    pub(crate) ab: Vec<f64>,
    /// Band path (not `small`): where each of J's values (over M's pattern, through `Peel::src`
    /// for the coupled block) goes in `ab`, for `band_fill_mapped`.
    pub(crate) fill_map: Option<FillMap>,
    pub(crate) ipiv: Vec<usize>,
    /// Nonzero extents of the band factors' columns (see `band_factor`).
    pub(crate) band_counts: Vec<usize>,
    /// Band path for n ≤ `SMALL_MAX` in the states' own order: the same LU in a fixed-size
    /// dense array (`small_factor`), column-major, with its row interchanges.
    pub(crate) small: bool,
    pub(crate) small_lu: [[f64; SMALL_MAX]; SMALL_MAX],
    pub(crate) small_piv: [usize; SMALL_MAX],
    /// Small path: the last `tail` states have an empty column off the diagonal (the
    /// quadratures: accumulators, swept volumes), so M is [M_CC 0; M_TC D_T]: the LU runs
    /// over the leading n − tail states and each tail state follows from its row
    /// (`small_tail`). Their rows stay in `small_lu` below the LU's (`small_lu` writes them,
    /// the elimination never reaches them), their diagonals M_qq in `tail_d`. The general
    /// `Peel` does the same through gathers and index lists, which on small systems cost more
    /// than the smaller LU saves.
    pub(crate) tail: usize,
    pub(crate) tail_d: [f64; SMALL_MAX],
    /// Small path: which LU it runs (`small_kind`): N = n − tail states in their own order, or
    /// `SMALL_SEL` + N with the constant states left out (`sel`).
    pub(crate) small_kind: usize,
    /// Small path without a `Peel`, when the system has constant states with an empty row
    /// (a closed chamber's mass, a fixed volume): the LU runs over the N others before the
    /// tail only, through this map (the general `Peel` costs more than it saves here).
    pub(crate) sel: SmallSel,
    /// Band path in a reordered numbering (`reverse_cuthill_mckee`; empty: the states' own
    /// order): the state at each band position, each state's band position, and the right-hand
    /// side gathered into that order.
    pub(crate) band_perm: Vec<usize>,
    pub(crate) band_pos: Vec<usize>,
    pub(crate) band_rhs: Vec<f64>,
}

impl Direct {
    /// LU with partial pivoting of M = I − γJ over the pattern `p` (J's values `jac` over it;
    /// on the band path, above `SMALL_MAX` states, J's values over M's whole pattern, which
    /// `fill_map` places): all of M, or the coupled block of `Peel`. Band (`small` below
    /// `SMALL_MAX` states), faer's sparse or dense LU, as `prepare` chose for `p`. False when
    /// M is singular.
    #[inline(always)]
    pub(crate) fn factor_lu(&mut self, p: &Pattern, jac: &[f64], gamma: f64) -> bool {
        let n = p.n;
        if n == 0 {
            return true;
        }
        if self.small {
            let (a, piv, d, sel) = (
                &mut self.small_lu,
                &mut self.small_piv,
                &mut self.tail_d,
                &self.sel,
            );
            macro_rules! lu {
                ($($k:literal => $ks:literal),*) => {
                    match self.small_kind {
                        $($k => small_lu::<$k, false>(a, piv, d, p, jac, gamma, sel),)*
                        $($ks => small_lu::<$k, true>(a, piv, d, p, jac, gamma, sel),)*
                        k => unreachable!("small LU of kind {k} for {n} states"),
                    }
                };
            }
            return lu!(1 => 14, 2 => 15, 3 => 16, 4 => 17, 5 => 18, 6 => 19, 7 => 20, 8 => 21, 9 => 22, 10 => 23, 11 => 24, 12 => 25);
        }
        self.factor_large(p, jac, gamma)
    }

    /// `factor_lu` above `SMALL_MAX` states. Apart, so that the small path's call does not
    /// pay this one's register saves.
    #[inline(never)]
    fn factor_large(&mut self, p: &Pattern, jac: &[f64], gamma: f64) -> bool {
        let n = p.n;
        if let Some((kl, ku)) = self.band {
            let map = self.fill_map.as_ref().expect("workspace prepared");
            band_fill_mapped(&mut self.ab, n, kl, ku, map, jac, gamma);
            return band_factor(
                &mut self.ab,
                &mut self.ipiv,
                &mut self.band_counts,
                n,
                kl,
                ku,
            );
        }
        if self.sparse {
            for (m, a) in self.m_vals.iter_mut().zip(jac) {
                *m = -gamma * a;
            }
            for &k in &self.diag {
                self.m_vals[k] += 1.0;
            }
            let sym = self.symbolic.as_ref().expect("workspace prepared");
            let a = SparseColMatRef::new(
                SymbolicSparseColMatRef::new_checked(n, n, &p.col_start, None, &p.rows),
                &self.m_vals,
            );
            let stack = MemStack::new(self.sp_mem.as_mut().expect("workspace prepared"));
            // A structurally singular M is an error; a zero pivot gives non-finite factors,
            // which the solve reports (see `solve`).
            return sym
                .factorize_numeric_lu(&mut self.numeric, a, Par::Seq, stack, Default::default())
                .is_ok();
        }
        let lu = self.lu.as_mut().expect("workspace prepared");
        // Scatter the columns (both column-major): no index checks in the n² zeroing.
        for j in 0..n {
            let col = lu.col_as_slice_mut(j);
            col.fill(0.0);
            let range = p.col_start[j]..p.col_start[j + 1];
            for (&i, a) in p.rows[range.clone()].iter().zip(&jac[range]) {
                col[i] = -gamma * a;
            }
            col[j] += 1.0;
        }
        let stack = MemStack::new(self.mem.as_mut().expect("workspace prepared"));
        lu_factor::lu_in_place(
            lu.as_mut(),
            &mut self.perm,
            &mut self.perm_inv,
            Par::Seq,
            stack,
            Default::default(),
        );
        !(0..n).any(|i| lu[(i, i)] == 0.0 || !lu[(i, i)].is_finite())
    }

    /// Solve with the factors of `factor_lu` in place (b: one value per state of its pattern).
    #[inline(always)]
    pub(crate) fn solve_lu(&mut self, b: &mut [f64]) {
        let n = b.len();
        if n == 0 {
            return;
        }
        if self.small {
            let (a, piv, d, sel) = (&self.small_lu, &self.small_piv, &self.tail_d, &self.sel);
            macro_rules! solve {
                ($($k:literal => $ks:literal),*) => {
                    match self.small_kind {
                        $($k => small_solve::<$k, false>(a, piv, d, b, sel),)*
                        $($ks => small_solve::<$k, true>(a, piv, d, b, sel),)*
                        k => unreachable!("small LU of kind {k} for {n} states"),
                    }
                };
            }
            solve!(1 => 14, 2 => 15, 3 => 16, 4 => 17, 5 => 18, 6 => 19, 7 => 20, 8 => 21, 9 => 22, 10 => 23, 11 => 24, 12 => 25);
            return;
        }
        self.solve_large(b);
    }

    /// `solve_lu` above `SMALL_MAX` states (see `factor_large`).
    #[inline(never)]
    fn solve_large(&mut self, b: &mut [f64]) {
        let n = b.len();
        if let Some((kl, ku)) = self.band {
            if self.band_perm.is_empty() {
                band_solve(&self.ab, &self.ipiv, &self.band_counts, n, kl, ku, b);
            } else {
                // P M Pᵀ (P x) = P b: gather b into the band order, scatter x back.
                for (r, &i) in self.band_rhs.iter_mut().zip(&self.band_perm) {
                    *r = b[i];
                }
                band_solve(
                    &self.ab,
                    &self.ipiv,
                    &self.band_counts,
                    n,
                    kl,
                    ku,
                    &mut self.band_rhs,
                );
                for (&r, &i) in self.band_rhs.iter().zip(&self.band_perm) {
                    b[i] = r;
                }
            }
            return;
        }
        if self.sparse {
            let sym = self.symbolic.as_ref().expect("workspace prepared");
            let lu = faer::sparse::linalg::lu::LuRef::new_unchecked(sym, &self.numeric);
            let stack = MemStack::new(self.sp_mem.as_mut().expect("workspace prepared"));
            let rhs = MatMut::from_column_major_slice_mut(b, n, 1);
            lu.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack);
            return;
        }
        let (lu, rhs) = (
            self.lu.as_ref().expect("workspace prepared"),
            self.rhs.as_mut().expect("workspace prepared"),
        );
        for i in 0..n {
            rhs[(i, 0)] = b[i];
        }
        let perm = PermRef::new_checked(&self.perm, &self.perm_inv, n);
        let stack = MemStack::new(self.mem.as_mut().expect("workspace prepared"));
        lu_solve::solve_in_place(
            lu.as_ref(),
            lu.as_ref(),
            perm,
            rhs.as_mut(),
            Par::Seq,
            stack,
        );
        for i in 0..n {
            b[i] = rhs[(i, 0)];
        }
    }
}

/// Lower and upper bandwidths (kl, ku) of a pattern: the largest i − j and j − i of its entries.
pub(crate) fn bandwidths(p: &Pattern) -> (usize, usize) {
    let (mut kl, mut ku) = (0, 0);
    for j in 0..p.n {
        for &i in &p.rows[p.col_start[j]..p.col_start[j + 1]] {
            kl = kl.max(i.saturating_sub(j));
            ku = ku.max(j.saturating_sub(i));
        }
    }
    (kl, ku)
}

/// Size the numeric sparse LU's storage before the step loop. faer grows the L and U vectors
/// of a factorization (`Vec::try_reserve`, never shrinking) whenever its fill, which depends on
/// the row pivots, exceeds every earlier one: the first factorizations of M = I − γJ in a run
/// would allocate, and a later one that pivots otherwise could. Factors of random values over
/// the pattern pivot away from the diagonal and fill far more than M (close to the identity for
/// the γ of a step) does; three of them leave room that the step loop has not outgrown in any
/// run measured (`tests/no_alloc.rs`). A heuristic, not a bound: the bound on the fill under
/// any pivoting (the Cholesky factor of MᵀM, George & Ng, SIAM J. Sci. Stat. Comput. 6 (1985))
/// cannot be reserved through faer's API.
pub(crate) fn warm_sparse_lu(
    sym: &SymbolicLu<usize>,
    p: &Pattern,
    numeric: &mut NumericLu<usize, f64>,
    vals: &mut [f64],
    mem: &mut MemBuffer,
) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..3 {
        for v in vals.iter_mut() {
            // xorshift64: values in (−1, 1), reproducible.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v = (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0;
        }
        let a = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(p.n, p.n, &p.col_start, None, &p.rows),
            &*vals,
        );
        // A singular draw only sizes less: its result is not used.
        let _ =
            sym.factorize_numeric_lu(numeric, a, Par::Seq, MemStack::new(mem), Default::default());
    }
    vals.fill(0.0);
}
