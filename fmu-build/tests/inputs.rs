//! Every file fmu-build reads is bounded and never blocks: a FIFO, `/dev/zero`, `/dev/urandom`,
//! a directory and a sparse file far above the limit, given as the model file or as `--lib`,
//! are each refused at once with a message that says what the path is, and nothing is written.
//! `--lib /dev/zero` grew to 2.1 GB in 3 s; a FIFO as the model file blocked forever.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a refusal may take, s (each is a look at the path's metadata; the margin is for a
/// loaded machine).
const BOUND_S: f64 = 20.0;

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

/// Runs `cmd` for at most [`BOUND_S`] (then kills it and fails): exit status, stderr, seconds.
fn bounded(cmd: &mut Command) -> (Option<i32>, String, f64) {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
            return (status.code(), stderr, start.elapsed().as_secs_f64());
        }
        if start.elapsed().as_secs_f64() > BOUND_S {
            child.kill().ok();
            child.wait().ok();
            panic!("{cmd:?} still running after {BOUND_S} s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The paths of each class that exist here, with the words the refusal must contain for a file
/// whose limit is `limit` bytes.
fn hostile_paths(dir: &Path, limit: u64) -> Vec<(String, PathBuf, String)> {
    let mut out = Vec::new();
    let fifo = dir.join("fifo");
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        out.push(("a FIFO".into(), fifo, "FIFO".into()));
    } else {
        println!("no mkfifo: the FIFO case is skipped");
    }
    for dev in ["/dev/zero", "/dev/urandom"] {
        if Path::new(dev).exists() {
            out.push((dev.into(), dev.into(), "character device".into()));
        }
    }
    let sub = dir.join("a-directory");
    std::fs::create_dir_all(&sub).unwrap();
    out.push(("a directory".into(), sub, "directory".into()));
    let sparse = dir.join("sparse");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    out.push((
        "a sparse file of 1 TiB".into(),
        sparse,
        format!("limit of {limit} bytes"),
    ));
    out
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
