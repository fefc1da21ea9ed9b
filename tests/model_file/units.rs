//! Values with units: every shipped model rewritten with units runs bit-identically to its SI
//! version (the conversion is exact by construction: the rewritten number is the same decimal
//! with its point moved); a unit of the wrong dimension is a located error; every plausibility
//! warning fires on a model built to trip it and never on the shipped models or the examples.

use std::path::{Path, PathBuf};
use std::process::Command;

use plenum::components::keys::{Form, message_unit};
use plenum::model::{ModelError, parse_str};
use plenum::units::Unit;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `v` as the same decimal number times 10^-`shift` (`v` = 101325, shift 5: "1.01325"): the
/// shortest round-trip digits of `v` with the point moved, so that the text with 10^shift
/// applied is exactly `v`'s decimal, which parses back to `v`.
fn shifted(v: f64, shift: i32) -> String {
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    format!("{mantissa}e{}", exp - shift)
}

/// The unit a rewritten value of `unit` is written in, with its power of ten (`None`: left SI).
fn unit_for(unit: &Unit) -> Option<(&'static str, i32)> {
    let table: [(Unit, &str, i32); 8] = [
        (Unit::pressure(), "bar", 5),
        (Unit::volume(), "L", -3),
        (Unit::area(), "mm^2", -6),
        (Unit::length(), "mm", -3),
        (Unit::time(), "ms", -3),
        (Unit::mass(), "g", -3),
        (Unit::mass_rate(), "g/s", -3),
        (Unit::sonic_conductance(), "dm^3/(s*bar)", -8),
    ];
    table
        .into_iter()
        .find(|(u, _, _)| u == unit)
        .map(|(_, s, e)| (s, e))
}

/// A number of `unit` as a string with a unit: degC for temperatures where that is exact,
/// else the table's unit, else the SI symbol written out.
fn with_unit(v: f64, unit: &Unit, n_rewritten: &mut usize) -> toml_edit::Value {
    *n_rewritten += 1;
    if *unit == Unit::temperature() {
        let c = v - 273.15;
        if c + 273.15 == v {
            return format!("{c} degC").into();
        }
        return format!("{v} K").into();
    }
    match unit_for(unit) {
        Some((symbol, e)) => format!("{} {symbol}", shifted(v, e)).into(),
        None if unit.symbol == "1" => {
            *n_rewritten -= 1;
            v.into()
        }
        None => format!("{v:e}{}", message_unit(unit)).into(),
    }
}

fn number(item: &toml_edit::Value) -> Option<f64> {
    item.as_float()
        .or_else(|| item.as_integer().map(|i| i as f64))
}

/// The model text with every number of a component key, table row and solver time written
/// with a unit; the count of values rewritten.
fn rewrite(text: &str) -> (String, usize) {
    let mut doc: toml_edit::DocumentMut = text.parse().expect("a shipped model is TOML");
    let mut n = 0;
    let time = Unit::time();
    if let Some(solver) = doc.get_mut("solver").and_then(|s| s.as_table_like_mut()) {
        for k in [
            "step",
            "t_end",
            "output_interval",
            "max_step",
            "initial_step",
        ] {
            if let Some(v) = solver.get(k).and_then(|v| v.as_value()).and_then(number) {
                solver.insert(k, toml_edit::value(with_unit(v, &time, &mut n)));
            }
        }
    }
    let kinds: Vec<String> = doc.iter().map(|(k, _)| k.to_string()).collect();
    for kind_name in kinds {
        let Some(kind) = plenum::components::kind(&kind_name) else {
            continue;
        };
        let Some(items) = doc
            .get_mut(&kind_name)
            .and_then(|i| i.as_array_of_tables_mut())
        else {
            continue;
        };
        for item in items.iter_mut() {
            for k in kind.keys.iter().filter(|k| k.is_numeric()) {
                let unit = k.unit();
                let Some(value) = item.get_mut(k.name).and_then(|v| v.as_value_mut()) else {
                    continue;
                };
                if let Some(v) = number(value) {
                    *value = with_unit(v, &unit, &mut n);
                } else if let Some(t) = value.as_inline_table_mut()
                    && k.form != Form::Number
                    && let Some(rows) = t.get_mut("table").and_then(|r| r.as_array_mut())
                {
                    for row in rows.iter_mut() {
                        let Some(row) = row.as_array_mut() else {
                            continue;
                        };
                        let (Some(ts), Some(v)) =
                            (row.get(0).and_then(number), row.get(1).and_then(number))
                        else {
                            continue;
                        };
                        let mut new = toml_edit::Array::new();
                        new.push(with_unit(ts, &time, &mut n));
                        new.push(with_unit(v, &unit, &mut n));
                        *row = new;
                    }
                }
            }
        }
    }
    (doc.to_string(), n)
}

