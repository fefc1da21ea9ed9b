//! FMI overhead: the exported fmi2 functions called as a master calls them (through the C ABI
//! entry points of the library, with a callbacks struct whose allocateMemory/freeMemory are the
//! C library's calloc/free), against the same work through the Rust API (`Simulation` and the
//! co-simulation `Instance`), on the projectile model (rk4, one tiny step of 1e-6 s per call).
//! The overhead of the ABI is the difference. Best of several repeats of a batch of calls.
//!
//! `cargo bench --bench fmi_overhead` (full), `-- --quick` (seconds, for CI: no time asserted).

use std::ffi::{CString, c_void};
use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use fmi_sys::fmi2::*;
use plenum::cosim::Instance;
use plenum::fmi2::*;

const OK: fmi2Status = fmi2Status_fmi2OK;
const H: f64 = 1e-6;

/// The projectile model, running on past the exit (no stop) so that batches of steps never
/// end the run, with the atmosphere's pressure as an input (for fmi2SetReal).
fn model_text() -> String {
    include_str!("../models/projectile.toml").replace("stop_on_exit = true", "stop_on_exit = false")
        + "\n[inputs]\nnames = [\"atm.pressure\"]\n"
}

unsafe extern "C" fn allocate(n: usize, size: usize) -> *mut c_void {
    unsafe { libc::calloc(n, size) }
}
unsafe extern "C" fn free(p: *mut c_void) {
    unsafe { libc::free(p) }
}

