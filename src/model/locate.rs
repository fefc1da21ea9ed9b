//! Where things are in a model file: key paths, their spans, and line/column positions.
//!
//! The file is parsed once into toml's spanned tree ([`DeTable`]): every key and value keeps its
//! byte range in the text. A [`Path`] names a node of that tree (`chamber`, element 1, `volume`);
//! the [`Locator`] turns a path into a [`ModelError`] with the file's line and column, and finds
//! the path of the node that a serde error's span points at. `--set` overrides are spliced into
//! the same tree with *virtual* spans (past the end of the file), so every position in the file
//! stays exactly the file's own and an error in an overridden value is recognised as the
//! override's.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::ModelError;
use crate::units::text::escaped;

/// One step of a key path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

pub(crate) type Path = Vec<Seg>;

/// A path from string keys and indices: `path!["chamber", 0usize, "volume"]`-like helper.
pub(crate) fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// One `--set` that was applied: its text, the path it set, and the virtual byte range that the
/// spliced key and value occupy.
#[derive(Clone, Debug)]
pub(crate) struct AppliedOverride {
    pub text: String,
    pub path: Path,
    pub span: Range<usize>,
}

/// The parsed file (with overrides spliced in) and what is needed to point into it.
pub(crate) struct Locator<'a> {
    pub file: &'a str,
    pub src: &'a str,
    pub root: Spanned<DeValue<'a>>,
    pub overrides: Vec<AppliedOverride>,
    line_starts: Vec<usize>,
}

/// The type of a TOML value with an article, as a user reads it.
pub(crate) fn type_phrase(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a number",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// A float of the file that is no usable number.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum BadFloat {
    /// `nan`, `inf`, or too large (`1e400`): the value.
    NotFinite(f64),
    /// Not 0 as written, but 0 as an f64 (`1e-400`): the text.
    Underflow(String),
}

/// Whether a float as written is no usable number: not finite, or an underflow to 0.
pub(crate) fn bad_float(v: &DeValue<'_>) -> Option<BadFloat> {
    let DeValue::Float(f) = v else {
        return None;
    };
    let text: String = f.as_str().chars().filter(|c| *c != '_').collect();
    let body = text.trim_start_matches(['+', '-']);
    let neg = text.starts_with('-');
    let value = match body {
        "nan" => f64::NAN,
        "inf" => {
            if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        _ => text.parse::<f64>().ok()?,
    };
    let mantissa = body.split(['e', 'E']).next().unwrap_or("");
    if !value.is_finite() {
        Some(BadFloat::NotFinite(value))
    } else if value == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        Some(BadFloat::Underflow(text))
    } else {
        None
    }
}

/// Edit distance with transpositions (optimal string alignment: `strsim::osa_distance`), for
/// "did you mean".
fn distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// Whether `word` looks like a misspelling of `known`.
pub(crate) fn close(word: &str, known: &str) -> bool {
    let limit = (word.chars().count() / 3).max(1);
    distance(&word.to_lowercase(), &known.to_lowercase()) <= limit
}

/// `; did you mean `x`?` when one of `known` is close to `word`, else an empty string.
pub(crate) fn did_you_mean<'k>(word: &str, known: impl IntoIterator<Item = &'k str>) -> String {
    let best = known
        .into_iter()
        .filter(|k| close(word, k))
        .min_by_key(|k| distance(&word.to_lowercase(), &k.to_lowercase()));
    match best {
        Some(k) => format!("; did you mean `{k}`?"),
        None => String::new(),
    }
}

