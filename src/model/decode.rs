//! From the spanned tree to a [`ModelFile`] with serde, turning serde's messages into located
//! errors in a user's words.
//!
//! Serde stops at the first error. To report every problem of this kind at once, the offending
//! key (or component, or section) is removed from a working copy of the tree and deserializing
//! is retried; a "missing key" that only follows from such a removal is not reported.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeValue, ValueDeserializer};

use super::ModelError;
use super::locate::{
    Locator, Path, Prefer, Seg, close, did_you_mean, key, remove, table_mut, type_phrase,
};
use super::overrides::SECTIONS;
use super::overrides::shift;
use super::spec::{CubicSpec, ModelFile, TableSpec};
use crate::components::keys::KeyDefault;

/// The field names serde's derive declares for a struct (its keys), found by asking it to
/// deserialize from a deserializer that only records them.
fn struct_fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{Error, Visitor};
    use std::cell::Cell;

    struct Introspect<'c>(&'c Cell<&'static [&'static str]>);

    impl<'de> serde::Deserializer<'de> for Introspect<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(Error::custom("introspection only"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.set(fields);
            Err(Error::custom("introspection only"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }

    let fields = Cell::new(&[][..]);
    let _ = T::deserialize(Introspect(&fields));
    fields.get()
}

/// Sections that a model must have.
const REQUIRED_SECTIONS: &[&str] = &["model", "solver"];

/// Every name between backticks, in order: serde's way of quoting fields and variants.
fn backticked(msg: &str) -> Vec<&str> {
    msg.split('`').skip(1).step_by(2).collect()
}

/// What a table at `path` is, for "unknown key ... in X".
fn context(loc: &Locator<'_>, table: &[Seg]) -> String {
    match table {
        [] => "the file".to_string(),
        [Seg::Key(s)] => format!("[{s}]"),
        [Seg::Key(kind), Seg::Index(_)] => kind.clone(),
        _ => format!("`{}`", loc.render(table)),
    }
}

/// The last key of a path (for messages that name it).
fn last_key(path: &[Seg]) -> String {
    path.iter()
        .rev()
        .find_map(|s| match s {
            Seg::Key(k) if k != "table" => Some(k.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The source text of a node, when it is short enough to quote.
fn snippet(loc: &Locator<'_>, v: &Spanned<DeValue<'_>>) -> Option<String> {
    let text = loc.src.get(v.span())?;
    (text.len() <= 40 && !text.contains('\n')).then(|| text.to_string())
}

/// serde's "expected ..." in a user's words.
fn expected_phrase(expected: &str) -> String {
    match expected {
        "f64" | "f32" => "a number".to_string(),
        "i64" | "u64" | "usize" => "a whole number".to_string(),
        "a string" => "a string (in quotes)".to_string(),
        "a boolean" => "true or false".to_string(),
        "a sequence" => "an array".to_string(),
        "an array of length 2" => "a [time, value] row".to_string(),
        e if e.starts_with("struct ") => "a table".to_string(),
        e => e.to_string(),
    }
}

/// A table parameter whose rows are not all `[time, value]` pairs.
fn row_shape(loc: &Locator<'_>, path: &[Seg]) -> Option<ModelError> {
    let mut table_path = path.to_vec();
    table_path.push(key("table"));
    let (_, rows) = loc.node(&table_path)?;
    let DeValue::Array(rows) = rows.get_ref() else {
        return None;
    };
    rows.iter().enumerate().find_map(|(r, row)| {
        let mut row_path = table_path.clone();
        row_path.push(Seg::Index(r));
        match row.get_ref() {
            DeValue::Array(a) if a.len() == 2 => None,
            DeValue::Array(a) => Some(loc.error(
                &row_path,
                format!(
                    "a table row must be [time, value] (2 numbers), this one has {}",
                    a.len()
                ),
            )),
            other => Some(loc.error(
                &row_path,
                format!(
                    "a table row must be [time, value] (2 numbers), not {}",
                    type_phrase(other)
                ),
            )),
        }
    })
}

/// What to change in the working tree before deserializing again.
enum Next {
    /// Take out this node (original coordinates; see [`unit`]).
    Remove(Path),
    /// Put a placeholder for a missing key into this table (original coordinates).
    Fill(Path, String),
    Stop,
}

/// One serde error as located errors (usually one) and what to change before retrying.
fn translate(loc: &Locator<'_>, e: &toml::de::Error, removed: &[Path]) -> (Vec<ModelError>, Next) {
    let msg = e.message();
    let span = e.span();

    if let Some(rest) = msg.strip_prefix("missing field ") {
        let field = backticked(rest)
            .first()
            .copied()
            .unwrap_or(rest)
            .to_string();
        let table = loc.table_at(span.as_ref());
        let mut missing = table.clone();
        missing.push(key(&field));
        let next = Next::Fill(table.clone(), field.clone());
        // Missing only because an invalid value was taken out, or misspelled (an unknown key
        // close to it was reported): already said.
        let explained = removed.iter().any(|r| match r.split_last() {
            Some((Seg::Key(k), parent)) => parent == table.as_slice() && close(k, &field),
            _ => false,
        });
        if explained {
            return (Vec::new(), next);
        }
        let message = if table.is_empty() {
            if SECTIONS.contains(&field.as_str()) {
                format!("missing required section [{field}]")
            } else {
                format!("missing required key `{field}`")
            }
        } else {
            format!("missing required key `{field}` in {}", context(loc, &table))
        };
        // Point at the table (its header), name the key that is missing.
        let mut err = loc.error(&table, message);
        if err.file != "--set" {
            err.key = loc.render(&missing);
        }
        return (vec![err], next);
    }

    let Some(span) = span else {
        return (vec![loc.error(&[], msg.to_string())], Next::Stop);
    };

    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let names = backticked(rest);
        let path = loc.path_at(&span, Prefer::Shallow);
        let word = names.first().copied().unwrap_or_default();
        let known: Vec<&str> = names.iter().skip(1).copied().collect();
        let table = &path[..path.len().saturating_sub(1)];
        let message = if table.is_empty() {
            let kinds: Vec<&str> = known
                .iter()
                .copied()
                .filter(|k| !SECTIONS.contains(k))
                .collect();
            let is_array = loc
                .node(&path)
                .is_some_and(|(_, v)| matches!(v.get_ref(), DeValue::Array(_)));
            if is_array {
                format!(
                    "unknown component kind `{word}` (known: {}){}",
                    kinds.join(", "),
                    did_you_mean(word, kinds.iter().copied())
                )
            } else {
                format!(
                    "unknown section `{word}` (sections: {}; components are [[kind]] \
                     tables of kinds {}){}",
                    SECTIONS.join(", "),
                    kinds.join(", "),
                    did_you_mean(word, known.iter().copied())
                )
            }
        } else {
            let top_level = struct_fields::<ModelFile>();
            let header = match table {
                [Seg::Key(s)] => Some(format!("[{s}]")),
                [Seg::Key(k), Seg::Index(_)] => Some(format!("[[{k}]]")),
                _ => None,
            };
            let misplaced = match header {
                Some(header) if top_level.contains(&word) => {
                    let form = if SECTIONS.contains(&word) {
                        format!("[{word}]")
                    } else {
                        format!("[[{word}]]")
                    };
                    format!(
                        "; `{word}` is a top-level name, but keys after a {header} header \
                         belong to it: write {form} with its own header"
                    )
                }
                _ => did_you_mean(word, known.iter().copied()),
            };
            format!(
                "unknown key `{word}` in {} (known keys: {}){misplaced}",
                context(loc, table),
                known.join(", "),
            )
        };
        return (vec![loc.error(&path, message)], Next::Remove(path));
    }

    if msg.contains("did not match any variant of untagged enum") {
        let path = loc.path_at(&span, Prefer::Shallow);
        let name = last_key(&path);
        let form = "a number, or a table like \
                    `{ table = [[0.0, 1e5], [0.1, 2e5]], interpolation = \"linear\" }`";
        if let Some((_, v)) = loc.node(&path) {
            if let DeValue::Table(t) = v.get_ref() {
                // Say what is wrong inside the table, in the form its keys choose: a cubic
                // curve, else a time table (a row of the wrong length before the types of its
                // cells: a row `["0 s"]` is a row without a value, not a string).
                let inner = if t.contains_key("cubic") {
                    CubicSpec::deserialize(ValueDeserializer::from(v.clone())).err()
                } else {
                    if let Some(err) = row_shape(loc, &path) {
                        return (vec![err], Next::Remove(path));
                    }
                    TableSpec::deserialize(ValueDeserializer::from(v.clone())).err()
                };
                if let Some(inner) = inner {
                    let (errs, _) = translate(loc, &inner, removed);
                    if !errs.is_empty() {
                        return (errs, Next::Remove(path));
                    }
                }
            }
            let found = type_phrase(v.get_ref());
            let quoted = snippet(loc, v)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            let message = format!("`{name}` must be {form}, not {found}{quoted}");
            return (vec![loc.error(&path, message)], Next::Remove(path));
        }
        return (vec![loc.error(&path, msg.to_string())], Next::Remove(path));
    }

    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        let (found_serde, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let prefer = if found_serde.starts_with("sequence") {
            Prefer::Array
        } else if found_serde.starts_with("map") {
            Prefer::Table
        } else {
            Prefer::Shallow
        };
        let path = loc.path_at(&span, prefer);
        let name = last_key(&path);
        let node = loc.node(&path).map(|(_, v)| v);
        let found = node.map_or("something else", |v| type_phrase(v.get_ref()));
        let quoted = node
            .and_then(|v| snippet(loc, v))
            .filter(|_| !found_serde.starts_with("map") && !found_serde.starts_with("sequence"))
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        let top = path.len() == 1;
        let message = if top && expected == "a sequence" && found_serde.starts_with("map") {
            format!(
                "`{name}` components are written as [[{name}]] tables (double brackets), \
                 one per component"
            )
        } else if top && expected.starts_with("struct ") && found_serde.starts_with("sequence") {
            format!("[{name}] is a single section: write [{name}], not [[{name}]]")
        } else if found_serde.starts_with("map") && matches!(expected, "f64" | "f32") {
            format!(
                "`{name}` must be a constant number: a table over time is not allowed for this key"
            )
        } else if let Some(DeValue::Integer(i)) = node.map(|v| v.get_ref())
            && expected_phrase(expected).contains("whole number")
            && !i.as_str().starts_with('-')
            && u64::from_str_radix(i.as_str(), i.radix()).is_err()
        {
            // Above every integer type serde tries: "invalid type: integer", which is no reason.
            let value = node.and_then(|v| snippet(loc, v)).unwrap_or_default();
            format!(
                "`{name}` must be {}: {value} is too large (at most {})",
                expected_phrase(expected),
                u64::MAX
            )
        } else if expected_phrase(expected).contains("whole number")
            && found_serde.starts_with("floating point")
        {
            // "must be a whole number, not a number" would say nothing: quote the value (as
            // serde saw it when the source has no text for it: a `--set`).
            let value = node
                .and_then(|v| snippet(loc, v))
                .or_else(|| backticked(found_serde).first().map(|s| s.to_string()))
                .unwrap_or_default();
            format!(
                "`{name}` must be {}, not {value}",
                expected_phrase(expected)
            )
        } else {
            format!(
                "`{name}` must be {}, not {found}{quoted}",
                expected_phrase(expected)
            )
        };
        return (vec![loc.error(&path, message)], Next::Remove(path));
    }

    // A value of the right type out of the type's range (a negative whole number).
    if let Some(rest) = msg.strip_prefix("invalid value: ") {
        let (found_serde, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let path = loc.path_at(&span, Prefer::Shallow);
        let value = loc
            .node(&path)
            .and_then(|(_, v)| snippet(loc, v))
            .or_else(|| backticked(found_serde).first().map(|s| s.to_string()))
            .unwrap_or_default();
        let message = format!(
            "`{}` must be {}, not {value}",
            last_key(&path),
            expected_phrase(expected)
        );
        return (vec![loc.error(&path, message)], Next::Remove(path));
    }

    if let Some(rest) = msg.strip_prefix("invalid length ") {
        let path = loc.path_at(&span, Prefer::Array);
        let n = rest.split(',').next().unwrap_or(rest);
        let message = if rest.contains("an array of length 2") {
            format!("a table row must be [time, value] (2 numbers), this one has {n}")
        } else {
            format!("wrong number of elements ({n}); expected{}", {
                rest.split_once(", expected").map_or("", |(_, e)| e)
            })
        };
        return (vec![loc.error(&path, message)], Next::Remove(path));
    }

    if msg.contains("overflowed") {
        let path = loc.path_at(&span, Prefer::Shallow);
        let text = loc
            .src
            .get(span.clone())
            .unwrap_or("the number")
            .to_string();
        let message = format!(
            "`{}` = {text} is too large: every number must be finite (at most about 1.8e308)",
            last_key(&path)
        );
        return (vec![loc.error(&path, message)], Next::Remove(path));
    }

    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        let names = backticked(rest);
        let path = loc.path_at(&span, Prefer::Shallow);
        let word = names.first().copied().unwrap_or_default();
        let known: Vec<&str> = names.iter().skip(1).copied().collect();
        let message = format!(
            "unknown value `{word}` for `{}` (known: {}){}",
            last_key(&path),
            known.join(", "),
            did_you_mean(word, known.iter().copied())
        );
        return (vec![loc.error(&path, message)], Next::Remove(path));
    }

    let path = loc.path_at(&span, Prefer::Shallow);
    (vec![loc.error(&path, msg.to_string())], Next::Remove(path))
}

/// What to take out of the tree after an error at `path` so that deserializing can go on: the
/// key of a component or section (or the component, or the top-level entry).
fn unit(path: &Path) -> Path {
    let depth = match path.as_slice() {
        [Seg::Key(_), Seg::Index(_), ..] => 3,
        _ => 2,
    };
    path[..path.len().min(depth)].to_vec()
}

/// A path of the original tree as a path of the working copy (whose arrays may have lost
/// elements): array elements are matched by their span.
fn in_work(loc: &Locator<'_>, work: &Spanned<DeValue<'_>>, path: &[Seg]) -> Option<Path> {
    let mut out = Vec::with_capacity(path.len());
    let mut cur = work;
    for (depth, seg) in path.iter().enumerate() {
        match (seg, cur.get_ref()) {
            (Seg::Key(k), DeValue::Table(t)) => {
                cur = t.get(k.as_str())?;
                out.push(seg.clone());
            }
            (Seg::Index(_), DeValue::Array(a)) => {
                let (_, original) = loc.node(&path[..=depth])?;
                let span = original.span();
                let j = a.iter().position(|e| e.span() == span)?;
                cur = &a[j];
                out.push(Seg::Index(j));
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Values tried, in turn, for a missing key (its type is not known here): whichever the key's
/// type accepts lets deserializing go on to the rest of the file.
const PLACEHOLDERS: &[&str] = &["0", "\"\"", "false", "[]", "{}"];

/// Spans of placeholders start here, far past the file and the overrides.
const SYNTHETIC: usize = usize::MAX / 2;

/// A placeholder put into the working tree: where, which candidate, its span.
struct Placeholder {
    table: Path,
    key: String,
    attempt: usize,
    span: Range<usize>,
}

/// Insert placeholder candidate `attempt` at `table.key` of the working tree; its span.
fn place(
    work: &mut Spanned<DeValue<'_>>,
    table: &[Seg],
    k: &str,
    attempt: usize,
    next_span: &mut usize,
) -> Option<Range<usize>> {
    let text = PLACEHOLDERS.get(attempt)?;
    let value = DeValue::parse(text).ok()?;
    let base = *next_span;
    *next_span += text.len() + 2;
    let value = shift(value, base + 1);
    let span = value.span();
    let t = table_mut(work, table, &(base..base + 1))?;
    t.insert(
        Spanned::new(base..base + 1, std::borrow::Cow::Owned(k.to_string())),
        value,
    );
    Some(span)
}

/// The required keys that a component does not give, as its kind declares them
/// (`crate::components::keys`): serde fills every absent key of a component with its declared
/// default (a placeholder for a required one), so a missing key is found here, in the tree as
/// written (with the overrides). A key that is present with an invalid value is not missing
/// (serde reports it), nor is one that a close misspelling stands for (reported as an unknown
/// key with a did-you-mean).
fn missing_component_keys(loc: &Locator<'_>) -> Vec<ModelError> {
    let mut errors = Vec::new();
    let DeValue::Table(root) = loc.root.get_ref() else {
        return errors;
    };
    for (name, items) in root.iter() {
        let Some(kind) = super::parts::kind_or_part(name.get_ref()) else {
            continue;
        };
        let DeValue::Array(items) = items.get_ref() else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let DeValue::Table(t) = item.get_ref() else {
                continue;
            };
            for k in kind
                .keys
                .iter()
                .filter(|k| k.default == KeyDefault::Required)
            {
                let misspelled = t.iter().any(|(u, _)| {
                    let u: &str = u.get_ref();
                    kind.key(u).is_none() && close(u, k.name)
                });
                if t.get(k.name).is_some() || misspelled {
                    continue;
                }
                let table = vec![key(kind.name), Seg::Index(i)];
                let mut err = loc.error(
                    &table,
                    format!("missing required key `{}` in {}", k.name, kind.name),
                );
                if err.file != "--set" {
                    let mut missing = table.clone();
                    missing.push(key(k.name));
                    err.key = loc.render(&missing);
                }
                errors.push(err);
            }
        }
    }
    errors
}

/// Deserialize the model, collecting every type-level problem.
pub(crate) fn decode(loc: &Locator<'_>) -> Result<ModelFile, Vec<ModelError>> {
    let mut work = loc.root.clone();
    let mut errors = Vec::new();
    let mut removed: Vec<Path> = Vec::new();
    let mut placeholders: Vec<Placeholder> = Vec::new();
    let mut next_span = SYNTHETIC;
    errors.extend(missing_component_keys(loc));
    // Sections written as arrays, and missing sections: serde would report only the first.
    for section in SECTIONS {
        let path = vec![key(section)];
        match loc.node(&path) {
            Some((_, v)) if matches!(v.get_ref(), DeValue::Array(_)) => {
                errors.push(loc.error(
                    &path,
                    format!(
                        "[{section}] is a single section: write [{section}], not [[{section}]]"
                    ),
                ));
                remove(&mut work, &path);
                removed.push(path);
            }
            None if REQUIRED_SECTIONS.contains(section) => {
                errors.push(loc.error(&path, format!("missing required section [{section}]")));
                removed.push(path);
            }
            _ => {}
        }
    }
    // Each round removes a node, adds a placeholder for a missing key or tries the next
    // candidate of one, so this ends; the bound is a guard only.
    for _ in 0..10_000 {
        let span = work.span();
        let table = match work.get_ref() {
            DeValue::Table(t) => t.clone(),
            _ => break,
        };
        let de = toml::de::Deserializer::from(Spanned::new(span, table));
        let e = match ModelFile::deserialize(de) {
            Ok(spec) if errors.is_empty() => return Ok(spec),
            Ok(_) => break,
            Err(e) => e,
        };
        // An error about a placeholder: try the next candidate, or fill its own missing key.
        if let Some(s) = e.span().filter(|s| s.start >= SYNTHETIC) {
            if let Some(rest) = e.message().strip_prefix("missing field ") {
                let field = backticked(rest)
                    .first()
                    .copied()
                    .unwrap_or(rest)
                    .to_string();
                let Some(p) = placeholders.iter().find(|p| p.span == s) else {
                    break;
                };
                let mut table = p.table.clone();
                table.push(key(&p.key));
                let Some(span) = place(&mut work, &table, &field, 0, &mut next_span) else {
                    break;
                };
                placeholders.push(Placeholder {
                    table,
                    key: field,
                    attempt: 0,
                    span,
                });
                continue;
            }
            let Some(p) = placeholders
                .iter_mut()
                .find(|p| p.span.start <= s.start && s.end <= p.span.end)
            else {
                break;
            };
            p.attempt += 1;
            match place(&mut work, &p.table, &p.key, p.attempt, &mut next_span) {
                Some(span) => p.span = span,
                None => break,
            }
            continue;
        }
        let (errs, next) = translate(loc, &e, &removed);
        errors.extend(errs);
        match next {
            Next::Stop => break,
            Next::Fill(table, field) => {
                let Some(table) = in_work(loc, &work, &table) else {
                    break;
                };
                let Some(span) = place(&mut work, &table, &field, 0, &mut next_span) else {
                    break;
                };
                placeholders.push(Placeholder {
                    table,
                    key: field,
                    attempt: 0,
                    span,
                });
            }
            Next::Remove(path) => {
                let target = unit(&path);
                let Some(in_work) = in_work(loc, &work, &target) else {
                    break;
                };
                if target.is_empty() || !remove(&mut work, &in_work) {
                    break;
                }
                removed.push(target);
            }
        }
    }
    if errors.is_empty() {
        errors.push(loc.error(&[], "the model could not be read".to_string()));
    }
    Err(errors)
}
