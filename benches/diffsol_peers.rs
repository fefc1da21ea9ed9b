//! diffsol's BDF (a Rust peer: Robinson et al., a variable-order BDF after Byrne & Hindmarsh
//! with NDF coefficients, dense faer LU) against Plenum on the Cantera networks of
//! `benches/peers.py` (docs/performance.md, "Against the peers"), with the same protocol:
//!
//! - **Error**: the largest relative difference of any chamber pressure over the model's output
//!   times against Plenum's `bdf` at rtol 1e-12, atol 1e-20 (peers.py's Plenum reference).
//!   diffsol integrates the same right-hand side (`Network::rhs`) with exact Jacobian–vector
//!   products (`Network::jvp`, dual numbers), so the reference is a solution of its equations.
//! - **Equal error**: each side at the largest rtol of the half-decade ladder 1e-2 … 1e-11 whose
//!   error is ≤ 1e-6 (atol 1e-15 for both).
//! - **Time**: the solve only, best of N repeats, one thread (pin the process: `taskset -c 0`).
//!   Plenum: the `Simulation::advance_to` calls over the output times (what `plenum run`'s
//!   `solve_s` times); diffsol: building the solver (`problem.bdf()`, its initial step) and
//!   `solve_dense` over the output times, per segment between table breakpoints (a fresh
//!   solver at each, as Cantera's `reinitialize` and Plenum's restart there).
//!
//! `cargo bench --bench diffsol_peers` (20 repeats), `-- --repeat N`, `-- --only NAME[,NAME]`,
//! `-- --quick` (1 repeat: checks that it runs, no time claims).

use std::cell::RefCell;
use std::path::Path;
use std::time::Instant;

use plenum::components::chamber;
use plenum::model::{ModelFile, build_simulation, load_path};
use plenum::network::Network;
use plenum::ode::OdeSystem;
use plenum::simulation::Advance;

const CASES: [&str; 5] = [
    "cantera_vent",
    "cantera_two_tanks",
    "cantera_wall",
    "cantera_piston",
    "cantera_chain20",
];
const REF_RTOL: f64 = 1e-12;
const REF_ATOL: f64 = 1e-20;
const ATOL: f64 = 1e-15;
const TARGET: f64 = 1e-6;

/// Chamber pressures (Pa) per output time.
type Pressures = Vec<Vec<f64>>;

/// Output times as `plenum run` computes them (from their index; the last is t_end exactly).
fn output_times(spec: &ModelFile) -> Vec<f64> {
    let s = &spec.solver;
    let (t0, t_end) = (s.t_start, s.t_end);
    let interval = s.output_interval.unwrap_or((t_end - t0) / 100.0);
    let n_out = ((t_end - t0) / interval).round() as usize;
    (0..=n_out)
        .map(|k| {
            if k == n_out {
                t_end
            } else {
                t0 + k as f64 * interval
            }
        })
        .collect()
}

fn pressures_of(net: &Network, y: &[f64]) -> Vec<f64> {
    (0..net.chambers().len())
        .map(|i| {
            let o = i * chamber::STATES;
            net.gas
                .pressure_pa(y[o + chamber::ENERGY], y[o + chamber::VOLUME])
        })
        .collect()
}

/// Plenum with `method` at (rtol, atol): pressures at the output times and the solve time.
fn plenum_run(spec: &ModelFile, method: &str, rtol: f64, atol: f64) -> Option<(Pressures, f64)> {
    let mut spec = spec.clone();
    spec.solver.rtol = Some(rtol);
    spec.solver.atol = Some(atol);
    let mut sim = build_simulation(&spec, Some(method)).ok()?;
    let times = output_times(&spec);
    let mut out = vec![pressures_of(&sim.network, &sim.y)];
    let mut solve_s = 0.0;
    let mut k = 1;
    while k < times.len() {
        let start = Instant::now();
        let r = sim.advance_to(times[k]);
        solve_s += start.elapsed().as_secs_f64();
        match r.ok()? {
            Advance::Reached => {
                out.push(pressures_of(&sim.network, &sim.y));
                k += 1;
            }
            Advance::Exit { .. } => {}
            Advance::Finished(_) => return None,
        }
    }
    Some((out, solve_s))
}

