//! Shared helpers of the verification tests.
#![allow(dead_code)]

pub mod valves;

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

/// The bouncing piston: a piston of mass [`STOPS_MASS_KG`] between two reservoirs at the same
/// pressure (no net gas force, no friction), on a spring of stiffness
/// [`STOPS_STIFFNESS_N_PER_M`] whose rest position [`STOPS_SPRING_X0_M`] lies beyond the stop
/// `x_max` = [`STOPS_STOP_M`], released at rest from x = 0 (the closed form of its motion is in
/// tests/verification/events.rs). Mirrored: the same motion in −x against `x_min` = −stop.
/// `solver` is the body of the `[solver]` section.
pub fn bouncing_piston(solver: &str, restitution: f64, mirrored: bool) -> ModelFile {
    let (xs, stop) = if mirrored {
        (-STOPS_SPRING_X0_M, format!("x_min = {}", -STOPS_STOP_M))
    } else {
        (STOPS_SPRING_X0_M, format!("x_max = {STOPS_STOP_M}"))
    };
    let src = format!(
        r#"
[model]
name = "stops"
[gas]
species = "air"
[solver]
{solver}
[[reservoir]]
name = "left"
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "right"
pressure = 1e5
temperature = 300.0
[[piston]]
name = "p"
behind = "left"
ahead = "right"
area = 1e-4
mass = {STOPS_MASS_KG}
x0 = 0.0
spring_stiffness = {STOPS_STIFFNESS_N_PER_M}
spring_x0 = {xs}
{stop}
restitution = {restitution}
"#
    );
    plenum::model::parse_str(&src, "stops.toml", &[])
        .unwrap_or_else(|e| panic!("{e:?}"))
        .spec
}

pub const STOPS_STIFFNESS_N_PER_M: f64 = 1000.0;
pub const STOPS_MASS_KG: f64 = 0.1;
pub const STOPS_SPRING_X0_M: f64 = 0.2;
pub const STOPS_STOP_M: f64 = 0.1;

/// A reservoir `supply` whose pressure steps from 1 bar to 3 bar at t = 0.05 s (a step table)
/// feeds a 1 L tank of N₂ at 1 bar through the linear valve `v` of `coefficient` kg/(s·Pa):
/// at rest (no flow at all) before the step, a transient after. `solver` is the body of the
/// `[solver]` section.
pub fn step_supply(solver: &str, coefficient: f64) -> ModelFile {
    let src = format!(
        r#"
[model]
name = "step"
[gas]
species = "N2"
[solver]
{solver}
[[chamber]]
name = "tank"
volume = 1e-3
pressure = 1e5
temperature = 300.0
[[reservoir]]
name = "supply"
pressure = {{ table = [[0.0, 1e5], [0.05, 3e5]], interpolation = "step" }}
temperature = 300.0
[[valve]]
name = "v"
from = "supply"
to = "tank"
coefficient = {coefficient:e}
"#
    );
    plenum::model::parse_str(&src, "step.toml", &[])
        .unwrap_or_else(|e| panic!("{e:?}"))
        .spec
}

/// A CSV written by `plenum run --csv`: its header and its rows as numbers (the `csv` crate is
/// the command line's dependency).
#[cfg(feature = "cli")]
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

#[cfg(feature = "cli")]
impl Csv {
    pub fn read(path: &Path) -> Csv {
        let mut reader = csv::Reader::from_path(path).unwrap();
        let header = reader.headers().unwrap().iter().map(String::from).collect();
        let rows = reader
            .records()
            .map(|r| r.unwrap().iter().map(|x| x.parse().unwrap()).collect())
            .collect();
        Csv { header, rows }
    }

    /// The index of column `name`.
    pub fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header))
    }

    /// The column `name`.
    pub fn column(&self, name: &str) -> Vec<f64> {
        let c = self.col(name);
        self.rows.iter().map(|r| r[c]).collect()
    }
}

/// Whole-run central differences: for each parameter `i` with step `steps[i]`, what `run` gives
/// on `spec` with the parameter at p + d and at p − d (`set(spec, i, ±d)` changes it), as
/// (d, plus, minus).
pub fn perturbed_runs<R>(
    spec: &ModelFile,
    steps: &[f64],
    set: impl Fn(&mut ModelFile, usize, f64),
    run: impl Fn(&ModelFile) -> R,
) -> Vec<(f64, R, R)> {
    steps
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let (mut plus, mut minus) = (spec.clone(), spec.clone());
            set(&mut plus, i, d);
            set(&mut minus, i, -d);
            (d, run(&plus), run(&minus))
        })
        .collect()
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
    // Convergence studies take up to a few 10⁵ fixed steps in one advance: genuine work.
    spec.solver.max_steps = spec.solver.max_steps.max(10_000_000);
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

/// The `plenum` binary of this build, as a user runs it.
pub fn plenum_command() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_plenum"))
}

/// Runs `cmd` and fails the test with the command's stderr unless it exits successfully.
pub fn output_ok(cmd: &mut std::process::Command) -> std::process::Output {
    let out = cmd.output().expect("the command could not be started");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every valid model file in these repository directories (sorted by path within each), with
/// its path; fixtures that are invalid on purpose (empty, not UTF-8) are skipped.
pub fn model_files(dirs: &[&str]) -> Vec<(String, ModelFile)> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut paths: Vec<_> = std::fs::read_dir(repo_path(dir))
            .expect("model directory")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        for p in paths {
            if let Ok(m) = load_path(&p, &[]) {
                out.push((p.display().to_string(), m.spec));
            }
        }
    }
    out
}

/// The simulation of a model text; prints the model's errors and panics if it is rejected.
pub fn sim_of(src: &str) -> Simulation {
    let m = plenum::model::parse_str(src, "test.toml", &[]).unwrap_or_else(|e| {
        for x in &e {
            println!("{x}");
        }
        panic!("model rejected")
    });
    build_simulation(&m.spec, None).expect("builds")
}

/// Output `name` of the simulation's current state.
pub fn output(sim: &mut Simulation, name: &str) -> f64 {
    let vars = plenum::variables::output_variables(sim);
    let mut out = vec![0.0; vars.len()];
    plenum::variables::write_outputs(sim, &mut out);
    let k = vars
        .iter()
        .position(|v| v.name == name)
        .unwrap_or_else(|| panic!("no output {name}"));
    out[k]
}
