//! A law that chatters, solved at the method's order: a receiver fed at a constant mass flow and
//! relieved through a relief valve of a 1 Pa band hovers inside the band (an explicit step
//! would cross it back and forth: its stiffness there, ṁ_open/1 Pa·γRT/V ≈ 7e5 /s, is far past
//! any explicit step here). Its pressure is then held by the band, while its temperature (and
//! with it its mass) relaxes to the feed's: a slow manifold the implicit methods follow at
//! their order, the band's switches located as events.
//!
//! - `bdf1` (backward Euler, order 1) at h, h/2, h/4 against a `bdf` run at rtol 1e-11, at a
//!   time well inside the hover but before steady state: the observed order log2(e(h)/e(h/2))
//!   is 1 within 0.5.
//! - `bdf2` cannot show its order on this band: after every located switch it restarts with
//!   explicit RK4 steps, and one RK4 step inside the band is past its stability limit (h·λ ≈ 70
//!   at h = 1e-4 s), so its run chatters on the band (docs/integrators.md, "Switches").
//! - `auto` at rtol 1e-4, 1e-6, 1e-8: its error at that time shrinks with rtol, within a bounded
//!   multiple of it.

use crate::common::{output, sim_of};
use crate::switches::receiver;

/// The time the runs are compared at, s: the valve has cracked and hovers in its band, and the
/// vessel's temperature is still relaxing to the feed's (checked on the reference).
const T_CMP: f64 = 4.0;

/// The vessel's (p, T, m) at [`T_CMP`], the events and steps taken.
fn state_at(solver: &str) -> ([f64; 3], u64, u64) {
    let mut sim = sim_of(&receiver(solver));
    sim.advance_to(T_CMP)
        .unwrap_or_else(|e| panic!("{solver}: {}", e.message));
    let x = ["vessel.p", "vessel.T", "vessel.m"].map(|n| output(&mut sim, n));
    (x, sim.stats.events, sim.stats.steps)
}

/// The largest relative difference of two states.
fn error(x: &[f64; 3], reference: &[f64; 3]) -> f64 {
    x.iter()
        .zip(reference)
        .map(|(a, b)| (a / b - 1.0).abs())
        .fold(0.0, f64::max)
}

#[test]
fn hovering_relief_valve_converges_at_the_methods_order() {
    let (reference, ref_events, ref_steps) =
        state_at("method = \"bdf\"\nrtol = 1e-11\natol = 1e-16");
    let [p, temp, m] = reference;
    println!(
        "reference (bdf, rtol 1e-11) at {T_CMP} s: p = {p:.6} Pa, T = {temp:.9} K, \
         m = {m:.12e} kg; {ref_events} events, {ref_steps} steps"
    );
    // Inside the band: cracking at p_atm + 4e5, fully open 1 Pa above.
    assert!(p > 5e5 && p < 500001.0 + 1e-3, "{p}");
    // Not yet steady: the temperature is still away from the feed's.
    assert!((temp - 320.0).abs() > 1.0, "{temp}");

    // bdf1 at h, h/2, h/4: first order.
    let mut errors = Vec::new();
    let mut states = Vec::new();
    for h in [4e-4, 2e-4, 1e-4] {
        let (x, events, steps) = state_at(&format!("method = \"bdf1\"\nstep = {h:e}"));
        let e = error(&x, &reference);
        println!("bdf1 h = {h:e} s: error {e:.3e} ({events} events, {steps} steps)");
        assert!(events < 100, "bdf1 at {h:e} chattered: {events} events");
        errors.push(e);
        states.push(x);
    }
    // The reference is not the method's own limit by chance: Richardson's extrapolation of
    // the two finest bdf1 runs (2·x(h/4) − x(h/2), the first-order term removed) meets it far
    // closer than either run.
    let richardson: [f64; 3] = std::array::from_fn(|i| 2.0 * states[2][i] - states[1][i]);
    let r = error(&richardson, &reference);
    println!("bdf1 Richardson extrapolation: {r:.3e} from the reference");
    assert!(r < 0.01 * errors[2], "{r:e}");
    for w in errors.windows(2) {
        let order = (w[0] / w[1]).log2();
        println!("bdf1 observed order {order:.3} (method's order 1)");
        assert!((order - 1.0).abs() < 0.5, "observed order {order}");
    }

    // bdf2 at the smallest h, for the record (see the module's comment): its RK4 restarts
    // chatter on the band.
    let (x, events, steps) = state_at("method = \"bdf2\"\nstep = 1e-4");
    println!(
        "bdf2 h = 1e-4 s: error {:.3e}, p = {:.6} Pa ({events} events, {steps} steps)",
        error(&x, &reference),
        x[0]
    );

    // auto: error in proportion to rtol.
    let mut last = f64::INFINITY;
    for rtol in [1e-4, 1e-6, 1e-8] {
        let (x, events, steps) = state_at(&format!(
            "method = \"auto\"\nrtol = {rtol:e}\natol = {:e}",
            rtol * 1e-6
        ));
        let e = error(&x, &reference);
        println!(
            "auto rtol {rtol:e}: error {e:.3e} = {:.2} × rtol ({events} events, {steps} steps)",
            e / rtol
        );
        assert!(e < 20.0 * rtol, "auto rtol {rtol:e}: error {e:e}");
        assert!(
            e < last,
            "auto rtol {rtol:e}: error {e:e} not below {last:e}"
        );
        last = e;
    }
}

