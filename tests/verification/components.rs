//! Component equations against textbook formulas written independently here.

use plenum::components::NodeState;
use plenum::components::orifice::{Orifice, isentropic_mass_flow_kg_per_s};
use plenum::gas::{IdealGas, species};

/// Mass flow from the Mach number at the throat (Anderson, *Modern Compressible Flow*, eq. 5.22,
/// and the isentropic relations 3.28–3.31): p/p0 = (1 + (γ−1)/2·M²)^(−γ/(γ−1)), and
/// ṁ = A·p0·sqrt(γ/(R·T0))·M·(1 + (γ−1)/2·M²)^(−(γ+1)/(2(γ−1))), with M capped at 1 (choked).
fn textbook_mass_flow(gas: &IdealGas, area: f64, p0: f64, t0: f64, p_back: f64) -> f64 {
    let g = gas.gamma;
    let mach_sq = ((p0 / p_back).powf((g - 1.0) / g) - 1.0) * 2.0 / (g - 1.0);
    let mach = mach_sq.sqrt().min(1.0);
    let base = 1.0 + 0.5 * (g - 1.0) * mach * mach;
    area * p0
        * (g / (gas.r_j_per_kg_k * t0)).sqrt()
        * mach
        * base.powf(-(g + 1.0) / (2.0 * (g - 1.0)))
}

#[test]
fn orifice_matches_the_textbook_choked_and_unchoked_to_1e_12() {
    for name in ["air", "He", "CO2"] {
        let gas = IdealGas::from_species(species(name).unwrap());
        let g = gas.gamma;
        // The critical ratio computed here, independently of the gas struct.
        let r_crit = (2.0 / (g + 1.0)).powf(g / (g - 1.0));
        let (area, p0, t0) = (3e-6, 7e5, 320.0);
        for r in [
            0.05,
            0.3,
            r_crit,
            r_crit * (1.0 + 1e-9),
            0.6,
            0.8,
            0.95,
            0.999,
        ] {
            let ours = isentropic_mass_flow_kg_per_s(&gas, area, p0, t0, r * p0);
            let book = textbook_mass_flow(&gas, area, p0, t0, r * p0);
            let rel = (ours / book - 1.0).abs();
            println!(
                "{name} (γ = {g:.4}): p_d/p_u = {r:.9}: ṁ = {ours:e} kg/s, textbook {book:e}, rel. diff {rel:e}"
            );
            assert!(rel < 1e-12, "{name} at r = {r}: {rel:e}");
        }
    }
}

#[test]
fn orifice_flows_both_ways_with_upstream_state_and_zero_at_equal_pressure() {
    let gas = IdealGas::from_species(species("air").unwrap());
    let o = Orifice {
        name: "o".into(),
        from: 0,
        to: 1,
        form: plenum::components::OrificeForm::Isentropic {
            area_m2: 1e-5.into(),
            discharge_coefficient: 0.6.into(),
        },
        opening: 1.0.into(),
        one_way: false,
        poppet: None,
        poppet_table: None,
    };
    let a = NodeState {
        pressure_pa: 3e5,
        temperature_k: 300.0,
    };
    let b = NodeState {
        pressure_pa: 1e5,
        temperature_k: 500.0,
    };
    let forward = o.mass_flow_kg_per_s(&gas, 0.0, 0.0, a, b);
    let backward = o.mass_flow_kg_per_s(&gas, 0.0, 0.0, b, a);
    let book = textbook_mass_flow(&gas, 0.6e-5, 3e5, 300.0, 1e5);
    println!("forward {forward:e}, backward {backward:e}, textbook {book:e}");
    assert!((forward / book - 1.0).abs() < 1e-12);
    // Reversed, the flow uses the other node (now upstream): same magnitude, opposite sign.
    assert_eq!(backward, -forward);
    assert_eq!(o.mass_flow_kg_per_s(&gas, 0.0, 0.0, a, a), 0.0);
}

#[test]
fn valve_is_cantera_linear_and_one_way_blocks_backflow() {
    use plenum::components::Valve;
    use plenum::param::Param;
    use plenum::units::{Ratio, si::ratio};
    let mut v = Valve {
        name: "v".into(),
        from: 0,
        to: 1,
        coefficient_kg_per_s_pa: 2e-8.into(),
        one_way: false,
        opening: Param::constant(Ratio::new::<ratio>(0.5)),
    };
    let f = v.mass_flow_kg_per_s(2e-8, 0.5, 4e5, 1e5);
    println!(
        "valve: ṁ = {f:e} kg/s (K·opening·Δp = {:e})",
        2e-8 * 0.5 * 3e5
    );
    assert_eq!(f, 2e-8 * 0.5 * 3e5);
    assert_eq!(v.mass_flow_kg_per_s(2e-8, 0.5, 1e5, 4e5), -2e-8 * 0.5 * 3e5);
    v.one_way = true;
    assert_eq!(v.mass_flow_kg_per_s(2e-8, 0.5, 1e5, 4e5), 0.0);
}

#[test]
fn orifice_is_laminar_and_lipschitz_near_equal_pressures() {
    // Above r = 0.999 the flow is linear in Δp, continuous with the isentropic branch at 0.999,
    // and its slope dṁ/dΔp stays finite through Δp = 0 (the inviscid formula's is infinite).
    let gas = IdealGas::from_species(species("air").unwrap());
    let (area, p0, t0) = (1e-5, 1e5, 300.0);
    let beta = plenum::components::orifice::LAMINAR_RATIO;
    let at = |r: f64| isentropic_mass_flow_kg_per_s(&gas, area, p0, t0, r * p0);
    let below = textbook_mass_flow(&gas, area, p0, t0, beta * p0);
    let above = at(beta + 1e-15);
    println!("at r = 0.999: textbook {below:e}, laminar branch {above:e}");
    assert!(
        (above / below - 1.0).abs() < 1e-9,
        "continuous at the laminar ratio"
    );
    // Linear: half the pressure difference gives half the flow.
    let (m1, m2) = (at(1.0 - 4e-4), at(1.0 - 2e-4));
    println!(
        "Δp = 40 Pa: {m1:e} kg/s, Δp = 20 Pa: {m2:e} kg/s (ratio {})",
        m1 / m2
    );
    assert!((m1 / m2 - 2.0).abs() < 1e-9);
    assert_eq!(at(1.0), 0.0);
    // Finite slope through zero: the same from both sides.
    let slope = m2 / (2e-4 * p0);
    let textbook_slope =
        (textbook_mass_flow(&gas, area, p0, t0, p0 * (1.0 - 1e-12))) / (1e-12 * p0);
    println!(
        "dṁ/dΔp near 0: laminar {slope:e} kg/(s·Pa); inviscid formula at Δp = 1e-7 Pa: {textbook_slope:e}"
    );
    assert!(textbook_slope > 1e3 * slope);
}
