//! Reading the README and docs/ for the tests that run their commands: fenced code blocks, and
//! the workspace's own builds of the tools the commands name.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fenced code block: its language, its text, and the prose since the previous block.
pub struct Block {
    pub lang: String,
    pub text: String,
    pub before: String,
}

pub fn blocks(section: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut prose = String::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            prose.push_str(line);
            prose.push('\n');
            continue;
        };
        let mut text = String::new();
        for l in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            text.push_str(l);
            text.push('\n');
        }
        out.push(Block {
            lang: lang.trim().to_string(),
            text,
            before: std::mem::take(&mut prose),
        });
    }
    out
}

/// The executables of `plenum` and `fmu-build` in the tests' profile, built by a nested Cargo
/// as `library_path` builds the library.
pub fn tools() -> &'static (PathBuf, PathBuf) {
    static TOOLS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let mut cmd = Command::new(cargo);
        // The same build as scripts/demo.sh's, which then finds it fresh after the tests.
        cmd.args([
            "build",
            "-p",
            "plenum",
            "--bin",
            "plenum",
            "-p",
            "fmu-build",
            "--bin",
            "fmu-build",
            "--message-format=json",
        ])
        .arg("--manifest-path")
        .arg(&manifest);
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("cannot run cargo to build the tools");
        assert!(
            out.status.success(),
            "cargo build of plenum and fmu-build failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let exe = |name: &str| -> PathBuf {
            stdout
                .lines()
                .filter_map(|l| l.split("\"executable\":\"").nth(1))
                .filter_map(|rest| rest.split('"').next())
                .find(|p| Path::new(p).file_name().is_some_and(|f| f == name))
                .map(PathBuf::from)
                .unwrap_or_else(|| panic!("cargo reported no {name} executable:\n{stdout}"))
        };
        (exe("plenum"), exe("fmu-build"))
    })
}
