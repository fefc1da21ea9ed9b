//! Events located on the integrators' own step formulas or dense output: piston end stops
//! (impact with a coefficient of restitution against the closed form of the spring–mass
//! motion between impacts) and the inertance valve's flow crossing zero (against the closed
//! form of CircAdapt's three-phase benchmark). Every asserted figure is printed.

use crate::common;

use std::f64::consts::PI;

use plenum::components::Piston;
use plenum::model::{ModelFile, build_simulation};
use plenum::simulation::Simulation;

// ---------------------------------------------------------------------------------------------
// Piston end stops.
//
// A piston between two reservoirs at the same pressure (no net gas force, no friction), held by
// a spring of stiffness k whose rest position x_s lies beyond the stop x_max: released at rest
// from x = 0, it moves as x(t) = x_s − x_s·cos(ωt), ω = √(k/m), and reaches x_max = a at
// t₁ = acos((x_s − a)/x_s)/ω with speed v₁ = x_s·ω·sin(ωt₁). After an impact at speed v the
// rebound speed is w = e·v; with u = x − x_s, u₀ = a − x_s, the motion is
// u(τ) = R·cos(ωτ + φ), R = √(u₀² + (w/ω)²), φ = atan2(w/ω, u₀): the apex (turning point)
// comes at τ = (π − φ)/ω with x = x_s − R, and the next impact at τ = (2π − 2φ)/ω with speed w.
// The spring energy of the apex above the stop's, ½k(R² − u₀²) = ½m·w², is e² times the kinetic
// energy at the impact before it.

const K: f64 = common::STOPS_STIFFNESS_N_PER_M;
const M: f64 = common::STOPS_MASS_KG;
const XS: f64 = common::STOPS_SPRING_X0_M;
const A: f64 = common::STOPS_STOP_M;

fn stops_model(method: &str, restitution: f64, mirrored: bool) -> ModelFile {
    // Mirrored: the same motion in −x against the stop x_min = −a.
    // BDF's global error at a given rtol is far larger than dopri5's here (order ≤ 5 after a
    // restart at order 1 at every impact): it runs at a tolerance a hundred times tighter.
    let rtol = if method == "bdf" { 1e-14 } else { 1e-12 };
    let solver =
        format!("method = \"{method}\"\nstep = 1e-5\nrtol = {rtol}\natol = 1e-16\nt_end = 0.2");
    common::bouncing_piston(&solver, restitution, mirrored)
}

struct Analytic {
    /// Impact times and impact speeds.
    impacts: Vec<(f64, f64)>,
    /// Apex times and apex positions after each impact.
    apexes: Vec<(f64, f64)>,
}

fn analytic(e: f64, n: usize) -> Analytic {
    let w0 = (K / M).sqrt();
    let u0 = A - XS;
    let t1 = ((XS - A) / XS).acos() / w0;
    let v1 = XS * w0 * (w0 * t1).sin();
    let (mut impacts, mut apexes) = (vec![(t1, v1)], Vec::new());
    for _ in 0..n {
        let (t, v) = *impacts.last().unwrap();
        let w = e * v;
        let r = (u0 * u0 + (w / w0) * (w / w0)).sqrt();
        let phi = (w / w0).atan2(u0);
        apexes.push((t + (PI - phi) / w0, XS - r));
        impacts.push((t + (2.0 * PI - 2.0 * phi) / w0, w));
    }
    Analytic { impacts, apexes }
}

fn energy(sim: &Simulation, y: &[f64]) -> f64 {
    sim.network.energy_total_j(y)
}

fn energy_left(sim: &Simulation, y: &[f64]) -> f64 {
    y[sim.network.layout.accumulator_offset + 1]
}

/// The located time of the event handled in the last `advance_to`, checking that there was
/// exactly one.
fn one_event(sim: &Simulation, events_before: u64) -> &plenum::simulation::EventRecord {
    assert_eq!(sim.stats.events, events_before + 1, "exactly one event");
    sim.last_event.as_ref().expect("an event record")
}

