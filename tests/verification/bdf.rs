//! Verification of the BDF integrators (`bdf`, `bdf1`..`bdf5`): order of accuracy on
//! BlasterSim's exact solution, tolerance proportionality, stiffness against an explicit method,
//! agreement with an independent Rust BDF (`diffsol`), column grouping of the Jacobian, and a
//! bit-exact restore. Every asserted figure is printed.

use crate::common;

use crate::counting_alloc::allocations_in;
use common::*;
use plenum::integrators::bdf::Bdf;
use plenum::integrators::{Integrator, Method, SolverError};
use plenum::model::ModelFile;
use plenum::network::Network;
use plenum::ode::OdeSystem;

/// Eq. 3.8 of BlasterSim's verification (see tests/verification/projectile.rs).
fn exact_velocity(spec: &ModelFile, x: f64) -> f64 {
    let p = &spec.piston[0];
    let c = &spec.chamber[0];
    assert_eq!(c.volume, 0.0);
    let gas = plenum::model::build::gas_of(spec.gas.as_ref());
    let g = gas.gamma;
    let p_atm = spec.reservoir[0].pressure.as_const().unwrap();
    let pf = p.friction_dynamic.as_const().unwrap();
    let (p0, x0, a, m) = (c.pressure, p.x0, p.area, p.mass);
    let work = p0 * (x0.powf(g) * x.powf(1.0 - g) - x0) / (1.0 - g) - (p_atm + pf) * (x - x0);
    (p.v0 * p.v0 + 2.0 * a / m * work).sqrt()
}

/// The gentler air gun of tests/verification/projectile.rs (3 bar, x0 = 0.3 m, exit at 0.5 m,
/// 20 g): its solution is smoother, so high orders reach their asymptotic range above round-off.
fn gentle_case() -> ModelFile {
    let mut spec = shipped("projectile");
    spec.chamber[0].pressure = 301_325.0;
    spec.piston[0].x0 = 0.3;
    spec.piston[0].x_exit = Some(0.5);
    spec.piston[0].mass = 0.02;
    spec.solver.t_end = 0.05;
    spec
}

fn exit_error(spec: &ModelFile, method: &str, h: f64) -> f64 {
    let mut sim = simulation(spec, method, h);
    run_to_exit(&mut sim, spec.solver.t_end);
    let (x, v) = sim.piston_state(0);
    (v - exact_velocity(spec, x)).abs()
}

fn check_order(spec: ModelFile, method: &str, steps: &[f64], expected: f64) {
    let errors: Vec<f64> = steps
        .iter()
        .map(|&h| exit_error(&spec, method, h))
        .collect();
    for (h, e) in steps.iter().zip(&errors) {
        println!("{method}: h = {h:e} s, exit-velocity error = {e:e} m/s");
    }
    let p = observed_order(steps, &errors);
    println!("{method}: observed order {p:.4} (theory {expected}, tolerance ±0.1)");
    assert!((p - expected).abs() <= 0.1, "{method}: order {p}");
}

#[test]
fn order_of_accuracy_bdf1() {
    check_order(gentle_case(), "bdf1", &[4e-6, 2e-6, 1e-6], 1.0);
}

#[test]
fn order_of_accuracy_bdf2() {
    check_order(gentle_case(), "bdf2", &[4e-5, 2e-5, 1e-5], 2.0);
}

#[test]
fn order_of_accuracy_bdf3() {
    check_order(gentle_case(), "bdf3", &[8e-5, 4e-5, 2e-5], 3.0);
}

#[test]
fn order_of_accuracy_bdf4() {
    check_order(gentle_case(), "bdf4", &[1.6e-4, 8e-5, 4e-5], 4.0);
}

#[test]
fn order_of_accuracy_bdf5() {
    check_order(gentle_case(), "bdf5", &[6e-5, 5e-5, 4.2e-5, 3.5e-5], 5.0);
}

// ---------------------------------------------------------------------------------------------
// A minimal adaptive driver for tests on the ODE system itself: one integrator step per attempt,
// increments added with Kahan's compensated sum (as `Simulation` does), steps capped to land on
// the requested time exactly.

