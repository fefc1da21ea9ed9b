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
