//! The BDF's sparse path (Jacobian over the sparsity pattern, sparse LU of M = I − γJ) against
//! its dense path: forced each way on the shipped models and on chains of tanks, the two must
//! take the same steps (same counts of steps, Jacobians, factorizations, Newton iterations)
//! and end at the same states to round-off (the two LUs pivot differently, so the bits may
//! differ). And a snapshot of a run on the sparse path (chosen by size) continues bit for bit.

use crate::common;

use common::*;
use plenum::integrators::bdf::Bdf;
use plenum::integrators::bdf::{LinearSolver, SPARSE_MIN_STATES};
use plenum::integrators::{Integrator, Method};
use plenum::model::{ModelFile, build_simulation, parse_str};
use plenum::simulation::Simulation;

/// m tanks in a row at 2–3 bar joined by orifices, the last venting to the atmosphere.
fn chain(m: usize) -> ModelFile {
    parse_str(&chain_text(m, false), "chain.toml", &[])
        .expect("chain model")
        .spec
}

/// The chain, also vented at its first tank: the reservoir's mass and energy accumulators
/// (the last two states) then depend on both ends, so M has no narrow band.
fn chain_vented_at_both_ends(m: usize) -> ModelFile {
    parse_str(&chain_text(m, true), "chain.toml", &[])
        .expect("chain model")
        .spec
}

/// The model text of the chain (`both_ends`: also vented at its first tank).
fn chain_text(m: usize, both_ends: bool) -> String {
    let mut s = String::from(
        "[model]\nname = \"chain\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"bdf\"\n\
         t_end = 1.0\n",
    );
    s += &common::chain_components(m);
    if both_ends {
        s += "[[orifice]]\nname = \"o0\"\nfrom = \"c0\"\nto = \"atm\"\narea = 1e-5\n";
    }
    s
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
        // A network whose own order has a wide band: `Auto` reorders it into a narrow one.
        LinearSolver::Auto => s.uses_reordered_band_lu() && !s.uses_sparse_lu(),
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

/// A chain of `m` chambers with a piston venting to the atmosphere on every `every`-th one:
/// each piston writes its states and its chamber's into the two accumulator rows.
fn chain_with_pistons(m: usize, every: usize) -> ModelFile {
    let mut s = chain_text(m, false);
    for (k, i) in (0..m).step_by(every).enumerate() {
        s += &format!(
            "[[piston]]\nname = \"p{k}\"\nbehind = \"c{i}\"\nahead = \"atm\"\narea = 1e-4\n\
             mass = 0.1\nx0 = 0.05\nspring_stiffness = 1000.0\n"
        );
    }
    parse_str(&s, "chain_pistons.toml", &[])
        .expect("chain with pistons")
        .spec
}

/// Pistons put their states after every chamber, so a chain with pistons has a wide band in
/// the states' own order; `Auto` factors it as a band in reverse Cuthill–McKee order (the
/// sparse LU before). Against the dense LU (as the other paths above): the same steps and
/// states to round-off; against the sparse LU it replaces: the same steps; and a snapshot
/// continues bit for bit.
#[test]
fn a_chain_with_pistons_takes_the_reordered_band_lu() {
    let spec = chain_with_pistons(60, 6);
    let mut auto = bdf_sim(&spec, LinearSolver::Auto);
    let mut sparse = bdf_sim(&spec, LinearSolver::Sparse);
    let _ = auto.advance_to(1e-3).expect("runs");
    let _ = sparse.advance_to(1e-3).expect("runs");
    let max_diff = auto
        .y
        .iter()
        .zip(&sparse.y)
        .map(|(a, b)| (a - b).abs() / (1e-6 * b.abs() + 1e-12))
        .fold(0.0f64, f64::max);
    println!(
        "chain of 60, 10 pistons ({} states): reordered band {}, sparse {}; steps {} / {}; \
         states differ from the sparse LU's by {max_diff:.3e} tolerances",
        auto.y.len(),
        bdf(&auto).uses_reordered_band_lu(),
        bdf(&auto).uses_sparse_lu(),
        bdf(&auto).stats.steps,
        bdf(&sparse).stats.steps
    );
    assert!(bdf(&auto).uses_reordered_band_lu() && bdf(&sparse).uses_sparse_lu());
    assert_eq!(bdf(&auto).stats, bdf(&sparse).stats);
    assert!(max_diff <= 1e-2, "{max_diff} tolerances");
    compare_with(
        "chain of 60 with 10 pistons",
        &spec,
        0.05,
        LinearSolver::Auto,
    );
    restores_bit_for_bit(
        "chain of 60 with 10 pistons (reordered band)",
        bdf_sim(&spec, LinearSolver::Auto),
    );
}

/// Above `BAND_RCM_MAX_STATES` coupled states `Auto` takes the sparse LU, not the reordered
/// band, on the same kind of chain (the band's substitutions through memory are the slower
/// there).
#[test]
fn a_long_chain_with_pistons_takes_the_sparse_lu() {
    use plenum::integrators::bdf::BAND_RCM_MAX_STATES;
    // Two coupled states per chamber without a piston (its fixed volume is solved outside the
    // LU), three with one, two per piston: enough chambers for the limit.
    let m = BAND_RCM_MAX_STATES / 2 + 100;
    let spec = chain_with_pistons(m, 100);
    let mut auto = bdf_sim(&spec, LinearSolver::Auto);
    let _ = auto.advance_to(1e-6).expect("runs");
    let n = auto.y.len();
    println!(
        "chain of {m}, {} pistons ({n} states, limit {BAND_RCM_MAX_STATES}): sparse {}, \
         reordered band {}",
        m.div_ceil(100),
        bdf(&auto).uses_sparse_lu(),
        bdf(&auto).uses_reordered_band_lu()
    );
    assert!(n >= BAND_RCM_MAX_STATES);
    assert!(bdf(&auto).uses_sparse_lu() && !bdf(&auto).uses_reordered_band_lu());
    assert!(bdf(&auto).stats.steps >= 1);
}

/// The network, with its pattern as given or with a structural diagonal entry on every empty
/// column (so that no state is a quadrature to `newton_groups`: J's accumulator rows are
/// evaluated and coloured too, as before the quadrature rows were left out).
struct WholePattern<'a> {
    net: &'a mut plenum::network::Network,
    whole: bool,
}

