//! The BDF's sparse path (Jacobian over the sparsity pattern, sparse LU of M = I − γJ) against
//! its dense path: forced each way on the shipped models and on chains of tanks, the two must
//! take the same steps (same counts of steps, Jacobians, factorizations, Newton iterations)
//! and end at the same states to round-off (the two LUs pivot differently, so the bits may
//! differ). And a snapshot of a run on the sparse path (chosen by size) continues bit for bit.

mod common;

use common::*;
use plenum::integrators::Method;
use plenum::integrators::bdf::{LinearSolver, SPARSE_MIN_STATES};
use plenum::model::{ModelFile, build_simulation, parse_str};
use plenum::simulation::Simulation;

/// m tanks in a row at 2–3 bar joined by orifices, the last venting to the atmosphere.
fn chain(m: usize) -> ModelFile {
    chain_text(m, false)
}

/// The chain, also vented at its first tank: the reservoir's mass and energy accumulators
/// (the last two states) then depend on both ends, so M has no narrow band.
fn chain_vented_at_both_ends(m: usize) -> ModelFile {
    chain_text(m, true)
}

fn chain_text(m: usize, both_ends: bool) -> ModelFile {
    let mut s = String::from(
        "[model]\nname = \"chain\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"bdf\"\n\
         t_end = 1.0\n[[reservoir]]\nname = \"atm\"\npressure = 101325.0\ntemperature = 300.0\n",
    );
    for i in 0..m {
        let p = 2e5 + 1e5 * (i % 7) as f64 / 7.0;
        s += &format!(
            "[[chamber]]\nname = \"c{i}\"\nvolume = 1e-3\npressure = {p:?}\ntemperature = 300.0\n"
        );
    }
    for i in 1..=m {
        let to = if i == m {
            "atm".to_string()
        } else {
            format!("c{i}")
        };
        s += &format!(
            "[[orifice]]\nname = \"o{i}\"\nfrom = \"c{}\"\nto = \"{to}\"\narea = 1e-5\n",
            i - 1
        );
    }
    if both_ends {
        s += "[[orifice]]\nname = \"o0\"\nfrom = \"c0\"\nto = \"atm\"\narea = 1e-5\n";
    }
    parse_str(&s, "chain.toml", &[]).expect("chain model").spec
}

fn bdf_sim(spec: &ModelFile, linear: LinearSolver) -> Simulation {
    let mut spec = spec.clone();
    spec.solver.method = "bdf".into();
    spec.solver.step = None;
    let mut sim = build_simulation(&spec, None).expect("builds");
    match &mut sim.integrator {
        Method::Bdf(b) => b.set_linear_solver(linear),
        _ => unreachable!("bdf"),
    }
    sim
}

fn bdf(sim: &Simulation) -> &plenum::integrators::Bdf {
    match &sim.integrator {
        Method::Bdf(b) => b,
        _ => unreachable!("bdf"),
    }
}

/// Run the dense path and `other` (sparse or band) to `t_end`; compare the work counters
/// exactly and the states to round-off.
fn compare(name: &str, spec: &ModelFile, t_end: f64) {
    compare_with(name, spec, t_end, LinearSolver::Sparse);
}

fn compare_with(name: &str, spec: &ModelFile, t_end: f64, other: LinearSolver) {
    let mut dense = bdf_sim(spec, LinearSolver::Dense);
    let mut sparse = bdf_sim(spec, other);
    let _ = dense.advance_to(t_end).expect("dense run");
    let _ = sparse.advance_to(t_end).expect("sparse run");

    let (d, s) = (bdf(&dense), bdf(&sparse));
    let other_path = match other {
        LinearSolver::Banded => s.uses_band_lu() && !s.uses_sparse_lu(),
        _ => s.uses_sparse_lu() && !s.uses_band_lu(),
    };
    assert!(
        !d.uses_sparse_lu() && !d.uses_band_lu() && other_path,
        "{name}: paths"
    );
    let scale = dense.y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let max_diff = dense
        .y
        .iter()
        .zip(&sparse.y)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f64, f64::max);
    // In the error test's weights: how far below the tolerance the two runs differ.
    let (rtol, atol) = (d.tolerances.rtol, d.tolerances.atol);
    let weighted = dense
        .y
        .iter()
        .zip(&sparse.y)
        .map(|(a, b)| (a - b).abs() / (rtol * a.abs() + atol))
        .fold(0.0f64, f64::max);
    println!(
        "{name} ({other:?}): {} states, t = {} s / {} s; dense {:?}; other {:?}; max |Δy| = {max_diff:.3e} \
         (max |y| = {scale:.3e}, relative {:.3e}); in tolerances (rtol {rtol:e}, atol {atol:e}): \
         {weighted:.3e}",
        dense.y.len(),
        dense.t_s,
        sparse.t_s,
        d.stats,
        s.stats,
        max_diff / scale
    );
    // The projectile stops at its exit event, located to round-off.
    assert!(
        (dense.t_s - sparse.t_s).abs() <= 1e-12 * dense.t_s,
        "{name}: end time"
    );
    assert_eq!(d.stats, s.stats, "{name}: the same steps");
    // Round-off of the two LUs, carried through the (not exactly converged) Newton iterations
    // and the steps: the same step sequence (above) and states within 1 % of the error
    // test's tolerance.
    assert!(
        weighted <= 1e-2,
        "{name}: states differ by {weighted:e} tolerances (max |Δy| {max_diff:e})"
    );
}

