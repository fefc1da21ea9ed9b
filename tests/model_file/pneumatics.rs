//! The pneumatic parts' own key errors: a regulator's flow rating (C or Q_N, one of them) and
//! its optional third node, located at the key or the component.

use plenum::model::{ModelError, parse_str};

const BASE: &str = r#"[model]
name = "reg"
[gas]
species = "air"
[solver]
t_end = 0.1
[[chamber]]
name = "out"
volume = "0.1 L"
pressure = 1e5
temperature = 293.15
[[reservoir]]
name = "supply"
pressure = "7 bar"
temperature = 293.15
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
[[regulator]]
name = "reg"
from = "supply"
to = "out"
set_pressure = "4 bar"
regulation_range = "0.3 bar"
critical_pressure_ratio = 0.3
"#;

fn load(extra: &str) -> Result<plenum::model::LoadedModel, Vec<ModelError>> {
    parse_str(&format!("{BASE}{extra}"), "reg.toml", &[])
}

fn one_error(extra: &str) -> ModelError {
    let errs = load(extra).expect_err("refused");
    for e in &errs {
        println!("{e}");
    }
    assert_eq!(errs.len(), 1, "{errs:#?}");
    errs.into_iter().next().unwrap()
}

#[test]
fn a_regulator_is_rated_by_one_of_c_and_q_n() {
    let e = one_error("");
    assert!(
        e.message
            .contains("`sonic_conductance` (C) or `nominal_flow`"),
        "{e}"
    );
    let e = one_error("sonic_conductance = 1e-8\nnominal_flow = \"1000 Nl/min\"\n");
    assert!(e.message.contains("not both"), "{e}");
    let m = load("nominal_flow = \"1000 Nl/min\"\n").expect("valid");
    let q = m.spec.regulator[0].nominal_flow.unwrap();
    println!("nominal_flow = \"1000 Nl/min\" -> {q:e} kg/s");
    assert!((q / (1000e-3 / 60.0 * 1.185) - 1.0).abs() < 1e-15);
    let e = one_error("sonic_conductance = 1e-8\nnominal_flow = \"1000 l/min\"\n");
    assert!(e.message.contains("`l/min ANR`"), "{e}");
}

#[test]
fn a_relieving_regulators_exhaust_is_a_distinct_existing_node() {
    load("sonic_conductance = 1e-8\nexhaust = \"atm\"\n").expect("valid");
    let e = one_error("sonic_conductance = 1e-8\nexhaust = \"vent\"\n");
    assert_eq!(e.key, "regulator.reg.exhaust");
    assert!(e.message.contains("no chamber or reservoir"), "{e}");
    let e = one_error("sonic_conductance = 1e-8\nexhaust = \"out\"\n");
    assert_eq!(e.key, "regulator.reg.exhaust");
    assert!(e.message.contains("the same node as `to`"), "{e}");
}

/// A directional valve's ports make its function: a port set that is none of 2/2, 3/2, 5/2
/// and a 5/3 or centre without its ports are refused, naming the ports.
#[test]
fn a_directional_valves_ports_make_its_function() {
    let valve = |ports: &str| {
        format!(
            "[[chamber]]\nname = \"B\"\nvolume = 1e-4\npressure = 1e5\ntemperature = 293.15\n\
             [[reservoir]]\nname = \"EB\"\npressure = 1e5\ntemperature = 293.15\n\
             [[directional_valve]]\nname = \"v\"\np = \"supply\"\na = \"out\"\n{ports}\
             sonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n"
        )
    };
    let ok = |extra: &str| {
        load(&format!("sonic_conductance = 1e-8\n{}", valve(extra))).expect("valid");
    };
    let bad = |extra: &str, words: &str| {
        let e = one_error(&format!("sonic_conductance = 1e-8\n{}", valve(extra)));
        assert!(e.message.contains(words), "{e} lacks {words}");
    };
    ok("");
    ok("ea = \"atm\"\n");
    ok("b = \"B\"\nea = \"atm\"\neb = \"EB\"\n");
    ok("b = \"B\"\nea = \"atm\"\neb = \"EB\"\nthree_position = true\ncentre_exhausted = true\n");
    bad("b = \"B\"\n", "ports `p`, `a` (2/2)");
    bad("three_position = true\n", "needs the five ports");
    bad(
        "b = \"B\"\nea = \"atm\"\neb = \"EB\"\ncentre_pressurized = true\n",
        "needs `three_position`",
    );
    bad(
        "b = \"B\"\nea = \"atm\"\neb = \"EB\"\nnormally_open = true\n",
        "for a 2/2 or 3/2",
    );
}

