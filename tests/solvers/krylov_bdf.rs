//! The BDF's Krylov path (restarted GMRES on M = I − γJ, ILU(0) preconditioner, CVODE's linear
//! tolerance) on 2-D grids of chambers joined by orifices: against the sparse-LU BDF at the
//! same tolerance and a tight-tolerance reference, mass conservation to round-off on a closed
//! and on a vented grid, zero allocations in the step loop, bit-for-bit continuation after a
//! bincode round trip, a GMRES that cannot converge failing the step cleanly, `Auto` taking it
//! where a direct LU fills, and the model file's `linear_solver` key.

use std::fmt::Write as _;

use plenum::integrators::Method;
use plenum::integrators::bdf::{Bdf, KRYLOV_MIN_FILL, KRYLOV_MIN_STATES, LinearSolver};
use plenum::integrators::krylov::GmresLimits;
use plenum::model::{ModelFile, build_simulation, parse_str};
use plenum::simulation::Simulation;

use crate::counting_alloc::allocations_in;

/// side × side chambers (1 L, 2–3 bar in a pattern) joined to their right and lower
/// neighbours by orifices; `vented`: a piston on the first chamber and an orifice from the
/// last one to the atmosphere (so the reservoir's accumulators and a piston are in the
/// pattern, as in the scale bench's grids).
fn grid_text(side: usize, method: &str, vented: bool, extra_solver: &str) -> String {
    let mut s = format!(
        "[model]\nname = \"grid\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"{method}\"\n\
         step = 1e-6\nt_end = 1.0\n{extra_solver}\n"
    );
    let name = |r: usize, c: usize| format!("g{r}_{c}");
    for r in 0..side {
        for c in 0..side {
            let p = 2e5 + 1e5 * ((r * side + c) % 7) as f64 / 7.0;
            let _ = write!(
                s,
                "[[chamber]]\nname = \"{}\"\nvolume = 1e-3\npressure = {p:?}\ntemperature = 300.0\n",
                name(r, c)
            );
        }
    }
    let mut k = 0;
    for r in 0..side {
        for c in 0..side {
            for (r2, c2) in [(r, c + 1), (r + 1, c)] {
                if r2 < side && c2 < side {
                    let _ = write!(
                        s,
                        "[[orifice]]\nname = \"o{k}\"\nfrom = \"{}\"\nto = \"{}\"\narea = 2e-5\n",
                        name(r, c),
                        name(r2, c2)
                    );
                    k += 1;
                }
            }
        }
    }
    if vented {
        let _ = write!(
            s,
            "[[reservoir]]\nname = \"atm\"\npressure = 101325.0\ntemperature = 300.0\n\
             [[orifice]]\nname = \"vent\"\nfrom = \"{}\"\nto = \"atm\"\narea = 2e-5\n\
             [[piston]]\nname = \"p0\"\nbehind = \"g0_0\"\nahead = \"atm\"\narea = 1e-4\n\
             mass = 0.1\nx0 = 0.05\nspring_stiffness = 1000.0\n",
            name(side - 1, side - 1)
        );
    }
    s
}

fn grid(side: usize, vented: bool) -> ModelFile {
    parse_str(&grid_text(side, "bdf", vented, ""), "grid.toml", &[])
        .expect("grid model")
        .spec
}

fn bdf_sim(spec: &ModelFile, linear: LinearSolver, rtol: f64) -> Simulation {
    let mut spec = spec.clone();
    spec.solver.rtol = Some(rtol);
    spec.solver.atol = Some(1e-12);
    let mut sim = build_simulation(&spec, None).expect("builds");
    sim.integrator.set_linear_solver(linear);
    sim
}

fn bdf(sim: &Simulation) -> &Bdf {
    match &sim.integrator {
        Method::Bdf(b) => b,
        _ => unreachable!("bdf"),
    }
}

