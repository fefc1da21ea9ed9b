//! How catalogues rate a pneumatic valve's flow path, turned into the ISO 6358 law's sonic
//! conductance C: the nominal flow Q_N (ISO 6358-1:2013, and the catalogues' "standard nominal
//! flow rate"): the flow at 6 bar gauge inlet and 1 bar pressure drop, in standard volume at
//! ISO 8778's reference atmosphere. With p₁ = 600 kPa + 100 kPa (ANR) = 700 kPa absolute,
//! p₂ = 600 kPa and T₁ = T₀, the ISO 6358 law gives
//!   ṁ_N = ρ₀·Q_N = C·p₁·ρ₀·sqrt(1 − ((p₂/p₁ − b)/(1 − b))²)     (p₂/p₁ > b),
//!   ṁ_N = C·p₁·ρ₀                                              (p₂/p₁ ≤ b: choked),
//! so C follows from Q_N and b. A model file gives Q_N as the mass flow ṁ_N (`"600 Nl/min"`
//! is converted at ρ₀, `crate::units::parse`).

use crate::components::orifice::{ISO_LAMINAR_RATIO, ISO_RHO0_KG_PER_M3};

/// ISO 6358's nominal inlet pressure (6 bar gauge over the 100 kPa of ISO 8778), Pa absolute.
pub const NOMINAL_INLET_PA: f64 = 700e3;
/// ISO 6358's nominal outlet pressure (1 bar below the inlet), Pa absolute.
pub const NOMINAL_OUTLET_PA: f64 = 600e3;

/// The sonic conductance C, m³/(s·Pa), of a flow path of critical pressure ratio `b`
/// (0 ≤ b < the laminar ratio, validated) that passes the nominal mass flow `nominal_kg_per_s`
/// (ρ₀·Q_N) at ISO 6358's nominal conditions.
pub fn sonic_conductance_from_nominal_flow(nominal_kg_per_s: f64, b: f64) -> f64 {
    debug_assert!((0.0..ISO_LAMINAR_RATIO).contains(&b));
    let r = NOMINAL_OUTLET_PA / NOMINAL_INLET_PA;
    let shape = if r <= b {
        1.0
    } else {
        let s = (r - b) / (1.0 - b);
        (1.0 - s * s).sqrt()
    };
    nominal_kg_per_s / (NOMINAL_INLET_PA * ISO_RHO0_KG_PER_M3 * shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::orifice::{ISO_T0_K, iso6358_mass_flow_kg_per_s};

    /// The conductance a nominal flow gives passes that flow through the ISO 6358 law at the
    /// nominal pressures, subsonic (b below 6/7) or choked (b above), to round-off.
    #[test]
    fn nominal_flow_through_its_conductance_is_the_nominal_flow() {
        // 600 Nl/min of air at ρ₀.
        let mdot_n = 600e-3 / 60.0 * ISO_RHO0_KG_PER_M3;
        for b in [0.0, 0.2, 0.3, 0.5, 0.85, 0.9] {
            let c = sonic_conductance_from_nominal_flow(mdot_n, b);
            let back =
                iso6358_mass_flow_kg_per_s(c, b, NOMINAL_INLET_PA, ISO_T0_K, NOMINAL_OUTLET_PA);
            println!("b = {b}: C = {c:.6e} m^3/(s Pa), flow back {back:.15e} of {mdot_n:.15e}");
            assert!(((back - mdot_n) / mdot_n).abs() < 1e-14, "b = {b}");
        }
    }
}