#[test]
fn sparse_and_dense_paths_take_the_same_steps() {
    compare("blowdown", &shipped("blowdown"), 1.0);
    compare("two_tanks", &shipped("two_tanks"), 1.0);
    compare("projectile", &shipped("projectile"), 0.01);
    compare("chain of 20 tanks", &chain(20), 0.2);
    compare("chain of 150 tanks", &chain(150), 0.2);
}

/// The band LU (LAPACK's dgbtf2/dgbtrs algorithm) against faer's dense LU: the same steps and
/// states to round-off, on the shipped models (full band) and on chains (narrow band).
#[test]
fn band_and_dense_paths_take_the_same_steps() {
    let band = LinearSolver::Banded;
    compare_with("blowdown", &shipped("blowdown"), 1.0, band);
    compare_with("two_tanks", &shipped("two_tanks"), 1.0, band);
    compare_with("projectile", &shipped("projectile"), 0.01, band);
    compare_with("chain of 20 tanks", &chain(20), 0.2, band);
    compare_with("chain of 150 tanks", &chain(150), 0.2, band);
    compare_with(
        "chain of 20 vented at both ends",
        &chain_vented_at_both_ends(20),
        0.2,
        band,
    );
}

#[test]
fn auto_chooses_by_size_and_a_sparse_run_restores_bit_for_bit() {
    let mut sim = bdf_sim(&shipped("blowdown"), LinearSolver::Auto);
    sim.advance_to(1e-3).unwrap();
    println!(
        "blowdown: {} states, sparse {}, band {}",
        sim.y.len(),
        bdf(&sim).uses_sparse_lu(),
        bdf(&sim).uses_band_lu()
    );
    // Below `SPARSE_MIN_STATES` the band LU with the full band (a plain LU).
    assert!(
        sim.y.len() < SPARSE_MIN_STATES && !bdf(&sim).uses_sparse_lu() && bdf(&sim).uses_band_lu()
    );

    // A chain has a narrow band (4 + 4 here): `Auto` takes the band LU.
    let mut sim = bdf_sim(&chain(150), LinearSolver::Auto);
    sim.advance_to(1e-3).unwrap();
    println!(
        "chain of 150: band {}, sparse {}",
        bdf(&sim).uses_band_lu(),
        bdf(&sim).uses_sparse_lu()
    );
    assert!(bdf(&sim).uses_band_lu() && !bdf(&sim).uses_sparse_lu());
    restores_bit_for_bit(
        "chain of 150 (band)",
        bdf_sim(&chain(150), LinearSolver::Auto),
    );

    // Vented at both ends, the accumulator rows reach back to the first tank: sparse.
    let sim = bdf_sim(&chain_vented_at_both_ends(150), LinearSolver::Auto);
    restores_bit_for_bit("chain of 150 vented at both ends (sparse)", sim);
}

fn restores_bit_for_bit(name: &str, mut sim: Simulation) {
    sim.advance_to(0.0123456).unwrap();
    assert!(
        sim.y.len() >= SPARSE_MIN_STATES
            && (bdf(&sim).uses_sparse_lu() || bdf(&sim).uses_band_lu())
    );
    let bytes = bincode::serde::encode_to_vec(&sim, bincode::config::standard()).unwrap();
    let (mut decoded, _): (Simulation, usize) =
        bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).unwrap();
    sim.advance_to(0.1).unwrap();
    decoded.advance_to(0.1).unwrap();
    let same = sim
        .y
        .iter()
        .zip(&decoded.y)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    println!(
        "{name}: {} states, band {}, sparse {}, snapshot {} bytes, t {} / {}, stats {:?} / {:?}, \
         bit for bit: {same}",
        sim.y.len(),
        bdf(&sim).uses_band_lu(),
        bdf(&sim).uses_sparse_lu(),
        bytes.len(),
        sim.t_s,
        decoded.t_s,
        bdf(&sim).stats,
        bdf(&decoded).stats
    );
    // (The restored one counts one more factorization: its LU is not saved, it is recomputed.)
    assert!(same && sim.t_s == decoded.t_s && bdf(&sim).stats.steps == bdf(&decoded).stats.steps);
}
