//! Hostile input paths and a run bounded in time, shared by the input tests of the command line
//! (tests/cli/inputs.rs) and of fmu-build (fmu-build/tests/inputs.rs), which include this file
//! by path: a FIFO, the endless devices, a directory and a sparse file far above a size limit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a refusal may take, s: each is a look at the path's metadata (milliseconds); the
/// margin is for a loaded machine.
pub const BOUND_S: f64 = 20.0;

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

/// The paths of each class that exist here, made in `dir`, with the words the refusal must
/// contain for a file whose limit is `limit` bytes.
pub fn hostile_paths(dir: &Path, limit: u64) -> Vec<(String, PathBuf, String)> {
    let mut out = Vec::new();
    let fifo = dir.join("fifo.toml");
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
    // A terabyte without a byte on disk: refused by its size, never read.
    let sparse = dir.join("sparse.toml");
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
