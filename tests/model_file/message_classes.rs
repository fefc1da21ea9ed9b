//! The wording of model-file messages, class by class: a "did you mean" answers in the unit the
//! user wrote; no number takes more than 17 significant digits whatever its magnitude; a number
//! too small for a double is an underflow, not a 0; an initial state no double holds names its
//! chamber and key; a table row, a cubic opening, a NaN time, a pressure difference and an
//! integer too large each say what they are; a name holding a character that prints as nothing
//! is refused and shown escaped.

use plenum::model::{LoadedModel, ModelError, parse_str};
use plenum::units::Unit;
use plenum::units::parse::quantity_si;

/// One chamber venting through a relief valve (an orifice with a poppet) into the atmosphere;
/// `{P}`, `{T}`, `{OPENING}`, `{SOLVER}`, `{ATM}` and `{NAME}` are filled in by each test.
const BASE: &str = r#"
[model]
name = "classes"
[gas]
species = "air"
[solver]
method = "rk4"
step = 1e-4
t_end = 0.01
{SOLVER}
[[chamber]]
name = "{NAME}"
volume = 1e-3
pressure = {P}
temperature = {T}
[[reservoir]]
name = "atm"
pressure = {ATM}
temperature = 300.0
[[orifice]]
name = "relief"
from = "{NAME}"
to = "atm"
area = 1e-6
cracking_pressure = 1e5
full_flow_pressure = 2e5
{OPENING}
"#;

fn model(fill: &[(&str, &str)]) -> String {
    let mut s = BASE.to_string();
    for (k, v) in fill {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    for (k, v) in [
        ("P", "6e5"),
        ("T", "300.0"),
        ("OPENING", ""),
        ("SOLVER", ""),
        ("ATM", "101325.0"),
        ("NAME", "tank"),
    ] {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s
}

fn load(fill: &[(&str, &str)], set: &[&str]) -> Result<LoadedModel, Vec<ModelError>> {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    parse_str(&model(fill), "classes.toml", &set)
}

/// The errors of a model that must be refused, printed.
fn errors(fill: &[(&str, &str)], set: &[&str]) -> Vec<ModelError> {
    match load(fill, set) {
        Ok(_) => panic!("accepted: {fill:?} {set:?}"),
        Err(e) => {
            for x in &e {
                println!("  {x}");
            }
            e
        }
    }
}

/// The one error of a refused model, at `key`.
fn one_error(fill: &[(&str, &str)], set: &[&str], key: &str) -> String {
    let e = errors(fill, set);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].key, key);
    e[0].to_string()
}

/// The one warning of an accepted model.
fn one_warning(fill: &[(&str, &str)], set: &[&str]) -> String {
    let m = load(fill, set).unwrap_or_else(|e| panic!("{e:#?}"));
    for w in &m.warnings {
        println!("  {w}");
    }
    assert_eq!(m.warnings.len(), 1, "{:#?}", m.warnings);
    m.warnings[0].to_string()
}

/// The number before ` {unit}` after `words` in `text` (`at least 10 mbar`: 10).
fn number_before(text: &str, words: &str, unit: &str) -> f64 {
    let rest = &text[text
        .find(words)
        .unwrap_or_else(|| panic!("{words:?} in {text}"))
        + words.len()..];
    let end = rest
        .find(&format!(" {unit}"))
        .unwrap_or_else(|| panic!("{unit} after {words:?} in {text}"));
    rest[..end]
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("a number in {:?}", &rest[..end]))
}

