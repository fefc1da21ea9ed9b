//! Every command README.md and docs/*.md give a user to type still runs: a renamed binary, a
//! package that left the default members, a flag the CLI no longer takes or a script that moved
//! fails here, not on a user's machine.
//!
//! - Each line of a fenced `sh` block is run, or shown to be run elsewhere: the README's first two
//!   commands (`bash scripts/demo.sh`, `bash scripts/test.sh`) must be lines of `.ci/run`, which
//!   runs them in a fresh clone; the tutorial section's commands are run by
//!   `readme_tutorial.rs`; a `cargo run … -- ARGS` line has its Cargo part checked (below) and its
//!   arguments run by this workspace's build of the binary, once as the bare command and once
//!   with every optional `[…]` part that names no placeholder (a word in capitals such as `N`).
//!   A line of any other form fails the test until this harness learns to run it.
//! - Each `cargo …` command quoted inline (in backticks) has its Cargo part checked: Cargo must
//!   accept its packages, targets and profile. Cargo checks those before it compiles anything, so
//!   the command is run in an empty target directory with a `RUSTC_WRAPPER` that lets Cargo query
//!   rustc and refuses the first compilation: a command that gets that far is accepted (an
//!   unknown `--bin`, `--bench`, `--test` or `-p` stops earlier, with Cargo's own message).
//!   `cargo fmt` and `cargo clippy` must be run by `.ci/run`; `cargo install` and a Cargo plugin
//!   (`cargo insta`) are listed and not run.
//! - Each `bash <script>` quoted inline names a script that exists and parses (`bash -n`).
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

mod doc_support;
use doc_support::{blocks, tools};

use compliance_tests::fmu::temp_dir;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// README.md and every docs/*.md, as (path relative to the workspace, text).
fn documents() -> Vec<(String, String)> {
    let root = workspace();
    let mut names = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n)).unwrap();
            (n, text)
        })
        .collect()
}

/// The lines of `.ci/run` that are commands (no comments, no blank lines), trimmed.
fn ci_lines() -> Vec<String> {
    std::fs::read_to_string(workspace().join(".ci/run"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The README's tutorial section, whose commands `readme_tutorial.rs` runs.
const TUTORIAL: &str = "## Your first model in ten minutes";

/// The Cargo subcommands that compile (those the probe can check).
const COMPILING: [&str; 5] = ["build", "run", "test", "bench", "check"];

/// A `RUSTC_WRAPPER` that runs rustc for Cargo's queries (`-vV`, `--print`, a program on stdin)
/// and refuses anything else, so a probed command stops at its first compilation.
const MARKER: &str = "doc-commands probe: Cargo reached a compilation";

fn wrapper(dir: &Path) -> PathBuf {
    let path = dir.join("refuse-to-compile.sh");
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in -vV|-V|--version|--print*|-) exec \
         \"$@\" ;; esac\ndone\necho '{MARKER}' >&2\nexit 101\n"
    );
    std::fs::write(&path, script).unwrap();
    let status = Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    assert!(status.success());
    path
}

/// Cargo accepts `cargo <words>` (the part before ` -- `): it gets as far as compiling.
fn probe_cargo(words: &[&str], dir: &Path) -> Result<(), String> {
    let target = dir.join("target");
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(words)
        .current_dir(workspace())
        .env("RUSTC_WRAPPER", wrapper(dir))
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_NET_OFFLINE", "true")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&target);
    if stderr.contains(MARKER) {
        Ok(())
    } else {
        Err(format!(
            "cargo {} did not get as far as compiling ({}):\n{stderr}",
            words.join(" "),
            out.status
        ))
    }
}

/// The words of a Cargo command up to its ` -- ` (what Cargo itself reads).
fn cargo_part(words: &[String]) -> Vec<String> {
    words
        .iter()
        .take_while(|w| *w != "--")
        .filter(|w| *w != "cargo")
        .cloned()
        .collect()
}

/// A synopsis line split into words outside `[…]` and its optional groups.
fn synopsis(line: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut base = Vec::new();
    let mut groups = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        base.extend(rest[..open].split_whitespace().map(str::to_string));
        let close = rest[open..]
            .find(']')
            .unwrap_or_else(|| panic!("unbalanced [ in {line:?}"));
        groups.push(
            rest[open + 1..open + close]
                .split_whitespace()
                .map(str::to_string)
                .collect(),
        );
        rest = &rest[open + close + 1..];
    }
    base.extend(rest.split_whitespace().map(str::to_string));
    (base, groups)
}

