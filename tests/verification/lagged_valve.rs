//! A directional valve's spool lag (`response_time` τ): the spool follows a step of its command
//! as the first-order lag's closed form, the flow of a path between two reservoirs follows it
//! in proportion, and a lag of τ → 0 is the valve without one, within the gas the lag holds back.
//! Its flows through its ports (`a_mdot`, `b_mdot`, `exhaust_mdot`) are the valve's at the
//! spool: the plain valve's once the spool has settled, the ISO 6358 law at the spool's
//! openings while it moves, and their tangents and FMU dependencies read the spool.

use plenum::components::orifice::iso6358_mass_flow_kg_per_s;

use plenum::simulation::Simulation;

use crate::common::valves::flow_table_keys;
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

/// A 5/2 valve `v` (C = 1e-8 m³/(s·Pa), b = 0.3) from a 6 bar supply `P` to the working ports
/// `A`, `B` and the exhaust `ATM` (1 bar), its spool commanded by `position`, with the keys
/// `lag`; `nodes`: the components `A` and `B`.
fn five_two(nodes: &str, position: &str, lag: &str) -> String {
    format!(
        r#"
[model]
name = "lagged_five_two"
[gas]
species = "air"
[solver]
method = "auto"
rtol = 1e-10
atol = 1e-12
t_end = 0.3
[[reservoir]]
name = "P"
pressure = "6 bar"
temperature = 293.15
[[reservoir]]
name = "ATM"
pressure = "1 bar"
temperature = 293.15
{nodes}
[[directional_valve]]
name = "v"
p = "P"
a = "A"
b = "B"
ea = "ATM"
eb = "ATM"
position = {position}
sonic_conductance = 1e-8
critical_pressure_ratio = 0.3
{lag}
"#
    )
}

const PORT_FLOWS: [&str; 3] = ["v.a_mdot", "v.b_mdot", "v.exhaust_mdot"];

/// The working ports of a spool that moves: chambers `A` (0.2 L, from 1 bar) and `B` (0.2 L,
/// from 6 bar), the command stepping 0 → 1 at 10 ms; the supply and the exhaust of
/// [`five_two`].
const CHAMBERS: &str = "[[chamber]]\nname = \"A\"\nvolume = \"0.2 L\"\npressure = \"1 bar\"\n\
                        temperature = 293.15\n[[chamber]]\nname = \"B\"\nvolume = \"0.2 L\"\n\
                        pressure = \"6 bar\"\ntemperature = 293.15";
const STEP: &str = "{ table = [[0.0, 0.0], [0.01, 1.0]], interpolation = \"step\" }";
const P_SUPPLY: f64 = 6e5;
const P_ATM: f64 = 1e5;
const T_SUPPLY: f64 = 293.15;

/// One sample of [`CHAMBERS`]' port flows against `law`, the signed flow of a fully open path
/// from (p₁, T₁) to (p₂, T₂), at the spool's openings (s for p–a and b–eb, 1 − s for p–b and
/// a–ea) between the states read from the outputs.
struct Sample {
    s: f64,
    pa: f64,
    pb: f64,
    /// The flows the law gives at `PORT_FLOWS`.
    want: [f64; 3],
    /// The largest |port flow − law| and |law|, kg/s.
    worst: f64,
    largest: f64,
}

fn sample(sim: &mut Simulation, law: impl Fn(f64, f64, f64, f64) -> f64) -> Sample {
    let s = output(sim, "v.spool");
    let (pa, ta) = (output(sim, "A.p"), output(sim, "A.T"));
    let (pb, tb) = (output(sim, "B.p"), output(sim, "B.T"));
    let (p_a, a_ea) = (law(P_SUPPLY, T_SUPPLY, pa, ta), law(pa, ta, P_ATM, 293.15));
    let (p_b, b_eb) = (law(P_SUPPLY, T_SUPPLY, pb, tb), law(pb, tb, P_ATM, 293.15));
    let want = [
        s * p_a - (1.0 - s) * a_ea,
        (1.0 - s) * p_b - s * b_eb,
        (1.0 - s) * a_ea + s * b_eb,
    ];
    let (mut worst, mut largest) = (0.0f64, 0.0f64);
    for (name, want) in PORT_FLOWS.iter().zip(want) {
        let got = output(sim, name);
        worst = worst.max((got - want).abs());
        largest = largest.max(want.abs());
    }
    Sample {
        s,
        pa,
        pb,
        want,
        worst,
        largest,
    }
}

