//! Verification of the BDF integrators (`bdf`, `bdf1`..`bdf5`): order of accuracy on
//! BlasterSim's exact solution, tolerance proportionality, stiffness against an explicit method,
//! agreement with an independent Rust BDF (`diffsol`), column grouping of the Jacobian, and a
//! bit-exact restore. Every asserted figure is printed.

mod common;

use common::*;
use plenum::integrators::bdf::Bdf;
use plenum::integrators::{Integrator, Method, SolverError};
use plenum::model::ModelFile;
use plenum::network::Network;
use plenum::ode::OdeSystem;

/// Eq. 3.8 of BlasterSim's verification (see tests/verification_projectile.rs).
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

/// The gentler air gun of tests/verification_projectile.rs (3 bar, x0 = 0.3 m, exit at 0.5 m,
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

/// Adaptive `bdf` on the air gun to the exit (located on the dense output by bisection of
/// x − x_exit); returns the exit-velocity error against eq. 3.8 and the step count.
fn adaptive_exit_error(spec: &ModelFile, rtol: f64) -> (f64, f64, u64) {
    let mut net = plenum::model::build_network(spec);
    let n = net.dimension();
    let mut bdf = adaptive_bdf(n, rtol, rtol * 1e-8);
    let mut run = Run::new(&net);
    let xe = spec.piston[0].x_exit.unwrap();
    let xo = net.layout.piston_offset;
    let mut dense = vec![0.0; n];
    loop {
        let (t0, y0) = (run.t, run.y.clone());
        let h = bdf
            .attempt(&mut net, run.t, &run.y, 1.0, &mut run.inc)
            .unwrap();
        if y0[xo] + run.inc[xo] >= xe {
            let (mut a, mut b) = (0.0, h);
            for _ in 0..200 {
                let c = 0.5 * (a + b);
                if c <= a || c >= b {
                    break;
                }
                bdf.dense(&mut net, t0, &y0, c, &mut dense).unwrap();
                if y0[xo] + dense[xo] >= xe {
                    b = c;
                } else {
                    a = c;
                }
            }
            bdf.dense(&mut net, t0, &y0, b, &mut dense).unwrap();
            let (x, v) = (y0[xo] + dense[xo], y0[xo + 1] + dense[xo + 1]);
            let exact = exact_velocity(spec, x);
            return ((v - exact).abs(), exact, run.steps);
        }
        run.add();
        run.t = t0 + h;
        bdf.commit(&mut net, run.t, &run.y);
        run.steps += 1;
    }
}

#[test]
fn adaptive_bdf_error_is_proportional_to_rtol() {
    let spec = shipped("projectile");
    let rtols = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9];
    let mut errs = Vec::new();
    let mut v_exit = 0.0;
    for &rtol in &rtols {
        let (e, v, steps) = adaptive_exit_error(&spec, rtol);
        v_exit = v;
        println!(
            "bdf rtol {rtol:e}: exit-velocity error {e:e} m/s = {:.3}·rtol·|v| ({steps} steps)",
            e / (rtol * v)
        );
        errs.push(e);
    }
    let slope = observed_order(&rtols, &errs);
    println!("bdf: slope of log(error) against log(rtol) over five decades: {slope:.3}");
    assert!((0.8..=1.2).contains(&slope), "slope {slope}");
    for (&r, &e) in rtols.iter().zip(&errs) {
        assert!(e < 20.0 * r * v_exit, "rtol {r:e}: error {e:e}");
    }
}

// ---------------------------------------------------------------------------------------------
// Stiffness.

const STIFF: &str = r#"
# A 1 m³ tank at 3 bar empties into the atmosphere through a 1 cm³ chamber between two equal
# 10 mm² orifices: the chamber's pressure relaxes in ~1e-4 s, the tank's in ~1e3 s.
[model]
name = "stiff"
[gas]
species = "air"
[solver]
method = "bdf"
step = 1e-3
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

