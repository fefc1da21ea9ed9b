//! The interface between a model and the integrators: an ODE system y' = f(t, y).

/// What every integrator sees of a model. Implementations must not allocate in `rhs`.
pub trait OdeSystem {
    /// Number of states.
    fn dimension(&self) -> usize;
    /// Evaluate dy/dt at (t, y) into `dydt`.
    fn rhs(&mut self, t: f64, y: &[f64], dydt: &mut [f64]);
    /// Structural Jacobian pattern (which derivatives depend on which states), if known; implicit
    /// methods then perturb structurally orthogonal columns together. `None`: dense.
    fn sparsity(&self) -> Option<crate::sparsity::Pattern> {
        None
    }
}