struct Run {
    t: f64,
    y: Vec<f64>,
    comp: Vec<f64>,
    inc: Vec<f64>,
    steps: u64,
}

impl Run {
    fn new(net: &Network) -> Run {
        let y = net.initial_state();
        let n = y.len();
        Run {
            t: 0.0,
            y,
            comp: vec![0.0; n],
            inc: vec![0.0; n],
            steps: 0,
        }
    }

    fn add(&mut self) {
        for i in 0..self.y.len() {
            let d = self.inc[i] - self.comp[i];
            let s = self.y[i] + d;
            self.comp[i] = (s - self.y[i]) - d;
            self.y[i] = s;
        }
    }

    /// One step of at most `cap` (and not past `t_stop`).
    fn step<I: Integrator>(
        &mut self,
        m: &mut I,
        net: &mut Network,
        t_stop: f64,
        cap: f64,
    ) -> Result<(), SolverError> {
        let room = t_stop - self.t;
        let h_max = room.min(cap);
        let h = m.attempt(net, self.t, &self.y, h_max, &mut self.inc)?;
        let t_new = if h == room { t_stop } else { self.t + h };
        self.add();
        m.commit(net, t_new, &self.y);
        self.t = t_new;
        self.steps += 1;
        Ok(())
    }

    fn try_advance<I: Integrator>(
        &mut self,
        m: &mut I,
        net: &mut Network,
        t_stop: f64,
        cap: f64,
    ) -> Result<(), SolverError> {
        while self.t < t_stop {
            self.step(m, net, t_stop, cap)?;
        }
        Ok(())
    }

    fn advance<I: Integrator>(&mut self, m: &mut I, net: &mut Network, t_stop: f64, cap: f64) {
        self.try_advance(m, net, t_stop, cap)
            .expect("no solver failure");
    }
}

fn adaptive_bdf(n: usize, rtol: f64, atol: f64) -> Bdf {
    let mut b = Bdf::adaptive(n);
    b.tolerances.rtol = rtol;
    b.tolerances.atol = atol;
    b
}

fn parse(src: &str, name: &str) -> ModelFile {
    plenum::model::parse_str(src, name, &[]).unwrap().spec
}

/// Adaptive `bdf` through `Simulation` (built from the model file with `method = "bdf"` and
/// the given `rtol`, atol = rtol·1e-8) on the air gun to the exit, which the driver locates on
/// the dense output as an event. Returns the exit-velocity error against eq. 3.8, the exact
/// exit velocity and the run's statistics.
fn adaptive_exit_error(spec: &ModelFile, rtol: f64) -> (f64, f64, plenum::simulation::Stats) {
    let mut spec = spec.clone();
    spec.solver.method = "bdf".to_string();
    spec.solver.step = None;
    spec.solver.rtol = Some(rtol);
    spec.solver.atol = Some(rtol * 1e-8);
    let mut sim = plenum::model::build_simulation(&spec, None).expect("builds");
    run_to_exit(&mut sim, spec.solver.t_end);
    let (x, v) = sim.piston_state(0);
    let exact = exact_velocity(&spec, x);
    ((v - exact).abs(), exact, sim.stats)
}

#[test]
fn adaptive_bdf_error_is_proportional_to_rtol() {
    let spec = shipped("projectile");
    let rtols = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9];
    let mut errs = Vec::new();
    let mut v_exit = 0.0;
    for &rtol in &rtols {
        let (e, v, st) = adaptive_exit_error(&spec, rtol);
        v_exit = v;
        println!(
            "bdf (Simulation) rtol {rtol:e}: exit-velocity error {e:e} m/s = {:.3}·rtol·|v| \
             ({} steps, {} rejected, {} rhs evaluations, {} events)",
            e / (rtol * v),
            st.steps,
            st.rejected_steps,
            st.rhs_evaluations,
            st.events
        );
        assert!(st.steps > 0 && st.events == 1);
        errs.push(e);
    }
    let slope = observed_order(&rtols, &errs);
    println!(
        "bdf: slope of log(error) against log(rtol) over {:.0} decades: {slope:.3} (asserted \
         0.8..1.2)",
        (rtols[0] / rtols[rtols.len() - 1]).log10()
    );
    assert!((0.8..=1.2).contains(&slope), "slope {slope}");
    for (&r, &e) in rtols.iter().zip(&errs) {
        println!(
            "bdf rtol {r:e}: error {e:e} < 20·rtol·v_exit = {:e}",
            20.0 * r * v_exit
        );
        assert!(e < 20.0 * r * v_exit, "rtol {r:e}: error {e:e}");
    }
}

