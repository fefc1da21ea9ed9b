//! No heap allocation in the hot path: a counting global allocator (this test binary's own)
//! counts the allocations of the calling thread while the network's right-hand side, one
//! fixed-step integrator step (attempt + commit) and the driver's step loop
//! (`Simulation::advance_to`) run, after a warm-up that sizes every scratch buffer. The truth
//! is the allocator itself: zero calls to `alloc`/`realloc` on this thread.

use crate::common;

use plenum::integrators::Integrator;
use plenum::model::{ModelFile, build_simulation, load_path};
use plenum::ode::OdeSystem;
use plenum::simulation::Simulation;

use crate::counting_alloc::allocations_in;

const MODELS: [&str; 3] = ["projectile", "blowdown", "two_tanks"];
const FIXED_STEP_METHODS: [&str; 11] = [
    "euler", "rk4", "ab2", "ab3", "ab4", "ab5", "bdf1", "bdf2", "bdf3", "bdf4", "bdf5",
];

fn shipped(name: &str) -> ModelFile {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("models/{name}.toml"));
    load_path(&path, &[])
        .unwrap_or_else(|e| panic!("models/{name}.toml: {e:?}"))
        .spec
}

fn simulation(spec: &ModelFile, method: &str) -> Simulation {
    let mut spec = spec.clone();
    spec.solver.method = method.to_string();
    build_simulation(&spec, None).expect("builds")
}

/// The model's own fixed step.
fn step_of(spec: &ModelFile) -> f64 {
    spec.solver.step.expect("shipped models have a fixed step")
}

/// The counter sees allocations (so a zero below means none happened, not a blind counter).
#[test]
fn the_counter_counts() {
    let count = allocations_in(|| {
        let v: Vec<u64> = std::hint::black_box(vec![7; 16]);
        std::hint::black_box(&v);
    });
    println!("one Vec of 16 values: {count} allocation(s) counted");
    assert_eq!(count, 1);
}

#[test]
fn network_rhs_allocates_nothing() {
    for model in MODELS {
        let spec = shipped(model);
        let mut sim = simulation(&spec, "rk4");
        let y = sim.y.clone();
        let mut dydt = vec![0.0; y.len()];
        sim.network.rhs(0.0, &y, &mut dydt); // warm-up
        let n = 1000;
        let count = allocations_in(|| {
            for k in 0..n {
                sim.network.rhs(k as f64 * 1e-6, &y, &mut dydt);
            }
        });
        println!(
            "{model}: {count} allocations in {n} right-hand sides ({} states)",
            y.len()
        );
        assert_eq!(count, 0, "{model}: the right-hand side allocates");
        assert!(dydt.iter().all(|v| v.is_finite()));
    }
}

/// One integrator step as the driver takes it: `attempt` into an increment, y += Δy, `commit`.
#[test]
fn fixed_step_integrator_steps_allocate_nothing_after_warm_up() {
    for model in MODELS {
        let spec = shipped(model);
        let h = step_of(&spec);
        for method in FIXED_STEP_METHODS {
            let mut sim = simulation(&spec, method);
            let mut y = sim.y.clone();
            let mut inc = vec![0.0; y.len()];
            let mut t = sim.t_s;
            let mut step = |sim: &mut Simulation, y: &mut Vec<f64>, t: &mut f64| {
                let taken = sim
                    .integrator
                    .attempt(&mut sim.network, *t, y, h, &mut inc)
                    .expect("step");
                for (yi, di) in y.iter_mut().zip(&inc) {
                    *yi += di;
                }
                *t += taken;
                sim.integrator.commit(&mut sim.network, *t, y);
            };
            // Warm-up: past every multistep start-up step (the highest order is 5).
            for _ in 0..8 {
                step(&mut sim, &mut y, &mut t);
            }
            let n = 20;
            let count = allocations_in(|| {
                for _ in 0..n {
                    step(&mut sim, &mut y, &mut t);
                }
            });
            println!("{model} {method:>5}: {count} allocations in {n} steps of {h:e} s");
            assert_eq!(count, 0, "{model} {method}: a step allocates");
            assert!(y.iter().all(|v| v.is_finite()));
        }
    }
}

