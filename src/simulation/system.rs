//! What the integrator sees: the network alone, or, with forward-sensitivity parameters, the
//! network's states followed by one sensitivity vector per parameter ([`System`]).

use serde::{Deserialize, Serialize};

use super::Simulation;
use crate::network::{Network, SensitivityParameter};
use crate::ode::{BlockLayout, OdeSystem};

/// The parameters of a forward-sensitivity run (empty: none), as named in the model file and
/// resolved against the network.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sensitivities {
    pub names: Vec<String>,
    pub params: Vec<SensitivityParameter>,
}

/// What the integrator sees: the network's states followed by one sensitivity vector per
/// parameter. ṡ = J·s + ∂f/∂p comes from one dual-number evaluation per parameter
/// ([`Network::sensitivity_rhs`]); the error test covers the sensitivities too (CVODES's
/// `errconS = true`). With no parameters this is the network unchanged.
pub struct System<'a> {
    pub net: &'a mut Network,
    pub params: &'a [SensitivityParameter],
}

impl OdeSystem for System<'_> {
    /// The network's: its states come first.
    const BLOCKS: Option<BlockLayout> = <Network as OdeSystem>::BLOCKS;

    fn dimension(&self) -> usize {
        self.net.layout.n_states * (1 + self.params.len())
    }

    #[inline]
    fn rhs(&mut self, t: f64, y: &[f64], dydt: &mut [f64]) {
        if self.params.is_empty() {
            return OdeSystem::rhs(self.net, t, y, dydt);
        }
        let n = self.net.layout.n_states;
        let (ys, ss) = y.split_at(n);
        let (f, ds) = dydt.split_at_mut(n);
        for (i, p) in self.params.iter().enumerate() {
            let r = i * n..(i + 1) * n;
            self.net
                .sensitivity_rhs(t, ys, &ss[r.clone()], p, f, &mut ds[r]);
        }
    }

    fn sparsity(&self) -> Option<crate::sparsity::Pattern> {
        if self.params.is_empty() {
            self.net.sparsity()
        } else {
            None
        }
    }

    #[inline]
    fn jvp(&mut self, t: f64, y: &[f64], v: &[f64], dydt: &mut [f64], jv: &mut [f64]) -> bool {
        self.params.is_empty() && self.net.jvp(t, y, v, dydt, jv)
    }

    /// The network's walls' swept volumes and accumulators, which come first (their
    /// sensitivities stay in the error test).
    fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
        self.net.quadratures()
    }

    /// The network's, on its own states, which come first (the sensitivity blocks' sums are
    /// conserved too, but not named).
    fn linear_invariants(&self) -> Vec<Vec<usize>> {
        self.net.linear_invariants()
    }
}

/// `$sim.integrator.$method(system, args…)` with the network itself as the system when there
/// are no sensitivity parameters (the plain path is monomorphized on `Network`, exactly as
/// without sensitivities), else the augmented [`System`].
macro_rules! integ {
    ($sim:ident . $method:ident ( $($arg:expr),* $(,)? )) => {
        if $sim.sensitivities.params.is_empty() {
            $sim.integrator.$method(&mut $sim.network, $($arg),*)
        } else {
            $sim.integrator.$method(
                &mut $crate::simulation::System {
                    net: &mut $sim.network,
                    params: &$sim.sensitivities.params,
                },
                $($arg),*
            )
        }
    };
}

impl Simulation {
    /// How many values a BDF Jacobian of this simulation's system holds: over the network's
    /// pattern of M = I − γJ, or, with sensitivity parameters, n² of the augmented [`System`]
    /// (which has no pattern: see its `sparsity`).
    pub fn bdf_jacobian_len(&self) -> usize {
        if self.sensitivities.params.is_empty() {
            crate::integrators::bdf::Bdf::jacobian_len(&self.network)
        } else {
            self.y.len() * self.y.len()
        }
    }
}