/// An orifice's Q_N: instead of C (not with it, nor with `area`), and with a constant b (C is
/// converted from Q_N at b once).
#[test]
fn an_orifice_takes_nominal_flow_instead_of_c_at_a_constant_b() {
    let orifice = |keys: &str| {
        parse_str(
            &format!(
                "[model]\nname = \"o\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
                 [[chamber]]\nname = \"c\"\nvolume = \"1 L\"\npressure = \"5 bar\"\n\
                 temperature = 293.15\n[[reservoir]]\nname = \"atm\"\npressure = 1e5\n\
                 temperature = 293.15\n[[orifice]]\nname = \"o\"\nfrom = \"c\"\nto = \"atm\"\n\
                 {keys}"
            ),
            "o.toml",
            &[],
        )
    };
    let refused = |keys: &str, says: &str| {
        let errs = orifice(keys).expect_err("refused");
        for e in &errs {
            println!("{keys:?}: {e}");
        }
        assert!(
            errs.iter().any(|e| e.to_string().contains(says)),
            "{keys:?}: {errs:#?}"
        );
    };
    let m =
        orifice("nominal_flow = \"300 Nl/min\"\ncritical_pressure_ratio = 0.3\n").expect("valid");
    println!(
        "nominal_flow = \"300 Nl/min\" -> {:e} kg/s",
        m.spec.orifice[0].nominal_flow.unwrap()
    );
    refused(
        "nominal_flow = \"300 Nl/min\"\nsonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n",
        "either `sonic_conductance` (C) or `nominal_flow` (Q_N), not both",
    );
    refused(
        "nominal_flow = \"300 Nl/min\"\narea = 1e-6\n",
        "`nominal_flow` rates the ISO 6358 form",
    );
    refused(
        "nominal_flow = \"300 Nl/min\"\n",
        "needs `critical_pressure_ratio` too",
    );
    refused(
        "nominal_flow = \"300 Nl/min\"\ncritical_pressure_ratio = { table = [[0, 0.3], [1, 0.4]] }\n",
        "`critical_pressure_ratio` must be a number",
    );
    refused(
        "nominal_flow = \"300 l/min\"\ncritical_pressure_ratio = 0.3\n",
        "Nl/min",
    );
}

