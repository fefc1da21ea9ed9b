//! The pneumatics engineer's parts against closed forms and second formulations: a pressure
//! regulator's held pressure and its droop with flow, a relieving regulator's relief pressure,
//! and a fully open regulator equal to the ISO 6358 orifice of its flow path.

use plenum::components::orifice::{ISO_RHO0_KG_PER_M3, ISO_T0_K};

use crate::common::{output, sim_of};

/// Supply at 10 bar (T₀), an outlet chamber of 0.1 L behind a regulator set to 4 bar gauge over
/// 1 bar (C = 1e-8 m³/(s·Pa), b = 0.6, range 0.5 bar), and `extra` (a draw or a feed).
fn regulator_model(extra: &str, exhaust: &str) -> String {
    format!(
        r#"
[model]
name = "regulator"
[gas]
species = "air"
[solver]
method = "auto"
t_end = 30.0
rtol = 1e-11
atol = 1e-16
[[chamber]]
name = "out"
volume = "0.1 L"
pressure = 1e5
temperature = {ISO_T0_K}
[[reservoir]]
name = "supply"
pressure = "10 bar"
temperature = {ISO_T0_K}
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = {ISO_T0_K}
[[regulator]]
name = "reg"
from = "supply"
to = "out"
{exhaust}
set_pressure = "4 bar"
ambient_pressure = 1e5
regulation_range = "0.5 bar"
sonic_conductance = 1e-8
critical_pressure_ratio = 0.6
{extra}
"#
    )
}

const SET_PA: f64 = 5e5;
const RANGE_PA: f64 = 0.5e5;
const C: f64 = 1e-8;

/// Held pressure at a steady draw ṁ through a choked main seat (p_o/p_s < b): x·C·p_s·ρ₀ = ṁ
/// with x = (p_set − p_o)/Δp_r, so p_o = p_set − Δp_r·ṁ/(C·p_s·ρ₀): the set point with no draw,
/// and a droop linear in the flow.
#[test]
fn regulator_holds_its_set_point_and_droops_as_the_closed_form() {
    let p_s = 10e5;
    let full_flow = C * p_s * ISO_RHO0_KG_PER_M3;
    let mut held = Vec::new();
    for draw in [0.0, 1e-3, 3e-3] {
        let extra = if draw > 0.0 {
            format!("[[mass_flow]]\nname = \"draw\"\nfrom = \"out\"\nto = \"atm\"\nrate = {draw}\n")
        } else {
            String::new()
        };
        let mut sim = sim_of(&regulator_model(&extra, ""));
        sim.advance_to(30.0).expect("runs");
        let p = output(&mut sim, "out.p");
        let mdot = output(&mut sim, "reg.mdot");
        let x = output(&mut sim, "reg.open_fraction");
        let exact = SET_PA - RANGE_PA * draw / full_flow;
        let rel = (p / exact - 1.0).abs();
        println!(
            "draw {draw:e} kg/s: p_out = {p:.9e} Pa (closed form {exact:.9e}, rel. {rel:.1e}), \
             ṁ_in = {mdot:.9e}, opening {x:.9}, p_out/p_s = {:.3}",
            p / p_s
        );
        assert!(p / p_s < 0.6, "choked");
        assert!(rel < 1e-9, "draw {draw}: {rel:e}");
        assert!((mdot - draw).abs() < 1e-9 * full_flow, "ṁ_in = {mdot}");
        held.push(p);
    }
    // The droop per unit flow, Δp_r/(C·p_s·ρ₀).
    let droop = (held[1] - held[2]) / 2e-3;
    let exact = RANGE_PA / full_flow;
    println!("droop {droop:.9e} Pa/(kg/s) (closed form {exact:.9e})");
    assert!((droop / exact - 1.0).abs() < 1e-6);
}

