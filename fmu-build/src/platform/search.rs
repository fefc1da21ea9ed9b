//! Where `fmu-build` finds each platform's library when no `--lib` names one.

use std::path::PathBuf;

use super::{PROFILE, Platform};

/// The target directories `fmu-build` looks in, in order, each once: `$CARGO_TARGET_DIR`, the
/// target directory this executable was built into (`<target>/<profile>/fmu-build` or
/// `<target>/<triple>/<profile>/fmu-build`), and the `target/` of the Cargo workspace around the
/// current directory.
pub fn target_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Ok(exe) = std::env::current_exe() {
        let exe = exe.canonicalize().unwrap_or(exe);
        // <target>/<profile>/fmu-build or <target>/<triple>/<profile>/fmu-build; a folder is a
        // cargo target directory when cargo left its marks there.
        for up in [2, 3] {
            if let Some(d) = exe.ancestors().nth(up)
                && (d.join("CACHEDIR.TAG").is_file() || d.join(".rustc_info.json").is_file())
            {
                dirs.push(d.to_path_buf());
            }
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            let manifest = dir.join("Cargo.toml");
            if std::fs::read_to_string(&manifest).is_ok_and(|t| t.contains("[workspace]")) {
                dirs.push(dir.join("target"));
                break;
            }
        }
    }
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let key = d.canonicalize().unwrap_or_else(|_| d.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new && d.is_dir()
    });
    dirs
}

/// Where `platform`'s shipped library is looked for in `target_dirs`:
/// `<dir>/<rust target>/fmu/<file>`.
pub fn candidates(platform: Platform, target_dirs: &[PathBuf]) -> Vec<PathBuf> {
    target_dirs
        .iter()
        .map(|d| {
            d.join(platform.rust_target())
                .join(PROFILE)
                .join(platform.cargo_file())
        })
        .collect()
}

/// The first candidate that exists, or every path looked at.
pub fn find(platform: Platform, target_dirs: &[PathBuf]) -> Result<PathBuf, Vec<PathBuf>> {
    let c = candidates(platform, target_dirs);
    c.iter().find(|p| p.is_file()).cloned().ok_or(c)
}
