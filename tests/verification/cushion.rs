//! End cushioning of a cylinder (`crate::components::cushion`) against independent truths: the
//! same circuit written with primitive kinds (inside the cushion zone the needle is a plain
//! orifice and the check valve a one-way one), the adiabatic compression of the gas a closed
//! needle traps (p·V^γ constant, and the piston stopping where its kinetic energy equals the
//! compression's work), and the convergence of the adaptive methods across the zone's events.

use crate::common::sim_of;
use plenum::simulation::Simulation;
use plenum::variables::{output_variables, write_outputs};

fn outputs(sim: &mut Simulation) -> Vec<(String, f64)> {
    let vars = output_variables(sim);
    let mut out = vec![0.0; vars.len()];
    write_outputs(sim, &mut out);
    vars.into_iter().map(|v| v.name).zip(out).collect()
}

fn value(outs: &[(String, f64)], name: &str) -> f64 {
    outs.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no output {name}"))
        .1
}

const BORE_M: f64 = 0.032;
const ROD_M: f64 = 0.012;
const STROKE_M: f64 = 0.1;
const CUSHION_M: f64 = 0.02;
const NEEDLE_M2: f64 = 3e-7;
const PORT_D_M: f64 = 0.004;
const PORT_V_M3: f64 = 1e-6;
const DEAD_V_M3: f64 = 2e-6;

fn area(d: f64) -> f64 {
    std::f64::consts::PI / 4.0 * d * d
}

/// A cylinder (its table given): `feed` names the port fed from a 6 bar
/// supply, `drain` the port that exhausts to the atmosphere (both through ISO 6358 orifices).
fn circuit(solver: &str, feed: &str, drain: &str, cylinder: &str) -> String {
    format!(
        r#"
[model]
name = "cushion"
[gas]
species = "air"
[solver]
{solver}
[[reservoir]]
name = "supply"
pressure = 6e5
temperature = 293.15
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
{cylinder}
[[orifice]]
name = "feed"
from = "supply"
to = "{feed}"
sonic_conductance = 1e-8
critical_pressure_ratio = 0.3
[[orifice]]
name = "drain"
from = "{drain}"
to = "atm"
sonic_conductance = 1e-8
critical_pressure_ratio = 0.3
"#
    )
}

fn cylinder(x0: f64) -> String {
    format!(
        r#"[[cylinder]]
name = "cyl"
vent = "atm"
bore = {BORE_M:e}
rod_diameter = {ROD_M:e}
stroke = {STROKE_M:e}
dead_volume = {DEAD_V_M3:e}
mass = 0.5
x0 = {x0:e}
pressure = 1e5
temperature = 293.15
cushion_length = {CUSHION_M:e}
cushion_needle_area = {NEEDLE_M2:e}
port_diameter = {PORT_D_M:e}
port_volume = {PORT_V_M3:e}
"#
    )
}

/// The same cylinder of primitive kinds as it stands inside the cap end's cushion and outside
/// the rod end's: the cap's needle an orifice and its check valve a one-way orifice from the
/// port; the rod end's passage and needle two orifices.
fn by_hand(x0: f64) -> String {
    let (a, ar) = (area(BORE_M), area(ROD_M));
    let rod_volume = DEAD_V_M3 + (a - ar) * STROKE_M;
    let ap = area(PORT_D_M);
    let chamber = |name: &str, v: f64| {
        format!(
            "[[chamber]]\nname = \"{name}\"\nvolume = {v:e}\npressure = 1e5\n\
             temperature = 293.15\n"
        )
    };
    let orifice = |name: &str, from: &str, to: &str, area: f64, one_way: bool| {
        format!(
            "[[orifice]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\narea = {area:e}\n\
             one_way = {one_way}\n"
        )
    };
    [
        chamber("cyl_cap", PORT_V_M3),
        chamber("cyl_cap_bore", DEAD_V_M3),
        chamber("cyl_rod", PORT_V_M3),
        chamber("cyl_rod_bore", rod_volume),
        format!(
            "[[piston]]\nname = \"cyl\"\nbehind = \"cyl_cap_bore\"\nahead = \"cyl_rod_bore\"\n\
             area = {a:e}\nmass = 0.5\nx0 = {x0:e}\nx_min = 0.0\nx_max = {STROKE_M:e}\n\
             rod_area = {ar:e}\nrod_vent = \"atm\"\n"
        ),
        orifice("cap_needle", "cyl_cap_bore", "cyl_cap", NEEDLE_M2, false),
        orifice("cap_check", "cyl_cap", "cyl_cap_bore", ap, true),
        orifice("rod_needle", "cyl_rod_bore", "cyl_rod", NEEDLE_M2, false),
        orifice("rod_passage", "cyl_rod_bore", "cyl_rod", ap, false),
    ]
    .concat()
}