/// Largest relative difference of any chamber pressure between two runs, in units of rtol.
fn pressure_difference(a: &Simulation, b: &Simulation, rtol: f64) -> f64 {
    (0..a.network.chambers().len())
        .map(|i| {
            let (pa, pb) = (a.chamber_state(i)[0], b.chamber_state(i)[0]);
            (pa - pb).abs() / pb.abs() / rtol
        })
        .fold(0.0, f64::max)
}

#[test]
fn krylov_reaches_the_sparse_lu_state_and_the_reference_on_a_grid() {
    let (rtol, t_end) = (1e-6, 0.5);
    let spec = grid(12, true);
    let mut reference = bdf_sim(&spec, LinearSolver::Sparse, 1e-11);
    reference.advance_to(t_end).expect("reference");
    let mut sparse = bdf_sim(&spec, LinearSolver::Sparse, rtol);
    sparse.advance_to(t_end).expect("sparse");
    let mut krylov = bdf_sim(&spec, LinearSolver::Krylov, rtol);
    krylov.advance_to(t_end).expect("krylov");
    assert!(bdf(&krylov).uses_krylov() && !bdf(&sparse).uses_krylov());
    let (ks, ss) = (bdf(&krylov).stats, bdf(&sparse).stats);
    let kst = bdf(&krylov).krylov_stats().expect("krylov path");
    let n = krylov.y.len();
    let d_ks = pressure_difference(&krylov, &sparse, rtol);
    let e_k = pressure_difference(&krylov, &reference, rtol);
    let e_s = pressure_difference(&sparse, &reference, rtol);
    println!(
        "grid 12×12, {n} states, bdf rtol {rtol} to {t_end} s:\n  sparse LU: {} steps, {} Newton \
         iterations, {} convergence failures\n  krylov:    {} steps, {} Newton iterations, {} \
         convergence failures; GMRES {} solves, {} iterations ({:.2} per solve, at most {}), {} \
         failed, {} ILU(0) setups\n  largest chamber-pressure difference in units of rtol: \
         |krylov − sparse| {d_ks:.3}; against the rtol-1e-11 run: krylov {e_k:.3}, sparse \
         {e_s:.3}",
        ss.steps,
        ss.newton_iterations,
        ss.convergence_failures,
        ks.steps,
        ks.newton_iterations,
        ks.convergence_failures,
        kst.solves,
        kst.iterations,
        kst.iterations as f64 / kst.solves.max(1) as f64,
        kst.max_iterations,
        kst.failures,
        kst.preconditioner_setups
    );
    // Both are runs at rtol 1e-6 with their own step sequences: the Krylov run must be as
    // accurate as the direct one (global errors of the same size).
    assert!(kst.solves > 0 && kst.iterations > 0);
    assert!(
        e_k <= 2.0 * e_s.max(1.0),
        "krylov error {e_k} against sparse {e_s}"
    );
    assert!(d_ks <= 2.0 * e_s.max(1.0), "krylov − sparse {d_ks}");
    // The step count follows the error test, not the linear solver.
    let ratio = ks.steps as f64 / ss.steps as f64;
    assert!(
        (0.8..=1.25).contains(&ratio),
        "steps {} vs {}",
        ks.steps,
        ss.steps
    );
}

