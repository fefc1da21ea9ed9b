//! Hostile co-simulation calls on the instance behind the FMU's C ABI (`plenum::cosim::Instance`;
//! hostile-input classes of docs/integrators.md): impossible states are discarded (class 2), a
//! start the time axis cannot resolve
//! is refused (5), fixed-step work per fmi2DoStep is bounded (6), steps of 0, −0, < 0 and NaN
//! are refused as FMI 2.0 requires (9), and a warning is logged once per episode (17).

use std::sync::mpsc;
use std::time::Duration;

use plenum::cosim::{Instance, StepStatus};

fn shipped(name: &str) -> String {
    std::fs::read_to_string(format!("{}/models/{name}.toml", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn with_method(src: &str, method: &str) -> String {
    src.replace("method = \"rk4\"", &format!("method = \"{method}\""))
}

fn vr(inst: &Instance, name: &str) -> u32 {
    inst.description()
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variable {name}"))
        .value_reference
}

fn get(inst: &mut Instance, name: &str) -> f64 {
    let r = vr(inst, name);
    let mut out = [0.0];
    inst.get_real(&[r], &mut out).unwrap();
    out[0]
}

fn initialized(src: &str, start: f64) -> Instance {
    let mut inst = Instance::new(src, "model.toml").unwrap();
    inst.setup_experiment(start, None).unwrap();
    inst.enter_initialization_mode().unwrap();
    inst.exit_initialization_mode().unwrap();
    inst
}

/// `f` on another thread; panics unless it returns within `secs` (a hang guard, far above
/// the time the call takes: not a timing test).
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("the call did not return: it hangs")
}

/// Class 2. The projectile at 100 Pa is pushed back through the bottom of its bore by the
/// atmosphere (it reached x = −1.71 m, V = −1.9e-4 m³, p = −29 Pa, status OK): the step that
/// would take the chamber's volume to 0 or below returns fmi2Discard, the state stays at the
/// last good time, and every value read there is finite with V > 0 and m > 0.
#[test]
fn a_piston_through_the_bottom_of_its_bore_is_discarded() {
    let mut inst = Instance::new(&shipped("projectile"), "projectile.toml").unwrap();
    inst.setup_experiment(0.0, None).unwrap();
    inst.enter_initialization_mode().unwrap();
    let p = vr(&inst, "barrel.pressure");
    inst.set_real(&[p], &[100.0]).unwrap();
    inst.exit_initialization_mode().unwrap();
    let (mut t, h) = (0.0, 1e-4);
    let mut last = None;
    for _ in 0..1000 {
        let r = inst.do_step(t, h).unwrap();
        let (v, m) = (get(&mut inst, "barrel.V"), get(&mut inst, "barrel.m"));
        let x = get(&mut inst, "projectile.x");
        assert!(
            v > 0.0 && m > 0.0 && x.is_finite(),
            "V = {v}, m = {m}, x = {x}"
        );
        if r.status == StepStatus::Discard {
            last = Some((r, inst.last_successful_time().unwrap(), v, x));
            break;
        }
        t += h;
    }
    let (r, t_good, v, x) = last.expect("the run is discarded before x goes below 0");
    println!(
        "fmi2Discard at t = {t_good} s (V = {v:e} m3, x = {x} m): {}",
        r.log.last().unwrap().text
    );
    assert!(r.log.iter().any(|l| l.text.contains("run-time check 10")));
    assert_eq!(get(&mut inst, "rc"), 10.0);
    assert!(t_good > 0.0 && t_good < 0.05);
}

/// Class 2. A pressure so small that the mass underflows to 0 (5e-324 Pa gave T = NaN with
/// status OK) is refused by fmi2SetReal; the instance keeps its value and runs.
#[test]
fn a_parameter_that_makes_the_start_impossible_is_refused() {
    let mut inst = Instance::new(&shipped("projectile"), "projectile.toml").unwrap();
    inst.setup_experiment(0.0, None).unwrap();
    inst.enter_initialization_mode().unwrap();
    let p = vr(&inst, "barrel.pressure");
    let e = inst.set_real(&[p], &[5e-324]).unwrap_err();
    println!("fmi2SetReal(barrel.pressure = 5e-324): {e}");
    assert!(e.0.contains("impossible"), "{e}");
    inst.exit_initialization_mode().unwrap();
    assert_eq!(get(&mut inst, "barrel.pressure"), 701325.0);
    assert_eq!(inst.do_step(0.0, 1e-4).unwrap().status, StepStatus::Ok);
    let temperature = get(&mut inst, "barrel.T");
    println!("after one step: T = {temperature} K");
    assert!(temperature.is_finite() && temperature > 0.0);
}

/// Class 5. After fmi2SetupExperiment(start = 1e15) fmi2DoStep(t, 0.01) returned OK while
/// neither time nor state changed: the start is refused for a fixed-step model (its 1e-4 s
/// step is below 100·ε·1e15 s = 22 s), and a communication step that cannot move time at all
/// (1e-300 s at 1e9 s) is refused with the state unchanged. A step below the time axis's
/// resolution that still moves time (1e-6 s < 100·ε·1e9 s = 2.2e-5 s: a master's rounding)
/// runs and lands exactly on t + h.
#[test]
fn steps_that_cannot_move_time_are_refused() {
    let t0 = 1e15_f64;
    println!("(1e15 + 0.01) - 1e15 = {}", (t0 + 0.01) - t0);
    let mut rk4 = Instance::new(&shipped("blowdown"), "blowdown.toml").unwrap();
    let e = rk4.setup_experiment(t0, None).unwrap_err();
    println!("rk4, start 1e15: {e}");
    assert!(e.0.contains("resolution"), "{e}");

    for method in ["rk4", "auto"] {
        let mut inst = initialized(&with_method(&shipped("blowdown"), method), 1e9);
        let p0 = get(&mut inst, "tank.p");
        let e = inst.do_step(1e9, 1e-300).unwrap_err();
        println!("{method} at 1e9 s, step 1e-300 s: {e}");
        assert!(e.0.contains("does not move the time"), "{e}");
        assert_eq!(inst.simulation().t_s, 1e9);
        assert_eq!(get(&mut inst, "tank.p"), p0);
        let r = inst.do_step(1e9, 1e-6).unwrap();
        let p1 = get(&mut inst, "tank.p");
        println!(
            "{method}, step 1e-6 s: {:?}, t = {:?}, p = {p1} (from {p0})",
            r.status,
            inst.simulation().t_s
        );
        assert_eq!(r.status, StepStatus::Ok);
        assert_eq!(inst.simulation().t_s, 1e9 + 1e-6);
        assert!(p1 < p0);
        let r = inst.do_step(1e9 + 1e-6, 0.01).unwrap();
        let p = get(&mut inst, "tank.p");
        println!(
            "{method}, step 0.01 s: {:?}, t = {}, p = {p}",
            r.status,
            inst.simulation().t_s
        );
        assert_eq!(inst.simulation().t_s, 1e9 + 1e-6 + 0.01);
        assert!(p < p1);
    }
}

/// Class 6. fmi2DoStep(c, 0, 1e9) on the shipped blowdown (rk4, 1e-4 s: 1e13 steps) and a step
/// of 1e290 s from 1e300 s never returned: a fixed-step call that would take more than
/// `[solver] max_steps` steps is refused before any step (state and phase unchanged), and an
/// adaptive one ends within `max_steps` steps.
#[test]
fn fixed_step_work_per_call_is_bounded() {
    let (e, p0, t, p, next) = within(120, || {
        let mut inst = initialized(&shipped("blowdown"), 0.0);
        let p0 = get(&mut inst, "tank.p");
        let e = inst.do_step(0.0, 1e9).unwrap_err();
        let (t, p) = (inst.simulation().t_s, get(&mut inst, "tank.p"));
        let next = inst.do_step(0.0, 0.01).map(|r| r.status);
        (e, p0, t, p, next)
    });
    println!("rk4, fmi2DoStep(0, 1e9): {e}; state at t = {t}, p = {p}; next step {next:?}");
    assert!(e.0.contains("max_steps"), "{e}");
    assert_eq!((t, p), (0.0, p0));
    assert_eq!(next.unwrap(), StepStatus::Ok);

    // The bound counts the steps the call can take: a projectile (1 µs steps) whose model asks
    // to stop at the exit ends there or at max_time = 0.05 s (50,000 steps), so a step of 1 s
    // is no runaway.
    let (status, t_exit, finished) = within(120, || {
        let src =
            shipped("projectile").replacen("[solver]\n", "[solver]\nstop_on_exit = true\n", 1);
        let mut inst = initialized(&src, 0.0);
        let r = inst.do_step(0.0, 1.0).unwrap();
        (r.status, inst.simulation().t_s, inst.terminated().unwrap())
    });
    println!(
        "projectile rk4, fmi2DoStep(0, 1): {status:?} at t = {t_exit} s, terminated {finished}"
    );
    assert_eq!(status, StepStatus::Discard);
    assert!(finished && t_exit < 0.05);

    let outcome = within(120, || {
        let mut inst = initialized(&with_method(&shipped("blowdown"), "auto"), 1e300);
        let r = inst.do_step(1e300, 1e290);
        let p = get(&mut inst, "tank.p");
        (
            r.map(|r| r.status).map_err(|e| e.0),
            inst.simulation().stats.steps,
            p,
        )
    });
    println!("auto, fmi2DoStep(1e300, 1e290): {outcome:?}");
    assert!(outcome.1 <= 100_000);
    assert!(outcome.2.is_finite());
}

/// Class 9. FMI 2.0.4 §4.2.2: communicationStepSize "must be > 0.0". fmi2DoStep with h = 0
/// returned fmi2OK, so FMPy with output_interval = 0 looped for ever; 0, −0, a negative h and
/// NaN are refused (fmi2Error), with nothing changed.
#[test]
fn steps_that_are_not_positive_are_refused() {
    let mut inst = initialized(&shipped("blowdown"), 0.0);
    inst.do_step(0.0, 0.01).unwrap();
    let (t, p) = (inst.simulation().t_s, get(&mut inst, "tank.p"));
    for h in [0.0, -0.0, -0.01, -1e-300, f64::NAN] {
        let e = inst.do_step(t, h).unwrap_err();
        println!("h = {h:?}: {e}");
        assert!(e.0.contains("> 0"), "{e}");
        assert_eq!(inst.simulation().t_s, t);
        assert_eq!(get(&mut inst, "tank.p"), p);
    }
    assert_eq!(inst.do_step(t, 0.01).unwrap().status, StepStatus::Ok);
}

/// Class 17. A warning that fires on every step (check 8, above the critical pressure) was
/// logged on every fmi2DoStep: it is logged when its episode starts, each step still returns
/// fmi2Warning, and after a restore it is logged again.
#[test]
fn a_warning_is_logged_once_per_episode() {
    let src = shipped("blowdown").replace("pressure = 1e6", "pressure = 5e6");
    let mut inst = initialized(&src, 0.0);
    let state = inst.snapshot().unwrap();
    let mut t = 0.0;
    let mut lines = 0;
    let mut warnings = 0;
    for _ in 0..20 {
        let r = inst.do_step(t, 1e-3).unwrap();
        warnings += usize::from(r.status == StepStatus::Warning);
        lines += r
            .log
            .iter()
            .filter(|l| l.text.contains("run-time check 8"))
            .count();
        t += 1e-3;
    }
    println!("20 steps above the critical pressure: {warnings} fmi2Warning, {lines} log line(s)");
    assert_eq!(warnings, 20);
    assert_eq!(lines, 1);
    inst.restore(&state).unwrap();
    let r = inst.do_step(0.0, 1e-3).unwrap();
    assert_eq!(
        r.log
            .iter()
            .filter(|l| l.text.contains("run-time check 8"))
            .count(),
        1,
        "logged again after fmi2SetFMUstate"
    );
}
