//! The command line `plenum` (`plenum run | check | describe`), compiled into the extension
//! from the main crate's own source: the wheel's `plenum` command (a console entry point,
//! `plenum/_cli.py`) runs it in-process, the same code as the Rust binary.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use pyo3::prelude::*;

use crate::errors::detached;

#[allow(dead_code)]
#[path = "../../src/bin/plenum/main.rs"]
mod main;

/// Run the command line on `args` (the program's name first); its exit status.
#[pyfunction]
pub fn run_cli(py: Python<'_>, args: Vec<OsString>) -> PyResult<u8> {
    let code = detached(py, || {
        let code = main::main_with(args);
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        code
    })?;
    // `ExitCode` shows its value only by comparison.
    Ok((0..=u8::MAX)
        .find(|&k| code == ExitCode::from(k))
        .unwrap_or(1))
}
