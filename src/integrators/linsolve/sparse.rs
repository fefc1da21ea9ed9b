//! faer's sparse LU of M = I − γJ: COLAMD column order and symbolic analysis once per pattern,
//! numeric refactorization with partial pivoting when J or γ changes.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::lu::{LuSymbolicParams, NumericLu, SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

use crate::sparsity::Pattern;

/// The sparse LU of M over a pattern with its diagonal: M's values, the symbolic and numeric
/// factors, their workspace.
pub(crate) struct SparseLu {
    /// Position of each diagonal entry in the pattern's values.
    diag: Vec<usize>,
    m_vals: Vec<f64>,
    symbolic: SymbolicLu<usize>,
    numeric: NumericLu<usize, f64>,
    mem: MemBuffer,
}

impl SparseLu {
    /// The symbolic analysis of the pattern `p` (diagonal included) and the numeric factors'
    /// storage (`warm_sparse_lu`); `None` when faer's analysis fails (out of memory).
    pub(crate) fn new(p: &Pattern) -> Option<SparseLu> {
        let n = p.n;
        let a = SymbolicSparseColMatRef::new_checked(n, n, &p.col_start, None, &p.rows);
        let symbolic = factorize_symbolic_lu(a, LuSymbolicParams::default()).ok()?;
        let req = symbolic
            .factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default())
            .or(symbolic.solve_in_place_scratch::<f64>(1, Par::Seq));
        let mut lu = SparseLu {
            diag: (0..n)
                .map(|j| p.col_start[j] + p.column(j).partition_point(|&i| i < j))
                .collect(),
            m_vals: vec![0.0; p.nonzeros()],
            symbolic,
            numeric: NumericLu::new(),
            mem: MemBuffer::new(req),
        };
        warm_sparse_lu(
            &lu.symbolic,
            p,
            &mut lu.numeric,
            &mut lu.m_vals,
            &mut lu.mem,
        );
        Some(lu)
    }

    /// LU with partial pivoting of M = I − γJ, J's values `jac` over the pattern `p` (the one
    /// of `new`). False when M is structurally singular; a zero pivot gives non-finite factors,
    /// which the solve passes on (the Newton iteration reports them).
    pub(crate) fn factor(&mut self, p: &Pattern, jac: &[f64], gamma: f64) -> bool {
        let n = p.n;
        for (m, a) in self.m_vals.iter_mut().zip(jac) {
            *m = -gamma * a;
        }
        for &k in &self.diag {
            self.m_vals[k] += 1.0;
        }
        let a = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(n, n, &p.col_start, None, &p.rows),
            &self.m_vals,
        );
        let stack = MemStack::new(&mut self.mem);
        self.symbolic
            .factorize_numeric_lu(&mut self.numeric, a, Par::Seq, stack, Default::default())
            .is_ok()
    }

    /// Solve M x = b in place with the factors of `factor`.
    pub(crate) fn solve(&mut self, b: &mut [f64]) {
        let n = b.len();
        let lu = faer::sparse::linalg::lu::LuRef::new_unchecked(&self.symbolic, &self.numeric);
        let stack = MemStack::new(&mut self.mem);
        let rhs = MatMut::from_column_major_slice_mut(b, n, 1);
        lu.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack);
    }
}

/// Size the numeric sparse LU's storage before the step loop. faer grows the L and U vectors
/// of a factorization (`Vec::try_reserve`, never shrinking) whenever its fill, which depends on
/// the row pivots, exceeds every earlier one: the first factorizations of M = I − γJ in a run
/// would allocate, and a later one that pivots otherwise could. Factors of random values over
/// the pattern pivot away from the diagonal and fill far more than M (close to the identity for
/// the γ of a step) does; three of them leave room that the step loop has not outgrown in any
/// run measured (`tests/solvers/no_alloc.rs`). A heuristic, not a bound: the bound on the fill under
/// any pivoting (the Cholesky factor of MᵀM, George & Ng, SIAM J. Sci. Stat. Comput. 6 (1985))
/// cannot be reserved through faer's API.
fn warm_sparse_lu(
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