/// The driver's loop (`advance_to` over several fixed steps: checks, breakpoints, events, the
/// Kahan-compensated update) allocates nothing either.
#[test]
fn driver_step_loop_allocates_nothing_after_warm_up() {
    for model in MODELS {
        let spec = shipped(model);
        let h = step_of(&spec);
        for method in FIXED_STEP_METHODS {
            let mut sim = simulation(&spec, method);
            let t0 = sim.t_s;
            sim.advance_to(t0 + 8.0 * h).expect("warm-up");
            let n = 20;
            let target = sim.t_s + n as f64 * h;
            let count = allocations_in(|| {
                sim.advance_to(target).expect("steps");
            });
            println!(
                "{model} {method:>5}: {count} allocations in advance_to over {n} steps ({} steps so far)",
                sim.stats.steps
            );
            assert_eq!(
                count, 0,
                "{model} {method}: the driver's step loop allocates"
            );
        }
    }
}

/// Model Exchange's integration loop as a master runs it, through the C ABI (fmi2SetTime,
/// fmi2SetContinuousStates, fmi2GetDerivatives, fmi2GetEventIndicators,
/// fmi2CompletedIntegratorStep, and fmi2GetReal of every Real variable, `der(...)` included;
/// forward Euler at the model's step) allocates nothing after the first step, on every
/// shipped model (the projectile stops short of its exit, an event).
#[test]
fn model_exchange_step_loop_allocates_nothing_after_warm_up() {
    use fmi_sys::fmi2::*;
    use plenum::fmi2::me::*;
    use plenum::fmi2::*;
    use std::ffi::CString;
    const OK: fmi2Status = fmi2Status_fmi2OK;
    for model in MODELS {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("models/{model}.toml"));
        let text = std::fs::read_to_string(&path).unwrap();
        let dir =
            std::env::temp_dir().join(format!("plenum-no-alloc-me-{}-{model}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("model.toml"), &text).unwrap();
        let description = plenum::cosim::describe(&load_path(&path, &[]).unwrap());
        let vrs: Vec<u32> = (0..description.variables.len() as u32).collect();
        let mut values = vec![0.0; vrs.len()];
        let guid = CString::new(plenum::cosim::guid_of(text.as_bytes())).unwrap();
        let uri = CString::new(format!("file://{}", dir.display())).unwrap();
        let callbacks = fmi2CallbackFunctions {
            logger: None,
            allocateMemory: None,
            freeMemory: None,
            stepFinished: None,
            componentEnvironment: std::ptr::null_mut(),
        };
        let h = step_of(&shipped(model));
        let n = description.states.len();
        let k = description.event_indicators;
        let (mut x, mut dx, mut z) = (vec![0.0; n], vec![0.0; n], vec![0.0; k]);
        let mut t = 0.0;
        unsafe {
            let c = fmi2Instantiate(
                c"no-alloc-me".as_ptr(),
                fmi2Type_fmi2ModelExchange,
                guid.as_ptr(),
                uri.as_ptr(),
                &callbacks,
                0,
                0,
            );
            assert!(!c.is_null());
            assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
            assert_eq!(fmi2EnterInitializationMode(c), OK);
            assert_eq!(fmi2ExitInitializationMode(c), OK);
            let mut info: fmi2EventInfo = std::mem::zeroed();
            assert_eq!(fmi2NewDiscreteStates(c, &mut info), OK);
            assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
            let mut step = |t: &mut f64| {
                assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), n), OK);
                assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), n), OK);
                for (a, b) in x.iter_mut().zip(&dx) {
                    *a += h * b;
                }
                *t += h;
                assert_eq!(fmi2SetTime(c, *t), OK);
                assert_eq!(fmi2SetContinuousStates(c, x.as_ptr(), n), OK);
                assert_eq!(fmi2GetEventIndicators(c, z.as_mut_ptr(), k), OK);
                let (mut enter, mut terminate) = (0, 0);
                assert_eq!(
                    fmi2CompletedIntegratorStep(c, 1, &mut enter, &mut terminate),
                    OK
                );
                assert!(enter == 0 && terminate == 0);
                assert_eq!(
                    fmi2GetReal(c, vrs.as_ptr(), vrs.len(), values.as_mut_ptr()),
                    OK
                );
            };
            step(&mut t);
            let steps = 20;
            let count = allocations_in(|| {
                for _ in 0..steps {
                    step(&mut t);
                }
            });
            println!(
                "{model}: {count} allocations in {steps} Model Exchange steps of {h} s through \
                 the C ABI ({n} states, {k} event indicators, fmi2GetReal of {} values)",
                vrs.len()
            );
            assert_eq!(count, 0, "{model}: Model Exchange's step loop allocates");
            fmi2FreeInstance(c);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// fmi2GetFMUstate into an existing handle and fmi2SetFMUstate, through the C ABI on the