// ---------------------------------------------------------------------------------------------
// Stiffness.

/// Largest relative difference of the chamber states (m, U per chamber).
fn rel_diff(a: &[f64], b: &[f64], nc: usize) -> f64 {
    let mut worst: f64 = 0.0;
    for i in 0..nc {
        for k in [0, 1] {
            let j = 3 * i + k;
            worst = worst.max((a[j] - b[j]).abs() / b[j].abs());
        }
    }
    worst
}

/// The stiff network through `Simulation` with `method` at (rtol, atol = rtol·1e-9): the
/// state (m, U of each chamber) at the output times, and the run's statistics.
fn stiff_run(
    spec: &ModelFile,
    method: &str,
    rtol: f64,
    times: &[f64],
) -> (Vec<Vec<f64>>, plenum::simulation::Stats, u64) {
    let mut spec = spec.clone();
    spec.solver.method = method.to_string();
    spec.solver.step = None;
    spec.solver.rtol = Some(rtol);
    spec.solver.atol = Some(rtol * 1e-9);
    let mut sim = plenum::model::build_simulation(&spec, None).expect("builds");
    let states = times
        .iter()
        .map(|&t| {
            sim.advance_to(t).expect("no failure");
            sim.y.clone()
        })
        .collect();
    let jacobian_evals = match &sim.integrator {
        Method::Bdf(b) => b.stats.jacobian_rhs_evaluations,
        _ => 0,
    };
    (states, sim.stats, jacobian_evals)
}

/// Largest relative difference of the chamber states over the output times.
fn worst_diff(a: &[Vec<f64>], b: &[Vec<f64>], nc: usize) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| rel_diff(x, y, nc))
        .fold(0.0, f64::max)
}

