//! The fixed-order variants `bdf1`..`bdf5`: a step of exactly the driver's size, and the start
//! of `bdf2`..`bdf5` by RK4 steps whose points define the first Nordsieck array.

use super::MAX_ORDER;
use super::step::{NFlag, Nls, Step};
use crate::integrators::{SolverError, check_finite};
use crate::ode::OdeSystem;

/// RK4 substeps per start step of the fixed-order variants.
const START_SUBSTEPS: usize = 4;

impl<S: OdeSystem> Step<'_, S> {
    /// One fixed-order step of exactly `h` (the Nordsieck array rescaled to it).
    pub(super) fn step_fixed(&mut self, t: f64, h: f64) -> Result<f64, SolverError> {
        if h != self.s.hscale {
            self.s.eta = h / self.s.hscale;
            self.rescale();
        }
        self.s.h = h;
        self.set_weights();
        self.s.tn = t + h;
        self.predict_with_increment();
        self.set_coefficients();
        let mut nflag = NFlag::FirstCall;
        for _ in 0..2 {
            match self.nls(nflag) {
                Nls::Success => {
                    self.complete_step();
                    self.stats.steps_at_order[self.s.q] += 1;
                    return Ok(h);
                }
                _ => {
                    // Same step again with a fresh Jacobian and matrix.
                    self.stats.convergence_failures += 1;
                    nflag = NFlag::PrevConvFail;
                }
            }
        }
        Err(SolverError::NewtonFailed { t, h })
    }

    /// An RK4 start step of size h as `START_SUBSTEPS` RK4 steps (increment into ws.inc).
    pub(super) fn start_step(&mut self, t: f64, y: &[f64], h: f64) -> Result<(), SolverError> {
        let n = self.n;
        let ws = &mut *self.ws;
        let hs = h / START_SUBSTEPS as f64;
        ws.inc.fill(0.0);
        ws.ypert.copy_from_slice(y);
        for k in 0..START_SUBSTEPS {
            let tk = t + k as f64 * hs;
            let k1 = ws.rk4.k1_mut();
            self.sys.rhs(tk, &ws.ypert, k1);
            check_finite(tk, k1)?;
            ws.rk4
                .step_with_k1(self.sys, tk, &ws.ypert, hs, &mut ws.tempv)?;
            for i in 0..n {
                ws.inc[i] += ws.tempv[i];
                ws.ypert[i] = y[i] + ws.inc[i];
            }
        }
        Ok(())
    }

    /// Nordsieck array of the degree-k polynomial through the k + 1 start points, at the last.
    pub(super) fn nordsieck_from_points(&mut self) {
        let n = self.n;
        let k = self.s.start_len - 1;
        let tk = self.s.start_t[k];
        let h = tk - self.s.start_t[k - 1];
        // Vandermonde V[i][j] = σ_i^j, σ_i = (t_i − t_k)/h; z = V⁻¹·y by Gaussian elimination
        // with partial pivoting on the (k+1)×(k+1) system, once for all components.
        let m = k + 1;
        let mut a = [[0.0f64; MAX_ORDER + 1]; MAX_ORDER + 1];
        for (i, row) in a.iter_mut().enumerate().take(m) {
            let sigma = (self.s.start_t[i] - tk) / h;
            let mut p = 1.0;
            for v in row.iter_mut().take(m) {
                *v = p;
                p *= sigma;
            }
        }
        // Right-hand sides: rows of start_y, solved in place into zn columns.
        let zn = &mut self.s.zn;
        for (i, chunk) in self.s.start_y.chunks(n).enumerate().take(m) {
            zn[i * n..(i + 1) * n].copy_from_slice(chunk);
        }
        for c in 0..m {
            let p = (c..m)
                .max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))
                .unwrap();
            if p != c {
                a.swap(p, c);
                for i in 0..n {
                    zn.swap(p * n + i, c * n + i);
                }
            }
            for r in c + 1..m {
                let f = a[r][c] / a[c][c];
                if f == 0.0 {
                    continue;
                }
                for j in c..m {
                    a[r][j] -= f * a[c][j];
                }
                for i in 0..n {
                    zn[r * n + i] -= f * zn[c * n + i];
                }
            }
        }
        for c in (0..m).rev() {
            for j in c + 1..m {
                for i in 0..n {
                    zn[c * n + i] -= a[c][j] * zn[j * n + i];
                }
            }
            for i in 0..n {
                zn[c * n + i] /= a[c][c];
            }
        }
        let s = &mut *self.s;
        s.q = k;
        s.qprime = k;
        s.qwait = usize::MAX / 2;
        s.h = h;
        s.hprime = h;
        s.hscale = h;
        s.eta = 1.0;
        s.tau = [0.0; MAX_ORDER + 2];
        for i in 1..=k {
            s.tau[i] = s.start_t[k + 1 - i] - s.start_t[k - i];
        }
        s.tn = tk;
        s.nst = 0;
        s.nstlp = 0;
        s.nstlj = 0;
        s.crate_ = 1.0;
        // The polynomial through the start points is checked before the next attempt.
        self.ws.check_const = true;
    }
}
