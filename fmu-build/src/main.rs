//! `fmu-build models/x.toml... -o target/fmu/ [--lib PATH] [--release] [--description-only]`
//!
//! Exit codes: 0 built, 1 build failure (missing library, I/O), 2 invalid model file.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use fmu_build::Error;

/// Package Plenum model files as FMI 2.0 Co-Simulation FMUs (`<out>/<model>.fmu`).
#[derive(Parser, Debug)]
#[command(name = "fmu-build", version)]
struct Cli {
    /// Model files (TOML).
    #[arg(required = true)]
    models: Vec<PathBuf>,
    /// Output directory (created if missing); with --description-only, `-` writes to stdout.
    #[arg(short = 'o', long = "out", default_value = "target/fmu")]
    out: PathBuf,
    /// The Plenum shared library to ship (default: the workspace's target/<profile>/libplenum.so).
    #[arg(long = "lib")]
    lib: Option<PathBuf>,
    /// Take the library from the release build instead of the debug build.
    #[arg(long)]
    release: bool,
    /// Write only the model description, as `<out>/<model>.xml` (the files kept in
    /// modelDescription/).
    #[arg(long)]
    description_only: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let library = cli
        .lib
        .clone()
        .unwrap_or_else(|| fmu_build::default_library(cli.release));
    let mut worst = 0u8;
    for path in &cli.models {
        match build_one(&cli, path, &library) {
            Ok(()) => {}
            Err(e @ Error::Model(_)) => {
                eprintln!("{e}");
                eprintln!(
                    "fmu-build: {}: invalid model, nothing written",
                    path.display()
                );
                worst = worst.max(2);
            }
            Err(e @ Error::Build(_)) => {
                eprintln!("fmu-build: {}: {e}", path.display());
                worst = worst.max(1);
            }
        }
    }
    ExitCode::from(worst)
}

fn build_one(cli: &Cli, path: &std::path::Path, library: &std::path::Path) -> Result<(), Error> {
    let model = fmu_build::load(path)?;
    let io = |e: std::io::Error| Error::Build(e.to_string());
    if cli.description_only {
        let xml = fmu_build::model_description(&model)?;
        if cli.out.as_os_str() == "-" {
            std::io::stdout().write_all(xml.as_bytes()).map_err(io)?;
        } else {
            std::fs::create_dir_all(&cli.out).map_err(io)?;
            let file = cli.out.join(format!("{}.xml", model.spec.model.name));
            std::fs::write(&file, xml).map_err(io)?;
            eprintln!("wrote {}", file.display());
        }
    } else {
        if cli.out.as_os_str() == "-" {
            return Err(Error::Build(
                "-o - (stdout) is only for --description-only".into(),
            ));
        }
        let fmu = fmu_build::write_fmu(&model, library, &cli.out)?;
        eprintln!("wrote {} (library {})", fmu.display(), library.display());
    }
    Ok(())
}