/// The region a key = value entry covers: from the key (or a `[header]` before it) to the end
/// of the value.
fn region(key_span: Option<&Range<usize>>, value_span: &Range<usize>) -> Range<usize> {
    match key_span {
        Some(k) => k.start.min(value_span.start)..k.end.max(value_span.end),
        None => value_span.clone(),
    }
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

/// A visitor of tree nodes: path, key span (None for array elements), node.
type Visitor<'f, 'v, 'a> = dyn FnMut(&Path, Option<&Range<usize>>, &'v Spanned<DeValue<'a>>) + 'f;

/// Call `f` on every node below `v` with its path and the span of its key (None for array
/// elements).
fn visit<'v, 'a>(v: &'v Spanned<DeValue<'a>>, path: &mut Path, f: &mut Visitor<'_, 'v, 'a>) {
    match v.get_ref() {
        DeValue::Table(t) => {
            for (k, child) in t.iter() {
                path.push(Seg::Key(k.get_ref().to_string()));
                let ks = k.span();
                f(path, Some(&ks), child);
                visit(child, path, f);
                path.pop();
            }
        }
        DeValue::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                path.push(Seg::Index(i));
                f(path, None, child);
                visit(child, path, f);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Which node a span should be attributed to when several have exactly that span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prefer {
    Shallow,
    Array,
    Table,
}

impl<'a> Locator<'a> {
    pub fn new(
        file: &'a str,
        src: &'a str,
        root: Spanned<DeValue<'a>>,
        overrides: Vec<AppliedOverride>,
    ) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        Locator {
            file,
            src,
            root,
            overrides,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset in the file.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.src.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        let column = self
            .src
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        (line, column)
    }

    /// The node at `path` with the span of its key, if it exists.
    pub fn node(&self, path: &[Seg]) -> Option<(Option<Range<usize>>, &Spanned<DeValue<'a>>)> {
        let mut cur = &self.root;
        let mut key_span = None;
        for seg in path {
            match (seg, cur.get_ref()) {
                (Seg::Key(k), DeValue::Table(t)) => {
                    let (kk, v) = t.get_key_value(k.as_str())?;
                    key_span = Some(kk.span());
                    cur = v;
                }
                (Seg::Index(i), DeValue::Array(a)) => {
                    cur = a.get(*i)?;
                    key_span = None;
                }
                _ => return None,
            }
        }
        Some((key_span, cur))
    }

    /// The path of the node that a span points at: a key with exactly that span, else a value
    /// with exactly that span (several may share it, e.g. an array of tables and its first
    /// element: `prefer` chooses), else the deepest entry whose text contains the span.
    pub fn path_at(&self, span: &Range<usize>, prefer: Prefer) -> Path {
        let mut by_key: Option<Path> = None;
        let mut exact: Vec<(Path, bool, bool)> = Vec::new();
        let mut deepest: Option<Path> = None;
        visit(&self.root, &mut Vec::new(), &mut |path, ks, v| {
            let vs = v.span();
            if by_key.is_none() && ks.is_some_and(|k| k == span) {
                by_key = Some(path.clone());
            }
            if vs == *span {
                let is_array = matches!(v.get_ref(), DeValue::Array(_));
                let is_table = matches!(v.get_ref(), DeValue::Table(_));
                exact.push((path.clone(), is_array, is_table));
            }
            if contains(&region(ks, &vs), span)
                && deepest.as_ref().is_none_or(|d| d.len() < path.len())
            {
                deepest = Some(path.clone());
            }
        });
        if let Some(p) = by_key {
            return p;
        }
        if !exact.is_empty() {
            let pick = match prefer {
                Prefer::Array => exact.iter().find(|e| e.1),
                Prefer::Table => exact.iter().rev().find(|e| e.2),
                Prefer::Shallow => None,
            };
            let shallow = exact.iter().min_by_key(|e| e.0.len());
            if let Some(e) = pick.or(shallow) {
                return e.0.clone();
            }
        }
        deepest.unwrap_or_default()
    }

    /// The path of the table whose own span is exactly `span` (a missing key's table); the
    /// root for an empty span.
    pub fn table_at(&self, span: Option<&Range<usize>>) -> Path {
        let Some(span) = span.filter(|s| !s.is_empty()) else {
            return Vec::new();
        };
        let mut found: Option<Path> = None;
        visit(&self.root, &mut Vec::new(), &mut |path, _, v| {
            if v.span() == *span
                && matches!(v.get_ref(), DeValue::Table(_))
                && found.as_ref().is_none_or(|f| f.len() < path.len())
            {
                found = Some(path.clone());
            }
        });
        found.unwrap_or_else(|| self.path_at(span, Prefer::Table))
    }

    /// The path in words: `chamber.barrel.volume`, `solver.step`,
    /// `reservoir.atm.pressure.table[2]`. A component (an element of a top-level array) is
    /// named by its `name` when it has one, else by its index.
    pub fn render(&self, path: &[Seg]) -> String {
        let mut out = String::new();
        for (depth, seg) in path.iter().enumerate() {
            match seg {
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Index(i) => {
                    let name = (depth == 1)
                        .then(|| self.node(&path[..=depth]))
                        .flatten()
                        .and_then(|(_, v)| match v.get_ref() {
                            DeValue::Table(t) => t.get("name").map(|n| n.get_ref().clone()),
                            _ => None,
                        });
                    match name {
                        Some(DeValue::String(n)) if !n.is_empty() => {
                            out.push('.');
                            out.push_str(&n);
                        }
                        _ => out.push_str(&format!("[{i}]")),
                    }
                }
            }
        }
        out
    }

    /// Byte offset of the deepest existing node on `path`: a key's position (or the `[header]`
    /// that introduces it), an array element's start. `None` for the document itself.
    fn offset(&self, path: &[Seg]) -> Option<usize> {
        for len in (1..=path.len()).rev() {
            if let Some((ks, v)) = self.node(&path[..len]) {
                let vs = v.span();
                return Some(match ks {
                    Some(k) => k.start.min(vs.start),
                    None => vs.start,
                });
            }
        }
        None
    }

    /// The override that produced the node at `path`, if any.
    fn override_of(&self, path: &[Seg]) -> Option<&AppliedOverride> {
        if let Some(o) = self
            .overrides
            .iter()
            .rev()
            .find(|o| path.starts_with(&o.path))
        {
            return Some(o);
        }
        let offset = self.offset(path)?;
        self.overrides
            .iter()
            .rev()
            .find(|o| o.span.contains(&offset))
    }

    /// The line of the node at `path` in the file (None when it comes from `--set`).
    pub fn line_of(&self, path: &[Seg]) -> Option<usize> {
        if self.override_of(path).is_some() {
            return None;
        }
        self.offset(path).map(|o| self.line_col(o).0)
    }

    /// An error about the node at `path` (which need not exist: then the position is that of
    /// the deepest part that does, e.g. the `[[chamber]]` header for a missing key).
    pub fn error(&self, path: &[Seg], message: impl Into<String>) -> ModelError {
        // Names and values of the file are echoed escaped (`ModelError`'s fields are read
        // directly too: an FMU logs them).
        let message = escaped(&message.into()).into_owned();
        if let Some(o) = self.override_of(path) {
            return ModelError {
                file: "--set".to_string(),
                line: 0,
                column: 0,
                key: escaped(&o.text).into_owned(),
                message,
            };
        }
        let (line, column) = match self.offset(path) {
            Some(off) => self.line_col(off),
            None => (1, 1),
        };
        ModelError {
            file: self.file.to_string(),
            line,
            column,
            key: escaped(&self.render(path)).into_owned(),
            message,
        }
    }

    /// An error at a byte offset of the file (syntax errors).
    pub fn error_at(&self, offset: usize, key: String, message: String) -> ModelError {
        let (line, column) = self.line_col(offset);
        ModelError {
            file: self.file.to_string(),
            line,
            column,
            key: escaped(&key).into_owned(),
            message: escaped(&message).into_owned(),
        }
    }

    /// Every float in the file (and overrides) that is no usable number: `nan`, `inf`, too
    /// large, or too small (an underflow to 0).
    pub fn bad_floats(&self) -> Vec<(Path, BadFloat)> {
        let mut out = Vec::new();
        visit(&self.root, &mut Vec::new(), &mut |path, _, v| {
            if let Some(x) = bad_float(v.get_ref()) {
                out.push((path.clone(), x));
            }
        });
        out
    }
}

/// Remove the node at `path` from a tree (used to go on deserializing after an error).
/// Returns whether something was removed.
pub(crate) fn remove(root: &mut Spanned<DeValue<'_>>, path: &[Seg]) -> bool {
    let Some((last, parent_path)) = path.split_last() else {
        return false;
    };
    let mut cur = root;
    for seg in parent_path {
        let next = match (seg, cur.get_mut()) {
            (Seg::Key(k), DeValue::Table(t)) => t.get_mut(k.as_str()),
            (Seg::Index(i), DeValue::Array(a)) => a.get_mut(*i),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return false,
        }
    }
    match (last, cur.get_mut()) {
        (Seg::Key(k), DeValue::Table(t)) => t.remove(k.as_str()).is_some(),
        (Seg::Index(i), DeValue::Array(a)) if *i < a.len() => {
            let kept: toml::de::DeArray<'_> = a
                .iter()
                .enumerate()
                .filter(|(j, _)| j != i)
                .map(|(_, v)| v.clone())
                .collect();
            *a = kept;
            true
        }
        _ => false,
    }
}

/// The table at `path`, creating empty tables on the way (for `--set` of a section that the
/// file does not have). `span` is used for created nodes.
pub(crate) fn table_mut<'t, 'a>(
    root: &'t mut Spanned<DeValue<'a>>,
    path: &[Seg],
    span: &Range<usize>,
) -> Option<&'t mut DeTable<'a>> {
    let mut cur = root;
    for seg in path {
        cur = match (seg, cur.get_mut()) {
            (Seg::Key(k), DeValue::Table(t)) => {
                if !t.contains_key(k.as_str()) {
                    t.insert(
                        Spanned::new(span.clone(), std::borrow::Cow::Owned(k.clone())),
                        Spanned::new(span.clone(), DeValue::Table(DeTable::new())),
                    );
                }
                t.get_mut(k.as_str())?
            }
            (Seg::Index(i), DeValue::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    match cur.get_mut() {
        DeValue::Table(t) => Some(t),
        _ => None,
    }
}
