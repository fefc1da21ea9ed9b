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
