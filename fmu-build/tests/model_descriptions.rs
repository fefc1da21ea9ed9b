//! The committed `modelDescription/<model>.xml` files are what `fmu-build` generates today
//! (regenerate with `fmu_build::REGENERATE_COMMAND`, or run this test with `PLENUM_BLESS=1`),
//! plus checks of the generated XML and of the `.fmu` archive.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use fmu_build::{Library, Platform};
use quick_xml::Reader;
use quick_xml::events::Event;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn shipped_models() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(workspace().join("models"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no models/*.toml");
    v
}

/// First differing line, with a few lines of context, as a hint for the stale-file message.
fn diff_hint(committed: &str, generated: &str) -> String {
    let a: Vec<&str> = committed.lines().collect();
    let b: Vec<&str> = generated.lines().collect();
    let first = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let mut out = format!(
        "first difference at line {} (committed {} lines, generated {} lines)\n",
        first + 1,
        a.len(),
        b.len()
    );
    for (label, lines) in [("committed", &a), ("generated", &b)] {
        for (i, l) in lines.iter().enumerate().skip(first).take(3) {
            out.push_str(&format!("  {label} {:>4}: {l}\n", i + 1));
        }
    }
    out
}

#[test]
fn committed_model_descriptions_are_fresh() {
    let bless = std::env::var_os("PLENUM_BLESS").is_some();
    let dir = workspace().join("modelDescription");
    let mut stale = Vec::new();
    let mut expected_files = Vec::new();
    for path in shipped_models() {
        let model = fmu_build::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let xml = fmu_build::model_description(&model).unwrap();
        let name = format!("{}.xml", model.spec.model.name);
        let committed_path = dir.join(&name);
        expected_files.push(name.clone());
        let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
        if committed != xml {
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&committed_path, &xml).unwrap();
                eprintln!("rewrote {}", committed_path.display());
            } else {
                stale.push(format!(
                    "modelDescription/{name} is stale for {}:\n{}",
                    path.display(),
                    diff_hint(&committed, &xml)
                ));
            }
        } else {
            println!("modelDescription/{name}: fresh ({} bytes)", xml.len());
        }
    }
    // No description of a model that is not shipped any more.
    let mut extra = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let f = e.unwrap().file_name().to_string_lossy().to_string();
        if f.ends_with(".xml") && !expected_files.contains(&f) {
            extra.push(format!(
                "modelDescription/{f} belongs to no models/*.toml: delete it"
            ));
        }
    }
    stale.extend(extra);
    assert!(
        stale.is_empty(),
        "{}\nregenerate with:\n  {}\n(or run this test with PLENUM_BLESS=1), then commit modelDescription/",
        stale.join("\n"),
        fmu_build::REGENERATE_COMMAND
    );
}

/// Elements of a generated description, as (name, attributes) in document order.
fn elements(xml: &str) -> Vec<(String, BTreeMap<String, String>)> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) | Event::Empty(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let attrs = e
                    .attributes()
                    .map(|a| {
                        let a = a.unwrap();
                        (
                            String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                            a.unescape_value().unwrap().into_owned(),
                        )
                    })
                    .collect();
                out.push((name, attrs));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

#[test]
fn descriptions_follow_fmi2_rules() {
    for path in shipped_models() {
        let model = fmu_build::load(&path).unwrap();
        let d = plenum::cosim::describe(&model);
        let xml = fmu_build::model_description(&model).unwrap();
        let els = elements(&xml);
        let root = &els[0].1;
        assert_eq!(root["fmiVersion"], "2.0");
        assert_eq!(
            root["guid"],
            plenum::cosim::guid_of(model.source.as_bytes())
        );
        assert_eq!(root["modelName"], model.spec.model.name);
        let cs = &els.iter().find(|e| e.0 == "CoSimulation").unwrap().1;
        assert_eq!(cs["modelIdentifier"], model.spec.model.name);
        assert_eq!(cs["canGetAndSetFMUstate"], "true");
        assert_eq!(cs["providesDirectionalDerivative"], "true");
        // Model Exchange from the same library, before CoSimulation (the schema's order).
        let me = els.iter().position(|e| e.0 == "ModelExchange").unwrap();
        assert!(me < els.iter().position(|e| e.0 == "CoSimulation").unwrap());
        let me = &els[me].1;
        assert_eq!(me["modelIdentifier"], model.spec.model.name);
        for flag in [
            "canGetAndSetFMUstate",
            "canSerializeFMUstate",
            "providesDirectionalDerivative",
        ] {
            assert_eq!(me[flag], "true", "{flag}");
        }
        assert_eq!(me["completedIntegratorStepNotNeeded"], "false");
        assert_eq!(
            root["numberOfEventIndicators"],
            d.event_indicators.to_string()
        );
        // The default experiment's tolerance is the model's own rtol: the start value of the
        // `solver.rtol` parameter in the same description.
        let experiment = &els.iter().find(|e| e.0 == "DefaultExperiment").unwrap().1;
        let rtol = els
            .iter()
            .position(|e| e.0 == "ScalarVariable" && e.1["name"] == "solver.rtol")
            .map(|k| &els[k + 1].1["start"])
            .unwrap();
        println!(
            "{}: DefaultExperiment {experiment:?}, solver.rtol = {rtol}",
            path.display()
        );
        assert_eq!(experiment["tolerance"], *rtol);

        let units: Vec<&String> = els
            .iter()
            .filter(|e| e.0 == "Unit")
            .map(|e| &e.1["name"])
            .collect();
        let vars: Vec<&BTreeMap<String, String>> = els
            .iter()
            .filter(|e| e.0 == "ScalarVariable")
            .map(|e| &e.1)
            .collect();
        let reals: Vec<&BTreeMap<String, String>> =
            els.iter().filter(|e| e.0 == "Real").map(|e| &e.1).collect();
        assert_eq!(vars.len(), d.variables.len());
        let (mut outputs, mut locals, mut derivatives) = (Vec::new(), Vec::new(), Vec::new());
        for (i, ((sv, real), v)) in vars.iter().zip(&reals).zip(&d.variables).enumerate() {
            assert_eq!(sv["name"], v.name);
            assert_eq!(sv["valueReference"], v.value_reference.to_string());
            assert!(
                units.contains(&&real["unit"]),
                "unit {} undefined",
                real["unit"]
            );
            match sv["causality"].as_str() {
                "parameter" => {
                    assert_eq!(sv["variability"], "fixed");
                    assert_eq!(sv["initial"], "exact");
                    // Shortest round-trip: parses back to the very same f64.
                    assert_eq!(real["start"].parse::<f64>().unwrap(), v.start.unwrap());
                }
                "input" => {
                    assert!(!sv.contains_key("initial"));
                    assert_eq!(real["start"].parse::<f64>().unwrap(), v.start.unwrap());
                }
                "output" => {
                    assert!(!real.contains_key("start"));
                    outputs.push((i + 1).to_string());
                }
                "independent" => {
                    assert_eq!(sv["name"], "time");
                    assert_eq!(sv["variability"], "continuous");
                    assert!(!real.contains_key("start") && !sv.contains_key("initial"));
                }
                "local" => {
                    // A state that is no output, or a derivative: calculated, no start.
                    assert_eq!(sv["variability"], "continuous");
                    assert!(!real.contains_key("start") && !sv.contains_key("initial"));
                    locals.push((i + 1).to_string());
                    if let Some(state) = real.get("derivative") {
                        let k: usize = state.parse().unwrap();
                        assert_eq!(sv["name"], format!("der({})", vars[k - 1]["name"]));
                        derivatives.push((i + 1).to_string());
                    }
                }
                c => panic!("unexpected causality {c}"),
            }
        }
        // Outputs lists every output, Derivatives every derivative (one per state, in the
        // state vector's order), InitialUnknowns the outputs and the locals (states that are no
        // output, and the derivatives), each by 1-based index in increasing order.
        let section = |name: &str| -> Vec<String> {
            let start = els.iter().position(|e| e.0 == name).unwrap();
            els[start + 1..]
                .iter()
                .take_while(|e| e.0 == "Unknown")
                .map(|e| e.1["index"].clone())
                .collect()
        };
        assert_eq!(section("Outputs"), outputs);
        assert_eq!(section("Derivatives"), derivatives);
        assert_eq!(derivatives.len(), d.states.len());
        let mut initial = outputs.clone();
        initial.extend(locals.iter().cloned());
        assert_eq!(section("InitialUnknowns"), initial);
        let cats: Vec<&String> = els
            .iter()
            .filter(|e| e.0 == "Category")
            .map(|e| &e.1["name"])
            .collect();
        assert_eq!(cats.len(), plenum::fmi2::LOG_CATEGORIES.len());
        println!(
            "{}: {} variables, {} outputs, {} states, {} event indicators, {} units",
            path.display(),
            vars.len(),
            outputs.len(),
            derivatives.len(),
            d.event_indicators,
            units.len()
        );
    }
}

#[test]
fn unit_exponents() {
    let cases: &[(&str, [i32; 5])] = &[
        // kg, m, s, A(0), K
        ("1", [0, 0, 0, 0, 0]),
        ("s", [0, 0, 1, 0, 0]),
        ("Pa", [1, -1, -2, 0, 0]),
        ("m3", [0, 3, 0, 0, 0]),
        ("kg/s", [1, 0, -1, 0, 0]),
        ("K", [0, 0, 0, 0, 1]),
        ("J", [1, 2, -2, 0, 0]),
        ("m/s", [0, 1, -1, 0, 0]),
        ("N/m", [1, 0, -2, 0, 0]),
        ("N.s/m", [1, 0, -1, 0, 0]),
        ("W/(m2.K)", [1, 0, -3, 0, -1]),
        ("m/(s.Pa)", [-1, 2, 1, 0, 0]),
        ("kg/(s.Pa)", [0, 1, 1, 0, 0]),
        ("m3/s", [0, 3, -1, 0, 0]),
        ("s-1", [0, 0, -1, 0, 0]),
        ("1/s", [0, 0, -1, 0, 0]),
    ];
    for (unit, [kg, m, s, a, k]) in cases {
        let b = fmu_build::base_unit(unit).unwrap();
        assert_eq!(
            (
                b.si.kg, b.si.m, b.si.s, b.si.a, b.si.k, b.si.mol, b.si.cd, b.rad
            ),
            (*kg, *m, *s, *a, *k, 0, 0, 0),
            "{unit}"
        );
    }
    // `rad` is an FMI base unit the SI counts as 1: written last, and no quantity type's.
    let w = fmu_build::base_unit("rad/s").unwrap();
    println!("rad/s: {:?}", w.attributes());
    assert_eq!(w.attributes(), [("s", -1), ("rad", 1)]);
    assert!(!w.matches(&fmu_build::base_unit("1/s").unwrap().si));
    assert!(fmu_build::base_unit("1/s").unwrap().rad == 0);
    for bad in ["furlong", "kg/", "(m)", "m/(s", "m^2"] {
        assert!(fmu_build::base_unit(bad).is_err(), "{bad} accepted");
    }
}

#[test]
fn attribute_text_round_trips() {
    let src = std::fs::read_to_string(workspace().join("models/projectile.toml")).unwrap();
    let src = src.replace(
        "description = \"Spring-less air gun: one chamber, one projectile, atmosphere\"",
        "description = \"<a> & 'b' \\\"c\\\"\\nline two\\ttab\"",
    );
    let model = plenum::model::parse_str(&src, "<test>", &[]).unwrap();
    let xml = fmu_build::model_description(&model).unwrap();
    let els = elements(&xml);
    assert_eq!(els[0].1["description"], "<a> & 'b' \"c\"\nline two\ttab");
}

#[test]
fn numbers_are_shortest_round_trip() {
    for x in [0.1, 1e-6, 701325.0, 1.1309733552923255e-4, 1e300, -2.5e-320] {
        let s = fmu_build::fmt_real(x);
        assert_eq!(s.parse::<f64>().unwrap(), x, "{s}");
        assert!(s.len() <= 24, "{s}");
    }
    assert_eq!(fmu_build::fmt_real(0.0001), "0.0001");
    assert_eq!(fmu_build::fmt_real(f64::INFINITY), "INF");
}

/// A library as `write_fmu` receives it (the headers are read by `Library::load`; this one is
/// only bytes to pack).
fn fake_library(platform: Platform, bytes: &[u8]) -> Library {
    Library {
        path: format!("fake.{}", platform.extension()).into(),
        bytes: bytes.to_vec(),
        info: fmu_build::platform::LibraryInfo {
            platform,
            exports: Vec::new(),
            needs: Vec::new(),
            newest_glibc: None,
        },
    }
}

#[test]
fn fmu_archive_holds_description_libraries_and_model() {
    let model_path = workspace().join("models/two_tanks.toml");
    let model = fmu_build::load(&model_path).unwrap();
    let tmp = std::env::temp_dir().join(format!("fmu-build-test-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let libs = [
        fake_library(Platform::Win64, b"MZ not really"),
        fake_library(Platform::Linux64, b"\x7fELF not really"),
    ];
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    let before = now();
    let fmu = fmu_build::write_fmu(&model, &libs, &tmp.join("out")).unwrap();
    let after = now();
    assert_eq!(fmu.file_name().unwrap(), "two_tanks.fmu");

    let mut zip = zip::ZipArchive::new(std::fs::File::open(&fmu).unwrap()).unwrap();
    let names: Vec<String> = zip.file_names().map(str::to_string).collect();
    println!("{names:?}");
    assert_eq!(
        names,
        [
            "modelDescription.xml",
            "binaries/linux64/two_tanks.so",
            "binaries/win64/two_tanks.dll",
            "resources/model.toml"
        ]
    );
    let mut read = |name: &str| {
        let mut f = zip.by_name(name).unwrap();
        assert_eq!(f.compression(), zip::CompressionMethod::Deflated, "{name}");
        let mut v = Vec::new();
        f.read_to_end(&mut v).unwrap();
        v
    };
    let xml = String::from_utf8(read("modelDescription.xml")).unwrap();
    // The archive's description is the committed one plus the time it was packed.
    let key = " generationDateAndTime=\"";
    let at = xml.find(key).expect("generationDateAndTime") + key.len();
    let stamp = &xml[at..at + xml[at..].find('"').unwrap()];
    println!("generationDateAndTime = {stamp}");
    if std::env::var_os("SOURCE_DATE_EPOCH").is_none() {
        assert!(
            (before..=after).any(|t| fmu_build::utc_date_time(t) == stamp),
            "{stamp} is not between {} and {}",
            fmu_build::utc_date_time(before),
            fmu_build::utc_date_time(after)
        );
    }
    let unstamped = xml.replacen(&format!("{key}{stamp}\""), "", 1);
    assert_eq!(unstamped, fmu_build::model_description(&model).unwrap());
    assert_eq!(read("binaries/linux64/two_tanks.so"), b"\x7fELF not really");
    assert_eq!(read("binaries/win64/two_tanks.dll"), b"MZ not really");
    let toml = read("resources/model.toml");
    assert_eq!(toml, std::fs::read(&model_path).unwrap());
    assert!(xml.contains(&plenum::cosim::guid_of(&toml)));

    // No library, or two for one platform: refused, nothing written.
    for libs in [&[][..], &[libs[1].clone(), libs[1].clone()][..]] {
        let err = fmu_build::write_fmu(&model, libs, &tmp.join("out2"))
            .unwrap_err()
            .to_string();
        println!("{err}");
        assert!(
            err.contains("no library") || err.contains("two linux64"),
            "{err}"
        );
        assert!(!tmp.join("out2/two_tanks.fmu").exists());
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Characters XML 1.0 cannot hold (U+0000, the C0 controls but tab, LF and CR, U+FFFE,
/// U+FFFF), wherever a model file's text reaches modelDescription.xml (the model's description,
/// a component's name), stop the build and name the character; tab, LF, CR and the rest of
/// Unicode are written and read back exactly.
#[test]
fn characters_xml_cannot_hold_are_refused_wherever_they_come_from() {
    let src = std::fs::read_to_string(workspace().join("models/two_tanks.toml")).unwrap();
    let line = "description = \"Two tanks joined by a linear valve\"";
    assert!(src.contains(line));
    let with_description = |d: &str| src.replacen(line, &format!("description = \"{d}\""), 1);
    for (bad, code) in [
        ("\\u0000", "U+0000"),
        ("\\u0007", "U+0007"),
        ("\\u001B", "U+001B"),
        ("\\uFFFE", "U+FFFE"),
        ("\\uFFFF", "U+FFFF"),
    ] {
        let text = with_description(&format!("a {bad} b"));
        let model = plenum::model::parse_str(&text, "bad.toml", &[]).unwrap();
        let err = fmu_build::model_description(&model).unwrap_err();
        println!("{bad}: {err}");
        assert!(matches!(err, fmu_build::Error::Model(_)), "{err:?}");
        let msg = err.to_string();
        assert!(msg.starts_with("bad.toml"), "{msg}");
        assert!(msg.contains(code) && msg.contains("description"), "{msg}");
    }
    // A component name reaches the XML in variable names.
    let text = src.replacen("name = \"a\"", "name = \"a\\u0001\"", 1);
    match plenum::model::parse_str(&text, "bad.toml", &[]) {
        Ok(model) => {
            let err = fmu_build::model_description(&model)
                .unwrap_err()
                .to_string();
            println!("component name: {err}");
            assert!(err.contains("U+0001"), "{err}");
        }
        Err(e) => println!("component name with U+0001 refused by the model file's rules: {e:?}"),
    }
    // Allowed: tab, line feed, carriage return, and characters outside the BMP, read back
    // exactly.
    let text = with_description("tab\\tlf\\ncr\\r \\U0001F600 \\uFFFD");
    let model = plenum::model::parse_str(&text, "ok.toml", &[]).unwrap();
    let xml = fmu_build::model_description(&model).unwrap();
    assert_eq!(
        elements(&xml)[0].1["description"],
        "tab\tlf\ncr\r \u{1F600} \u{FFFD}"
    );
}

#[test]
fn invalid_model_name_is_refused() {
    // Refused by validation, or else by fmu-build's own check: either way with `model.name`.
    let src = std::fs::read_to_string(workspace().join("models/two_tanks.toml")).unwrap();
    let src = src.replace("name = \"two_tanks\"", "name = \"two tanks\"");
    let errors = match plenum::model::parse_str(&src, "<test>", &[]) {
        Err(e) => e,
        Ok(model) => match fmu_build::check_packageable(&model) {
            Err(fmu_build::Error::Model(e)) => e,
            other => panic!("{other:?}"),
        },
    };
    assert_eq!(errors[0].key, "model.name", "{errors:?}");
}

/// SI exponents (kg, m, s, K) of a variable, written out by hand from the SI definitions of its
/// quantity (Pa = kg·m⁻¹·s⁻², J = kg·m²·s⁻², kg/(s·Pa) = m·s, ...): the truth the unit types
/// are checked against. Outputs by their suffix, parameters by their model-file key.
fn expected_exponents(name: &str, parameter: bool) -> [i32; 4] {
    if let Some(state) = name.strip_prefix("der(").and_then(|n| n.strip_suffix(')')) {
        // A state's time derivative: the state's unit per second.
        let [kg, m, s, k] = expected_exponents(state, false);
        return [kg, m, s - 1, k];
    }
    let key = name.rsplit('.').next().unwrap();
    if !parameter {
        return match key {
            "time" => [0, 0, 1, 0],
            "p" => [1, -1, -2, 0],
            "T" => [0, 0, 0, 1],
            "m" | "mass_total" | "mass_left" => [1, 0, 0, 0],
            "V" | "swept_volume" => [0, 3, 0, 0],
            "U" | "energy_total" | "energy_left" => [1, 2, -2, 0],
            "mdot" => [1, 0, -1, 0],
            "q" => [0, 3, -1, 0],
            "x" => [0, 1, 0, 0],
            "v" => [0, 1, -1, 0],
            "exited" | "rc" | "open_fraction" | "choked" => [0, 0, 0, 0],
            "Q" => [1, 2, -3, 0],
            other => panic!("output {name}: no expected unit for {other:?}"),
        };
    }
    match key {
        "volume" => [0, 3, 0, 0],
        "pressure" | "friction_static" | "friction_dynamic" => [1, -1, -2, 0],
        "temperature" => [0, 0, 0, 1],
        "area" | "area_open" | "area_leak" | "area_from" | "area_to" => [0, 2, 0, 0],
        "mass" => [1, 0, 0, 0],
        "x0" | "x_exit" | "spring_x0" | "x_min" | "x_max" | "length" | "diameter" | "roughness" => {
            [0, 1, 0, 0]
        }
        "v0" | "velocity" => [0, 1, -1, 0],
        "coefficient" => [0, 1, 1, 0],
        "rate" | "damping" => [1, 0, -1, 0],
        "density" => [1, -3, 0, 0],
        "viscosity" => [1, -1, -1, 0],
        "q0" => [0, 3, -1, 0],
        "sonic_conductance" => [-1, 4, 1, 0],
        "spring_stiffness" => [1, 0, -2, 0],
        "heat_transfer_coefficient" => [1, 0, -3, -1],
        "expansion_coefficient" => [-1, 2, 1, 0],
        "discharge_coefficient"
        | "critical_pressure_ratio"
        | "restitution"
        | "opening"
        | "k"
        | "rtol"
        | "atol" => [0, 0, 0, 0],
        "t_open" | "duration" => [0, 0, 1, 0],
        "cracking_pressure" | "full_flow_pressure" => [1, -1, -2, 0],
        other => panic!("parameter {name}: no expected unit for {other:?}"),
    }
}

/// Every variable's `unit` and every `UnitDefinitions` entry in the generated XML are those of
/// the variable's quantity type (`plenum::units::Unit`), and the type's exponents are those of
/// the SI definition of the quantity (hand-written above); no unit is defined unused.
#[test]
fn unit_definitions_come_from_the_quantity_types() {
    let mut models = shipped_models();
    for f in ["all_kinds.toml", "other_kinds.toml"] {
        models.push(workspace().join("tests/fixtures/models").join(f));
    }
    for path in models {
        let model = fmu_build::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let d = plenum::cosim::describe(&model);
        let xml = fmu_build::model_description(&model).unwrap();
        let els = elements(&xml);
        // UnitDefinitions: name → BaseUnit attributes; variables: name → Real's unit.
        let mut defined: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut var_unit: BTreeMap<String, String> = BTreeMap::new();
        for w in els.windows(2) {
            match (w[0].0.as_str(), w[1].0.as_str()) {
                ("Unit", "BaseUnit") => {
                    defined.insert(w[0].1["name"].clone(), w[1].1.clone());
                }
                ("ScalarVariable", "Real") => {
                    var_unit.insert(w[0].1["name"].clone(), w[1].1["unit"].clone());
                }
                _ => {}
            }
        }
        assert_eq!(var_unit.len(), d.variables.len(), "{}", path.display());
        let mut used = std::collections::BTreeSet::new();
        for v in &d.variables {
            let parameter = matches!(
                v.causality,
                plenum::cosim::Causality::Parameter | plenum::cosim::Causality::Input
            );
            let [kg, m, s, k] = expected_exponents(&v.name, parameter);
            let si = v.unit.si;
            assert_eq!(
                (si.kg, si.m, si.s, si.k, si.a, si.mol, si.cd),
                (kg, m, s, k, 0, 0, 0),
                "{}: type of {} ({})",
                path.display(),
                v.name,
                v.unit
            );
            assert_eq!(var_unit[&v.name], v.unit.symbol, "{}", v.name);
            let base = &defined[&v.unit.symbol];
            let want: BTreeMap<String, String> = si
                .attributes()
                .into_iter()
                .map(|(a, e)| (a.to_string(), e.to_string()))
                .collect();
            assert_eq!(base, &want, "UnitDefinitions of {:?}", v.unit.symbol);
            // The symbol, read by the independent parser, names the same dimension.
            assert!(fmu_build::base_unit(&v.unit.symbol).unwrap().matches(&si));
            used.insert(v.unit.symbol.clone());
        }
        assert_eq!(used.len(), defined.len(), "unused UnitDefinitions");
        println!(
            "{}: {} variables, {} units checked: {}",
            path.file_name().unwrap().to_string_lossy(),
            d.variables.len(),
            defined.len(),
            defined
                .iter()
                .map(|(n, b)| format!("{n}{b:?}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}

/// ModelStructure/Derivatives lists, for each state derivative, exactly the states of its row
/// of the network's Jacobian pattern (`Network::sparsity`, the pattern the BDF factors) and
/// exactly the inputs whose parameter enters that row (`network::parameter_rows`), read back
/// from the generated XML: the shipped models, the fixtures of every kind and the Cantera
/// networks.
#[test]
fn derivative_dependencies_are_the_networks_sparsity_pattern() {
    use plenum::ode::OdeSystem;
    let mut models = shipped_models();
    for f in ["all_kinds.toml", "other_kinds.toml"] {
        models.push(workspace().join("tests/fixtures/models").join(f));
    }
    for p in std::fs::read_dir(workspace().join("compliance-tests/peers/models")).unwrap() {
        models.push(p.unwrap().path());
    }
    models.sort();
    for path in models {
        let model = fmu_build::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let d = plenum::cosim::describe(&model);
        let xml = fmu_build::model_description(&model).unwrap();
        let els = elements(&xml);
        let start = els.iter().position(|e| e.0 == "Derivatives").unwrap();
        let listed: Vec<Vec<usize>> = els[start + 1..]
            .iter()
            .take_while(|e| e.0 == "Unknown")
            .map(|e| {
                let deps = &e.1["dependencies"];
                deps.split_whitespace()
                    .map(|k| k.parse().unwrap())
                    .collect()
            })
            .collect();
        let sim = plenum::model::build_simulation(&model.spec, None).unwrap();
        let net = &sim.network;
        let n = net.layout.n_states;
        assert_eq!(listed.len(), n, "{}", path.display());
        let pattern = net.sparsity().expect("a known network");
        let inputs: Vec<(usize, &str)> = d
            .variables
            .iter()
            .enumerate()
            .filter(|(_, v)| v.causality == plenum::cosim::Causality::Input)
            .map(|(i, v)| (i + 1, v.name.as_str()))
            .collect();
        let (mut entries, mut input_entries) = (0, 0);
        for (i, deps) in listed.iter().enumerate() {
            let mut want: Vec<usize> = (0..n)
                .filter(|&j| pattern.contains(i, j))
                .map(|j| d.states[j] as usize + 1)
                .collect();
            entries += want.len();
            for &(index, name) in &inputs {
                let (c, k) = name.rsplit_once('.').unwrap();
                let rows = plenum::network::parameter_rows(net, c, k).unwrap();
                if rows.contains(&i) {
                    want.push(index);
                    input_entries += 1;
                }
            }
            want.sort_unstable();
            assert_eq!(deps, &want, "{}: der of state {i}", path.display());
        }
        println!(
            "{}: {n} derivatives, {entries} state dependencies = the pattern's {} entries, {} \
             input dependencies ({} inputs)",
            path.file_name().unwrap().to_string_lossy(),
            pattern.nonzeros(),
            input_entries,
            inputs.len()
        );
        assert_eq!(entries, pattern.nonzeros());
    }
}

/// ModelStructure/Outputs: a lagged directional valve's flows through its ports (`a_mdot`,
/// `b_mdot`, `exhaust_mdot`) are the valve's at its spool, so they list its spool state among
/// their dependencies; the plain directional valve's (whose spool is its `position`) and the
/// spool's own output list no spool of another valve. Read back from the generated XML of the
/// fixture with every kind.
#[test]
fn lagged_valve_port_flows_depend_on_its_spool() {
    let path = workspace().join("tests/fixtures/models/every_kind.toml");
    let model = fmu_build::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let xml = fmu_build::model_description(&model).unwrap();
    let els = elements(&xml);
    let vars: Vec<&str> = els
        .iter()
        .filter(|e| e.0 == "ScalarVariable")
        .map(|e| e.1["name"].as_str())
        .collect();
    let index = |name: &str| {
        1 + vars
            .iter()
            .position(|v| *v == name)
            .unwrap_or_else(|| panic!("no variable {name}"))
    };
    let start = els.iter().position(|e| e.0 == "Outputs").unwrap();
    let deps = |name: &str| -> Vec<usize> {
        let i = index(name).to_string();
        let u = els[start + 1..]
            .iter()
            .take_while(|e| e.0 == "Unknown")
            .find(|e| e.1["index"] == i)
            .unwrap_or_else(|| panic!("{name} is not in ModelStructure/Outputs"));
        u.1["dependencies"]
            .split_whitespace()
            .map(|k| k.parse().unwrap())
            .collect()
    };
    let spool = index("lv.spool");
    for port in ["a_mdot", "b_mdot", "exhaust_mdot"] {
        let lagged = deps(&format!("lv.{port}"));
        let plain = deps(&format!("dv.{port}"));
        println!("lv.{port} depends on {lagged:?} (lv.spool is {spool}); dv.{port} on {plain:?}");
        assert!(lagged.contains(&spool), "lv.{port}: {lagged:?}");
        assert!(!plain.contains(&spool), "dv.{port}: {plain:?}");
        // Both read their ports' chambers alike: the lagged valve's list is the plain one's
        // (the same ports in the fixture) and its spool.
        let mut want = plain.clone();
        want.push(spool);
        want.sort_unstable();
        assert_eq!(lagged, want, "lv.{port}");
    }
    assert_eq!(deps("lv.spool"), vec![spool]);
}

/// DisplayUnits: Pa shows as bar and K as degC, declared in the `Unit` after its `BaseUnit`
/// with FMI 2.0's factor and offset (§2.2.2: display = factor·value + offset), and every
/// pressure and temperature variable names its display unit. Checked against the definitions
/// (1 bar = 1e5 Pa; 0 °C = 273.15 K) on the values 6e5 Pa and 293.15 K.
#[test]
fn pressures_display_in_bar_and_temperatures_in_degc() {
    let path = workspace().join("models/blowdown.toml");
    let model = fmu_build::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let xml = fmu_build::model_description(&model).unwrap();
    let els = elements(&xml);
    let mut display: BTreeMap<String, (f64, f64, String)> = BTreeMap::new();
    for w in els.windows(3) {
        if w[0].0 == "Unit" && w[1].0 == "BaseUnit" && w[2].0 == "DisplayUnit" {
            let a = &w[2].1;
            display.insert(
                w[0].1["name"].clone(),
                (
                    a["factor"].parse().unwrap(),
                    a["offset"].parse().unwrap(),
                    a["name"].clone(),
                ),
            );
        }
    }
    println!("{display:?}");
    let (f, o, name) = &display["Pa"];
    assert_eq!(name, "bar");
    println!("6e5 Pa = {} bar", f * 6e5 + o);
    assert!((f * 6e5 + o - 6.0).abs() < 1e-12);
    let (f, o, name) = &display["K"];
    assert_eq!(name, "degC");
    println!("293.15 K = {} degC", f * 293.15 + o);
    assert!((f * 293.15 + o - 20.0).abs() < 1e-12);
    assert_eq!(display.len(), 2, "{display:?}");
    let mut n = 0;
    for w in els.windows(2) {
        if w[0].0 == "ScalarVariable" && w[1].0 == "Real" {
            let want = match w[1].1["unit"].as_str() {
                "Pa" => Some("bar"),
                "K" => Some("degC"),
                _ => None,
            };
            assert_eq!(
                w[1].1.get("displayUnit").map(String::as_str),
                want,
                "{}",
                w[0].1["name"]
            );
            n += usize::from(want.is_some());
        }
    }
    println!("{n} variables with a display unit");
    assert!(n >= 4);
}

/// `generationDateAndTime` is xs:dateTime in UTC; the calendar's corners (the epoch, a leap day
/// of a year divisible by 400, the last second of a century) against Python's
/// `datetime.fromtimestamp(s, UTC)`.
#[test]
fn generation_time_is_a_utc_date_time() {
    for (seconds, text) in [
        (0, "1970-01-01T00:00:00Z"),
        (951_782_400, "2000-02-29T00:00:00Z"),
        (1_795_843_200, "2026-11-28T05:20:00Z"),
        (4_102_444_799, "2099-12-31T23:59:59Z"),
    ] {
        println!("{seconds} s -> {}", fmu_build::utc_date_time(seconds));
        assert_eq!(fmu_build::utc_date_time(seconds), text);
    }
}
