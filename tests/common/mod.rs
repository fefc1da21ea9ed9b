//! Shared helpers of the verification tests.
#![allow(dead_code)]

use std::path::Path;

use plenum::model::{ModelFile, build_simulation, load_path};
use plenum::simulation::{Advance, Simulation};

/// The stiff test network: a 1 m³ tank at 3 bar empties into the atmosphere through a 1 cm³
/// chamber between two equal 10 mm² orifices. The chamber's pressure relaxes in ~1e-4 s, the
/// tank's in ~1e3 s (stiffness ratio ~1e7). No method is named: the tests choose one.
pub const STIFF: &str = r#"
[model]
name = "stiff"
[gas]
species = "air"
[solver]
t_end = 200.0
[[chamber]]
name = "tank"
volume = 1.0
pressure = 3e5
temperature = 300.0
[[chamber]]
name = "tiny"
volume = 1e-6
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "atm"
pressure = 101325.0
temperature = 300.0
[[orifice]]
name = "feed"
from = "tank"
to = "tiny"
area = 1e-5
discharge_coefficient = 0.8
[[orifice]]
name = "vent"
from = "tiny"
to = "atm"
area = 1e-5
discharge_coefficient = 0.8
"#;

/// The components of a chain: `m` chambers at 2–3 bar (a pattern repeating every 7) joined by
/// orifices, the last venting to the reservoir `atm` (model-file text, to follow a `[solver]`).
pub fn chain_components(m: usize) -> String {
    let mut s =
        String::from("[[reservoir]]\nname = \"atm\"\npressure = 101325.0\ntemperature = 300.0\n");
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
    s
}

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