/// A placeholder a user replaces (`N`, `PATH`): a word in capital letters.
fn is_placeholder(word: &str) -> bool {
    word.len() <= 12 && !word.is_empty() && word.chars().all(|c| c.is_ascii_uppercase())
}

/// Run `program args` in `cwd`, where a word naming a file of the workspace (`models/x.toml`)
/// is given as that file's path.
fn run_program(program: &Path, args: &[String], cwd: &Path) -> Result<String, String> {
    let root = workspace();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if root.join(a).exists() && !a.is_empty() {
                root.join(a).display().to_string()
            } else {
                a.clone()
            }
        })
        .collect();
    let out = Command::new(program)
        .args(&args)
        .current_dir(cwd)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!(
            "{} {} failed ({}):\n{text}",
            program.display(),
            args.join(" "),
            out.status
        ))
    }
}

/// The binary a `cargo run` line runs, as this workspace's test build of it.
fn binary(cargo: &[String]) -> PathBuf {
    let bin = cargo
        .iter()
        .position(|w| w == "--bin")
        .map(|i| cargo[i + 1].as_str())
        .unwrap_or("plenum");
    match bin {
        "plenum" => tools().0.clone(),
        "fmu-build" => tools().1.clone(),
        other => panic!("a `cargo run --bin {other}` line: this harness has no build of {other}"),
    }
}

/// The inline code spans of a text (between single backticks, outside fenced blocks; a span
/// may continue on the next line).
fn inline_code(text: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push(' ');
        }
    }
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.replace("\\|", "|"))
        .collect()
}

