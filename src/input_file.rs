//! Reading a file that a user names (a model file, a library to pack): bounded in size and
//! never blocking. Every tool reads its input files through [`read_bounded`]: the command line,
//! fmu-build (models and `--lib`), and the FMU's own `resources/model.toml`.
//!
//! What it refuses, at once and before reading a byte:
//! - anything that is not a regular file: a directory, a FIFO (opening one for reading waits
//!   for a writer, forever), a character device (`/dev/zero`, `/dev/urandom`: endless), a
//!   block device, a socket. The type is read from the path's metadata before opening, and
//!   again from the opened file, which is opened with `O_NONBLOCK` so that a path swapped for a
//!   FIFO in between does not block either (open(2): "O_NONBLOCK … the open() for reading-only
//!   returns without delay" on a FIFO).
//! - a file whose size is above the caller's limit (a sparse file of a terabyte is refused by
//!   its size, not read).
//!
//! A regular file that grows while it is read is still read up to the limit plus one byte only.

use std::io::Read;
use std::path::Path;

/// What a path is, when it is not a regular file, in words for a message.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("it is a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some(
                "it is a FIFO (named pipe), which would wait for a writer, not a regular file",
            );
        }
        if t.is_char_device() {
            return Some("it is a character device, not a regular file");
        }
        if t.is_block_device() {
            return Some("it is a block device, not a regular file");
        }
        if t.is_socket() {
            return Some("it is a socket, not a regular file");
        }
    }
    Some("it is not a regular file")
}

/// Opened for reading without blocking: `O_NONBLOCK` on Unix (no effect on a regular file).
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// `limit` bytes in words: `16777216 bytes (16 MiB)`.
pub fn limit_text(limit: u64) -> String {
    if limit >= 1 << 20 && limit % (1 << 20) == 0 {
        format!("{limit} bytes ({} MiB)", limit >> 20)
    } else {
        format!("{limit} bytes")
    }
}

/// The bytes of the regular file at `path`, at most `limit`; `what` names the file's kind in
/// the size error (`a model file`, `a library`). `Err` says why not, starting with
/// `cannot read: ` for an I/O problem or a path that is not a regular file, and with
/// `larger than the limit of ` for a file that is too large.
pub fn read_bounded(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    let too_large = || format!("larger than the limit of {} for {what}", limit_text(limit));
    let check = |meta: &std::fs::Metadata| -> Result<(), String> {
        if let Some(why) = not_regular(meta) {
            return Err(format!("cannot read: {why}"));
        }
        if meta.len() > limit {
            return Err(too_large());
        }
        Ok(())
    };
    check(&std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?)?;
    let file = open(path).map_err(|e| format!("cannot read: {e}"))?;
    // The path may have been replaced between the two looks: the opened file decides.
    check(&file.metadata().map_err(|e| format!("cannot read: {e}"))?)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("plenum-input-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn regular_files_are_read_up_to_the_limit() {
        let d = dir("regular");
        let f = d.join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_bounded(&f, 10, "a test file").unwrap(), b"0123456789");
        let e = read_bounded(&f, 9, "a test file").unwrap_err();
        println!("10 bytes, limit 9: {e}");
        assert_eq!(e, "larger than the limit of 9 bytes for a test file");
        let e = read_bounded(&d, 10, "a test file").unwrap_err();
        println!("a directory: {e}");
        assert_eq!(e, "cannot read: it is a directory");
        let e = read_bounded(&d.join("missing"), 10, "a test file").unwrap_err();
        println!("a missing file: {e}");
        assert!(e.starts_with("cannot read: "), "{e}");
        assert_eq!(limit_text(16 << 20), "16777216 bytes (16 MiB)");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused_without_reading() {
        for (path, needle) in [("/dev/zero", "character device"), ("/dev/null", "device")] {
            if std::path::Path::new(path).exists() {
                let e = read_bounded(std::path::Path::new(path), 1 << 20, "x").unwrap_err();
                println!("{path}: {e}");
                assert!(e.contains(needle), "{e}");
            }
        }
    }
}
