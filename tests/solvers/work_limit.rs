//! `[solver] max_steps` (CVODE's `mxstep`): one advance takes at most that many accepted
//! adaptive steps, then stops with an error and the reported state where it was. Found by the
//! `state_blob` fuzz target: a state with a damaged BDF history made one fmi2DoStep of 1e-5 s
//! take 939,086 steps (28 s).

use crate::common;

use plenum::cosim::Instance;
use plenum::model::{build_simulation, parse_str};

/// DP5 on the stiff network to 1 s: its steps are bounded by stability (h·|λ| ≲ 3.3), so the
/// count is large and exact for a given build.
fn model(max_steps: Option<u64>) -> String {
    let limit = max_steps.map_or(String::new(), |n| format!("max_steps = {n}\n"));
    common::STIFF.replace(
        "t_end = 200.0",
        &format!("method = \"dopri5\"\n{limit}t_end = 1.0"),
    )
}

fn steps_unlimited() -> u64 {
    let spec = parse_str(&model(None), "stiff.toml", &[]).unwrap().spec;
    let mut sim = build_simulation(&spec, None).unwrap();
    sim.advance_to(1.0).expect("the unlimited run reaches 1 s");
    sim.stats.steps
}

#[test]
fn an_advance_stops_after_exactly_max_steps() {
    let n = steps_unlimited();
    println!("DP5 on the stiff network, 0 → 1 s in one advance: {n} steps");
    assert!(n > 1000, "the run should need many steps, took {n}");

    // The limit is exact: n steps are allowed, n − 1 are not.
    let spec = parse_str(&model(Some(n)), "stiff.toml", &[]).unwrap().spec;
    let mut sim = build_simulation(&spec, None).unwrap();
    sim.advance_to(1.0).expect("max_steps = n reaches 1 s");
    assert_eq!(sim.stats.steps, n);

    let spec = parse_str(&model(Some(n - 1)), "stiff.toml", &[])
        .unwrap()
        .spec;
    let mut sim = build_simulation(&spec, None).unwrap();
    let y0 = sim.y.clone();
    let err = sim
        .advance_to(1.0)
        .expect_err("max_steps = n − 1 stops short");
    println!("max_steps = {}: {err}", n - 1);
    assert!(
        err.message
            .contains(&format!("{} steps in one advance", n - 1))
    );
    assert_eq!(sim.stats.steps, n - 1, "steps taken before the stop");
    assert_eq!(err.last_good_t_s, 0.0);
    assert_eq!(sim.t_s, 0.0, "the reported time stays");
    assert_eq!(sim.y, y0, "the reported state stays");

    // The limit is per advance: the same n − 1 reach 1 s in two halves.
    let mut sim = build_simulation(&spec, None).unwrap();
    sim.advance_to(0.5).expect("first half");
    sim.advance_to(1.0).expect("second half");
    println!("in two advances of 0.5 s: {} steps", sim.stats.steps);
}

/// The fixed-step refusal is worded for every caller: the CLI, FMI 2.0 and FMI 3.0 alike.
#[test]
fn fixed_steps_over_the_limit_are_refused_in_neutral_words() {
    let text = common::STIFF.replace(
        "t_end = 200.0",
        "method = \"rk4\"\nstep = 1e-6\nmax_steps = 10\nt_end = 1.0",
    );
    let spec = parse_str(&text, "stiff.toml", &[]).unwrap().spec;
    let mut sim = build_simulation(&spec, None).unwrap();
    let err = sim
        .advance_to(1.0)
        .expect_err("1e6 steps of 1e-6 s exceed max_steps = 10");
    println!("{}", err.message);
    assert!(err.message.contains("max_steps = 10 per advance"));
    assert!(err.message.contains("one communication step"));
    assert!(!err.message.contains("fmi2"), "names one standard's call");
    assert_eq!(sim.t_s, 0.0, "nothing was taken");
}

#[test]
fn a_communication_step_over_the_limit_is_an_error_and_the_state_restores() {
    let n = steps_unlimited();
    let mut inst = Instance::new(&model(Some(n / 2)), "stiff").unwrap();
    inst.setup_experiment(0.0, None).unwrap();
    inst.enter_initialization_mode().unwrap();
    inst.exit_initialization_mode().unwrap();
    let before = inst.snapshot().unwrap();
    let err = inst
        .do_step(0.0, 1.0)
        .expect_err("one step of 1 s needs n > max_steps");
    println!("fmi2DoStep(0, 1 s) with max_steps = {}: {}", n / 2, err.0);
    assert!(err.0.contains("steps in one advance"));
    // The master goes back to the saved state and takes smaller communication steps.
    inst.restore(&before)
        .expect("fmi2SetFMUstate after the error");
    inst.do_step(0.0, 0.25).expect("a quarter of the way");
    inst.do_step(0.25, 0.25).expect("half of the way");
    assert_eq!(inst.simulation().t_s, 0.5);
}

#[test]
fn zero_max_steps_is_refused_at_load() {
    let err = parse_str(&model(Some(0)), "stiff.toml", &[]).expect_err("max_steps = 0");
    let text = format!("{err:?}");
    println!("{text}");
    assert!(text.contains("max_steps"));
}
