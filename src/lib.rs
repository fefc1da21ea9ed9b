//! Plenum: a simulator of lumped (0-D) gas and fluid networks, shipped as an FMI 2.0
//! Co-Simulation FMU.
//!
//! Data flow: `model` (TOML → validated spec) → `network` (components assembled into one
//! right-hand side) → `integrators` (behind one trait) → `simulation` (time, events, checks).
//! `fmi2` is the C ABI and nothing else.

pub mod checks;
pub mod components;
pub mod cosim;
pub mod gas;
pub mod integrators;
pub mod model;
pub mod network;
pub mod ode;
pub mod param;
pub mod simulation;
pub mod variables;