fn run_csv(model: &Path, csv: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_plenum"))
        .arg("run")
        .arg(model)
        .arg("--csv")
        .arg(csv)
        .arg("--quiet")
        .output()
        .expect("plenum runs");
    assert!(
        out.status.success(),
        "{}: {}",
        model.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(csv).expect("the CSV was written")
}

#[test]
fn shipped_models_rewritten_with_units_run_bit_identically() {
    let dir = std::env::temp_dir().join(format!("plenum-units-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut models: Vec<PathBuf> = std::fs::read_dir(root().join("models"))
        .expect("models/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    models.sort();
    assert!(models.len() >= 3, "{models:?}");
    for model in &models {
        let text = std::fs::read_to_string(model).expect("readable");
        let (with_units, n) = rewrite(&text);
        let stem = model.file_stem().and_then(|s| s.to_str()).unwrap_or("m");
        let rewritten = dir.join(format!("{stem}.units.toml"));
        std::fs::write(&rewritten, &with_units).expect("written");
        // The parsed models are equal value for value (f64 ==, and so bit for bit here: no
        // zero of either sign is rewritten differently).
        let si = parse_str(&text, "si", &[]).expect("the shipped model is valid");
        let un = parse_str(&with_units, "units", &[]).expect("the rewritten model is valid");
        assert_eq!(si.spec, un.spec, "{stem}");
        let a = run_csv(model, &dir.join(format!("{stem}.si.csv")));
        let b = run_csv(&rewritten, &dir.join(format!("{stem}.units.csv")));
        println!(
            "{stem}: {n} values rewritten with units, CSV {} rows, {} bytes, identical: {}",
            a.lines().count(),
            a.len(),
            a == b
        );
        assert!(n >= 5, "{stem}: only {n} values rewritten");
        assert_eq!(a, b, "{stem}: the run with units differs");
    }
    let sample = rewrite(&std::fs::read_to_string(root().join("models/blowdown.toml")).unwrap()).0;
    println!("--- blowdown with units ---\n{sample}");
    assert!(sample.contains("\"1e1 bar\"") && sample.contains("degC"));
    let _ = std::fs::remove_dir_all(&dir);
}

const BASE: &str = r#"[model]
name = "trip"
[gas]
species = "air"
[solver]
method = "rk4"
step = 1e-4
t_end = 0.01
[[chamber]]
name = "tank"
volume = "2 L"
pressure = "6 bar"
temperature = "20 degC"
[[reservoir]]
name = "atm"
pressure = "1 atm"
temperature = "20 degC"
[[orifice]]
name = "nozzle"
from = "tank"
to = "atm"
area = "10 mm^2"
[[orifice]]
name = "valve"
from = "tank"
to = "atm"
sonic_conductance = "0.5 dm^3/(s*bar)"
critical_pressure_ratio = 0.3
"#;

fn load(text: &str, set: &[&str]) -> Result<plenum::model::LoadedModel, Vec<ModelError>> {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    parse_str(text, "trip.toml", &set)
}

#[test]
fn every_plausibility_warning_fires_on_a_model_built_to_trip_it() {
    let base = load(BASE, &[]).expect("the base model is valid");
    assert!(base.warnings.is_empty(), "{:#?}", base.warnings);
    let s = &base.spec;
    println!(
        "base: p = {} Pa, T = {} K, V = {} m^3, p_atm = {:?} Pa",
        s.chamber[0].pressure,
        s.chamber[0].temperature,
        s.chamber[0].volume,
        s.reservoir[0].pressure
    );
    assert_eq!(s.chamber[0].pressure.to_bits(), 6e5f64.to_bits());
    assert_eq!(
        s.chamber[0].temperature.to_bits(),
        (20.0f64 + 273.15).to_bits()
    );
    assert_eq!(s.chamber[0].volume.to_bits(), 2e-3f64.to_bits());
    // (override, key it names, words it must say)
    let cases: [(&str, &str, &str); 10] = [
        (
            "tank.pressure=6",
            "tank.pressure=6",
            "did you mean pressure = \"6 bar\" = 6e5 Pa?",
        ),
        ("tank.pressure=2e9", "tank.pressure=2e9", "above 1 GPa"),
        (
            "atm.pressure=100",
            "atm.pressure=100",
            "\"100 bar\" = 1e7 Pa",
        ),
        (
            "tank.temperature=20",
            "tank.temperature=20",
            "\"20 degC\" = 293.15 K",
        ),
        (
            "tank.temperature=5000",
            "tank.temperature=5000",
            "above 3000 K",
        ),
        (
            "tank.volume=2",
            "tank.volume=2",
            "did you mean volume = \"2 L\" = 0.002 m^3?",
        ),
        ("nozzle.area=10", "nozzle.area=10", "\"10 mm^2\" = 1e-5 m^2"),
        (
            "valve.sonic_conductance=0.5",
            "valve.sonic_conductance=0.5",
            "\"0.5 dm^3/(s*bar)\" = 5e-9",
        ),
        (
            "valve.sonic_conductance=1e-14",
            "valve.sonic_conductance=1e-14",
            "below 1e-12",
        ),
        (
            "nozzle.area={ table = [[0.0, 1e-5], [0.005, 3.0]] }",
            "nozzle.area={ table = [[0.0, 1e-5], [0.005, 3.0]] }",
            "above 1 m^2",
        ),
    ];
    for (set, key, words) in cases {
        let m = load(BASE, &[set]).unwrap_or_else(|e| panic!("{set}: {e:#?}"));
        for w in &m.warnings {
            println!("{set:>32}: {w}");
        }
        assert_eq!(m.warnings.len(), 1, "{set}: {:#?}", m.warnings);
        assert_eq!(m.warnings[0].key, key);
        assert!(m.warnings[0].message.contains(words), "{}", m.warnings[0]);
    }
    // In the file itself: located at the key.
    let text = BASE.replace("pressure = \"6 bar\"", "pressure = 6.0");
    let m = load(&text, &[]).expect("valid");
    println!("{}", m.warnings[0]);
    assert_eq!(m.warnings.len(), 1);
    let w = &m.warnings[0];
    assert_eq!((w.file.as_str(), w.line, w.column), ("trip.toml", 12, 1));
    assert_eq!(w.key, "chamber.tank.pressure");
}

/// Every model file under `dir`, recursively (TOML files with a `[model]` section).
fn model_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                model_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "toml")
            && std::fs::read_to_string(&p).is_ok_and(|t| t.contains("[model]"))
        {
            out.push(p);
        }
    }
}

#[test]
fn no_plausibility_warning_on_the_shipped_models_and_examples() {
    let mut files = Vec::new();
    model_files(&root().join("models"), &mut files);
    model_files(&root().join("examples"), &mut files);
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    for f in &files {
        let m = plenum::model::load_path(f, &[]).unwrap_or_else(|e| panic!("{e:#?}"));
        println!("{}: {} warnings", f.display(), m.warnings.len());
        assert!(m.warnings.is_empty(), "{}: {:#?}", f.display(), m.warnings);
    }
}

#[test]
fn a_unit_of_the_wrong_dimension_is_a_located_error() {
    let text = BASE.replace("pressure = \"6 bar\"", "pressure = \"6 m\"");
    let errs = load(&text, &[]).expect_err("6 m is no pressure");
    for e in &errs {
        println!("{e}");
    }
    assert_eq!(errs.len(), 1, "{errs:#?}");
    let e = &errs[0];
    assert_eq!((e.file.as_str(), e.line, e.column), ("trip.toml", 12, 1));
    assert_eq!(e.key, "chamber.tank.pressure");
    for words in [
        "`pressure` is a pressure",
        "e.g. \"6 bar\"",
        "`m` is a length",
    ] {
        assert!(e.message.contains(words), "{e} lacks {words}");
    }
    // In a table row, at the cell; an unknown unit; a --set.
    let text = BASE.replace(
        "area = \"10 mm^2\"",
        "area = { table = [[\"0 ms\", \"10 mm^2\"], [\"5 ms\", \"3 s\"]] }",
    );
    let errs = load(&text, &[]).expect_err("3 s is no area");
    println!("{}", errs[0]);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].key, "orifice.nozzle.area.table[1][1]");
    assert_eq!((errs[0].line, errs[0].column), (22, 49));
    let errs = load(BASE, &["tank.temperature=20 degK"]).expect_err("no degK");
    println!("{}", errs[0]);
    assert_eq!(errs[0].file, "--set");
    assert!(
        errs[0].message.contains("unknown unit `degK`"),
        "{}",
        errs[0]
    );
    // Without quotes on the command line: the same value as in the file.
    let m = load(BASE, &["tank.pressure=7.5bar", "nozzle.area=12 mm^2"]).expect("valid");
    println!(
        "--set 7.5bar -> {} Pa, 12 mm^2 -> {:?} m^2",
        m.spec.chamber[0].pressure, m.spec.orifice[0].area
    );
    assert_eq!(m.spec.chamber[0].pressure.to_bits(), 7.5e5f64.to_bits());
    assert!(m.source.contains("pressure = \"7.5bar\""), "{}", m.source);
}

