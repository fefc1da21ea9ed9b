//! Ideal gas with constant specific heats (calorically perfect gas).
//!
//! Internal energy is measured from T = 0 K: u = cv·T, h = cp·T, so that U = m·cv·T and
//! p = (γ − 1)·U / V hold exactly (Anderson, *Modern Compressible Flow*, §1.4).

use serde::{Deserialize, Serialize};

use crate::ad::Scalar;

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
/// once so the right-hand side calls no more `powf` than it must.
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
        r_j_per_kg_k: f64,
        cp_j_per_kg_k: f64,
        p_critical_pa: Option<f64>,
        t_critical_k: Option<f64>,
    ) -> Self {
        let cv = cp_j_per_kg_k - r_j_per_kg_k;
        let gamma = cp_j_per_kg_k / cv;
        let base = 2.0 / (gamma + 1.0);
        IdealGas {
            r_j_per_kg_k,
            cp_j_per_kg_k,
            cv_j_per_kg_k: cv,
            gamma,
            p_critical_pa,
            t_critical_k,
            critical_pressure_ratio: base.powf(gamma / (gamma - 1.0)),
            choked_factor: base.powf((gamma + 1.0) / (2.0 * (gamma - 1.0))),
        }
    }

    pub fn from_species(s: &Species) -> Self {
        IdealGas::new(
            R_UNIVERSAL_J_PER_MOL_K / s.molar_mass_kg_per_mol,
            s.cp_j_per_kg_k,
            Some(s.p_critical_pa),
            Some(s.t_critical_k),
        )
    }

    /// p = (γ − 1)·U/V, Pa.
    #[inline]
    pub fn pressure_pa<T: Scalar>(&self, internal_energy_j: T, volume_m3: T) -> T {
        internal_energy_j * (self.gamma - 1.0) / volume_m3
    }

    /// T = U/(m·cv), K.
    #[inline]
    pub fn temperature_k<T: Scalar>(&self, mass_kg: T, internal_energy_j: T) -> T {
        internal_energy_j / (mass_kg * self.cv_j_per_kg_k)
    }

    /// m = p·V/(R·T), kg.
    #[inline]
    pub fn mass_kg(&self, pressure_pa: f64, volume_m3: f64, temperature_k: f64) -> f64 {
        pressure_pa * volume_m3 / (self.r_j_per_kg_k * temperature_k)
    }

    /// U = m·cv·T, J.
    #[inline]
    pub fn internal_energy_j(&self, mass_kg: f64, temperature_k: f64) -> f64 {
        mass_kg * self.cv_j_per_kg_k * temperature_k
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
}
