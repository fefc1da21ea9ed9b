//! The `plenum` command line as a user runs it: `run` and `check`, `describe`, `run --plot`.

#[path = "../common/mod.rs"]
mod common;

mod describe;
mod hostile;
mod inputs;
mod long_runs;
mod plot;
mod run;