/// Best time per call, ns: `repeats` batches of `n` calls of `f`. `f(0)` starts each batch
/// (where the step benchmarks put the run back at its start, so that every batch times the same
/// part of the run: that call's reset is inside the timing, 1/n of it).
fn best_ns(repeats: usize, n: usize, mut f: impl FnMut(usize)) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..repeats {
        let t0 = Instant::now();
        for k in 0..n {
            f(k);
        }
        best = best.min(t0.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    best
}

struct Fmu {
    c: fmi2Component,
    t: f64,
    _callbacks: Box<fmi2CallbackFunctions>,
}

impl Fmu {
    fn new(dir: &std::path::Path, text: &str) -> Fmu {
        let guid = CString::new(plenum::cosim::guid_of(text.as_bytes())).unwrap();
        let uri = CString::new(format!("file://{}", dir.display())).unwrap();
        let callbacks = Box::new(fmi2CallbackFunctions {
            logger: None,
            allocateMemory: Some(allocate),
            freeMemory: Some(free),
            stepFinished: None,
            componentEnvironment: ptr::null_mut(),
        });
        unsafe {
            let c = fmi2Instantiate(
                c"bench".as_ptr(),
                fmi2Type_fmi2CoSimulation,
                guid.as_ptr(),
                uri.as_ptr(),
                &*callbacks,
                0,
                0,
            );
            assert!(!c.is_null(), "fmi2Instantiate failed");
            assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
            assert_eq!(fmi2EnterInitializationMode(c), OK);
            assert_eq!(fmi2ExitInitializationMode(c), OK);
            Fmu {
                c,
                t: 0.0,
                _callbacks: callbacks,
            }
        }
    }
    fn step(&mut self) {
        let s = unsafe { fmi2DoStep(self.c, self.t, H, 1) };
        debug_assert!(s == OK || s == fmi2Status_fmi2Warning, "{s}");
        self.t += H;
    }
}

impl Drop for Fmu {
    fn drop(&mut self) {
        unsafe { fmi2FreeInstance(self.c) };
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // criterion-style `cargo bench` passes `--bench`: ignore every other argument.
    // Batches of 2,000 steps of 1 µs: every batch times the same first 2 ms of the run.
    let (repeats, n) = if quick { (2, 200) } else { (60, 2_000) };
    let text = model_text();
    let dir = std::env::temp_dir().join(format!("plenum-bench-fmi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.toml"), &text).unwrap();

    // The core: one rk4 step of the simulation itself.
    let mut inst = Instance::new(&text, "model.toml").unwrap();
    inst.setup_experiment(0.0, None).unwrap();
    inst.enter_initialization_mode().unwrap();
    inst.exit_initialization_mode().unwrap();
    let sim0 = inst.simulation().clone();
    let mut sim = sim0.clone();
    let start = inst.snapshot().unwrap();
    let mut fmu = Fmu::new(&dir, &text);
    let mut s0: fmi2FMUstate = ptr::null_mut();
    unsafe { assert_eq!(fmi2GetFMUstate(fmu.c, &mut s0), OK) };
    // Ten values: time and the first nine outputs.
    let vrs: Vec<u32> = (0..10).collect();
    let mut values = [0.0; 10];
    let input = inst
        .description()
        .variables
        .iter()
        .find(|v| v.name == "atm.pressure")
        .unwrap()
        .value_reference;
    let mut k = 0u64;
    let mut snap = inst.snapshot().unwrap();
    let mut s: fmi2FMUstate = ptr::null_mut();
    let mut s2: fmi2FMUstate = ptr::null_mut();
    let mut size = 0usize;
    let mut bytes = Vec::new();
    unsafe {
        assert_eq!(fmi2GetFMUstate(fmu.c, &mut s), OK);
        assert_eq!(fmi2SerializedFMUstateSize(fmu.c, s, &mut size), OK);
        bytes.resize(size, 0 as fmi2Byte);
        assert_eq!(
            fmi2SerializeFMUstate(fmu.c, s, bytes.as_mut_ptr(), size),
            OK
        );
        assert_eq!(
            fmi2DeSerializeFMUstate(fmu.c, bytes.as_ptr(), size, &mut s2),
            OK
        );
    }

    // Rounds of every measurement in turn, the best of each kept: the Rust and the C side of a
    // row see the same load of the machine.
    let rounds = if quick { 1 } else { 6 };
    let repeats = repeats / rounds;
    let mut best = [f64::INFINITY; 11];
    for _ in 0..rounds {
        let mut keep = |i: usize, v: f64| best[i] = best[i].min(v);
        // The core: one rk4 step of the simulation itself.
        keep(
            0,
            best_ns(repeats, n, |k| {
                if k == 0 {
                    sim.clone_from(&sim0);
                }
                let t = sim.t_s;
                black_box(sim.advance_to(t + H).unwrap());
            }),
        );
        keep(
            1,
            best_ns(repeats, n, |k| {
                if k == 0 {
                    inst.restore(&start).unwrap();
                }
                let t = inst.simulation().t_s;
                black_box(inst.do_step(t, H).unwrap());
            }),
        );
        keep(
            2,
            best_ns(repeats, n, |k| {
                if k == 0 {
                    unsafe { fmi2SetFMUstate(fmu.c, s0) };
                    fmu.t = 0.0;
                }
                fmu.step()
            }),
        );
        keep(
            3,
            best_ns(repeats, n, |_| {
                inst.get_real(&vrs, &mut values).unwrap();
                black_box(&values);
            }),
        );
        keep(
            4,
            best_ns(repeats, n, |_| {
                let s = unsafe { fmi2GetReal(fmu.c, vrs.as_ptr(), 10, values.as_mut_ptr()) };
                debug_assert_eq!(s, OK);
                black_box(&values);
            }),
        );
        keep(
            5,
            best_ns(repeats, n, |k| {
                if k == 0 {
                    unsafe { fmi2SetFMUstate(fmu.c, s0) };
                    fmu.t = 0.0;
                }
                fmu.step();
                unsafe { fmi2GetReal(fmu.c, vrs.as_ptr(), 10, values.as_mut_ptr()) };
                black_box(&values);
            }),
        );
        keep(
            6,
            best_ns(repeats, n, |_| {
                k += 1;
                let p = 101325.0 + (k % 2) as f64;
                inst.set_real(&[input], &[p]).unwrap();
            }),
        );
        keep(
            7,
            best_ns(repeats, n, |_| {
                k += 1;
                let p = [101325.0 + (k % 2) as f64];
                let s = unsafe { fmi2SetReal(fmu.c, &input, 1, p.as_ptr()) };
                debug_assert_eq!(s, OK);
            }),
        );
        // States: get into an existing handle and set it back.
        keep(
            8,
            best_ns(repeats, n, |_| {
                inst.snapshot_into(&mut snap).unwrap();
                inst.restore(&snap).unwrap();
            }),
        );
        keep(
            9,
            best_ns(repeats, n, |_| unsafe {
                let r1 = fmi2GetFMUstate(fmu.c, &mut s);
                let r2 = fmi2SetFMUstate(fmu.c, s);
                debug_assert!(r1 == OK && r2 == OK);
            }),
        );
        keep(
            10,
            best_ns(repeats, n / 10, |_| unsafe {
                // fmi2GetFMUstate marks the handle's blob stale, so the size query encodes again.
                let mut sz = 0usize;
                fmi2GetFMUstate(fmu.c, &mut s);
                fmi2SerializedFMUstateSize(fmu.c, s, &mut sz);
                // The size changes when an input is set (its value is part of the state).
                bytes.resize(sz, 0);
                let r1 = fmi2SerializeFMUstate(fmu.c, s, bytes.as_mut_ptr(), sz);
                let r2 = fmi2DeSerializeFMUstate(fmu.c, bytes.as_ptr(), sz, &mut s2);
                assert!(r1 == OK && r2 == OK);
            }),
        );
    }
    let [
        core_step,
        rust_step,
        abi_step,
        rust_get,
        abi_get,
        step_get,
        rust_set,
        abi_set,
        rust_state,
        abi_state,
        abi_serial,
    ] = best;
    unsafe {
        fmi2FreeFMUstate(fmu.c, &mut s);
        fmi2FreeFMUstate(fmu.c, &mut s2);
        fmi2FreeFMUstate(fmu.c, &mut s0);
    }
    drop(fmu);
    let _ = std::fs::remove_dir_all(&dir);

    println!(
        "FMI overhead, projectile (rk4, h = {H:e} s), best of {} × {n} calls{}",
        repeats * rounds,
        if quick {
            " (quick mode: not a measurement)"
        } else {
            ""
        }
    );
    println!("| call | Rust API, ns | C ABI, ns | ABI − Rust, ns |");
    println!("|---|---:|---:|---:|");
    let row = |what: &str, rust: f64, abi: f64| {
        println!("| {what} | {rust:.0} | {abi:.0} | {:.0} |", abi - rust);
    };
    row(
        "one step: core `Simulation::advance_to`",
        core_step,
        abi_step,
    );
    row("one step: `Instance::do_step`", rust_step, abi_step);
    row("fmi2GetReal, 10 values", rust_get, abi_get);
    row("fmi2SetReal, 1 input (changing)", rust_set, abi_set);
    row(
        "fmi2GetFMUstate + fmi2SetFMUstate, existing handle",
        rust_state,
        abi_state,
    );
    println!("| fmi2DoStep + fmi2GetReal(10) | | {step_get:.0} | |");
    println!(
        "| fmi2GetFMUstate + SerializedSize + Serialize + DeSerialize (existing handles) | | \
         {abi_serial:.0} | |"
    );
    println!(
        "serialized state: {size} bytes before an input is set, {} after (limit 1024)",
        bytes.len()
    );
}