/// A mass flow written as a standard volume flow (ISO 8778's reference density 1.185 kg/m³)
/// is the mass flow a user computes by hand; a bare volume flow is refused with a message
/// naming the standard units.
#[test]
fn a_mass_flow_takes_standard_volume_flows_and_refuses_a_bare_one() {
    let flow = |rate: &str| {
        format!(
            "{BASE}\n[[mass_flow]]\nname = \"feed\"\nfrom = \"atm\"\nto = \"tank\"\nrate = \"{rate}\"\n"
        )
    };
    let rho = 1.185;
    for (rate, want) in [
        ("100 Nl/min", 100e-3 / 60.0 * rho),
        ("100 l/min ANR", 100e-3 / 60.0 * rho),
        ("3.5 scfm", 3.5 * 0.028_316_846_592 / 60.0 * rho),
        ("6 m3/h ANR", 6.0 / 3600.0 * rho),
    ] {
        let m = load(&flow(rate), &[]).expect("valid");
        let got = match &m.spec.mass_flow[0].rate {
            plenum::model::spec::ParamSpec::Const(v) => *v,
            other => panic!("{other:?}"),
        };
        println!("rate = \"{rate}\" -> {got:e} kg/s (by hand {want:e})");
        assert!(((got - want) / want).abs() < 1e-15, "{rate}");
    }
    let errs = load(&flow("100 l/min"), &[]).expect_err("a bare l/min is no mass flow");
    println!("{}", errs[0]);
    for words in [
        "`rate` is a mass flow rate",
        "`l/min` is a volume flow rate",
        "`Nl/min`",
        "`l/min ANR`",
        "`scfm`",
        "20 °C, 100 kPa",
    ] {
        assert!(errs[0].message.contains(words), "{} lacks {words}", errs[0]);
    }
}

