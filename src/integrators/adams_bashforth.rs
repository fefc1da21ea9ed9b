//! Adams–Bashforth methods of order k = 2..5, started with RK4 steps.
//!
//! The step integrates the polynomial through the last k derivatives (Hairer, Nørsett & Wanner,
//! *Solving ODEs I*, §III.1):  y_{n+1} = y_n + Σ_j β_j·f_{n−j},  β_j = ∫_{t_n}^{t_n+h} ℓ_j(s) ds,
//! with ℓ_j the Lagrange basis on the past times. Computing β from the actual times makes the
//! method valid for any step sequence (the driver shortens steps to land on output times and
//! events); on a uniform grid β are the classical coefficients (AB2: 3/2, −1/2, ...).

use serde::{Deserialize, Serialize};

use super::rk4::Rk4;
use super::{Integrator, SolverError, check_finite, ensure_len};
use crate::ode::OdeSystem;

pub const MAX_ORDER: usize = 5;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdamsBashforth {
    order: usize,
    n: usize,
    /// Times of the stored derivatives, newest first (`len` valid entries).
    times: [f64; MAX_ORDER],
    /// Derivatives, newest first: entry j at `f[j*n..(j+1)*n]`.
    f: Vec<f64>,
    len: usize,
    #[serde(skip)]
    starter: Rk4,
    /// Whether the last attempt was an RK4 starter step.
    starting: bool,
}

impl AdamsBashforth {
    /// `self = o` without allocating once `f` has its size (fmi2SetFMUstate into a running
    /// instance). The RK4 starter is scratch: kept.
    pub(crate) fn assign(&mut self, o: &Self) {
        let AdamsBashforth {
            order,
            n,
            times,
            f,
            len,
            starter: _,
            starting,
        } = self;
        *order = o.order;
        *n = o.n;
        *times = o.times;
        f.clone_from(&o.f);
        *len = o.len;
        *starting = o.starting;
    }

    pub fn new(order: usize, n: usize) -> Self {
        assert!(
            (2..=MAX_ORDER).contains(&order),
            "Adams–Bashforth order 2..5"
        );
        AdamsBashforth {
            order,
            n,
            times: [0.0; MAX_ORDER],
            f: vec![0.0; order * n],
            len: 0,
            starter: Rk4::new(n),
            starting: true,
        }
    }

    fn push(&mut self, t: f64, f_new: &[f64]) {
        let n = self.n;
        let k = self.order;
        // Shift history back by one slot (k ≤ 5, n small: a copy is cheaper than index juggling).
        self.f.copy_within(0..(k - 1) * n, n);
        self.times.copy_within(0..k - 1, 1);
        self.f[..n].copy_from_slice(f_new);
        self.times[0] = t;
        self.len = (self.len + 1).min(k);
    }

    /// Make sure the derivative at (t, y) is the newest history entry.
    fn ensure_current<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
    ) -> Result<(), SolverError> {
        self.starter.ensure(self.n);
        if self.len == 0 || self.times[0] != t {
            self.len = 0;
            let k1 = self.starter.k1_mut();
            sys.rhs(t, y, k1);
            check_finite(t, k1)?;
            let f = std::mem::take(self.starter.k1_mut());
            self.push(t, &f);
            *self.starter.k1_mut() = f;
        }
        Ok(())
    }

    /// β_j/h for the step t_n → t_n + h over the stored times: ∫_0^1 ℓ_j(σ) dσ with the nodes
    /// scaled by h (σ_j = (t_{n−j} − t_n)/h), so the weights are O(1) whatever h is.
    fn weights(&self, h: f64) -> [f64; MAX_ORDER] {
        let k = self.order;
        let mut sigma = [0.0; MAX_ORDER];
        for j in 0..k {
            sigma[j] = (self.times[j] - self.times[0]) / h;
        }
        let mut w = [0.0; MAX_ORDER];
        for j in 0..k {
            // Coefficients of ℓ_j(σ) = Π_{i≠j} (σ − σ_i)/(σ_j − σ_i), lowest power first.
            let mut c = [0.0; MAX_ORDER + 1];
            c[0] = 1.0;
            let mut deg = 0;
            for i in 0..k {
                if i == j {
                    continue;
                }
                let d = sigma[j] - sigma[i];
                // multiply by (σ − σ_i)/d
                for p in (0..=deg + 1).rev() {
                    let shifted = if p > 0 { c[p - 1] } else { 0.0 };
                    c[p] = (shifted - sigma[i] * c[p]) / d;
                }
                deg += 1;
            }
            w[j] = (0..=deg).map(|p| c[p] / (p as f64 + 1.0)).sum();
        }
        w
    }

    fn ab_increment(&self, h: f64, inc: &mut [f64]) {
        let w = self.weights(h);
        let n = self.n;
        inc.fill(0.0);
        for j in 0..self.order {
            let c = h * w[j];
            let f = &self.f[j * n..(j + 1) * n];
            for (d, &fj) in inc.iter_mut().zip(f) {
                *d += c * fj;
            }
        }
    }
}