#[test]
fn stiff_network_bdf_needs_under_a_hundredth_of_the_explicit_work() {
    let spec = parse(common::STIFF, "stiff.toml");
    let t_end = spec.solver.t_end;
    let mut net = plenum::model::build_network(&spec);
    let n = net.dimension();
    let nc = net.chambers().len();

    // Time constants from the Jacobian's diagonal at t = 0 (printed for the record).
    let mut pert = net.initial_state();
    let (mut f0, mut f1) = (vec![0.0; n], vec![0.0; n]);
    net.rhs(0.0, &pert.clone(), &mut f0);
    let mut taus = Vec::new();
    for j in [1, 4] {
        let d = pert[j] * 1e-7;
        pert[j] += d;
        net.rhs(0.0, &pert, &mut f1);
        pert[j] -= d;
        taus.push(1.0 / ((f1[j] - f0[j]) / d).abs());
    }
    let decades = (taus[0] / taus[1]).log10();
    println!(
        "1/|∂U̇/∂U| at t = 0: tank {:.3e} s, tiny chamber {:.3e} s ({decades:.1} decades, \
         asserted ≥ 6)",
        taus[0], taus[1]
    );
    assert!(decades >= 6.0);

    // Both methods through `Simulation`, compared at 20 output times (dense output) with a
    // tight-tolerance reference.
    let times: Vec<f64> = (1..=20).map(|k| t_end * k as f64 / 20.0).collect();
    let (reference, _, _) = stiff_run(&spec, "bdf", 1e-12, &times);

    // dopri5 at its default tolerance: its step is bounded by stability (h·|λ| ≲ 3.3 for the
    // tiny chamber), not by accuracy.
    let dopri_rtol = plenum::integrators::DEFAULT_RTOL;
    let (d_states, d_stats, _) = stiff_run(&spec, "dopri5", dopri_rtol, &times);
    let d_err = worst_diff(&d_states, &reference, nc);
    println!(
        "dopri5 rtol {dopri_rtol:e}: {} steps ({} rejected), {} rhs evaluations, max relative \
         error {d_err:.3e}",
        d_stats.steps, d_stats.rejected_steps, d_stats.rhs_evaluations
    );

    // bdf at the tolerance (quarter decades from 1e-4 to 1e-11) whose error is nearest to
    // dopri5's.
    let mut best: Option<(f64, f64, plenum::simulation::Stats, u64)> = None;
    for k in 0..=28 {
        let rtol = 1e-4 * 10f64.powf(-0.25 * k as f64);
        let (states, stats, jac) = stiff_run(&spec, "bdf", rtol, &times);
        let err = worst_diff(&states, &reference, nc);
        println!(
            "bdf rtol {rtol:.3e}: {} steps ({} rejected), {} rhs evaluations, max relative \
             error {err:.3e} ({:.2}× dopri5's)",
            stats.steps,
            stats.rejected_steps,
            stats.rhs_evaluations,
            err / d_err
        );
        if best.is_none_or(|(_, e, _, _)| (err / d_err).ln().abs() < (e / d_err).ln().abs()) {
            best = Some((rtol, err, stats, jac));
        }
        if err < 0.5 * d_err {
            break;
        }
    }
    let (b_rtol, b_err, b_stats, b_jac) = best.unwrap();
    let accuracy_ratio = b_err / d_err;
    let ratio = d_stats.rhs_evaluations as f64 / b_stats.rhs_evaluations as f64;
    println!(
        "same accuracy: bdf rtol {b_rtol:.3e} error {b_err:.3e}, dopri5 rtol {dopri_rtol:e} \
         error {d_err:.3e} (ratio {accuracy_ratio:.2}, asserted 0.5..2)"
    );
    println!(
        "rhs evaluations: dopri5 {}, bdf {} ({b_jac} of them for Jacobians): dopri5 / bdf = \
         {ratio:.1} (asserted > 100)",
        d_stats.rhs_evaluations, b_stats.rhs_evaluations
    );
    assert!(
        (0.5..=2.0).contains(&accuracy_ratio),
        "accuracy ratio {accuracy_ratio}"
    );
    assert!(ratio > 100.0, "ratio {ratio}");
}

// ---------------------------------------------------------------------------------------------
// Sparsity.

#[test]
fn chain_network_jacobian_needs_few_column_groups() {
    // Ten chambers in a chain between two reservoirs.
    let mut src = String::from(
        "[model]\nname = \"chain\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"bdf\"\nstep = 1e-3\nt_end = 1.0\n\
         [[reservoir]]\nname = \"in\"\npressure = 3e5\ntemperature = 300.0\n\
         [[reservoir]]\nname = \"out\"\npressure = 1e5\ntemperature = 300.0\n",
    );
    let k = 10;
    for i in 0..k {
        src += &format!(
            "[[chamber]]\nname = \"c{i}\"\nvolume = 1e-3\npressure = 1e5\ntemperature = 300.0\n"
        );
    }
    for i in 0..=k {
        let from = if i == 0 {
            "in".to_string()
        } else {
            format!("c{}", i - 1)
        };
        let to = if i == k {
            "out".to_string()
        } else {
            format!("c{i}")
        };
        src += &format!(
            "[[orifice]]\nname = \"o{i}\"\nfrom = \"{from}\"\nto = \"{to}\"\narea = 1e-6\ndischarge_coefficient = 0.8\n"
        );
    }
    let spec = parse(&src, "chain.toml");
    let mut net = plenum::model::build_network(&spec);
    let n = net.dimension();
    let pattern = net.sparsity().expect("the network knows its pattern");
    let mut bdf = Bdf::adaptive(n);
    let (colors, columns) = bdf.jacobian_groups(&net);
    println!(
        "chain of {k} chambers: {columns} columns, {} structural nonzeros, {colors} column groups",
        pattern.nonzeros()
    );
    // Chamber i's columns share rows with chambers i ± 2, so 3 chambers × 3 states = 9 groups;
    // the two end chambers also share the accumulator rows (both vent into reservoirs), which
    // would cost 3 more: they are quadratures, left out when that saves groups
    // (`sparsity::newton_groups`).
    assert!(colors <= 9, "{colors} groups");

    // The pattern holds every nonzero of a dense finite-difference Jacobian at a perturbed state.
    let mut y = net.initial_state();
    for (i, v) in y.iter_mut().enumerate().take(3 * k) {
        *v *= 1.0 + 0.01 * i as f64;
    }
    let (mut f0, mut f1) = (vec![0.0; n], vec![0.0; n]);
    net.rhs(0.0, &y, &mut f0);
    let mut outside = 0;
    for j in 0..n {
        let d = 1e-7 * y[j].abs().max(1e-9);
        let mut yp = y.clone();
        yp[j] += d;
        net.rhs(0.0, &yp, &mut f1);
        for i in 0..n {
            if f1[i] != f0[i] && !pattern.contains(i, j) {
                println!("nonzero outside the pattern: row {i}, column {j}");
                outside += 1;
            }
        }
    }
    println!("dense finite-difference nonzeros outside the pattern: {outside}");
    assert_eq!(outside, 0);

    // And the grouped Jacobian gives the same run as a dense one would: it runs to the end.
    let mut run = Run::new(&net);
    run.advance(&mut bdf, &mut net, 1.0, f64::INFINITY);
    println!(
        "chain run to 1 s: {} steps, {} Jacobians at {} rhs evaluations each",
        run.steps,
        bdf.stats.jacobian_evaluations,
        bdf.stats.jacobian_rhs_evaluations / bdf.stats.jacobian_evaluations.max(1)
    );
    assert_eq!(
        bdf.stats.jacobian_rhs_evaluations,
        bdf.stats.jacobian_evaluations * colors as u64
    );
}

