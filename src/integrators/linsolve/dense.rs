//! faer's dense LU with partial pivoting of M = I − γJ, where no sparser solver fits.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::{factor as lu_factor, solve as lu_solve};
use faer::perm::PermRef;
use faer::{Mat, Par};

use crate::sparsity::Pattern;

/// The dense LU of an n×n M: the factors, the row permutation and faer's workspace.
pub(crate) struct DenseLu {
    lu: Mat<f64>,
    rhs: Mat<f64>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    mem: MemBuffer,
}

impl DenseLu {
    /// The storage for n states (n² values: the caller bounds n).
    pub(crate) fn new(n: usize) -> DenseLu {
        let req =
            lu_factor::lu_in_place_scratch::<usize, f64>(n, n, Par::Seq, Default::default()).or(
                lu_solve::solve_in_place_scratch::<usize, f64>(n, 1, Par::Seq),
            );
        DenseLu {
            lu: Mat::zeros(n, n),
            rhs: Mat::zeros(n, 1),
            perm: vec![0; n],
            perm_inv: vec![0; n],
            mem: MemBuffer::new(req),
        }
    }

    /// LU with partial pivoting of M = I − γJ, J's values `jac` over the pattern `p`. False
    /// when a pivot is zero or not finite (M singular).
    pub(crate) fn factor(&mut self, p: &Pattern, jac: &[f64], gamma: f64) -> bool {
        let n = p.n;
        let lu = &mut self.lu;
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
        let stack = MemStack::new(&mut self.mem);
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

    /// Solve M x = b in place with the factors of `factor`.
    pub(crate) fn solve(&mut self, b: &mut [f64]) {
        let n = b.len();
        let (lu, rhs) = (&self.lu, &mut self.rhs);
        for i in 0..n {
            rhs[(i, 0)] = b[i];
        }
        let perm = PermRef::new_checked(&self.perm, &self.perm_inv, n);
        let stack = MemStack::new(&mut self.mem);
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
