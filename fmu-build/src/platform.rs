//! The platforms an FMU carries a binary for, where `fmu-build` finds each platform's library,
//! and what a library file is (read from its headers: format, machine, exports, imports and, on
//! Linux, the newest glibc symbol version it needs).
//!
//! One [`Platform`] is one build of the library (`scripts/build-fmu-libs.sh`). FMI 2.0 names its
//! folder `binaries/linux64`, FMI 3.0 `binaries/x86_64-linux`: both names come from the same
//! platform ([`Platform::fmi2_folder`], [`Platform::fmi3_folder`]), so an FMI 3.0 mode packs the
//! same builds.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use object::read::elf::{ElfFile64, FileHeader};
use object::{Object, ObjectKind};

pub mod search;
pub use search::{candidates, find, target_dirs};

/// The cargo profile of the shipped libraries (Cargo.toml `[profile.fmu]`).
pub const PROFILE: &str = "fmu";

/// The newest glibc a linux64 library may need: manylinux2014's baseline (RHEL 7), so the FMU
/// loads on every distribution of the last ten years.
pub const GLIBC_BASELINE: (u32, u32) = (2, 17);

/// A platform an FMU can carry a binary for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Platform {
    Linux64,
    Win64,
}

impl Platform {
    pub const ALL: [Platform; 2] = [Platform::Linux64, Platform::Win64];

