//! Every built network has a Jacobian pattern (`OdeSystem::sparsity`: without one the BDF
//! falls back to a dense Jacobian, column by column, and its sparse and band solvers are never
//! chosen), and the pattern holds every nonzero of the exact Jacobian: the dual-number
//! derivative of the right-hand side itself (`OdeSystem::jvp`), column by column, at a
//! perturbed state, with the pistons in their bores and out of them. Every shipped model,
//! gallery model, peer network and fixture, among them a model with a component of every kind.

use crate::common::{model_files, repo_path};
use plenum::components::KINDS;
use plenum::model::{ModelFile, build_network, load_path};
use plenum::ode::OdeSystem;

/// Every model of the repository that loads: shipped, gallery, peers, FONSim, fixtures.
fn models() -> Vec<(String, ModelFile)> {
    let mut out = model_files(&[
        "models",
        "compliance-tests/peers/models",
        "tests/fonsim/models",
        "tests/fixtures/models",
    ]);
    let mut gallery: Vec<_> = std::fs::read_dir(repo_path("examples"))
        .expect("examples")
        .map(|e| e.expect("entry").path().join("model.toml"))
        .filter(|p| p.is_file())
        .collect();
    gallery.sort();
    for p in gallery {
        let m = load_path(&p, &[]).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
        out.push((p.display().to_string(), m.spec));
    }
    out
}

#[test]
fn every_model_has_a_pattern_that_holds_its_exact_jacobian() {
    let models = models();
    let mut kinds_seen: Vec<&str> = Vec::new();
    for (path, spec) in &models {
        for (_, c) in spec.components() {
            kinds_seen.push(c.kind().name);
        }
        let mut net = build_network(spec);
        let n = net.dimension();
        let pattern = net
            .sparsity()
            .unwrap_or_else(|| panic!("{path}: the built network has no sparsity pattern"));
        assert_eq!(pattern.n, n, "{path}");
        // Away from the kinks of the flow laws (equal pressures, a piston at rest): every
        // state moved by a different small fraction, every velocity away from 0.
        let mut y = net.initial_state();
        for (i, v) in y.iter_mut().enumerate() {
            *v = if *v == 0.0 {
                1e-3 * (1 + i % 5) as f64
            } else {
                *v * (1.0 + 0.013 * (i % 7) as f64)
            };
        }
        let (mut dydt, mut jv, mut e) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let (mut nonzeros, mut outside) = (0, 0);
        for exited in [false, true] {
            net.exited.fill(exited);
            for j in 0..n {
                e.fill(0.0);
                e[j] = 1.0;
                assert!(net.jvp(1e-4, &y, &e, &mut dydt, &mut jv), "{path}: jvp");
                for (i, &d) in jv.iter().enumerate() {
                    if d != 0.0 && d.is_finite() {
                        nonzeros += 1;
                        if !pattern.contains(i, j) {
                            println!("{path}: ∂f_{i}/∂y_{j} = {d:e} outside the pattern");
                            outside += 1;
                        }
                    }
                }
            }
        }
        println!(
            "{path}: {n} states, {} pattern entries, {nonzeros} Jacobian nonzeros (pistons in \
             and out), {outside} outside",
            pattern.nonzeros()
        );
        assert!(nonzeros > 0, "{path}: a Jacobian without a nonzero");
        assert_eq!(outside, 0, "{path}: Jacobian entries outside the pattern");
    }
    kinds_seen.sort_unstable();
    kinds_seen.dedup();
    println!("{} models, kinds {kinds_seen:?}", models.len());
    for k in KINDS {
        assert!(kinds_seen.contains(&k.name), "no model with a {}", k.name);
    }
}
