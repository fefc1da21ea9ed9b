//! BlasterSim's exact solution (BlasterSim verification §3.1.4, eq. 3.8) for a projectile driven
//! by an adiabatically expanding gas with constant friction pressure p_f:
//!   ẋ² = ẋ0² + (2A/m)·[ p0·(x0^γ·x^(1−γ) − x0)/(1 − γ) − (p_atm + p_f)·(x − x0) ]
//! and the orders of accuracy of every fixed-step integrator measured against it.

use crate::common;

use common::*;
use plenum::model::ModelFile;

/// Eq. 3.8, from the model's own parameters (γ from the gas table, not assumed 1.4).
fn exact_velocity(spec: &ModelFile, x: f64) -> f64 {
    let p = &spec.piston[0];
    let c = &spec.chamber[0];
    assert_eq!(
        c.volume, 0.0,
        "the exact solution needs V = A·x (no dead volume)"
    );
    assert_eq!(p.friction_static, p.friction_dynamic);
    let gas = plenum::model::build::gas_of(spec.gas.as_ref());
    let g = gas.gamma;
    let p_atm = spec.reservoir[0].pressure.as_const().unwrap();
    let (p0, x0, a, m) = (c.pressure, p.x0, p.area, p.mass);
    let work = p0 * (x0.powf(g) * x.powf(1.0 - g) - x0) / (1.0 - g)
        - (p_atm + p.friction_dynamic.as_const().unwrap()) * (x - x0);
    (p.v0 * p.v0 + 2.0 * a / m * work).sqrt()
}

/// |v − v_exact(x)| at the exit event.
fn exit_error(spec: &ModelFile, method: &str, h: f64) -> (f64, f64, f64) {
    let mut sim = simulation(spec, method, h);
    let t_exit = run_to_exit(&mut sim, spec.solver.t_end);
    let (x, v) = sim.piston_state(0);
    (t_exit, v, (v - exact_velocity(spec, x)).abs())
}

#[test]
fn rk4_matches_the_exact_exit_velocity_to_1e_9() {
    let spec = shipped("projectile");
    let h = 1e-6;
    let (t_exit, v, err) = exit_error(&spec, "rk4", h);
    let x_exit = spec.piston[0].x_exit.unwrap();
    println!(
        "rk4 h = {h:e} s: exit at t = {t_exit} s, v = {v} m/s, exact {} m/s, error {err:e} m/s (limit 1e-9)",
        exact_velocity(&spec, x_exit)
    );
    assert!(err < 1e-9, "error {err:e} m/s");
}

#[test]
fn exit_event_is_located_on_the_exit_position() {
    let spec = shipped("projectile");
    let mut sim = simulation(&spec, "rk4", 1e-5);
    let t_exit = run_to_exit(&mut sim, spec.solver.t_end);
    let (x, v) = sim.piston_state(0);
    let x_exit = spec.piston[0].x_exit.unwrap();
    // Locating to 1e-12 s means |x − x_exit| ≤ v·1e-12 s.
    println!(
        "exit at t = {t_exit} s: x − x_exit = {:e} m, v·1e-12 s = {:e} m",
        x - x_exit,
        v * 1e-12
    );
    assert!(x >= x_exit);
    assert!(x - x_exit <= v * 1e-12);
}

/// AB5 is measured on eq. 3.8 with a gentler expansion (3 bar, x0 = 0.3 m, exit at 0.5 m,
/// 20 g) than the shipped air gun: on the shipped case AB5's small stability region keeps it
/// out of its asymptotic range until its error reaches round-off (there the error changes sign
/// near h = 2e-5 s and is 1e-13 m/s by h = 2.5e-6 s). Every other method runs the shipped case.
fn gentle_case() -> ModelFile {
    let mut spec = shipped("projectile");
    spec.chamber[0].pressure = 301_325.0;
    spec.piston[0].x0 = 0.3;
    spec.piston[0].x_exit = Some(0.5);
    spec.piston[0].mass = 0.02;
    spec.solver.t_end = 0.05;
    spec
}

fn check_order(spec: ModelFile, method: &str, steps: &[f64], expected: f64, tolerance: f64) {
    let errors: Vec<f64> = steps
        .iter()
        .map(|&h| exit_error(&spec, method, h).2)
        .collect();
    for (h, e) in steps.iter().zip(&errors) {
        println!("{method}: h = {h:e} s, exit-velocity error = {e:e} m/s");
    }
    let p = observed_order(steps, &errors);
    println!("{method}: observed order {p:.4} (theory {expected}, tolerance ±{tolerance})");
    assert!((p - expected).abs() <= tolerance, "{method}: order {p}");
}

#[test]
fn order_of_accuracy_euler() {
    check_order(
        shipped("projectile"),
        "euler",
        &[4e-7, 2e-7, 1e-7],
        1.0,
        0.05,
    );
}

#[test]
fn order_of_accuracy_rk4() {
    check_order(
        shipped("projectile"),
        "rk4",
        &[3.2e-5, 1.6e-5, 8e-6],
        4.0,
        0.05,
    );
}

#[test]
fn order_of_accuracy_ab2() {
    check_order(shipped("projectile"), "ab2", &[4e-6, 2e-6, 1e-6], 2.0, 0.1);
}

#[test]
fn order_of_accuracy_ab3() {
    check_order(shipped("projectile"), "ab3", &[8e-6, 4e-6, 2e-6], 3.0, 0.1);
}

#[test]
fn order_of_accuracy_ab4() {
    check_order(
        shipped("projectile"),
        "ab4",
        &[1.6e-5, 8e-6, 4e-6],
        4.0,
        0.1,
    );
}

#[test]
fn order_of_accuracy_ab5() {
    check_order(gentle_case(), "ab5", &[1.6e-4, 8e-5, 4e-5], 5.0, 0.1);
}