/// A value written with a unit that is implausible gets its hint in that unit: the bound it
/// crossed (1 kPa, 100 K) and a typical value (the atmosphere, 20 °C) written in the unit,
/// which the model file's own parser reads back to the SI values. It said "did you mean 600
/// bar" for `6 mbar`, and "0.372 degC" for `-459 degF`.
#[test]
fn did_you_mean_answers_in_the_unit_written() {
    let p = Unit::pressure();
    let t = Unit::temperature();
    let cases: [(&str, &str, &str, &Unit, f64, f64); 6] = [
        ("P", "\"6 mbar\"", "mbar", &p, 1e3, 101_325.0),
        ("P", "\"6 ubar\"", "ubar", &p, 1e3, 101_325.0),
        ("P", "\"6 µbar\"", "µbar", &p, 1e3, 101_325.0),
        ("P", "\"0.05 psi\"", "psi", &p, 1e3, 101_325.0),
        ("T", "\"-459 degF\"", "degF", &t, 100.0, 293.15),
        ("T", "\"20 mK\"", "mK", &t, 100.0, 293.15),
    ];
    for (key, value, unit, quantity, bound, typical) in cases {
        println!("{key} = {value}:");
        let w = one_warning(&[(key, value)], &[]);
        assert!(w.contains(&format!("= {value} =")), "{w}");
        let absolute = *quantity == t;
        let si = |x: f64| quantity_si(&format!("{x} {unit}"), &quantity.si, absolute).unwrap();
        let b = si(number_before(&w, "did you mean at least ", unit));
        let words = if *quantity == p {
            "the atmosphere is "
        } else {
            "20 °C is "
        };
        let ty = si(number_before(&w, words, unit));
        println!("    bound {b} (want {bound}), typical {ty} (want {typical})");
        assert!(((b - bound) / bound).abs() < 1e-5, "{w}");
        assert!(((ty - typical) / typical).abs() < 1e-5, "{w}");
        // The unit in every suggestion, and no SI number reinterpreted in another unit.
        assert!(!w.contains(" bar\"") && !w.contains(" degC\""), "{w}");
    }
    // A bare number is in SI units: the likely mistake is the unit, and the hint says so.
    println!("P = 6:");
    let w = one_warning(&[("P", "6")], &[]);
    assert!(
        w.contains("did you mean pressure = \"6 bar\" = 6e5 Pa?"),
        "{w}"
    );
    println!("--set tank.temperature=\"20 mK\":");
    let w = one_warning(&[], &["tank.temperature=\"20 mK\""]);
    assert!(w.contains("at least 1e5 mK"), "{w}");
}

