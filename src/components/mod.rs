//! One file per component kind: its parameters and its equations. The network
//! (`crate::network`) owns the state layout and calls these to assemble the right-hand side.

pub mod chamber;
pub mod inertance_valve;
pub mod mass_flow;
pub mod orifice;
pub mod piston;
pub mod reservoir;
pub mod restrictor;
pub mod tube;
pub mod valve;
pub mod wall;

pub use chamber::Chamber;
pub use inertance_valve::InertanceValve;
pub use mass_flow::MassFlow;
pub use orifice::{Orifice, OrificeForm};
pub use piston::Piston;
pub use reservoir::Reservoir;
pub use restrictor::Restrictor;
pub use tube::Tube;
pub use valve::Valve;
pub use wall::Wall;

/// Thermodynamic state of a node as the links see it (`T`: f64 or a dual number, see
/// [`crate::ad`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeState<T = f64> {
    pub pressure_pa: T,
    pub temperature_k: T,
}
