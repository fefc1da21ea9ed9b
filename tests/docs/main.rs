//! The user documentation stays true: every model-file key and default, every FMU capability
//! flag and every run-time check code appears in `docs/` as the code has it; the layer table of
//! docs/architecture.md holds in the code; and no text refers to a tracker, to files outside the
//! repository or (in docs) to the dates of measurements.

mod fmu_and_checks;
mod layers;
mod model_file;
mod standalone;