    /// The folder under `binaries/` in an FMI 2.0 FMU.
    pub fn fmi2_folder(self) -> &'static str {
        match self {
            Platform::Linux64 => "linux64",
            Platform::Win64 => "win64",
        }
    }

    /// The platform tuple, the folder under `binaries/` in an FMI 3.0 FMU (FMI 3.0 §2.5.1.4).
    pub fn fmi3_folder(self) -> &'static str {
        match self {
            Platform::Linux64 => "x86_64-linux",
            Platform::Win64 => "x86_64-windows",
        }
    }

    /// Extension of a shared library on the platform (the FMU's file is
    /// `<modelIdentifier>.<extension>`).
    pub fn extension(self) -> &'static str {
        match self {
            Platform::Linux64 => "so",
            Platform::Win64 => "dll",
        }
    }

    /// The Rust target the library is built for.
    pub fn rust_target(self) -> &'static str {
        match self {
            Platform::Linux64 => "x86_64-unknown-linux-gnu",
            Platform::Win64 => "x86_64-pc-windows-gnu",
        }
    }

    /// The file name cargo gives the library.
    pub fn cargo_file(self) -> &'static str {
        match self {
            Platform::Linux64 => "libplenum.so",
            Platform::Win64 => "plenum.dll",
        }
    }

    /// By FMI 2.0 or FMI 3.0 folder name.
    pub fn parse(name: &str) -> Option<Platform> {
        Platform::ALL
            .into_iter()
            .find(|p| p.fmi2_folder() == name || p.fmi3_folder() == name)
    }

    /// What this machine lacks to build the library for this platform (None: nothing known to be
    /// missing). Used to say why a platform was left out.
    pub fn missing_toolchain(self) -> Option<String> {
        match self {
            Platform::Linux64 => None,
            Platform::Win64 => (!on_path("x86_64-w64-mingw32-gcc")).then(|| {
                "this machine has no MinGW-w64 cross compiler (Debian: apt-get install \
                 gcc-mingw-w64-x86-64; then rustup target add x86_64-pc-windows-gnu)"
                    .to_string()
            }),
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.fmi2_folder())
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// The functions of the FMI 2.0 C API (fmi2Functions.h: common, Co-Simulation and Model
/// Exchange), all of which a Plenum library exports, and nothing else.
pub const FMI2_FUNCTIONS: [&str; 44] = [
    "fmi2GetTypesPlatform",
    "fmi2GetVersion",
    "fmi2SetDebugLogging",
    "fmi2Instantiate",
    "fmi2FreeInstance",
    "fmi2SetupExperiment",
    "fmi2EnterInitializationMode",
    "fmi2ExitInitializationMode",
    "fmi2Terminate",
    "fmi2Reset",
    "fmi2GetReal",
    "fmi2GetInteger",
    "fmi2GetBoolean",
    "fmi2GetString",
    "fmi2SetReal",
    "fmi2SetInteger",
    "fmi2SetBoolean",
    "fmi2SetString",
    "fmi2GetFMUstate",
    "fmi2SetFMUstate",
    "fmi2FreeFMUstate",
    "fmi2SerializedFMUstateSize",
    "fmi2SerializeFMUstate",
    "fmi2DeSerializeFMUstate",
    "fmi2GetDirectionalDerivative",
    "fmi2EnterEventMode",
    "fmi2NewDiscreteStates",
    "fmi2EnterContinuousTimeMode",
    "fmi2CompletedIntegratorStep",
    "fmi2SetTime",
    "fmi2SetContinuousStates",
    "fmi2GetDerivatives",
    "fmi2GetEventIndicators",
    "fmi2GetContinuousStates",
    "fmi2GetNominalsOfContinuousStates",
    "fmi2SetRealInputDerivatives",
    "fmi2GetRealOutputDerivatives",
    "fmi2DoStep",
    "fmi2CancelStep",
    "fmi2GetStatus",
    "fmi2GetRealStatus",
    "fmi2GetIntegerStatus",
    "fmi2GetBooleanStatus",
    "fmi2GetStringStatus",
];

/// The functions of the FMI 3.0 C API (fmi3FunctionTypes.h, in its order), all of which a
/// Plenum library exports too (one library serves FMI 2.0 and 3.0 FMUs).
pub const FMI3_FUNCTIONS: [&str; 75] = [
    "fmi3GetVersion",
    "fmi3SetDebugLogging",
    "fmi3InstantiateModelExchange",
    "fmi3InstantiateCoSimulation",
    "fmi3InstantiateScheduledExecution",
    "fmi3FreeInstance",
    "fmi3EnterInitializationMode",
    "fmi3ExitInitializationMode",
    "fmi3EnterEventMode",
    "fmi3Terminate",
    "fmi3Reset",
    "fmi3GetFloat32",
    "fmi3GetFloat64",
    "fmi3GetInt8",
    "fmi3GetUInt8",
    "fmi3GetInt16",
    "fmi3GetUInt16",
    "fmi3GetInt32",
    "fmi3GetUInt32",
    "fmi3GetInt64",
    "fmi3GetUInt64",
    "fmi3GetBoolean",
    "fmi3GetString",
    "fmi3GetBinary",
    "fmi3GetClock",
    "fmi3SetFloat32",
    "fmi3SetFloat64",
    "fmi3SetInt8",
    "fmi3SetUInt8",
    "fmi3SetInt16",
    "fmi3SetUInt16",
    "fmi3SetInt32",
    "fmi3SetUInt32",
    "fmi3SetInt64",
    "fmi3SetUInt64",
    "fmi3SetBoolean",
    "fmi3SetString",
    "fmi3SetBinary",
    "fmi3SetClock",
    "fmi3GetNumberOfVariableDependencies",
    "fmi3GetVariableDependencies",
    "fmi3GetFMUState",
    "fmi3SetFMUState",
    "fmi3FreeFMUState",
    "fmi3SerializedFMUStateSize",
    "fmi3SerializeFMUState",
    "fmi3DeserializeFMUState",
    "fmi3GetDirectionalDerivative",
    "fmi3GetAdjointDerivative",
    "fmi3EnterConfigurationMode",
    "fmi3ExitConfigurationMode",
    "fmi3GetIntervalDecimal",
    "fmi3GetIntervalFraction",
    "fmi3GetShiftDecimal",
    "fmi3GetShiftFraction",
    "fmi3SetIntervalDecimal",
    "fmi3SetIntervalFraction",
    "fmi3SetShiftDecimal",
    "fmi3SetShiftFraction",
    "fmi3EvaluateDiscreteStates",
    "fmi3UpdateDiscreteStates",
    "fmi3EnterContinuousTimeMode",
    "fmi3CompletedIntegratorStep",
    "fmi3SetTime",
    "fmi3SetContinuousStates",
    "fmi3GetContinuousStateDerivatives",
    "fmi3GetEventIndicators",
    "fmi3GetContinuousStates",
    "fmi3GetNominalsOfContinuousStates",
    "fmi3GetNumberOfEventIndicators",
    "fmi3GetNumberOfContinuousStates",
    "fmi3EnterStepMode",
    "fmi3GetOutputDerivatives",
    "fmi3DoStep",
    "fmi3ActivateModelPartition",
];

/// Every function a Plenum library exports: [`FMI2_FUNCTIONS`] and [`FMI3_FUNCTIONS`].
pub fn fmi_functions() -> impl Iterator<Item = &'static str> {
    FMI2_FUNCTIONS.iter().chain(FMI3_FUNCTIONS.iter()).copied()
}

