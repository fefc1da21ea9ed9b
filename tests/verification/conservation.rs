//! Conservation laws as independent truth: an adiabatic chamber follows p·V^γ = const; total
//! mass is constant through a blowdown (what left is counted in the reservoir); the closed
//! energy total is constant in exact arithmetic, so its numerical drift is the integrator's
//! error and must shrink at the method's order.

use crate::common;

use common::*;
use plenum::model::{ModelFile, parse_str};
use plenum::simulation::Advance;

/// Every output row of a run: (time, chamber 0 (p, T, m, V, U), mass_total, energy_total).
fn rows(spec: &ModelFile, method: &str, step: f64) -> Vec<(f64, [f64; 5], f64, f64)> {
    let mut sim = simulation(spec, method, step);
    let t_end = spec.solver.t_end;
    let interval = spec.solver.output_interval.expect("models set it");
    let n = (t_end / interval).round() as usize;
    let mut out = Vec::new();
    let mut push = |sim: &plenum::simulation::Simulation| {
        out.push((
            sim.t_s,
            sim.chamber_state(0),
            sim.network.mass_total_kg(&sim.y),
            sim.network.energy_total_j(&sim.y),
        ))
    };
    push(&sim);
    for k in 1..=n {
        match sim
            .advance_to(k as f64 * interval)
            .expect("no check failure")
        {
            Advance::Reached | Advance::Exit { .. } => push(&sim),
            Advance::Finished(_) => {
                push(&sim);
                break;
            }
        }
    }
    out
}

#[test]
fn adiabatic_barrel_keeps_p_v_gamma_to_1e_10() {
    let spec = shipped("projectile");
    let gamma = plenum::model::build::gas_of(spec.gas.as_ref()).gamma;
    let r = rows(&spec, "rk4", 1e-6);
    let (_, c0, _, _) = r[0];
    let k0 = c0[0] * c0[3].powf(gamma);
    let worst = r
        .iter()
        .map(|(_, c, _, _)| (c[0] * c[3].powf(gamma) / k0 - 1.0).abs())
        .fold(0.0, f64::max);
    println!(
        "p·V^γ over {} rows to the exit (V grew {:.2}×): worst relative deviation {worst:e} (limit 1e-10)",
        r.len(),
        r.last().unwrap().1[3] / c0[3]
    );
    assert!(worst < 1e-10);
}

#[test]
fn blowdown_total_mass_is_constant_to_1e_12() {
    let spec = shipped("blowdown");
    let r = rows(&spec, "rk4", 1e-4);
    let m0 = r[0].2;
    let worst = r
        .iter()
        .map(|x| ((x.2 - m0) / m0).abs())
        .fold(0.0, f64::max);
    let left = 1.0 - r.last().unwrap().1[2] / r[0].1[2];
    println!(
        "blowdown: {:.1} % of the gas left the tank; worst |Δm_total|/m_total = {worst:e} (limit 1e-12)",
        100.0 * left
    );
    assert!(
        left > 0.5,
        "the tank must really empty for the test to mean something"
    );
    assert!(worst < 1e-12);
}

/// Every component at once: chambers joined by an orifice and a valve, a piston with spring,
/// damping and friction, a wall with heat transfer and an expansion coefficient, a reservoir.
const ALL_COMPONENTS: &str = r#"
[model]
name = "all_components"
[gas]
species = "air"
[solver]
method = "rk4"
step = 1e-5
t_end = 0.02
output_interval = 0.02
[[chamber]]
name = "high"
volume = 1e-3
pressure = 8e5
temperature = 350.0
[[chamber]]
name = "cylinder"
volume = 2e-5
pressure = 1e5
temperature = 300.0
[[chamber]]
name = "side"
volume = 5e-4
pressure = 2e5
temperature = 250.0
[[reservoir]]
name = "atm"
pressure = 101325.0
temperature = 290.0
[[orifice]]
name = "feed"
from = "high"
to = "cylinder"
area = 2e-6
discharge_coefficient = 0.7
[[valve]]
name = "bleed"
from = "high"
to = "side"
coefficient = 2e-9
[[valve]]
name = "vent"
from = "side"
to = "atm"
coefficient = 5e-10
one_way = true
[[piston]]
name = "rod"
behind = "cylinder"
ahead = "atm"
area = 3e-4
mass = 0.5
x0 = 0.0
friction_static = 2000.0
friction_dynamic = 1500.0
spring_stiffness = 2000.0
spring_x0 = -0.05
damping = 5.0
[[wall]]
name = "membrane"
left = "high"
right = "side"
area = 0.01
heat_transfer_coefficient = 50.0
expansion_coefficient = 1e-8
"#;

