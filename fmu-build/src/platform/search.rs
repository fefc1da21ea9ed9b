//! Where `fmu-build` finds each platform's library when no `--lib` names one, wherever the
//! executable is: built in the workspace, copied elsewhere, installed by `cargo install`, or
//! shipped by a package next to its libraries.
//!
//! For a platform, the first of these files that exists is packed (`<platform>` is its FMI 2.0
//! folder name, `linux64` or `win64`; `<file>` cargo's name for the library, `libplenum.so` or
//! `plenum.dll`):
//!
//! 1. `<dir>/<platform>/<file>` for each directory of `$PLENUM_FMU_LIBS` (separated as in
//!    `PATH`);
//! 2. `<exe dir>/../lib/plenum/<platform>/<file>`, beside the executable: the installed layout
//!    (`<prefix>/bin/fmu-build` with `<prefix>/lib/plenum/`), where a package puts the libraries;
//! 3. the shipped build, `<target>/<rust target>/fmu/<file>` (`scripts/build-fmu-libs.sh`), in
//!    each Cargo target directory: `$CARGO_TARGET_DIR`, the one this executable was built into,
//!    and the `target/` of the Cargo workspace around the current directory;
//! 4. a plain Cargo build in those directories (`cargo build [--release]`: profile `release`,
//!    then `dev`, for the host platform also without the target triple), packed with a note:
//!    it is not stripped and, on Linux, needs this machine's glibc.

use std::path::{Path, PathBuf};

use super::{PROFILE, Platform};

/// The environment variable naming directories of libraries, `<dir>/<platform>/<file>`.
pub const LIBS_VARIABLE: &str = "PLENUM_FMU_LIBS";

/// Largest Cargo.toml read when looking for the workspace around the current directory, bytes
/// (a workspace manifest is a few KiB).
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// The installed layout's folder of libraries, under the parent of the executable's directory.
pub const BESIDE_EXE: [&str; 2] = ["lib", "plenum"];

/// How a candidate library was found, in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// Under a directory of `$PLENUM_FMU_LIBS`.
    Variable,
    /// Beside the executable, `<exe dir>/../lib/plenum/`.
    BesideExe,
    /// The shipped build (profile `fmu`) in a Cargo target directory.
    Shipped,
    /// A plain Cargo build (profile `release` or `dev`) in a Cargo target directory.
    PlainBuild,
}

/// A file where a platform's library may be.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub path: PathBuf,
    pub origin: Origin,
}

/// Where to look: the directories each [`Origin`] starts from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Roots {
    /// The directories of `$PLENUM_FMU_LIBS`; None when it is unset.
    pub variable: Option<Vec<PathBuf>>,
    /// The directory of the running executable.
    pub exe_dir: Option<PathBuf>,
    /// Cargo target directories ([`target_dirs`]).
    pub target_dirs: Vec<PathBuf>,
}

impl Roots {
    /// From the environment of this process.
    pub fn from_environment() -> Roots {
        let variable = std::env::var_os(LIBS_VARIABLE).map(|v| {
            std::env::split_paths(&v)
                .filter(|d| !d.as_os_str().is_empty())
                .collect()
        });
        let exe_dir = std::env::current_exe()
            .ok()
            .map(|e| e.canonicalize().unwrap_or(e))
            .and_then(|e| e.parent().map(Path::to_path_buf));
        Roots {
            variable,
            exe_dir,
            target_dirs: target_dirs(),
        }
    }

    /// Every file where `platform`'s library is looked for, in order.
    pub fn candidates(&self, platform: Platform) -> Vec<Candidate> {
        let file = platform.cargo_file();
        let at = |path: PathBuf, origin| Candidate { path, origin };
        let mut out = Vec::new();
        for d in self.variable.iter().flatten() {
            out.push(at(
                d.join(platform.fmi2_folder()).join(file),
                Origin::Variable,
            ));
        }
        if let Some(prefix) = self.exe_dir.as_deref().and_then(Path::parent) {
            let path = prefix
                .join(BESIDE_EXE[0])
                .join(BESIDE_EXE[1])
                .join(platform.fmi2_folder())
                .join(file);
            out.push(at(path, Origin::BesideExe));
        }
        for path in candidates(platform, &self.target_dirs) {
            out.push(at(path, Origin::Shipped));
        }
        for d in &self.target_dirs {
            for profile in ["release", "debug"] {
                let triple = d.join(platform.rust_target()).join(profile).join(file);
                out.push(at(triple, Origin::PlainBuild));
                if platform.is_host() {
                    out.push(at(d.join(profile).join(file), Origin::PlainBuild));
                }
            }
        }
        out
    }

