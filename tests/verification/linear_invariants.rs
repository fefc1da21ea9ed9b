//! The network's declared linear invariants (`OdeSystem::linear_invariants`: every chamber's
//! mass and `mass_left`) hold on every model we ship or test: Σ_{i∈S} f_i(t, y) = 0 to
//! round-off at states along each model's own trajectory and at states scrambled away from it.
//! The BDF's Krylov path corrects every Newton solution onto these sums, so a set that were not
//! conserved would bend its solution.

use crate::common;

use plenum::model::{ModelFile, build_simulation};
use plenum::ode::OdeSystem;

fn models() -> Vec<(String, ModelFile)> {
    common::model_files(&[
        "models",
        "tests/fixtures/models",
        "compliance-tests/peers/models",
        "tests/fonsim/models",
    ])
}

/// |Σ_S f_i| over Σ_S |f_i| (0 when every term is 0).
fn imbalance(set: &[usize], f: &[f64]) -> f64 {
    let sum: f64 = set.iter().map(|&i| f[i]).sum();
    let scale: f64 = set.iter().map(|&i| f[i].abs()).sum();
    if scale == 0.0 { 0.0 } else { sum.abs() / scale }
}

#[test]
fn every_model_conserves_its_declared_sums() {
    let mut checked = 0;
    for (name, spec) in models() {
        let mut sim = build_simulation(&spec, None).expect("builds");
        let sets = sim.network.linear_invariants();
        assert_eq!(sets.len(), 1, "{name}: the mass sum");
        let n = sim.y.len();
        let mut f = vec![0.0; n];
        let (mut worst, mut evaluated, mut moving) = (0.0_f64, 0, 0);
        let t_end = spec.solver.t_end;
        let t0 = sim.t_s;
        for k in 0..=10 {
            let t = t0 + (t_end - t0) * k as f64 / 10.0;
            if t > sim.t_s && sim.advance_to(t).is_err() {
                break;
            }
            // The trajectory's state, and one scrambled: masses, energies and volumes scaled
            // by factors in [0.7, 1.3] (a deterministic pattern), so flows run both ways.
            let y = sim.y.clone();
            let scrambled: Vec<f64> = y
                .iter()
                .enumerate()
                .map(|(i, &v)| v * (1.0 + 0.3 * ((i * 7 + k * 3) % 11) as f64 / 5.0 - 0.3))
                .collect();
            for state in [&y, &scrambled] {
                let mut net = sim.network.clone();
                net.rhs(sim.t_s, state, &mut f);
                if f.iter().any(|v| !v.is_finite()) {
                    continue;
                }
                for set in &sets {
                    assert!(set.iter().all(|&i| i < n), "{name}: index out of range");
                    if set.iter().any(|&i| f[i] != 0.0) {
                        moving += 1;
                    }
                    worst = worst.max(imbalance(set, &f));
                    evaluated += 1;
                }
            }
        }
        println!(
            "{name}: {} states, mass set of {} states: largest |Σf|/Σ|f| {worst:.2e} over \
             {evaluated} evaluations ({moving} with mass moving)",
            n,
            sets[0].len()
        );
        assert!(evaluated > 0, "{name}: nothing evaluated");
        assert!(worst <= 1e-13, "{name}: Σ_S f = {worst:e} of Σ|f|");
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} models");
}