// ---------------------------------------------------------------------------------------------
// Bit-exact restore.

fn bits(y: &[f64], t: f64) -> Vec<u64> {
    y.iter().map(|v| v.to_bits()).chain([t.to_bits()]).collect()
}

#[test]
fn adaptive_bdf_restored_mid_run_continues_bit_for_bit() {
    let spec = shipped("two_tanks");
    let mut net = plenum::model::build_network(&spec);
    let n = net.dimension();
    let mut bdf = adaptive_bdf(n, 1e-8, 1e-14);
    let mut run = Run::new(&net);
    run.advance(&mut bdf, &mut net, 0.37, f64::INFINITY);
    let cfg = bincode::config::standard();
    let bytes = bincode::serde::encode_to_vec((&bdf, &net, &run.y, &run.comp, run.t), cfg).unwrap();
    run.advance(&mut bdf, &mut net, 5.0, f64::INFINITY);
    let reference = bits(&run.y, run.t);

    type Snapshot = (Bdf, Network, Vec<f64>, Vec<f64>, f64);
    let ((mut bdf2, mut net2, y, comp, t), _): (Snapshot, usize) =
        bincode::serde::decode_from_slice(&bytes, cfg).unwrap();
    let mut run2 = Run::new(&net2);
    (run2.y, run2.comp, run2.t) = (y, comp, t);
    run2.advance(&mut bdf2, &mut net2, 5.0, f64::INFINITY);
    println!(
        "bdf snapshot {} bytes at t = 0.37 s (order {}); p_a at 5 s: original {:?}, restored {:?}",
        bytes.len(),
        bdf2.current_order(),
        run.y[1],
        run2.y[1]
    );
    assert_eq!(bits(&run2.y, run2.t), reference);
}

#[test]
fn fixed_order_bdf_simulation_restored_mid_run_continues_bit_for_bit() {
    let spec = shipped("projectile");
    for method in ["bdf2", "bdf5"] {
        let mut sim = simulation(&spec, method, 1e-6);
        sim.advance_to(0.0021234567).unwrap();
        let bytes = bincode::serde::encode_to_vec(&sim, bincode::config::standard()).unwrap();
        sim.advance_to(0.005).unwrap();
        let (mut decoded, _): (plenum::simulation::Simulation, usize) =
            bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).unwrap();
        decoded.advance_to(0.005).unwrap();
        println!(
            "{method}: snapshot {} bytes; v at 5 ms: original {:?}, decoded {:?}",
            bytes.len(),
            sim.piston_state(0).1,
            decoded.piston_state(0).1
        );
        assert_eq!(bits(&decoded.y, decoded.t_s), bits(&sim.y, sim.t_s));
    }
}

