//! Every file the command line reads is bounded and never blocks: a FIFO, a device (endless
//! `/dev/zero`, `/dev/urandom`), a directory and a sparse file far above the size limit are each
//! refused at once by `plenum run`, `check` and `describe`, with the exit status of an I/O error
//! (docs/checks.md) and a message that says what the path is. A FIFO blocked `plenum check`
//! forever; `/dev/zero` was read up to the limit first.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::plenum_command as plenum;

/// Longest a refusal may take, s: each is a look at the path's metadata (milliseconds); the
/// margin is for a loaded machine.
const BOUND_S: f64 = 20.0;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("plenum-inputs-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `cmd` for at most [`BOUND_S`] (then kills it and fails): exit status, stderr, seconds.
pub fn bounded(cmd: &mut Command) -> (Option<i32>, String, f64) {
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

/// The paths of each class that exist here, with the words the refusal must contain.
pub fn hostile_paths(dir: &Path, limit: u64) -> Vec<(String, PathBuf, String)> {
    let mut out = Vec::new();
    let fifo = dir.join("fifo.toml");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        out.push(("a FIFO".into(), fifo, "FIFO".into()));
    } else {
        println!("no mkfifo: the FIFO case is skipped");
    }
    for dev in ["/dev/zero", "/dev/urandom"] {
        if Path::new(dev).exists() {
            out.push((dev.into(), dev.into(), "character device".into()));
        }
    }
    out.push(("a directory".into(), dir.to_path_buf(), "directory".into()));
    // A terabyte without a byte on disk: refused by its size, never read.
    let sparse = dir.join("sparse.toml");
    let f = std::fs::File::create(&sparse).unwrap();
    f.set_len(1 << 40).unwrap();
    out.push((
        "a sparse file of 1 TiB".into(),
        sparse,
        format!("limit of {limit} bytes"),
    ));
    out
}

#[test]
fn fifos_devices_directories_and_huge_files_are_refused_at_once() {
    let dir = temp_dir("classes");
    let limit = plenum::model::MAX_MODEL_FILE_BYTES;
    let cases = hostile_paths(&dir, limit);
    for (what, path, needle) in &cases {
        for sub in ["run", "check", "describe"] {
            let (code, stderr, secs) = bounded(plenum().arg(sub).arg(path));
            println!(
                "plenum {sub} {what}: exit {code:?} in {secs:.3} s: {}",
                stderr.trim()
            );
            assert_eq!(code, Some(1), "{sub} {what}: {stderr}");
            assert!(stderr.contains(needle.as_str()), "{sub} {what}: {stderr}");
        }
        // The library's reader (fmu-build and fmi2Instantiate go through it) says the same.
        let e = plenum::model::load_path(path, &[]).unwrap_err();
        assert!(e[0].message.contains(needle.as_str()), "{:?}", e[0]);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A regular file at the limit is read; one byte more is refused by its size.
#[test]
fn a_model_file_at_the_limit_is_read_and_one_byte_more_is_not() {
    let dir = temp_dir("limit");
    let limit = plenum::model::MAX_MODEL_FILE_BYTES;
    let src = std::fs::read_to_string(crate::common::repo_path("models/blowdown.toml")).unwrap();
    // The model, then comment lines up to exactly `limit` bytes.
    let mut text = src.clone();
    let line = format!("#{}\n", "x".repeat(98));
    while text.len() + line.len() <= limit as usize {
        text.push_str(&line);
    }
    text.push_str(&"#".repeat(limit as usize - text.len() - 1));
    text.push('\n');
    assert_eq!(text.len() as u64, limit);
    let at = dir.join("at.toml");
    std::fs::write(&at, &text).unwrap();
    let (code, stderr, secs) = bounded(plenum().arg("check").arg(&at));
    println!(
        "check of {limit} bytes: exit {code:?} in {secs:.2} s {}",
        stderr.trim()
    );
    assert_eq!(code, Some(0), "{stderr}");
    let over = dir.join("over.toml");
    text.push('\n');
    std::fs::write(&over, &text).unwrap();
    let (code, stderr, _) = bounded(plenum().arg("check").arg(&over));
    println!(
        "check of {} bytes: exit {code:?}: {}",
        limit + 1,
        stderr.trim()
    );
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains(&format!("limit of {limit} bytes")),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
