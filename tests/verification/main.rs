//! Verification against independent truths: closed forms (BlasterSim's projectile, CircAdapt's
//! valve, textbook component laws), conservation laws, peer solvers run in the same test, and
//! the gallery's models.

#[path = "../common/mod.rs"]
mod common;
// The counting global allocator of `bdf`'s no-allocation check (one per binary; it counts per
// thread, so the tests running in parallel do not see each other's allocations).
#[path = "../common/counting_alloc.rs"]
mod counting_alloc;
#[path = "../common/test_sink.rs"]
mod test_sink;

mod adaptive;
mod auto;
mod bdf;
mod breakpoints;
mod chattering;
mod circadapt;
mod components;
mod components2;
mod conservation;
mod cushion;
mod cushion_needle;
mod events;
mod examples;
mod flow_tables;
mod friction;
mod indicators;
mod inertial_tube;
mod kinks;
mod lagged_valve;
mod law_kinks;
mod linear_invariants;
mod logic_valve_tables;
mod logic_valves;
mod opening_tables;
mod parts;
mod pneumatics;
mod poppet_tables;
mod projectile;
mod sensitivities;
mod stuck_piston;
mod switch_property;
mod switches;
mod valve_flow_tables;
mod valve_links;
mod valves;
mod wall_quadrature;