// ---------------------------------------------------------------------------------------------
// An independent Rust BDF: diffsol (Robinson et al., JOSS 2026; a variable-order BDF after
// Byrne & Hindmarsh and ode15s/SciPy, with NDF coefficients) integrates the same right-hand side.

const VENT: &str = r#"
# Cantera's "tank venting through a one-way valve to a reservoir".
[model]
name = "vent"
[gas]
species = "N2"
[solver]
method = "bdf"
step = 1e-3
t_end = 10.0
[[chamber]]
name = "tank"
volume = 1e-3
pressure = 5e5
temperature = 300.0
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 300.0
[[valve]]
name = "valve"
from = "tank"
to = "atm"
coefficient = 1e-9
one_way = true
"#;

/// diffsol's BDF on `Network::rhs` (Jacobian–vector products by forward differences) at the
/// given output times; states as rows of the returned vector per time.
fn diffsol_solution(net: &Network, rtol: f64, atol: f64, times: &[f64]) -> Vec<Vec<f64>> {
    use diffsol::{DenseMatrix, FaerLU, FaerMat, MatrixCommon, OdeBuilder, OdeSolverMethod};
    use std::cell::RefCell;
    let n = net.dimension();
    let y0 = net.initial_state();
    let cell = RefCell::new(net.clone());
    let scratch = RefCell::new((vec![0.0; n], vec![0.0; n]));
    let problem = OdeBuilder::<FaerMat<f64>>::new()
        .rtol(rtol)
        .atol(vec![atol; n])
        .rhs_implicit(
            |x: &[f64], _p: &[f64], t: f64, y: &mut [f64]| cell.borrow_mut().rhs(t, x, y),
            |x: &[f64], _p: &[f64], t: f64, v: &[f64], y: &mut [f64]| {
                let (xp, f0) = &mut *scratch.borrow_mut();
                let norm_x = x.iter().map(|a| a * a).sum::<f64>().sqrt();
                let norm_v = v.iter().map(|a| a * a).sum::<f64>().sqrt();
                if norm_v == 0.0 {
                    y.fill(0.0);
                    return;
                }
                let eps = f64::EPSILON.sqrt() * (1.0 + norm_x) / norm_v;
                for i in 0..x.len() {
                    xp[i] = x[i] + eps * v[i];
                }
                let mut net = cell.borrow_mut();
                net.rhs(t, x, f0);
                net.rhs(t, xp, y);
                for i in 0..y.len() {
                    y[i] = (y[i] - f0[i]) / eps;
                }
            },
        )
        .init(
            move |_p: &[f64], _t: f64, y: &mut [f64]| y.copy_from_slice(&y0),
            n,
        )
        .build()
        .expect("diffsol problem");
    let mut solver = problem.bdf::<FaerLU<f64>>().expect("diffsol BDF");
    let (ys, _) = solver.solve_dense(times).expect("diffsol solve");
    assert_eq!(ys.ncols(), times.len());
    (0..times.len())
        .map(|j| (0..n).map(|i| ys.get_index(i, j)).collect())
        .collect()
}

