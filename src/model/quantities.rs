//! Values written with units (`pressure = "6 bar"`, a table row `[ "5 ms", "2 bar" ]`,
//! `--set barrel.pressure="6 bar"`): each string where a number goes is parsed against the
//! key's declared quantity (`crate::components::keys`, the sections' keys below) and replaced in
//! the spanned tree by its SI number, before serde sees the tree. A replaced value keeps its
//! span, so every later error about it still points at what the user wrote.
//!
//! The parser is `plenum_units::parse`; this module knows which key has which quantity.

use toml::Spanned;
use toml::de::DeValue;

use super::locate::{Path, Seg, key};
use crate::components::keys::{Form, Key, Kind};
use crate::units::Unit;
use crate::units::parse::{QuantityError, quantity_si};

/// The quantity of a section's number key (`None`: not a number key, or one without a single
/// unit: `solver.atol` bounds states of several units).
pub(crate) fn section_unit(section: &str, k: &str) -> Option<Unit> {
    Some(match (section, k) {
        ("gas", "R" | "cp") => Unit::specific_heat(),
        ("gas", "p_critical") => Unit::pressure(),
        ("gas", "T_critical") => Unit::temperature(),
        (
            "solver",
            "step" | "max_step" | "initial_step" | "t_start" | "t_end" | "output_interval"
            | "max_time",
        ) => Unit::time(),
        ("solver", "rtol") => Unit::dimensionless(),
        (
            "checks",
            "mass_drift" | "energy_drift" | "mass_gradient_drift" | "energy_gradient_drift",
        ) => Unit::dimensionless(),
        ("checks", "piston_desync") => Unit::length(),
        _ => return None,
    })
}

/// A value with a unit found in the tree: where, what was written, and its SI value or why it
/// has none.
pub(crate) struct Found {
    pub path: Path,
    pub text: String,
    pub result: Result<f64, String>,
}

/// "a pressure", "an area".
fn article(noun: &str) -> String {
    let vowel = noun.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {noun}", if vowel { "an" } else { "a" })
}

/// The message for a value that could not be converted.
fn message(name: &str, text: &str, unit: &Unit, e: &QuantityError) -> String {
    let (quantity, example) = unit.quantity_name();
    let si = match crate::components::keys::message_unit(unit) {
        s if s.is_empty() => String::new(),
        s => format!(" (SI:{s})"),
    };
    let example = if example.is_empty() {
        String::new()
    } else {
        format!(", e.g. \"{example}\"")
    };
    match e {
        QuantityError::Dimension { found } => {
            let (found_name, _) = Unit {
                symbol: String::new(),
                si: *found,
            }
            .quantity_name();
            let unit_text = text.trim_start_matches(|c: char| {
                c.is_ascii_digit() || "+-.eE".contains(c) || c.is_whitespace()
            });
            let what = if found_name == "quantity" {
                e.to_string()
            } else {
                article(found_name)
            };
            // A volume flow for a mass flow: name the standard (ANR) volume flows.
            let standard = if *unit == Unit::mass_rate() && *found == Unit::volume_rate().si {
                format!(
                    "; a standard volume flow is a mass flow: write {} (at ISO 8778's \
                     20 °C, 100 kPa, ρ = 1.185 kg/m³)",
                    crate::units::parse::STANDARD_FLOW_UNITS
                )
            } else {
                String::new()
            };
            format!(
                "`{name}` = \"{text}\": `{name}` is {}{si}{example}, but `{unit_text}` is \
                 {what}{standard}",
                article(quantity)
            )
        }
        _ => format!(
            "`{name}` = \"{text}\": {e}; `{name}` is {}{si}{example}",
            article(quantity)
        ),
    }
}

fn convert_string(
    found: &mut Vec<Found>,
    path: &[Seg],
    name: &str,
    v: &Spanned<DeValue<'_>>,
    unit: &Unit,
) {
    if let DeValue::String(s) = v.get_ref() {
        let absolute = *unit == Unit::temperature();
        let result = quantity_si(s, &unit.si, absolute).map_err(|e| message(name, s, unit, &e));
        found.push(Found {
            path: path.to_vec(),
            text: s.to_string(),
            result,
        });
    }
}