#[test]
fn krylov_conserves_mass_to_round_off_on_closed_and_vented_grids() {
    // Σ m_i + mass_left is invariant (1ᵀf = 0 over those states, whatever y). Each direct
    // Newton solve keeps it to round-off on a closed grid (1ᵀ over the mass rows of
    // M = I − γJ is 1ᵀ). GMRES stops at a residual r with ‖r‖_WRMS ≤ 0.05·tq₄, and without a
    // correction Σ_S r would stay in the sum each Newton iteration (~1e-11 relative over this
    // run); the Krylov path corrects every solution onto Σ_S x = Σ_S b, so the sum moves only
    // by round-off: ≤ 10ε per step here, as the direct path's.
    let (rtol, t_end) = (1e-6, 0.5);
    for vented in [false, true] {
        let spec = grid(10, vented);
        for linear in [LinearSolver::Sparse, LinearSolver::Krylov] {
            let mut sim = bdf_sim(&spec, linear, rtol);
            let m0 = sim.mass_total().value;
            sim.advance_to(t_end).expect("runs");
            let m1 = sim.mass_total().value;
            let st = bdf(&sim).stats;
            let drift = (m1 - m0).abs() / m0;
            let bound = 10.0 * f64::EPSILON * st.steps as f64;
            println!(
                "grid 10×10 (vented {vented}), {linear:?}: Σm + mass_left {m0:.15e} → {m1:.15e} \
                 kg, relative drift {drift:.3e} over {} steps ({} Newton iterations); bound \
                 10ε·steps = {bound:.1e}",
                st.steps, st.newton_iterations,
            );
            assert!(
                drift <= bound,
                "{linear:?}, vented {vented}: {drift} > {bound}"
            );
        }
    }
}

#[test]
fn krylov_steps_allocate_nothing_after_warm_up() {
    for (method, end) in [("bdf2", 2e-4), ("bdf", 0.5)] {
        let spec = parse_str(&grid_text(6, method, true, ""), "grid.toml", &[])
            .expect("grid")
            .spec;
        let mut sim = bdf_sim(&spec, LinearSolver::Krylov, 1e-6);
        sim.advance_to(1e-5).expect("warm-up");
        let before = bdf(&sim).stats;
        let k0 = bdf(&sim).krylov_stats().expect("krylov");
        let count = allocations_in(|| {
            sim.advance_to(end).expect("steps");
        });
        let after = bdf(&sim).stats;
        let k1 = bdf(&sim).krylov_stats().expect("krylov");
        println!(
            "grid 6×6 {method}: {count} allocations in {} steps, {} Jacobians, {} ILU(0) setups, \
             {} GMRES iterations",
            after.steps - before.steps,
            after.jacobian_evaluations - before.jacobian_evaluations,
            k1.preconditioner_setups - k0.preconditioner_setups,
            k1.iterations - k0.iterations
        );
        assert!(after.jacobian_evaluations > before.jacobian_evaluations);
        assert!(k1.preconditioner_setups > k0.preconditioner_setups);
        assert_eq!(count, 0, "{method}: a Krylov BDF step allocates");
    }
}

#[test]
fn a_krylov_run_restores_bit_for_bit() {
    let spec = grid(8, true);
    let mut sim = bdf_sim(&spec, LinearSolver::Krylov, 1e-6);
    sim.advance_to(0.0123456).expect("first part");
    let bytes = bincode::serde::encode_to_vec(&sim, bincode::config::standard()).unwrap();
    let (mut decoded, _): (Simulation, usize) =
        bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).unwrap();
    // The linear solver is this process's setting, not part of the state.
    decoded.integrator.set_linear_solver(LinearSolver::Krylov);
    sim.advance_to(0.3).expect("original");
    decoded.advance_to(0.3).expect("restored");
    let same = sim
        .y
        .iter()
        .zip(&decoded.y)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    println!(
        "grid 8×8 krylov: state {} bytes; {} vs {} steps after the restore; bit for bit {same}",
        bytes.len(),
        bdf(&sim).stats.steps,
        bdf(&decoded).stats.steps
    );
    assert!(bdf(&decoded).uses_krylov());
    assert!(same);
    assert_eq!(bdf(&sim).stats.steps, bdf(&decoded).stats.steps);
}