/// A relieving regulator fed ṁ into its outlet vents it through the choked relief seat:
/// (p_o − p_set)/Δp_r·C·p_o·ρ₀ = ṁ (T_o = T₀), so p_o = (p_set + sqrt(p_set² + 4·ṁ·Δp_r/(C·ρ₀)))/2,
/// with the main seat shut.
#[test]
fn relieving_regulator_vents_to_the_closed_form_pressure() {
    let feed = 2e-3;
    let extra =
        format!("[[mass_flow]]\nname = \"feed\"\nfrom = \"supply\"\nto = \"out\"\nrate = {feed}\n");
    let mut sim = sim_of(&regulator_model(&extra, "exhaust = \"atm\""));
    sim.advance_to(30.0).expect("runs");
    let p = output(&mut sim, "out.p");
    let main = output(&mut sim, "reg.mdot");
    let relief = output(&mut sim, "reg.relief_mdot");
    let xr = output(&mut sim, "reg.relief_open_fraction");
    let k = feed * RANGE_PA / (C * ISO_RHO0_KG_PER_M3);
    let exact = 0.5 * (SET_PA + (SET_PA * SET_PA + 4.0 * k).sqrt());
    let rel = (p / exact - 1.0).abs();
    println!(
        "relief: p_out = {p:.9e} Pa (closed form {exact:.9e}, rel. {rel:.1e}), ṁ_relief = \
         {relief:.9e} (fed {feed:e}), relief opening {xr:.9} (closed form {:.9}), ṁ_in = {main:e}",
        (exact - SET_PA) / RANGE_PA
    );
    assert_eq!(main, 0.0);
    assert!(rel < 1e-9, "{rel:e}");
    assert!((relief / feed - 1.0).abs() < 1e-9);
    // Without the exhaust the same regulator does not relieve: the outlet climbs past it.
    let mut sim = sim_of(&regulator_model(&extra, ""));
    sim.advance_to(30.0).expect("runs");
    let p_shut = output(&mut sim, "out.p");
    println!("not relieving: p_out = {p_shut:.6e} Pa after 30 s");
    assert!(p_shut > exact + 1e5);
}

/// Wide open (the set point far above the supply) the regulator is the ISO 6358 orifice of its
/// flow path: filling the outlet from the supply, the two runs agree to round-off.
#[test]
fn open_regulator_is_the_orifice_of_its_flow_path() {
    let regulator = regulator_model("", "").replace("\"4 bar\"", "\"100 bar\"");
    let orifice = regulator_model("", "").replace(
        "[[regulator]]\nname = \"reg\"\nfrom = \"supply\"\nto = \"out\"\n\nset_pressure = \"4 bar\"\n\
         ambient_pressure = 1e5\nregulation_range = \"0.5 bar\"\n",
        "[[orifice]]\nname = \"reg\"\nfrom = \"supply\"\nto = \"out\"\n",
    );
    assert!(orifice.contains("[[orifice]]"), "{orifice}");
    let (mut a, mut b) = (sim_of(&regulator), sim_of(&orifice));
    let mut worst: f64 = 0.0;
    for k in 1..=20 {
        let t = 2e-3 * k as f64;
        a.advance_to(t).expect("runs");
        b.advance_to(t).expect("runs");
        let (pa, pb) = (output(&mut a, "out.p"), output(&mut b, "out.p"));
        let (ma, mb) = (output(&mut a, "reg.mdot"), output(&mut b, "reg.mdot"));
        worst = worst
            .max((pa / pb - 1.0).abs())
            .max((ma - mb).abs() / mb.abs().max(1e-12));
        if k % 5 == 0 {
            println!(
                "t = {t:.3} s: regulator p = {pa:.12e}, orifice p = {pb:.12e}, ṁ {ma:.6e} / {mb:.6e}"
            );
        }
    }
    println!("largest relative difference {worst:.1e}");
    // The flow path's choked and laminar ratios are events as the orifice's are, so both runs
    // take the same steps.
    assert!(worst < 1e-12, "{worst:e}");
}