/// What a shared library file is, read from its headers.
#[derive(Clone, Debug, PartialEq)]
pub struct LibraryInfo {
    pub platform: Platform,
    /// Exported (dynamic) symbol names, sorted.
    pub exports: Vec<String>,
    /// The libraries it loads: DT_NEEDED entries (ELF), imported DLL names (PE); sorted.
    pub needs: Vec<String>,
    /// ELF: the newest `GLIBC_x.y` symbol version it needs (None: none, or PE).
    pub newest_glibc: Option<(u32, u32)>,
}

impl LibraryInfo {
    /// Exported names that are not fmi2 or fmi3 functions, and fmi2 and fmi3 functions not
    /// exported.
    pub fn export_mismatch(&self) -> (Vec<&str>, Vec<&'static str>) {
        let extra = self
            .exports
            .iter()
            .map(String::as_str)
            .filter(|e| !fmi_functions().any(|f| f == *e))
            .collect();
        let missing = fmi_functions()
            .filter(|f| !self.exports.iter().any(|e| e == f))
            .collect();
        (extra, missing)
    }
}

fn version_of(glibc: &str) -> Option<(u32, u32)> {
    let rest = glibc.strip_prefix("GLIBC_")?;
    let mut parts = rest.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    Some((major, minor))
}

/// Read a library file's headers: an x86-64 ELF shared object is a linux64 library, an x86-64
/// PE DLL a win64 library; anything else is refused with what it is.
pub fn inspect(bytes: &[u8]) -> Result<LibraryInfo, String> {
    let file = object::File::parse(bytes).map_err(|e| {
        format!("not a shared library (neither an ELF shared object nor a Windows DLL: {e})")
    })?;
    let platform = match file.format() {
        object::BinaryFormat::Elf => Platform::Linux64,
        object::BinaryFormat::Pe => Platform::Win64,
        other => {
            return Err(format!(
                "a {other:?} file, not an ELF shared object (linux64) or a Windows DLL (win64)"
            ));
        }
    };
    if file.architecture() != object::Architecture::X86_64 || !file.is_64() {
        return Err(format!(
            "built for {:?}, not x86-64 ({platform} is x86-64)",
            file.architecture()
        ));
    }
    if file.kind() != ObjectKind::Dynamic {
        return Err(format!(
            "a {:?} file, not a shared library ({})",
            file.kind(),
            match platform {
                Platform::Linux64 => "an ELF of type ET_DYN",
                Platform::Win64 => "a PE image with the DLL flag",
            }
        ));
    }
    let mut exports: Vec<String> = file
        .exports()
        .map_err(|e| format!("unreadable export table: {e}"))?
        .iter()
        .map(|e| String::from_utf8_lossy(e.name()).into_owned())
        .collect();
    exports.sort();
    exports.dedup();
    let mut needs = BTreeSet::new();
    let mut newest_glibc = None;
    match platform {
        Platform::Win64 => {
            for import in file
                .imports()
                .map_err(|e| format!("unreadable import table: {e}"))?
            {
                needs.insert(String::from_utf8_lossy(import.library()).into_owned());
            }
        }
        Platform::Linux64 => {
            let elf = ElfFile64::<object::Endianness>::parse(bytes)
                .map_err(|e| format!("unreadable ELF headers: {e}"))?;
            let endian = elf.endian();
            let sections = elf
                .elf_header()
                .sections(endian, bytes)
                .map_err(|e| format!("unreadable ELF sections: {e}"))?;
            if let Some((mut verneed, link)) = sections
                .gnu_verneed(endian, bytes)
                .map_err(|e| format!("unreadable .gnu.version_r: {e}"))?
            {
                let strings = sections
                    .strings(endian, bytes, link)
                    .map_err(|e| format!("unreadable version strings: {e}"))?;
                while let Some((need, mut aux)) = verneed
                    .next()
                    .map_err(|e| format!("unreadable .gnu.version_r: {e}"))?
                {
                    if let Ok(file) = need.file(endian, strings) {
                        needs.insert(String::from_utf8_lossy(file).into_owned());
                    }
                    while let Some(a) = aux
                        .next()
                        .map_err(|e| format!("unreadable .gnu.version_r: {e}"))?
                    {
                        let name = a.name(endian, strings).unwrap_or_default();
                        if let Some(v) = version_of(&String::from_utf8_lossy(name)) {
                            newest_glibc = newest_glibc.max(Some(v));
                        }
                    }
                }
            }
        }
    }
    Ok(LibraryInfo {
        platform,
        exports,
        needs: needs.into_iter().collect(),
        newest_glibc,
    })
}

