//! Orifice: isentropic compressible flow through a restriction, choked or not, either direction.
//!
//! With upstream stagnation state (p_u, T_u), downstream pressure p_d and r = p_d/p_u
//! (Anderson, *Modern Compressible Flow*, eqs. 5.20–5.21; ISO 5167 nozzle form):
//!   r > r* : ṁ = C_d·A·p_u·sqrt( 2γ/((γ−1)·R·T_u) · (r^(2/γ) − r^((γ+1)/γ)) )
//!   r ≤ r* : ṁ = C_d·A·p_u·sqrt(γ/(R·T_u)) · (2/(γ+1))^((γ+1)/(2(γ−1)))   (choked)
//! with r* = (2/(γ+1))^(γ/(γ−1)). Both branches agree at r = r*. The flow carries the upstream
//! specific enthalpy c_p·T_u.

use serde::{Deserialize, Serialize};

use crate::components::NodeState;
use crate::gas::IdealGas;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Orifice {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub area_m2: f64,
    pub discharge_coefficient: f64,
}

/// Mass flow from an upstream state to a lower downstream pressure, kg/s (≥ 0 for p_d ≤ p_u).
#[inline]
pub fn isentropic_mass_flow_kg_per_s(
    gas: &IdealGas,
    effective_area_m2: f64,
    p_up_pa: f64,
    t_up_k: f64,
    p_down_pa: f64,
) -> f64 {
    let g = gas.gamma;
    let r = p_down_pa / p_up_pa;
    let rt = gas.r_j_per_kg_k * t_up_k;
    if r <= gas.critical_pressure_ratio {
        effective_area_m2 * p_up_pa * (g / rt).sqrt() * gas.choked_factor
    } else {
        // One powf: r^(2/γ) = (r^(1/γ))², r^((γ+1)/γ) = r^(1/γ)·r.
        let q = r.powf(1.0 / g);
        let bracket = (q * q - q * r).max(0.0);
        effective_area_m2 * p_up_pa * (2.0 * g / ((g - 1.0) * rt) * bracket).sqrt()
    }
}

/// Signed mass flow from `from` to `to` through an effective area C_d·A, kg/s.
#[inline]
pub fn signed_mass_flow_kg_per_s(
    gas: &IdealGas,
    effective_area_m2: f64,
    from: NodeState,
    to: NodeState,
) -> f64 {
    if from.pressure_pa >= to.pressure_pa {
        isentropic_mass_flow_kg_per_s(
            gas,
            effective_area_m2,
            from.pressure_pa,
            from.temperature_k,
            to.pressure_pa,
        )
    } else {
        -isentropic_mass_flow_kg_per_s(
            gas,
            effective_area_m2,
            to.pressure_pa,
            to.temperature_k,
            from.pressure_pa,
        )
    }
}

impl Orifice {
    /// Signed mass flow from `from` to `to`, kg/s.
    #[inline]
    pub fn mass_flow_kg_per_s(&self, gas: &IdealGas, from: NodeState, to: NodeState) -> f64 {
        signed_mass_flow_kg_per_s(gas, self.discharge_coefficient * self.area_m2, from, to)
    }
}