/// An orifice's catalogue curve (`flow_table`): flows with units, its rated inlet state, and
/// hostile tables refused with a message naming the row.
#[test]
fn an_orifice_flow_table_is_a_valid_curve_or_refused_naming_the_row() {
    let orifice = |keys: &str| {
        parse_str(
            &format!(
                "[model]\nname = \"o\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
                 [[chamber]]\nname = \"c\"\nvolume = \"1 L\"\npressure = \"5 bar\"\n\
                 temperature = 293.15\n[[reservoir]]\nname = \"atm\"\npressure = 1e5\n\
                 temperature = 293.15\n[[orifice]]\nname = \"o\"\nfrom = \"c\"\nto = \"atm\"\n\
                 {keys}"
            ),
            "o.toml",
            &[],
        )
    };
    let refused = |keys: &str, says: &[&str]| {
        let errs = orifice(keys).expect_err("refused");
        for e in &errs {
            println!("{keys:?}: {e}");
        }
        assert!(
            errs.iter()
                .any(|e| says.iter().all(|s| e.to_string().contains(s))),
            "{keys:?} should say {says:?}: {errs:#?}"
        );
    };
    let ok = "flow_table_inlet_pressure = \"7 bar\"\n";
    let m = orifice(&format!(
        "flow_table = [[0, \"600 Nl/min\"], [0.4, \"600 Nl/min\"], [0.9, \"300 Nl/min\"], [1, 0]]\n{ok}"
    ))
    .expect("valid");
    let rows = m.spec.orifice[0].flow_table.clone().unwrap();
    // ISO 8778's ρ₀ = 1.185 kg/m³: 600 Nl/min = 0.01 m³/s · 1.185 kg/m³.
    let want = 600e-3 / 60.0 * 1.185;
    println!("600 Nl/min -> {:e} kg/s (ρ₀·Q: {want:e})", rows[0][1]);
    assert!((rows[0][1] - want).abs() < 1e-15);
    refused(
        &format!("flow_table = [[0, \"600 l/min\"], [1, 0]]\n{ok}"),
        &["flow_table", "Nl/min"],
    );
    refused(
        &format!("flow_table = [[0, 1e-3], [0.8, 5e-4], [0.5, 4e-4], [1, 0]]\n{ok}"),
        &["row 3", "ratios must increase"],
    );
    refused(
        &format!("flow_table = [[0, 1e-3], [0.5, nan], [1, 0]]\n{ok}"),
        &["flow_table[1][1]", "finite"],
    );
    refused(
        &format!("flow_table = [[0, 1e-3], [nan, 5e-4], [1, 0]]\n{ok}"),
        &["flow_table[1][0]", "finite"],
    );
    refused(
        &format!("flow_table = [[0, 1e-3]]\n{ok}"),
        &["at least two rows", "it has 1"],
    );
    refused(
        &format!("flow_table = [[0, 1e-3], [0.5, -1e-4], [1, 0]]\n{ok}"),
        &["flow_table[1][1]", "0 kg/s or more"],
    );
    refused(
        &format!("flow_table = [[0, 1e-3], [0.5, 2e-3], [1, 0]]\n{ok}"),
        &["row 2", "must not increase"],
    );
    refused(
        &format!("flow_table = [[0.2, 1e-3], [1, 0]]\n{ok}"),
        &["row 1", "start at ratio 0"],
    );
    refused(
        &format!("flow_table = [[0, 1e-3], [0.9, 1e-4]]\n{ok}"),
        &["row 2", "end at ratio 1 with flow 0"],
    );
    refused(
        &format!("flow_table = [[0, 1e-3], [1.5, 0]]\n{ok}"),
        &["row 2", "between 0 and 1"],
    );
    refused(
        "flow_table = [[0, 1e-3], [1, 0]]\n",
        &["needs `flow_table_inlet_pressure`"],
    );
    refused(
        &format!("flow_table = [[0, 1e-3], [1, 0]]\nsonic_conductance = 1e-8\n{ok}"),
        &["either `flow_table`", "`sonic_conductance`"],
    );
    refused(
        "area = 1e-6\nflow_table_inlet_pressure = 7e5\n",
        &["`flow_table_inlet_pressure` rates a `flow_table`"],
    );
}

/// A directional valve's `opening_table`: from [0, 0] to travel 1, travels increasing,
/// openings 0 … 1 not decreasing; refused naming the row (or the cell, for its own rule).
#[test]
fn a_directional_valve_opening_table_is_refused_naming_the_row() {
    let valve = |keys: &str| {
        parse_str(
            &format!(
                "[model]\nname = \"v\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
                 [[chamber]]\nname = \"c\"\nvolume = \"1 L\"\npressure = \"1 bar\"\n\
                 temperature = 293.15\n[[reservoir]]\nname = \"s\"\npressure = \"6 bar\"\n\
                 temperature = 293.15\n[[directional_valve]]\nname = \"v\"\np = \"s\"\n\
                 a = \"c\"\nsonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n{keys}"
            ),
            "v.toml",
            &[],
        )
    };
    valve("opening_table = [[0, 0], [0.3, 0], [1, 1]]\n").expect("valid");
    for (keys, says) in [
        (
            "opening_table = [[0, 0]]\n",
            &["at least two rows", "it has 1"][..],
        ),
        (
            "opening_table = [[0, 0], [0.6, 0.5], [0.4, 0.6], [1, 1]]\n",
            &["row 3", "travel must increase"],
        ),
        (
            "opening_table = [[0, 0], [0.5, 0.6], [0.8, 0.4], [1, 1]]\n",
            &["row 3", "must not decrease"],
        ),
        (
            "opening_table = [[0, 0], [0.5, 1.5], [1, 1]]\n",
            &["opening_table[1][1]", "between 0 and 1"],
        ),
        (
            "opening_table = [[0, 0], [nan, 0.5], [1, 1]]\n",
            &["opening_table[1][0]", "finite"],
        ),
        (
            "opening_table = [[0, 0.1], [1, 1]]\n",
            &["row 1", "start at [0, 0]"],
        ),
        (
            "opening_table = [[0, 0], [0.9, 1]]\n",
            &["row 2", "end at travel 1"],
        ),
    ] {
        let errs = valve(keys).expect_err("refused");
        for e in &errs {
            println!("{keys:?}: {e}");
        }
        assert_eq!(errs.len(), 1, "{keys:?}: {errs:#?}");
        assert!(
            says.iter().all(|s| errs[0].to_string().contains(s)),
            "{keys:?} should say {says:?}"
        );
    }
}