/// A cylinder's two sides A and B (0.1 L each) behind a valve between a 7 bar supply and two
/// exhausts; `valve` is the valve's text (or its four orifices').
fn valve_circuit(valve: &str) -> String {
    format!(
        r#"
[model]
name = "valve"
[gas]
species = "air"
[solver]
method = "auto"
t_end = 0.1
rtol = 1e-10
atol = 1e-15
[[chamber]]
name = "A"
volume = "0.1 L"
pressure = "1 bar"
temperature = 293.15
[[chamber]]
name = "B"
volume = "0.1 L"
pressure = "7 bar"
temperature = 293.15
[[reservoir]]
name = "P"
pressure = "7 bar"
temperature = 293.15
[[reservoir]]
name = "EA"
pressure = "1 bar"
temperature = 293.15
[[reservoir]]
name = "EB"
pressure = "1 bar"
temperature = 293.15
{valve}
"#
    )
}

/// Spool at rest, switched over 10 ms (the response time as a ramp) at 20 ms, back at 60 ms.
const SPOOL: &str = "[[0.0, 0.0], [0.02, 0.0], [0.03, 1.0], [0.06, 1.0], [0.07, 0.0], [0.1, 0.0]]";
const SPOOL_REST: &str =
    "[[0.0, 1.0], [0.02, 1.0], [0.03, 0.0], [0.06, 0.0], [0.07, 1.0], [0.1, 1.0]]";

/// A 5/2 valve is its four paths as orifices of its rating switched the same way: p–a and b–eb
/// open with the spool, p–b and a–ea with its complement; the two runs agree to round-off. Rated
/// by Q_N and b (the orifices by the C it converts to), and by a catalogue curve (the orifices
/// by the same curve, whose rows every path's ratio crosses as A and B fill and exhaust).
#[test]
fn five_two_valve_is_four_orifices_switched_the_same_way() {
    let c = plenum::components::rating::sonic_conductance_from_nominal_flow(
        600e-3 / 60.0 * ISO_RHO0_KG_PER_M3,
        0.3,
    );
    five_two_against_four_orifices(
        "nominal_flow = \"600 Nl/min\"\ncritical_pressure_ratio = 0.3\n",
        &format!("sonic_conductance = {c:e}\ncritical_pressure_ratio = 0.3\n"),
    );
    let curve = "flow_table = [[0, \"1500 Nl/min\"], [0.3, \"1500 Nl/min\"], \
                 [0.55, \"1350 Nl/min\"], [0.75, \"1050 Nl/min\"], [0.9, \"650 Nl/min\"], \
                 [0.97, \"275 Nl/min\"], [1, 0]]\nflow_table_inlet_pressure = \"7 bar\"\n";
    five_two_against_four_orifices(curve, curve);
}

