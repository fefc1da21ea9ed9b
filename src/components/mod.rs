//! One file per component kind: its parameters and its equations. The network
//! (`crate::network`) owns the state layout and calls these to assemble the right-hand side.

pub mod chamber;
pub mod orifice;
pub mod piston;
pub mod reservoir;
pub mod valve;
pub mod wall;

pub use chamber::Chamber;
pub use orifice::Orifice;
pub use piston::Piston;
pub use reservoir::Reservoir;
pub use valve::Valve;
pub use wall::Wall;

/// Thermodynamic state of a node as the links see it.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeState {
    pub pressure_pa: f64,
    pub temperature_k: f64,
}
