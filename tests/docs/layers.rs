//! The layer table of docs/architecture.md holds in the code: no module of `src/` uses a module
//! of a layer below its own (a later row of the table). The table is the only data: its rows,
//! top to bottom, are the layers, and the backticked names in its "modules" column are the
//! modules of each, so a new module needs only a table edit. Every module of `src/` must be in
//! some row; a row may name a module that is not in `src/` yet.
//!
//! What counts as a use, in code that is not a test (comments, string literals and items under
//! `#[cfg(test)]`, test files included, are left out): a `crate::x` path anywhere (`use`
//! declarations, `use crate::{x, y}` groups, paths written in code, `$crate::x` in macros, and
//! `crate::m!` for a macro exported from module x), a `super::` path that climbs to the crate
//! root and down into another module, and in the command line (`src/bin/plenum`) a
//! `plenum::x` path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ARCHITECTURE: &str = include_str!("../../docs/architecture.md");

/// The rows of the table under "## Layers": (layer, modules), top to bottom.
fn layer_table(doc: &str) -> Vec<(String, Vec<String>)> {
    let start = doc
        .find("\n## Layers")
        .expect("docs/architecture.md has a section \"## Layers\"");
    let body = &doc[start + 1..];
    let end = body[3..].find("\n## ").map_or(body.len(), |e| e + 3);
    let mut rows = Vec::new();
    for line in body[..end].lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 3 || cells[0] == "layer" || cells[0].starts_with("---") {
            continue;
        }
        let modules = cells[1]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|m| m.trim_end_matches('/').to_string())
            .collect();
        rows.push((cells[0].to_string(), modules));
    }
    rows
}

