//! Shared helpers of the verification tests.
#![allow(dead_code)]

use std::path::Path;

use plenum::model::{ModelFile, build_simulation, load_path};
use plenum::simulation::{Advance, Simulation};

pub fn repo_path(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A shipped model's spec.
pub fn shipped(name: &str) -> ModelFile {
    load_path(&repo_path(&format!("models/{name}.toml")), &[])
        .unwrap_or_else(|e| panic!("models/{name}.toml: {e:?}"))
        .spec
}

pub fn simulation(spec: &ModelFile, method: &str, step: f64) -> Simulation {
    let mut spec = spec.clone();
    spec.solver.method = method.to_string();
    spec.solver.step = Some(step);
    build_simulation(&spec, None).expect("builds")
}

/// Run until the first piston exit; the simulation is left at the exit state.
pub fn run_to_exit(sim: &mut Simulation, t_end: f64) -> f64 {
    match sim.advance_to(t_end).expect("no check failure") {
        Advance::Exit { t_s, .. } => t_s,
        other => panic!("expected an exit before {t_end} s, got {other:?}"),
    }
}

/// Least-squares slope of log(err) against log(h).
pub fn observed_order(h: &[f64], err: &[f64]) -> f64 {
    let n = h.len() as f64;
    let lx: Vec<f64> = h.iter().map(|v| v.ln()).collect();
    let ly: Vec<f64> = err.iter().map(|v| v.ln()).collect();
    let mx = lx.iter().sum::<f64>() / n;
    let my = ly.iter().sum::<f64>() / n;
    let sxy: f64 = lx.iter().zip(&ly).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = lx.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}
