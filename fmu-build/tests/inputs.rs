//! Every file fmu-build reads is bounded and never blocks: a FIFO, `/dev/zero`, `/dev/urandom`,
//! a directory and a sparse file far above the limit, given as the model file or as `--lib`,
//! are each refused at once with a message that says what the path is, and nothing is written.
//! `--lib /dev/zero` grew to 2.1 GB in 3 s; a FIFO as the model file blocked forever.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../tests/common/hostile_inputs.rs"]
mod hostile_inputs;
use hostile_inputs::{bounded, hostile_paths};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fmu-build-inputs-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fmu_build() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fmu-build"))
}

#[test]
fn hostile_model_files_and_libraries_are_refused_at_once() {
    let dir = tmp("classes");
    let model = workspace().join("models/two_tanks.toml");
    let out = dir.join("out");
    let cases = [
        ("model file", plenum::model::MAX_MODEL_FILE_BYTES, 2),
        ("--lib", fmu_build::MAX_LIBRARY_BYTES, 1),
    ];
    for (role, limit, status) in cases {
        for (what, path, needle) in hostile_paths(&dir, limit) {
            let mut cmd = fmu_build();
            if role == "--lib" {
                cmd.arg(&model).arg("--lib").arg(&path);
            } else {
                // No library is needed to refuse a model (and none may be built here).
                cmd.arg(&path).arg("--description-only");
            }
            let (code, stderr, secs) = bounded(cmd.arg("-o").arg(&out));
            println!(
                "{what} as the {role}: exit {code:?} in {secs:.3} s: {}",
                stderr.trim()
            );
            assert_eq!(code, Some(status), "{what} as {role}: {stderr}");
            assert!(
                stderr.contains(needle.as_str()),
                "{what} as {role}: {stderr}"
            );
            assert!(!out.join("two_tanks.fmu").exists() && !out.join("two_tanks.xml").exists());
            if let Ok(meta) = std::fs::symlink_metadata(&path)
                && !meta.is_dir()
                && path.starts_with(&dir)
            {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The workspace looked for around the current directory is found by reading each ancestor's
/// `Cargo.toml` through the bounded reader: a FIFO named `Cargo.toml` there does not block the
/// library lookup, and the copied executable (outside any build tree) ends at once, with exit 1
/// (no library) and the places it looked.
#[test]
fn a_fifo_named_cargo_toml_around_the_current_directory_does_not_block() {
    let dir = tmp("manifest-fifo");
    let manifest = dir.join("Cargo.toml");
    if !Command::new("mkfifo")
        .arg(&manifest)
        .status()
        .is_ok_and(|s| s.success())
    {
        println!("no mkfifo: skipped");
        return;
    }
    // A hard link where it can be (a copy's write handle, inherited by a process another test
    // thread forks meanwhile, makes exec fail with "Text file busy").
    let exe = dir.join("fmu-build");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_fmu-build"), &exe).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_fmu-build"), &exe).unwrap();
    }
    let out = dir.join("out");
    let (code, stderr, secs) = bounded(
        Command::new(&exe)
            .arg(workspace().join("models/two_tanks.toml"))
            .arg("-o")
            .arg(&out)
            .current_dir(&dir)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("PLENUM_FMU_LIBS"),
    );
    println!("FIFO Cargo.toml in the current directory: exit {code:?} in {secs:.3} s");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("no Cargo target directory"), "{stderr}");
    assert!(!out.join("two_tanks.fmu").exists());
    std::fs::remove_dir_all(&dir).ok();
}
