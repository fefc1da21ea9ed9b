//! Shared pieces of the implicit methods: a dense LU factorization with partial pivoting
//! (faer's in-place kernels on storage allocated once) and a forward-difference Jacobian.
//!
//! Both are scratch, not history: an integrator keeps them `#[serde(skip)]` and they size
//! themselves on first use (the only allocation), so steady stepping never allocates.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor, solve};
use faer::perm::PermRef;
use faer::{Mat, MatMut, Par};

use super::{SolverError, check_finite, ensure_len};
use crate::ode::OdeSystem;

/// An n×n matrix, its LU factors (in place) and the row permutation. `matrix_mut` fills the
/// matrix, `factor` factorizes it, `solve_in_place` solves with the factors.
pub struct DenseLu {
    n: usize,
    lu: Mat<f64>,
    fwd: Vec<usize>,
    bwd: Vec<usize>,
    mem: Option<MemBuffer>,
    factored: bool,
}

impl Default for DenseLu {
    fn default() -> Self {
        DenseLu {
            n: 0,
            lu: Mat::new(),
            fwd: Vec::new(),
            bwd: Vec::new(),
            mem: None,
            factored: false,
        }
    }
}

impl Clone for DenseLu {
    /// Scratch: a clone starts empty and sizes itself on first use.
    fn clone(&self) -> Self {
        DenseLu::default()
    }
}

impl PartialEq for DenseLu {
    /// Scratch never distinguishes two integrators.
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for DenseLu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DenseLu({}x{})", self.n, self.n)
    }
}

impl DenseLu {
    /// Size the storage for n×n (allocates only when n changes).
    pub fn ensure(&mut self, n: usize) {
        if self.n == n && self.mem.is_some() {
            return;
        }
        self.n = n;
        self.lu = Mat::zeros(n, n);
        self.fwd = vec![0; n];
        self.bwd = vec![0; n];
        let req = StackReq::any_of(&[
            factor::lu_in_place_scratch::<usize, f64>(n, n, Par::Seq, Default::default()),
            solve::solve_in_place_scratch::<usize, f64>(n, 1, Par::Seq),
        ]);
        self.mem = Some(MemBuffer::new(req));
        self.factored = false;
    }

    /// The matrix to fill before [`Self::factor`] (column-major n×n view).
    pub fn matrix_mut(&mut self) -> MatMut<'_, f64> {
        self.factored = false;
        self.lu.as_mut()
    }

    /// Whether the current factors are valid.
    pub fn is_factored(&self) -> bool {
        self.factored
    }

    /// Factorize the matrix in place. A zero or non-finite pivot is reported as a singular
    /// matrix (`Err` with the pivot index).
    pub fn factor(&mut self) -> Result<(), usize> {
        let Some(mem) = self.mem.as_mut() else {
            return Err(0);
        };
        factor::lu_in_place(
            self.lu.as_mut(),
            &mut self.fwd,
            &mut self.bwd,
            Par::Seq,
            MemStack::new(mem),
            Default::default(),
        );
        for i in 0..self.n {
            let d = self.lu[(i, i)];
            if d == 0.0 || !d.is_finite() {
                return Err(i);
            }
        }
        self.factored = true;
        Ok(())
    }

    /// Overwrite `rhs` (length n) with the solution of A·x = rhs.
    pub fn solve_in_place(&mut self, rhs: &mut [f64]) {
        debug_assert!(self.factored);
        let n = self.n;
        let Some(mem) = self.mem.as_mut() else {
            return;
        };
        let perm = PermRef::new_checked(&self.fwd, &self.bwd, n);
        let b = MatMut::from_column_major_slice_mut(rhs, n, 1);
        solve::solve_in_place(
            self.lu.as_ref(),
            self.lu.as_ref(),
            perm,
            b,
            Par::Seq,
            MemStack::new(mem),
        );
    }
}

/// Forward-difference Jacobian ∂f/∂y at (t, y) with f0 = f(t, y) given, written column by column
/// through `put(i, j, value)`. The perturbation of y_j is √ε·max(|y_j|, scale_j) (scale_j > 0:
/// a typical magnitude of state j, so states that start at 0 are perturbed meaningfully).
/// Costs n right-hand-side evaluations; `yp`, `fp` are scratch of length n.
#[allow(clippy::too_many_arguments)]
pub fn fd_jacobian<S: OdeSystem>(
    sys: &mut S,
    t: f64,
    y: &[f64],
    f0: &[f64],
    scale: &[f64],
    yp: &mut Vec<f64>,
    fp: &mut Vec<f64>,
    mut put: impl FnMut(usize, usize, f64),
) -> Result<(), SolverError> {
    let n = y.len();
    ensure_len(yp, n);
    ensure_len(fp, n);
    yp.copy_from_slice(y);
    let sqrt_eps = f64::EPSILON.sqrt();
    for j in 0..n {
        let mut d = sqrt_eps * y[j].abs().max(scale[j]);
        if d == 0.0 || !d.is_finite() {
            d = sqrt_eps;
        }
        // The perturbation actually represented in floating point.
        let yj = y[j];
        yp[j] = yj + d;
        let d = yp[j] - yj;
        sys.rhs(t, yp, fp);
        check_finite(t, fp)?;
        for i in 0..n {
            put(i, j, (fp[i] - f0[i]) / d);
        }
        yp[j] = yj;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lu_solves_a_pivoting_system() {
        // A needs a row exchange (zero in the first pivot position).
        let a = [[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]];
        let x = [1.0, -2.0, 0.5];
        let mut b: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| a[i][j] * x[j]).sum())
            .collect();
        let mut lu = DenseLu::default();
        lu.ensure(3);
        {
            let mut m = lu.matrix_mut();
            for i in 0..3 {
                for j in 0..3 {
                    m[(i, j)] = a[i][j];
                }
            }
        }
        lu.factor().unwrap();
        lu.solve_in_place(&mut b);
        for i in 0..3 {
            println!("x[{i}] = {} (exact {})", b[i], x[i]);
            assert!((b[i] - x[i]).abs() < 1e-14);
        }
    }

    #[test]
    fn singular_matrix_is_reported() {
        let mut lu = DenseLu::default();
        lu.ensure(2);
        {
            let mut m = lu.matrix_mut();
            m[(0, 0)] = 1.0;
            m[(0, 1)] = 2.0;
            m[(1, 0)] = 2.0;
            m[(1, 1)] = 4.0;
        }
        assert!(lu.factor().is_err());
    }
}