fn all_components() -> ModelFile {
    parse_str(ALL_COMPONENTS, "all_components.toml", &[])
        .unwrap_or_else(|e| panic!("{e:?}"))
        .spec
}

/// Relative drift of the closed energy total at the end of the run.
fn energy_drift(spec: &ModelFile, method: &str, h: f64) -> (f64, f64) {
    let r = rows(spec, method, h);
    let (e0, m0) = (r[0].3, r[0].2);
    let last = r.last().unwrap();
    (((last.3 - e0) / e0).abs(), ((last.2 - m0) / m0).abs())
}

#[test]
fn energy_balance_closes_at_the_method_order() {
    // The projectile: kinetic energy is a quadratic invariant term, so the closed total drifts
    // by the integrator's error, which must shrink at the method's order.
    let spec = shipped("projectile");
    for (method, order, steps) in [
        ("rk4", 4.0, [2e-5, 1e-5, 5e-6]),
        ("euler", 1.0, [4e-7, 2e-7, 1e-7]),
    ] {
        let mut drifts = Vec::new();
        for h in steps {
            let (de, dm) = energy_drift(&spec, method, h);
            println!("projectile, {method}, h = {h:e} s: energy drift {de:e}, mass drift {dm:e}");
            assert!(dm < 1e-12, "mass must be conserved to round-off");
            drifts.push(de);
        }
        let p = observed_order(&steps, &drifts);
        println!(
            "projectile, {method}: energy drift shrinks at order {p:.3} (method order {order})"
        );
        assert!((p - order).abs() < 0.1, "{method}: {p}");
    }
}

#[test]
fn energy_total_closes_with_every_component() {
    // Orifice, valves, a one-way vent to a reservoir, a piston with friction, spring and
    // damping against the atmosphere, a wall with heat transfer and an expansion coefficient:
    // every channel moves energy, and the closed total must stay constant to round-off plus
    // the (tiny) integration error of the piston's kinetic and spring energy.
    let spec = all_components();
    for h in [2e-5, 1e-5] {
        let mut sim = simulation(&spec, "rk4", h);
        let e0 = sim.network.energy_total_j(&sim.y);
        let m0 = sim.network.mass_total_kg(&sim.y);
        sim.advance_to(spec.solver.t_end).expect("runs");
        let acc = sim.network.layout.accumulator_offset;
        let (m_left, e_left) = (sim.y[acc], sim.y[acc + 1]);
        let de = ((sim.network.energy_total_j(&sim.y) - e0) / e0).abs();
        let dm = ((sim.network.mass_total_kg(&sim.y) - m0) / m0).abs();
        let (x, v) = sim.piston_state(0);
        println!(
            "all components, rk4, h = {h:e} s: energy that left {e_left:.6} J of {e0:.3} J, mass that left {m_left:e} kg; piston x = {x:.5} m, v = {v:.4} m/s; drift: energy {de:e}, mass {dm:e}"
        );
        assert!(
            e_left.abs() > 1e-4 * e0,
            "the boundary channels must carry energy"
        );
        assert!(v.abs() > 0.1, "the piston must move");
        assert!(de < 1e-12 && dm < 1e-12);
    }
}
