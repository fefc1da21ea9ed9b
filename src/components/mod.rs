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

#[cfg(test)]
mod tests {
    use super::*;

    /// A model with a component of every kind, the orifice in both forms.
    const EVERY_KIND: &str = r#"
[model]
name = "every_kind"
[gas]
species = "air"
[solver]
method = "rk4"
step = 1e-6
t_end = 1e-3
[[chamber]]
name = "c"
volume = 1e-3
pressure = 2e5
temperature = 300.0
[[chamber]]
name = "d"
volume = 0.0
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "r"
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "la"
pressure = 0.0
temperature = 300.0
[[reservoir]]
name = "lb"
pressure = 100.0
temperature = 300.0
[[orifice]]
name = "o"
from = "c"
to = "r"
area = 1e-6
[[orifice]]
name = "iso"
from = "c"
to = "r"
sonic_conductance = 1e-9
critical_pressure_ratio = 0.3
[[valve]]
name = "v"
from = "c"
to = "r"
coefficient = 1e-9
[[piston]]
name = "p"
behind = "d"
ahead = "r"
area = 1e-4
mass = 0.01
x0 = 0.1
[[wall]]
name = "w"
left = "c"
right = "r"
area = 1e-3
[[mass_flow]]
name = "m"
from = "r"
to = "c"
rate = 1e-4
[[restrictor]]
name = "x"
from = "c"
to = "r"
diameter = 1e-3
k = 1.0
[[tube]]
name = "t"
from = "c"
to = "r"
length = 1.0
diameter = 1e-3
[[inertance_valve]]
name = "i"
from = "la"
to = "lb"
density = 1000.0
area_open = 1e-4
area_leak = 1e-6
area_from = 1e-3
area_to = 1e-3
length = 0.01
"#;

    /// The parameters a built component lets change during a run are exactly the keys its kind
    /// declares as settable during a run (an orifice: those of its own form), found by the
    /// shared and the mutable lookup alike; and the model file's component lists are the
    /// registry's kinds.
    #[test]
    fn run_time_parameters_are_the_declared_ones() {
        let model = crate::model::parse_str(EVERY_KIND, "every_kind.toml", &[]).unwrap();
        let mut net = crate::model::build_network(&model.spec);
        let mut kinds_seen = Vec::new();
        let mut checked = 0;
        for (_, spec) in model.spec.components() {
            let kind = spec.kind();
            kinds_seen.push(kind.name);
            let name = spec.name().to_string();
            for key in kind.keys {
                let other_form = match name.as_str() {
                    "o" => ["sonic_conductance", "critical_pressure_ratio"].contains(&key.name),
                    "iso" => ["area", "discharge_coefficient"].contains(&key.name),
                    _ => false,
                };
                let want = key.settable_during_run() && !other_form;
                let shared = net
                    .component(&name)
                    .unwrap()
                    .param(key.name)
                    .map(|p| p as *const _);
                let found = net.get_scalar(&name, key.name, 0.0);
                println!(
                    "{} {name}.{}: settable during a run {want}, found {:?}",
                    kind.name, key.name, found
                );
                assert_eq!(shared.is_some(), want, "{name}.{}", key.name);
                assert_eq!(found.is_some(), want, "{name}.{}", key.name);
                if want {
                    let v = found.unwrap();
                    assert_eq!(net.set_scalar(&name, key.name, v), Ok(false));
                }
                checked += 1;
            }
        }
        kinds_seen.dedup();
        let registry: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
        println!("{checked} keys; kinds in file order {kinds_seen:?}");
        assert_eq!(kinds_seen, registry);
    }
}