/// (a) Retracting inside the cap end's cushion, the cylinder is its primitive circuit: every
/// output the two share agrees to round-off of the order in which their flows add up. Fixed
/// steps (RK4), so that both take the same steps: with adaptive ones that round-off moves the
/// steps, and the two differ by a multiple of rtol instead (~1e3·rtol for dopri5).
#[test]
fn inside_its_cushion_a_cylinder_is_a_needle_and_a_check_valve() {
    let x0 = 0.015;
    let solver = "method = \"rk4\"\nstep = 2e-6\nt_end = 0.3";
    let part = circuit(solver, "cyl_rod", "cyl_cap", &cylinder(x0));
    let hand = circuit(solver, "cyl_rod", "cyl_cap", &by_hand(x0));
    let (mut a, mut b) = (sim_of(&part), sim_of(&hand));
    let (mut worst, mut worst_name, mut x_min) = (0.0_f64, String::new(), f64::INFINITY);
    let mut p_peak = 0.0_f64;
    for k in 1..=60 {
        let t = 0.005 * k as f64;
        a.advance_to(t).expect("runs");
        b.advance_to(t).expect("runs");
        let (oa, ob) = (outputs(&mut a), outputs(&mut b));
        let x = value(&oa, "cyl.x");
        assert!(
            x < CUSHION_M,
            "the piston stays inside the cap's cushion: x = {x}"
        );
        x_min = x_min.min(x);
        p_peak = p_peak.max(value(&oa, "cyl_cap_bore.p"));
        for (name, va) in &oa {
            if let Some((_, vb)) = ob.iter().find(|(n, _)| n == name) {
                let scale = va.abs().max(vb.abs()).max(1e-3);
                let d = (va - vb).abs() / scale;
                if d > worst {
                    (worst, worst_name) = (d, name.clone());
                }
            }
        }
    }
    println!(
        "retracting from x0 = {x0} m inside the cushion: reached x = {x_min:.6} m, cushion \
         peak {p_peak:.0} Pa; largest relative difference to the primitive circuit {worst:.3e} \
         ({worst_name})"
    );
    assert!(p_peak > 2e5, "the cushion builds pressure: {p_peak}");
    assert!(worst < 1e-11, "{worst:e} in {worst_name}");
}