/// A curve's first cells take the unit its key declares with it (`Curve(pressure)`), not one
/// chosen by the key's name: every curve key of every kind declares one, a poppet's Δp table
/// a pressure and the others a ratio or a travel (dimensionless); a `poppet_table`'s first
/// cells convert from bar and kPa, a `flow_table`'s take a bare ratio and refuse a pressure at
/// the cell, whatever the kind.
#[test]
fn a_curves_first_cells_take_the_unit_its_key_declares() {
    let mut curves = Vec::new();
    for kind in plenum::components::KINDS {
        for key in kind.keys {
            let argument = key.argument_unit().map(|u| u.symbol);
            assert_eq!(
                argument.is_some(),
                key.form == Form::Curve,
                "{}.{}",
                kind.name,
                key.name
            );
            if let Some(symbol) = argument {
                curves.push(format!("{}.{}: {symbol}", kind.name, key.name));
                let want = if key.name == "poppet_table" {
                    "Pa"
                } else {
                    "1"
                };
                assert_eq!(symbol, want, "{}.{}", kind.name, key.name);
            }
        }
    }
    println!(
        "curve keys and their arguments' units: {}",
        curves.join(", ")
    );
    assert_eq!(curves.len(), 12, "{curves:?}");

    let poppet =
        format!("{BASE}poppet_table = [[\"1 bar\", 0], [\"150 kPa\", 0.2], [\"0.3 MPa\", 1]]\n");
    let m = load(&poppet, &[]).expect("valid");
    let rows = m.spec.orifice[1]
        .poppet_table
        .clone()
        .expect("a poppet table");
    println!("poppet_table [1 bar, 150 kPa, 0.3 MPa] -> {rows:?}");
    assert_eq!(rows, vec![[1e5, 0.0], [1.5e5, 0.2], [3e5, 1.0]]);

    let valve = "[[chamber]]\nname = \"y\"\nvolume = \"1 L\"\npressure = \"1 bar\"\n\
                 temperature = 293.15\n[[directional_valve]]\nname = \"dv\"\np = \"tank\"\n\
                 a = \"y\"\nflow_table_inlet_pressure = \"7 bar\"\n";
    let with_rows =
        |rows: &str| format!("{BASE}{valve}flow_table = [[0, 1e-3], [{rows}, 5e-4], [1, 0]]\n");
    let m = load(&with_rows("\"0.5\""), &[]).expect("valid");
    let rows = m.spec.directional_valve[0]
        .flow_table
        .clone()
        .expect("a curve");
    println!("directional valve flow_table [0, \"0.5\", 1] -> {rows:?}");
    assert_eq!(rows[1], [0.5, 5e-4]);
    let errs = load(&with_rows("\"0.5 bar\""), &[]).expect_err("a pressure is no ratio");
    println!("{}", errs[0]);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].key, "directional_valve.dv.flow_table[1][0]");
    assert!(
        errs[0].message.contains("`bar` is a pressure"),
        "{}",
        errs[0]
    );
}
