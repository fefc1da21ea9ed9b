//! Static friction's stick and breakaway located as events, with every method: the gallery's
//! pneumatic cylinder against a tight-tolerance run of its own, and a Coulomb oscillator that
//! sticks where its closed form says. Without the events a step straddles the breakaway (the
//! friction force jumps from static to dynamic there) and `bdf` fails on the cylinder.

use plenum::integrators::METHODS;
use plenum::model::{ModelFile, build_simulation, load_path};
use plenum::simulation::Simulation;

use crate::common::{output, repo_path, sim_of};

fn cylinder(method: &str, tight: bool) -> Simulation {
    let mut spec: ModelFile = load_path(&repo_path("examples/cylinder/model.toml"), &[])
        .expect("the gallery cylinder loads")
        .spec;
    spec.solver.method = method.to_string();
    if tight {
        spec.solver.rtol = Some(1e-10);
        spec.solver.atol = Some(1e-12);
    }
    build_simulation(&spec, None).expect("builds")
}

const CYLINDER_OUTPUTS: [&str; 3] = ["cap.p", "rod.x", "rod.v"];

/// The cylinder's outputs every millisecond to 0.7 s (through the breakaway at ≈ 0.051 s, the
/// stroke, the rest at the stop and the return stroke).
fn cylinder_run(method: &str, tight: bool) -> Result<Vec<[f64; 3]>, String> {
    let mut sim = cylinder(method, tight);
    let mut rows = Vec::new();
    for i in 1..=700 {
        sim.advance_to(i as f64 * 1e-3)
            .map_err(|e| format!("{method}: {}", e.message))?;
        rows.push(CYLINDER_OUTPUTS.map(|name| output(&mut sim, name)));
    }
    Ok(rows)
}

/// The largest error relative to the reference's largest magnitude, per output.
fn relative_errors(reference: &[[f64; 3]], run: &[[f64; 3]]) -> [f64; 3] {
    std::array::from_fn(|j| {
        let scale = reference.iter().fold(0.0_f64, |a, r| a.max(r[j].abs()));
        let err = reference
            .iter()
            .zip(run)
            .fold(0.0_f64, |a, (r, x)| a.max((r[j] - x[j]).abs()));
        err / scale
    })
}

/// The bound on a method's relative error: the adaptive methods within 100× their requested
/// tolerance (rtol 1e-6 by default; a global error is a few tens of local tolerances), the
/// fixed-step ones at the file's h = 1e-5 s by their order (a located breakaway keeps the
/// order: a step across it would cost the jump in force times h, 2.5e-5 in v with `rk4`).
fn bound(method: &str) -> f64 {
    match method {
        "dopri5" | "bdf" | "auto" => 100.0 * 1e-6,
        "euler" | "bdf1" => 3e-3,
        // FONSim's step criterion bounds an interpolation error, not the global error.
        "backward-euler" => 2e-2,
        "ab2" | "bdf2" => 1e-5,
        _ => 1e-6,
    }
}