impl plenum::ode::OdeSystem for WholePattern<'_> {
    fn dimension(&self) -> usize {
        self.net.dimension()
    }
    fn rhs(&mut self, t: f64, y: &[f64], dydt: &mut [f64]) {
        self.net.rhs(t, y, dydt)
    }
    fn sparsity(&self) -> Option<plenum::sparsity::Pattern> {
        let p = self.net.sparsity()?;
        if !self.whole {
            return Some(p);
        }
        let mut entries = Vec::new();
        for j in 0..p.n {
            entries.extend(p.column(j).iter().map(|&i| (j, i)));
            if p.column(j).is_empty() {
                entries.push((j, j));
            }
        }
        Some(plenum::sparsity::Pattern::from_entries(p.n, entries))
    }
    fn jvp(&mut self, t: f64, y: &[f64], v: &[f64], dydt: &mut [f64], jv: &mut [f64]) -> bool {
        self.net.jvp(t, y, v, dydt, jv)
    }
}

/// The accumulators (quadratures: nothing reads them) are left out of the Newton Jacobian when
/// their dense rows would multiply the column groups (`sparsity::newton_groups`). A chain of 30
/// chambers with 10 pistons: the groups drop, and the adaptive `bdf` run (exact Jacobian, the
/// default) still ends within a few tolerances of a DP5 reference at rtol 1e-11 —
/// accumulators included — and keeps the mass total (gas + accumulator, linear in the states)
/// to the Newton iteration's convergence.
#[test]
fn quadrature_rows_out_of_the_jacobian_keep_the_solution() {
    use plenum::ode::OdeSystem;
    use plenum::sparsity::color_columns;
    let spec = chain_with_pistons(30, 3);
    let mut sim = bdf_sim(&spec, LinearSolver::Auto);
    let n = sim.y.len();
    let full = color_columns(&sim.network.sparsity().expect("pattern")).n_colors();
    let groups = match &mut sim.integrator {
        Method::Bdf(b) => b.jacobian_groups(&sim.network).0,
        _ => unreachable!(),
    };
    println!(
        "chain of 30 chambers, 10 pistons ({n} states): {full} groups with the accumulator rows, {groups} without"
    );
    assert!(
        groups < full,
        "{groups} groups, {full} with the accumulator rows"
    );

    let t_end = 2e-3;
    // Peer in the same test: the same BDF over the whole pattern (the accumulators made
    // non-quadratures by a structural diagonal entry, so their rows are coloured too), both
    // stepped by the same bare loop.
    let control = sim.settings.control;
    let y0 = sim.y.clone();
    let run = |whole: bool| {
        let mut net = sim.network.clone();
        let mut sys = WholePattern {
            net: &mut net,
            whole,
        };
        let mut b = Bdf::adaptive(n);
        b.configure(&control);
        let groups = b.jacobian_groups(&sys).0;
        let (mut t, mut y, mut inc) = (0.0, y0.clone(), vec![0.0; n]);
        while t < t_end {
            let h = b
                .attempt(&mut sys, t, &y, t_end - t, &mut inc)
                .expect("step");
            y.iter_mut().zip(&inc).for_each(|(a, d)| *a += d);
            t += h;
            b.commit(&mut sys, t, &y);
        }
        (y, b.stats, groups)
    };
    let (y_q, st_q, g_q) = run(false);
    let (y_w, st_w, g_w) = run(true);
    let peer = (0..n)
        .map(|i| (y_q[i] - y_w[i]).abs() / (1e-6 * y_w[i].abs() + 1e-12))
        .fold(0.0f64, f64::max);
    println!(
        "same loop, accumulators out of / in the Jacobian: {g_q} / {g_w} groups, {} / {} \
         steps, {} / {} Newton iterations, {} / {} Jacobian rhs; states differ by {peer:.3e} \
         tolerances",
        st_q.steps,
        st_w.steps,
        st_q.newton_iterations,
        st_w.newton_iterations,
        st_q.jacobian_rhs_evaluations,
        st_w.jacobian_rhs_evaluations
    );
    // (The whole pattern's two structural diagonal entries may cost a group more.)
    assert!(g_q == groups && g_w >= full, "{g_q}, {g_w} groups");
    assert!(peer < 1.0, "{peer} tolerances between the two runs");
    assert!(
        st_q.newton_iterations <= st_w.newton_iterations + st_w.steps / 10,
        "Newton iterations {} against {}",
        st_q.newton_iterations,
        st_w.newton_iterations
    );
    let (m0, e0) = (
        sim.network.mass_total_kg(&sim.y),
        sim.network.energy_total_j(&sim.y),
    );
    let _ = sim.advance_to(t_end).expect("bdf run");
    let mut reference = spec.clone();
    reference.solver.method = "dopri5".into();
    reference.solver.step = None;
    reference.solver.rtol = Some(1e-11);
    reference.solver.atol = Some(1e-14);
    let mut reference = build_simulation(&reference, None).expect("builds");
    let _ = reference.advance_to(t_end).expect("reference run");
    let b = bdf(&sim);
    let (rtol, atol) = (b.tolerances.rtol, b.tolerances.atol);
    let weighted = |range: std::ops::Range<usize>| {
        range
            .map(|i| (sim.y[i] - reference.y[i]).abs() / (rtol * reference.y[i].abs() + atol))
            .fold(0.0f64, f64::max)
    };
    let acc = sim.network.layout.accumulator_offset;
    let (all, accs) = (weighted(0..n), weighted(acc..acc + 2));
    let dm = (sim.network.mass_total_kg(&sim.y) - m0).abs() / m0;
    let de = (sim.network.energy_total_j(&sim.y) - e0).abs() / e0;
    println!(
        "bdf ({} steps, {} Newton iterations, {} Jacobian rhs) against DP5 at rtol 1e-11: \
         {all:.3e} tolerances over all states, {accs:.3e} on the accumulators \
         (rtol {rtol:e}, atol {atol:e}); mass total drift {dm:.2e}, energy {de:.2e} (relative)",
        b.stats.steps, b.stats.newton_iterations, b.stats.jacobian_rhs_evaluations
    );
    // A global error of a few hundred local tolerances over the run is BDF's usual; the
    // accumulators' own error must be no worse than the states they integrate.
    assert!(all < 500.0, "{all} tolerances");
    assert!(accs <= all.max(1.0), "accumulators {accs}, states {all}");
    // The mass total is linear in the states: BDF keeps it to the Newton iteration's
    // convergence (the accumulator one iteration behind included). The energy total holds the
    // pistons' ½mv² and spring energy, not linear: kept to the local error only.
    assert!(dm < 1e-9, "mass total drift {dm:e}");
    assert!(de < rtol, "energy total drift {de:e}");
}
