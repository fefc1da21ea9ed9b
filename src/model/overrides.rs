//! `--set name=value`: change one key of a component (`<component name>.<key>`) or of a section
//! (`model`, `gas`, `solver`, `checks`, `inputs`: `<section>.<key>`) before deserializing.
//!
//! An override is applied twice, with the same lookup: spliced into the spanned tree that is
//! deserialized and validated (with virtual spans past the end of the file, so positions in the
//! file stay the file's own and errors in an overridden value point at the override), and
//! applied to a `toml_edit` document whose text becomes [`LoadedModel::source`]
//! (what an FMU ships in `resources/model.toml`).
//!
//! [`LoadedModel::source`]: super::LoadedModel::source

use std::borrow::Cow;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};
use toml_edit::{DocumentMut, Item, TableLike};

use super::ModelError;
use super::locate::{AppliedOverride, Path, Seg, key, table_mut};

/// Sections: single tables that are not components (`[solver]`, not `[[chamber]]`).
pub const SECTIONS: &[&str] = &[
    "model",
    "gas",
    "solver",
    "checks",
    "inputs",
    "sensitivities",
];

fn set_error(text: &str, message: String) -> ModelError {
    ModelError {
        file: "--set".to_string(),
        line: 0,
        column: 0,
        key: text.to_string(),
        message,
    }
}

/// Shift every span of a value by `base` (to the virtual range of its override).
pub(crate) fn shift<'a>(v: Spanned<DeValue<'a>>, base: usize) -> Spanned<DeValue<'a>> {
    let s = v.span();
    let inner = match v.into_inner() {
        DeValue::Table(t) => DeValue::Table(
            t.into_iter()
                .map(|(k, v)| {
                    let ks = k.span();
                    (
                        Spanned::new(ks.start + base..ks.end + base, k.into_inner()),
                        shift(v, base),
                    )
                })
                .collect::<DeTable<'a>>(),
        ),
        DeValue::Array(a) => DeValue::Array(a.into_iter().map(|e| shift(e, base)).collect()),
        other => other,
    };
    Spanned::new(s.start + base..s.end + base, inner)
}

/// Names of all components in the tree, for messages.
fn component_names(root: &Spanned<DeValue<'_>>) -> Vec<String> {
    let mut names = Vec::new();
    if let DeValue::Table(t) = root.get_ref() {
        for (k, v) in t.iter() {
            if SECTIONS.contains(&k.get_ref().as_ref()) {
                continue;
            }
            if let DeValue::Array(a) = v.get_ref() {
                for e in a.iter() {
                    if let DeValue::Table(c) = e.get_ref()
                        && let Some(DeValue::String(n)) = c.get("name").map(|n| n.get_ref())
                    {
                        names.push(n.to_string());
                    }
                }
            }
        }
    }
    names
}

/// The table an override names: a component `[kind, index]` by its `name`, else a section.
fn target(root: &Spanned<DeValue<'_>>, name: &str) -> Option<Path> {
    if let DeValue::Table(t) = root.get_ref() {
        for (k, v) in t.iter() {
            let kind = k.get_ref().as_ref();
            if SECTIONS.contains(&kind) {
                continue;
            }
            if let DeValue::Array(a) = v.get_ref() {
                for (i, e) in a.iter().enumerate() {
                    if let DeValue::Table(c) = e.get_ref()
                        && let Some(DeValue::String(n)) = c.get("name").map(|n| n.get_ref())
                        && n == name
                    {
                        return Some(vec![key(kind), Seg::Index(i)]);
                    }
                }
            }
        }
    }
    SECTIONS.contains(&name).then(|| vec![key(name)])
}

/// The table of a `toml_edit` document at a target path (created for a missing section).
fn doc_table<'d>(doc: &'d mut DocumentMut, path: &[Seg]) -> Option<&'d mut dyn TableLike> {
    match path {
        [Seg::Key(section)] => doc
            .entry(section)
            .or_insert(Item::Table(toml_edit::Table::new()))
            .as_table_like_mut(),
        [Seg::Key(kind), Seg::Index(i)] => match doc.get_mut(kind)? {
            Item::ArrayOfTables(aot) => aot.get_mut(*i).map(|t| t as &mut dyn TableLike),
            item => item
                .as_array_mut()?
                .get_mut(*i)?
                .as_inline_table_mut()
                .map(|t| t as &mut dyn TableLike),
        },
        _ => None,
    }
}

