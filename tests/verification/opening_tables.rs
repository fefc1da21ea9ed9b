//! A directional valve's opening as a table against the spool's travel (`opening_table`): the
//! linear default given as a two-point table is the default, and a 5/2 with an overlapped
//! spool's table is its four paths as ISO 6358 orifices whose openings are that table composed
//! with the spool's ramp, written out by hand as time tables.

use plenum::components::orifice::ISO_RHO0_KG_PER_M3;

use crate::common::{output, repo_path, sim_of};

/// `examples/double_acting` (its 5/2 valve switched by a spool table, a cylinder, flow
/// controls), with and without `opening_table = [[0, 0], [1, 1]]` (the linear law): every
/// output equal at every 10 ms.
#[test]
fn the_linear_default_as_a_two_point_table_is_the_default() {
    let src = std::fs::read_to_string(repo_path("examples/double_acting/model.toml"))
        .expect("the example");
    let valve = "name = \"valve\"";
    assert_eq!(src.matches(valve).count(), 1);
    let tabled = src.replacen(
        valve,
        &format!("{valve}\nopening_table = [[0, 0], [1, 1]]"),
        1,
    );
    let (mut a, mut b) = (sim_of(&src), sim_of(&tabled));
    let vars = plenum::variables::output_variables(&a);
    let (mut wa, mut wb) = (vec![0.0; vars.len()], vec![0.0; vars.len()]);
    let mut worst = (0.0f64, String::new());
    for k in 1..=360 {
        let t = 0.01 * k as f64;
        a.advance_to(t).expect("runs");
        b.advance_to(t).expect("runs");
        plenum::variables::write_outputs(&mut a, &mut wa);
        plenum::variables::write_outputs(&mut b, &mut wb);
        for (v, (x, y)) in vars.iter().zip(wa.iter().zip(&wb)) {
            let d = (x - y).abs();
            if d > worst.0 || (worst.1.is_empty() && d >= worst.0) {
                worst = (d, v.name.clone());
            }
        }
    }
    println!(
        "{} outputs at 360 instants: largest difference {:e} ({}); events {} and {}",
        vars.len(),
        worst.0,
        worst.1,
        a.stats.events,
        b.stats.events
    );
    assert_eq!(worst.0, 0.0);
}

/// A 5/2 whose paths open by the table [[0, 0], [0.5, 0.2], [1, 1]] (an overlapped spool: a
/// fifth of the opening at half travel), its spool ramped 0 → 1 over 20 … 30 ms and back over
/// 60 … 70 ms: p–a and b–eb open as that table of s(t), p–b and a–ea as that table of
/// 1 − s(t), each piecewise linear in time with a knot where s(t) = 0.5 (25 and 65 ms). The
/// valve (its spool table given those knots as breakpoints) and the four orifices take the same
/// steps and agree to round-off.
#[test]
fn an_opening_table_is_four_orifices_with_the_table_in_time() {
    let spool = "[[0.0, 0.0], [0.02, 0.0], [0.03, 1.0], [0.06, 1.0], [0.07, 0.0], [0.1, 0.0]]";
    let towards = "[[0.0, 0.0], [0.02, 0.0], [0.025, 0.2], [0.03, 1.0], [0.06, 1.0], \
                   [0.065, 0.2], [0.07, 0.0], [0.1, 0.0]]";
    let away = "[[0.0, 1.0], [0.02, 1.0], [0.025, 0.2], [0.03, 0.0], [0.06, 0.0], \
                [0.065, 0.2], [0.07, 1.0], [0.1, 1.0]]";
    let circuit = |parts: &str| {
        format!(
            r#"
[model]
name = "opening_table"
[gas]
species = "air"
[solver]
method = "auto"
rtol = 1e-9
t_end = 0.1
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
{parts}
"#
        )
    };
    let valve = format!(
        "[[directional_valve]]\nname = \"v\"\np = \"P\"\na = \"A\"\nb = \"B\"\nea = \"EA\"\n\
         eb = \"EB\"\nposition = {{ table = {spool} }}\nnominal_flow = \"600 Nl/min\"\n\
         critical_pressure_ratio = 0.3\nopening_table = [[0, 0], [0.5, 0.2], [1, 1]]\n"
    );
    let c = plenum::components::rating::sonic_conductance_from_nominal_flow(
        600e-3 / 60.0 * ISO_RHO0_KG_PER_M3,
        0.3,
    );
    let orifice = |name: &str, from: &str, to: &str, table: &str| {
        format!(
            "[[orifice]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\n\
             sonic_conductance = {c:e}\ncritical_pressure_ratio = 0.3\n\
             opening = {{ table = {table} }}\n"
        )
    };
    let orifices = [
        orifice("pa", "P", "A", towards),
        orifice("pb", "P", "B", away),
        orifice("aea", "A", "EA", away),
        orifice("beb", "B", "EB", towards),
    ]
    .concat();
    let (mut v, mut o) = (sim_of(&circuit(&valve)), sim_of(&circuit(&orifices)));
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
    }
    println!(
        "p_A swings {:.4e} … {:.4e} Pa; largest relative difference {worst:.1e}; steps {} \
         (valve) and {} (orifices)",
        swing.0, swing.1, v.stats.steps, o.stats.steps
    );
    assert!(swing.1 > 6.5e5 && swing.0 < 1.5e5, "{swing:?}");
    // The valve composes two interpolations (the spool's ramp, then the opening table), the
    // orifices read one: the openings differ in their last bits, not in their steps.
    assert!(worst < 1e-10, "{worst:e}");
    assert_eq!(v.stats.steps, o.stats.steps);
}