/// The 5/2 valve rated by `valve_rating` against its four paths as orifices rated by
/// `orifice_rating`, in [`valve_circuit`] with the spool [`SPOOL`].
fn five_two_against_four_orifices(valve_rating: &str, orifice_rating: &str) {
    println!("valve rated by {valve_rating:?}");
    let valve = format!(
        "[[directional_valve]]\nname = \"v\"\np = \"P\"\na = \"A\"\nb = \"B\"\nea = \"EA\"\n\
         eb = \"EB\"\nposition = {{ table = {SPOOL} }}\n{valve_rating}"
    );
    let orifice = |name: &str, from: &str, to: &str, table: &str| {
        format!(
            "[[orifice]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\n\
             {orifice_rating}opening = {{ table = {table} }}\n"
        )
    };
    let orifices = [
        orifice("pa", "P", "A", SPOOL),
        orifice("pb", "P", "B", SPOOL_REST),
        orifice("aea", "A", "EA", SPOOL_REST),
        orifice("beb", "B", "EB", SPOOL),
    ]
    .concat();
    let (mut v, mut o) = (
        sim_of(&valve_circuit(&valve)),
        sim_of(&valve_circuit(&orifices)),
    );
    let mut worst: f64 = 0.0;
    let mut swing = (f64::MAX, 0.0f64);
    for k in 1..=50 {
        let t = 2e-3 * k as f64;
        v.advance_to(t).expect("runs");
        o.advance_to(t).expect("runs");
        for node in ["A", "B"] {
            let (pv, po) = (
                output(&mut v, &format!("{node}.p")),
                output(&mut o, &format!("{node}.p")),
            );
            worst = worst.max((pv / po - 1.0).abs());
            if node == "A" {
                swing = (swing.0.min(pv), swing.1.max(pv));
            }
        }
        let a_flow = output(&mut v, "v.a_mdot");
        let by_orifices = output(&mut o, "pa.mdot") - output(&mut o, "aea.mdot");
        worst = worst.max((a_flow - by_orifices).abs() / 1e-2);
        if k % 10 == 0 {
            println!(
                "t = {t:.3} s: valve p_A = {:.12e}, orifices p_A = {:.12e}; ṁ_A {a_flow:.6e} / \
                 {by_orifices:.6e}",
                output(&mut v, "A.p"),
                output(&mut o, "A.p")
            );
        }
    }
    println!(
        "p_A swings {:.4e} … {:.4e} Pa; largest relative difference {worst:.1e}; events {} \
         (valve) and {} (orifices)",
        swing.0, swing.1, v.stats.events, o.stats.events
    );
    // The valve switched: A filled to near supply, then exhausted.
    assert!(swing.1 > 6.5e5 && swing.0 < 1.5e5, "{swing:?}");
    // Each path's choked and laminar ratios are events as its orifice's are, so both runs
    // take the same steps.
    assert!(worst < 1e-12, "{worst:e}");
}

/// A 5/3 valve's closed centre holds both sides to the bit; its exhausted centre vents both.
#[test]
fn five_three_centres_hold_or_exhaust() {
    let valve = |centre: &str| {
        format!(
            "[[directional_valve]]\nname = \"v\"\np = \"P\"\na = \"A\"\nb = \"B\"\nea = \"EA\"\n\
             eb = \"EB\"\nposition = 0.0\nthree_position = true\n{centre}\
             sonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n"
        )
    };
    let mut closed = sim_of(&valve_circuit(&valve("")));
    // From the states (the output at t = 0 is the file's number, not p(U, V)).
    closed.advance_to(1e-3).expect("runs");
    let start = (output(&mut closed, "A.p"), output(&mut closed, "B.p"));
    closed.advance_to(0.1).expect("runs");
    let (pa, pb) = (output(&mut closed, "A.p"), output(&mut closed, "B.p"));
    println!("closed centre: p_A = {pa:e}, p_B = {pb:e} Pa after 0.1 s (at 1 ms {start:?})");
    assert_eq!(
        (pa.to_bits(), pb.to_bits()),
        (start.0.to_bits(), start.1.to_bits())
    );
    let mut vented = sim_of(&valve_circuit(&valve("centre_exhausted = true\n")));
    vented.advance_to(0.1).expect("runs");
    let (pa, pb) = (output(&mut vented, "A.p"), output(&mut vented, "B.p"));
    println!("exhausted centre: p_A = {pa:e}, p_B = {pb:e} Pa after 0.1 s");
    assert!((pa / 1e5 - 1.0).abs() < 1e-9 && pb < 2.5e5, "{pa} {pb}");
}