/// A number followed by a unit (`6bar`, `20 degC`): what `--set` takes without quotes.
fn looks_like_quantity(value: &str) -> bool {
    value.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c))
        && value.contains(|c: char| c.is_alphabetic() || "°%".contains(c))
        && !value.contains(['"', '\'', '=', '[', '{', '\n'])
}

/// Apply the overrides to the spanned tree `root` (of a file `src_len` bytes long) and, when
/// there are any, to `src` as text. Returns what was applied, the text after overrides, and
/// the errors of overrides that could not be applied.
pub(crate) fn apply<'a>(
    root: &mut Spanned<DeValue<'a>>,
    src: &str,
    overrides: &'a [String],
) -> (Vec<AppliedOverride>, String, Vec<ModelError>) {
    let mut applied = Vec::new();
    let mut errors = Vec::new();
    if overrides.is_empty() {
        return (applied, src.to_string(), errors);
    }
    let mut doc = src.parse::<DocumentMut>().ok();
    let mut base = src.len() + 1;
    for text in overrides {
        let Some((name, value)) = text.split_once('=') else {
            errors.push(set_error(
                text,
                "expected `name=value`, e.g. `barrel.pressure=5e5` or `solver.t_end=0.1`"
                    .to_string(),
            ));
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        let Some((head, k)) = name
            .split_once('.')
            .filter(|(h, k)| !h.is_empty() && !k.is_empty())
        else {
            errors.push(set_error(
                text,
                format!(
                    "`{name}` is not `<component>.<key>` or `<section>.<key>` \
                     (sections: {})",
                    SECTIONS.join(", ")
                ),
            ));
            continue;
        };
        if k.contains('.') {
            errors.push(set_error(
                text,
                format!("`{k}` is not a single key of `{head}` (nested keys cannot be set)"),
            ));
            continue;
        }
        let Some(table_path) = target(root, head) else {
            let names = component_names(root);
            let known = names
                .iter()
                .map(String::as_str)
                .chain(SECTIONS.iter().copied());
            errors.push(set_error(
                text,
                format!(
                    "no component or section named `{head}` (components: {}; sections: {}){}",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    },
                    SECTIONS.join(", "),
                    super::locate::did_you_mean(head, known)
                ),
            ));
            continue;
        };
        // A quantity with a unit need not be quoted: `--set barrel.pressure=6bar`.
        let unquoted_quantity = DeValue::parse(value).is_err() && looks_like_quantity(value);
        let parsed = match DeValue::parse(value) {
            Ok(v) => v,
            Err(_) if unquoted_quantity => Spanned::new(
                0..value.len(),
                DeValue::String(Cow::Owned(value.to_string())),
            ),
            Err(e) => {
                let bare = !value.is_empty()
                    && value
                        .chars()
                        .all(|c| c.is_alphanumeric() || "_-./ ".contains(c));
                let hint = if value.is_empty() {
                    "a value is missing after `=`".to_string()
                } else if bare {
                    format!("strings need quotes: {name}=\"{value}\"")
                } else {
                    e.message().to_string()
                };
                errors.push(set_error(
                    text,
                    format!("`{value}` is not a TOML value ({hint})"),
                ));
                continue;
            }
        };
        let key_span: Range<usize> = base..base + 1;
        let end = base + 1 + value.len();
        let Some(table) = table_mut(root, &table_path, &(base..end)) else {
            errors.push(set_error(
                text,
                format!("`{head}` in the file is not a table, so `{k}` cannot be set in it"),
            ));
            continue;
        };
        table.insert(
            Spanned::new(key_span, Cow::Owned(k.to_string())),
            shift(parsed, base + 1),
        );
        let mut path = table_path.clone();
        path.push(key(k));
        applied.push(AppliedOverride {
            text: text.clone(),
            path,
            span: base..end,
        });
        base = end + 1;

        // The same change as text. A value that toml parsed parses here too (same parser).
        let as_text = if unquoted_quantity {
            Ok(toml_edit::Value::from(value))
        } else {
            value.parse::<toml_edit::Value>()
        };
        if let Some(d) = doc.as_mut()
            && let Ok(mut v) = as_text
            && let Some(t) = doc_table(d, &table_path)
        {
            match t.get(k).and_then(Item::as_value) {
                Some(old) => *v.decor_mut() = old.decor().clone(),
                None => v.decor_mut().clear(),
            }
            t.insert(k, Item::Value(v));
        }
    }
    let text = match doc {
        Some(d) => d.to_string(),
        None => src.to_string(),
    };
    (applied, text, errors)
}