/// A library file read and checked: a shared library for its platform that exports the fmi2
/// functions.
#[derive(Clone, Debug)]
pub struct Library {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub info: LibraryInfo,
}

impl Library {
    /// Read `path`; refused unless it is a shared library for `expected` (any platform when
    /// None) exporting every fmi2 function.
    pub fn load(path: &Path, expected: Option<Platform>) -> Result<Library, String> {
        let bytes = plenum::input_file::read_bounded(path, crate::MAX_LIBRARY_BYTES, "a library")
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let info = inspect(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(p) = expected
            && info.platform != p
        {
            return Err(format!(
                "{}: a {} library, not a {p} one",
                path.display(),
                info.platform
            ));
        }
        let (_, missing) = info.export_mismatch();
        if !missing.is_empty() {
            return Err(format!(
                "{}: a {} shared library, but not a Plenum FMU library: it does not export {} \
                 ({} of the {} fmi2 and fmi3 functions missing)",
                path.display(),
                info.platform,
                missing
                    .iter()
                    .take(3)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", "),
                missing.len(),
                FMI2_FUNCTIONS.len() + FMI3_FUNCTIONS.len()
            ));
        }
        Ok(Library {
            path: path.to_path_buf(),
            bytes,
            info,
        })
    }

    pub fn platform(&self) -> Platform {
        self.info.platform
    }

    /// A note when a linux64 library needs a newer glibc than [`GLIBC_BASELINE`].
    pub fn glibc_note(&self) -> Option<String> {
        let (major, minor) = self.info.newest_glibc?;
        ((major, minor) > GLIBC_BASELINE).then(|| {
            format!(
                "{} needs glibc {major}.{minor} (a native build): the FMU will not load on \
                 Linux with an older glibc; scripts/build-fmu-libs.sh builds one for glibc {}.{}",
                self.path.display(),
                GLIBC_BASELINE.0,
                GLIBC_BASELINE.1
            )
        })
    }
}

/// Human-readable byte count (MB = 10⁶ bytes).
pub fn megabytes(n: u64) -> String {
    format!("{:.2} MB", n as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_fmi_versions_name_every_platform() {
        for p in Platform::ALL {
            assert_eq!(Platform::parse(p.fmi2_folder()), Some(p));
            assert_eq!(Platform::parse(p.fmi3_folder()), Some(p));
        }
        assert_eq!(Platform::parse("darwin64"), None);
        assert_eq!(version_of("GLIBC_2.35"), Some((2, 35)));
        assert_eq!(version_of("GLIBC_2.2.5"), Some((2, 2)));
        assert_eq!(version_of("GLIBC_PRIVATE"), None);
    }

    #[test]
    fn text_and_empty_files_are_not_libraries() {
        for bytes in [&b""[..], b"[model]\nname = \"x\"\n", b"\x7fELF"] {
            let e = inspect(bytes).unwrap_err();
            println!("{:?}: {e}", String::from_utf8_lossy(bytes));
            assert!(e.contains("not a shared library"), "{e}");
        }
    }
}