/// A state resting on two switches at once: the gallery's double-acting cylinder at rest on its
/// `x_max` stop after a retract command, its rod side filled to the regulator's set point. There
/// the rod cushion's check valve sits at Δp = 0 (its opening and closing are events) beside the
/// regulator at its closing point, so `auto`'s BDF restarts on the check valve's switch again
/// and again. Driven as a Co-Simulation master drives it (the spool an input, set at each
/// switch, the integrator restarted there; one advance to the end), the rod side must hold the
/// set point: the regulator closes its supply at p_set and relieves above it, and nothing else
/// feeds the rod side while the piston stands. A Jacobian evaluated within round-off of the
/// check valve's switch and kept through the ramp of steps after the restart let it drift
/// 0.046 Pa (66 × rtol) above (`History::early_step_of_restart`).
#[test]
fn a_cylinder_at_rest_on_its_stop_holds_the_regulators_set_point() {
    let text = std::fs::read_to_string(crate::common::repo_path(
        "examples/double_acting/model.toml",
    ))
    .expect("the gallery model");
    let start = text
        .find("\nposition = { table = [")
        .expect("a position table")
        + 1;
    let end = start + text[start..].find("}\n").expect("its end") + 2;
    let text = format!("{}position = 0.0\n{}", &text[..start], &text[end..]);
    assert!(
        text.contains("set_pressure = \"6 bar\"")
            && text.contains("name = \"atm\"\npressure = \"1.01325 bar\"")
    );
    let p_set = 6e5 + 1.01325e5;
    let rtol = 1e-9;
    let mut sim = sim_of(&text);
    // The controller's switches (examples/double_acting/controller.py on its reed switches).
    for (t, position) in [(0.05, 1.0), (0.76, 0.0), (1.7, 1.0), (2.41, 0.0)] {
        sim.advance_to(t)
            .unwrap_or_else(|e| panic!("to {t} s: {}", e.message));
        assert!(
            sim.network
                .set_scalar("valve", "position", position)
                .expect("an input")
        );
        sim.restart_at_reported_state();
    }
    // 2.506 s: the cap side still empties, the piston still stands on its stop (it leaves at
    // 2.512 s in an rtol 1e-12 run).
    sim.advance_to(2.506)
        .unwrap_or_else(|e| panic!("to 2.506 s: {}", e.message));
    let x = output(&mut sim, "cyl.x");
    assert_eq!(x, 0.1, "the piston stands on its stop");
    let bound = 10.0 * rtol * p_set;
    for name in ["cyl_rod_bore.p", "cyl_rod.p", "line_b_1.p", "frl_out.p"] {
        let p = output(&mut sim, name);
        println!(
            "{name}: {:+.3e} Pa from the set point {p_set} Pa (bound ±{bound:.1e} Pa, 10 × rtol)",
            p - p_set
        );
        assert!((p - p_set).abs() <= bound, "{name} = {p} Pa");
    }
    println!("{} events, {} steps", sim.stats.events, sim.stats.steps);
}