/// A directional valve's spool lag `response_time`: 0, negative, NaN, infinite, subnormal and
/// huge values are refused at the key with what it must be; a valid one files the valve as a
/// lagged valve (its spool a state), and a `[[lagged_valve]]` written without one is refused.
#[test]
fn a_hostile_response_time_is_refused_at_the_key() {
    let valve = |keys: &str| {
        parse_str(
            &format!(
                "[model]\nname = \"v\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
                 [[chamber]]\nname = \"c\"\nvolume = \"1 L\"\npressure = \"1 bar\"\n\
                 temperature = 293.15\n[[reservoir]]\nname = \"s\"\npressure = \"6 bar\"\n\
                 temperature = 293.15\n[[directional_valve]]\nname = \"v\"\np = \"s\"\n\
                 a = \"c\"\nsonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n{keys}"
            ),
            "v.toml",
            &[],
        )
    };
    let m = valve("response_time = \"10 ms\"\n").expect("valid");
    assert!(m.spec.directional_valve.is_empty());
    assert_eq!(m.spec.lagged_valve.len(), 1);
    assert_eq!(m.spec.lagged_valve[0].0.response_time, Some(0.01));
    let m = valve("").expect("valid");
    assert_eq!(
        (m.spec.directional_valve.len(), m.spec.lagged_valve.len()),
        (1, 0)
    );
    for (value, says) in [
        (
            "0.0",
            &["directional_valve.v.response_time", "greater than 0 s"][..],
        ),
        (
            "-0.01",
            &["directional_valve.v.response_time", "greater than 0 s"],
        ),
        ("nan", &["directional_valve.v.response_time"]),
        ("inf", &["directional_valve.v.response_time"]),
        (
            "1e-300",
            &[
                "directional_valve.v.response_time",
                "within 1e-9 s … 1e3 s (it is 1e-300 s)",
            ],
        ),
        (
            "1e30",
            &[
                "directional_valve.v.response_time",
                "(it is 1e30 s)",
                "ramp of `position`",
            ],
        ),
        ("\"3 kg\"", &["response_time", "time"]),
    ] {
        let errs = valve(&format!("response_time = {value}\n")).expect_err("refused");
        for e in &errs {
            println!("response_time = {value}: {e}");
        }
        assert_eq!(errs.len(), 1, "{value}: {errs:#?}");
        let text = errs[0].to_string();
        assert!(
            says.iter().all(|s| text.contains(s)),
            "{value}: `{text}` should say {says:?}"
        );
    }
    let direct = parse_str(
        "[model]\nname = \"v\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
         [[chamber]]\nname = \"c\"\nvolume = \"1 L\"\npressure = \"1 bar\"\n\
         temperature = 293.15\n[[reservoir]]\nname = \"s\"\npressure = \"6 bar\"\n\
         temperature = 293.15\n[[lagged_valve]]\nname = \"v\"\np = \"s\"\n\
         a = \"c\"\nsonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n",
        "v.toml",
        &[],
    )
    .expect_err("a lagged valve needs its response time");
    println!("[[lagged_valve]] without response_time: {}", direct[0]);
    assert!(
        direct[0]
            .to_string()
            .contains("missing the spool's `response_time`")
    );
}

