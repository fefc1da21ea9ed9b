//! The row at an output time that is a table breakpoint shows the tables' values after it (a
//! step table reads right-continuous), whichever method integrates: the fixed-step methods
//! start the new segment when they land there, the adaptive ones when the reported time
//! reaches the end of the step that stopped there; a master whose clock lands a few ulps past
//! it sees the same values.

use plenum::integrators::METHODS;
use plenum::model::{build_simulation, parse_str};
use plenum::run::solve_keeping_rows;
use plenum::variables::{output_variables, write_outputs};

/// Cantera's linear valve (ṁ = K·(p_from − p_to), docs/equations.md "Valve") from a supply
/// whose pressure steps from 1 to 3 bar at t = 0.05 s into a tank at 1 bar: no flow before the
/// step, K·(3 bar − p_tank) at it.
const K_KG_PER_S_PA: f64 = 1e-9;
const P_AFTER_PA: f64 = 3e5;
const T_STEP_S: f64 = 0.05;

fn model(method: &str) -> plenum::model::LoadedModel {
    let solver = if plenum::integrators::Method::needs_step(method) {
        "step = 1e-4"
    } else {
        "rtol = 1e-8\natol = 1e-14"
    };
    let src = format!(
        r#"
[model]
name = "step"
[gas]
species = "N2"
[solver]
method = "{method}"
{solver}
t_end = 0.1
output_interval = 0.01
[[chamber]]
name = "tank"
volume = 1e-3
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "supply"
pressure = {{ table = [[0.0, 1e5], [{T_STEP_S}, {P_AFTER_PA:e}]], interpolation = "step" }}
temperature = 300.0
[[valve]]
name = "v"
from = "supply"
to = "tank"
coefficient = {K_KG_PER_S_PA:e}
"#
    );
    parse_str(&src, "step.toml", &[]).unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn the_row_at_a_table_breakpoint_shows_the_value_after_it_for_every_method() {
    let mut wrong = Vec::new();
    for (method, _) in METHODS {
        let m = model(method);
        let (rows, solve) = solve_keeping_rows(&m, None).unwrap();
        assert!(solve.failure.is_none(), "{method}: {:?}", solve.failure);
        let names: Vec<String> = output_variables(&solve.sim)
            .into_iter()
            .map(|v| v.name)
            .collect();
        let col = |n: &str| names.iter().position(|x| x == n).unwrap();
        let (c_flow, c_p) = (col("v.mdot"), col("tank.p"));
        let row = rows
            .iter()
            .find(|r| r[0] == T_STEP_S)
            .unwrap_or_else(|| panic!("{method}: no row at {T_STEP_S} s"));
        let before = rows.iter().rfind(|r| r[0] < T_STEP_S).unwrap();
        // The tank is at rest before the step, so its pressure at the step is still 1 bar.
        let want = K_KG_PER_S_PA * (P_AFTER_PA - row[c_p]);
        let rel = (row[c_flow] - want).abs() / want;
        println!(
            "{method:>14}: v.mdot at t = {T_STEP_S} s {:.6e} kg/s, K·(3 bar − p_tank) = {want:.6e} \
             (rel. diff {rel:.1e}); at t = {} s {:.1e} kg/s",
            row[c_flow], before[0], before[c_flow]
        );
        assert!(
            before[c_flow].abs() < 1e-9 * want,
            "{method}: flow before the step"
        );
        if rel > 1e-9 {
            wrong.push(format!("{method} ({:e} kg/s)", row[c_flow]));
        }
        // A master whose clock adds its step lands a few ulps past the breakpoint: the same
        // value (the state is continuous there).
        let mut sim = build_simulation(&m.spec, None).unwrap();
        let past = f64::from_bits(T_STEP_S.to_bits() + 2);
        for t in [0.01, 0.02, 0.03, 0.04, past] {
            sim.advance_to(t).unwrap();
        }
        let mut out = vec![0.0; names.len()];
        write_outputs(&mut sim, &mut out);
        let rel_past = (out[c_flow] - row[c_flow]).abs() / want;
        println!(
            "{:>14}  at t = {past:?} s {:.6e} kg/s (rel. diff {rel_past:.1e})",
            "", out[c_flow]
        );
        assert!(
            rel_past < 1e-9,
            "{method}: {past} s differs from the breakpoint's row"
        );
    }
    assert!(
        wrong.is_empty(),
        "the row at the breakpoint shows the value before it: {wrong:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// An event located on a breakpoint.
//
// The same step of the supply (1 → 3 bar at T_B) while an orifice between two reservoirs, one of
// them a linear ramp with a knot at T_B, reaches one of its switch points exactly there: the
// adaptive step that stops on the breakpoint finds the event at its own end. The ramp's knot
// puts it there by construction: p_ramp(T_B) = 2 bar exactly, so with the atmosphere at 1 bar
// the ISO form of b = 0.5 crosses its choked ratio (p_low/p_high = 0.5) and a check valve of
// cracking pressure 1 bar its cracking point (Δp = 1 bar) at T_B, in exact arithmetic. The new
// segment (the supply at 3 bar) must start there all the same. Binary times keep t + (T_B − t)
// = T_B exact for the step that ends there.
const T_B_S: f64 = 0.0625;
const T_B_END_S: f64 = 0.125;

/// The orifice `probe` from the ramp to the atmosphere: a plain ISO orifice of b = 0.5 (its
/// choked-ratio kink, which only restarts the integrator) or a check valve cracking at 1 bar
/// (a switch of the law, handled as an event).
fn event_on_breakpoint_model(method: &str, probe: &str) -> plenum::model::LoadedModel {
    let solver = if plenum::integrators::Method::needs_step(method) {
        "step = 1.220703125e-4".to_string() // 2^-13 s: lands on T_B
    } else {
        "rtol = 1e-8\natol = 1e-14".to_string()
    };
    let src = format!(
        r#"
[model]
name = "event_on_breakpoint"
[gas]
species = "N2"
[solver]
method = "{method}"
{solver}
t_end = {T_B_END_S}
output_interval = 0.0078125
[[chamber]]
name = "tank"
volume = 1e-3
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "supply"
pressure = {{ table = [[0.0, 1e5], [{T_B_S}, {P_AFTER_PA:e}]], interpolation = "step" }}
temperature = 300.0
[[valve]]
name = "v"
from = "supply"
to = "tank"
coefficient = {K_KG_PER_S_PA:e}
[[reservoir]]
name = "ramp"
pressure = {{ table = [[0.0, 3.5e5], [{T_B_S}, 2e5], [{T_B_END_S}, 1.5e5]] }}
temperature = 300.0
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 300.0
[[orifice]]
name = "probe"
from = "ramp"
to = "atm"
sonic_conductance = 1e-9
{probe}
"#
    );
    parse_str(&src, "event_on_breakpoint.toml", &[]).unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn an_event_located_on_a_breakpoint_still_starts_the_new_segment() {
    let probes = [
        ("choked-ratio kink", "critical_pressure_ratio = 0.5"),
        (
            "check valve cracking",
            "critical_pressure_ratio = 0.3\none_way = true\ncracking_pressure = 1e5\n\
             full_flow_pressure = 2e5",
        ),
    ];
    let mut wrong = Vec::new();
    for (what, probe) in probes {
        for (method, _) in METHODS {
            let m = event_on_breakpoint_model(method, probe);
            let (rows, solve) = solve_keeping_rows(&m, None).unwrap();
            assert!(solve.failure.is_none(), "{method}: {:?}", solve.failure);
            let names: Vec<String> = output_variables(&solve.sim)
                .into_iter()
                .map(|v| v.name)
                .collect();
            let col = |n: &str| names.iter().position(|x| x == n).unwrap();
            let (c_flow, c_p, c_probe) = (col("v.mdot"), col("tank.p"), col("probe.mdot"));
            // Every row from the breakpoint on: the valve's flow is K·(3 bar − p_tank) of that
            // row's own tank pressure (the tank state is continuous, the supply steps).
            let mut worst = 0.0f64;
            let mut n = 0;
            for r in rows.iter().filter(|r| r[0] >= T_B_S) {
                let want = K_KG_PER_S_PA * (P_AFTER_PA - r[c_p]);
                worst = worst.max((r[c_flow] - want).abs() / want);
                n += 1;
            }
            let at = rows.iter().find(|r| r[0] == T_B_S).expect("a row at T_B");
            println!(
                "{what:>20} {method:>14}: {} events; probe.mdot at T_B {:.4e} kg/s; v.mdot at T_B \
                 {:.6e} kg/s; worst rel. diff from K·(3 bar − p_tank) over {n} rows from T_B \
                 {worst:.1e}",
                solve.sim.stats.events, at[c_probe], at[c_flow]
            );
            assert!(n >= 8, "{method}: rows after T_B");
            if worst > 1e-9 {
                wrong.push(format!("{what}, {method} ({worst:.1e})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the segment did not start at a breakpoint an event fell on: {wrong:?}"
    );
}