/// A closed rigid chamber cooling to ambient: m·c_v·dT/dt = h·A·(T_amb − T), so
/// T(t) = T_amb + (T₀ − T_amb)·exp(−h·A·t/(m·c_v)); its `Q` is h·A·(T_amb − T) and
/// `energy_total` (the gas's energy and what came in from outside) stays constant.
#[test]
fn chamber_cools_to_ambient_as_the_closed_form() {
    let src = r#"
[model]
name = "cooling"
[gas]
R = 287.0
cp = 1004.5
[solver]
method = "auto"
t_end = 40.0
rtol = 1e-11
atol = 1e-16
[[chamber]]
name = "vessel"
volume = "1 L"
pressure = "5 bar"
temperature = 400.0
[[ambient_heat]]
name = "walls"
chamber = "vessel"
heat_transfer_coefficient = "20 W/(m^2*K)"
area = "100 cm^2"
ambient_temperature = "20 degC"
"#;
    let (r, cp) = (287.0, 1004.5);
    let (t0, t_amb, ha) = (400.0, 293.15, 20.0 * 0.01);
    let m = 5e5 * 1e-3 / (r * t0);
    let tau = m * (cp - r) / ha;
    let mut sim = sim_of(src);
    let e0 = output(&mut sim, "energy_total");
    let mut worst: f64 = 0.0;
    for t in [1.0, 5.0, 10.0, 20.0, 40.0] {
        sim.advance_to(t).expect("runs");
        let temp = output(&mut sim, "vessel.T");
        let q = output(&mut sim, "walls.Q");
        let exact = t_amb + (t0 - t_amb) * (-t / tau).exp();
        let rel = (temp / exact - 1.0).abs();
        worst = worst.max(rel);
        let e = output(&mut sim, "energy_total");
        println!(
            "t = {t:>4} s: T = {temp:.10} K (closed form {exact:.10}, rel. {rel:.1e}), \
             Q = {q:.6} W, energy_total drift {:.1e}",
            (e - e0) / e0
        );
        assert!((q - ha * (t_amb - temp)).abs() < 1e-12 * ha * t0, "Q = {q}");
        assert!(((e - e0) / e0).abs() < 1e-9, "energy_total {e} from {e0}");
    }
    println!("τ = m·c_v/(h·A) = {tau:.4} s; largest relative error {worst:.1e}");
    assert!(worst < 1e-8, "{worst:e}");
}

/// A one-way flow control is a throttle and a one-way check orifice in parallel: throttled
/// from A (6 bar) to B, free flow from D (6 bar) back to C; with the needle closing by a table,
/// the runs agree with the two orifices' (on fixed steps: an adaptive method's steps would
/// follow each formulation's round-off, and differ at its tolerance). The throttle rated by C,
/// and by a catalogue curve (the throttle orifice by the same curve).
#[test]
fn flow_control_is_a_throttle_and_a_check_in_parallel() {
    flow_control_against_orifices("sonic_conductance = 2e-9\n");
    flow_control_against_orifices(
        "flow_table = [[0, 1.2e-3], [0.4, 1.2e-3], [0.7, 0.9e-3], [0.9, 0.5e-3], [1, 0]]\n\
         flow_table_inlet_pressure = \"6 bar\"\n",
    );
}

