//! `fmu-build models/x.toml... -o target/fmu/ [--platforms linux64,win64] [--lib PATH]...
//! [--description-only] [--fmi-version 2|3]`
//!
//! Exit codes: 0 built, 1 build failure (missing or unusable library, I/O), 2 invalid model file
//! or arguments (two models of one name, a name the XML cannot hold). Nothing is written when
//! the arguments are refused.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use fmu_build::platform::megabytes;
use fmu_build::platform::search::{LIBS_VARIABLE, Origin, Roots};
use fmu_build::{Error, FmiVersion, Library, Platform};
use plenum::model::LoadedModel;

/// Package Plenum model files as FMUs (`<out>/<model>.fmu`; FMI 2.0, or 3.0 with
/// `--fmi-version 3`; Co-Simulation and Model Exchange), with the Plenum library of every
/// platform built on this machine.
#[derive(Parser, Debug)]
#[command(name = "fmu-build", version)]
struct Cli {
    /// Model files (TOML).
    #[arg(required = true)]
    models: Vec<PathBuf>,
    /// Output directory (created if missing); with --description-only, `-` writes to stdout.
    #[arg(short = 'o', long = "out", default_value = "target/fmu")]
    out: PathBuf,
    /// Platforms to pack, comma-separated: linux64, win64 (default: every platform whose
    /// library is built, as scripts/build-fmu-libs.sh builds them; the others are listed with
    /// the reason).
    #[arg(long, value_delimiter = ',')]
    platforms: Vec<String>,
    /// A Plenum shared library to pack (repeatable): its platform is read from the file (an
    /// x86-64 ELF shared object is linux64, an x86-64 DLL win64). Default, for each platform:
    /// `$PLENUM_FMU_LIBS/<platform>/`, `<this executable's dir>/../lib/plenum/<platform>/`, the
    /// `fmu` profile's build `<target>/<triple>/fmu/` in $CARGO_TARGET_DIR, the target
    /// directory this executable is in or the workspace's target/, then a plain Cargo build
    /// there (docs/fmu.md, "Platforms").
    #[arg(long = "lib")]
    libs: Vec<PathBuf>,
    /// Write only the model description, as `<out>/<model>.xml` (the files kept in
    /// modelDescription/).
    #[arg(long)]
    description_only: bool,
    /// FMI version of the FMU: 2 (FMI 2.0, `binaries/linux64`, `binaries/win64`) or 3 (FMI 3.0,
    /// `binaries/x86_64-linux`, `binaries/x86_64-windows`). The library is the same.
    #[arg(long, default_value = "2", value_parser = ["2", "3"])]
    fmi_version: String,
}

impl Cli {
    fn version(&self) -> FmiVersion {
        if self.fmi_version == "3" {
            FmiVersion::V3
        } else {
            FmiVersion::V2
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut worst = 0u8;
    let mut models: Vec<(PathBuf, LoadedModel)> = Vec::new();
    for path in &cli.models {
        match fmu_build::load(path) {
            Ok(m) => models.push((path.clone(), m)),
            Err(e) => worst = worst.max(report(path, &e)),
        }
    }
    // One output file per model name: two models of one name would overwrite each other.
    let mut by_name: BTreeMap<&str, Vec<&Path>> = BTreeMap::new();
    for (path, m) in &models {
        by_name.entry(&m.spec.model.name).or_default().push(path);
    }
    let clashes: Vec<String> = by_name
        .iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(name, paths)| {
            format!(
                "{} all name the model {name:?}: each would be written to {}",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                cli.out.join(format!("{name}.fmu")).display()
            )
        })
        .collect();
    if !clashes.is_empty() {
        for c in clashes {
            eprintln!("fmu-build: {c}");
        }
        eprintln!("fmu-build: give each model its own [model] name; nothing written");
        return ExitCode::from(2);
    }
    if cli.description_only {
        for (path, model) in &models {
            if let Err(e) = describe_one(&cli, model) {
                worst = worst.max(report(path, &e));
            }
        }
        return ExitCode::from(worst);
    }
    if cli.out.as_os_str() == "-" {
        eprintln!("fmu-build: -o - (stdout) is only for --description-only");
        return ExitCode::from(2);
    }
    // Every model is checked before the libraries are looked for: an invalid model is reported
    // as such (exit 2) whatever the library lookup then finds.
    models.retain(|(path, model)| match description(&cli, model) {
        Ok(_) => true,
        Err(e) => {
            worst = worst.max(report(path, &e));
            false
        }
    });
    if models.is_empty() {
        return ExitCode::from(worst);
    }
    let libraries = match libraries(&cli) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fmu-build: {e}");
            return ExitCode::from(worst.max(1));
        }
    };
    for (path, model) in &models {
        match fmu_build::write_fmu_as(model, &libraries, &cli.out, cli.version()) {
            Ok(fmu) => {
                let size = std::fs::metadata(&fmu).map_or(0, |m| m.len());
                let parts: Vec<String> = libraries
                    .iter()
                    .map(|l| format!("{} {}", l.platform(), megabytes(l.bytes.len() as u64)))
                    .collect();
                eprintln!(
                    "wrote {} ({}; libraries {})",
                    fmu.display(),
                    megabytes(size),
                    parts.join(", ")
                );
            }
            Err(e) => worst = worst.max(report(path, &e)),
        }
    }
    ExitCode::from(worst)
}

