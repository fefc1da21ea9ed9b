//! Every file the command line reads is bounded and never blocks: a FIFO, a device (endless
//! `/dev/zero`, `/dev/urandom`), a directory and a sparse file far above the size limit are each
//! refused at once by `plenum run`, `check` and `describe`, with the exit status of an I/O error
//! (docs/checks.md) and a message that says what the path is. A FIFO blocked `plenum check`
//! forever; `/dev/zero` was read up to the limit first.

use std::path::PathBuf;

use crate::common::plenum_command as plenum;

#[path = "../common/hostile_inputs.rs"]
mod hostile_inputs;
use hostile_inputs::{bounded, hostile_paths};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("plenum-inputs-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