#[test]
fn stiff_network_bdf_needs_under_a_hundredth_of_the_explicit_work() {
    let spec = parse(STIFF, "stiff.toml");
    let t_end = spec.solver.t_end;
    let mut net = plenum::model::build_network(&spec);
    let n = net.dimension();
    let nc = net.chambers.len();

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
    println!(
        "1/|∂U̇/∂U| at t = 0: tank {:.3e} s, tiny chamber {:.3e} s ({:.1} decades)",
        taus[0],
        taus[1],
        (taus[0] / taus[1]).log10()
    );

    // Tight reference.
    let mut reference = Run::new(&net);
    let mut b = adaptive_bdf(n, 1e-11, 1e-16);
    reference.advance(&mut b, &mut net, t_end, f64::INFINITY);

    // BDF at rtol 1e-6.
    net.rhs_evaluations = 0;
    let mut run = Run::new(&net);
    let mut b = adaptive_bdf(n, 1e-6, 1e-12);
    run.advance(&mut b, &mut net, t_end, f64::INFINITY);
    let bdf_evals = net.rhs_evaluations;
    let bdf_err = rel_diff(&run.y, &reference.y, nc);
    println!(
        "bdf rtol 1e-6: {} steps, {bdf_evals} rhs evaluations ({} for Jacobians, {} Jacobians, {} LU), \
         max relative error {bdf_err:e}",
        run.steps,
        b.stats.jacobian_rhs_evaluations,
        b.stats.jacobian_evaluations,
        b.stats.factorizations
    );

    // The explicit method.
    let (name, explicit_evals, explicit_err) = if let Some(mut m) = Method::by_name("dopri5", n) {
        net.rhs_evaluations = 0;
        let mut run = Run::new(&net);
        run.advance(&mut m, &mut net, t_end, f64::INFINITY);
        (
            "dopri5 (its default tolerances)".to_string(),
            net.rhs_evaluations,
            rel_diff(&run.y, &reference.y, nc),
        )
    } else {
        // RK4 at the largest stable step of the list (stable: 1 s of run stays within 1e-6 of
        // the reference there).
        let mut short_ref = Run::new(&net);
        let mut b = adaptive_bdf(n, 1e-11, 1e-16);
        short_ref.advance(&mut b, &mut net, 1.0, f64::INFINITY);
        let mut chosen = None;
        for h in [2e-3, 1.4e-3, 1e-3, 7e-4, 5e-4, 3.5e-4, 2.5e-4] {
            let mut m = Method::by_name("rk4", n).unwrap();
            let mut run = Run::new(&net);
            let ok = run.try_advance(&mut m, &mut net, 1.0, h).is_ok();
            let e = rel_diff(&run.y, &short_ref.y, nc);
            let stable = ok && run.y.iter().all(|v| v.is_finite()) && e < 1e-6;
            println!(
                "rk4 h = {h:e} s over 1 s: relative error {e:e} ({})",
                if stable { "stable" } else { "unstable" }
            );
            if stable {
                chosen = Some(h);
                break;
            }
        }
        let h = chosen.expect("a stable rk4 step");
        let mut m = Method::by_name("rk4", n).unwrap();
        net.rhs_evaluations = 0;
        let mut run = Run::new(&net);
        run.advance(&mut m, &mut net, t_end, h);
        (
            format!("rk4 at its largest stable step {h:e} s (dopri5 not available)"),
            net.rhs_evaluations,
            rel_diff(&run.y, &reference.y, nc),
        )
    };
    println!("{name}: {explicit_evals} rhs evaluations, max relative error {explicit_err:e}");
    let ratio = explicit_evals as f64 / bdf_evals as f64;
    println!("explicit / bdf right-hand-side evaluations: {ratio:.1} (must exceed 100)");
    assert!(bdf_err < 1e-4, "bdf error {bdf_err:e}");
    assert!(explicit_err < 1e-4, "explicit error {explicit_err:e}");
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
    // the two end chambers also share the accumulator rows (both vent into reservoirs): +3.
    assert!(colors <= 12, "{colors} groups");

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
