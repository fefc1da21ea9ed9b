//! Ideal gas with constant specific heats (calorically perfect gas).
//!
//! Internal energy is measured from T = 0 K: u = cv·T, h = cp·T, so that U = m·cv·T and
//! p = (γ − 1)·U / V hold exactly (Anderson, *Modern Compressible Flow*, §1.4).

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::units::{
    Energy, Mass, Pressure, SpecificHeatCapacity, ThermodynamicTemperature, Volume, from_si,
};

/// Universal gas constant, J/(mol·K) (CODATA 2018, exact).
pub const R_UNIVERSAL_J_PER_MOL_K: f64 = 8.314_462_618;

/// One entry of the built-in species table.
#[derive(Clone, Copy, Debug)]
pub struct Species {
    pub name: &'static str,
    pub molar_mass_kg_per_mol: f64,
    /// Isobaric specific heat at 300 K, J/(kg·K).
    pub cp_j_per_kg_k: f64,
    pub p_critical_pa: f64,
    pub t_critical_k: f64,
}

/// Built-in species. Molar masses from IUPAC; cp at 300 K and critical points from the NIST
/// Chemistry WebBook (diatomics taken as cp = 7/2·R, monatomics as 5/2·R, so γ is 1.4 and 5/3).
pub const SPECIES: &[Species] = &[
    Species {
        name: "air",
        molar_mass_kg_per_mol: R_UNIVERSAL_J_PER_MOL_K / 287.05,
        cp_j_per_kg_k: 1004.675,
        p_critical_pa: 3.786e6,
        t_critical_k: 132.53,
    },
    Species {
        name: "N2",
        molar_mass_kg_per_mol: 0.028_013_4,
        cp_j_per_kg_k: 3.5 * R_UNIVERSAL_J_PER_MOL_K / 0.028_013_4,
        p_critical_pa: 3.3958e6,
        t_critical_k: 126.192,
    },
    Species {
        name: "O2",
        molar_mass_kg_per_mol: 0.031_998_8,
        cp_j_per_kg_k: 3.5 * R_UNIVERSAL_J_PER_MOL_K / 0.031_998_8,
        p_critical_pa: 5.0430e6,
        t_critical_k: 154.581,
    },
    Species {
        name: "Ar",
        molar_mass_kg_per_mol: 0.039_948,
        cp_j_per_kg_k: 2.5 * R_UNIVERSAL_J_PER_MOL_K / 0.039_948,
        p_critical_pa: 4.863e6,
        t_critical_k: 150.687,
    },
    Species {
        name: "He",
        molar_mass_kg_per_mol: 0.004_002_602,
        cp_j_per_kg_k: 2.5 * R_UNIVERSAL_J_PER_MOL_K / 0.004_002_602,
        p_critical_pa: 0.2276e6,
        t_critical_k: 5.1953,
    },
    Species {
        name: "H2",
        molar_mass_kg_per_mol: 0.002_015_88,
        cp_j_per_kg_k: 14_307.0,
        p_critical_pa: 1.2964e6,
        t_critical_k: 33.145,
    },
    Species {
        name: "CO2",
        molar_mass_kg_per_mol: 0.044_009_5,
        cp_j_per_kg_k: 846.0,
        p_critical_pa: 7.3773e6,
        t_critical_k: 304.1282,
    },
];

/// Look a species up by name (case-sensitive, as written in the table).
pub fn species(name: &str) -> Option<&'static Species> {
    SPECIES.iter().find(|s| s.name == name)
}

/// A calorically perfect gas, with the powers of γ that the flow equations need precomputed
/// once so the right-hand side calls no more `powf` than it must. The constructor and the
/// state queries take and return typed quantities (`crate::units`); the fields are the raw SI
/// numbers the generic right-hand side reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdealGas {
    pub r_j_per_kg_k: f64,
    pub cp_j_per_kg_k: f64,
    pub cv_j_per_kg_k: f64,
    pub gamma: f64,
    pub p_critical_pa: Option<f64>,
    pub t_critical_k: Option<f64>,
    /// Critical (choking) pressure ratio (2/(γ+1))^(γ/(γ−1)).
    pub critical_pressure_ratio: f64,
    /// (2/(γ+1))^((γ+1)/(2(γ−1))), the choked-flow factor.
    pub choked_factor: f64,
}

impl IdealGas {
    pub fn new(
        r: SpecificHeatCapacity,
        cp: SpecificHeatCapacity,
        p_critical: Option<Pressure>,
        t_critical: Option<ThermodynamicTemperature>,
    ) -> Self {
        let (r_j_per_kg_k, cp_j_per_kg_k) = (r.value, cp.value);
        let cv = cp_j_per_kg_k - r_j_per_kg_k;
        let gamma = cp_j_per_kg_k / cv;
        let base = 2.0 / (gamma + 1.0);
        IdealGas {
            r_j_per_kg_k,
            cp_j_per_kg_k,
            cv_j_per_kg_k: cv,
            gamma,
            p_critical_pa: p_critical.map(|p| p.value),
            t_critical_k: t_critical.map(|t| t.value),
            critical_pressure_ratio: base.powf(gamma / (gamma - 1.0)),
            choked_factor: base.powf((gamma + 1.0) / (2.0 * (gamma - 1.0))),
        }
    }