/// projectile model (rk4): no allocation after the handle exists; and its serialized state
/// fits in 1 KiB.
#[test]
fn fmu_state_get_and_set_into_an_existing_handle_allocate_nothing() {
    fmu_state_get_set("rk4");
}

/// The same for every method with a history (multistep, BDF fixed and adaptive, DP5, auto,
/// FONSim's backward Euler): the history is copied into the handle's storage and back.
#[test]
fn fmu_state_get_and_set_allocate_nothing_for_every_method() {
    for method in [
        "euler",
        "ab3",
        "ab5",
        "bdf1",
        "bdf3",
        "bdf",
        "dopri5",
        "auto",
        "backward-euler",
    ] {
        fmu_state_get_set(method);
    }
}

/// Get + set state (existing handle) and fmi2DoStep + fmi2GetReal(10) through the C ABI on
/// the projectile with `method`: 0 allocations after the warm-up; a restored state reads the
/// same outputs as when taken and continues the same way, bit for bit, every time.
fn fmu_state_get_set(method: &str) {
    use fmi_sys::fmi2::*;
    use plenum::fmi2::*;
    use std::ffi::CString;
    const OK: fmi2Status = fmi2Status_fmi2OK;

    let text = include_str!("../../models/projectile.toml")
        .replace("method = \"rk4\"", &format!("method = \"{method}\""));
    let text = text.as_str();
    let dir = std::env::temp_dir().join(format!("plenum-no-alloc-{}-{method}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.toml"), text).unwrap();
    let guid = CString::new(plenum::cosim::guid_of(text.as_bytes())).unwrap();
    let uri = CString::new(format!("file://{}", dir.display())).unwrap();
    let callbacks = fmi2CallbackFunctions {
        logger: None,
        allocateMemory: None,
        freeMemory: None,
        stepFinished: None,
        componentEnvironment: std::ptr::null_mut(),
    };
    unsafe {
        let c = fmi2Instantiate(
            c"no-alloc".as_ptr(),
            fmi2Type_fmi2CoSimulation,
            guid.as_ptr(),
            uri.as_ptr(),
            &callbacks,
            0,
            0,
        );
        assert!(!c.is_null());
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        let h = 1e-5;
        let mut t = 0.0;
        for _ in 0..3 {
            assert_eq!(fmi2DoStep(c, t, h, 1), OK);
            t += h;
        }
        let mut s: fmi2FMUstate = std::ptr::null_mut();
        assert_eq!(fmi2GetFMUstate(c, &mut s), OK);
        let handle = s;
        let t_taken = t;
        let vrs: Vec<u32> = (0..10).collect();
        let mut v = [0.0; 10];
        let mut before = [0.0; 10];
        assert_eq!(fmi2GetReal(c, vrs.as_ptr(), 10, before.as_mut_ptr()), OK);
        let n = 100;
        let count = allocations_in(|| {
            for _ in 0..n {
                assert_eq!(fmi2GetFMUstate(c, &mut s), OK);
                assert_eq!(fmi2SetFMUstate(c, s), OK);
            }
        });
        println!(
            "{method:>6}: {count} allocations in {n} fmi2GetFMUstate (existing handle) + \
             fmi2SetFMUstate"
        );
        assert_eq!(s, handle, "the handle was replaced");
        assert_eq!(count, 0, "{method}: get + set state allocates");
        // The steps and reads of a co-simulation loop allocate nothing either.
        let count = allocations_in(|| {
            for _ in 0..n {
                assert_eq!(fmi2DoStep(c, t, h, 1), OK);
                t += h;
                assert_eq!(fmi2GetReal(c, vrs.as_ptr(), 10, v.as_mut_ptr()), OK);
            }
        });
        println!("{method:>6}: {count} allocations in {n} fmi2DoStep + fmi2GetReal(10)");
        assert_eq!(count, 0, "{method}: fmi2DoStep + fmi2GetReal allocate");
        // The restored state is the stored one: the same outputs as when it was taken, and
        // the same continuation each time it is restored (into the instance that ran on).
        let mut after = [[0.0; 10]; 2];
        for a in &mut after {
            assert_eq!(fmi2SetFMUstate(c, s), OK);
            assert_eq!(fmi2GetReal(c, vrs.as_ptr(), 10, v.as_mut_ptr()), OK);
            assert_eq!(v.map(f64::to_bits), before.map(f64::to_bits));
            let mut t = t_taken;
            let count = allocations_in(|| {
                for _ in 0..10 {
                    assert_eq!(fmi2DoStep(c, t, h, 1), OK);
                    t += h;
                }
            });
            assert_eq!(count, 0, "{method}: steps after a restore allocate");
            assert_eq!(fmi2GetReal(c, vrs.as_ptr(), 10, a.as_mut_ptr()), OK);
        }
        println!(
            "{method:>6}: restored twice, 10 steps each: outputs 1, 2 = {:e}, {:e} both times",
            after[0][1], after[0][2]
        );
        assert_eq!(after[0].map(f64::to_bits), after[1].map(f64::to_bits));
        assert_eq!(fmi2SetFMUstate(c, s), OK);

        let mut size = 0usize;
        assert_eq!(fmi2SerializedFMUstateSize(c, s, &mut size), OK);
        println!("{method:>6}: serialized projectile state: {size} bytes");
        if method == "rk4" {
            assert!(size <= 1024, "{size} bytes (limit 1024)");
        }
        assert_eq!(fmi2FreeFMUstate(c, &mut s), OK);
        fmi2FreeInstance(c);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A chain of `m` chambers joined by orifices, the last venting to the atmosphere, with a
/// piston on the first (so the accumulator rows are in the pattern), integrated by `method`.
fn chain(m: usize, method: &str) -> Simulation {
    let mut s = format!(
        "[model]\nname = \"chain\"\n[gas]\nspecies = \"air\"\n[solver]\nmethod = \"{method}\"\n\
         step = 1e-6\nt_end = 1.0\n"
    );
    s += &common::chain_components(m);
    s += "[[piston]]\nname = \"p\"\nbehind = \"c0\"\nahead = \"atm\"\narea = 1e-4\nmass = 0.1\n\
          x0 = 0.05\nspring_stiffness = 1000.0\n";
    let spec = plenum::model::parse_str(&s, "chain.toml", &[])
        .expect("chain model")
        .spec;
    build_simulation(&spec, None).expect("builds")
}

/// The BDF's sparse path (Jacobian over the pattern, faer's sparse LU of M = I − γJ): a chain
/// of 12 chambers (40 states), fixed-order `bdf2` and adaptive `bdf`, the sparse LU forced
/// and what `Auto` chooses (the band LU in reverse Cuthill–McKee order: the piston's states
/// after the chambers make the own order's band wide): 0 allocations in `advance_to` after a warm-up, over a window long
/// enough to hold new Jacobians and factorizations (counted and printed, so the zero covers
/// them).
#[test]
fn sparse_bdf_steps_allocate_nothing_after_warm_up() {
    use plenum::integrators::Method;
    use plenum::integrators::bdf::LinearSolver;
    for method in ["bdf2", "bdf"] {
        for linear in [LinearSolver::Sparse, LinearSolver::Auto] {
            let mut sim = chain(12, method);
            let n = sim.y.len();
            match &mut sim.integrator {
                Method::Bdf(b) => b.set_linear_solver(linear),
                _ => unreachable!("bdf"),
            }
            // Fixed: 1 µs steps; adaptive: its own steps over the same span.
            sim.advance_to(1e-5).expect("warm-up");
            let before = match &sim.integrator {
                Method::Bdf(b) => (
                    b.stats,
                    match linear {
                        LinearSolver::Auto => b.uses_reordered_band_lu(),
                        _ => b.uses_sparse_lu(),
                    },
                ),
                _ => unreachable!(),
            };
            // Fixed: 190 steps (MSBJ = 50: new Jacobians); adaptive: to 1 s, its steps grow
            // through the blowdown of the chain (new Jacobians, order changes).
            let end = if method == "bdf" { 1.0 } else { 2e-4 };
            let count = allocations_in(|| {
                sim.advance_to(end).expect("steps");
            });
            let after = match &sim.integrator {
                Method::Bdf(b) => b.stats,
                _ => unreachable!(),
            };
            println!(
                "chain {n} states, {method:>4} {linear:?} (sparse LU, or reordered band for Auto: {}): \
                 {count} allocations in \
                 {} steps with {} Jacobians and {} factorizations",
                before.1,
                after.steps - before.0.steps,
                after.jacobian_evaluations - before.0.jacobian_evaluations,
                after.factorizations - before.0.factorizations
            );
            assert!(
                before.1,
                "{method} {linear:?}: the sparse (reordered band) path was not taken"
            );
            assert!(
                after.jacobian_evaluations > before.0.jacobian_evaluations
                    && after.factorizations > before.0.factorizations,
                "{method} {linear:?}: no Jacobian or factorization in the window"
            );
            assert_eq!(count, 0, "{method} {linear:?}: a sparse BDF step allocates");
        }
    }
}

/// The catalogue curves' laws and their breakpoint events (an orifice's `flow_table`, a
/// directional valve's `opening_table`, a regulator's, a flow control's and a directional
/// valve's `flow_table`): the right-hand side and the driver's step loop with
/// its event search allocate nothing after the warm-up.
#[test]
fn curve_laws_and_their_events_allocate_nothing() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models/flow_table.toml");
    let mut spec = load_path(&path, &[]).expect("loads").spec;
    spec.solver.method = "rk4".to_string();
    spec.solver.step = Some(1e-4);
    let mut sim = build_simulation(&spec, None).expect("builds");
    let y = sim.y.clone();
    let mut dydt = vec![0.0; y.len()];
    sim.network.rhs(0.0, &y, &mut dydt);
    let rhs = allocations_in(|| {
        for k in 0..1000 {
            sim.network.rhs(k as f64 * 1e-6, &y, &mut dydt);
        }
    });
    sim.advance_to(8e-4).expect("warm-up");
    let steps = allocations_in(|| {
        sim.advance_to(1.0).expect("steps");
    });
    println!(
        "{rhs} allocations in 1000 right-hand sides, {steps} in advance_to over {} steps with \
         {} events",
        sim.stats.steps, sim.stats.events
    );
    assert!(sim.stats.events > 0, "the run crosses rows of its curves");
    assert_eq!((rhs, steps), (0, 0));
}