fn compare_with_diffsol(spec: &ModelFile, what: &str) {
    let (rtol, atol) = (1e-8, 1e-14);
    let mut net = plenum::model::build_network(spec);
    let n = net.dimension();
    let nc = net.chambers().len();
    let t_end = spec.solver.t_end;
    let times: Vec<f64> = (1..=20).map(|k| t_end * k as f64 / 20.0).collect();
    let peer = diffsol_solution(&net, rtol, atol, &times);
    // Worst relative difference in p, T, m, V of every chamber.
    let gas = net.gas.clone();
    let diff = |a: &[f64], b: &[f64]| -> f64 {
        let mut worst: f64 = 0.0;
        for i in 0..nc {
            let (a, b) = (&a[3 * i..3 * i + 3], &b[3 * i..3 * i + 3]);
            let pa = gas.pressure_pa(a[1], a[2]);
            let pb = gas.pressure_pa(b[1], b[2]);
            let ta = gas.temperature_k(a[0], a[1]);
            let tb = gas.temperature_k(b[0], b[1]);
            for (x, y) in [(pa, pb), (ta, tb), (a[0], b[0]), (a[2], b[2])] {
                worst = worst.max((x - y).abs() / y.abs());
            }
        }
        worst
    };
    let mut bdf = adaptive_bdf(n, rtol, atol);
    let mut run = Run::new(&net);
    let mut tight = adaptive_bdf(n, 1e-12, 1e-18);
    let mut reference = Run::new(&net);
    let (mut worst, mut err_plenum, mut err_diffsol): (f64, f64, f64) = (0.0, 0.0, 0.0);
    net.rhs_evaluations = 0;
    for (k, &t) in times.iter().enumerate() {
        run.advance(&mut bdf, &mut net, t, f64::INFINITY);
        let count = net.rhs_evaluations;
        reference.advance(&mut tight, &mut net, t, f64::INFINITY);
        net.rhs_evaluations = count;
        worst = worst.max(diff(&run.y, &peer[k]));
        err_plenum = err_plenum.max(diff(&run.y, &reference.y));
        err_diffsol = err_diffsol.max(diff(&peer[k], &reference.y));
    }
    println!(
        "{what}: plenum bdf ({} steps, {} rhs evaluations) vs diffsol BDF, both at rtol {rtol:e}: \
         worst relative difference in p, T, m, V over 20 output times {worst:e} = {:.2}·rtol; \
         against plenum bdf at rtol 1e-12: plenum {err_plenum:e} = {:.2}·rtol, diffsol \
         {err_diffsol:e} = {:.2}·rtol",
        run.steps,
        net.rhs_evaluations,
        worst / rtol,
        err_plenum / rtol,
        err_diffsol / rtol
    );
    // Each is a tolerance-controlled solution whose global error is a few rtol (Plenum's, with
    // CVODE's local error control per step, up to ~14·rtol on the two tanks over 170 steps);
    // they agree to the sum of the two.
    assert!(err_plenum < 20.0 * rtol, "{what}: plenum {err_plenum:e}");
    assert!(err_diffsol < 10.0 * rtol, "{what}: diffsol {err_diffsol:e}");
    assert!(worst < 20.0 * rtol, "{what}: {worst:e}");
}

#[test]
fn agrees_with_diffsol_on_two_tanks_joined_by_a_valve() {
    compare_with_diffsol(&shipped("two_tanks"), "two tanks + valve");
}

#[test]
fn agrees_with_diffsol_on_a_tank_venting_through_a_one_way_valve() {
    compare_with_diffsol(
        &parse(VENT, "vent.toml"),
        "tank → one-way valve → reservoir",
    );
}

#[test]
fn no_allocation_in_the_step_loop_after_warm_up() {
    // Stiff network, adaptive bdf: Jacobians, LU factorizations (faer, in place with a
    // preallocated MemStack), order changes, error-test failures, dense output.
    let spec = parse(common::STIFF, "stiff.toml");
    let mut net = plenum::model::build_network(&spec);
    let n = net.dimension();
    let mut bdf = adaptive_bdf(n, 1e-6, 1e-12);
    let mut run = Run::new(&net);
    run.advance(&mut bdf, &mut net, 1e-3, f64::INFINITY);
    let mut dense = vec![0.0; n];
    let before = bdf.stats;
    let allocations = allocations_in(|| {
        while run.t < 100.0 {
            let t0 = run.t;
            run.step(&mut bdf, &mut net, 100.0, f64::INFINITY).unwrap();
            bdf.dense(&mut net, t0, &run.y, 0.5 * (run.t - t0), &mut dense)
                .unwrap();
        }
    });
    let after = bdf.stats;
    println!(
        "bdf steady loop to 100 s: {} steps, {} Jacobians, {} factorizations, {} error-test and {} \
         convergence failures, orders used {:?}: {allocations} allocations",
        after.steps - before.steps,
        after.jacobian_evaluations - before.jacobian_evaluations,
        after.factorizations - before.factorizations,
        after.error_test_failures - before.error_test_failures,
        after.convergence_failures - before.convergence_failures,
        after.steps_at_order
    );
    assert_eq!(allocations, 0);
}