/// The working ports as reservoirs at 4 bar (`A`: p–a subsonic, a–ea choked) and 2 bar (`B`),
/// so that the flows are functions of the spool alone. The command steps 0 → 1 at 10 ms,
/// τ = 2 ms; at 5 ms (before the step) and from 150 ms (70 τ after it: exp(−70) ≈ 4e-31) to
/// 250 ms, each of `a_mdot`, `b_mdot`, `exhaust_mdot` and `mdot` of the lagged valve equals,
/// to round-off, the same valve without `response_time` whose position is the lagged spool's
/// value; and the valve at the command's value within what the spool's residual |s − s_cmd|
/// (the integrator's error, rtol 1e-10) moves the flows: |s − s_cmd| times the sum of the
/// paths' full flows (a 5/2's flows are linear in s at fixed ports).
#[test]
fn settled_port_flows_are_the_valve_without_a_lag() {
    let ports = "[[reservoir]]\nname = \"A\"\npressure = \"4 bar\"\ntemperature = 293.15\n\
                 [[reservoir]]\nname = \"B\"\npressure = \"2 bar\"\ntemperature = 293.15";
    let step = "{ table = [[0.0, 0.0], [0.01, 1.0]], interpolation = \"step\" }";
    let mut lagged = sim_of(&five_two(ports, step, "response_time = 0.002"));
    let (mut at_spool, mut at_command, mut largest) = (0.0f64, 0.0f64, 0.0f64);
    for (t, command) in [(0.005, 0.0), (0.15, 1.0), (0.2, 1.0), (0.25, 1.0)] {
        lagged.advance_to(t).expect("runs");
        let spool = output(&mut lagged, "v.spool");
        let residual = (spool - command).abs();
        let mut plain_at_spool = sim_of(&five_two(ports, &format!("{spool:e}"), ""));
        let mut plain = sim_of(&five_two(ports, &format!("{command:e}"), ""));
        plain_at_spool.advance_to(t).expect("runs");
        plain.advance_to(t).expect("runs");
        // The sum of the four paths' flows at full opening: |∂(flow)/∂s| ≤ it.
        let q = |p1: f64, p2: f64| iso6358_mass_flow_kg_per_s(1e-8, 0.3, p1, 293.15, p2);
        let slope = q(6e5, 4e5) + q(4e5, 1e5) + q(6e5, 2e5) + q(2e5, 1e5);
        for name in PORT_FLOWS.iter().chain(&["v.mdot"]) {
            let l = output(&mut lagged, name);
            let (s, p) = (output(&mut plain_at_spool, name), output(&mut plain, name));
            println!(
                "t = {t} s, {name}: lagged {l:e} kg/s; without a lag, at the spool {s:e} \
                 (difference {:e}), at the command {p:e} (difference {:e}; spool residual \
                 {residual:e})",
                l - s,
                l - p
            );
            at_spool = at_spool.max((l - s).abs());
            largest = largest.max(p.abs());
            let bound = residual * slope + 1e-15 * p.abs();
            assert!(
                (l - p).abs() <= bound,
                "{name}: {:e} > {bound:e}",
                (l - p).abs()
            );
            at_command = at_command.max((l - p).abs());
        }
    }
    println!(
        "largest difference from the valve without a lag: at the spool {at_spool:e} kg/s, at \
         the command {at_command:e} kg/s (largest flow {largest:e} kg/s)"
    );
    assert!(
        largest > 1e-3,
        "the flows are too small to compare: {largest:e} kg/s"
    );
    assert!(at_spool <= 1e-15 * largest, "{at_spool:e} kg/s");
}