fn bounces(method: &str) {
    let e = 0.8;
    let n = 5;
    let exact = analytic(e, n);
    let spec = stops_model(method, e, false);
    let mut sim = build_simulation(&spec, None).unwrap();
    let o = sim.network.layout.first::<Piston>();
    let e0 = energy(&sim, &sim.y.clone());
    let mut worst_dt: f64 = 0.0;
    let mut pe_apex = Vec::new();
    for k in 0..n {
        let (t_apex, x_apex_exact) = exact.apexes[k];
        let (t_imp, v_imp) = exact.impacts[k];
        let before = sim.stats.events;
        sim.advance_to(t_apex).unwrap();
        let ev = one_event(&sim, before).clone();
        let (vb, va) = (ev.y_before[o + 1], ev.y_after[o + 1]);
        let dt = ev.t_s - t_imp;
        worst_dt = worst_dt.max(dt.abs());
        let (eb, ea) = (energy(&sim, &ev.y_before), energy(&sim, &ev.y_after));
        let lost = energy_left(&sim, &ev.y_after) - energy_left(&sim, &ev.y_before);
        let ke_lost = 0.5 * M * (vb * vb - va * va);
        println!(
            "{method} impact {}: located t = {:.15} s, closed form {t_imp:.15} s, difference \
             {dt:+.2e} s; x = {:?} (stop {A}); v before {vb:.12} m/s (closed form {v_imp:.12}), \
             after {va:.12} m/s = −e·v: {}; energy_total before {eb:.15} J, after {ea:.15} J \
             (relative change {:.2e}); energy_left gained {lost:.12e} J, ½m(v² − v'²) = \
             {ke_lost:.12e} J",
            k + 1,
            ev.t_s,
            ev.y_before[o],
            va == -e * vb,
            ((ea - eb) / eb).abs()
        );
        assert!(dt.abs() <= 1e-12, "{method}: impact time off by {dt:e} s");
        assert_eq!(va, -e * vb, "{method}: rebound speed");
        assert!(((ea - eb) / eb).abs() <= 1e-12, "{method}: energy jump");
        assert!(
            (lost - ke_lost).abs() <= 1e-12 * eb,
            "{method}: energy_left"
        );
        assert_eq!(ev.y_after[o], A, "{method}: on the stop");
        // The apex: x is stationary there, so the state at the closed-form apex time is the
        // apex position to second order in any timing error.
        let x_apex = sim.y[o];
        let pe = 0.5 * K * ((XS - x_apex).powi(2) - (XS - A).powi(2));
        let ke_impact = 0.5 * M * vb * vb;
        println!(
            "{method} apex {}: at t = {t_apex:.12} s x = {x_apex:.12} m (closed form \
             {x_apex_exact:.12} m, difference {:+.2e}); spring energy above the stop {pe:.12e} J \
             = {:.12}·e²·(kinetic energy at the impact)",
            k + 1,
            x_apex - x_apex_exact,
            pe / (e * e * ke_impact)
        );
        assert!((x_apex - x_apex_exact).abs() < 1e-10, "{method}: apex");
        assert!(
            (pe / (e * e * ke_impact) - 1.0).abs() < 1e-8,
            "{method}: apex energy"
        );
        pe_apex.push(pe);
    }
    for k in 1..n {
        let ratio = pe_apex[k] / pe_apex[k - 1];
        println!(
            "{method}: apex energy ratio {k}→{}: {ratio:.12} (e² = {:.12}, difference {:+.2e})",
            k + 1,
            e * e,
            ratio - e * e
        );
        assert!((ratio - e * e).abs() < 1e-8, "{method}: ratio {ratio}");
    }
    let y = sim.y.clone();
    let drift = (energy(&sim, &y) - e0) / e0;
    println!(
        "{method}: {} events; worst impact-time difference {worst_dt:.2e} s; energy_total drift \
         over the run {drift:+.2e} relative (asserted 1e-10); {} steps, {} rejected, {} rhs \
         evaluations",
        sim.stats.events, sim.stats.steps, sim.stats.rejected_steps, sim.stats.rhs_evaluations
    );
    assert!(drift.abs() < 1e-10, "{method}: drift {drift:e}");
}

