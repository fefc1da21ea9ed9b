//! Gas chamber: a lumped control volume.
//!
//! State: mass m (kg), internal energy U (J) and volume V (m³). Conservation of mass and energy
//! for an open system with moving boundaries (Cantera, "Reactor" science page; BlasterSim §2):
//!   dm/dt = Σ ṁ_in − Σ ṁ_out
//!   dU/dt = Σ ṁ_in·h_in − Σ ṁ_out·h − p·dV/dt + Q̇_in
//! The volume is carried as a state as well, integrated from the boundary velocities, so that
//! run-time check 9 can compare it with the volume implied by the piston coordinates.

use serde::{Deserialize, Serialize};

use crate::gas::IdealGas;
use crate::units::{Energy, Mass, Pressure, ThermodynamicTemperature, Volume};

use crate::ad::Scalar;
use crate::components::element::{Build, Element, Eval, Slots, Variable};
use crate::components::keys::{Component, Kind};
use crate::units::{Unit, from_si};

crate::declare_kind! {
    /// `[[chamber]]`: a gas volume (state m, U, V).
    kind ChamberSpec = "chamber", Node, gas;
    name: Name;
    /// Dead volume, m³ (pistons add or remove area·x; 0 only with a piston `behind` it).
    volume: Number, volume, Required, NonNegative;
    /// Initial pressure, Pa (absolute).
    pressure: Number, pressure, Required, Absolute;
    /// Initial temperature, K.
    temperature: Number, temperature, Required, Positive;
}

/// Parameters in units-typed quantities (`crate::units`); serialized as their SI values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chamber {
    pub name: String,
    /// Volume when every piston coordinate and wall displacement is zero.
    pub dead_volume: Volume,
    pub initial_pressure: Pressure,
    pub initial_temperature: ThermodynamicTemperature,
}

/// Offsets of one chamber's three states inside the network's state vector.
pub const MASS: usize = 0;
pub const ENERGY: usize = 1;
pub const VOLUME: usize = 2;
pub const STATES: usize = 3;

impl Chamber {
    /// Initial (m, U) for the given initial volume.
    pub fn initial_mass_energy(&self, gas: &IdealGas, volume: Volume) -> (Mass, Energy) {
        let m = gas.mass(self.initial_pressure, volume, self.initial_temperature);
        (m, gas.internal_energy(m, self.initial_temperature))
    }
}

impl Build for ChamberSpec {
    type Component = Chamber;
    fn build(&self, _node: &dyn Fn(&str) -> usize) -> Chamber {
        Chamber {
            name: self.name.clone(),
            dead_volume: from_si(self.volume),
            initial_pressure: from_si(self.pressure),
            initial_temperature: from_si(self.temperature),
        }
    }
}

impl Component for Chamber {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    // Every key fixes the initial state: none changes during a run.
    crate::run_params!();
}

/// A chamber is a node: its states give the node's pressure and temperature, which the network
/// computes before every kind's terms, and its initial state follows from the volumes the
/// boundaries give it (`crate::network`). It has no terms of its own.
impl Element for Chamber {
    const KIND: &'static Kind = &KIND;
    const STATES: usize = STATES;
    const STATE_VARIABLES: &'static [Variable] = &[
        Variable {
            suffix: "m",
            unit: Unit::mass,
            description: "gas mass in {}",
        },
        Variable {
            suffix: "U",
            unit: Unit::energy,
            description: "internal energy of {}",
        },
        Variable {
            suffix: "V",
            unit: Unit::volume,
            description: "volume of {}",
        },
    ];
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        std::iter::empty()
    }

    fn terms<T: Scalar>(_: &[Self], _: &(), _: &Eval<'_, T>, _: &mut [T], _: Slots<'_, T>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::from_si;

    /// Typed parameters serialize as their bare SI numbers: the bytes of a `Chamber` are those
    /// of the raw (name, f64, f64, f64) it replaced, so FMU state blobs and the fuzz corpus keep
    /// their layout.
    #[test]
    fn typed_chamber_serializes_as_the_raw_numbers() {
        let cfg = bincode::config::standard(); // as the FMU state (cosim/mod.rs)
        let typed = Chamber {
            name: "barrel".into(),
            dead_volume: from_si(1.5e-5),
            initial_pressure: from_si(701_325.0),
            initial_temperature: from_si(300.0),
        };
        let raw = ("barrel".to_string(), 1.5e-5_f64, 701_325.0_f64, 300.0_f64);
        let a = bincode::serde::encode_to_vec(&typed, cfg).unwrap();
        let b = bincode::serde::encode_to_vec(&raw, cfg).unwrap();
        println!("typed {} bytes, raw {} bytes", a.len(), b.len());
        assert_eq!(a, b);
        let (back, _): (Chamber, usize) = bincode::serde::decode_from_slice(&b, cfg).unwrap();
        assert_eq!(back, typed);
    }
}
