//! The wording of model-file and `--set` errors, as `plenum check` prints them, is reviewed
//! like code: each case's stderr and exit code is an insta snapshot in `snapshots/`.
//! The model is copied into a temporary directory and named by a relative path, so the
//! snapshots hold no absolute path. `cargo insta review` (or `INSTA_UPDATE=always`) updates them.

use std::path::PathBuf;
use std::process::Command;

const BASE: &str = include_str!("../fixtures/models/all_kinds.toml");

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("plenum-errors-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `BASE` with the one occurrence of `old` replaced by `new`.
fn edit(old: &str, new: &str) -> String {
    assert_eq!(BASE.matches(old).count(), 1, "`{old}` must be unique");
    BASE.replacen(old, new, 1)
}

/// `plenum check model.toml [--set ...]` in a directory of its own (`tag` is unique across the
/// tests, which run in parallel) holding `text` as `model.toml`.
fn check(tag: &str, text: &str, set: &[&str]) -> String {
    let dir = temp_dir(tag);
    std::fs::write(dir.join("model.toml"), text).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plenum"));
    cmd.current_dir(&dir).args(["check", "model.toml"]);
    for s in set {
        cmd.args(["--set", s]);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let report = format!("exit code {:?}\n{stderr}", out.status.code());
    println!("--- {tag}\n{report}");
    std::fs::remove_dir_all(&dir).ok();
    report
}

#[test]
fn the_unedited_fixture_is_valid() {
    let report = check("valid", BASE, &[]);
    assert!(report.starts_with("exit code Some(0)"), "{report}");
}

#[test]
fn model_file_errors() {
    let cases: [(&str, String); 12] = [
        ("bad_toml", edit("name = \"tank\"", "name = \"tank")),
        ("unknown_key", edit("volume = 1e-3", "volum = 1e-3")),
        ("wrong_type", edit("pressure = 5e5", "pressure = \"5 m\"")),
        ("missing_key", edit("mass = 0.002\n", "")),
        ("unknown_node", edit("to = \"barrel\"", "to = \"barrle\"")),
        ("negative_area", edit("area = 1e-5", "area = -1e-5")),
        (
            "bad_table",
            edit("[[0.0, 2e5], [0.005, 3e5]]", "[[0.005, 2e5], [0.0, 3e5]]"),
        ),
        (
            "unknown_method",
            edit("method = \"rk4\"", "method = \"rk5\""),
        ),
        (
            "duplicate_name",
            edit("name = \"barrel\"", "name = \"tank\""),
        ),
        ("unknown_kind", format!("{BASE}\n[[pump]]\nname = \"p\"\n")),
        ("nan_value", edit("volume = 1e-3", "volume = nan")),
        ("empty_file", String::new()),
    ];
    for (name, text) in &cases {
        let tag = format!("model_{name}");
        insta::assert_snapshot!(tag.clone(), check(&tag, text, &[]));
    }
}

/// The logic valves' ratings are checked by the one check of every valve (`rating.rs`): two
/// ratings, none, a curve with an ISO key or a bad row or without its inlet pressure, and a
/// quick-exhaust valve's exhaust C beside a curve, its exhaust curve without a curve of the
/// path p–a or with a bad row, each refused naming the keys.
#[test]
fn logic_valve_rating_errors() {
    let valves = "\n[[shuttle_valve]]\nname = \"or\"\nx = \"tank\"\ny = \"supply\"\nout = \"atm\"\n\
                  sonic_conductance = 1e-9\nnominal_flow = \"50 Nl/min\"\n\
                  critical_pressure_ratio = 0.3\n\
                  [[shuttle_valve]]\nname = \"and\"\nx = \"tank\"\ny = \"supply\"\nout = \"atm\"\n\
                  two_pressure = true\nflow_table = [[0, 1e-3], [0.6, 2e-3], [1, 0]]\n\
                  flow_table_inlet_pressure = \"7 bar\"\ncritical_pressure_ratio = 0.3\n\
                  [[quick_exhaust]]\nname = \"qev\"\np = \"supply\"\na = \"tank\"\nr = \"atm\"\n\
                  critical_pressure_ratio = 0.3\n\
                  [[quick_exhaust]]\nname = \"qev_curve\"\np = \"supply\"\na = \"barrel\"\n\
                  r = \"atm\"\nflow_table = [[0, \"300 Nl/min\"], [1, 0]]\n\
                  flow_table_inlet_pressure = \"7 bar\"\nexhaust_sonic_conductance = 2e-9\n\
                  [[quick_exhaust]]\nname = \"qev_own\"\np = \"supply\"\na = \"tank\"\n\
                  r = \"atm\"\nsonic_conductance = 1e-9\ncritical_pressure_ratio = 0.3\n\
                  exhaust_flow_table = [[0, \"300 Nl/min\"], [1, 0]]\n\
                  [[quick_exhaust]]\nname = \"qev_rising\"\np = \"supply\"\na = \"tank\"\n\
                  r = \"atm\"\nflow_table = [[0, \"300 Nl/min\"], [1, 0]]\n\
                  flow_table_inlet_pressure = \"7 bar\"\n\
                  exhaust_flow_table = [[0, \"300 Nl/min\"], [0.5, \"400 Nl/min\"], [1, 0]]\n\
                  [[pilot_check]]\nname = \"pc\"\nfrom = \"supply\"\nto = \"tank\"\npilot = \"atm\"\n\
                  pilot_ratio = 3.0\nfull_flow_pressure = 5e4\nflow_table = [[0, 1e-3], [0.9, 1e-4]]\n\
                  [[pilot_check]]\nname = \"pc_iso\"\nfrom = \"supply\"\nto = \"barrel\"\n\
                  pilot = \"atm\"\npilot_ratio = 3.0\nfull_flow_pressure = 5e4\n\
                  sonic_conductance = 1e-9\nflow_table_inlet_temperature = 300.0\n";
    let tag = "model_logic_valve_ratings";
    insta::assert_snapshot!(tag, check(tag, &format!("{BASE}{valves}"), &[]));
}

#[test]
fn set_errors() {
    let cases: [(&str, &str); 7] = [
        ("unknown_component", "nozle.area=1e-5"),
        ("unknown_key", "nozzle.aera=1e-5"),
        ("not_a_number", "nozzle.area=abc"),
        ("nan", "nozzle.area=nan"),
        ("negative", "nozzle.area=-1e-5"),
        ("no_equals_sign", "nozzle.area"),
        ("unknown_section", "solverr.step=1e-6"),
    ];
    for (name, set) in cases {
        let tag = format!("set_{name}");
        insta::assert_snapshot!(tag.clone(), check(&tag, BASE, &[set]));
    }
}