/// A check or relief valve's `poppet_table`: Δp strictly increasing (with units per cell),
/// openings from 0 to 1 not decreasing; refused naming the row (or the cell, for its own
/// rule), and with the linear poppet's keys too.
#[test]
fn a_poppet_table_is_refused_naming_the_row() {
    let valve = |keys: &str| {
        parse_str(
            &format!(
                "[model]\nname = \"v\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
                 [[chamber]]\nname = \"c\"\nvolume = \"1 L\"\npressure = \"1 bar\"\n\
                 temperature = 293.15\n[[reservoir]]\nname = \"s\"\npressure = \"6 bar\"\n\
                 temperature = 293.15\n[[orifice]]\nname = \"v\"\nfrom = \"s\"\n\
                 to = \"c\"\nsonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n{keys}"
            ),
            "v.toml",
            &[],
        )
    };
    valve("poppet_table = [[\"1 bar\", 0], [\"1.5 bar\", 0.2], [3e5, 1]]\n").expect("valid");
    for (keys, says) in [
        (
            "poppet_table = [[1e5, 0]]\n",
            &["at least two rows", "it has 1"][..],
        ),
        (
            "poppet_table = [[1e5, 0], [2e5, 0.5], [2e5, 0.6], [3e5, 1]]\n",
            &["row 3", "must increase"],
        ),
        (
            "poppet_table = [[1e5, 0], [2e5, 0.6], [2.5e5, 0.4], [3e5, 1]]\n",
            &["row 3", "must not decrease"],
        ),
        (
            "poppet_table = [[1e5, 0], [2e5, 1.5], [3e5, 1]]\n",
            &["poppet_table[1][1]", "between 0 and 1"],
        ),
        (
            "poppet_table = [[1e5, 0], [nan, 0.5], [3e5, 1]]\n",
            &["poppet_table[1][0]", "finite"],
        ),
        (
            "poppet_table = [[1e5, 0], [inf, 1]]\n",
            &["poppet_table[1][0]", "finite"],
        ),
        (
            "poppet_table = [[\"1 bar\", 0], [\"2 m\", 1]]\n",
            &["poppet_table[1][0]"],
        ),
        (
            "poppet_table = [[1e5, 0.1], [3e5, 1]]\n",
            &["row 1", "start at opening 0"],
        ),
        (
            "poppet_table = [[1e5, 0], [3e5, 0.9]]\n",
            &["row 2", "end at opening 1"],
        ),
        (
            "poppet_table = [[1e5, 0], [3e5, 1]]\ncracking_pressure = 1e5\n\
             full_flow_pressure = 3e5\n",
            &["either `poppet_table`"],
        ),
    ] {
        let errs = valve(keys).expect_err("refused");
        for e in &errs {
            println!("{keys:?}: {e}");
        }
        assert!(
            says.iter().all(|s| errs[0].to_string().contains(s)),
            "{keys:?} should say {says:?}: {errs:#?}"
        );
    }
}

