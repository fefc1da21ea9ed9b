//! `plenum._plenum`: the extension module behind the Python package `plenum` (docs/python.md).
//! `Model` (load, override, check, run, build an FMU) and `Simulation` (advance, read, set
//! inputs, states) are here; results, exceptions and the command line's launcher are Python
//! (`plenum/`). Every call into the library runs with the GIL released and under
//! `catch_unwind`: a panic becomes `plenum.PlenumError`, never a crash of the interpreter.

mod cli;
mod errors;
mod facade;
mod model;
mod simulation;
mod toml_value;

use pyo3::prelude::*;

#[pymodule]
fn _plenum(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::Model>()?;
    m.add_class::<model::Variable>()?;
    m.add_class::<model::Diagnostic>()?;
    m.add_class::<simulation::Simulation>()?;
    m.add_function(wrap_pyfunction!(cli::run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(model::platforms, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
