//! The physical state read back from a simulation: chambers, pistons and totals, as raw SI
//! numbers (the output table's path) and as typed quantities.

use super::Simulation;
use crate::components::{chamber, piston};
use crate::ode::OdeSystem;
use crate::units::{
    Energy, Length, Mass, Pressure, ThermodynamicTemperature, Velocity, Volume, from_si,
};

impl Simulation {
    /// Piston position and velocity.
    pub fn piston_state(&self, j: usize) -> (f64, f64) {
        let o = self.network.layout.first::<crate::components::Piston>() + j * piston::STATES;
        (self.y[o + piston::POSITION], self.y[o + piston::VELOCITY])
    }

    /// Chamber (p, T, m, V, U) at the current state.
    pub fn chamber_state(&self, i: usize) -> [f64; 5] {
        let o = i * chamber::STATES;
        let (m, u, v) = (
            self.y[o + chamber::MASS],
            self.y[o + chamber::ENERGY],
            self.y[o + chamber::VOLUME],
        );
        let gas = &self.network.gas;
        if let Some((p, t)) = self.start_pressure_temperature(i, m, u, v) {
            return [p, t, m, v, u];
        }
        [gas.pressure_pa(u, v), gas.temperature_k(m, u), m, v, u]
    }

    /// Chamber `i`'s pressure and temperature as the model (or a master) set them, while no step
    /// has been taken and its state is still exactly the (m, U) they give at its volume: read
    /// back through m and U they would be off by round-off (1e6 Pa → 999999.9999999998 Pa).
    /// In exact arithmetic the two agree, so only the start row changes.
    fn start_pressure_temperature(&self, i: usize, m: f64, u: f64, v: f64) -> Option<(f64, f64)> {
        if self.stats.steps != 0 {
            return None;
        }
        let c = &self.network.chambers()[i];
        let (m0, u0) = c.initial_mass_energy(&self.network.gas, from_si(v));
        (m0.value.to_bits() == m.to_bits() && u0.value.to_bits() == u.to_bits())
            .then_some((c.initial_pressure.value, c.initial_temperature.value))
    }

    /// Chamber `i`'s state as typed quantities (the `[f64; 5]` of [`Self::chamber_state`] is what
    /// the output table reads).
    pub fn chamber(&self, i: usize) -> ChamberQuantities {
        let [p, t, m, v, u] = self.chamber_state(i);
        ChamberQuantities {
            pressure: from_si(p),
            temperature: from_si(t),
            mass: from_si(m),
            volume: from_si(v),
            internal_energy: from_si(u),
        }
    }

    /// Piston `j`'s position and velocity, typed.
    pub fn piston(&self, j: usize) -> (Length, Velocity) {
        let (x, v) = self.piston_state(j);
        (from_si(x), from_si(v))
    }

    /// Gas mass plus the net mass that left into reservoirs (output `mass_total`), typed.
    pub fn mass_total(&self) -> Mass {
        from_si(self.network.mass_total_kg(&self.y))
    }

    /// The closed energy balance (output `energy_total`), typed.
    pub fn energy_total(&self) -> Energy {
        from_si(self.network.energy_total_j(&self.y))
    }

    /// Refresh link flows for the current state (an output evaluation, not counted as work).
    pub fn refresh_flows(&mut self) {
        self.ensure_scratch();
        let count = self.network.rhs_evaluations;
        let n = self.network.layout.n_states;
        let mut dy = std::mem::take(&mut self.dy);
        self.network.rhs(self.t_s, &self.y[..n], &mut dy[..n]);
        self.dy = dy;
        self.network.rhs_evaluations = count;
    }
}

/// A chamber's state as typed quantities ([`Simulation::chamber`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChamberQuantities {
    pub pressure: Pressure,
    pub temperature: ThermodynamicTemperature,
    pub mass: Mass,
    pub volume: Volume,
    pub internal_energy: Energy,
}

#[cfg(test)]
mod typed_query_tests {
    use crate::units::si::{cubic_meter, kelvin, kilogram, meter, meter_per_second, pascal};

    /// The typed queries of the shipped projectile at t = 0 against the model file's numbers:
    /// p and T as written, V = A·x0 (dead volume 0), m = p·V/(R·T) with R of air 287.05.
    #[test]
    fn typed_queries_of_the_projectile_match_the_model_file() {
        let src = include_str!("../../models/projectile.toml");
        let model = crate::model::parse_str(src, "projectile.toml", &[]).unwrap();
        let sim = crate::model::build_simulation(&model.spec, None).unwrap();
        let c = sim.chamber(0);
        let v = 1.130_973_355_292_325_5e-4 * 0.1;
        let m = 701_325.0 * v / (287.05 * 300.0);
        println!(
            "p = {} Pa, T = {} K, V = {} m3 (A·x0 = {v}), m = {} kg (pV/RT = {m})",
            c.pressure.get::<pascal>(),
            c.temperature.get::<kelvin>(),
            c.volume.get::<cubic_meter>(),
            c.mass.get::<kilogram>()
        );
        assert!((c.pressure.get::<pascal>() - 701_325.0).abs() < 1e-6);
        assert!((c.temperature.get::<kelvin>() - 300.0).abs() < 1e-9);
        assert!((c.volume.get::<cubic_meter>() - v).abs() < 1e-18);
        assert!((c.mass.get::<kilogram>() - m).abs() < 1e-15);
        let (x, vel) = sim.piston(0);
        assert_eq!(
            (x.get::<meter>(), vel.get::<meter_per_second>()),
            (0.1, 0.0)
        );
        // Nothing has left yet: the total is the chamber's gas.
        assert!((sim.mass_total().get::<kilogram>() - m).abs() < 1e-15);
    }
}