/// Two relief valves in series, c0 → c1 → the atmosphere (ISO 6358 paths with bands of 25 Pa
/// and 102 Pa, as `switch_property.rs` drew them with seed 7): each vents until it closes, so
/// the state settles onto both closing points at once, c1 = p_atm + Δp_c1 and
/// c0 = c1 + Δp_c0. On the closed side of the first valve the second still lowers c1, so both
/// sides of that kink push the state towards it, and the open flow that balances them is far
/// below the tolerance's noise: the method's own error crosses the switch at every step.
fn series_reliefs(method: &str, rtol: f64) -> String {
    format!(
        r#"
[model]
name = "series_reliefs"
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
volume = "0.2655258890720447 L"
pressure = "9.606599989097159 bar"
temperature = 293.15
[[chamber]]
name = "c1"
volume = "0.24625341887746793 L"
pressure = "1 bar"
temperature = 293.15
[[orifice]]
name = "v0"
from = "c0"
to = "c1"
sonic_conductance = 4.256208e-8
critical_pressure_ratio = 0.3
cracking_pressure = 22559.46
full_flow_pressure = 22584.64
[[orifice]]
name = "v1"
from = "c1"
to = "atm"
sonic_conductance = 5.796704e-8
critical_pressure_ratio = 0.3
cracking_pressure = 88819.40
full_flow_pressure = 88921.26
"#
    )
}

#[test]
fn two_relief_valves_in_series_settle_on_both_closing_points_without_chattering() {
    // Each crossing by the method's own error used to be an event: `bdf` at rtol 1e-11 took
    // 100,000 of them 3e-13 s apart and stopped at its step limit. A switch an event restarted
    // on is now passed over while the state stays within the tolerance's noise of it.
    let c1_closed = 101325.0 + 88819.40;
    let c0_closed = c1_closed + 22559.46;
    let mut worst = 0.0f64;
    for method in ["auto", "dopri5", "bdf", "backward-euler"] {
        for rtol in [1e-6, 1e-8, 1e-11] {
            let mut sim = sim_of(&series_reliefs(method, rtol));
            sim.advance_to(0.2)
                .unwrap_or_else(|e| panic!("{method} rtol {rtol:e}: {}", e.message));
            let (p0, p1) = (output(&mut sim, "c0.p"), output(&mut sim, "c1.p"));
            let multiple = ((p0 - c0_closed) / (rtol * c0_closed))
                .abs()
                .max(((p1 - c1_closed) / (rtol * c1_closed)).abs());
            worst = worst.max(multiple);
            println!(
                "{method:>14} rtol {rtol:e}: c0 {:+.3e} Pa, c1 {:+.3e} Pa from the closed form \
                 ({multiple:.2} × rtol, bound 5), {} events, {} steps",
                p0 - c0_closed,
                p1 - c1_closed,
                sim.stats.events,
                sim.stats.steps
            );
            assert!(sim.stats.events < 100, "{method} rtol {rtol:e}: chattered");
            assert!(multiple <= 5.0, "{method} rtol {rtol:e}: {multiple} × rtol");
        }
    }
    println!("worst {worst:.2} × rtol (margin {:.1}×)", 5.0 / worst);
}