#[test]
fn gallery_cylinder_runs_with_every_method_within_its_tolerance_of_a_tight_run() {
    let reference = cylinder_run("bdf", true).expect("the reference run");
    let peer = cylinder_run("dopri5", true).expect("the peer reference run");
    let agree = relative_errors(&reference, &peer);
    println!(
        "references bdf vs dopri5 at rtol 1e-10: {:.2e} {:.2e} {:.2e} (cap.p, rod.x, rod.v)",
        agree[0], agree[1], agree[2]
    );
    assert!(agree.iter().all(|&e| e < 1e-7), "the references agree");
    let mut failures = Vec::new();
    for &(method, _) in METHODS {
        let run = match cylinder_run(method, false) {
            Ok(run) => run,
            Err(e) => {
                println!("{method:>14}: FAILED: {e}");
                failures.push(e);
                continue;
            }
        };
        let err = relative_errors(&reference, &run);
        let worst = err.iter().fold(0.0_f64, |a, &e| a.max(e));
        let b = bound(method);
        println!(
            "{method:>14}: relative errors {:.2e} {:.2e} {:.2e} (cap.p, rod.x, rod.v), bound \
             {b:.0e}, margin {:.1}×",
            err[0],
            err[1],
            err[2],
            b / worst
        );
        if worst > b {
            failures.push(format!("{method}: {worst:e} > {b:e}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A Coulomb oscillator: a piston of mass m on a spring of stiffness k (rest at 0) between two
/// reservoirs at the same pressure, released at rest from x₀ with dynamic friction F_d and
/// static friction F_s. Each half swing ends 2F_d/k nearer the rest point (Den Hartog,
/// *Mechanical Vibrations*, §8.2) at rest; it sticks for good at the first turning point
/// where k·|x| ≤ F_s.
/// With static friction `static_pa` (0: dynamic friction alone).
fn oscillator_with(method: &str, static_pa: f64) -> String {
    format!(
        r#"
[model]
name = "coulomb"
[gas]
species = "air"
[solver]
method = "{method}"
step = 1e-5
t_end = 0.3
[[reservoir]]
name = "left"
pressure = 101325.0
temperature = 293.15
[[reservoir]]
name = "right"
pressure = 101325.0
temperature = 293.15
[[piston]]
name = "slider"
behind = "left"
ahead = "right"
area = 1e-4
mass = 0.1
x0 = {X0}
friction_static = {static_pa:?}
friction_dynamic = 10000.0
spring_stiffness = {K}
spring_x0 = 0.0
"#
    )
}

const X0: f64 = 0.0105;
const K: f64 = 1000.0;

#[test]
fn coulomb_oscillator_sticks_where_its_closed_form_does_with_every_method() {
    coulomb_oscillator_sticks(15000.0);
}

/// Dynamic friction alone holds a piston at rest while the drive is below it (Coulomb's law,
/// whose Filippov solution sticks there): the closed form with F_s = F_d. Its stick and
/// breakaway are events as static friction's are; without them the law's reversal about v = 0
/// chattered.
#[test]
fn coulomb_oscillator_with_dynamic_friction_alone_sticks_on_its_closed_form() {
    coulomb_oscillator_sticks(0.0);
}

fn coulomb_oscillator_sticks(static_pa: f64) {
    let f_d: f64 = 10000.0 * 1e-4;
    let f_s = f_d.max(static_pa * 1e-4);
    // Turning points: alternate in sign, each 2F_d/k smaller, until k·|x| ≤ F_s.
    let mut x = X0;
    let mut turns = 0;
    while K * x.abs() > f_s {
        x = -(x.signum() * (x.abs() - 2.0 * f_d / K));
        turns += 1;
    }
    let t_stuck = turns as f64 * std::f64::consts::PI * (0.1 / K).sqrt();
    println!("closed form: sticks at x = {x:.6e} m after {turns} half swings, t = {t_stuck:.4} s");
    let (mut worst, mut failures) = (0.0_f64, Vec::new());
    for &(method, _) in METHODS {
        let mut sim = sim_of(&oscillator_with(method, static_pa));
        if let Err(e) = sim.advance_to(0.3) {
            println!("{method:>14}: FAILED: {}", e.message);
            failures.push(format!("{method}: {}", e.message));
            continue;
        }
        let (xe, ve) = (output(&mut sim, "slider.x"), output(&mut sim, "slider.v"));
        // The order-1 methods' global error at h = 1e-5 s: forward Euler's amplitude grows by
        // (ωh)²/2 per step, 0.8 % of x₀ over the 0.16 s of swinging (ω = 100/s); backward
        // Euler's shrinks as much. The others hold the turning points to their tolerance.
        let tol = match method {
            "euler" | "bdf1" | "backward-euler" => 2e-4,
            _ => 1e-7,
        };
        let err = xe - x;
        println!(
            "{method:>14}: x = {xe:.9e} m, v = {ve:e} m/s, error {err:+.2e} m (tolerance \
             {tol:.0e} m), {} events",
            sim.stats.events
        );
        if ve != 0.0 || err.abs() > tol {
            failures.push(format!("{method}: x error {err:e} m, v = {ve:e} m/s"));
        }
        worst = worst.max(err.abs() / tol);
    }
    println!("worst error {worst:.2} of its tolerance");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn cylinder_breakaway_is_a_model_exchange_event_indicator() {
    // A Model Exchange master as an importer runs one (as for the relief valve in
    // `switches.rs`): forward Euler at 1e-5 s, the indicators read after each step, a sign
    // change located by bisection on the step, then event mode there. The rod breaks away
    // where the cap's force on the bore area meets the spring's preload plus static friction:
    // p = p_atm + (k·(x₀ − x_s) + A·p_static)/A, 245,664 Pa.
    use plenum::cosim::{Instance, Interface};
    let path = repo_path("examples/cylinder/model.toml");
    let src = std::fs::read_to_string(&path).expect("the gallery cylinder");
    let k_breakaway = {
        let mut sim = cylinder("rk4", false);
        let k = (0..sim.network.n_events())
            .find(|&k| sim.network.event_description(k).contains("breaks away"))
            .expect("the rod's breakaway is an event");
        sim.network
            .reported_events()
            .iter()
            .position(|&r| r as usize == k)
            .expect("the breakaway is an indicator")
    };
    let (area, k, xs, p_static, p_atm) = (8.042477193189871e-4, 2000.0, -0.05, 20000.0, 101325.0);
    let p_break = p_atm + (k * (0.0 - xs) + area * p_static) / area;
    let mut inst =
        Instance::with_interface(&src, "model.toml", Interface::ModelExchange).expect("loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.exit_initialization_mode().expect("exit");
    inst.update_discrete_states().expect("event update");
    inst.enter_continuous_time_mode().expect("continuous");
    let (n, nz) = (inst.n_states(), inst.n_event_indicators());
    println!("{n} states, {nz} event indicators, the breakaway is indicator {k_breakaway}");
    let vr = |inst: &Instance, name: &str| {
        inst.description()
            .variables
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("{name}"))
            .value_reference
    };
    let (vr_p, vr_x) = (vr(&inst, "cap.p"), vr(&inst, "rod.x"));
    let (mut x, mut dx, mut x1) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let (mut z0, mut z1) = (vec![0.0; nz], vec![0.0; nz]);
    inst.continuous_states(&mut x).expect("x");
    inst.event_indicators(&mut z0).expect("z");
    let crossed =
        |a: &[f64], b: &[f64], i: usize| (a[i] < 0.0 && b[i] >= 0.0) || (a[i] > 0.0 && b[i] <= 0.0);
    let any = |a: &[f64], b: &[f64]| (0..a.len()).any(|i| crossed(a, b, i));
    let (h, t_end, mut t) = (1e-5, 0.1, 0.0);
    let mut breakaway: Option<(f64, f64)> = None;
    while t < t_end - 0.5 * h {
        inst.derivatives(&mut dx).expect("dx");
        let at = |theta: f64, inst: &mut Instance, x1: &mut [f64], z: &mut [f64]| {
            for i in 0..n {
                x1[i] = x[i] + theta * h * dx[i];
            }
            inst.set_time(t + theta * h).expect("time");
            inst.set_continuous_states(x1).expect("x");
            inst.event_indicators(z).expect("z");
        };
        at(1.0, &mut inst, &mut x1, &mut z1);
        let mut theta = 1.0;
        if any(&z0, &z1) {
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                at(mid, &mut inst, &mut x1, &mut z1);
                if any(&z0, &z1) { hi = mid } else { lo = mid }
            }
            at(hi, &mut inst, &mut x1, &mut z1);
            theta = hi;
        }
        t += theta * h;
        let step = inst.completed_integrator_step().expect("completed");
        if any(&z0, &z1) || step.enter_event_mode {
            if breakaway.is_none() && crossed(&z0, &z1, k_breakaway) {
                let mut p = [0.0];
                inst.get_real(&[vr_p], &mut p).expect("get");
                breakaway = Some((t, p[0]));
            }
            inst.enter_event_mode().expect("event mode");
            inst.update_discrete_states().expect("event update");
            inst.enter_continuous_time_mode().expect("continuous");
        }
        inst.continuous_states(&mut x).expect("x");
        inst.event_indicators(&mut z0).expect("z");
    }
    let (t_b, p_b) = breakaway.expect("the master found the breakaway");
    let err = p_b - p_break;
    println!(
        "Model Exchange (Euler 1e-5 s): breakaway at t = {t_b:.6} s, cap.p = {p_b:.3} Pa, \
         closed form {p_break:.3} Pa, error {err:+.2e} Pa"
    );
    // Located to 2⁻⁶⁰ of a step: the pressure there is the closed form's to round-off.
    assert!(err.abs() <= 1e-6 * p_break, "{err:e} Pa");
    // The stroke after it, against the driver's own tight run (forward Euler's order 1).
    let mut rx = [0.0];
    inst.get_real(&[vr_x], &mut rx).expect("get");
    let mut reference = cylinder("bdf", true);
    reference.advance_to(t_end).expect("reference");
    let x_ref = output(&mut reference, "rod.x");
    println!("rod.x at {t_end} s: {:.9} m, reference {x_ref:.9} m", rx[0]);
    assert!((rx[0] - x_ref).abs() <= 5e-5, "rod.x {} m", rx[0]);
}

#[test]
fn cylinder_friction_mode_survives_a_serialized_fmu_state() {
    // The rod stuck (0.05 s), just set sliding (0.0512 s: its breakaway is at 0.051167 s) and
    // resting on its far stop (0.3 s): a serialized FMU state taken there and set into a new
    // instance goes on to 0.4 s (the return stroke) bit for bit as the instance it was taken from.
    use plenum::cosim::Instance;
    let src = std::fs::read_to_string(repo_path("examples/cylinder/model.toml")).expect("model");
    let start = || {
        let mut inst = Instance::new(&src, "model.toml").expect("loads");
        inst.setup_experiment(0.0, None).expect("setup");
        inst.enter_initialization_mode().expect("enter");
        inst.exit_initialization_mode().expect("exit");
        inst
    };
    let vrs: Vec<u32> = CYLINDER_OUTPUTS
        .iter()
        .map(|name| {
            start()
                .description()
                .variables
                .iter()
                .find(|v| v.name == *name)
                .expect("output")
                .value_reference
        })
        .collect();
    let run_on = |inst: &mut Instance, from: f64| {
        let mut t = from;
        while t < 0.4 - 1e-9 {
            let h = (0.4 - t).min(0.01);
            inst.do_step(t, h).expect("fmi2DoStep");
            t += h;
        }
        let mut out = [0.0; 3];
        inst.get_real(&vrs, &mut out).expect("get");
        out
    };
    for t_save in [0.05, 0.0512, 0.3] {
        let mut first = start();
        first.do_step(0.0, t_save).expect("fmi2DoStep");
        let mut v = [0.0];
        first.get_real(&vrs[2..], &mut v).expect("get");
        let blob = first
            .serialize(&first.snapshot().expect("state"))
            .expect("blob");
        let mut second = start();
        let state = second.deserialize(&blob).expect("the blob is read");
        second.restore(&state).expect("set");
        let (a, b) = (run_on(&mut first, t_save), run_on(&mut second, t_save));
        println!(
            "saved at {t_save} s (rod.v {:e} m/s, {} bytes): at 0.4 s {a:?} and {b:?}",
            v[0],
            blob.len()
        );
        assert_eq!(
            a.map(f64::to_bits),
            b.map(f64::to_bits),
            "restored at {t_save} s"
        );
    }
}

#[test]
fn model_exchange_sets_a_piston_sliding_that_starts_past_its_static_friction() {
    // The shipped projectile starts at rest with 6 bar behind it, far past its static friction:
    // no breakaway indicator can cross (it is past 0 from the start), so the event iteration
    // after initialization sets it sliding, as the driver does at the start of a run.
    use plenum::cosim::{Instance, Interface};
    let src = std::fs::read_to_string(repo_path("models/projectile.toml")).expect("model");
    let mut inst =
        Instance::with_interface(&src, "model.toml", Interface::ModelExchange).expect("loads");
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.exit_initialization_mode().expect("exit");
    let update = inst.update_discrete_states().expect("event update");
    inst.enter_continuous_time_mode().expect("continuous");
    let vr = inst
        .description()
        .variables
        .iter()
        .find(|v| v.name == "projectile.v")
        .expect("projectile.v")
        .value_reference;
    let mut v = [0.0];
    inst.get_real(&[vr], &mut v).expect("get");
    // One Euler step of 1 µs as a master takes it: the piston moves.
    let mut x = vec![0.0; inst.n_states()];
    let mut dx = vec![0.0; inst.n_states()];
    inst.continuous_states(&mut x).expect("x");
    inst.derivatives(&mut dx).expect("dx");
    for (x, d) in x.iter_mut().zip(&dx) {
        *x += 1e-6 * d;
    }
    inst.set_time(1e-6).expect("time");
    inst.set_continuous_states(&x).expect("x");
    let mut v1 = [0.0];
    inst.get_real(&[vr], &mut v1).expect("get");
    let mut cli = sim_of(&src);
    cli.advance_to(1e-6).expect("advance");
    let v_cli = output(&mut cli, "projectile.v");
    println!(
        "after the first event iteration: states changed {}, v = {:e} m/s; after an Euler step \
         of 1 µs v = {:.6e} m/s (the driver's rk4: {v_cli:.6e} m/s)",
        update.values_changed, v[0], v1[0]
    );
    assert!(update.values_changed && v[0] > 0.0, "set sliding");
    assert!(
        (v1[0] - v_cli).abs() <= 1e-3 * v_cli,
        "accelerating as the driver's"
    );
}

/// A piston with static friction driven onto its `x_min` stop and held there by several bar
/// (found by a random switching network): a BDF step's Newton iterate left v off 0 by
/// round-off into the stop, the stop's event function was already 0 and did not fire, and the
/// piston ran through the stop to x = −0.94 m (bdf, rtol 1e-11, exit 0). Resting on a stop now
/// holds for any velocity below the rest speed: each run ends on the stop, never through it
/// and without a solver failure.
#[test]
fn a_piston_held_on_its_stop_never_passes_through_it() {
    let model = |method: &str, rtol: f64| {
        format!(
            r#"
[model]
name = "switching"
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
pressure = "1 bar"
temperature = 293.15
[[chamber]]
name = "c1"
volume = "1.9910868163079765 L"
pressure = "8.738651961272529 bar"
temperature = 293.15
[[chamber]]
name = "c2"
volume = "1.1201395126494909 L"
pressure = "1.8828582205413744 bar"
temperature = 293.15
[[orifice]]
name = "v0"
from = "c0"
to = "atm"
area = 2.1187195081548392e-7
one_way = false
cracking_pressure = 2.374691735228652e4
full_flow_pressure = 2.3753076999525754e4
[[orifice]]
name = "v1"
from = "c2"
to = "atm"
sonic_conductance = 4.834144246663381e-8
critical_pressure_ratio = 0.3
one_way = true
cracking_pressure = 1.3409505834954436e5
full_flow_pressure = 1.3410254664254878e5
[[orifice]]
name = "v2"
from = "c1"
to = "atm"
area = 1.101292439376225e-6
one_way = true
cracking_pressure = 1.2995787290011384e5
full_flow_pressure = 2.216950726537573e5
[[piston]]
name = "p"
behind = "c0"
ahead = "c1"
area = 1e-3
mass = 0.6321925517981348
x0 = 0.0
x_min = -0.015569497336792916
x_max = 0.015569497336792916
friction_static = 3.969626019087451e4
friction_dynamic = 3.643203743499139e4
damping = 1.0
"#
        )
    };
    let stop = -0.015569497336792916;
    for (method, rtol) in [
        ("bdf", 1e-11),
        ("bdf", 1e-10),
        ("bdf", 1e-8),
        ("dopri5", 1e-6),
    ] {
        let mut sim = sim_of(&model(method, rtol));
        let mut lowest = f64::INFINITY;
        let mut failed = None;
        for k in 1..=40 {
            if let Err(e) = sim.advance_to(0.005 * k as f64) {
                failed = Some(e.message);
                break;
            }
            lowest = lowest.min(output(&mut sim, "p.x"));
        }
        println!("{method} at rtol {rtol:e}: lowest x {lowest} m (stop at {stop} m); {failed:?}");
        assert!(failed.is_none(), "{method} {rtol:e}: {failed:?}");
        assert!(
            lowest >= stop,
            "{method} {rtol:e}: through the stop to {lowest} m"
        );
        if let Some(m) = failed {
            assert!(m.contains("step size fell"), "{m}");
        }
    }
}

/// A piston between two reservoirs (a constant pressure force F_p forward), sliding at v₀
/// against dynamic friction F_d and held at rest by static friction F_s > |F_p|: a constant net
/// force, so v falls linearly to 0 at t* = m·|v₀|/|F_net| and x rises quadratically to
/// x₀ + v₀·t*/2 (Newton's second law), where it sticks for good.
fn slowing(method: &str, step: f64, drive_pa: f64, v0: f64) -> String {
    format!(
        r#"
[model]
name = "slowing"
[gas]
species = "air"
[solver]
method = "{method}"
step = {step:e}
t_end = 0.3
[[reservoir]]
name = "behind"
pressure = {pb:?}
temperature = 293.15
[[reservoir]]
name = "ahead"
pressure = 101325.0
temperature = 293.15
[[piston]]
name = "slider"
behind = "behind"
ahead = "ahead"
area = 1e-4
mass = 0.1
x0 = 0.0
v0 = {v0:?}
friction_static = 15000.0
friction_dynamic = 10000.0
"#,
        pb = 101325.0 + drive_pa
    )
}

/// The slowing piston's stop (t*, x*) in closed form, from the same pressure force the law
/// computes: F_p = (p_behind − p_ahead)·A, F_net = F_p − sign(v₀)·F_d.
fn slowing_stop(drive_pa: f64, v0: f64) -> (f64, f64) {
    let (area, mass) = (1e-4, 0.1);
    let f_p = ((101325.0 + drive_pa) - 101325.0) * area;
    let f_net = f_p - v0.signum() * 10000.0 * area;
    let t = mass * v0.abs() / f_net.abs();
    (t, v0 * t / 2.0)
}

/// Drives just below the dynamic friction (sliding forward: the friction's reversal across
/// v = 0 would push it back) and just above it (sliding backward against the drive).
const SLOWING_CASES: [(f64, f64); 2] = [(9900.0, 0.017), (10100.0, -0.34)];

#[test]
fn a_piston_slowing_to_rest_against_friction_stops_where_its_closed_form_does() {
    let mut failures = Vec::new();
    for (drive_pa, v0) in SLOWING_CASES {
        let (t_stop, x_stop) = slowing_stop(drive_pa, v0);
        println!(
            "drive {drive_pa} Pa, v0 {v0} m/s: closed form stop t* = {t_stop:.6} s, x* = {x_stop:.9e} m"
        );
        for (method, step) in [
            ("auto", 1e-5),
            ("dopri5", 1e-5),
            ("bdf", 1e-5),
            ("rk4", 1e-4),
            ("backward-euler", 1e-4),
            ("bdf1", 1e-4),
        ] {
            let mut sim = sim_of(&slowing(method, step, drive_pa, v0));
            if let Err(e) = sim.advance_to(0.3) {
                println!("{method:>14}: FAILED: {}", e.message);
                failures.push(format!("{drive_pa} Pa {method}: {}", e.message));
                continue;
            }
            let (x, v) = (output(&mut sim, "slider.x"), output(&mut sim, "slider.v"));
            let t_event = sim.last_event.as_ref().map_or(f64::NAN, |r| r.t_s);
            // The adaptive methods and rk4 within the default rtol (1e-6) of x*; the order-1
            // methods within one step's travel h·|v₀| (their global error is O(h)).
            let tol = match method {
                "backward-euler" | "bdf1" => step * v0.abs(),
                _ => 1e-6 * x_stop.abs(),
            };
            let (dt, dx) = (t_event - t_stop, x - x_stop);
            println!(
                "{method:>14}: stuck at t = {t_event:.9} s (error {dt:+.2e} s), x = {x:.9e} m \
                 (error {dx:+.2e} m, bound {tol:.1e}), v = {v:e}, {} steps, {} events",
                sim.stats.steps, sim.stats.events
            );
            if v != 0.0 || dx.abs() > tol || dt.abs() > 1e-9 || sim.stats.events != 1 {
                failures.push(format!(
                    "{drive_pa} Pa {method}: t error {dt:e} s, x error {dx:e} m, v = {v:e}, {} \
                     events",
                    sim.stats.events
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Stick–slip: a piston on a spring (k, rest at 0), stuck at x = 0 while the pressure behind
/// it rises at a constant rate (a pressure force growing at Ȧ = A·ṗ), breaks away where the
/// drive Ȧ·t − k·x reaches static friction F_s, slides against dynamic friction F_d, sticks
/// where v returns to 0, and breaks away again, cycle after cycle. Each slip starts at rest
/// with the drive at F_s, so every slip is the same: with τ its time since the breakaway,
/// ω² = k/m, x_p = (Ȧ·τ + F_s − F_d)/k (the moving equilibrium),
/// x(τ) = x_p − (F_s − F_d)/k·cos ωτ − Ȧ/(kω)·sin ωτ, v(τ) = Ȧ/k·(1 − cos ωτ) +
/// (F_s − F_d)·ω/k·sin ωτ (the driven harmonic oscillator, Den Hartog, *Mechanical
/// Vibrations*, §8.2, with a ramp for a force), until v(τ_s) = 0 for τ_s in (π/ω, 2π/ω); the
/// drive there is F_s + Ȧ·τ_s − k·Δx with Δx = x(τ_s), and it grows back to F_s: one cycle,
/// slip and stick, lasts k·Δx/Ȧ and moves the piston by Δx.
const STICK_SLIP_RATE_PA_PER_S: f64 = 2e5;
const STICK_SLIP_END_S: f64 = 0.3;

fn stick_slip(method: &str, step: f64) -> String {
    format!(
        r#"
[model]
name = "stick_slip"
[gas]
species = "air"
[solver]
method = "{method}"
step = {step:e}
t_end = {STICK_SLIP_END_S:?}
[[reservoir]]
name = "behind"
pressure = {{ table = [[0.0, 101325.0], [1.0, {p1:?}]] }}
temperature = 293.15
[[reservoir]]
name = "ahead"
pressure = 101325.0
temperature = 293.15
[[piston]]
name = "slider"
behind = "behind"
ahead = "ahead"
area = 1e-4
mass = 0.1
x0 = 0.0
friction_static = 15000.0
friction_dynamic = 10000.0
spring_stiffness = 1000.0
spring_x0 = 0.0
"#,
        p1 = 101325.0 + STICK_SLIP_RATE_PA_PER_S
    )
}

/// The stick–slip motion's (x, v) at t in closed form, and its breakaway and stick times.
struct StickSlip {
    rate_n_per_s: f64,
    k: f64,
    omega: f64,
    f_s: f64,
    f_d: f64,
    t_break: f64,
    tau_slip: f64,
    dx: f64,
}

impl StickSlip {
    fn new() -> StickSlip {
        let (area, mass, k): (f64, f64, f64) = (1e-4, 0.1, 1000.0);
        let rate_n_per_s = ((101325.0 + STICK_SLIP_RATE_PA_PER_S) - 101325.0) * area;
        let (f_s, f_d) = (15000.0 * area, 10000.0 * area);
        let omega = (k / mass).sqrt();
        let mut s = StickSlip {
            rate_n_per_s,
            k,
            omega,
            f_s,
            f_d,
            t_break: f_s / rate_n_per_s,
            tau_slip: 0.0,
            dx: 0.0,
        };
        // v(τ) > 0 on (0, τ_s), v(τ_s) = 0: bisection on (π/ω, 2π/ω) to round-off.
        let (mut lo, mut hi) = (
            std::f64::consts::PI / omega,
            1.99 * std::f64::consts::PI / omega,
        );
        assert!(s.slip(lo).1 > 0.0 && s.slip(hi).1 <= 0.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if s.slip(mid).1 > 0.0 {
                lo = mid
            } else {
                hi = mid
            }
        }
        s.tau_slip = lo;
        s.dx = s.slip(lo).0;
        s
    }

    /// Displacement and velocity τ after a breakaway.
    fn slip(&self, tau: f64) -> (f64, f64) {
        let (k, w, a) = (self.k, self.omega, self.rate_n_per_s);
        let c = (self.f_s - self.f_d) / k;
        let (sn, cs) = (w * tau).sin_cos();
        let x = (a * tau) / k + c - c * cs - a / (k * w) * sn;
        let v = a / k * (1.0 - cs) + c * w * sn;
        (x, v)
    }

    /// (x, v) at t, and the breakaways and sticks up to t.
    fn at(&self, t: f64) -> (f64, f64, usize, usize) {
        let cycle = self.k * self.dx / self.rate_n_per_s;
        if t < self.t_break {
            return (0.0, 0.0, 0, 0);
        }
        let n = ((t - self.t_break) / cycle).floor();
        let tau = t - self.t_break - n * cycle;
        let base = n * self.dx;
        let (breaks, sticks) = (n as usize + 1, n as usize);
        if tau < self.tau_slip {
            let (x, v) = self.slip(tau);
            (base + x, v, breaks, sticks)
        } else {
            (base + self.dx, 0.0, breaks, sticks + 1)
        }
    }
}

/// The largest errors in x and v against the closed form at every millisecond.
fn stick_slip_errors(method: &str, step: f64, truth: &StickSlip) -> Result<(f64, f64), String> {
    let mut sim = sim_of(&stick_slip(method, step));
    let (mut ex, mut ev) = (0.0_f64, 0.0_f64);
    for i in 1..=300 {
        let t = i as f64 * 1e-3;
        sim.advance_to(t).map_err(|e| e.message)?;
        let (x, v, _, _) = truth.at(t);
        ex = ex.max((output(&mut sim, "slider.x") - x).abs());
        ev = ev.max((output(&mut sim, "slider.v") - v).abs());
    }
    Ok((ex, ev))
}

#[test]
fn stick_slip_converges_at_each_fixed_step_methods_order() {
    let truth = StickSlip::new();
    let (x_end, _, breaks, sticks) = truth.at(STICK_SLIP_END_S);
    let stuck_for = truth.k * truth.dx / truth.rate_n_per_s - truth.tau_slip;
    // At each stick the drive lies within static friction (it stays stuck, no turn-round).
    let drive_at_stick = truth.f_s + truth.rate_n_per_s * truth.tau_slip - truth.k * truth.dx;
    println!(
        "closed form: breakaway at {:.6} s, slips {:.6} s by {:.6e} m, sticks {stuck_for:.6} s \
         (drive at the stick {drive_at_stick:.4} N, F_s {} N); by {STICK_SLIP_END_S} s {breaks} \
         breakaways, {sticks} sticks, x = {x_end:.6e} m",
        truth.t_break, truth.tau_slip, truth.dx, truth.f_s
    );
    assert!(drive_at_stick.abs() < truth.f_s);
    assert!(breaks >= 2 && sticks >= 2);
    let mut failures = Vec::new();
    for (method, order, h) in [("rk4", 4.0, 5e-4), ("bdf2", 2.0, 1e-4), ("ab2", 2.0, 1e-4)] {
        let errors: Vec<(f64, f64)> = match [h, h / 2.0, h / 4.0]
            .into_iter()
            .map(|h| stick_slip_errors(method, h, &truth))
            .collect()
        {
            Ok(e) => e,
            Err(e) => {
                println!("{method}: FAILED: {e}");
                failures.push(format!("{method}: {e}"));
                continue;
            }
        };
        let observed: Vec<f64> = errors
            .windows(2)
            .map(|w| (w[0].0 / w[1].0).log2())
            .collect();
        println!(
            "{method:>5} (order {order}): h = {h:.0e}, h/2, h/4: x errors {:.3e} {:.3e} {:.3e} m \
             (v errors {:.3e} {:.3e} {:.3e} m/s), observed orders {:.2} {:.2}",
            errors[0].0,
            errors[1].0,
            errors[2].0,
            errors[0].1,
            errors[1].1,
            errors[2].1,
            observed[0],
            observed[1]
        );
        if observed.iter().any(|p| (p - order).abs() > 0.5) {
            failures.push(format!(
                "{method}: observed orders {observed:?}, not {order}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A piston without friction resting on its `x_min` stop (5 mm stroke) while the chamber ahead
/// vents until the pressures cross and it lifts off (found by a random switching network): at
/// rtol 1e-11 a BDF Newton iterate's v a hair away from the stop released the contact for that
/// iterate, v settled off 0 by round-off and grew, and the run failed ("step size fell to
/// 2.9e-13 s" at 0.0945 s, 2 ms before lift-off). The contact now holds a resting piston
/// whatever the sign of v's round-off: `bdf` at rtol 1e-11 and 1e-8 ends with `dopri5`'s rtol
/// 1e-11 run.
#[test]
fn a_piston_resting_on_its_stop_lifts_off_with_every_tolerance() {
    let model = |method: &str, rtol: f64| {
        format!(
            "[model]\nname = \"lift\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"{method}\"\n\
             rtol = {rtol:e}\natol = 1e-12\nt_end = 0.2\n\
             [[reservoir]]\nname = \"atm\"\npressure = 101325.0\ntemperature = 293.15\n\
             [[chamber]]\nname = \"c0\"\nvolume = \"1.0 L\"\npressure = \"6.942079770519987 bar\"\n\
             temperature = 293.15\n\
             [[chamber]]\nname = \"c1\"\nvolume = \"0.3807316200507168 L\"\n\
             pressure = \"9.554367701473078 bar\"\ntemperature = 293.15\n\
             [[orifice]]\nname = \"v0\"\nfrom = \"c1\"\nto = \"atm\"\narea = 1.329402673037516e-6\n\
             [[orifice]]\nname = \"v1\"\nfrom = \"c1\"\nto = \"atm\"\narea = 3e-6\n\
             [[piston]]\nname = \"p\"\nbehind = \"c0\"\nahead = \"c1\"\narea = 1e-3\n\
             mass = 0.05204351249248619\nx0 = 0.0\nx_min = -0.005\nx_max = 0.005\ndamping = 1.0\n"
        )
    };
    let times: Vec<f64> = (1..=40).map(|k| 0.005 * k as f64).collect();
    let mut reference = sim_of(&model("dopri5", 1e-11));
    let truth: Vec<[f64; 2]> = times
        .iter()
        .map(|&t| {
            reference.advance_to(t).expect("dopri5 runs");
            [
                output(&mut reference, "c0.p"),
                output(&mut reference, "c1.p"),
            ]
        })
        .collect();
    for rtol in [1e-11, 1e-8] {
        let mut sim = sim_of(&model("bdf", rtol));
        let (mut worst, mut highest): (f64, f64) = (0.0, f64::NEG_INFINITY);
        for (&t, want) in times.iter().zip(&truth) {
            sim.advance_to(t)
                .unwrap_or_else(|e| panic!("bdf {rtol:e} at {t} s: {}", e.message));
            for (n, w) in ["c0.p", "c1.p"].iter().zip(want) {
                worst = worst.max((output(&mut sim, n) / w - 1.0).abs());
            }
            highest = highest.max(output(&mut sim, "p.x"));
        }
        println!(
            "bdf at rtol {rtol:e}: highest x {highest} m (lifted off x_min = -0.005 m); largest \
             relative difference from dopri5 at 1e-11 {worst:.1e}"
        );
        assert!(
            highest > 0.0,
            "bdf {rtol:e}: never lifted off ({highest} m)"
        );
        assert!(worst < 100.0 * rtol, "bdf {rtol:e}: {worst:e}");
    }
}

/// A frictionless piston (0.1 kg, 1e-4 m²) at rest on its `x_min` stop, pushed into it while
/// the pressure behind it rises linearly through the atmosphere's ahead (0.9 → 1.08 bar over
/// 1 s): it lifts off at t* = 5/9 s (off the output times and the steps' grid), where the
/// drive turns away from the stop, and then
/// x(t) = A·ṗ·(t − t*)³/(6m) (the drive grows linearly from 0: Newton's second law). The
/// stop's contact force ends there, continuously: the acceleration has a kink, the velocity
/// is C¹ and the position C², so it is no event (docs/integrators.md, "Switches"), and every
/// method steps over it within its tolerance of the closed form.
#[test]
fn a_frictionless_piston_lifts_off_its_stop_where_its_drive_turns() {
    let (area, mass, rate) = (1e-4, 0.1, 1.8e4);
    let t_lift = 1e4 / rate;
    let model = |method: &str| {
        format!(
            "[model]\nname = \"lift\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"{method}\"\n\
             step = 1e-4\nt_end = 1.0\n\
             [[reservoir]]\nname = \"behind\"\n\
             pressure = {{ table = [[0.0, 90000.0], [1.0, 108000.0]] }}\ntemperature = 293.15\n\
             [[reservoir]]\nname = \"atm\"\npressure = 100000.0\ntemperature = 293.15\n\
             [[piston]]\nname = \"p\"\nbehind = \"behind\"\nahead = \"atm\"\narea = {area:?}\n\
             mass = {mass:?}\nx0 = 0.0\nx_min = 0.0\n"
        )
    };
    let closed = |t: f64| {
        let tau = (t - t_lift).max(0.0);
        area * rate * tau.powi(3) / (6.0 * mass)
    };
    let mut failures = Vec::new();
    // The adaptive methods at their default rtol 1e-6; the fixed-step ones at h = 1e-4 s,
    // order 1 within a step's share of the travel (h/(1 s − t*)), the others far below.
    for (method, bound) in [
        ("auto", 1e-6),
        ("dopri5", 1e-6),
        ("bdf", 1e-6),
        ("rk4", 1e-7),
        ("bdf3", 1e-7),
        ("euler", 1e-3),
        ("backward-euler", 1e-3),
    ] {
        let mut sim = sim_of(&model(method));
        let mut worst: f64 = 0.0;
        for k in 1..=20 {
            let t = 0.05 * k as f64;
            if let Err(e) = sim.advance_to(t) {
                failures.push(format!("{method}: {}", e.message));
                break;
            }
            let x = output(&mut sim, "p.x");
            worst = worst.max((x - closed(t)).abs() / closed(1.0));
        }
        println!(
            "{method:>14}: worst |x − closed form| / x(1 s) = {worst:.2e} (bound {bound:.0e}), \
             {} steps",
            sim.stats.steps
        );
        if worst.is_nan() || worst > bound {
            failures.push(format!("{method}: error {worst:e}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