/// A regulator's, a directional valve's (and a lagged valve's) and the logic valves' catalogue
/// curve (`flow_table`), as the orifice's: a valid curve with units, hostile tables refused
/// naming the row (or the cell, for the key's own rule), and exactly one rating, the error for
/// two or none naming the keys, in the same words for every kind (one check, `rating.rs`).
#[test]
fn a_valve_flow_table_is_one_rating_and_refused_naming_the_row() {
    let kinds = [
        (
            "regulator",
            "[[regulator]]\nname = \"v\"\nfrom = \"s\"\nto = \"c\"\nset_pressure = \"4 bar\"\n\
             regulation_range = \"0.3 bar\"\n",
        ),
        (
            "valve",
            "[[directional_valve]]\nname = \"v\"\np = \"s\"\na = \"c\"\n",
        ),
        (
            "valve",
            "[[directional_valve]]\nname = \"v\"\np = \"s\"\na = \"c\"\nresponse_time = 0.01\n",
        ),
        (
            "valve",
            "[[shuttle_valve]]\nname = \"v\"\nx = \"s\"\ny = \"d\"\nout = \"c\"\n",
        ),
        (
            "valve",
            "[[shuttle_valve]]\nname = \"v\"\nx = \"s\"\ny = \"d\"\nout = \"c\"\n\
             two_pressure = true\n",
        ),
        (
            "valve",
            "[[quick_exhaust]]\nname = \"v\"\np = \"s\"\na = \"c\"\nr = \"d\"\n",
        ),
        (
            "valve",
            "[[pilot_check]]\nname = \"v\"\nfrom = \"s\"\nto = \"c\"\npilot = \"d\"\n\
             pilot_ratio = 3.0\nfull_flow_pressure = 5e4\n",
        ),
    ];
    for (kind, head) in kinds {
        let model = |keys: &str| {
            parse_str(
                &format!(
                    "[model]\nname = \"v\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
                     [[chamber]]\nname = \"c\"\nvolume = \"1 L\"\npressure = \"1 bar\"\n\
                     temperature = 293.15\n[[reservoir]]\nname = \"s\"\npressure = \"6 bar\"\n\
                     temperature = 293.15\n[[reservoir]]\nname = \"d\"\n\
                     pressure = \"1 bar\"\ntemperature = 293.15\n{head}{keys}"
                ),
                "v.toml",
                &[],
            )
        };
        let ok = "flow_table_inlet_pressure = \"7 bar\"\n";
        let m = model(&format!(
            "flow_table = [[0, \"600 Nl/min\"], [0.4, \"600 Nl/min\"], [0.9, \"300 Nl/min\"], \
             [1, 0]]\n{ok}"
        ))
        .expect("valid");
        let rows = m
            .spec
            .regulator
            .first()
            .and_then(|r| r.flow_table.clone())
            .or_else(|| m.spec.directional_valve.first()?.flow_table.clone())
            .or_else(|| m.spec.lagged_valve.first()?.0.flow_table.clone())
            .or_else(|| m.spec.shuttle_valve.first()?.flow_table.clone())
            .or_else(|| m.spec.quick_exhaust.first()?.flow_table.clone())
            .or_else(|| m.spec.pilot_check.first()?.flow_table.clone())
            .expect("the curve");
        let want = 600e-3 / 60.0 * 1.185;
        println!(
            "{head:?}: 600 Nl/min -> {:e} kg/s (ρ₀·Q: {want:e})",
            rows[0][1]
        );
        assert!((rows[0][1] - want).abs() < 1e-15);
        for (keys, says) in [
            (
                format!("flow_table = [[0, 1e-3], [0.8, 5e-4], [0.5, 4e-4], [1, 0]]\n{ok}"),
                &["flow_table", "row 3", "ratios must increase"][..],
            ),
            (
                format!("flow_table = [[0, 1e-3], [0.5, 2e-3], [1, 0]]\n{ok}"),
                &["row 2", "must not increase"],
            ),
            (
                format!("flow_table = [[0.2, 1e-3], [1, 0]]\n{ok}"),
                &["row 1", "start at ratio 0"],
            ),
            (
                format!("flow_table = [[0, 1e-3], [0.9, 1e-4]]\n{ok}"),
                &["row 2", "end at ratio 1 with flow 0"],
            ),
            (
                format!("flow_table = [[0, 1e-3], [1.5, 0]]\n{ok}"),
                &["row 2", "between 0 and 1"],
            ),
            (
                format!("flow_table = [[0, 1e-3]]\n{ok}"),
                &["at least two rows", "it has 1"],
            ),
            (
                format!("flow_table = [[0, 1e-3], [0.5, -1e-4], [1, 0]]\n{ok}"),
                &["flow_table[1][1]", "0 kg/s or more"],
            ),
            (
                format!("flow_table = [[0, 1e-3], [0.5, nan], [1, 0]]\n{ok}"),
                &["flow_table[1][1]", "finite"],
            ),
            (
                format!("flow_table = [[0, \"600 l/min\"], [1, 0]]\n{ok}"),
                &["flow_table", "Nl/min"],
            ),
            (
                "flow_table = [[0, 1e-3], [1, 0]]\n".to_string(),
                &["needs `flow_table_inlet_pressure`"],
            ),
            (
                format!("flow_table = [[0, 1e-3], [1, 0]]\nsonic_conductance = 1e-8\n{ok}"),
                &["either `flow_table`", "`sonic_conductance`", "not both"],
            ),
            (
                format!("flow_table = [[0, 1e-3], [1, 0]]\nnominal_flow = \"600 Nl/min\"\n{ok}"),
                &["either `flow_table`", "`nominal_flow`", "not both"],
            ),
            (
                format!("flow_table = [[0, 1e-3], [1, 0]]\ncritical_pressure_ratio = 0.3\n{ok}"),
                &[
                    "either `flow_table`",
                    "`critical_pressure_ratio`",
                    "not both",
                ],
            ),
            (
                "sonic_conductance = 1e-8\ncritical_pressure_ratio = 0.3\n\
                 flow_table_inlet_temperature = 300.0\n"
                    .to_string(),
                &["`flow_table_inlet_temperature` rates a `flow_table`"],
            ),
            (
                "sonic_conductance = 1e-8\n".to_string(),
                &[
                    "rated by `sonic_conductance`",
                    "needs `critical_pressure_ratio`",
                ],
            ),
            (
                "critical_pressure_ratio = 0.3\n".to_string(),
                &[
                    &format!("missing the {kind}'s flow rating"),
                    "`sonic_conductance` (C)",
                    "`nominal_flow` (Q_N",
                    "`flow_table`",
                ],
            ),
            (
                String::new(),
                &[&format!("missing the {kind}'s flow rating")],
            ),
        ] {
            let errs = model(&keys).expect_err("refused");
            for e in &errs {
                println!("{keys:?}: {e}");
            }
            assert_eq!(errs.len(), 1, "{keys:?}: {errs:#?}");
            assert!(
                says.iter().all(|s| errs[0].to_string().contains(s)),
                "{keys:?} should say {says:?}"
            );
        }
    }
}

