//! One file per component kind: its model-file keys (declared once, [`keys`]), its parameters
//! and its equations. The network (`crate::network`) owns the state layout and calls these to
//! assemble the right-hand side.

pub mod chamber;
pub mod inertance_valve;
pub mod keys;
pub mod mass_flow;
pub mod orifice;
pub mod piston;
pub mod reservoir;
pub mod restrictor;
pub mod tube;
pub mod valve;
pub mod wall;

use keys::Kind;

/// The registry of component kinds, one line each, in the model file's order (which is also
/// the order of the FMU's parameters): `kind => Spec`, where `kind` is the `[[kind]]` name and
/// the module `crate::components::kind`, which declares `KIND` and `Spec` with
/// [`crate::declare_kind!`]. Calls `$then! { kind => Spec, ... }`.
#[macro_export]
#[doc(hidden)]
macro_rules! with_kinds {
    ($then:ident) => {
        $then! {
            chamber => ChamberSpec,
            reservoir => ReservoirSpec,
            orifice => OrificeSpec,
            valve => ValveSpec,
            piston => PistonSpec,
            wall => WallSpec,
            mass_flow => MassFlowSpec,
            restrictor => RestrictorSpec,
            tube => TubeSpec,
            inertance_valve => InertanceValveSpec,
        }
    };
}

macro_rules! kinds_table {
    ($($kind:ident => $Spec:ident),* $(,)?) => {
        /// Every component kind's key table, in the registry's order.
        pub const KINDS: &[&Kind] = &[$(&$kind::KIND),*];
    };
}
with_kinds!(kinds_table);

/// The kind named `name` (`"chamber"`).
pub fn kind(name: &str) -> Option<&'static Kind> {
    KINDS.iter().copied().find(|k| k.name == name)
}

/// The keys that may change during a run, kind by kind, in words (for messages):
/// `reservoir pressure, temperature; orifice area, ...`.
pub fn settable_during_run() -> String {
    KINDS
        .iter()
        .filter_map(|k| {
            let keys: Vec<&str> = k
                .keys
                .iter()
                .filter(|key| key.settable_during_run())
                .map(|key| key.name)
                .collect();
            (!keys.is_empty()).then(|| format!("{} {}", k.name, keys.join(", ")))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

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