#[test]
fn piston_bounces_off_x_max_rk4() {
    bounces("rk4");
}

#[test]
fn piston_bounces_off_x_max_dopri5() {
    bounces("dopri5");
}

#[test]
fn piston_bounces_off_x_max_bdf() {
    bounces("bdf");
}

fn rests_on_the_stop(method: &str) {
    let exact = analytic(0.0, 0);
    let spec = stops_model(method, 0.0, false);
    let mut sim = build_simulation(&spec, None).unwrap();
    let o = sim.network.layout.first::<Piston>();
    let e0 = energy(&sim, &sim.y.clone());
    let (t_imp, v_imp) = exact.impacts[0];
    sim.advance_to(t_imp + 1e-3).unwrap();
    let ev = one_event(&sim, 0).clone();
    println!(
        "{method} e = 0: impact at {:.15} s (closed form {t_imp:.15} s, difference {:+.2e} s), \
         v before {:.12} m/s (closed form {v_imp:.12}), after {:?}",
        ev.t_s,
        ev.t_s - t_imp,
        ev.y_before[o + 1],
        ev.y_after[o + 1]
    );
    assert!((ev.t_s - t_imp).abs() <= 1e-12);
    assert_eq!(ev.y_after[o + 1], 0.0);
    for t in [0.05, 0.1, 0.2] {
        sim.advance_to(t).unwrap();
        let (x, v) = sim.piston_state(0);
        let y = sim.y.clone();
        let left = energy_left(&sim, &y);
        let ke = 0.5 * M * v_imp * v_imp;
        println!(
            "{method} e = 0, t = {t} s: x = {x:?} m (stop {A}), v = {v:?} m/s, events {}, \
             energy_left {left:.12} J (½m·v_impact² = {ke:.12} J), energy_total drift {:+.2e}",
            sim.stats.events,
            (energy(&sim, &y) - e0) / e0
        );
        assert_eq!((x, v), (A, 0.0), "{method}: the piston stays at the stop");
        assert_eq!(sim.stats.events, 1);
        assert!(((left - ke) / ke).abs() < 1e-9);
        assert!(((energy(&sim, &y) - e0) / e0).abs() < 1e-10);
    }
}

#[test]
fn piston_with_zero_restitution_stays_at_the_stop() {
    for method in ["rk4", "dopri5", "bdf"] {
        rests_on_the_stop(method);
    }
}

#[test]
fn piston_bounces_off_x_min() {
    // The mirrored motion: the spring pulls towards −x_s, the stop is x_min = −a.
    let e = 0.8;
    let exact = analytic(e, 1);
    for method in ["rk4", "dopri5", "bdf"] {
        let spec = stops_model(method, e, true);
        let mut sim = build_simulation(&spec, None).unwrap();
        let o = sim.network.layout.first::<Piston>();
        sim.advance_to(exact.apexes[0].0).unwrap();
        let ev = one_event(&sim, 0).clone();
        let (t_imp, v_imp) = exact.impacts[0];
        let (vb, va) = (ev.y_before[o + 1], ev.y_after[o + 1]);
        let x_apex = sim.piston_state(0).0;
        println!(
            "{method} x_min: impact at {:.15} s (closed form {t_imp:.15} s, difference {:+.2e} \
             s), v before {vb:.12} m/s (closed form {:.12}), after {va:.12} m/s = −e·v: {}, \
             x after {:?}; apex x = {x_apex:.12} m (closed form {:.12})",
            ev.t_s,
            ev.t_s - t_imp,
            -v_imp,
            va == -e * vb,
            ev.y_after[o],
            -exact.apexes[0].1
        );
        assert!((ev.t_s - t_imp).abs() <= 1e-12);
        assert_eq!(va, -e * vb);
        assert_eq!(ev.y_after[o], -A);
        assert!((x_apex + exact.apexes[0].1).abs() < 1e-10);
    }
}
