//! Orifice: isentropic compressible flow through a restriction, choked or not, either direction.
//!
//! With upstream stagnation state (p_u, T_u), downstream pressure p_d and r = p_d/p_u
//! (Anderson, *Modern Compressible Flow*, eqs. 5.20–5.21; ISO 5167 nozzle form):
//!   r > r* : ṁ = C_d·A·p_u·sqrt( 2γ/((γ−1)·R·T_u) · (r^(2/γ) − r^((γ+1)/γ)) )
//!   r ≤ r* : ṁ = C_d·A·p_u·sqrt(γ/(R·T_u)) · (2/(γ+1))^((γ+1)/(2(γ−1)))   (choked)
//! with r* = (2/(γ+1))^(γ/(γ−1)). Both branches agree at r = r*. The flow carries the upstream
//! specific enthalpy c_p·T_u.
//!   r > β_lam = 0.999 : ṁ = ṁ(β_lam)·(p_u − p_d)/(p_u·(1 − β_lam))            (laminar)
//! The inviscid formula has an infinite slope dṁ/dΔp at Δp → 0, which no real orifice has (the
//! flow turns viscous) and on which Newton's method in the implicit integrators fails near
//! pressure equalization; the same linear laminar region as the ISO 6358 form below (Sanville,
//! ratio 0.999) keeps the flow continuous and Lipschitz through Δp = 0. At r = 0.999 the flow is
//! about 6.5 % of its choked value (air).
//!
//! ISO 6358 form (sonic conductance C in m³/(s·Pa), critical pressure ratio b; ISO 6358-1:2013,
//! reference atmosphere of ISO 8778: ρ0 = 1.185 kg/m³, T0 = 293.15 K):
//!   r ≤ b          : ṁ = C·p_u·ρ0·sqrt(T0/T_u)                                 (choked)
//!   b < r ≤ β_lam  : ṁ = C·p_u·ρ0·sqrt(T0/T_u)·sqrt(1 − ((r − b)/(1 − b))²)    (subsonic)
//!   r > β_lam      : ṁ = k1·p_u·(1 − r)·sqrt(T0/T_u),
//!                    k1 = C·ρ0/(1 − β_lam)·sqrt(1 − ((β_lam − b)/(1 − b))²)     (laminar)
//! with β_lam = 0.999: Sanville's linear laminar region, as Simscape's "Constant Area Pneumatic
//! Orifice (ISO 6358)" block writes it (ISO 6358-3:2014 gives 0.999 as the laminar ratio). The
//! subsonic branch has an infinite slope at r = 1; the laminar one is linear in Δp = p_u − p_d
//! (k1·Δp·sqrt(T0/T_u)), so the flow is continuous at b and at β_lam, and Lipschitz through
//! Δp = 0 in either direction.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c, max0};
use crate::components::NodeState;
use crate::gas::IdealGas;
use crate::param::{Param, ParamValue};
use crate::units::{Area, Ratio, SonicConductance};

/// ISO 8778 reference atmosphere: density, kg/m³, and temperature, K.
pub const ISO_RHO0_KG_PER_M3: f64 = 1.185;
pub const ISO_T0_K: f64 = 293.15;
/// Pressure ratio above which the ISO 6358 flow is taken as laminar (linear in Δp).
pub const ISO_LAMINAR_RATIO: f64 = 0.999;

