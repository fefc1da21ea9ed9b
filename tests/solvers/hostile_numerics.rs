//! Hostile numbers for the integrators and the driver (hostile-input classes of
//! docs/integrators.md): a state no physics allows is
//! never reported (class 2), an explicit method past its stability limit is warned about
//! (class 4), and extreme tolerances or temperatures and a light piston do not end a run at
//! its first step (class 16). Each against an independent truth: a closed-form equilibrium, a
//! peer run with other settings, or the definition of the check.

use plenum::checks;
use plenum::model::{ModelFile, build_simulation, parse_str};
use plenum::simulation::{Advance, Simulation};

fn spec(name: &str, set: &[&str]) -> ModelFile {
    let src =
        std::fs::read_to_string(crate::common::repo_path(&format!("models/{name}.toml"))).unwrap();
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    parse_str(&src, name, &set).unwrap().spec
}

/// Advance through `n` equal output intervals to t_end; the first failure ends it.
fn run_grid(
    sim: &mut Simulation,
    t_end: f64,
    n: usize,
) -> Result<(), plenum::simulation::StepFailure> {
    for k in 1..=n {
        let target = t_end * k as f64 / n as f64;
        loop {
            match sim.advance_to(target)? {
                Advance::Reached | Advance::Finished(_) => break,
                Advance::Exit { .. } => {}
            }
        }
        if sim.finished.is_some() {
            break;
        }
    }
    Ok(())
}

fn tank_pressure(sim: &Simulation) -> f64 {
    sim.chamber_state(0)[0]
}

/// Class 4. `blowdown` vents 10 bar into the atmosphere: the pressure must settle at
/// p_atm = 101325 Pa (closed form: nothing else is at rest). With a 0.2 s step `euler` and `ab2`
/// step beyond their stability bound (h·ρ(J) above 2 and 1) and oscillate about it (mass and
/// energy conserved, so checks 4 and 5 are silent): check 11 fires. (They ended 15 % and 60 %
/// off while a step that jumped across p_atm saw none of the nozzle's laminar points; the
/// entry into the band is located on either side now, such steps end there, and the runs end
/// 1.5 % and 2.3 % off.) The same methods with 1 ms steps end within 0.1 % and it does
/// not; neither does `rk4` at the shipped step.
#[test]
fn explicit_steps_past_the_stability_limit_are_warned_about() {
    let p_atm = 101_325.0;
    for method in ["euler", "ab2"] {
        let coarse = spec(
            "blowdown",
            &["solver.step=0.2", "solver.output_interval=0.2"],
        );
        let mut sim = build_simulation(&coarse, Some(method)).unwrap();
        run_grid(&mut sim, 3.0, 15).unwrap();
        let off = (tank_pressure(&sim) - p_atm).abs() / p_atm;
        let fired = sim.first_fired_s[checks::BEYOND_STABILITY as usize];
        println!(
            "{method}, h = 0.2 s: p(3 s) off p_atm by {:.1} %, check 11 first at {fired:?} \
             (h·rho = {:.2})",
            100.0 * off,
            sim.stability.last_step_s * sim.stability.last_radius_per_s
        );
        // The premise of the warning: the steps were beyond the method's stability bound on
        // the real axis (forward Euler 2, AB2 1).
        let bound = if method == "euler" { 2.0 } else { 1.0 };
        assert!(sim.stability.last_step_s * sim.stability.last_radius_per_s > bound);
        assert!(fired.is_some(), "{method}: no warning");

        let fine = spec(
            "blowdown",
            &["solver.step=1e-3", "solver.output_interval=0.2"],
        );
        let mut sim = build_simulation(&fine, Some(method)).unwrap();
        run_grid(&mut sim, 3.0, 15).unwrap();
        let off = (tank_pressure(&sim) - p_atm).abs() / p_atm;
        println!("{method}, h = 1 ms: off by {:.2e}", off);
        assert!(off < 1e-3);
        assert_eq!(sim.first_fired_s[checks::BEYOND_STABILITY as usize], None);
    }
    let mut sim = build_simulation(&spec("blowdown", &[]), None).unwrap();
    run_grid(&mut sim, 3.0, 300).unwrap();
    println!(
        "rk4 at the shipped 1e-4 s: h·rho = {:.3e} (bound 2.785)",
        sim.stability.last_step_s * sim.stability.last_radius_per_s
    );
    assert_eq!(sim.first_fired_s[checks::BEYOND_STABILITY as usize], None);
}

fn backward_euler_max_halvings() -> u64 {
    plenum::integrators::backward_euler::MAX_HALVINGS_BELOW_MIN as u64 + 10
}

