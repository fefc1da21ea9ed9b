//! The repository stands on its own: no text in it (docs, code and its comments, tests and
//! their messages, compliance tests, benches, examples, scripts) points at an issue tracker or
//! at files outside the repository, and no page of docs carries the date of a measurement (the
//! git history has them). What is meant is named instead: the document by its title, or the
//! page of docs/ that holds it.

use std::path::{Path, PathBuf};

/// Directories never read: build output, version control, Python caches, and the fuzz corpus
/// (generated inputs, not text).
const SKIPPED_DIRS: [&str; 6] = [
    "target",
    ".git",
    "__pycache__",
    ".pytest_cache",
    "corpus",
    "node_modules",
];

/// What a reference to the outside looks like, and a name for it. Each pattern is a function of
/// one line (no regex crate): `issue 27`, `issues 4`, `issue #50`, a bare `#12`, `seed 002`,
/// `seed002`, `seed_002`, `../shared/` (but for `../shared/vendor`, a build input).
fn outside_references(line: &str) -> Vec<&'static str> {
    let lower = line.to_lowercase();
    let b = lower.as_bytes();
    let mut found = Vec::new();
    let word_start = |k: usize| k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_');
    for (k, _) in lower.match_indices("issue") {
        let mut j = k + "issue".len();
        if b.get(j) == Some(&b's') {
            j += 1;
        }
        while b.get(j) == Some(&b' ') {
            j += 1;
        }
        if b.get(j) == Some(&b'#') {
            j += 1;
        }
        if word_start(k) && j > k + 5 && b.get(j).is_some_and(u8::is_ascii_digit) {
            found.push("an issue number");
        }
    }
    for (k, _) in lower.match_indices('#') {
        let before = k == 0 || b[k - 1] == b' ' || b[k - 1] == b'(' || b[k - 1] == b'[';
        if before && b.get(k + 1).is_some_and(u8::is_ascii_digit) {
            found.push("a tracker number (#N)");
        }
    }
    for (k, _) in lower.match_indices("seed") {
        let mut j = k + "seed".len();
        if matches!(b.get(j), Some(b' ' | b'_')) {
            j += 1;
        }
        let digits = b
            .get(j..j + 3)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit));
        if word_start(k) && digits && b[j] == b'0' {
            found.push("a seed file");
        }
    }
    // ../shared/vendor is a build input, not a source of knowledge: the source archives of the
    // importers the tests build (compliance-tests/importers/build-tools.sh), placed beside the
    // checkout. Anything else under ../shared/ is outside the repository.
    let outside = lower
        .match_indices("../shared/")
        .any(|(k, m)| !lower[k + m.len()..].starts_with("vendor"));
    if outside {
        found.push("a file outside the repository (../shared/)");
    }
    found
}

/// An ISO date (`2026-11-27`) in a line.
fn has_date(line: &str) -> bool {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(9)).any(|k| {
        let d = &b[k..k + 10];
        let digits = |r: std::ops::Range<usize>| d[r].iter().all(u8::is_ascii_digit);
        let shape = digits(0..4) && d[4] == b'-' && digits(5..7) && d[7] == b'-' && digits(8..10);
        let bounded = (k == 0 || !b[k - 1].is_ascii_digit())
            && b.get(k + 10).is_none_or(|c| !c.is_ascii_digit());
        shape
            && bounded
            && (d[0] == b'1' || d[0] == b'2')
            && (1..=12).contains(&((d[5] - b'0') * 10 + (d[6] - b'0')))
    })
}

/// Every text file under `dir` (UTF-8 and no NUL), but the skipped directories, pictures and
/// lock files.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_str()) {
                text_files(&p, out);
            }
        } else if !name.ends_with(".svg") && !name.ends_with(".lock") {
            out.push(p);
        }
    }
}

#[test]
fn no_text_refers_to_a_tracker_or_to_files_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let this_file = root.join("tests/docs/standalone.rs");
    let mut files = Vec::new();
    text_files(root, &mut files);
    let (mut read, mut lines, mut dated_pages) = (0, 0, 0);
    let mut found = Vec::new();
    for path in files.iter().filter(|p| **p != this_file) {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if text.contains('\0') {
            continue;
        }
        read += 1;
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        let page = rel.ends_with(".md");
        dated_pages += usize::from(page);
        for (i, line) in text.lines().enumerate() {
            lines += 1;
            for what in outside_references(line) {
                found.push(format!("{rel}:{}: {what}: {}", i + 1, line.trim()));
            }
            if page && has_date(line) {
                found.push(format!("{rel}:{}: a date: {}", i + 1, line.trim()));
            }
        }
    }
    println!(
        "{read} text files, {lines} lines read ({dated_pages} Markdown pages checked for dates)"
    );
    for f in &found {
        println!("{f}");
    }
    assert!(read > 100, "the walk found the repository's files");
    assert!(
        found.is_empty(),
        "{} references to a tracker, seed files, ../shared or dates (listed above): name the \
         document or docs/ page instead",
        found.len()
    );
}

/// The patterns on lines that have them and on lines that only look alike.
#[test]
fn the_patterns_find_references_and_leave_look_alikes() {
    let refer = [
        ("as issue 27 asks", "an issue number"),
        ("(Issues 4 and 5)", "an issue number"),
        ("FMUComplianceChecker issue #50", "an issue number"),
        ("see #12", "a tracker number (#N)"),
        ("the procedures of seed 002", "a seed file"),
        ("tests/seed002_fmus.rs", "a seed file"),
        ("fn seed_002_procedures()", "a seed file"),
        (
            "as ../shared/notes/models.md says",
            "a file outside the repository (../shared/)",
        ),
    ];
    for (line, what) in refer {
        let found = outside_references(line);
        println!("{line:?}: {found:?}");
        assert!(found.contains(&what), "{line:?} should be {what}");
    }
    let clean = [
        "fill=\"#000000\"",
        "#[derive(Debug)]",
        "# 2 chambers",
        "issues a warning at step 3",
        "tissue 5",
        "the seed blob (fuzz corpus)",
        "SeedableRng::seed_from_u64(7)",
        "mod issue_tracker_free;",
        "the archives in ../shared/vendor/ (a build input)",
    ];
    for line in clean {
        println!("{line:?}: {:?}", outside_references(line));
        assert!(outside_references(line).is_empty(), "{line:?}");
    }
    assert!(has_date("three runs on 2026-11-27 (CPU 0)"));
    assert!(!has_date("ISO 6358-1:2013, 1e-12, 2019"));
    assert!(!has_date("v0.2026-11-270"));
}
