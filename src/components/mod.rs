//! One file per component kind: its model-file keys (declared once, [`keys`]), its parameters,
//! its equations and what it is to the network ([`element::Element`]: its states, terms,
//! events and outputs). The network (`crate::network`) holds one list per kind of the registry
//! ([`crate::with_kinds!`]) and assembles them into one state vector and one right-hand side.

pub mod ambient_heat;
pub mod chamber;
pub mod cushion;
pub mod directional_valve;
pub mod element;
pub mod flow_control;
pub mod flow_table;
pub mod inertance_valve;
pub mod inertial_tube;
pub mod keys;
pub mod lagged_valve;
pub mod mass_flow;
pub mod orifice;
mod orifice_checks;
mod orifice_link;
pub mod pilot_check;
pub mod piston;
pub mod poppet_table;
pub mod quick_exhaust;
pub mod rating;
pub mod ratio_kinks;
pub mod regulator;
pub mod reservoir;
pub mod restrictor;
pub mod shuttle_valve;
pub mod tube;
pub mod valve;
pub mod wall;

use keys::Kind;

/// The registry of component kinds, one line each, in the model file's order (which is also
/// the order of the FMU's parameters, of the states and of the events): `kind => Spec`, where
/// `kind` is the `[[kind]]` name and the module `crate::components::kind`, which declares
/// `KIND` and `Spec` with [`crate::declare_kind!`] and implements [`element::Build`] for the
/// spec and [`element::Element`] for the component it builds. Calls
/// `$then! { args... kind => Spec, ... }` (`args`: any tokens after `$then`, passed first).
#[macro_export]
#[doc(hidden)]
macro_rules! with_kinds {
    ($then:ident $($args:tt)*) => {
        $then! {
            $($args)*
            chamber => ChamberSpec,
            reservoir => ReservoirSpec,
            orifice => OrificeSpec,
            valve => ValveSpec,
            piston => PistonSpec,
            wall => WallSpec,
            mass_flow => MassFlowSpec,
            restrictor => RestrictorSpec,
            tube => TubeSpec,
            inertial_tube => InertialTubeSpec,
            inertance_valve => InertanceValveSpec,
            regulator => RegulatorSpec,
            directional_valve => DirectionalValveSpec,
            lagged_valve => LaggedValveSpec,
            ambient_heat => AmbientHeatSpec,
            flow_control => FlowControlSpec,
            shuttle_valve => ShuttleValveSpec,
            quick_exhaust => QuickExhaustSpec,
            pilot_check => PilotCheckSpec,
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
    const EVERY_KIND: &str = include_str!("../../tests/fixtures/models/every_kind.toml");

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
                    "o" | "check" => {
                        ["sonic_conductance", "critical_pressure_ratio"].contains(&key.name)
                    }
                    "iso" => ["area", "discharge_coefficient"].contains(&key.name),
                    _ => false,
                };
                // A cushion's needle is a parameter of a cushioned end only.
                let no_cushion =
                    cushion::NEEDLE_KEYS.contains(&key.name) && spec.value(key.name).is_none();
                let want = key.settable_during_run() && !other_form && !no_cushion;
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
                    // Its own value back: no change for a constant; a table becomes one.
                    let constant = matches!(
                        net.component(&name).unwrap().param(key.name),
                        Some(crate::param::ParamValue::Const(_))
                    );
                    let v = found.unwrap();
                    assert_eq!(net.set_scalar(&name, key.name, v), Ok(!constant));
                }
                checked += 1;
            }
        }
        kinds_seen.dedup();
        let registry: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
        println!("{checked} keys; kinds in file order {kinds_seen:?}");
        assert_eq!(kinds_seen, registry);
    }

    /// Every kind of the role of a link answers as a link (its flow is a `<name>.mdot`), and
    /// no other does; the named links are the flow slots of those kinds, in link order.
    #[test]
    fn links_are_the_kinds_of_link_roles() {
        use element::Element;
        use keys::Role;
        let model = crate::model::parse_str(EVERY_KIND, "every_kind.toml", &[]).unwrap();
        let net = crate::model::build_network(&model.spec);
        macro_rules! check {
            ($($kind:ident => $Spec:ident),* $(,)?) => {$({
                type K = <$kind::$Spec as element::Build>::Component;
                let link = matches!(K::KIND.role, Role::Link | Role::LiquidLink);
                for x in net.of::<K>() {
                    println!("{} `{}`: role {:?}, a link: {}", K::KIND.name, keys::Component::name(x), K::KIND.role,
                        x.as_link().is_some());
                    assert_eq!(x.as_link().is_some(), link, "{}", keys::Component::name(x));
                }
            })*};
        }
        crate::with_kinds!(check);
        let names = net.named_links();
        println!("named links {names:?}, {} flow slots", net.n_links());
        assert_eq!(names.len(), net.n_named_links());
        let links: Vec<&str> = model
            .spec
            .components()
            .into_iter()
            .filter(|(_, c)| matches!(c.kind().role, Role::Link | Role::LiquidLink))
            .map(|(_, c)| c.name())
            .collect();
        assert_eq!(names, links);
        // The pistons' bores after the named links.
        assert_eq!(net.n_links(), links.len() + net.pistons().len());
    }

    /// No output suffix is discrete for one kind and continuous for another (the FMU's
    /// variability is read off the name: `crate::variables::is_discrete_output`), and the
    /// discrete outputs of a network are those the kinds declare, by index and by name alike.
    #[test]
    fn discrete_outputs_are_declared() {
        use element::{Element, Output};
        let mut suffixes: Vec<(&str, bool)> = Vec::new();
        macro_rules! collect {
            ($($kind:ident => $Spec:ident),* $(,)?) => {$({
                type K = <$kind::$Spec as element::Build>::Component;
                for o in K::OUTPUTS {
                    let (v, discrete) = match o {
                        Output::State(s) => (K::STATE_VARIABLES[*s], false),
                        Output::Flag(v) => (*v, true),
                        Output::Extra { variable, discrete } => (*variable, *discrete),
                    };
                    suffixes.push((v.suffix, discrete));
                }
            })*};
        }
        crate::with_kinds!(collect);
        println!("outputs by suffix: {suffixes:?}");
        for &(a, da) in &suffixes {
            for &(b, db) in &suffixes {
                assert!(
                    a != b || da == db,
                    "`{a}` is discrete for one kind, not another"
                );
            }
        }
        let model = crate::model::parse_str(EVERY_KIND, "every_kind.toml", &[]).unwrap();
        let net = crate::model::build_network(&model.spec);
        let outputs = crate::variables::output_variables_of(&net);
        let by_index = crate::variables::discrete_outputs(&net);
        assert_eq!(outputs.len(), by_index.len());
        let discrete: Vec<&str> = outputs
            .iter()
            .zip(&by_index)
            .filter(|(_, d)| **d)
            .map(|(o, _)| o.name.as_str())
            .collect();
        println!("discrete outputs: {discrete:?}");
        assert_eq!(
            discrete,
            ["p.exited", "rc", "o.choked", "iso.choked", "check.choked"]
        );
        for (o, d) in outputs.iter().zip(&by_index) {
            assert_eq!(
                crate::variables::is_discrete_output(&o.name),
                *d,
                "{}",
                o.name
            );
        }
    }

    /// The every-kind model holds a component of every kind of the registry.
    #[test]
    fn the_every_kind_model_has_every_kind() {
        let model = crate::model::parse_str(EVERY_KIND, "every_kind.toml", &[]).unwrap();
        for kind in KINDS {
            let n = model
                .spec
                .components()
                .iter()
                .filter(|(_, c)| c.kind().name == kind.name)
                .count();
            println!("{}: {n}", kind.name);
            assert!(
                n > 0,
                "tests/fixtures/models/every_kind.toml has no {}",
                kind.name
            );
        }
    }
}