const STIFF_PAIR: &str = r#"
[model]
name = "stiff_pair"
[gas]
species = "air"
[solver]
method = "dopri5"
t_end = 100.0
output_interval = 1.0
[[chamber]]
name = "hi"
volume = 1e-3
pressure = 1e8
temperature = 300.0
[[chamber]]
name = "lo"
volume = 1e-3
pressure = 1e5
temperature = 300.0
[[orifice]]
name = "o"
from = "hi"
to = "lo"
area = 1e-6
discharge_coefficient = 0.8
"#;

/// Class 4, the forced `dopri5`: two chambers at 1e8 and 1e5 Pa through a 1 mm² orifice settle
/// into equal pressures, where the laminar band makes the problem stiff and DP5's steps are
/// held by its stability boundary (it drifted 11 K by 1e4 s): DP5's own stiffness detection
/// fires check 11. `auto` switches to the BDF there instead, and warns of nothing.
#[test]
fn a_forced_dopri5_held_by_stability_is_warned_about() {
    let spec = parse_str(STIFF_PAIR, "stiff_pair.toml", &[]).unwrap().spec;
    let mut dp5 = build_simulation(&spec, None).unwrap();
    run_grid(&mut dp5, 100.0, 100).unwrap();
    let fired = dp5.first_fired_s[checks::BEYOND_STABILITY as usize];
    let [p_hi, ..] = dp5.chamber_state(0);
    let [p_lo, ..] = dp5.chamber_state(1);
    println!(
        "dopri5: {} steps, p = {p_hi:.1} / {p_lo:.1} Pa at 100 s, check 11 first at {fired:?}",
        dp5.stats.steps
    );
    assert!(fired.is_some());
    let mut auto = build_simulation(&spec, Some("auto")).unwrap();
    run_grid(&mut auto, 100.0, 100).unwrap();
    println!("auto: {} steps", auto.stats.steps);
    assert_eq!(auto.first_fired_s[checks::BEYOND_STABILITY as usize], None);
    // Both settle at the same pressure (a peer run).
    let rel = (auto.chamber_state(0)[0] - p_hi).abs() / p_hi;
    println!("auto vs dopri5 final p: {rel:.2e}");
    assert!(rel < 1e-3);
}

/// Class 2. The projectile at 100 Pa is driven back through the bottom of its bore (it
/// reached x = −1.71 m, V = −1.9e-4 m³, exit 0). Every state reported is finite with V > 0 and
/// m > 0; the run ends with check 10 at the last good time.
#[test]
fn no_impossible_state_is_reported() {
    let spec = spec("projectile", &["barrel.pressure=100"]);
    let mut sim = build_simulation(&spec, None).unwrap();
    let mut reported = 0;
    let failure = loop {
        let target = sim.t_s + 1e-4;
        match sim.advance_to(target) {
            Ok(_) => {
                let [p, t, m, v, u] = sim.chamber_state(0);
                let (x, vel) = sim.piston_state(0);
                assert!(m > 0.0 && v > 0.0, "m = {m}, V = {v}");
                assert!([p, t, m, v, u, x, vel].iter().all(|z| z.is_finite()));
                reported += 1;
                assert!(reported < 100_000, "the run does not end");
            }
            Err(f) => break f,
        }
    };
    println!("{reported} states reported, then: {failure}");
    assert_eq!(failure.code, checks::IMPOSSIBLE_STATE);
    assert_eq!(failure.last_good_t_s, sim.t_s);
    assert!(sim.chamber_state(0)[3] > 0.0);
}

/// Class 16. `dopri5` with atol = 1e-200 failed at t = 0 ("the step size fell to inf s", HNW's
/// first-step estimate overflowed): it runs, and agrees with the default atol's run (the
/// tolerance is set by rtol on every state that matters) to 1e-5. So does the BDF, whose
/// first-step estimate (CVODE's) forms the same weighted norms.
#[test]
fn a_tiny_atol_does_not_break_the_first_step() {
    let tiny = spec("blowdown", &["solver.atol=1e-200", "solver.t_end=0.5"]);
    let plain = spec("blowdown", &["solver.t_end=0.5"]);
    for method in ["dopri5", "bdf"] {
        let mut a = build_simulation(&tiny, Some(method)).unwrap();
        let mut b = build_simulation(&plain, Some(method)).unwrap();
        run_grid(&mut a, 0.5, 50).unwrap_or_else(|e| panic!("{method}, atol 1e-200: {e}"));
        run_grid(&mut b, 0.5, 50).unwrap();
        let (pa, pb) = (tank_pressure(&a), tank_pressure(&b));
        println!(
            "{method}, atol 1e-200: p(0.5) = {pa} Pa in {} steps; default atol: {pb} Pa",
            a.stats.steps
        );
        assert!((pa - pb).abs() / pb < 1e-5, "{method}");
    }
}