/// Print an error; its exit code.
fn report(path: &Path, e: &Error) -> u8 {
    match e {
        Error::Model(_) => {
            eprintln!("{e}");
            eprintln!(
                "fmu-build: {}: invalid model, nothing written",
                path.display()
            );
            2
        }
        Error::Build(_) => {
            eprintln!("fmu-build: {}: {e}", path.display());
            1
        }
    }
}

/// The model description of `model` in the FMI version asked for.
fn description(cli: &Cli, model: &LoadedModel) -> Result<String, Error> {
    match cli.version() {
        FmiVersion::V2 => fmu_build::model_description(model),
        FmiVersion::V3 => fmu_build::fmi3::model_description(model),
    }
}

fn describe_one(cli: &Cli, model: &LoadedModel) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::Build(e.to_string());
    let xml = description(cli, model)?;
    if cli.out.as_os_str() == "-" {
        std::io::stdout().write_all(xml.as_bytes()).map_err(io)?;
    } else {
        std::fs::create_dir_all(&cli.out).map_err(io)?;
        let file = cli.out.join(format!("{}.xml", model.spec.model.name));
        std::fs::write(&file, xml).map_err(io)?;
        eprintln!("wrote {}", file.display());
    }
    Ok(())
}

/// The libraries to pack: every `--lib` (checked to be a library for the platform its headers
/// say), then for each platform asked for (`--platforms`, or by default every platform when no
/// `--lib` is given) without one, the shipped build found in the target directories.
fn libraries(cli: &Cli) -> Result<Vec<Library>, String> {
    let mut wanted = Vec::new();
    for name in &cli.platforms {
        let p = Platform::parse(name.trim()).ok_or_else(|| {
            format!(
                "unknown platform {name:?} in --platforms (known: {})",
                Platform::ALL.map(Platform::fmi2_folder).join(", ")
            )
        })?;
        if !wanted.contains(&p) {
            wanted.push(p);
        }
    }
    let mut libs: Vec<Library> = Vec::new();
    for path in &cli.libs {
        let lib = Library::load(path, None)?;
        if let Some(other) = libs.iter().find(|l| l.platform() == lib.platform()) {
            return Err(format!(
                "two {} libraries given: {} and {}",
                lib.platform(),
                other.path.display(),
                path.display()
            ));
        }
        if !wanted.is_empty() && !wanted.contains(&lib.platform()) {
            return Err(format!(
                "--lib {} is a {} library, which --platforms {} leaves out",
                path.display(),
                lib.platform(),
                cli.platforms.join(",")
            ));
        }
        libs.push(lib);
    }
    let explicit = !wanted.is_empty();
    if !explicit && libs.is_empty() {
        wanted = Platform::ALL.to_vec();
    }
    let roots = Roots::from_environment();
    let mut skipped = Vec::new();
    let mut notes = Vec::new();
    for p in wanted {
        if libs.iter().any(|l| l.platform() == p) {
            continue;
        }
        match roots.find(p) {
            Ok(found) => {
                if found.origin == Origin::PlainBuild {
                    notes.push(format!(
                        "{p}: no shipped build found, packing the plain Cargo build {} (not \
                         stripped; `bash scripts/build-fmu-libs.sh` builds the shipped one)",
                        found.path.display()
                    ));
                }
                libs.push(Library::load(&found.path, Some(p))?);
            }
            Err(looked) => {
                let how = if roots.target_dirs.is_empty() {
                    format!(
                        "put the Plenum library at one of those paths, set {LIBS_VARIABLE} to a \
                         directory holding {}/{}, or name the file with --lib",
                        p.fmi2_folder(),
                        p.cargo_file()
                    )
                } else {
                    p.missing_toolchain().unwrap_or_else(|| {
                        "build it with `bash scripts/build-fmu-libs.sh`".to_string()
                    })
                };
                let why = format!("{looked}; {how}");
                if explicit {
                    return Err(format!("{p}: {why}"));
                }
                skipped.push(format!("{p} skipped: {why}"));
            }
        }
    }
    for s in &skipped {
        eprintln!("fmu-build: {s}");
    }
    if libs.is_empty() {
        return Err("no Plenum library found for any platform (see above)".into());
    }
    for n in &notes {
        eprintln!("fmu-build: note: {n}");
    }
    for l in &libs {
        if let Some(note) = l.glibc_note() {
            eprintln!("fmu-build: note: {note}");
        }
    }
    libs.sort_by_key(Library::platform);
    Ok(libs)
}
