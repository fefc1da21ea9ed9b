//! Kinks of a continuous law located as events: a regulator's seats at their ends of travel,
//! a tube's Reynolds blend at its ends,
//! against a tight-tolerance BDF run of the same model.

use crate::common::{output, sim_of};

/// A relieving regulator (set 4 bar gauge, range 0.5 bar, C = 1e-8 m³/(s·Pa), b = 0.6) between
/// a 10 bar supply and a 0.1 L outlet starting at 6 bar, which an orifice (C = 3e-8) draws to
/// the atmosphere until 0.12 s; the set point falls to 3 bar gauge from 0.25 s to 0.3 s. The
/// outlet falls through the relief seat's fully-open point (5.5 bar), the set point (5 bar) and
/// the main seat's fully-open point (4.5 bar), rises back through it when the draw closes, and
/// the falling set point passes it again (the relief seat cracks).
fn regulator_model(method: &str, rtol: f64) -> String {
    format!(
        r#"
[model]
name = "regulator_kinks"
[gas]
species = "air"
[solver]
method = "{method}"
t_end = 0.4
rtol = {rtol:e}
atol = 1e-16
[[chamber]]
name = "out"
volume = "0.1 L"
pressure = "6 bar"
temperature = 288.15
[[reservoir]]
name = "supply"
pressure = "10 bar"
temperature = 288.15
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 288.15
[[regulator]]
name = "reg"
from = "supply"
to = "out"
exhaust = "atm"
set_pressure = {{ table = [[0, 4e5], [0.25, 4e5], [0.3, 3e5]] }}
ambient_pressure = 1e5
regulation_range = "0.5 bar"
sonic_conductance = 1e-8
critical_pressure_ratio = 0.6
[[orifice]]
name = "draw"
from = "out"
to = "atm"
sonic_conductance = 3e-8
critical_pressure_ratio = 0.5
opening = {{ table = [[0, 1], [0.12, 0]], interpolation = "step" }}
"#
    )
}

/// The outlet's pressure and mass every 10 ms, and the run's events.
fn trajectory(method: &str, rtol: f64) -> (Vec<[f64; 2]>, usize) {
    let mut sim = sim_of(&regulator_model(method, rtol));
    let mut rows = Vec::new();
    for k in 1..=40 {
        sim.advance_to(0.01 * k as f64)
            .unwrap_or_else(|e| panic!("{method}: {}", e.message));
        rows.push([output(&mut sim, "out.p"), output(&mut sim, "out.m")]);
    }
    (rows, sim.stats.events as usize)
}

/// Located, the seats' ends of travel keep dopri5 and auto at rtol 1e-6 within 3 × rtol of an
/// rtol 1e-11 BDF run; stepped over (before they were events) both ended 19.1 × rtol from it.
#[test]
fn regulator_openings_ends_of_travel_are_located() {
    let (reference, ref_events) = trajectory("bdf", 1e-11);
    let rtol = 1e-6;
    for method in ["dopri5", "auto"] {
        let (rows, events) = trajectory(method, rtol);
        let mut worst = (0.0f64, 0);
        for (k, (a, b)) in rows.iter().zip(&reference).enumerate() {
            for (x, y) in a.iter().zip(b) {
                let rel = (x / y - 1.0).abs();
                if rel > worst.0 {
                    worst = (rel, k + 1);
                }
            }
        }
        println!(
            "{method} at rtol {rtol:e}: largest relative difference from bdf at 1e-11 {:.3e} \
             ({:.3} × rtol) at t = {:.2} s; {events} events (bdf: {ref_events})",
            worst.0,
            worst.0 / rtol,
            0.01 * worst.1 as f64
        );
        // Five crossings at least: 5.5, 5.0 and 4.5 bar falling, 4.5 bar rising, the set point.
        assert!(events >= 5, "{method}: {events} events");
        assert!(worst.0 < 3.0 * rtol, "{method}: {:e}", worst.0);
    }
}

/// A 0.1 L tank at 2 bar venting to the atmosphere through a tube (1 m, 2 mm bore) of kind
/// `kind`: its flow starts turbulent (Re ≈ 17,600; an inertial tube's from rest, through both
/// ends) and passes the blend's ends Re = 4000 and 2300 near 0.3 s.
fn tube_model(kind: &str, method: &str, rtol: f64) -> String {
    format!(
        r#"
[model]
name = "tube_vent"
[gas]
species = "air"
[solver]
method = "{method}"
t_end = 1.0
rtol = {rtol:e}
atol = 1e-16
[[chamber]]
name = "tank"
volume = "0.1 L"
pressure = "2 bar"
temperature = 293.15
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
[[{kind}]]
name = "line"
from = "tank"
to = "atm"
length = 1.0
diameter = 2e-3
"#
    )
}

/// The tank's pressure and the line's flow every 20 ms of `kind`'s vent, and its events.
fn vent(kind: &str, method: &str, rtol: f64) -> (Vec<(f64, f64)>, u64) {
    let mut sim = sim_of(&tube_model(kind, method, rtol));
    let mut rows = Vec::new();
    for k in 1..=50 {
        sim.advance_to(0.02 * k as f64)
            .unwrap_or_else(|e| panic!("{kind}, {method}: {}", e.message));
        rows.push((output(&mut sim, "tank.p"), output(&mut sim, "line.mdot")));
    }
    (rows, sim.stats.events)
}