    pub fn from_species(s: &Species) -> Self {
        IdealGas::new(
            from_si(R_UNIVERSAL_J_PER_MOL_K / s.molar_mass_kg_per_mol),
            from_si(s.cp_j_per_kg_k),
            Some(from_si(s.p_critical_pa)),
            Some(from_si(s.t_critical_k)),
        )
    }

    /// p = (γ − 1)·U/V, Pa, evaluated as U·((γ − 1)/V): in the right-hand side the division
    /// waits for V only, which the integrators' stages form before U (V's derivative is a
    /// constant 0 for a rigid chamber), so U, the last to arrive on the stages' dependent
    /// chain, meets a product, not a division (the vent's default solve −8 % in time).
    #[inline]
    pub fn pressure_pa<T: Scalar>(&self, internal_energy_j: T, volume_m3: T) -> T {
        internal_energy_j * (c::<T>(self.gamma - 1.0) / volume_m3)
    }

    /// T = U/(m·cv), K, evaluated as U·(1/(m·cv)) for the reason of [`Self::pressure_pa`] (m's
    /// derivative comes before the energy's enthalpy product).
    #[inline]
    pub fn temperature_k<T: Scalar>(&self, mass_kg: T, internal_energy_j: T) -> T {
        internal_energy_j * (c::<T>(1.0) / (mass_kg * self.cv_j_per_kg_k))
    }

    /// m = p·V/(R·T).
    #[inline]
    pub fn mass(
        &self,
        pressure: Pressure,
        volume: Volume,
        temperature: ThermodynamicTemperature,
    ) -> Mass {
        from_si(pressure.value * volume.value / (self.r_j_per_kg_k * temperature.value))
    }

    /// U = m·cv·T.
    #[inline]
    pub fn internal_energy(&self, mass: Mass, temperature: ThermodynamicTemperature) -> Energy {
        from_si(mass.value * self.cv_j_per_kg_k * temperature.value)
    }

    /// p = (γ − 1)·U/V of a chamber's state, typed ([`Self::pressure_pa`] in the right-hand side).
    pub fn pressure(&self, internal_energy: Energy, volume: Volume) -> Pressure {
        from_si(self.pressure_pa(internal_energy.value, volume.value))
    }

    /// T = U/(m·cv) of a chamber's state, typed ([`Self::temperature_k`] in the right-hand side).
    pub fn temperature(&self, mass: Mass, internal_energy: Energy) -> ThermodynamicTemperature {
        from_si(self.temperature_k(mass.value, internal_energy.value))
    }

    /// Specific enthalpy h = cp·T, J/kg.
    #[inline]
    pub fn enthalpy_j_per_kg<T: Scalar>(&self, temperature_k: T) -> T {
        temperature_k * self.cp_j_per_kg_k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn air_is_gamma_1_4_and_critical_ratio_is_textbook() {
        let air = IdealGas::from_species(species("air").unwrap());
        println!(
            "air: R = {} cp = {} γ = {}",
            air.r_j_per_kg_k, air.cp_j_per_kg_k, air.gamma
        );
        assert!((air.r_j_per_kg_k - 287.05).abs() < 1e-9);
        assert!((air.gamma - 1.4).abs() < 1e-3);
        // Anderson, Modern Compressible Flow, table A.1: p*/p0 = 0.5283 at γ = 1.4.
        let n2 = IdealGas::from_species(species("N2").unwrap());
        assert!((n2.gamma - 1.4).abs() < 1e-12);
        assert!((n2.critical_pressure_ratio - 0.528_281_787_717_174_4).abs() < 1e-12);
        let ar = IdealGas::from_species(species("Ar").unwrap());
        assert!((ar.gamma - 5.0 / 3.0).abs() < 1e-12);
    }

    /// The typed queries invert each other: m(p, V, T) then U(m, T) then p(U, V), T(m, U) give
    /// back p and T (p = (γ−1)·U/V = (γ−1)·m·cv·T/V = R·m·T/V since cp − cv = R).
    #[test]
    fn typed_state_queries_round_trip() {
        use crate::units::si::{cubic_meter, joule, kelvin, kilogram, pascal};
        let air = IdealGas::from_species(species("air").unwrap());
        let (p, v, t) = (
            Pressure::new::<pascal>(3.0e5),
            Volume::new::<cubic_meter>(2.0e-3),
            ThermodynamicTemperature::new::<kelvin>(310.0),
        );
        let m = air.mass(p, v, t);
        let u = air.internal_energy(m, t);
        println!(
            "m = {} kg, U = {} J, p = {} Pa, T = {} K",
            m.get::<kilogram>(),
            u.get::<joule>(),
            air.pressure(u, v).get::<pascal>(),
            air.temperature(m, u).get::<kelvin>()
        );
        assert!((m.get::<kilogram>() - 3.0e5 * 2.0e-3 / (287.05 * 310.0)).abs() < 1e-15);
        assert!((air.pressure(u, v).get::<pascal>() - 3.0e5).abs() < 1e-9);
        assert!((air.temperature(m, u).get::<kelvin>() - 310.0).abs() < 1e-12);
    }
}