/// A component key's value: a string, a table's rows, a cubic curve's times.
fn component_value(found: &mut Vec<Found>, path: &mut Path, v: &Spanned<DeValue<'_>>, unit: &Unit) {
    let name = match path.last() {
        Some(Seg::Key(k)) => k.clone(),
        _ => String::new(),
    };
    let time = Unit::time();
    match v.get_ref() {
        DeValue::String(_) => convert_string(found, path, &name, v, unit),
        DeValue::Table(t) => {
            if let Some(rows) = t.get("table")
                && let DeValue::Array(rows) = rows.get_ref()
            {
                path.push(key("table"));
                for (r, row) in rows.iter().enumerate() {
                    if let DeValue::Array(cells) = row.get_ref()
                        && cells.len() == 2
                    {
                        path.push(Seg::Index(r));
                        for (c, u, n) in [(0, &time, "time"), (1, unit, name.as_str())] {
                            path.push(Seg::Index(c));
                            convert_string(found, path, n, &cells[c], u);
                            path.pop();
                        }
                        path.pop();
                    }
                }
                path.pop();
            }
            if let Some(cubic) = t.get("cubic")
                && let DeValue::Table(c) = cubic.get_ref()
            {
                path.push(key("cubic"));
                for k in ["t_open", "duration"] {
                    if let Some(x) = c.get(k) {
                        path.push(key(k));
                        convert_string(found, path, k, x, &time);
                        path.pop();
                    }
                }
                path.pop();
            }
        }
        _ => {}
    }
}

/// A catalogue curve's rows `[x, y]`: x of its argument's quantity, y of the key's (both
/// declared with the key, [`Key::argument`]).
fn curve_rows(found: &mut Vec<Found>, path: &mut Path, v: &Spanned<DeValue<'_>>, spec: &Key) {
    let name = match path.last() {
        Some(Seg::Key(k)) => k.clone(),
        _ => String::new(),
    };
    let DeValue::Array(rows) = v.get_ref() else {
        return;
    };
    let (argument, unit) = (
        spec.argument_unit().unwrap_or_else(Unit::dimensionless),
        &spec.unit(),
    );
    for (r, row) in rows.iter().enumerate() {
        if let DeValue::Array(cells) = row.get_ref()
            && cells.len() == 2
        {
            path.push(Seg::Index(r));
            for (c, u) in [(0, &argument), (1, unit)] {
                path.push(Seg::Index(c));
                convert_string(found, path, &name, &cells[c], u);
                path.pop();
            }
            path.pop();
        }
    }
}

/// Every string with a unit where a number goes, converted (or why not).
pub(crate) fn find(root: &Spanned<DeValue<'_>>) -> Vec<Found> {
    let mut found = Vec::new();
    let DeValue::Table(top) = root.get_ref() else {
        return found;
    };
    for (name, v) in top.iter() {
        let name: &str = name.get_ref();
        match v.get_ref() {
            DeValue::Table(t) => {
                for (k, x) in t.iter() {
                    let k: &str = k.get_ref();
                    if let Some(unit) = section_unit(name, k) {
                        convert_string(&mut found, &[key(name), key(k)], k, x, &unit);
                    }
                }
            }
            DeValue::Array(items) => {
                let Some(kind) = super::parts::kind_or_part(name) else {
                    continue;
                };
                for (i, item) in items.iter().enumerate() {
                    if let DeValue::Table(t) = item.get_ref() {
                        component(&mut found, kind, name, i, t);
                    }
                }
            }
            _ => {}
        }
    }
    found
}

fn component(found: &mut Vec<Found>, kind: &Kind, name: &str, i: usize, t: &toml::de::DeTable<'_>) {
    for (k, x) in t.iter() {
        let k: &str = k.get_ref();
        let mut path = vec![key(name), Seg::Index(i), key(k)];
        match kind.key(k) {
            Some(spec) if spec.is_numeric() => component_value(found, &mut path, x, &spec.unit()),
            Some(spec) if spec.form == Form::Curve => curve_rows(found, &mut path, x, spec),
            _ => {}
        }
    }
}

/// The converted numbers as TOML float text (Rust's shortest round-trip form, which TOML
/// reads back to the same f64).
pub(crate) fn float_text(v: f64) -> String {
    format!("{v:?}")
}

/// Replace the node at `path` by `value` (keeping the node's span).
pub(crate) fn replace<'a>(root: &mut Spanned<DeValue<'a>>, path: &[Seg], value: DeValue<'a>) {
    let mut cur = root;
    for seg in path {
        let next = match (seg, cur.get_mut()) {
            (Seg::Key(k), DeValue::Table(t)) => t.get_mut(k.as_str()),
            (Seg::Index(i), DeValue::Array(a)) => a.get_mut(*i),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    let span = cur.span();
    *cur = Spanned::new(span, value);
}

/// Convert every value with a unit of `root` to its SI number in place, then call `f` with the
/// converted tree and what was found (the errors among it are the values that could not be
/// converted, still strings in the tree).
pub(crate) fn with_si<R>(
    root: Spanned<DeValue<'_>>,
    f: impl for<'b> FnOnce(Spanned<DeValue<'b>>, Vec<Found>) -> R,
) -> R {
    let found = find(&root);
    let texts: Vec<String> = found
        .iter()
        .map(|x| x.result.as_ref().map_or(String::new(), |v| float_text(*v)))
        .collect();
    let mut root = root;
    for (x, text) in found.iter().zip(&texts) {
        if x.result.is_ok()
            && let Ok(v) = DeValue::parse(text)
        {
            replace(&mut root, &x.path, v.into_inner());
        }
    }
    f(root, found)
}