/// dopri5 and auto at rtol 1e-6 against an rtol 1e-11 BDF run of `kind`'s vent: the largest
/// relative difference of the tank's pressure, over rtol, after checking the flow passes both
/// ends of the blend (Re = 4·ṁ/(π·d·μ) above 4000, then below 2300).
fn vent_errors(kind: &str) -> Vec<f64> {
    let (reference, ref_events) = vent(kind, "bdf", 1e-11);
    let re = |mdot: f64| 4.0 * mdot / (std::f64::consts::PI * 2e-3 * 1.82e-5);
    let re_max = reference.iter().map(|r| re(r.1)).fold(0.0, f64::max);
    let re_last = re(reference[49].1);
    println!("{kind}: Re up to {re_max:.0}, {re_last:.2e} at 1 s");
    assert!(re_max > 4000.0 && re_last < 2300.0);
    let rtol = 1e-6;
    let mut out = Vec::new();
    for method in ["dopri5", "auto"] {
        let (rows, events) = vent(kind, method, rtol);
        let mut worst = (0.0f64, 0);
        for (k, (a, b)) in rows.iter().zip(&reference).enumerate() {
            let rel = (a.0 / b.0 - 1.0).abs();
            if rel > worst.0 {
                worst = (rel, k + 1);
            }
        }
        println!(
            "{kind}, {method} at rtol {rtol:e}: largest relative difference from bdf at 1e-11 \
             {:.3e} ({:.3} × rtol) at t = {:.2} s; {events} events (bdf: {ref_events})",
            worst.0,
            worst.0 / rtol,
            0.02 * worst.1 as f64
        );
        assert!(events >= 2, "{kind}, {method}: {events} events");
        out.push(worst.0 / rtol);
    }
    out
}

/// Located, the blend's ends keep dopri5 and auto at rtol 1e-6 within 2 × rtol of an rtol
/// 1e-11 BDF run (the tank's pressure every 20 ms); stepped over (before they were events) both
/// ended 11.4 × rtol from it.
#[test]
fn tube_reynolds_blend_ends_are_located() {
    for x in vent_errors("tube") {
        assert!(x < 2.0, "{x} × rtol");
    }
}

/// The inertial tube's blend ends, points of its own state ṁ, likewise: dopri5 within 0.05 ×
/// rtol (0.33 × stepping over them). auto's largest difference, 3.2 × rtol at 0.1 s, is the
/// same either way (3.28 × stepping over them): not the kinks'.
#[test]
fn inertial_tube_reynolds_blend_ends_are_located() {
    let x = vent_errors("inertial_tube");
    assert!(x[0] < 0.05, "dopri5: {} × rtol", x[0]);
    assert!(x[1] < 4.0, "auto: {} × rtol", x[1]);
}

/// A piston (1 kg, 1e-3 m², stops at ±5 mm) driven by a 1 L chamber at 7.4 bar, which vents
/// through an ISO 6358 orifice, compresses a 0.17 L chamber from 1 bar; that chamber is vented
/// through a plain orifice (1.5 mm²), so its pressure rises across the atmosphere's, through
/// the orifice's laminar band (p_low/p_high > 0.999, ±101 Pa) in about 0.2 ms, into it on one
/// side and out of it on the other, then the piston lands on its stop and the chamber vents.
fn crossing_model(method: &str, rtol: f64) -> String {
    format!(
        r#"
[model]
name = "laminar_crossing"
[gas]
species = "air"
[solver]
method = "{method}"
rtol = {rtol:e}
atol = 1e-12
t_end = 0.2
[[reservoir]]
name = "atm"
pressure = 101325.0
temperature = 293.15
[[chamber]]
name = "c0"
volume = "1 L"
pressure = "7.379313803739739 bar"
temperature = 293.15
[[chamber]]
name = "c1"
volume = "0.17064593314171744 L"
pressure = "1 bar"
temperature = 293.15
[[orifice]]
name = "v0"
from = "c1"
to = "atm"
area = 1.537636424172218e-6
[[orifice]]
name = "v1"
from = "c0"
to = "atm"
sonic_conductance = 3.5363279037299615e-8
critical_pressure_ratio = 0.3
[[piston]]
name = "p"
behind = "c0"
ahead = "c1"
area = 1e-3
mass = 1
x0 = 0.0
x_min = -0.005
x_max = 0.005
damping = 1.0
"#
    )
}

/// The largest error of c1's pressure over 40 output times, relative to its largest value,
/// against an rtol 1e-11 `bdf` run.
fn crossing_error(method: &str, rtol: f64) -> f64 {
    error_of(crossing_model, method, rtol).0
}

/// When run-time check 11 (an explicit method past what it can resolve) first fired in a run.
fn warned_at(sim: &plenum::simulation::Simulation) -> Option<f64> {
    sim.first_fired_s[plenum::checks::BEYOND_STABILITY as usize]
}