/// A flow control's throttle is rated by C or by a curve (its b is the check's either way):
/// both or neither refused naming the keys, a bad curve naming its row.
#[test]
fn a_flow_controls_throttle_is_rated_by_c_or_a_curve() {
    let model = |keys: &str| {
        parse_str(
            &format!(
                "[model]\nname = \"f\"\n[gas]\nspecies = \"air\"\n[solver]\nt_end = 0.1\n\
                 [[chamber]]\nname = \"c\"\nvolume = \"1 L\"\npressure = \"1 bar\"\n\
                 temperature = 293.15\n[[reservoir]]\nname = \"s\"\npressure = \"6 bar\"\n\
                 temperature = 293.15\n[[flow_control]]\nname = \"f\"\nfrom = \"s\"\n\
                 to = \"c\"\ncritical_pressure_ratio = 0.3\ncheck_sonic_conductance = 6e-9\n\
                 full_flow_pressure = 6e4\n{keys}"
            ),
            "f.toml",
            &[],
        )
    };
    let ok = "flow_table_inlet_pressure = \"6 bar\"\n";
    model("sonic_conductance = 2e-9\n").expect("valid");
    model(&format!(
        "flow_table = [[0, \"60 Nl/min\"], [0.5, \"50 Nl/min\"], [1, 0]]\n{ok}"
    ))
    .expect("valid");
    for (keys, says) in [
        (
            format!("flow_table = [[0, 1e-3], [1, 0]]\nsonic_conductance = 2e-9\n{ok}"),
            &["either `flow_table`", "`sonic_conductance`", "not both"][..],
        ),
        (
            String::new(),
            &[
                "flow control's throttle rating",
                "`sonic_conductance`",
                "`flow_table`",
            ],
        ),
        (
            format!("flow_table = [[0, 1e-3], [0.6, 5e-4], [0.4, 4e-4], [1, 0]]\n{ok}"),
            &["flow_table", "row 3", "ratios must increase"],
        ),
        (
            "flow_table = [[0, 1e-3], [1, 0]]\n".to_string(),
            &["flow control with `flow_table` needs `flow_table_inlet_pressure`"],
        ),
        (
            format!("sonic_conductance = 2e-9\n{ok}"),
            &["`flow_table_inlet_pressure` rates a `flow_table`"],
        ),
    ] {
        let errs = model(&keys).expect_err("refused");
        for e in &errs {
            println!("{keys:?}: {e}");
        }
        assert_eq!(errs.len(), 1, "{keys:?}: {errs:#?}");
        assert!(
            says.iter().all(|s| errs[0].to_string().contains(s)),
            "{keys:?} should say {says:?}"
        );
    }
}
