//! The interface between a model and the integrators: an ODE system y' = f(t, y).

/// How a system's leading states come in blocks (`OdeSystem::BLOCKS`): from state 0 on,
/// consecutive blocks of `size` states whose first `live` usually move and whose others are
/// usually constant (a network's chambers: mass, energy and a volume that nothing moves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    /// States per block.
    pub size: usize,
    /// The leading states of each block that usually move (1..=size).
    pub live: usize,
}

impl BlockLayout {
    /// `blocks` when it is usable (1 ≤ live ≤ size), else `None`.
    pub const fn checked(blocks: Option<BlockLayout>) -> Option<BlockLayout> {
        match blocks {
            Some(b) if b.live >= 1 && b.live <= b.size => Some(b),
            _ => None,
        }
    }
}

/// What every integrator sees of a model. Implementations must not allocate in `rhs`.
pub trait OdeSystem {
    /// The block layout of the leading states, if they have one. Only a hint: where the
    /// declared constant states (`constant_states`) are exactly the non-live states of the
    /// leading blocks, an implicit method's vector passes may run block by block instead of
    /// through a list of states (the BDF's Newton passes and the gathers of its direct solve),
    /// with the same results. An associated constant, so that those passes see the block size
    /// as a constant. `None` by default.
    const BLOCKS: Option<BlockLayout> = None;
    /// Number of states.
    fn dimension(&self) -> usize;
    /// Evaluate dy/dt at (t, y) into `dydt`.
    fn rhs(&mut self, t: f64, y: &[f64], dydt: &mut [f64]);
    /// Structural Jacobian pattern (which derivatives depend on which states), if known; implicit
    /// methods then perturb structurally orthogonal columns together. `None`: dense.
    fn sparsity(&self) -> Option<crate::sparsity::Pattern> {
        None
    }
    /// States that are pure quadratures, as up to two ranges: no derivative depends on them
    /// (their columns of the Jacobian are empty) and they feed nothing back, so the adaptive BDF
    /// keeps them out of its error test, as CVODES does by default (`errconQ = false`). Two
    /// ranges and no list, so that asking costs no allocation. Empty by default.
    fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
        [0..0, 0..0]
    }
    /// Structurally constant states: f_i(t, y) = 0 exactly for every (t, y), so their row of the
    /// Jacobian is empty (a chamber's volume that no piston or wall moves, the mass of a
    /// chamber that no flow reaches). The BDF's direct solves leave them out (`Peel`, or on
    /// small systems the small LU's selection), and its vector passes where that pays: their
    /// corrections and higher Nordsieck columns stay exactly 0, so their columns of the
    /// Jacobian (which need not be empty) drop out of the solve. A declared state whose row of
    /// `sparsity` is not empty is stepped as any other. Empty by default.
    fn constant_states(&self) -> Vec<usize> {
        Vec::new()
    }
    /// Linear invariants: sets of states whose sum the system conserves, Σ_{i∈S} f_i(t, y) = 0
    /// for every (t, y) up to round-off (the network's mass: every chamber's mass and the mass
    /// that left). A direct solve of the BDF's Newton systems keeps such sums to round-off; an
    /// iterative one corrects each solution onto them (see `Bdf`'s Krylov path). Empty by
    /// default.
    fn linear_invariants(&self) -> Vec<Vec<usize>> {
        Vec::new()
    }
    /// Exact directional derivative: f(t, y) into `dydt` and J(t, y)·v into `jv`, where
    /// J = ∂f/∂y (forward-mode dual numbers, no truncation error). Returns false when the system
    /// provides none; implicit methods then use finite differences. Must not allocate.
    fn jvp(&mut self, _t: f64, _y: &[f64], _v: &[f64], _dydt: &mut [f64], _jv: &mut [f64]) -> bool {
        false
    }
}