/// diffsol's BDF at (rtol, atol) on the network's right-hand side, segment by segment between
/// table breakpoints: pressures at the output times and the solve time.
fn diffsol_run(spec: &ModelFile, rtol: f64, atol: f64) -> Option<(Pressures, f64)> {
    use diffsol::{DenseMatrix, FaerLU, FaerMat, OdeBuilder, OdeSolverMethod};
    let times = output_times(spec);
    let mut net = plenum::model::build_network(spec);
    let n = net.dimension();
    let mut y = net.initial_state();
    net.segment_start_s = times[0];
    let mut out = vec![pressures_of(&net, &y)];
    let mut solve_s = 0.0;
    let mut t = times[0];
    let t_end = *times.last()?;
    let mut k = 1;
    while t < t_end {
        let seg_end = net.next_breakpoint_after(t).map_or(t_end, |b| b.min(t_end));
        // Output times in (t, seg_end], and seg_end itself (the restart state).
        let mut eval: Vec<f64> = times[k..]
            .iter()
            .copied()
            .take_while(|&s| s <= seg_end)
            .collect();
        let n_outputs = eval.len();
        if eval.last() != Some(&seg_end) {
            eval.push(seg_end);
        }
        let cell = RefCell::new(net.clone());
        let scratch = RefCell::new(vec![0.0; n]);
        let y0 = y.clone();
        let problem = OdeBuilder::<FaerMat<f64>>::new()
            .t0(t)
            .rtol(rtol)
            .atol(vec![atol; n])
            .rhs_implicit(
                |x: &[f64], _p: &[f64], t: f64, dy: &mut [f64]| cell.borrow_mut().rhs(t, x, dy),
                |x: &[f64], _p: &[f64], t: f64, v: &[f64], jv: &mut [f64]| {
                    let mut f = scratch.borrow_mut();
                    cell.borrow_mut().jvp(t, x, v, &mut f, jv);
                },
            )
            .init(
                move |_p: &[f64], _t: f64, y: &mut [f64]| y.copy_from_slice(&y0),
                n,
            )
            .build()
            .ok()?;
        let start = Instant::now();
        let mut solver = problem.bdf::<FaerLU<f64>>().ok()?;
        let (ys, _) = solver.solve_dense(&eval).ok()?;
        solve_s += start.elapsed().as_secs_f64();
        for j in 0..n_outputs {
            let yj: Vec<f64> = (0..n).map(|i| ys.get_index(i, j)).collect();
            out.push(pressures_of(&net, &yj));
        }
        let last = eval.len() - 1;
        for (i, v) in y.iter_mut().enumerate() {
            *v = ys.get_index(i, last);
        }
        k += n_outputs;
        t = seg_end;
        net.segment_start_s = t;
    }
    Some((out, solve_s))
}

fn rel_error(a: &Pressures, reference: &Pressures) -> f64 {
    let mut worst: f64 = 0.0;
    for (ra, rr) in a.iter().zip(reference) {
        for (x, r) in ra.iter().zip(rr) {
            worst = worst.max((x - r).abs() / r.abs());
        }
    }
    if a.len() != reference.len() {
        return f64::INFINITY;
    }
    worst
}

/// The largest rtol of the ladder (half decades, 1e-2 … 1e-11) whose error is ≤ `TARGET`:
/// (rtol, error), else the smallest tried.
fn pick(run: impl Fn(f64) -> Option<(Pressures, f64)>, reference: &Pressures) -> (f64, f64) {
    let mut last = (f64::NAN, f64::INFINITY);
    for k in 4..=22 {
        let rtol = 10f64.powf(-(k as f64) / 2.0);
        let Some((p, _)) = run(rtol) else {
            continue;
        };
        last = (rtol, rel_error(&p, reference));
        if last.1 <= TARGET {
            break;
        }
    }
    last
}

fn best_time(run: impl Fn() -> Option<(Pressures, f64)>, repeat: usize) -> f64 {
    (0..repeat)
        .filter_map(|_| run().map(|r| r.1))
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let repeat = if quick {
        1
    } else {
        arg("--repeat").and_then(|r| r.parse().ok()).unwrap_or(20)
    };
    let only = arg("--only").unwrap_or_default();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    println!("diffsol BDF against Plenum at equal error (≤ {TARGET:e}); best of {repeat}");
    println!(
        "\n| network | diffsol rtol | diffsol time (s) | diffsol error | Plenum method | Plenum rtol \
         | Plenum time (s) | Plenum error | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for case in CASES {
        if !only.is_empty() && !only.split(',').any(|o| o == case) {
            continue;
        }
        let path = root.join(format!("compliance-tests/peers/models/{case}.toml"));
        let spec = load_path(&path, &[])
            .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
            .spec;
        let (reference, _) =
            plenum_run(&spec, "bdf", REF_RTOL, REF_ATOL).expect("Plenum reference run");
        let (d_rtol, d_err) = pick(|r| diffsol_run(&spec, r, ATOL), &reference);
        let d_time = best_time(|| diffsol_run(&spec, d_rtol, ATOL), repeat);
        assert!(
            d_time.is_finite() && d_err.is_finite(),
            "{case}: diffsol failed"
        );
        for method in ["auto", "bdf"] {
            let (p_rtol, p_err) = pick(|r| plenum_run(&spec, method, r, ATOL), &reference);
            let p_time = best_time(|| plenum_run(&spec, method, p_rtol, ATOL), repeat);
            assert!(p_time.is_finite(), "{case}: Plenum {method} failed");
            println!(
                "| {case} | {d_rtol:.1e} | {d_time:.3e} | {d_err:.1e} | {method} | {p_rtol:.1e} \
                 | {p_time:.3e} | {p_err:.1e} | {:.1}× |",
                d_time / p_time
            );
        }
    }
}