impl Integrator for AdamsBashforth {
    fn name(&self) -> &'static str {
        ["ab2", "ab3", "ab4", "ab5"][self.order - 2]
    }
    fn order(&self) -> usize {
        self.order
    }
    fn fixed_step(&self) -> bool {
        true
    }
    fn restart(&mut self) {
        self.len = 0;
    }
    fn attempt<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<f64, SolverError> {
        self.ensure_current(sys, t, y)?;
        self.starting = self.len < self.order;
        if self.starting {
            // RK4 start: k1 is the newest history entry.
            let n = self.n;
            self.starter.k1_mut()[..n].copy_from_slice(&self.f[..n]);
            self.starter.step_with_k1(sys, t, y, h, inc)?;
        } else {
            self.ab_increment(h, inc);
        }
        Ok(h)
    }
    fn dense<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        if self.starting {
            self.starter.step_with_k1(sys, t, y, h, inc)
        } else {
            self.ab_increment(h, inc);
            Ok(())
        }
    }
    fn commit<S: OdeSystem>(&mut self, sys: &mut S, t_new: f64, y_new: &[f64]) {
        ensure_len(self.starter.k1_mut(), self.n);
        let mut f = std::mem::take(self.starter.k1_mut());
        sys.rhs(t_new, y_new, &mut f);
        if f.iter().all(|v| v.is_finite()) {
            self.push(t_new, &f);
        } else {
            // Leave the history without this point; the next attempt re-evaluates and reports.
            self.len = 0;
        }
        *self.starter.k1_mut() = f;
    }
    /// Order 2..=5, `n` states, `f` holding `order` derivatives, `len ≤ order`, and the `len`
    /// stored times finite and strictly decreasing (newest first) with finite derivatives.
    fn validate_state(&self, n: usize) -> Result<(), String> {
        if !(2..=MAX_ORDER).contains(&self.order) {
            return Err(format!(
                "Adams–Bashforth order {} (2..={MAX_ORDER})",
                self.order
            ));
        }
        if self.n != n {
            return Err(format!(
                "Adams–Bashforth for {} states, the model has {n}",
                self.n
            ));
        }
        super::check_len("Adams–Bashforth history", &self.f, self.order * n)?;
        if self.len > self.order {
            return Err(format!(
                "Adams–Bashforth holds {} derivatives, order {} keeps at most {}",
                self.len, self.order, self.order
            ));
        }
        let times = &self.times[..self.len];
        super::all_finite("Adams–Bashforth times", times)?;
        if times.windows(2).any(|w| w[0] <= w[1]) {
            return Err("Adams–Bashforth history times are not strictly decreasing".into());
        }
        super::all_finite("Adams–Bashforth history", &self.f[..self.len * n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_weights_are_the_classical_coefficients() {
        // Hairer–Nørsett–Wanner, table III.1.1.
        let classical: [&[f64]; 4] = [
            &[3.0 / 2.0, -1.0 / 2.0],
            &[23.0 / 12.0, -16.0 / 12.0, 5.0 / 12.0],
            &[55.0 / 24.0, -59.0 / 24.0, 37.0 / 24.0, -9.0 / 24.0],
            &[
                1901.0 / 720.0,
                -2774.0 / 720.0,
                2616.0 / 720.0,
                -1274.0 / 720.0,
                251.0 / 720.0,
            ],
        ];
        for (i, c) in classical.iter().enumerate() {
            let k = i + 2;
            let mut ab = AdamsBashforth::new(k, 1);
            let h = 1e-3;
            for j in 0..k {
                ab.times[j] = 0.7 - j as f64 * h;
            }
            ab.len = k;
            let w = ab.weights(h);
            for j in 0..k {
                println!("AB{k} β{j} = {} (classical {})", w[j], c[j]);
                assert!((w[j] - c[j]).abs() < 1e-9, "AB{k} weight {j}");
            }
        }
    }
}
