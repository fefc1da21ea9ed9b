//! Plausibility warnings: values that obey their key's rule but are far outside what a gas
//! network holds, most often a unit mistake (`pressure = 6.0` meant as bar runs at 6 Pa). They
//! are warnings, never errors: `plenum check` and `plenum run` print them, an FMU logs them at
//! fmi2Instantiate and, for parameters set before, at fmi2ExitInitializationMode.

use super::ModelError;
use super::locate::{Locator, Path, Seg, key};
use super::quantities::Found;
use super::spec::{ModelFile, ParamSpec};
use crate::components::keys::{Rule, Value};
use crate::units::Unit;
use crate::units::parse::{from_si, quantity_si, written_unit};
use crate::units::text::{approx, number};

/// The plausible range of each quantity checked, and what a value outside it probably meant.
/// `(unit, low, high)`; a bound of `None` is not checked.
struct Range {
    unit: Unit,
    low: Option<f64>,
    high: Option<f64>,
}

fn ranges() -> [Range; 6] {
    [
        // Absolute pressures (keys whose rule is an absolute pressure only).
        Range {
            unit: Unit::pressure(),
            low: Some(1e3),
            high: Some(1e9),
        },
        Range {
            unit: Unit::temperature(),
            low: Some(100.0),
            high: Some(3000.0),
        },
        Range {
            unit: Unit::area(),
            low: None,
            high: Some(1.0),
        },
        Range {
            unit: Unit::volume(),
            low: None,
            high: Some(1.0),
        },
        Range {
            unit: Unit::length(),
            low: None,
            high: Some(10.0),
        },
        // ISO 6358 catalogue ratings span about 0.01 to 1000 dm³/(s·bar).
        Range {
            unit: Unit::sonic_conductance(),
            low: Some(1e-12),
            high: Some(1e-5),
        },
    ]
}

/// A value the range's quantity typically has, and what it is (for a hint in the user's unit).
fn typical(unit: &Unit) -> Option<(f64, &'static str)> {
    if *unit == Unit::pressure() {
        Some((101_325.0, "the atmosphere is"))
    } else if *unit == Unit::temperature() {
        Some((293.15, "20 °C is"))
    } else {
        None
    }
}

/// What a value `v` (SI) of `name` outside its range probably meant, when it was written as a
/// bare number (in SI units): the same number in the unit it was probably meant in, when that
/// is plausible.
fn hint_si(name: &str, v: f64, unit: &Unit, low: bool) -> String {
    let p = Unit::pressure();
    let t = Unit::temperature();
    let si = crate::components::keys::message_unit(unit);
    let range = ranges().into_iter().find(|r| r.unit == *unit);
    let plausible = |x: f64| {
        range
            .as_ref()
            .is_some_and(|r| r.low.is_none_or(|l| x >= l) && r.high.is_none_or(|h| x <= h))
    };
    // The SI value as the model file would read the suggestion (the same parser).
    let same = |u: &str| {
        let text = format!("{} {u}", number(v));
        match quantity_si(&text, &unit.si, *unit == t) {
            Ok(x) if plausible(x) => {
                format!("did you mean {name} = \"{text}\" = {}{si}?", approx(x))
            }
            _ => "check its value and its unit".to_string(),
        }
    };
    match (low, unit) {
        (true, u) if *u == p => format!("below 1 kPa for an absolute pressure: {}", same("bar")),
        (false, u) if *u == p => {
            "above 1 GPa: check its unit (e.g. \"6 bar\", \"600 kPa\")".to_string()
        }
        (true, u) if *u == t => format!("below 100 K: {}", same("degC")),
        (false, u) if *u == t => {
            "above 3000 K: check its unit (e.g. \"20 degC\", \"300 K\")".to_string()
        }
        (false, u) if *u == Unit::area() => format!("above 1 m^2: {}", same("mm^2")),
        (false, u) if *u == Unit::volume() => format!("above 1 m^3: {}", same("L")),
        (false, u) if *u == Unit::length() => format!("above 10 m: {}", same("mm")),
        (false, _) => format!(
            "above 1e-5 m^3/(s Pa) = 1000 dm^3/(s bar), beyond catalogue ratings: {}",
            same("dm^3/(s*bar)")
        ),
        (true, _) => "below 1e-12 m^3/(s Pa) = 1e-4 dm^3/(s bar), beyond catalogue ratings: \
                      check its unit"
            .to_string(),
    }
}

