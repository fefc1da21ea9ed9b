//! The user documentation stays true: every model-file key and default, every FMU capability
//! flag and every run-time check code appears in `docs/` as the code has it.

mod fmu_and_checks;
mod layers;
mod model_file;
