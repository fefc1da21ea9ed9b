//! Classical fourth-order Runge–Kutta (Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.1).

use serde::{Deserialize, Serialize};

use super::{Integrator, SolverError, ensure_len};
use crate::ode::OdeSystem;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rk4 {
    #[serde(skip)]
    k1: Vec<f64>,
    #[serde(skip)]
    k2: Vec<f64>,
    #[serde(skip)]
    k3: Vec<f64>,
    #[serde(skip)]
    k4: Vec<f64>,
    #[serde(skip)]
    tmp: Vec<f64>,
}

impl Rk4 {
    pub fn new(n: usize) -> Self {
        Rk4 {
            k1: vec![0.0; n],
            k2: vec![0.0; n],
            k3: vec![0.0; n],
            k4: vec![0.0; n],
            tmp: vec![0.0; n],
        }
    }

    /// The increment of one RK4 step, using k1 = f(t, y) already in `self.k1`. Each stage's
    /// finiteness check rides on the pass that reads it next (at 100k states every pass over
    /// an n-vector is a trip to memory beyond L2): the same values and the same errors as
    /// `check_finite` after each evaluation.
    pub(crate) fn step_with_k1<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        let half = 0.5 * h;
        stage(&mut self.tmp, y, &self.k1, half, t)?;
        sys.rhs(t + half, &self.tmp, &mut self.k2);
        stage(&mut self.tmp, y, &self.k2, half, t + half)?;
        sys.rhs(t + half, &self.tmp, &mut self.k3);
        stage(&mut self.tmp, y, &self.k3, h, t + half)?;
        sys.rhs(t + h, &self.tmp, &mut self.k4);
        let sixth = h / 6.0;
        let mut finite = true;
        for ((((d, &a), &b), &c), &e) in inc
            .iter_mut()
            .zip(&self.k1)
            .zip(&self.k2)
            .zip(&self.k3)
            .zip(&self.k4)
        {
            *d = sixth * (a + 2.0 * b + 2.0 * c + e);
            finite &= e.is_finite();
        }
        if !finite {
            return Err(SolverError::NonFinite { t: t + h });
        }
        Ok(())
    }

    pub(crate) fn ensure(&mut self, n: usize) {
        for v in [
            &mut self.k1,
            &mut self.k2,
            &mut self.k3,
            &mut self.k4,
            &mut self.tmp,
        ] {
            ensure_len(v, n);
        }
    }

    pub(crate) fn k1_mut(&mut self) -> &mut Vec<f64> {
        &mut self.k1
    }
}

/// w = y + c·k, and whether k (the stage evaluated at `t_k`) is finite: `check_finite`'s error.
#[inline]
fn stage(w: &mut [f64], y: &[f64], k: &[f64], c: f64, t_k: f64) -> Result<(), SolverError> {
    let mut finite = true;
    for ((w, &y0), &k) in w.iter_mut().zip(y).zip(k) {
        *w = y0 + c * k;
        finite &= k.is_finite();
    }
    if finite {
        Ok(())
    } else {
        Err(SolverError::NonFinite { t: t_k })
    }
}

impl Integrator for Rk4 {
    fn name(&self) -> &'static str {
        "rk4"
    }
    fn order(&self) -> usize {
        4
    }
    fn fixed_step(&self) -> bool {
        true
    }
    fn restart(&mut self) {}
    fn attempt<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<f64, SolverError> {
        self.ensure(y.len());
        sys.rhs(t, y, &mut self.k1);
        // k1's finiteness is checked in `step_with_k1`'s first pass.
        self.step_with_k1(sys, t, y, h, inc)?;
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
        // k1 = f(t, y) does not depend on h: reuse it from the attempt.
        self.step_with_k1(sys, t, y, h, inc)
    }
    fn commit<S: OdeSystem>(&mut self, _sys: &mut S, _t_new: f64, _y_new: &[f64]) {}
    /// Nothing of RK4's is stored (its stages are scratch): every restored value fits.
    fn validate_state(&self, _n: usize) -> Result<(), String> {
        Ok(())
    }
}
