//! A directional valve's spool lag (`response_time` τ): the spool follows a step of its command
//! as the first-order lag's closed form, the flow of a path between two reservoirs follows it
//! in proportion, and a lag of τ → 0 is the valve without one, within the gas the lag holds back.

use crate::common::{output, sim_of};

/// A 2/2 valve `v` from a 6 bar supply into `into` (`extra`: more components), its spool
/// commanded by `position`, with the keys `lag`.
fn circuit(into: &str, position: &str, lag: &str, extra: &str) -> String {
    format!(
        r#"
[model]
name = "lagged_valve"
[gas]
species = "air"
[solver]
method = "auto"
rtol = 1e-10
atol = 1e-12
t_end = 0.1
[[reservoir]]
name = "P"
pressure = "6 bar"
temperature = 293.15
[[reservoir]]
name = "ATM"
pressure = "1 bar"
temperature = 293.15
{extra}
[[directional_valve]]
name = "v"
p = "P"
a = "{into}"
position = {position}
sonic_conductance = 1e-8
critical_pressure_ratio = 0.3
{lag}
"#
    )
}

/// A step of the command 0 → 1 at t₀ = 10 ms (a step table: its time a breakpoint of the
/// network), τ = 5 ms, the valve between two reservoirs at a fixed ratio (6 : 1, choked), so
/// that its flow is the fully open valve's (a peer run with `position = 1`) times its opening
/// s: the spool output is 1 − exp(−(t − t₀)/τ) and the flow that times the full flow, at every
/// 1 ms up to 120 ms (22 τ after the step).
#[test]
fn the_spool_follows_a_step_as_the_first_order_lag() {
    let (t0, tau) = (0.01, 0.005);
    let step = format!("{{ table = [[0.0, 0.0], [{t0}, 1.0]], interpolation = \"step\" }}");
    let mut lagged = sim_of(&circuit(
        "ATM",
        &step,
        &format!("response_time = {tau}"),
        "",
    ));
    // The step is a breakpoint, where the driver restarts: ds/dt jumps there.
    let first = lagged.network.next_breakpoint_after(0.0);
    println!("the lagged valve's first breakpoint: {first:?}");
    assert_eq!(first, Some(t0));
    let mut open = sim_of(&circuit("ATM", "1.0", "", ""));
    open.advance_to(1e-3).expect("runs");
    let full = output(&mut open, "v.mdot");
    assert!(full > 1e-3, "the open valve's flow {full} kg/s");
    let (mut worst_s, mut worst_flow) = (0.0f64, 0.0f64);
    for k in 1..=120 {
        let t = 1e-3 * k as f64;
        lagged.advance_to(t).expect("runs");
        let want = if t < t0 {
            0.0
        } else {
            1.0 - (-(t - t0) / tau).exp()
        };
        let s = output(&mut lagged, "v.spool");
        let flow = output(&mut lagged, "v.mdot") / full;
        worst_s = worst_s.max((s - want).abs());
        worst_flow = worst_flow.max((flow - want).abs());
    }
    println!(
        "spool against 1 − exp(−(t − t0)/τ): largest error {worst_s:e}; flow / open flow: \
         {worst_flow:e} (open flow {full:e} kg/s; {} steps, {} events)",
        lagged.stats.steps, lagged.stats.events
    );
    assert!(worst_s < 1e-7, "spool error {worst_s:e}");
    assert!(worst_flow < 1e-7, "flow error {worst_flow:e}");
}

/// τ = 1 µs against the valve without a lag, filling a 1 L chamber from 1 bar, the command
/// stepping 0 → 1 at 10 ms and back at 40 ms: the lagged spool holds back at most the area
/// between the two openings, τ per switch, of at most the open flow ṁ_max, so the chamber's
/// mass differs by at most 2·ṁ_max·τ (plus the runs' tolerance) at every 1 ms.
#[test]
fn a_vanishing_lag_is_the_valve_without_one() {
    let tau = 1e-6;
    let step = "{ table = [[0.0, 0.0], [0.01, 1.0], [0.04, 0.0]], interpolation = \"step\" }";
    let chamber =
        "[[chamber]]\nname = \"C\"\nvolume = \"1 L\"\npressure = \"1 bar\"\ntemperature = 293.15";
    let mut lagged = sim_of(&circuit(
        "C",
        step,
        &format!("response_time = {tau:e}"),
        chamber,
    ));
    let mut plain = sim_of(&circuit("C", step, "", chamber));
    let (mut worst, mut max_flow, mut m_end) = (0.0f64, 0.0f64, 0.0);
    for k in 1..=60 {
        let t = 1e-3 * k as f64;
        lagged.advance_to(t).expect("runs");
        plain.advance_to(t).expect("runs");
        let (ml, mp) = (output(&mut lagged, "C.m"), output(&mut plain, "C.m"));
        worst = worst.max((ml - mp).abs());
        max_flow = max_flow.max(output(&mut plain, "v.mdot").abs());
        m_end = mp;
    }
    let bound = 2.0 * max_flow * tau + 1e-9 * m_end;
    println!(
        "chamber mass, τ = {tau:e} s against no lag: largest difference {worst:e} kg, bound \
         2·ṁ_max·τ + 1e-9·m = {bound:e} kg (ṁ_max {max_flow:e} kg/s, m {m_end:e} kg)"
    );
    assert!(worst > 0.0, "the lag changes nothing: not the lagged kind?");
    assert!(worst <= bound, "{worst:e} > {bound:e}");
}

/// The command as an FMU input (Co-Simulation): set to 0.4 in initialization mode, the spool
/// starts there; set to 1 at t₁ = 10 ms, it follows 1 − 0.6·exp(−(t − t₁)/τ) at every
/// communication point of 1 ms.
#[test]
fn the_spool_follows_its_command_as_an_fmu_input() {
    use plenum::cosim::Instance;
    let tau = 0.005;
    let src = circuit(
        "ATM",
        "0.0",
        &format!("response_time = {tau}"),
        "[inputs]\nnames = [\"v.position\"]",
    );
    let mut inst = Instance::new(&src, "model.toml").expect("model loads");
    let vr = |inst: &Instance, name: &str| {
        inst.description()
            .variables
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no variable {name}"))
            .value_reference
    };
    let (pos, spool) = (vr(&inst, "v.position"), vr(&inst, "v.spool"));
    inst.setup_experiment(0.0, None).expect("setup");
    inst.enter_initialization_mode().expect("enter");
    inst.set_real(&[pos], &[0.4]).expect("set");
    inst.exit_initialization_mode().expect("exit");
    let mut s = [0.0];
    inst.get_real(&[spool], &mut s).expect("get");
    println!("spool after the input 0.4 set in initialization: {}", s[0]);
    assert_eq!(s[0], 0.4);
    let (t1, h) = (0.01, 1e-3);
    let mut worst = 0.0f64;
    for k in 0..40 {
        let t = h * k as f64;
        if k == 10 {
            inst.set_real(&[pos], &[1.0]).expect("set");
        }
        inst.do_step(t, h).expect("step");
        inst.get_real(&[spool], &mut s).expect("get");
        let t = t + h;
        let want = if t <= t1 {
            0.4
        } else {
            1.0 - 0.6 * (-(t - t1) / tau).exp()
        };
        worst = worst.max((s[0] - want).abs());
    }
    println!("spool against its closed form through the input's step: largest error {worst:e}");
    assert!(worst < 1e-6, "{worst:e}");
}