#[test]
fn a_gmres_that_cannot_converge_fails_steps_cleanly() {
    let spec = grid(8, true);
    let mut sim = bdf_sim(&spec, LinearSolver::Krylov, 1e-6);
    match &mut sim.integrator {
        Method::Bdf(b) => b.set_gmres_limits(GmresLimits {
            restart: 1,
            max_restarts: 0,
        }),
        _ => unreachable!(),
    }
    // One iteration can rarely meet the tolerance once the steps grow: each miss is a Newton
    // convergence failure (the step retried smaller), or the run ends with an error.
    let r = sim.advance_to(0.5);
    let st = bdf(&sim).stats;
    let k = bdf(&sim).krylov_stats().expect("krylov");
    println!(
        "restart 1, no restarts: {:?} at t = {} s; {} steps, {} convergence failures, GMRES {} \
         of {} solves failed",
        r.as_ref().map(|_| "ok").map_err(|e| e.to_string()),
        sim.t_s,
        st.steps,
        st.convergence_failures,
        k.failures,
        k.solves
    );
    assert!(k.failures > 0 && st.convergence_failures > 0);
    assert!(sim.y.iter().all(|v| v.is_finite()));
}

/// `Auto` takes the Krylov path on a grid whose direct LU fills (from `KRYLOV_MIN_STATES`
/// states), keeps a band LU on a chain of the same size (no fill) and a direct solve on a grid
/// below the threshold.
#[test]
fn auto_takes_krylov_where_a_direct_lu_fills() {
    let chain = {
        let mut s = String::from(
            "[model]\nname = \"chain\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"bdf\"\n\
             t_end = 1.0\n",
        );
        for i in 0..120 {
            let p = 2e5 + 1e5 * (i % 7) as f64 / 7.0;
            let _ = write!(
                s,
                "[[chamber]]\nname = \"c{i}\"\nvolume = 1e-3\npressure = {p:?}\ntemperature = 300.0\n"
            );
            if i > 0 {
                let _ = write!(
                    s,
                    "[[orifice]]\nname = \"o{i}\"\nfrom = \"c{}\"\nto = \"c{i}\"\narea = 2e-5\n",
                    i - 1
                );
            }
        }
        parse_str(&s, "chain.toml", &[]).expect("chain").spec
    };
    for (label, spec, krylov) in [
        ("grid 18×18", grid(18, true), true),
        ("grid 5×5", grid(5, true), false),
        ("chain of 120", chain, false),
    ] {
        let mut sim = bdf_sim(&spec, LinearSolver::Auto, 1e-6);
        let fill = Bdf::fill_ratio_of(&sim.network).expect("pattern");
        sim.advance_to(1e-4).expect("runs");
        println!(
            "{label}, Auto: {} states (threshold {KRYLOV_MIN_STATES}), fill ratio {fill:.2} \
             (threshold {KRYLOV_MIN_FILL}): krylov {}, sparse LU {}, band LU {}",
            sim.y.len(),
            bdf(&sim).uses_krylov(),
            bdf(&sim).uses_sparse_lu(),
            bdf(&sim).uses_band_lu()
        );
        assert_eq!(bdf(&sim).uses_krylov(), krylov, "{label}");
        assert_eq!(
            krylov,
            sim.y.len() >= KRYLOV_MIN_STATES && fill >= KRYLOV_MIN_FILL,
            "{label}"
        );
    }
}

#[test]
fn the_model_file_chooses_the_linear_solver() {
    for (key, krylov) in [("krylov", true), ("sparse", false), ("auto", false)] {
        let text = grid_text(4, "bdf", true, &format!("linear_solver = \"{key}\""));
        let spec = parse_str(&text, "grid.toml", &[]).expect("parses").spec;
        let mut sim = build_simulation(&spec, None).expect("builds");
        sim.advance_to(1e-3).expect("runs");
        println!(
            "linear_solver = {key}: krylov {}, sparse LU {}",
            bdf(&sim).uses_krylov(),
            bdf(&sim).uses_sparse_lu()
        );
        assert_eq!(bdf(&sim).uses_krylov(), krylov);
    }
    let text = grid_text(2, "bdf", false, "linear_solver = \"cg\"");
    let err = parse_str(&text, "grid.toml", &[]).expect_err("refused");
    let msg = format!("{err:?}");
    println!("linear_solver = \"cg\": {msg}");
    assert!(msg.contains("unknown linear_solver `cg`"));
}
