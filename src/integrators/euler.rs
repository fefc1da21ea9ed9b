//! Forward Euler: Δy = h·f(t_n, y_n). Order 1.

use serde::{Deserialize, Serialize};

use super::{Integrator, SolverError, check_finite, ensure_len};
use crate::ode::OdeSystem;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Euler {
    #[serde(skip)]
    f: Vec<f64>,
}

impl Euler {
    pub fn new(n: usize) -> Self {
        Euler { f: vec![0.0; n] }
    }
}

impl Integrator for Euler {
    fn name(&self) -> &'static str {
        "euler"
    }
    fn order(&self) -> usize {
        1
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
        ensure_len(&mut self.f, y.len());
        sys.rhs(t, y, &mut self.f);
        check_finite(t, &self.f)?;
        for (d, &f) in inc.iter_mut().zip(&self.f) {
            *d = h * f;
        }
        Ok(h)
    }
    fn dense<S: OdeSystem>(
        &mut self,
        _sys: &mut S,
        _t: f64,
        _y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        // f(t_n, y_n) from the attempt is still valid: Euler's dense output is exact for it.
        for (d, &f) in inc.iter_mut().zip(&self.f) {
            *d = h * f;
        }
        Ok(())
    }
    fn commit<S: OdeSystem>(&mut self, _sys: &mut S, _t_new: f64, _y_new: &[f64]) {}
    /// Nothing of Euler's is stored (its derivative is scratch): every restored value fits.
    fn validate_state(&self, _n: usize) -> Result<(), String> {
        Ok(())
    }
}
