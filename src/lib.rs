//! Plenum: a simulator of lumped (0-D) gas and fluid networks, shipped as an FMI 2.0 FMU for
//! Co-Simulation and Model Exchange.
//!
//! Data flow: `model` (TOML → validated spec) → `network` (components assembled into one
//! right-hand side) → `integrators` (behind one trait) → `simulation` (time, events, checks).
//! `fmi2` is the C ABI and nothing else.

// Numerical kernels index several parallel arrays with one counter; iterator zips of four
// slices would hide the formula.
#![allow(clippy::needless_range_loop)]

pub mod ad;
pub mod checks;
pub mod components;
pub mod cosim;
pub mod fmi2;
pub mod fmi3;
pub mod gas;
pub mod input_file;
pub mod integrators;
pub mod model;
pub mod network;
pub mod ode;
pub mod output_grid;
pub mod param;
pub mod run;
pub mod sensitivity;
pub mod simulation;
pub mod sparsity;
pub mod time_axis;
pub mod units;
pub mod variables;