/// While the spool moves (τ = 5 ms after a step of the command 0 → 1 at 10 ms), filling a
/// 0.2 L chamber `A` from 1 bar and emptying `B` from 6 bar: at every 0.25 ms from 9 ms to
/// 40 ms, each port flow equals the ISO 6358 law of each path at the spool's opening (s for
/// p–a and b–eb, 1 − s for p–b and a–ea, s the `v.spool` output) between the chambers' states
/// read from their outputs, computed here from the law alone: a_mdot = s·q(P→A) − (1 − s)·q(A→ATM),
/// b_mdot = (1 − s)·q(P→B) − s·q(B→ATM), exhaust_mdot = (1 − s)·q(A→ATM) + s·q(B→ATM).
#[test]
fn port_flows_follow_the_spool_during_the_lag() {
    let mut sim = sim_of(&five_two(CHAMBERS, STEP, "response_time = 0.005"));
    let (cond, b) = (1e-8, 0.3);
    // q(from → to), signed: the law from the higher pressure's side.
    let q = |p1: f64, t1: f64, p2: f64, t2: f64| {
        if p1 >= p2 {
            iso6358_mass_flow_kg_per_s(cond, b, p1, t1, p2)
        } else {
            -iso6358_mass_flow_kg_per_s(cond, b, p2, t2, p1)
        }
    };
    let (mut worst, mut largest, mut mid_spool) = (0.0f64, 0.0f64, 0);
    for k in 36..=160 {
        let t = 0.25e-3 * k as f64;
        sim.advance_to(t).expect("runs");
        let x = sample(&mut sim, q);
        worst = worst.max(x.worst);
        largest = largest.max(x.largest);
        if x.s > 0.05 && x.s < 0.95 {
            mid_spool += 1;
        }
        if k % 20 == 0 {
            println!(
                "t = {t} s: s = {:.6}, p_A = {:.0} Pa, p_B = {:.0} Pa, a_mdot = {:e} kg/s \
                 (law {:e})",
                x.s,
                x.pa,
                x.pb,
                output(&mut sim, "v.a_mdot"),
                x.want[0]
            );
        }
    }
    println!(
        "port flows against the ISO 6358 law at the spool's openings: largest difference \
         {worst:e} kg/s (largest flow {largest:e} kg/s; {mid_spool} samples with 0.05 < s < 0.95)"
    );
    assert!(
        mid_spool >= 20,
        "the spool was seldom between its ends: {mid_spool}"
    );
    assert!(largest > 1e-3);
    assert!(worst <= 1e-13 * largest, "{worst:e} kg/s");
}

/// The tangent of the port flows along the spool state alone, at the node states held fixed
/// (reservoirs at every port), is the derivative of the law at the openings:
/// ∂a_mdot/∂s = q(P→A) + q(A→ATM), ∂b_mdot/∂s = −q(P→B) − q(B→ATM),
/// ∂exhaust_mdot/∂s = q(B→ATM) − q(A→ATM); a 5/2's openings are linear in s.
#[test]
fn port_flow_tangents_read_the_spool() {
    use plenum::variables::{output_variables, state_variables, write_output_tangents};
    let ports = "[[reservoir]]\nname = \"A\"\npressure = \"4 bar\"\ntemperature = 293.15\n\
                 [[reservoir]]\nname = \"B\"\npressure = \"2 bar\"\ntemperature = 293.15";
    let step = "{ table = [[0.0, 0.0], [0.01, 1.0]], interpolation = \"step\" }";
    let mut sim = sim_of(&five_two(ports, step, "response_time = 0.005"));
    sim.advance_to(0.013).expect("runs");
    let net = &mut sim.network;
    let n = net.layout.n_states;
    let spool = state_variables(net)
        .iter()
        .position(|v| v.variable.name == "v.spool")
        .expect("a spool state");
    let mut v = vec![0.0; n];
    v[spool] = 1.0;
    let names: Vec<String> = output_variables(&sim).into_iter().map(|v| v.name).collect();
    let y = sim.y[..n].to_vec();
    let (mut dydt, mut df) = (vec![0.0; n], vec![0.0; n]);
    let mut out = vec![0.0; names.len()];
    write_output_tangents(
        &mut sim.network,
        sim.t_s,
        &y,
        &v,
        &[],
        &mut dydt,
        &mut df,
        &mut out,
    )
    .expect("tangents");
    let q = |p1: f64, p2: f64| iso6358_mass_flow_kg_per_s(1e-8, 0.3, p1, 293.15, p2);
    let (p_a, a_ea, p_b, b_eb) = (q(6e5, 4e5), q(4e5, 1e5), q(6e5, 2e5), q(2e5, 1e5));
    let want = [p_a + a_ea, -p_b - b_eb, b_eb - a_ea];
    for (name, want) in PORT_FLOWS.iter().zip(want) {
        let got = out[names.iter().position(|x| x == name).expect("an output")];
        println!(
            "∂{name}/∂s = {got:e} kg/s, from the law {want:e}, difference {:e}",
            got - want
        );
        assert!(
            (got - want).abs() <= 1e-14 * want.abs(),
            "{name}: {got:e} against {want:e}"
        );
    }
}

