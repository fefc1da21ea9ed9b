//! The solver machinery: exact derivatives and Jacobians, the BDF's sparse and Krylov paths,
//! the limits on a linear solver's size and on the work of one advance, no allocation in the
//! hot path, the run-time checks and the state snapshot that continues bit for bit; hostile
//! inputs (docs/integrators.md's classes): impossible states, stability limits, first steps, the
//! FMU instance under
//! hostile calls, and a property test over random networks.

#[path = "../common/mod.rs"]
mod common;
// The counting global allocator of `no_alloc` and `krylov_bdf` (one per binary; it counts per
// thread, so the tests running in parallel do not see each other's allocations).
#[path = "../common/counting_alloc.rs"]
mod counting_alloc;

mod derivatives;
mod hostile_fmu;
mod hostile_numerics;
mod hostile_props;
mod krylov_bdf;
mod linear_solver_limit;
mod no_alloc;
mod nominals;
mod patterns;
mod run_time_checks;
mod sparse_bdf;
mod state_roundtrip;
mod work_limit;