/// The source text with comments and the contents of string and character literals replaced
/// by spaces, one `char` for one `char` (newlines kept), so that positions and line numbers
/// are those of the source.
fn code_only(src: &[char]) -> Vec<char> {
    let n = src.len();
    let at = |k: usize| src.get(k).copied().unwrap_or('\0');
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let c = src[i];
        let prev_ident = i > 0 && ident(src[i - 1]);
        if c == '/' && at(i + 1) == '/' {
            while i < n && src[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            // Block comments nest.
            let mut depth = 0;
            while i < n {
                if src[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.extend([' ', ' ']);
                    i += 2;
                } else if src[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.extend([' ', ' ']);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(src[i]));
                    i += 1;
                }
            }
        } else if !prev_ident && (c == 'r' || (c == 'b' && at(i + 1) == 'r')) && {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            while at(j) == '#' {
                j += 1;
            }
            at(j) == '"'
        } {
            // A raw string: r"…", r#"…"#, br"…".
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            while j < n && !(src[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#')) {
                j += 1;
            }
            let end = (j + 1 + hashes).min(n);
            out.extend(src[i..end].iter().map(|&c| blank(c)));
            i = end;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < n && src[i] != '"' {
                if src[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < n {
                    out.push(blank(src[i]));
                    i += 1;
                }
            }
            if i < n {
                out.push(' ');
                i += 1;
            }
        } else if c == '\'' && (at(i + 1) == '\\' || (at(i + 2) == '\'' && at(i + 1) != '\'')) {
            // A character literal ('x', '\n', '\'', '\u{…}'); otherwise a lifetime.
            let mut j = i + 1;
            if at(j) == '\\' {
                j += 2;
            } else {
                j += 1;
            }
            while j < n && src[j] != '\'' {
                j += 1;
            }
            let end = (j + 1).min(n);
            out.extend(src[i..end].iter().map(|&c| blank(c)));
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier starting at `k` (after spaces), and the index after it.
fn ident_at(code: &[char], mut k: usize) -> (String, usize) {
    while k < code.len() && code[k].is_whitespace() {
        k += 1;
    }
    let start = k;
    while k < code.len() && is_ident(code[k]) {
        k += 1;
    }
    (code[start..k].iter().collect(), k)
}

/// Whether `word` stands at `k` as a whole path segment followed by `::`.
fn segment_at(code: &[char], k: usize, word: &str) -> bool {
    let w: Vec<char> = word.chars().collect();
    code.get(k..k + w.len()) == Some(&w[..])
        && (k == 0 || !is_ident(code[k - 1]))
        && code.get(k + w.len()..k + w.len() + 2) == Some(&[':', ':'][..])
}

/// The first segment of each path after `::` at `k`: one name, or each entry of a `{…}` group.
fn first_segments(code: &[char], k: usize) -> Vec<String> {
    let mut k = k;
    while k < code.len() && code[k].is_whitespace() {
        k += 1;
    }
    if code.get(k) != Some(&'{') {
        let (name, _) = ident_at(code, k);
        return vec![name];
    }
    let mut names = Vec::new();
    let mut depth = 0;
    let mut entry_start = true;
    for j in k..code.len() {
        match code[j] {
            '{' => {
                depth += 1;
                if depth == 1 {
                    entry_start = true;
                    continue;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => {
                entry_start = true;
                continue;
            }
            _ => {}
        }
        if depth == 1 && entry_start && is_ident(code[j]) {
            let (name, _) = ident_at(code, j);
            if name != "self" {
                names.push(name);
            }
            entry_start = false;
        } else if depth == 1 && !code[j].is_whitespace() {
            entry_start = false;
        }
    }
    names
}

/// The end (exclusive) of the item that starts at `k`: at a `;` outside brackets, or at the
/// `}` that closes its first block.
fn item_end(code: &[char], k: usize) -> usize {
    let mut depth = 0i32;
    for (j, &c) in code.iter().enumerate().skip(k) {
        match c {
            '{' | '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            ';' if depth == 0 => return j + 1,
            _ => {}
        }
    }
    code.len()
}

/// The end (exclusive) of the bracketed group that opens at `k`.
fn group_end(code: &[char], k: usize) -> usize {
    let mut depth = 0i32;
    for (j, &c) in code.iter().enumerate().skip(k) {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// A source file's code without its `#[cfg(test)]` items, and the files of the test modules it
/// declares (`#[cfg(test)] mod x;`, with or without `#[path]`).
fn without_tests(path: &Path, src: &[char], code: &mut [char]) -> Vec<PathBuf> {
    let attr: Vec<char> = "#[cfg(test)]".chars().collect();
    let dir = path.parent().unwrap();
    let stem = path.file_stem().unwrap().to_str().unwrap();
    // Where `mod x;` finds x.rs: beside a mod.rs, in the directory named after any other file.
    let mod_dir = if stem == "mod" || stem == "lib" || stem == "main" {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    let mut test_files = Vec::new();
    let mut k = 0;
    while k + attr.len() <= code.len() {
        if code[k..k + attr.len()] != attr[..] {
            k += 1;
            continue;
        }
        // Further attributes, a `#[path = "…"]` among them (read from the source: the code has
        // its strings blanked).
        let mut j = k + attr.len();
        let mut path_attr = None;
        loop {
            while j < code.len() && code[j].is_whitespace() {
                j += 1;
            }
            if code.get(j) != Some(&'#') {
                break;
            }
            let end = group_end(code, j + 1);
            let text: String = src[j..end].iter().collect();
            if let Some(p) = text.strip_prefix("#[path = \"") {
                path_attr = p.split('"').next().map(String::from);
            }
            j = end;
        }
        let end = item_end(code, j);
        let item: String = code[j..end].iter().collect();
        let words: Vec<&str> = item.split_whitespace().collect();
        let declared = words.iter().position(|w| *w == "mod");
        if let (Some(pos), true) = (declared, item.trim_end().ends_with(';')) {
            let name = words[pos + 1].trim_end_matches(';');
            match &path_attr {
                Some(p) => test_files.push(dir.join(p)),
                None => {
                    test_files.push(mod_dir.join(format!("{name}.rs")));
                    test_files.push(mod_dir.join(name).join("mod.rs"));
                }
            }
        }
        for c in &mut code[k..end] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        k = end;
    }
    test_files
}

/// One use of a module by another: from, to, file and line.
#[derive(Debug)]
struct Use {
    from: String,
    to: String,
    file: String,
    line: usize,
    text: String,
}

/// The module of a file under `src/` (`rel`: its path from `src/`, with `/`), and its module
/// path (`integrators/bdf/step.rs` → integrators, [integrators, bdf, step]).
fn module_of(rel: &str) -> (String, Vec<String>) {
    let parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
    if parts[0] == "bin" {
        return (format!("bin/{}", parts[1]), Vec::new());
    }
    let mut path: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
    if path.last().is_some_and(|s| s == "mod") {
        path.pop();
    }
    (path[0].clone(), path)
}

/// The uses of other modules in one file's code (tests removed). `macros`: the module that
/// exports each `#[macro_export]` macro.
fn uses_in(rel: &str, code: &[char], macros: &BTreeMap<String, String>) -> Vec<Use> {
    let (module, path) = module_of(rel);
    let bin = module.starts_with("bin/");
    let line_of = |k: usize| code[..k].iter().filter(|&&c| c == '\n').count() + 1;
    let line_text = |k: usize| -> String {
        let s = code[..k]
            .iter()
            .rposition(|&c| c == '\n')
            .map_or(0, |p| p + 1);
        let e = code[k..]
            .iter()
            .position(|&c| c == '\n')
            .map_or(code.len(), |p| k + p);
        code[s..e].iter().collect::<String>().trim().to_string()
    };
    let mut uses = Vec::new();
    let mut push = |name: String, k: usize| {
        let to = macros.get(&name).cloned().unwrap_or(name);
        uses.push(Use {
            from: module.clone(),
            to,
            file: format!("src/{rel}"),
            line: line_of(k),
            text: line_text(k),
        });
    };
    for k in 0..code.len() {
        if bin {
            if segment_at(code, k, "plenum") {
                for name in first_segments(code, k + "plenum::".len()) {
                    push(name, k);
                }
            }
            continue;
        }
        if segment_at(code, k, "crate") {
            for name in first_segments(code, k + "crate::".len()) {
                push(name, k);
            }
        } else if segment_at(code, k, "super")
            && !(k >= 2 && code[k - 2] == ':' && code[k - 1] == ':')
        {
            // `super::super::…`: climbs one level per `super`.
            let mut j = k;
            let mut ups = 0;
            while segment_at(code, j, "super") {
                ups += 1;
                j += "super::".len();
            }
            if ups >= path.len() {
                for name in first_segments(code, j) {
                    push(name, k);
                }
            }
        }
    }
    uses
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The modules of `src/`: each file `src/x.rs` but lib.rs, each directory `src/x/`, and
/// `bin/NAME` for each program under `src/bin/`.
fn modules_in(src: &Path) -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        if p.is_dir() && name == "bin" {
            for b in std::fs::read_dir(&p).unwrap() {
                let b = b.unwrap().path();
                modules.insert(format!("bin/{}", b.file_stem().unwrap().to_str().unwrap()));
            }
        } else if p.is_dir() || (p.extension().is_some_and(|e| e == "rs") && name != "lib") {
            modules.insert(name);
        }
    }
    modules
}

/// Every use between modules in `src/`, and the number of files read.
fn uses_in_src(src: &Path) -> (Vec<Use>, usize) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut texts = Vec::new();
    let mut test_files = BTreeSet::new();
    let mut macros = BTreeMap::new();
    for path in &files {
        let rel = path
            .strip_prefix(src)
            .unwrap()
            .to_str()
            .unwrap()
            .replace('\\', "/");
        let src_chars: Vec<char> = std::fs::read_to_string(path).unwrap().chars().collect();
        let mut code = code_only(&src_chars);
        test_files.extend(without_tests(path, &src_chars, &mut code));
        // `#[macro_export] macro_rules! name`: `crate::name!` is a use of this module.
        let text: String = code.iter().collect();
        let mut rest = text.as_str();
        while let Some(p) = rest.find("#[macro_export]") {
            rest = &rest[p..];
            if let Some(m) = rest.find("macro_rules!") {
                let name: String = rest[m + "macro_rules!".len()..]
                    .trim_start()
                    .chars()
                    .take_while(|&c| is_ident(c))
                    .collect();
                macros.insert(name, module_of(&rel).0);
            }
            rest = &rest[1..];
        }
        texts.push((path.clone(), rel, code));
    }
    let mut uses = Vec::new();
    let mut read = 0;
    for (path, rel, code) in &texts {
        if test_files.contains(path) {
            continue;
        }
        read += 1;
        uses.extend(uses_in(rel, code, &macros));
    }
    (uses, read)
}

/// The uses that go to a lower layer (a later row), with both layers; fails on a module in no
/// layer.
fn upward<'a>(uses: &'a [Use], layer: &BTreeMap<String, usize>) -> Vec<(&'a Use, usize, usize)> {
    let mut bad = Vec::new();
    for u in uses.iter().filter(|u| u.from != u.to) {
        let from = *layer
            .get(&u.from)
            .unwrap_or_else(|| panic!("module {} is in no layer", u.from));
        let to = *layer.get(&u.to).unwrap_or_else(|| {
            panic!(
                "{}:{} uses `{}`, which is no module of src/ ({})",
                u.file, u.line, u.to, u.text
            )
        });
        if to > from {
            bad.push((u, from, to));
        }
    }
    bad
}

fn layer_index(rows: &[(String, Vec<String>)]) -> BTreeMap<String, usize> {
    let mut layer = BTreeMap::new();
    for (i, (_, modules)) in rows.iter().enumerate() {
        for m in modules {
            assert!(
                layer.insert(m.clone(), i).is_none(),
                "module {m} is in two rows of the layer table"
            );
        }
    }
    layer
}

#[test]
fn no_module_uses_a_module_of_a_lower_layer() {
    let rows = layer_table(ARCHITECTURE);
    let layer = layer_index(&rows);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let present = modules_in(&src);
    for (i, (name, modules)) in rows.iter().enumerate() {
        let absent: Vec<_> = modules.iter().filter(|m| !present.contains(*m)).collect();
        println!("layer {i} {name}: {modules:?}; not in src/ yet: {absent:?}");
    }
    let unplaced: Vec<_> = present.iter().filter(|m| !layer.contains_key(*m)).collect();
    assert!(
        unplaced.is_empty(),
        "modules of src/ in no row of docs/architecture.md's layer table: {unplaced:?}"
    );
    let (uses, files) = uses_in_src(&src);
    let mut pairs: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for u in uses.iter().filter(|u| u.from != u.to) {
        *pairs.entry((&u.from, &u.to)).or_default() += 1;
    }
    println!(
        "{files} files, {} uses of other modules, {} module pairs:",
        uses.iter().filter(|u| u.from != u.to).count(),
        pairs.len()
    );
    for ((from, to), n) in &pairs {
        println!("  {from} → {to} ({n})");
    }
    let bad = upward(&uses, &layer);
    for (u, from, to) in &bad {
        println!(
            "UPWARD {}:{}: {} (layer {from} {}) uses {} (layer {to} {}): {}",
            u.file, u.line, u.from, rows[*from].0, u.to, rows[*to].0, u.text
        );
    }
    assert!(
        bad.is_empty(),
        "{} uses of a module of a lower layer (listed above)",
        bad.len()
    );
    // The check sees the uses it is meant to: the integrators use `ode`, and `model` uses the
    // runtime it builds.
    assert!(pairs.contains_key(&("integrators", "ode")));
    assert!(pairs.contains_key(&("model", "simulation")));
}

/// The checker on made-up files: an upward `use`, a path in code, a `use crate::{…}` group, a
/// `super::` to the root, and a macro are found; comments, strings and test items are not.
#[test]
fn the_checker_finds_upward_uses_and_ignores_comments_strings_and_tests() {
    let rows = vec![
        ("low".to_string(), vec!["ode".to_string()]),
        ("mid".to_string(), vec!["integrators".to_string()]),
        ("high".to_string(), vec!["simulation".to_string()]),
    ];
    let layer = layer_index(&rows);
    let mut macros = BTreeMap::new();
    macros.insert("drive".to_string(), "simulation".to_string());
    let src = r##"
//! Uses `crate::simulation` in a comment only.
use crate::ode::OdeSystem;
use crate::{ode::Other, simulation::Settings};
/* a block comment: crate::simulation::x /* nested */ still */
fn f() -> &'static str {
    let _c = '"';
    let _t = crate::simulation::time(1.0);
    crate::drive!();
    "crate::simulation in a string"
}
const R: &str = r#"crate::simulation"#;
#[cfg(test)]
mod tests {
    use crate::simulation::Simulation;
}
#[cfg(test)]
#[path = "x_tests.rs"]
mod more_tests;
"##;
    let chars: Vec<char> = src.chars().collect();
    let mut code = code_only(&chars);
    let tests = without_tests(Path::new("src/integrators/bdf/x.rs"), &chars, &mut code);
    println!("test files declared: {tests:?}");
    assert_eq!(tests, [PathBuf::from("src/integrators/bdf/x_tests.rs")]);
    let uses = uses_in("integrators/bdf/x.rs", &code, &macros);
    for u in &uses {
        println!("{}:{} {} → {}: {}", u.file, u.line, u.from, u.to, u.text);
    }
    let to: Vec<(&str, usize)> = uses.iter().map(|u| (u.to.as_str(), u.line)).collect();
    assert_eq!(
        to,
        [
            ("ode", 3),
            ("ode", 4),
            ("simulation", 4),
            ("simulation", 8),
            ("simulation", 9)
        ]
    );
    let bad = upward(&uses, &layer);
    assert_eq!(bad.len(), 3, "the three uses of simulation are upward");
    // `super::` from a module's own file climbs to the root: another module.
    let code = code_only(
        &"use super::ode::X;\nuse super::y::Z;"
            .chars()
            .collect::<Vec<_>>(),
    );
    let uses = uses_in("integrators/mod.rs", &code, &macros);
    let to: Vec<&str> = uses.iter().map(|u| u.to.as_str()).collect();
    println!("super:: from integrators/mod.rs: {to:?}");
    assert_eq!(to, ["ode", "y"]);
    let uses = uses_in("integrators/bdf/mod.rs", &code, &macros);
    assert!(uses.is_empty(), "super:: inside integrators stays there");
}