/// (b) A closed needle traps the cushion's gas: it is compressed adiabatically (p·V^γ stays
/// that of the first point inside the zone), and the piston stops where its kinetic energy
/// there equals the compression's work A·∫(p − p_atm)·dx of that adiabat, before the stop.
#[test]
fn a_closed_needle_stops_the_piston_on_the_adiabat() {
    let a = area(BORE_M);
    let (v0, mass, p_atm) = (-3.0, 0.5, 1e5);
    let src = format!(
        r#"
[model]
name = "closed_needle"
[gas]
species = "air"
[solver]
method = "dopri5"
rtol = 1e-11
atol = 1e-14
t_end = 0.05
[[reservoir]]
name = "atm"
pressure = {p_atm:e}
temperature = 293.15
[[reservoir]]
name = "exhaust"
pressure = {p_atm:e}
temperature = 293.15
[[chamber]]
name = "bore"
volume = {DEAD_V_M3:e}
pressure = {p_atm:e}
temperature = 293.15
[[piston]]
name = "p"
behind = "bore"
ahead = "atm"
area = {a:e}
mass = {mass}
x0 = 0.05
v0 = {v0}
x_min = 0.0
x_max = 0.1
cushion_length = {CUSHION_M:e}
cushion_port_min = "exhaust"
cushion_needle_area_min = 0.0
cushion_port_area = {:e}
"#,
        area(PORT_D_M)
    );
    let mut sim = sim_of(&src);
    let gamma = sim.network.gas.gamma;
    let volume = |x: f64| DEAD_V_M3 + a * x;
    // The first sample inside the zone fixes the adiabat and the kinetic energy.
    let mut first: Option<(f64, f64, f64)> = None;
    let (mut worst_invariant, mut x_stop) = (0.0_f64, f64::NAN);
    let dt = 1e-6;
    for k in 1..=50_000 {
        sim.advance_to(k as f64 * dt).expect("runs");
        let o = outputs(&mut sim);
        let (x, v, p) = (value(&o, "p.x"), value(&o, "p.v"), value(&o, "bore.p"));
        if v >= 0.0 {
            x_stop = x;
            break;
        }
        if x >= CUSHION_M {
            continue;
        }
        let (x1, _, p1) = *first.get_or_insert((x, v, p));
        let want = p1 * (volume(x1) / volume(x)).powf(gamma);
        worst_invariant = worst_invariant.max((p - want).abs() / want);
    }
    let (x1, v1, p1) = first.expect("the piston entered the cushion");
    // The work of the adiabat from x1 down to x: p1·V1^γ/(γ − 1)·(V^(1−γ) − V1^(1−γ)) less
    // the atmosphere's p_atm·(V1 − V).
    let work = |x: f64| {
        let (v, w1) = (volume(x), volume(x1));
        p1 * w1.powf(gamma) / (gamma - 1.0) * (v.powf(1.0 - gamma) - w1.powf(1.0 - gamma))
            - p_atm * (w1 - v)
    };
    let kinetic = 0.5 * mass * v1 * v1;
    let available = work(0.0);
    // The stop of the closed form: work(x) = kinetic, by bisection on [0, x1].
    let (mut lo, mut hi) = (0.0, x1);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if work(mid) > kinetic {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let want_stop = 0.5 * (lo + hi);
    println!(
        "closed needle: entered at x1 = {x1:.6} m, v = {v1:.6} m/s, p = {p1:.1} Pa; kinetic \
         energy {kinetic:.6} J, compression work to the end {available:.6} J; stops at \
         x = {x_stop:.9} m, closed form {want_stop:.9} m; worst |p·V^γ| drift {worst_invariant:.3e}"
    );
    assert!(kinetic < available, "the gas can stop it before the end");
    assert!(x_stop > 0.0, "stopped before the end: {x_stop}");
    assert!(worst_invariant < 1e-8, "{worst_invariant:e}");
    // Sampling every µs near the turning point: x is off its minimum by ½·a·dt² at most.
    assert!((x_stop - want_stop).abs() < 1e-8, "{x_stop} vs {want_stop}");
}

/// A full extension into the rod end's cushion, sampled every 10 ms.
fn extension(method: &str, rtol: f64) -> (Vec<[f64; 3]>, Vec<String>) {
    // The masses of the ports are ~1e-6 kg: atol far below them, so that rtol sets the steps.
    let solver = format!(
        "method = \"{method}\"\nrtol = {rtol:e}\natol = {:e}\nt_end = 0.6",
        rtol * 1e-9
    );
    let src = circuit(&solver, "cyl_cap", "cyl_rod", &cylinder(0.0));
    let mut sim = sim_of(&src);
    let mut samples = Vec::new();
    let mut events = Vec::new();
    let mut seen = 0;
    for k in 1..=600 {
        sim.advance_to(0.001 * k as f64).expect("runs");
        if sim.stats.events > seen {
            seen = sim.stats.events;
            if let Some(e) = &sim.last_event {
                events.push(sim.network.event_description(e.k));
            }
        }
        if k % 10 == 0 {
            let o = outputs(&mut sim);
            samples.push([
                value(&o, "cyl.x"),
                value(&o, "cyl_rod_bore.p"),
                value(&o, "cyl_cap_bore.p"),
            ]);
        }
    }
    (samples, events)
}

/// (c) Across the cushion's events (the rod end's entered, left and entered again as the
/// cushion's air spring throws the piston back, then the stop), dopri5 and auto at rtol 1e-6
/// and 1e-8 against dopri5 at 1e-11: the position within 10·rtol of the stroke, the pressures
/// within 200·rtol of themselves, and both errors shrinking with rtol. The pressures' multiple
/// is the cushion's: near the end its gas volume is a few cm³, so a position error δx moves
/// its pressure by γ·p·A·δx/V, some 25 times the position's relative error.
#[test]
fn cushioned_strokes_converge_with_rtol() {
    let (reference, events) = extension("dopri5", 1e-11);
    let count = |what: &str| events.iter().filter(|e| e.contains(what)).count();
    println!(
        "events of the reference: {} in all; rod cushion entered {}, left {}; stop {}",
        events.len(),
        count("enters its cushion at x_max"),
        count("leaves its cushion at x_max"),
        count("at its stop x_max")
    );
    assert!(
        count("enters its cushion at x_max") >= 1,
        "the rod end's cushion was entered as an event: {events:?}"
    );
    let x_end = reference.last().expect("samples")[0];
    assert!(
        x_end > STROKE_M - CUSHION_M,
        "the stroke reaches the cushion: {x_end}"
    );
    for method in ["dopri5", "auto"] {
        let mut errors = Vec::new();
        for rtol in [1e-6, 1e-8] {
            let (run, _) = extension(method, rtol);
            let (mut ex, mut ep) = (0.0_f64, 0.0_f64);
            for (r, s) in reference.iter().zip(&run) {
                ex = ex.max((r[0] - s[0]).abs() / STROKE_M);
                ep = ep
                    .max(((r[1] - s[1]) / r[1]).abs())
                    .max(((r[2] - s[2]) / r[2]).abs());
            }
            println!(
                "{method} at rtol {rtol:e}: worst error in x {ex:.3e} ({:.1}·rtol of the \
                 stroke), in the pressures {ep:.3e} ({:.1}·rtol)",
                ex / rtol,
                ep / rtol
            );
            assert!(ex < 10.0 * rtol, "{method} x: {ex:e}");
            assert!(ep < 200.0 * rtol, "{method} p: {ep:e}");
            errors.push(ex.max(ep));
        }
        let ratio = errors[0] / errors[1];
        println!("{method}: the error falls {ratio:.1}-fold for a 100-fold rtol");
        assert!((30.0..300.0).contains(&ratio), "{method}: {ratio}");
    }
}

/// A sealed cushioned cylinder (no port connected: each port a closed chamber) keeps its mass
/// and its energy through a stroke into its rod end's cushion: the cushion's flows only move
/// gas and its enthalpy between a bore and its port.
#[test]
fn a_sealed_cushioned_cylinder_keeps_its_mass_and_energy() {
    let src = format!(
        r#"
[model]
name = "sealed"
[gas]
species = "air"
[solver]
method = "dopri5"
rtol = 1e-10
t_end = 0.5
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
{}rod_pressure = 1e5
"#,
        cylinder(0.05).replace("pressure = 1e5\n", "pressure = 4e5\n")
    );
    let mut sim = sim_of(&src);
    let o = outputs(&mut sim);
    let (m0, e0) = (value(&o, "mass_total"), value(&o, "energy_total"));
    let (mut worst_m, mut worst_e, mut lo, mut hi) = (0.0_f64, 0.0_f64, 1.0_f64, 0.0_f64);
    for k in 1..=100 {
        sim.advance_to(0.005 * k as f64).expect("runs");
        let o = outputs(&mut sim);
        worst_m = worst_m.max((value(&o, "mass_total") / m0 - 1.0).abs());
        worst_e = worst_e.max((value(&o, "energy_total") / e0 - 1.0).abs());
        let x = value(&o, "cyl.x");
        (lo, hi) = (lo.min(x), hi.max(x));
    }
    println!(
        "sealed, cap at 4 bar: x between {lo:.5} and {hi:.5} m; mass drift {worst_m:.1e}, \
         energy drift {worst_e:.1e}"
    );
    assert!(
        hi > STROKE_M - CUSHION_M,
        "it entered the rod cushion: {hi}"
    );
    assert!(worst_m < 1e-12, "{worst_m:e}");
    assert!(worst_e < 1e-8, "{worst_e:e}");
}

/// Model Exchange reports as indicators only the events a network's structure lets fire: a
/// piston without cushions carries its kind's cushion event slots, which can never fire, and
/// which would be indicators that stay 1 (so do a plain orifice's valve points). The gallery
/// fixture's cushions at both ends add their events (`cushion::EVENTS`) to its indicators;
/// without cushions, every event left out is `None` (cannot fire) at every instant of the run,
/// and the ones reported are the same functions with the same values in both counts' order.
#[test]
fn model_exchange_indicators_are_the_events_that_can_fire() {
    use plenum::components::cushion;
    use plenum::cosim::{Instance, Interface};
    let path = crate::common::repo_path("tests/fixtures/models/cushioned_cylinder.toml");
    let cushioned = std::fs::read_to_string(&path).expect("the fixture");
    let plain: String = cushioned
        .lines()
        .filter(|l| {
            !["cushion_", "port_diameter", "port_volume"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let indicators = |src: &str| {
        Instance::with_interface(src, "model.toml", Interface::ModelExchange)
            .expect("loads")
            .n_event_indicators()
    };
    let (with, without) = (indicators(&cushioned), indicators(&plain));
    let slots = sim_of(&plain).network.n_events();
    println!(
        "indicators: {with} with cushions, {without} without; {slots} event slots; \
         {} cushion events",
        cushion::EVENTS
    );
    assert_eq!(with - without, cushion::EVENTS);
    // Left out beside them: the slots the fixture's other parts lack (its orifices' valve
    // points), the same with cushions or without.
    assert!(
        slots - without >= cushion::EVENTS,
        "every cushion slot left out: {slots} slots, {without} indicators"
    );
    // Without cushions, the events left out never can fire along the run.
    let mut sim = sim_of(&plain);
    let reported = sim.network.reported_events().to_vec();
    let (mut t, mut checked) = (0.0, 0);
    while t < 0.3 {
        t += 1e-3;
        sim.advance_to(t).expect("runs");
        for k in (0..slots).filter(|&k| !reported.contains(&(k as u32))) {
            let g = sim.network.event_value(k, sim.t_s, &sim.y);
            assert!(
                g.is_none(),
                "event {k} ({}) is {g:?} at t = {t}",
                sim.network.event_description(k)
            );
            checked += 1;
        }
    }
    println!("{checked} values of events left out, all None");
    assert!(checked >= 300 * cushion::EVENTS);
}
