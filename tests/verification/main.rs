//! Verification against independent truths: closed forms (BlasterSim's projectile, CircAdapt's
//! valve, textbook component laws), conservation laws, peer solvers run in the same test, and
//! the gallery's models. One test binary: each module below was a test file of its own.

#[path = "../common/mod.rs"]
mod common;

mod adaptive;
mod auto;
mod bdf;
mod circadapt;
mod components;
mod components2;
mod conservation;
mod events;
mod examples;
mod linear_invariants;
mod projectile;
mod sensitivities;
mod valve_links;
mod wall_quadrature;