/// [`crossing_error`] of the network `model` gives, with the run's steps and right-hand sides
/// and when check 11 first fired.
fn error_of(
    model: fn(&str, f64) -> String,
    method: &str,
    rtol: f64,
) -> (f64, u64, u64, Option<f64>) {
    let mut sim = sim_of(&model(method, rtol));
    let mut reference = sim_of(&model("bdf", 1e-11));
    let (mut worst, mut scale) = (0.0f64, 0.0f64);
    for k in 1..=40 {
        let t = 0.005 * k as f64;
        sim.advance_to(t)
            .unwrap_or_else(|e| panic!("{method}: {}", e.message));
        reference.advance_to(t).expect("reference");
        let (a, b) = (output(&mut sim, "c1.p"), output(&mut reference, "c1.p"));
        worst = worst.max((a - b).abs());
        scale = scale.max(b.abs());
    }
    (
        worst / scale,
        sim.stats.steps,
        sim.stats.rhs_evaluations,
        warned_at(&sim),
    )
}

/// [`crossing_model`] with its ISO orifice turned into a relief valve from c0 into c1 (42.6 kPa,
/// a 1 Pa band) instead of to the atmosphere: the switching property's draw of seed 13, shrunk.
/// The piston lands on its stop and c0 vents into c1 through the valve, held in its band while
/// c1 vents; DP5's steps there start and end closed while their inner stages enter the band.
fn hidden_crossing_model(method: &str, rtol: f64) -> String {
    let m = crossing_model(method, rtol)
        .replace(
            "from = \"c0\"\nto = \"atm\"\n",
            "from = \"c0\"\nto = \"c1\"\n",
        )
        .replace(
            "critical_pressure_ratio = 0.3\n",
            "critical_pressure_ratio = 0.3\ncracking_pressure = 4.259736019583593e4\n\
             full_flow_pressure = 4.259836019583593e4\n",
        );
    assert!(
        m.contains("to = \"c1\"") && m.contains("cracking_pressure"),
        "{m}"
    );
    m
}

/// A relief valve whose band the inner stages of DP5's steps enter while both ends of each step
/// stay closed: no event, no chattering, but every DP5 step accepted only after rejections.
/// `auto` takes its BDF after 32 such steps: within 1.1 × rtol of the reference (102 × before,
/// in 1,758 steps and 35,582 right-hand sides).
#[test]
fn auto_takes_its_bdf_where_dp5_steps_are_fought() {
    let rtol = 1e-6;
    let (err, steps, rhs, warned) = error_of(hidden_crossing_model, "auto", rtol);
    println!(
        "auto at rtol {rtol:e}: c1.p within {:.2} × rtol of bdf at 1e-11 (bound 5), {steps} \
         steps, {rhs} right-hand sides; check 11 {warned:?}",
        err / rtol
    );
    assert!(err < 5.0 * rtol, "{err:e}");
    assert_eq!(warned, None, "auto takes its BDF and warns of nothing");
}

/// A forced `dopri5` has no BDF to take on that draw, and its answer is far off: it says so.
/// The same run of fought steps that turns `auto` to its BDF fires run-time check 11 (a
/// warning: the method cannot resolve the problem at its steps), as Hairer's stiffness
/// detection does; where its steps are not fought (the laminar crossing, within its
/// tolerance), nothing fires.
#[test]
fn a_forced_dopri5_whose_steps_are_fought_is_warned_about() {
    let rtol = 1e-6;
    let (err, steps, _, warned) = error_of(hidden_crossing_model, "dopri5", rtol);
    println!(
        "dopri5 on the hidden crossing: {:.1} × rtol off, {steps} steps; check 11 first at \
         {warned:?}",
        err / rtol
    );
    assert!(err > 20.0 * rtol, "the premise: far off ({err:e})");
    let t = warned.expect("check 11 fired");
    assert!(
        t < 0.04,
        "warned once the valve is in its band (0.032 s), not at {t}"
    );
    let (err, steps, _, warned) = error_of(crossing_model, "dopri5", rtol);
    println!(
        "dopri5 on the laminar crossing: {:.2} × rtol, {steps} steps; check 11 {warned:?}",
        err / rtol
    );
    assert!(err < 8.0 * rtol && warned.is_none());
}

/// The laminar band's two edges are located both ways by the adaptive methods, each edge by its
/// own event function (one per side of p_from = p_to): the single function of both sides,
/// 0.999·p_high − p_low, is positive at both ends of a step that crosses the whole band, and
/// `dopri5` stepped over both edges (26 × rtol at rtol 1e-6, from the switching property's
/// draw of seed 13). Left: the flow reversal inside the band, whose slope jumps by
/// √(T_to/T_from) only.
#[test]
fn a_laminar_band_crossed_in_one_step_is_located() {
    let rtol = 1e-6;
    for method in ["dopri5", "auto", "bdf"] {
        let err = crossing_error(method, rtol);
        println!(
            "{method} at rtol {rtol:e}: c1.p within {:.2} × rtol of bdf at 1e-11 (bound 8)",
            err / rtol
        );
        assert!(err < 8.0 * rtol, "{method}: {err:e}");
    }
}