#[test]
fn every_command_in_the_readme_and_docs_runs() {
    let dir = temp_dir("doc-commands");
    std::fs::create_dir_all(&dir).unwrap();
    let ci = ci_lines();
    let mut ran = 0;
    let mut failures = Vec::new();
    let mut probed: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut check_cargo = |cargo: Vec<String>, place: &str, failures: &mut Vec<String>| {
        if probed.insert(cargo.clone()) {
            let words: Vec<&str> = cargo.iter().map(String::as_str).collect();
            match probe_cargo(&words, &dir) {
                Ok(()) => println!("{place}: cargo {} — accepted by Cargo", cargo.join(" ")),
                Err(e) => failures.push(format!("{place}: {e}")),
            }
        }
    };

    for (name, text) in documents() {
        // Fenced sh blocks, outside the tutorial section.
        let (outside, tutorial) = match text.find(TUTORIAL) {
            Some(start) => {
                let body = &text[start + TUTORIAL.len()..];
                let end = start + TUTORIAL.len() + body.find("\n## ").unwrap_or(body.len());
                (
                    format!("{}{}", &text[..start], &text[end..]),
                    blocks(&text[start..end]),
                )
            }
            None => (text.clone(), Vec::new()),
        };
        let tutorial_lines = tutorial
            .iter()
            .filter(|b| b.lang == "sh")
            .flat_map(|b| b.text.lines().map(str::to_string).collect::<Vec<_>>())
            .filter(|l| !l.trim().is_empty())
            .count();
        if tutorial_lines > 0 {
            println!(
                "{name}: {tutorial_lines} tutorial command lines (readme_tutorial.rs runs them)"
            );
        }
        for block in blocks(&outside).iter().filter(|b| b.lang == "sh") {
            for line in block.text.lines() {
                let line = line.split(" #").next().unwrap_or("").trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let place = format!("{name}: `{line}`");
                let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
                if words[0] == "bash" {
                    // As written, alone or with what .ci/run does with its exit code.
                    if ci
                        .iter()
                        .any(|c| c == line || c.starts_with(&format!("{line} ")))
                    {
                        println!("{place}: run by .ci/run as written");
                    } else {
                        failures.push(format!("{place}: not a line of .ci/run"));
                    }
                    continue;
                }
                if words[0] == "cargo" && words.get(1).is_some_and(|w| w == "run") {
                    let cargo = cargo_part(&words);
                    check_cargo(cargo.clone(), &place, &mut failures);
                    let program = binary(&cargo);
                    let dash = words.iter().position(|w| w == "--").unwrap_or(words.len());
                    let args_text = words.get(dash + 1..).unwrap_or(&[]).join(" ");
                    let (base, groups) = synopsis(&args_text);
                    let mut full = base.clone();
                    for g in &groups {
                        if g.iter().any(|w| is_placeholder(w)) {
                            println!("{place}: [{}] names a placeholder, not run", g.join(" "));
                        } else {
                            full.extend(
                                g.iter()
                                    .map(|w| w.split('|').next().unwrap_or(w).to_string()),
                            );
                        }
                    }
                    let variants = if full == base {
                        vec![base]
                    } else {
                        vec![base, full]
                    };
                    for args in variants {
                        match run_program(&program, &args, &dir) {
                            Ok(out) => {
                                ran += 1;
                                println!(
                                    "{place}: ran `cargo {} -- {}` ({} lines of output)",
                                    cargo.join(" "),
                                    args.join(" "),
                                    out.lines().count()
                                );
                            }
                            Err(e) => failures.push(format!("{place}: {e}")),
                        }
                    }
                    continue;
                }
                failures.push(format!(
                    "{place}: a command this test does not know how to run (teach it)"
                ));
            }
        }

        // Inline commands.
        for code in inline_code(&text) {
            let words: Vec<String> = code.split_whitespace().map(str::to_string).collect();
            let place = format!("{name}: `{code}`");
            match words.first().map(String::as_str) {
                Some("cargo") if words.len() > 1 => {
                    let sub = words[1].as_str();
                    if sub == "fmt" || sub == "clippy" {
                        if ci.iter().any(|c| c.starts_with(&format!("cargo {sub}"))) {
                            println!("{place}: .ci/run runs cargo {sub}");
                        } else {
                            failures.push(format!("{place}: .ci/run runs no `cargo {sub}`"));
                        }
                    } else if COMPILING.contains(&sub) {
                        check_cargo(cargo_part(&words), &place, &mut failures);
                    } else {
                        if sub == "install" {
                            println!("{place}: installs into the user's machine, not run");
                        } else {
                            println!(
                                "{place}: not a Cargo command that compiles (a plugin), not run"
                            );
                        }
                    }
                }
                Some("bash") if words.len() > 1 => {
                    let script = workspace().join(&words[1]);
                    let ok = script.is_file()
                        && Command::new("bash")
                            .arg("-n")
                            .arg(&script)
                            .status()
                            .is_ok_and(|s| s.success());
                    if ok {
                        println!("{place}: {} exists and parses", words[1]);
                    } else {
                        failures.push(format!(
                            "{place}: {} is missing or does not parse",
                            words[1]
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{ran} command runs, {} Cargo command lines checked, {} failures",
        probed.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
    assert!(
        ran >= 4 && probed.len() >= 10,
        "{ran} runs, {} Cargo lines: fewer than the docs have (docs/cli.md's four `cargo run` \
         lines, the inline Cargo commands); this harness stopped finding them",
        probed.len()
    );
}

#[test]
fn the_probe_refuses_what_cargo_refuses() {
    // The control: the README's demo once had this line, which Cargo refuses (fmu-build is not a
    // default member), and a bench that does not exist.
    let dir = temp_dir("doc-commands-control");
    std::fs::create_dir_all(&dir).unwrap();
    for words in [
        &[
            "build",
            "--release",
            "-q",
            "--bin",
            "plenum",
            "--bin",
            "fmu-build",
        ][..],
        &["bench", "--bench", "no_such_bench"][..],
    ] {
        let e = probe_cargo(words, &dir).unwrap_err();
        println!("refused as expected: {e}");
        assert!(
            e.contains("no bin target") || e.contains("no bench target"),
            "{e}"
        );
    }
    probe_cargo(&["build", "--release", "-q", "-p", "fmu-build"], &dir).unwrap();
    println!("cargo build --release -q -p fmu-build: accepted");
    let _ = std::fs::remove_dir_all(&dir);
}