/// The longest run of digits in `text`.
fn longest_digit_run(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// Extreme values in every kind of message (a rule, a table, a cross-key rule, a
/// plausibility hint) are echoed in at most 17 significant digits, as written: 5e-324 made a
/// suggestion of 324 digits, -1e-300 an error of 300.
#[test]
fn no_message_prints_hundreds_of_digits() {
    let cases: [(&str, &str, &str); 8] = [
        ("P", "5e-324", "5e-324"),
        ("P", "1e-300", "1e-300"),
        ("P", "-1e-300", "-1e-300"),
        ("T", "5e-324", "5e-324"),
        ("T", "-2.2250738585072014e-308", "-2.2250738585072014e-308"),
        ("ATM", "{ table = [[1e-300, 1e5], [0.0, 1e5]] }", "1e-300"),
        ("SOLVER", "max_time = -1e-300", "-1e-300"),
        (
            "OPENING",
            "opening = 1.0000000000000002",
            "1.0000000000000002",
        ),
    ];
    for (key, value, echo) in cases {
        println!("{key} = {value}:");
        let texts: Vec<String> = match load(&[(key, value)], &[]) {
            Ok(m) => m
                .warnings
                .iter()
                .map(|w| w.to_string())
                .chain(plenum::model::build_simulation(&m.spec, None).err())
                .collect(),
            Err(e) => e.iter().map(|x| x.to_string()).collect(),
        };
        assert!(!texts.is_empty());
        for text in &texts {
            println!("  {text}");
            assert!(longest_digit_run(text) <= 17, "{text}");
        }
        assert!(
            texts.iter().any(|t| t.contains(echo)),
            "{echo} in {texts:#?}"
        );
    }
}

/// A number that is not 0 as written but 0 as a double is an underflow (it was "`pressure`
/// must be greater than 0 Pa, got 0"), with a unit, bare, in a table and from `--set`; a true
/// 0 is still a 0.
#[test]
fn an_underflow_is_not_a_zero() {
    let cases: [(&str, &str, &[&str], &str); 4] = [
        ("P", "\"1e-400 Pa\"", &[], "chamber.tank.pressure"),
        ("P", "1e-400", &[], "chamber.tank.pressure"),
        (
            "ATM",
            "{ table = [[0.0, 1e5], [1.0, 0.1e-330]] }",
            &[],
            "reservoir.atm.pressure.table[1][1]",
        ),
        (
            "P",
            "6e5",
            &["tank.pressure=1e-400"],
            "tank.pressure=1e-400",
        ),
    ];
    for (key, value, set, at) in cases {
        println!("{key} = {value} {set:?}:");
        let e = one_error(&[(key, value)], set, at);
        assert!(e.contains("underflows") && !e.contains("got 0"), "{e}");
    }
    println!("P = 0.0:");
    let e = one_error(&[("P", "0.0")], &[], "chamber.tank.pressure");
    assert!(e.contains("got 0") && !e.contains("underflows"), "{e}");
}

/// A chamber whose keys each obey their rule but whose initial mass p·V/(R·T) no double holds
/// is refused when it is built, naming the chamber and the key that breaks it (it was "state 0
/// is inf"); the mass is computed here in doubles to show it is so. The FMU refuses such a
/// parameter at fmi2SetReal with the same words (tests/solvers/hostile_fmu.rs).
#[test]
fn an_initial_state_no_double_holds_names_its_chamber_and_key() {
    let r = 8.314_462_618 / 0.028_965;
    for (key, value, p, t, blamed) in [
        ("T", "\"1e-320 K\"", 6e5, 1e-320, "temperature"),
        ("P", "5e-324", 5e-324, 300.0, "pressure"),
        ("T", "1e308", 6e5, 1e308, "temperature"),
    ] {
        let mass: f64 = p * 1e-3 / (r * t);
        println!("{key} = {value}: p·V/(R·T) = {mass:e} kg in doubles");
        assert!(!mass.is_finite() || mass == 0.0);
        let m = load(&[(key, value)], &[]).unwrap_or_else(|e| panic!("{e:#?}"));
        let e = plenum::model::build_simulation(&m.spec, None).unwrap_err();
        println!("  {e}");
        assert!(
            e.contains("chamber `tank`") && e.contains(&format!("its `{blamed}` is too")),
            "{e}"
        );
        assert!(longest_digit_run(&e) <= 17, "{e}");
    }
}

/// A row of a time table that is not `[time, value]` says what a row must be, whatever its
/// cells (a row `["0 s"]` said "`pressure` must be a number, not a string").
#[test]
fn a_table_row_says_what_a_row_must_be() {
    for (table, row, n) in [
        ("[[\"0 s\"], [\"1 s\", \"2 bar\"]]", 0, 1),
        ("[[0.0, 1e5], [\"1 s\"]]", 1, 1),
        ("[[0.0]]", 0, 1),
        ("[[0.0, 1e5, 2e5]]", 0, 3),
    ] {
        println!("table = {table}:");
        let e = one_error(
            &[("ATM", &format!("{{ table = {table} }}"))],
            &[],
            &format!("reservoir.atm.pressure.table[{row}]"),
        );
        assert!(
            e.contains(&format!(
                "a table row must be [time, value] (2 numbers), this one has {n}"
            )),
            "{e}"
        );
    }
}

/// A cubic opening with a key missing or one too many names that key (it said "unknown key
/// `cubic`").
#[test]
fn a_cubic_opening_names_the_key_it_lacks_or_does_not_know() {
    for (opening, key, words) in [
        (
            "{ cubic = { t_open = 0.0 } }",
            "orifice.relief.opening.cubic.duration",
            "missing required key `duration`",
        ),
        (
            "{ cubic = { duration = 1e-3 } }",
            "orifice.relief.opening.cubic.t_open",
            "missing required key `t_open`",
        ),
        (
            "{ cubic = { t_open = 0.0, duration = 1e-3, ramp = 2 } }",
            "orifice.relief.opening.cubic.ramp",
            "unknown key `ramp`",
        ),
    ] {
        println!("opening = {opening}:");
        let e = one_error(&[("OPENING", &format!("opening = {opening}"))], &[], key);
        assert!(
            e.contains(words) && !e.contains("unknown key `cubic`"),
            "{e}"
        );
    }
}

/// A NaN in a table is named by its place: a time or a value, its row (it said "`opening` is
/// nan" for a time).
#[test]
fn a_nan_in_a_table_is_named_by_its_place() {
    for (opening, key, words) in [
        (
            "{ table = [[0.0, 0.5], [nan, 1.0]] }",
            "orifice.relief.opening.table[1][0]",
            "the time in row 1 of the table of `opening` is nan",
        ),
        (
            "{ table = [[0.0, nan]] }",
            "orifice.relief.opening.table[0][1]",
            "the value in row 0 of the table of `opening` is nan",
        ),
    ] {
        println!("opening = {opening}:");
        let e = one_error(&[("OPENING", &format!("opening = {opening}"))], &[], key);
        assert!(e.contains(words), "{e}");
    }
}

/// `full_flow_pressure` is a difference: its rule says no "(absolute)", and a small one draws
/// no "absolute pressure" warning; a chamber's pressure is still absolute.
#[test]
fn a_pressure_difference_is_not_called_absolute() {
    println!("full_flow_pressure = -5:");
    let e = errors(&[("OPENING", "")], &["relief.full_flow_pressure=-5"]);
    let rule = e
        .iter()
        .find(|x| x.message.contains("greater than 0"))
        .expect("the rule's error");
    assert!(!rule.message.contains("absolute"), "{rule}");
    println!("a band of 500 Pa above 1e5:");
    let m = load(&[], &["relief.full_flow_pressure=100500"]).unwrap();
    assert!(m.warnings.is_empty(), "{:#?}", m.warnings);
    let m = load(
        &[],
        &[
            "relief.cracking_pressure=100",
            "relief.full_flow_pressure=600",
        ],
    )
    .unwrap();
    assert!(m.warnings.is_empty(), "{:#?}", m.warnings);
    println!("chamber pressure = -5:");
    let e = one_error(&[("P", "-5")], &[], "chamber.tank.pressure");
    assert!(e.contains("(absolute)"), "{e}");
}

/// A whole number beyond every integer type is too large (it said "not an integer"); the
/// largest one is taken.
#[test]
fn a_whole_number_too_large_says_so() {
    println!("max_steps = 18446744073709551616:");
    let e = one_error(
        &[("SOLVER", "max_steps = 18446744073709551616")],
        &[],
        "solver.max_steps",
    );
    assert!(
        e.contains("too large") && e.contains("18446744073709551615") && !e.contains("not an"),
        "{e}"
    );
    let m = load(&[("SOLVER", "max_steps = 9223372036854775807")], &[]).unwrap();
    assert_eq!(m.spec.solver.max_steps, 9_223_372_036_854_775_807);
}

/// A name holding a character that prints as nothing (a C1 control, a zero-width space, a
/// right-to-left override, a no-break space, a byte-order mark) is refused, and every message
/// that echoes it shows it escaped: U+0085 was echoed as is, a zero-width space was accepted.
#[test]
fn an_invisible_character_in_a_name_is_refused_and_shown_escaped() {
    for (c, escaped) in [
        ('\u{85}', "\\u{85}"),
        ('\u{200B}', "\\u{200b}"),
        ('\u{202E}', "\\u{202e}"),
        ('\u{A0}', "\\u{a0}"),
        ('\u{FEFF}', "\\u{feff}"),
        ('\u{9}', "\\u{9}"),
    ] {
        let name = format!("ta{c}nk");
        println!("name {name:?}:");
        // TOML basic strings take U+0009 and anything but other controls as is: write every
        // character as an escape.
        let toml_name = format!("ta\\u{:04X}nk", u32::from(c));
        let e = errors(&[("NAME", &toml_name)], &[]);
        assert!(
            e.iter().any(|x| x.message.contains("must not contain")),
            "{e:#?}"
        );
        for x in &e {
            let text = x.to_string();
            assert!(text.contains(escaped), "{text}");
            assert!(!text.contains(c), "{text:?}");
        }
    }
    // A key of the file, and a name in --set.
    let e = errors(&[("OPENING", "\"one\\u200Bway\" = true")], &[]);
    assert!(
        e[0].to_string().contains("unknown key `one\\u{200b}way`"),
        "{}",
        e[0]
    );
    assert!(e.iter().all(|x| !x.to_string().contains('\u{200B}')));
    let e = errors(&[], &["t\u{85}nk.pressure=1e5"]);
    for x in &e {
        assert!(x.to_string().contains("t\\u{85}nk"), "{x}");
    }
}