/// A catalogue curve for the lagged valve (about the ISO law of C = 1e-8 m³/(s·Pa), b = 0.3),
/// rated at 7 bar and 293.15 K: rows `[p_down/p_up, kg/s]`.
const CURVE: [[f64; 2]; 7] = [
    [0.0, 8e-3],
    [0.3, 8e-3],
    [0.55, 7.2e-3],
    [0.75, 5.6e-3],
    [0.9, 3.5e-3],
    [0.97, 1.5e-3],
    [1.0, 0.0],
];

/// The curve's law written here from its definition: F(r) interpolated linearly between the
/// rows, times (p_u/p_ref)·sqrt(T_ref/T_u), from the higher pressure's side, signed.
fn curve_flow(p1: f64, t1: f64, p2: f64, t2: f64) -> f64 {
    let (p_ref, t_ref) = (7e5, 293.15);
    let law = |pu: f64, tu: f64, pd: f64| {
        let r = pd / pu;
        let k = CURVE.windows(2).position(|w| r <= w[1][0]).unwrap_or(5);
        let ([r0, f0], [r1, f1]) = (CURVE[k], CURVE[k + 1]);
        let f = f0 + (f1 - f0) * (r - r0) / (r1 - r0);
        f * pu / p_ref * (t_ref / tu).sqrt()
    };
    if p1 >= p2 {
        law(p1, t1, p2)
    } else {
        -law(p2, t2, p1)
    }
}

/// A lagged 5/2 valve rated by a curve (`flow_table` instead of C and b; the lagged valve
/// shares the directional valve's code) while its spool moves (τ = 5 ms after a step of the
/// command 0 → 1 at 10 ms), filling a 0.2 L chamber `A` from 1 bar and emptying `B` from 6
/// bar: at every 0.25 ms from 9 ms to 250 ms each port flow equals the curve's law of each
/// path at the spool's opening (s for p–a and b–eb, 1 − s for p–b and a–ea, s the `v.spool`
/// output) between the chambers' states read from their outputs, computed here from the rows
/// alone; A's ratio to the supply crosses every interior row, B's to the exhaust the first
/// two (events).
#[test]
fn a_lagged_valve_rated_by_a_curve_follows_its_spool_on_the_curve() {
    let curve = format!(
        "response_time = 0.005\n{}flow_table_inlet_temperature = 293.15",
        flow_table_keys(&CURVE, 7e5)
    );
    let model = five_two(CHAMBERS, STEP, "").replace(
        "sonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n",
        &curve,
    );
    assert!(!model.contains("sonic_conductance"), "{model}");
    let mut sim = sim_of(&model);
    let (mut worst, mut largest, mut mid_spool) = (0.0f64, 0.0f64, 0);
    let (mut r_a, mut r_b) = ((f64::INFINITY, 0.0f64), (f64::INFINITY, 0.0f64));
    for k in 36..=1000 {
        let t = 0.25e-3 * k as f64;
        sim.advance_to(t).expect("runs");
        let x = sample(&mut sim, curve_flow);
        r_a = (r_a.0.min(x.pa / P_SUPPLY), r_a.1.max(x.pa / P_SUPPLY));
        r_b = (r_b.0.min(P_ATM / x.pb), r_b.1.max(P_ATM / x.pb));
        worst = worst.max(x.worst);
        largest = largest.max(x.largest);
        if x.s > 0.05 && x.s < 0.95 {
            mid_spool += 1;
        }
    }
    println!(
        "curve-rated lagged valve, port flows against the curve's law at the spool's openings: \
         largest difference {worst:e} kg/s (largest flow {largest:e} kg/s, {:.1e} of it; \
         {mid_spool} samples with 0.05 < s < 0.95); p_A/p_P {:.3} … {:.3}, p_atm/p_B {:.3} … \
         {:.3}; {} events",
        worst / largest,
        r_a.0,
        r_a.1,
        r_b.0,
        r_b.1,
        sim.stats.events
    );
    assert!(
        mid_spool >= 20,
        "the spool was seldom between its ends: {mid_spool}"
    );
    assert!(largest > 1e-3);
    assert!(worst <= 1e-13 * largest, "{worst:e} kg/s");
    // A's ratio crossed every interior row (to 0.97), B's 0.3 and 0.55: located events.
    assert!(r_a.1 > 0.97 && r_b.1 > 0.6, "{r_a:?} {r_b:?}");
    assert!(sim.stats.events >= 10, "{}", sim.stats.events);
}