/// [`flow_control_is_a_throttle_and_a_check_in_parallel`] with the throttle rated by
/// `throttle` (the flow control's keys and its throttle orifice's).
fn flow_control_against_orifices(throttle: &str) {
    println!("throttle rated by {throttle:?}");
    let chambers = r#"
[model]
name = "flow_control"
[gas]
species = "air"
[solver]
method = "rk4"
step = 1e-5
t_end = 0.2
[[chamber]]
name = "A"
volume = "0.1 L"
pressure = "6 bar"
temperature = 293.15
[[chamber]]
name = "B"
volume = "0.1 L"
pressure = "1 bar"
temperature = 293.15
[[chamber]]
name = "C"
volume = "0.1 L"
pressure = "1 bar"
temperature = 293.15
[[chamber]]
name = "D"
volume = "0.1 L"
pressure = "6 bar"
temperature = 293.15
"#;
    let needle = "{ table = [[0.0, 1.0], [0.05, 1.0], [0.15, 0.2], [0.2, 0.2]] }";
    let fc = |name: &str, from: &str, to: &str| {
        format!(
            "[[flow_control]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\n\
             {throttle}critical_pressure_ratio = 0.3\nopening = {needle}\n\
             check_sonic_conductance = 6e-9\ncracking_pressure = 2e4\nfull_flow_pressure = 6e4\n"
        )
    };
    // b belongs to the throttle orifice rated by C only.
    let b = if throttle.contains("flow_table") {
        ""
    } else {
        "critical_pressure_ratio = 0.3\n"
    };
    let pair = |name: &str, from: &str, to: &str| {
        format!(
            "[[orifice]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\n\
             {throttle}{b}opening = {needle}\n\
             [[orifice]]\nname = \"{name}_check\"\nfrom = \"{to}\"\nto = \"{from}\"\n\
             sonic_conductance = 6e-9\ncritical_pressure_ratio = 0.3\none_way = true\n\
             cracking_pressure = 2e4\nfull_flow_pressure = 6e4\n"
        )
    };
    let one = format!("{chambers}{}{}", fc("ab", "A", "B"), fc("cd", "C", "D"));
    let two = format!("{chambers}{}{}", pair("ab", "A", "B"), pair("cd", "C", "D"));
    let (mut x, mut y) = (sim_of(&one), sim_of(&two));
    let mut worst: f64 = 0.0;
    for k in 1..=20 {
        let t = 0.01 * k as f64;
        x.advance_to(t).expect("runs");
        y.advance_to(t).expect("runs");
        for node in ["A", "B", "C", "D"] {
            let name = format!("{node}.p");
            worst = worst.max((output(&mut x, &name) / output(&mut y, &name) - 1.0).abs());
        }
        let free = output(&mut x, "cd.check_mdot");
        let free_pair = output(&mut y, "cd_check.mdot");
        worst = worst.max((free - free_pair).abs() / 1e-3);
        if k % 5 == 0 {
            println!(
                "t = {t:.2} s: p_B = {:.9e} / {:.9e} (throttled), p_C = {:.9e} / {:.9e} \
                 (free), check flow {free:.6e} / {free_pair:.6e}",
                output(&mut x, "B.p"),
                output(&mut y, "B.p"),
                output(&mut x, "C.p"),
                output(&mut y, "C.p")
            );
        }
    }
    // The free direction is the faster one.
    let (pb, pc) = (output(&mut x, "B.p"), output(&mut x, "C.p"));
    println!(
        "largest relative difference {worst:.1e}; at 0.2 s p_B = {pb:.4e}, p_C = {pc:.4e}; \
         events {} and {}",
        x.stats.events, y.stats.events
    );
    assert!(pc > pb);
    // The paths' choked and laminar ratios are events as the orifices' are, so both runs cut
    // their steps at the same instants.
    assert!(worst < 1e-12, "{worst:e}");
}

/// An `[[orifice]]` rated by `nominal_flow` passes that flow at the rating's pressures (ISO
/// 6358's Q_N: 6 bar gauge inlet, 1 bar drop: 700 kPa absolute at 293.15 K into 600 kPa),
/// subsonic there (b = 0.3) and choked (b = 0.9); Nl/min are ISO 8778's (ρ₀ = 1.185 kg/m³).
#[test]
fn an_orifice_rated_by_nominal_flow_passes_it_at_the_rating() {
    let q_n = 600e-3 / 60.0 * ISO_RHO0_KG_PER_M3;
    for b in [0.3, 0.9] {
        let src = format!(
            "[model]\nname = \"qn\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.01\n\
             [[reservoir]]\nname = \"in\"\npressure = \"700 kPa\"\ntemperature = 293.15\n\
             [[chamber]]\nname = \"out\"\nvolume = \"1 m^3\"\npressure = \"600 kPa\"\n\
             temperature = 293.15\n\
             [[orifice]]\nname = \"v\"\nfrom = \"in\"\nto = \"out\"\n\
             nominal_flow = \"600 Nl/min\"\ncritical_pressure_ratio = {b}\n"
        );
        let mut sim = sim_of(&src);
        let mdot = output(&mut sim, "v.mdot");
        let rel = (mdot / q_n - 1.0).abs();
        println!("b = {b}: {mdot:.15e} kg/s at the rating, Q_N {q_n:.15e} kg/s: {rel:.1e}");
        assert!(rel < 1e-14, "b = {b}: {mdot} against {q_n}");
    }
}