/// How the orifice's flow is given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum OrificeForm {
    /// Geometric area (m²) and discharge coefficient: isentropic nozzle flow.
    Isentropic {
        area_m2: Param<Area>,
        discharge_coefficient: Param<Ratio>,
    },
    /// ISO 6358: sonic conductance C (m³/(s·Pa)) and critical pressure ratio b.
    Iso6358 {
        sonic_conductance_m3_per_s_pa: Param<SonicConductance>,
        critical_pressure_ratio: Param<Ratio>,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Orifice {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub form: OrificeForm,
}

/// ISO 6358 mass flow from an upstream state to a downstream pressure p_d ≤ p_u, kg/s (≥ 0).
#[inline]
pub fn iso6358_mass_flow_kg_per_s<T: Scalar>(
    sonic_conductance_m3_per_s_pa: T,
    critical_pressure_ratio: T,
    p_up_pa: T,
    t_up_k: T,
    p_down_pa: T,
) -> T {
    let (cond, b) = (sonic_conductance_m3_per_s_pa, critical_pressure_ratio);
    let r = p_down_pa / p_up_pa;
    let root_t = (c::<T>(ISO_T0_K) / t_up_k).sqrt();
    let choked = cond * p_up_pa * ISO_RHO0_KG_PER_M3 * root_t;
    if r.re() <= b.re() {
        choked
    } else if r.re() <= ISO_LAMINAR_RATIO {
        let s = (r - b) / (c::<T>(1.0) - b);
        choked * max0(c::<T>(1.0) - s * s).sqrt()
    } else {
        let s = (c::<T>(ISO_LAMINAR_RATIO) - b) / (c::<T>(1.0) - b);
        let k1 =
            cond * ISO_RHO0_KG_PER_M3 / (1.0 - ISO_LAMINAR_RATIO) * (c::<T>(1.0) - s * s).sqrt();
        // p_u·(1 − r) = p_u − p_d, written so that it is exactly 0 at equal pressures.
        k1 * (p_up_pa - p_down_pa) * root_t
    }
}

/// Mass flow from an upstream state to a lower downstream pressure, kg/s (≥ 0 for p_d ≤ p_u).
#[inline]
pub fn isentropic_mass_flow_kg_per_s<T: Scalar>(
    gas: &IdealGas,
    effective_area_m2: T,
    p_up_pa: T,
    t_up_k: T,
    p_down_pa: T,
) -> T {
    let g = gas.gamma;
    let r = p_down_pa / p_up_pa;
    let rt = t_up_k * gas.r_j_per_kg_k;
    if r.re() <= gas.critical_pressure_ratio {
        effective_area_m2 * p_up_pa * (c::<T>(g) / rt).sqrt() * gas.choked_factor
    } else if r.re() <= LAMINAR_RATIO {
        // One powf: r^(2/γ) = (r^(1/γ))², r^((γ+1)/γ) = r^(1/γ)·r.
        let q = r.powf(1.0 / g);
        let bracket = max0(q * q - q * r);
        effective_area_m2 * p_up_pa * (c::<T>(2.0 * g) / (rt * (g - 1.0)) * bracket).sqrt()
    } else {
        let q = LAMINAR_RATIO.powf(1.0 / g);
        let bracket = q * q - q * LAMINAR_RATIO;
        // p_u·(1 − r) = p_u − p_d, written so that it is exactly 0 at equal pressures.
        effective_area_m2
            * (c::<T>(2.0 * g) / (rt * (g - 1.0)) * bracket).sqrt()
            * (p_up_pa - p_down_pa)
            / (1.0 - LAMINAR_RATIO)
    }
}

/// Pressure ratio above which the isentropic orifice's flow is taken as laminar (linear in Δp).
pub const LAMINAR_RATIO: f64 = ISO_LAMINAR_RATIO;

/// Signed mass flow from `from` to `to` through an effective area C_d·A, kg/s.
#[inline]
pub fn signed_mass_flow_kg_per_s<T: Scalar>(
    gas: &IdealGas,
    effective_area_m2: T,
    from: NodeState<T>,
    to: NodeState<T>,
) -> T {
    if from.pressure_pa.re() >= to.pressure_pa.re() {
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
    /// Signed mass flow from `from` to `to` at time `t` on the segment that began at `seg`, kg/s.
    #[inline]
    pub fn mass_flow_kg_per_s<T: Scalar>(
        &self,
        gas: &IdealGas,
        t: f64,
        seg: f64,
        from: NodeState<T>,
        to: NodeState<T>,
    ) -> T {
        self.mass_flow_with(gas, |p: &ParamValue| c(p.value(t, seg)), from, to)
    }

    /// [`Self::mass_flow_kg_per_s`] with each parameter's value given by `param`.
    #[inline]
    pub fn mass_flow_with<T: Scalar>(
        &self,
        gas: &IdealGas,
        param: impl Fn(&ParamValue) -> T,
        from: NodeState<T>,
        to: NodeState<T>,
    ) -> T {
        match &self.form {
            OrificeForm::Isentropic {
                area_m2,
                discharge_coefficient,
            } => signed_mass_flow_kg_per_s(
                gas,
                param(discharge_coefficient) * param(area_m2),
                from,
                to,
            ),
            OrificeForm::Iso6358 {
                sonic_conductance_m3_per_s_pa,
                critical_pressure_ratio,
            } => {
                let cond = param(sonic_conductance_m3_per_s_pa);
                let b = param(critical_pressure_ratio);
                signed_iso6358_mass_flow_kg_per_s(cond, b, from, to)
            }
        }
    }

    pub fn params(&self) -> [&ParamValue; 2] {
        match &self.form {
            OrificeForm::Isentropic {
                area_m2,
                discharge_coefficient,
            } => [area_m2, discharge_coefficient],
            OrificeForm::Iso6358 {
                sonic_conductance_m3_per_s_pa,
                critical_pressure_ratio,
            } => [sonic_conductance_m3_per_s_pa, critical_pressure_ratio],
        }
    }
}

/// ISO 6358 flow from `from` to `to`, negative when it runs the other way: the upstream node
/// is the one at the higher pressure (`Orifice::mass_flow_with`, and the network's compact
/// orifice links).
pub fn signed_iso6358_mass_flow_kg_per_s<T: Scalar>(
    cond: T,
    b: T,
    from: NodeState<T>,
    to: NodeState<T>,
) -> T {
    if from.pressure_pa.re() >= to.pressure_pa.re() {
        iso6358_mass_flow_kg_per_s(
            cond,
            b,
            from.pressure_pa,
            from.temperature_k,
            to.pressure_pa,
        )
    } else {
        -iso6358_mass_flow_kg_per_s(cond, b, to.pressure_pa, to.temperature_k, from.pressure_pa)
    }
}