/// The bound a value outside `range` crossed, in words (`below 1000 Pa for an absolute
/// pressure`), and its SI value.
fn bound(unit: &Unit, range: &Range, low: bool) -> Option<(String, f64)> {
    let si = crate::components::keys::message_unit(unit);
    let b = if low { range.low? } else { range.high? };
    let words = if low { "below" } else { "above" };
    let what = if *unit == Unit::pressure() {
        " for an absolute pressure"
    } else {
        ""
    };
    Some((format!("{words} {}{si}{what}", approx(b)), b))
}

/// [`hint_si`] for a value written with a unit (`"6 mbar"`): the bound it crossed and a
/// typical value, both in that unit, since the number, not the unit, is what may be wrong.
fn hint_in(written: &str, unit: &Unit, range: &Range, low: bool) -> String {
    let absolute = *unit == Unit::temperature();
    let in_unit = |x: f64| from_si(x, written, absolute).ok().map(approx);
    let Some((words, b)) = bound(unit, range, low) else {
        return "check its value and its unit".to_string();
    };
    let Some(b_written) = in_unit(b) else {
        return format!("{words}: check its value and its unit");
    };
    let example = typical(unit)
        .and_then(|(x, what)| Some(format!(" ({what} {} {written})", in_unit(x)?)))
        .unwrap_or_default();
    let side = if low { "at least" } else { "at most" };
    format!("{words}: did you mean {side} {b_written} {written}{example}?")
}

/// Every implausible value of the model's components (numbers and table values), located.
/// `found`: the values written with a unit (a hint answers in that unit).
pub(crate) fn warnings(spec: &ModelFile, loc: &Locator<'_>, found: &[Found]) -> Vec<ModelError> {
    let liquid = super::validate::liquid_nodes(spec);
    let ranges = ranges();
    let mut out = Vec::new();
    for (i, x) in spec.components() {
        let kind = x.kind();
        for k in kind.keys.iter().filter(|k| k.is_numeric()) {
            let unit = k.unit();
            let Some(range) = ranges.iter().find(|r| r.unit == unit) else {
                continue;
            };
            // Only absolute pressures: not a pressure difference, nor a gauge pressure of a
            // reservoir of liquid.
            let absolute = matches!(k.rule, Rule::Absolute | Rule::AbsoluteUnlessLiquid)
                && !liquid.contains(x.name());
            if unit == Unit::pressure() && !absolute {
                continue;
            }
            let path: Path = vec![key(kind.name), Seg::Index(i), key(k.name)];
            let values: Vec<(Path, f64)> = match x.value(k.name) {
                Some(Value::Number(v) | Value::Param(&ParamSpec::Const(v))) => vec![(path, v)],
                Some(Value::Param(ParamSpec::Table(t))) => t
                    .table
                    .iter()
                    .enumerate()
                    .map(|(r, row)| {
                        let mut p = path.clone();
                        p.extend([key("table"), Seg::Index(r), Seg::Index(1)]);
                        (p, row[1])
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for (p, v) in values {
                let low = range.low.is_some_and(|l| v < l);
                let high = range.high.is_some_and(|h| v > h);
                if low || high {
                    let si = crate::components::keys::message_unit(&unit);
                    let written = found
                        .iter()
                        .find(|f| f.path == p)
                        .and_then(|f| Some((f.text.as_str(), written_unit(&f.text)?)));
                    let (shown, hint) = match written {
                        Some((text, u)) => (
                            format!("\"{text}\" = {}{si}", approx(v)),
                            hint_in(u, &unit, range, low),
                        ),
                        None => (format!("{}{si}", number(v)), hint_si(k.name, v, &unit, low)),
                    };
                    out.push(loc.error(&p, format!("`{}` = {shown} is {hint}", k.name)));
                }
            }
        }
    }
    out
}
