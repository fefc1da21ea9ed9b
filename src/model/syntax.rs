//! TOML syntax errors, located and named.

use super::ModelError;
use super::locate::{Locator, Prefer};

/// The header (`[solver]`, `[[chamber]]`) in force at `line_start`, without brackets.
fn header_before(src: &str, line_start: usize) -> Option<String> {
    src[..line_start].lines().rev().find_map(|l| {
        let l = l.trim();
        l.starts_with('[').then(|| {
            l.trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
    })
}

/// The key a syntax error at `offset` is about: the `key = ` or `[header]` of its line (with
/// the header in force), else the entry of the recovered tree that contains it.
fn key_at(loc: &Locator<'_>, offset: usize) -> String {
    let src = loc.src;
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);
    let line = src[start..end].trim();
    if line.starts_with('[') {
        return line
            .trim_start_matches('[')
            .split(']')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
    }
    let bare = |c: char| c.is_alphanumeric() || "_-.\"' ".contains(c);
    if let Some((k, _)) = line.split_once('=')
        && !k.trim().is_empty()
        && k.chars().all(bare)
    {
        let k = k.trim().to_string();
        return match header_before(src, start) {
            Some(h) if !h.is_empty() => format!("{h}.{k}"),
            _ => k,
        };
    }
    if !line.is_empty() && line.chars().all(|c| bare(c) || c.is_ascii_digit()) {
        // A key without `= value`: its first word.
        let k = line.split_whitespace().next().unwrap_or("").to_string();
        return match header_before(src, start) {
            Some(h) if !h.is_empty() => format!("{h}.{k}"),
            _ => k,
        };
    }
    let path = loc.path_at(&(offset..offset), Prefer::Shallow);
    loc.render(&path)
}

/// The key (or table header) with the most dotted parts, as (byte offset of its line's first
/// character, number of parts): where the parser's recursion limit was hit when it reports no
/// position (a dotted key of 10⁵ parts). Quoted dots count too: this only points at a line.
fn deepest_key(src: &str) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    let mut offset = 0;
    for line in src.split_inclusive('\n') {
        let body = line.trim_start();
        let start = offset + (line.len() - body.len());
        let key = if body.starts_with('[') {
            body.split(']').next().unwrap_or("")
        } else {
            body.split('=').next().unwrap_or("")
        };
        let parts = key.matches('.').count() + 1;
        if best.is_none_or(|(_, p)| parts > p) {
            best = Some((start, parts));
        }
        offset += line.len();
    }
    best.filter(|&(_, p)| p > 1)
}

/// Located errors for the parser's errors (a `Locator` over the recovered tree).
pub(crate) fn syntax_errors(loc: &Locator<'_>, errors: &[toml::de::Error]) -> Vec<ModelError> {
    let mut out: Vec<ModelError> = Vec::new();
    for e in errors {
        let span = e.span().unwrap_or(0..0);
        let msg = e.message();
        let msg = msg.strip_suffix(", expected nothing").unwrap_or(msg);
        // The parser bounds its recursion (so nesting costs bounded stack and time) but names
        // no position when a dotted key is too deep: point at the deepest key instead of 1:1.
        if span.is_empty()
            && msg.contains("recursion")
            && let Some((at, parts)) = deepest_key(loc.src)
        {
            let head: String = loc.src[at..].chars().take(24).collect();
            let err = loc.error_at(
                at,
                format!("{}…", head.trim_end()),
                format!(
                    "TOML syntax error: a key of {parts} dotted parts nests deeper than the \
                     parser's recursion limit"
                ),
            );
            if !out.iter().any(|o| o.line == err.line) {
                out.push(err);
            }
            continue;
        }
        let message = if msg == "duplicate key" {
            let k = loc.src.get(span.clone()).unwrap_or("").trim();
            format!("`{k}` is defined twice in the same table")
        } else {
            format!("TOML syntax error: {msg}")
        };
        let err = loc.error_at(span.start, key_at(loc, span.start), message);
        // Errors that follow from the first one on the same line are noise.
        if out.iter().any(|o| o.line == err.line) {
            continue;
        }
        out.push(err);
    }
    out
}