/// A 5/2 valve's two exhausts into one node: into the atmosphere, the valve with its exhausts
/// into two reservoirs at that pressure (the same run); into one silencer chamber (vented by
/// an orifice), the four orifices it equals into that chamber: `auto` to round-off, `bdf`
/// within its Newton tolerance.
#[test]
fn a_five_two_valve_may_exhaust_both_ports_into_one_node() {
    let valve = |ea: &str, eb: &str| {
        format!(
            "[[directional_valve]]\nname = \"v\"\np = \"P\"\na = \"A\"\nb = \"B\"\n\
             ea = \"{ea}\"\neb = \"{eb}\"\nposition = {{ table = {SPOOL} }}\n\
             sonic_conductance = 2e-8\ncritical_pressure_ratio = 0.3\n"
        )
    };
    let orifice = |name: &str, from: &str, to: &str, table: &str| {
        format!(
            "[[orifice]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\n\
             sonic_conductance = 2e-8\ncritical_pressure_ratio = 0.3\n\
             opening = {{ table = {table} }}\n"
        )
    };
    let silencer = "[[chamber]]\nname = \"S\"\nvolume = \"0.02 L\"\npressure = \"1 bar\"\n\
                    temperature = 293.15\n[[orifice]]\nname = \"vent\"\nfrom = \"S\"\n\
                    to = \"EA\"\nsonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n";
    let four = [
        orifice("pa", "P", "A", SPOOL),
        orifice("pb", "P", "B", SPOOL_REST),
        orifice("aea", "A", "S", SPOOL_REST),
        orifice("beb", "B", "S", SPOOL),
    ]
    .concat();
    for method in ["auto", "bdf"] {
        let circuit = |parts: &str| {
            valve_circuit(parts).replace("method = \"auto\"", &format!("method = \"{method}\""))
        };
        let pairs = [
            (
                "atmosphere",
                circuit(&valve("EA", "EA")),
                circuit(&valve("EA", "EB")),
                ["A", "B"],
            ),
            (
                "silencer",
                circuit(&format!("{}{silencer}", valve("S", "S"))),
                circuit(&format!("{four}{silencer}")),
                ["A", "S"],
            ),
        ];
        for (into, one, peer, nodes) in pairs {
            let (mut one, mut peer) = (sim_of(&one), sim_of(&peer));
            let mut worst: f64 = 0.0;
            let mut swing = (f64::MAX, 0.0f64);
            for k in 1..=50 {
                let t = 2e-3 * k as f64;
                one.advance_to(t).expect("runs");
                peer.advance_to(t).expect("runs");
                for node in nodes {
                    let (p1, p2) = (
                        output(&mut one, &format!("{node}.p")),
                        output(&mut peer, &format!("{node}.p")),
                    );
                    worst = worst.max((p1 / p2 - 1.0).abs());
                }
                let p_s = output(&mut one, &format!("{}.p", nodes[1]));
                swing = (swing.0.min(p_s), swing.1.max(p_s));
            }
            println!(
                "{method}, both exhausts into the {into}: largest relative difference from its \
                 peer {worst:.1e}; p_{} {:.4e} … {:.4e} Pa",
                nodes[1], swing.0, swing.1
            );
            if into == "silencer" {
                // The silencer was blown up by both exhausts in turn.
                assert!(swing.1 > 2e5, "{swing:?}");
            }
            // `bdf` ends each Newton iteration within its tolerance, so the sums' round-off
            // (the valve adds its paths in another order than the network adds orifices) moves
            // its steps by up to that: 1.5e-9 at rtol 1e-10. The Jacobian of one exhaust node
            // is checked exactly in tests/fixtures/models/shared_exhaust.toml.
            let bound = if method == "bdf" { 1e-8 } else { 1e-12 };
            assert!(worst < bound, "{method}, {into}: {worst:e}");
        }
    }
}
