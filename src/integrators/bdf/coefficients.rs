//! The BDF coefficients of the current step history: ℓ_j and the error constants (CVODE's
//! `cvSetBDF`, `cvSetTqBDF`), and the Nordsieck array's adjustment when the order changes
//! (`cvAdjustOrder`, `cvIncreaseBDF`, `cvDecreaseBDF`).

use super::MAX_ORDER;
use super::history::CoefKey;
use super::step::{NLSCOEF, Step};
use crate::ode::OdeSystem;

impl<S: OdeSystem> Step<'_, S> {
    /// CVODE's cvSetBDF and cvSetTqBDF: ℓ_j and the error constants for the step history.
    #[inline(always)]
    pub(super) fn set_coefficients(&mut self) {
        let s = &mut *self.s;
        let q = s.q;
        let h = s.h;
        let wait1 = s.qwait == 1;
        // f64 equality: a NaN never matches (computed again).
        let uniform = s.tau[1..=q].iter().all(|&t| t == h);
        let k = s.coef_key;
        if !(uniform && k.q == q && k.h == h && (k.with_tq13 || !wait1)) {
            s.coef_key = if uniform {
                CoefKey {
                    q,
                    h,
                    with_tq13: wait1,
                }
            } else {
                CoefKey::default()
            };
            self.compute_coefficients();
        }
        let s = &mut *self.s;
        if s.nst == 0 {
            s.gammap = s.gamma;
        }
        s.gamrat = if s.nst > 0 { s.gamma / s.gammap } else { 1.0 };
    }

    // Out of line: about half the steps skip it (`CoefKey`), and the step stays small.
    // Specialized on the order (a constant argument to the inlined body): its short loops over
    // ℓ unrolled, the same operations in the same order.
    #[inline(never)]
    fn compute_coefficients(&mut self) {
        match self.s.q {
            1 => self.coefficients_of_order(1),
            2 => self.coefficients_of_order(2),
            3 => self.coefficients_of_order(3),
            4 => self.coefficients_of_order(4),
            5 => self.coefficients_of_order(5),
            q => self.coefficients_of_order(q),
        }
    }

    /// `compute_coefficients` at order q (= s.q).
    #[inline(always)]
    fn coefficients_of_order(&mut self, q: usize) {
        let s = &mut *self.s;
        let h = s.h;
        s.l = [0.0; MAX_ORDER + 1];
        s.l[0] = 1.0;
        s.l[1] = 1.0;
        let mut xi_inv = 1.0;
        let mut xistar_inv = 1.0;
        let mut alpha0 = -1.0;
        let mut alpha0_hat = -1.0;
        let mut hsum = h;
        if q > 1 {
            for j in 2..q {
                hsum += s.tau[j - 1];
                xi_inv = h / hsum;
                alpha0 -= 1.0 / j as f64;
                for i in (1..=j).rev() {
                    s.l[i] += s.l[i - 1] * xi_inv;
                }
            }
            alpha0 -= 1.0 / q as f64;
            xistar_inv = -s.l[1] - alpha0;
            hsum += s.tau[q - 1];
            xi_inv = h / hsum;
            alpha0_hat = -s.l[1] - xi_inv;
            for i in (1..=q).rev() {
                s.l[i] += s.l[i - 1] * xistar_inv;
            }
        }
        let qf = q as f64;
        let a1 = 1.0 - alpha0_hat + alpha0;
        let a2 = 1.0 + qf * a1;
        s.tq[2] = (a1 / (alpha0 * a2)).abs();
        s.tq[5] = (a2 * xistar_inv / (s.l[q] * xi_inv)).abs();
        if s.qwait == 1 {
            if q > 1 {
                let c = xistar_inv / s.l[q];
                let a3 = alpha0 + 1.0 / qf;
                let a4 = alpha0_hat + xi_inv;
                let cpinv = (1.0 - a4 + a3) / a3;
                s.tq[1] = (c * cpinv).abs();
            } else {
                s.tq[1] = 1.0;
            }
            hsum += s.tau[q];
            let xi_inv = h / hsum;
            let a5 = alpha0 - 1.0 / (qf + 1.0);
            let a6 = alpha0_hat - xi_inv;
            let cppinv = (1.0 - a6 + a5) / a2;
            s.tq[3] = (cppinv / (xi_inv * (qf + 2.0) * a5)).abs();
        }
        let nlscoef = if self.fixed.is_some() { 0.01 } else { NLSCOEF };
        s.tq[4] = nlscoef / s.tq[2];
        s.rl1 = 1.0 / s.l[1];
        s.gamma = h * s.rl1;
    }

    /// CVODE's cvAdjustOrder for BDF (cvIncreaseBDF / cvDecreaseBDF), before q changes.
    pub(super) fn adjust_order(&mut self, deltaq: i32) {
        let (n, q) = (self.n, self.s.q);
        if q == 2 && deltaq != 1 {
            return;
        }
        let qmax = self.qmax();
        let s = &mut *self.s;
        let mut l = [0.0; MAX_ORDER + 2];
        if deltaq == 1 {
            l[2] = 1.0;
            let mut alpha1 = 1.0;
            let mut prod = 1.0;
            let mut xiold = 1.0;
            let mut alpha0 = -1.0;
            let mut hsum = s.hscale;
            if q > 1 {
                for j in 1..q {
                    hsum += s.tau[j + 1];
                    let xi = hsum / s.hscale;
                    prod *= xi;
                    alpha0 -= 1.0 / (j + 1) as f64;
                    alpha1 += 1.0 / xi;
                    for i in (2..=j + 2).rev() {
                        l[i] = l[i] * xiold + l[i - 1];
                    }
                    xiold = xi;
                }
            }
            let a1 = (-alpha0 - alpha1) / prod;
            // zn[q+1] = A1·Δ (saved in zn[qmax]); zn[j] += ℓ_j·zn[q+1].
            let lcol = q + 1;
            for i in 0..n {
                s.zn[lcol * n + i] = a1 * s.zn[qmax * n + i];
            }
            for j in 2..=q {
                for i in 0..n {
                    s.zn[j * n + i] += l[j] * s.zn[lcol * n + i];
                }
            }
            // A negative A1 makes −0 of a constant state's 0, which the corrector skips (the full
            // one turned it into +0): +0, so that a saved state keeps its bytes.
            for &i in &self.ws.constant {
                s.zn[lcol * n + i] = 0.0;
            }
        } else {
            l[2] = 1.0;
            let mut hsum = 0.0;
            for j in 1..=q.saturating_sub(2) {
                hsum += s.tau[j];
                let xi = hsum / s.hscale;
                for i in (2..=j + 2).rev() {
                    l[i] = l[i] * xi + l[i - 1];
                }
            }
            for j in 2..q {
                for i in 0..n {
                    s.zn[j * n + i] -= l[j] * s.zn[q * n + i];
                }
            }
        }
    }
}
