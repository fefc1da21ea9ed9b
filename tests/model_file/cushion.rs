//! End cushioning's key errors: a cushioned cylinder's needle, passage and port volume, the
//! rod end's keys on a single-acting one, zones that do not fit the stroke; a piston's cushion
//! without its stop or its needle. Each located at the key.

use plenum::model::{ModelError, parse_str};

const BASE: &str = r#"[model]
name = "cushion"
[gas]
species = "air"
[solver]
t_end = 0.1
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 293.15
[[reservoir]]
name = "exhaust"
pressure = 1e5
temperature = 293.15
"#;

const CYLINDER: &str = r#"[[cylinder]]
name = "cyl"
vent = "atm"
bore = "32 mm"
stroke = "100 mm"
dead_volume = "2 cm^3"
mass = 0.5
pressure = 1e5
temperature = 293.15
"#;

const CUSHION: &str = "cushion_length = \"20 mm\"\ncushion_needle_area = \"0.3 mm^2\"\n\
                       port_diameter = \"4 mm\"\nport_volume = \"1 cm^3\"\n";

fn load(extra: &str) -> Result<plenum::model::LoadedModel, Vec<ModelError>> {
    parse_str(&format!("{BASE}{extra}"), "cushion.toml", &[])
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
fn a_cushioned_cylinder_needs_its_needle_passage_and_port() {
    let m = load(&format!("{CYLINDER}{CUSHION}")).expect("valid");
    let names: Vec<&str> = m.spec.chamber.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["cyl_cap", "cyl_cap_bore"]);
    let p = &m.spec.piston[0];
    assert_eq!(
        (
            p.behind.as_str(),
            p.cushion_port_min.as_deref(),
            p.cushion_port_max.as_deref()
        ),
        ("cyl_cap_bore", Some("cyl_cap"), None)
    );
    for key in ["cushion_needle_area", "port_diameter", "port_volume"] {
        let without: String = CUSHION
            .lines()
            .filter(|l| !l.starts_with(key))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = one_error(&format!("{CYLINDER}{without}"));
        assert_eq!(e.key, format!("cylinder.cyl.{key}"), "{e}");
        assert!(e.message.contains("a cushioned cylinder needs"), "{e}");
    }
    let e = one_error(&format!("{CYLINDER}port_volume = \"1 cm^3\"\n"));
    assert_eq!(e.key, "cylinder.cyl.port_volume");
    assert!(e.message.contains("give its `cushion_length`"), "{e}");
}

#[test]
fn a_cylinders_cushions_fit_its_stroke_and_bore() {
    let e = one_error(
        &format!("{CYLINDER}{CUSHION}rod_diameter = \"12 mm\"\n").replace("\"20 mm\"", "\"60 mm\""),
    );
    assert_eq!(e.key, "cylinder.cyl.cushion_length");
    assert!(e.message.contains("does not fit"), "{e}");
    // One end only on a single-acting cylinder: 60 mm of 100 fits.
    load(&format!("{CYLINDER}{CUSHION}").replace("\"20 mm\"", "\"60 mm\"")).expect("valid");
    let e = one_error(&format!("{CYLINDER}{CUSHION}").replace("\"4 mm\"", "\"40 mm\""));
    assert_eq!(e.key, "cylinder.cyl.port_diameter");
    let e = one_error(&format!(
        "{CYLINDER}{CUSHION}rod_port_volume = \"1 cm^3\"\n"
    ));
    assert_eq!(e.key, "cylinder.cyl.rod_port_volume");
    assert!(e.message.contains("give its `rod_diameter`"), "{e}");
}

const PISTON: &str = r#"[[chamber]]
name = "bore"
volume = "2 cm^3"
pressure = 1e5
temperature = 293.15
[[piston]]
name = "p"
behind = "bore"
ahead = "atm"
area = 8e-4
mass = 0.5
x0 = 0.05
x_max = 0.1
cushion_length = 0.02
cushion_port_area = 1e-5
"#;

#[test]
fn a_pistons_cushion_needs_its_stop_and_needle() {
    let e = one_error(&format!(
        "{PISTON}cushion_port_min = \"exhaust\"\ncushion_needle_area_min = 1e-7\n"
    ));
    assert_eq!(e.key, "piston.p.cushion_port_min");
    assert!(e.message.contains("give `x_min`"), "{e}");
    let e = one_error(&format!(
        "{PISTON}x_min = 0.0\ncushion_port_min = \"exhaust\"\n"
    ));
    assert_eq!(e.key, "piston.p.cushion_needle_area_min");
    let e = one_error(&format!("{PISTON}x_min = 0.0\n"));
    assert_eq!(e.key, "piston.p.cushion_length");
    assert!(e.message.contains("for a cushioned end"), "{e}");
    load(&format!(
        "{PISTON}x_min = 0.0\ncushion_port_min = \"exhaust\"\ncushion_needle_area_min = 1e-7\n"
    ))
    .expect("valid");
}

/// A cushion needle is a parameter (a number, a table or an FMU input): a table of areas is
/// valid; a hostile one (negative, NaN in a table, wider than the bore: π·(32 mm)²/4 ≈ 8.04e-4
/// m² for the cylinder, `area` = 8e-4 m² for the piston) is refused at its key. The
/// cylinder's rod end takes the cap's needle (its table too) unless given its own.
#[test]
fn a_hostile_cushion_needle_is_refused_at_its_key() {
    let table = "{ table = [[0.0, 3e-7], [0.05, 1e-7]], interpolation = \"step\" }";
    let with_needle = |needle: &str| {
        format!("{CYLINDER}{CUSHION}rod_diameter = \"12 mm\"\n").replace("\"0.3 mm^2\"", needle)
    };
    let m = load(&with_needle(table)).expect("a table is valid");
    let p = &m.spec.piston[0];
    println!(
        "the cylinder's piston's needles: {:?}, {:?}",
        p.cushion_needle_area_min, p.cushion_needle_area_max
    );
    assert_eq!(p.cushion_needle_area_min, p.cushion_needle_area_max);
    assert!(matches!(
        p.cushion_needle_area_min,
        Some(plenum::param::ParamSpec::Table(_))
    ));
    for (needle, key, says) in [
        ("-1e-7", "cylinder.cyl.cushion_needle_area", "or more"),
        (
            "{ table = [[0.0, 3e-7], [0.05, nan]] }",
            "cylinder.cyl.cushion_needle_area",
            "finite",
        ),
        (
            "1e-3",
            "cylinder.cyl.cushion_needle_area",
            "wider than the bore",
        ),
        (
            "{ table = [[0.0, 3e-7], [0.05, 9e-4]] }",
            "cylinder.cyl.cushion_needle_area",
            "wider than the bore",
        ),
    ] {
        let e = one_error(&with_needle(needle));
        assert!(e.key.starts_with(key), "{needle}: {e}");
        assert!(e.message.contains(says), "{needle}: {e}");
    }
    let e = one_error(&format!(
        "{}rod_cushion_needle_area = 2e-3\n",
        with_needle("3e-7")
    ));
    assert_eq!(e.key, "cylinder.cyl.rod_cushion_needle_area");
    assert!(e.message.contains("wider than the bore"), "{e}");
    let piston = |needle: &str| {
        format!(
            "{PISTON}x_min = 0.0\ncushion_port_min = \"exhaust\"\ncushion_needle_area_min = \
             {needle}\n"
        )
    };
    load(&piston(table)).expect("a table is valid");
    let e = one_error(&piston("8.5e-4"));
    assert_eq!(e.key, "piston.p.cushion_needle_area_min");
    assert!(e.message.contains("wider than the bore"), "{e}");
}
