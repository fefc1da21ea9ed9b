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

/// Located errors for the parser's errors (a `Locator` over the recovered tree).
pub(crate) fn syntax_errors(loc: &Locator<'_>, errors: &[toml::de::Error]) -> Vec<ModelError> {
    let mut out: Vec<ModelError> = Vec::new();
    for e in errors {
        let span = e.span().unwrap_or(0..0);
        let msg = e.message();
        let msg = msg.strip_suffix(", expected nothing").unwrap_or(msg);
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