/// Class 16. `auto` at 1e300 K and 1e-300 K failed at t = 0 with "the step size fell to inf
/// s". At 1e300 K the gas's sound speed is ~1e150 m/s: the tank equalizes with the atmosphere
/// at once, so p(0.01 s) = p_atm (closed form) to 1e-6; at 1e-300 K the flow empties the tank's
/// 3.5e297 kg at ~6e149 kg/s, on a time scale of 1e148 s: p stays 1e6 Pa to 1e-9.
#[test]
fn extreme_temperatures_do_not_break_the_first_step() {
    for (t, want, tol) in [("1e300", 101_325.0, 1e-6), ("1e-300", 1e6, 1e-9)] {
        let s = spec(
            "blowdown",
            &[&format!("tank.temperature={t}"), "solver.t_end=0.01"],
        );
        for method in ["auto", "dopri5"] {
            let mut sim = build_simulation(&s, Some(method)).unwrap();
            run_grid(&mut sim, 0.01, 1).unwrap_or_else(|e| panic!("{method}, T = {t} K: {e}"));
            let p = tank_pressure(&sim);
            println!(
                "{method}, T = {t} K: p(0.01 s) = {p} Pa in {} steps",
                sim.stats.steps
            );
            assert!((p - want).abs() / want < tol, "{method} {t}: {p}");
        }
    }
}

/// Class 16. `backward-euler` on a 1e-9 kg projectile over 1000 s (FONSim's h_min = 0.1 s)
/// failed at t = 0 ("Newton did not converge, step 1e-1 s"): it halves its step below h_min
/// (17 halvings, to 7.6e-7 s) and reaches the exit after 7 µs. The speed there is that of a
/// `dopri5` run at rtol 1e-8 to 30 %: a first-order method over the dozen steps the transient
/// gets before FONSim's criterion may change the step.
#[test]
fn backward_euler_shrinks_its_step_where_newton_fails() {
    let set = [
        "projectile.mass=1e-9",
        "solver.t_end=1000",
        "solver.max_time=2000",
        "solver.output_interval=10",
        "solver.rtol=1e-8",
    ];
    let s = spec("projectile", &set);
    let exit_speed = |method: &str| {
        let mut sim = build_simulation(&s, Some(method)).unwrap();
        run_grid(&mut sim, 1000.0, 100).unwrap();
        assert!(sim.network.exited[0], "{method}: no exit");
        (sim.piston_state(0).1, sim.t_s, sim.stats.rejected_steps)
    };
    let (v_be, t_be, rejected) = exit_speed("backward-euler");
    let (v_dp, t_dp, _) = exit_speed("dopri5");
    println!(
        "exit: backward-euler v = {v_be} m/s at {t_be:e} s ({rejected} rejected pairs), \
         dopri5 v = {v_dp} m/s at {t_dp:e} s"
    );
    assert!((v_be - v_dp).abs() / v_dp < 0.3);
    assert!(rejected <= backward_euler_max_halvings());
}

/// A fixed-step run whose events cut every step short at one point (found by the fmi_calls
/// fuzzer: a projectile of 1.2e161 kg with damping 1.8e243 N·s/m and a static friction of
/// 2.2e-318 Pa, which sticks and breaks away again 5e-20 s later, each time) ends with a clear
/// error after twice `max_steps` steps in one advance, instead of running on for ~10¹⁵ steps.
#[test]
fn events_that_cut_every_fixed_step_short_end_the_advance() {
    let src = include_str!("../../models/projectile.toml")
        .replacen("[solver]\n", "[solver]\nmax_steps = 2000\n", 1)
        .replace(
            "mass = 0.002",
            "mass = 1.2217638442043777e161\ndamping = 1.755328752524461e243",
        )
        .replace(
            "friction_static = 3000.0",
            "friction_static = 2.228187e-318",
        );
    let m = parse_str(&src, "chatter.toml", &[]).expect("valid");
    let mut sim = build_simulation(&m.spec, None).expect("builds");
    let t0 = std::time::Instant::now();
    let err = sim.advance_to(1e-4).expect_err("cannot reach 1e-4 s");
    println!(
        "{:.3} s, {} steps: {}",
        t0.elapsed().as_secs_f64(),
        sim.stats.steps,
        err.message
    );
    assert!(
        err.message.contains("events cut the steps short"),
        "{}",
        err.message
    );
    assert!(err.message.contains("sticks"), "{}", err.message);
    assert!(sim.stats.steps <= 3 * 2000 + 1, "{}", sim.stats.steps);
}