    /// The first candidate that is a file, or why none is: every path looked at, and which
    /// places there were none to look in.
    pub fn find(&self, platform: Platform) -> Result<Candidate, String> {
        let all = self.candidates(platform);
        if let Some(c) = all.iter().find(|c| c.path.is_file()) {
            return Ok(c.clone());
        }
        let paths: Vec<String> = all.iter().map(|c| c.path.display().to_string()).collect();
        let mut why = format!("no library at {}", paths.join(", "));
        if self.variable.is_none() {
            why.push_str(&format!("; {LIBS_VARIABLE} is not set"));
        }
        if self.target_dirs.is_empty() {
            why.push_str(
                "; no Cargo target directory (this fmu-build is not in one, CARGO_TARGET_DIR is \
                 not set, and the current directory is not in a Cargo workspace)",
            );
        }
        Err(why)
    }
}

impl Platform {
    /// The platform this fmu-build runs on, whose plain Cargo build lands in `<target>/<profile>/`
    /// without a target triple.
    pub fn is_host(self) -> bool {
        match self {
            Platform::Linux64 => cfg!(all(target_os = "linux", target_arch = "x86_64")),
            Platform::Win64 => cfg!(all(windows, target_arch = "x86_64")),
        }
    }
}

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
            // Read bounded and never blocking, as every input file (a FIFO or a huge file named
            // Cargo.toml is no workspace root).
            let text =
                plenum::input_file::read_bounded(&manifest, MAX_MANIFEST_BYTES, "a Cargo.toml");
            if text.is_ok_and(|t| String::from_utf8_lossy(&t).contains("[workspace]")) {
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

/// The first shipped build that exists, or every path looked at.
pub fn find(platform: Platform, target_dirs: &[PathBuf]) -> Result<PathBuf, Vec<PathBuf>> {
    let c = candidates(platform, target_dirs);
    c.iter().find(|p| p.is_file()).cloned().ok_or(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> Roots {
        Roots {
            variable: Some(vec![PathBuf::from("/v1"), PathBuf::from("/v2")]),
            exe_dir: Some(PathBuf::from("/opt/p/bin")),
            target_dirs: vec![PathBuf::from("/t1"), PathBuf::from("/t2")],
        }
    }

    #[test]
    fn candidates_go_from_the_variable_to_beside_the_exe_to_shipped_then_plain_builds() {
        let c = roots().candidates(Platform::Linux64);
        for x in &c {
            println!("{:?} {}", x.origin, x.path.display());
        }
        let paths: Vec<&str> = c.iter().map(|x| x.path.to_str().unwrap()).collect();
        let mut want = vec![
            "/v1/linux64/libplenum.so",
            "/v2/linux64/libplenum.so",
            "/opt/p/lib/plenum/linux64/libplenum.so",
            "/t1/x86_64-unknown-linux-gnu/fmu/libplenum.so",
            "/t2/x86_64-unknown-linux-gnu/fmu/libplenum.so",
        ];
        for t in ["/t1", "/t2"] {
            for profile in ["release", "debug"] {
                want.push(format!("{t}/x86_64-unknown-linux-gnu/{profile}/libplenum.so").leak());
                if Platform::Linux64.is_host() {
                    want.push(format!("{t}/{profile}/libplenum.so").leak());
                }
            }
        }
        assert_eq!(paths, want);
        assert!(c.windows(2).all(|w| w[0].origin <= w[1].origin));
        // win64 on a Linux host: a plain build only under the triple.
        let w = roots().candidates(Platform::Win64);
        assert_eq!(w[0].path, Path::new("/v1/win64/plenum.dll"));
        assert_eq!(
            w.iter().filter(|x| x.origin == Origin::PlainBuild).count(),
            if Platform::Win64.is_host() { 8 } else { 4 }
        );
    }

    #[test]
    fn a_miss_names_every_path_and_the_places_there_were_none_of() {
        let nowhere = Roots {
            variable: None,
            exe_dir: Some(PathBuf::from("/nonexistent/bin")),
            target_dirs: vec![],
        };
        let e = nowhere.find(Platform::Linux64).unwrap_err();
        println!("{e}");
        assert!(
            e.contains("/nonexistent/lib/plenum/linux64/libplenum.so"),
            "{e}"
        );
        assert!(e.contains("PLENUM_FMU_LIBS is not set"), "{e}");
        assert!(e.contains("no Cargo target directory"), "{e}");
        let e = roots().find(Platform::Win64).unwrap_err();
        assert!(e.contains("/v2/win64/plenum.dll") && e.contains("/t2/x86_64-pc-windows-gnu"));
        assert!(
            !e.contains("not set") && !e.contains("no Cargo target directory"),
            "{e}"
        );
    }
}
