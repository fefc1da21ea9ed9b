//! Plenum's shared library driven through its fmi2 C functions, as a master drives it: state
//! store/restore and serialization (the FMI state procedures), agreement with a direct in-process
//! run, bad calls,
//! and the run-time checks as the master sees them. The library is found as the harness's
//! `library_path` says (PLENUM_FMI_LIB, else a nested `cargo build -p plenum --lib`).

use std::ffi::{CString, c_char};
use std::ptr;

use compliance_tests::*;
use plenum::simulation::{Advance, Simulation};

const METHODS: [&str; 8] = [
    "euler",
    "rk4",
    "ab2",
    "ab3",
    "ab4",
    "ab5",
    "dopri5",
    "backward-euler",
];
/// The projectile's output interval: the communication step of every run here.
const H: f64 = 1e-4;

fn projectile(method: &str) -> ModelDir {
    ModelDir::new(
        &format!("projectile-{method}"),
        &model_text("projectile", method),
    )
}

/// The model text with `stop_on_exit = true`: the FMU then ends the run at the projectile's exit
/// (fmi2Discard, fmi2Terminated), as the direct run (the command line's default) does.
fn stopping_at_exit(text: &str) -> String {
    let text = text.replacen("[solver]\n", "[solver]\nstop_on_exit = true\n", 1);
    assert!(text.contains("stop_on_exit = true"));
    text
}

/// A shipped model with another method. Backward Euler (order 1) gets a smallest step of
/// 2e-7 s: with FONSim's default (span·1e-4 = 2e-6 s here) its energy drifts past check 5's
/// 1e-4 and every step would be fmi2Warning.
fn model_text(name: &str, method: &str) -> String {
    let text = with_method(&shipped_model(name), method);
    let text = if name == "projectile" {
        stopping_at_exit(&text)
    } else {
        text
    };
    if method == "backward-euler" {
        text.replace("[solver]\n", "[solver]\ninitial_step = 2e-7\n")
    } else {
        text
    }
}

/// `n` steps of `H` from the FMU's time (the master's time advances by `+= H`, as FMPy's does);
/// all outputs after each step. Every step must return fmi2OK.
fn steps(fmu: &Fmu, t: &mut f64, n: usize) -> Vec<Vec<u64>> {
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let s = fmu.do_step(*t, H);
        assert_eq!(s, OK, "fmi2DoStep at t = {t}");
        *t += H;
        rows.push(fmu.outputs_bits());
    }
    rows
}

/// Steps of `H` until the FMU ends the run (fmi2Discard with fmi2Terminated); the rows after
/// each step (the last one at the end time) and the end time.
fn steps_to_end(fmu: &Fmu, t: &mut f64) -> (Vec<Vec<u64>>, f64) {
    let mut rows = Vec::new();
    for _ in 0..100_000 {
        let s = fmu.do_step(*t, H);
        rows.push(fmu.outputs_bits());
        if s == DISCARD {
            let (st, term) = fmu.terminated();
            assert_eq!((st, term), (OK, true), "fmi2Discard without fmi2Terminated");
            let (sl, end) = fmu.last_successful_time();
            assert_eq!(sl, OK);
            return (rows, end);
        }
        assert_eq!(s, OK, "fmi2DoStep at t = {t}");
        *t += H;
    }
    panic!("the run did not end");
}

/// The master's clock after `k` steps of `+= H` (not k·H: the same sums as the runs).
fn clock(k: usize) -> f64 {
    let mut t = 0.0;
    for _ in 0..k {
        t += H;
    }
    t
}

fn first_difference(a: &[Vec<u64>], b: &[Vec<u64>]) -> Option<(usize, usize)> {
    for (i, (ra, rb)) in a.iter().zip(b).enumerate() {
        if let Some(j) = ra.iter().zip(rb).position(|(x, y)| x != y) {
            return Some((i, j));
        }
    }
    None
}

#[test]
fn every_fmi2_function_is_exported() {
    let lib = library();
    macro_rules! check {
        ($($f:ident),* $(,)?) => {{
            let mut n = 0;
            $( assert!(lib.$f.is_ok(), concat!(stringify!($f), " is not exported")); n += 1; )*
            n
        }};
    }
    let n = check!(
        fmi2GetTypesPlatform,
        fmi2GetVersion,
        fmi2SetDebugLogging,
        fmi2Instantiate,
        fmi2FreeInstance,
        fmi2SetupExperiment,
        fmi2EnterInitializationMode,
        fmi2ExitInitializationMode,
        fmi2Terminate,
        fmi2Reset,
        fmi2GetReal,
        fmi2GetInteger,
        fmi2GetBoolean,
        fmi2GetString,
        fmi2SetReal,
        fmi2SetInteger,
        fmi2SetBoolean,
        fmi2SetString,
        fmi2GetFMUstate,
        fmi2SetFMUstate,
        fmi2FreeFMUstate,
        fmi2SerializedFMUstateSize,
        fmi2SerializeFMUstate,
        fmi2DeSerializeFMUstate,
        fmi2GetDirectionalDerivative,
        fmi2EnterEventMode,
        fmi2NewDiscreteStates,
        fmi2EnterContinuousTimeMode,
        fmi2CompletedIntegratorStep,
        fmi2SetTime,
        fmi2SetContinuousStates,
        fmi2GetDerivatives,
        fmi2GetEventIndicators,
        fmi2GetContinuousStates,
        fmi2GetNominalsOfContinuousStates,
        fmi2SetRealInputDerivatives,
        fmi2GetRealOutputDerivatives,
        fmi2DoStep,
        fmi2CancelStep,
        fmi2GetStatus,
        fmi2GetRealStatus,
        fmi2GetIntegerStatus,
        fmi2GetBooleanStatus,
        fmi2GetStringStatus,
    );
    // SAFETY: plain FMI calls returning static strings.
    let (platform, version) = unsafe {
        (
            std::ffi::CStr::from_ptr(lib.fmi2GetTypesPlatform())
                .to_str()
                .unwrap(),
            std::ffi::CStr::from_ptr(lib.fmi2GetVersion())
                .to_str()
                .unwrap(),
        )
    };
    println!("{n} fmi2 functions resolved; types platform {platform:?}, version {version:?}");
    assert_eq!(n, 44);
    assert_eq!((platform, version), ("default", "2.0"));
}

/// FMI state procedure 1: store after fmi2ExitInitializationMode, N steps logged, restore, the
/// same N steps: an exact match, for every integrator.
#[test]
fn restore_after_initialization_repeats_bit_for_bit_for_every_method() {
    const N: usize = 30;
    for method in METHODS {
        let model = projectile(method);
        let fmu = Fmu::new(&model);
        fmu.initialize(0.0);
        let mut state: fmi2FMUstate = ptr::null_mut();
        assert_eq!(fmu.get_state(&mut state), OK);
        let mut t = 0.0;
        let first = steps(&fmu, &mut t, N);
        assert_eq!(fmu.set_state(state), OK);
        assert_eq!(fmu.time(), 0.0, "time after restore");
        let mut t = 0.0;
        let second = steps(&fmu, &mut t, N);
        assert_eq!(first_difference(&first, &second), None, "{method}");
        println!(
            "{method}: {N} steps of {H} s after restore match bit for bit ({} outputs each; \
             at t = {} s the second output is {})",
            first[0].len(),
            f64::from_bits(second[N - 1][0]),
            f64::from_bits(second[N - 1][1]),
        );
        assert_eq!(fmu.free_state(&mut state), OK);
        assert!(state.is_null(), "fmi2FreeFMUstate sets the handle to NULL");
    }
}

/// FMI state procedure 2: handles at 10 % and 20 %, run to 30 %, restore each and run to 30 %
/// again: exact match (the integrators' whole history is in the state).
#[test]
fn multiple_state_handles_restore_exactly() {
    for method in ["rk4", "ab4", "dopri5", "backward-euler"] {
        let model = projectile(method);
        let fmu = Fmu::new(&model);
        fmu.initialize(0.0);
        let mut t = 0.0;
        steps(&fmu, &mut t, 20);
        let mut h1: fmi2FMUstate = ptr::null_mut();
        assert_eq!(fmu.get_state(&mut h1), OK);
        let rows_10_20 = steps(&fmu, &mut t, 20);
        let mut h2: fmi2FMUstate = ptr::null_mut();
        assert_eq!(fmu.get_state(&mut h2), OK);
        let rows_20_30 = steps(&fmu, &mut t, 20);

        assert_eq!(fmu.set_state(h2), OK);
        let mut t2 = clock(40);
        let again_20_30 = steps(&fmu, &mut t2, 20);
        assert_eq!(
            first_difference(&rows_20_30, &again_20_30),
            None,
            "{method}: from h2"
        );

        assert_eq!(fmu.set_state(h1), OK);
        let mut t1 = clock(20);
        let again_10_30 = steps(&fmu, &mut t1, 40);
        assert_eq!(
            first_difference(&rows_10_20, &again_10_30[..20]),
            None,
            "{method}: h1"
        );
        assert_eq!(
            first_difference(&rows_20_30, &again_10_30[20..]),
            None,
            "{method}: h1"
        );
        println!(
            "{method}: restored handle 2 (t = {} s) and handle 1 (t = {} s); both reach t = {} s \
             bit for bit",
            clock(40),
            clock(20),
            f64::from_bits(rows_20_30[19][0]),
        );
        assert_eq!(fmu.free_state(&mut h1), OK);
        assert_eq!(fmu.free_state(&mut h2), OK);
    }
}

/// FMI state procedure 3: one full run; then from scratch to 10 %, serialize; then from scratch
/// again, deserialize, set, run to the end: the same results bit for bit.
#[test]
fn serialized_state_continues_in_a_fresh_instance_bit_for_bit() {
    for method in METHODS {
        let model = projectile(method);
        let full = Fmu::new(&model);
        full.initialize(0.0);
        let mut t = 0.0;
        let (rows, end) = steps_to_end(&full, &mut t);
        drop(full);

        let k = 20; // 10 % of t_end = 0.02 s
        let first = Fmu::new(&model);
        first.initialize(0.0);
        let mut t = 0.0;
        steps(&first, &mut t, k);
        let mut s: fmi2FMUstate = ptr::null_mut();
        assert_eq!(first.get_state(&mut s), OK);
        let blob = first.serialize(s);
        assert_eq!(first.free_state(&mut s), OK);
        drop(first);

        let fresh = Fmu::new(&model);
        fresh.initialize(0.0);
        let mut s: fmi2FMUstate = ptr::null_mut();
        assert_eq!(fresh.deserialize(&blob, &mut s), OK, "{:?}", fresh.logs());
        assert_eq!(fresh.set_state(s), OK);
        let (rest, end2) = steps_to_end(&fresh, &mut t);
        assert_eq!(fresh.free_state(&mut s), OK);
        assert_eq!(rest.len(), rows.len() - k, "{method}: number of steps");
        assert_eq!(first_difference(&rows[k..], &rest), None, "{method}");
        assert_eq!(end.to_bits(), end2.to_bits(), "{method}: end time");
        println!(
            "{method}: {}-byte state at t = {} s; a fresh instance runs {} steps to the exit at \
             t = {end2} s, every output bit for bit",
            blob.len(),
            k as f64 * H,
            rest.len()
        );
    }
}

/// The direct in-process run the FMU must reproduce: plenum's model loader and Simulation,
/// advanced to the same communication points; all outputs after each one.
fn direct_run(text: &str, n_max: usize) -> (Vec<Vec<u64>>, Option<f64>) {
    let model = plenum::model::parse_str(text, "direct.toml", &[]).expect("model");
    let mut sim: Simulation = plenum::model::build_simulation(&model.spec, None).expect("sim");
    let n_out = plenum::variables::output_variables(&sim).len();
    let mut out = vec![0.0; n_out];
    let mut rows = Vec::new();
    let mut t = 0.0;
    for _ in 0..n_max {
        let target = t + H;
        let finished = loop {
            match sim.advance_to(target).expect("direct step") {
                Advance::Reached => break None,
                Advance::Exit { .. } => continue,
                Advance::Finished(_) => break Some(sim.t_s),
            }
        };
        plenum::variables::write_outputs(&mut sim, &mut out);
        rows.push(out.iter().map(|x| x.to_bits()).collect());
        if finished.is_some() {
            return (rows, finished);
        }
        t += H;
    }
    (rows, None)
}

#[test]
fn abi_results_equal_a_direct_run_to_the_bit() {
    for (name, method, n) in [
        ("projectile", "rk4", 1000),
        ("projectile", "ab5", 1000),
        ("projectile", "euler", 1000),
        ("projectile", "dopri5", 1000),
        ("projectile", "backward-euler", 1000),
        ("blowdown", "rk4", 300),
        ("two_tanks", "ab3", 200),
    ] {
        let text = model_text(name, method);
        let model = ModelDir::new(&format!("{name}-{method}-direct"), &text);
        let fmu = Fmu::new(&model);
        fmu.initialize(0.0);
        let (direct, end) = direct_run(&text, n);
        let mut t = 0.0;
        let mut rows = Vec::new();
        for (k, _) in direct.iter().enumerate() {
            let s = fmu.do_step(t, H);
            rows.push(fmu.outputs_bits());
            if end.is_some() && k + 1 == direct.len() {
                assert_eq!(s, DISCARD, "{name}: the run ends where the direct run ends");
            } else {
                assert_eq!(s, OK, "{name}/{method} step {k}");
            }
            t += H;
        }
        assert_eq!(first_difference(&direct, &rows), None, "{name}/{method}");
        let last = &rows[rows.len() - 1];
        println!(
            "{name}/{method}: {} communication steps, {} outputs each, equal to the direct run \
             bit for bit; last row t = {} s, second output = {}{}",
            rows.len(),
            last.len(),
            f64::from_bits(last[0]),
            f64::from_bits(last[1]),
            end.map_or(String::new(), |e| format!(", run ended at {e} s"))
        );
    }
}

/// A described call that must fail, with a phrase its error message must contain.
type BadCall<'a> = (&'a str, Box<dyn Fn() -> fmi2Status + 'a>, &'a str);

/// An fmi2Instantiate that must return NULL: what, instanceName, fmuType, fmuGUID,
/// fmuResourceLocation, a phrase of the message.
type BadInstantiate<'a> = (
    &'a str,
    Option<&'a str>,
    fmi2Type,
    Option<String>,
    Option<String>,
    &'a str,
);

fn error_logged(fmu: &Fmu, before: usize, needle: &str) -> String {
    let logs = fmu.logs();
    let found = logs[before..]
        .iter()
        .find(|r| r.status == ERROR as i32 && r.text.contains(needle))
        .unwrap_or_else(|| {
            panic!(
                "no error log containing {needle:?} in {:?}",
                &logs[before..]
            )
        });
    assert_eq!(found.format, "%s", "the logger's format");
    assert_eq!(found.category, "logStatusError");
    found.text.clone()
}

/// Every refused call returns fmi2Error with a message, and the instance then steps exactly as
/// an untouched one.
#[test]
fn bad_calls_are_refused_and_the_instance_steps_on_unchanged() {
    let model = projectile("rk4");
    let lib = library();
    let fmu = Fmu::new(&model);
    let mut t = 0.0;

    // SAFETY (all calls below): FMI calls, some with deliberately bad arguments the FMU must
    // refuse.
    unsafe {
        // Before initialization.
        let n = fmu.logs().len();
        assert_eq!(fmu.do_step(0.0, H), ERROR);
        println!(
            "DoStep before initialization: {}",
            error_logged(&fmu, n, "illegal call sequence")
        );
        let n = fmu.logs().len();
        let (s, _) = fmu.get_real(&[0]);
        assert_eq!(s, ERROR);
        println!(
            "GetReal in instantiated: {}",
            error_logged(&fmu, n, "not allowed in state instantiated")
        );

        // Parameters in initialization mode: NaN and a NaN in a batch leave everything as it was.
        assert_eq!(lib.fmi2SetupExperiment(fmu.c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(lib.fmi2EnterInitializationMode(fmu.c), OK);
        let all: Vec<u32> = (0..fmu.n_variables as u32).collect();
        let (_, before_values) = fmu.get_real(&all);
        let p0 = fmu.n_outputs as u32;
        for (vrs, vals) in [
            (vec![p0], vec![f64::NAN]),
            (vec![p0], vec![f64::INFINITY]),
            (vec![p0, p0 + 1], vec![1.0, f64::NEG_INFINITY]),
        ] {
            let n = fmu.logs().len();
            assert_eq!(fmu.set_real(&vrs, &vals), ERROR);
            println!(
                "SetReal {vals:?}: {}",
                error_logged(&fmu, n, "must be finite")
            );
        }
        let n = fmu.logs().len();
        assert_eq!(fmu.set_real(&[0], &[1.0]), ERROR);
        println!(
            "SetReal of an output: {}",
            error_logged(&fmu, n, "is an output")
        );
        let (_, after_values) = fmu.get_real(&all);
        assert_eq!(
            before_values
                .iter()
                .map(|x| x.to_bits())
                .collect::<Vec<_>>(),
            after_values.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "refused SetReal changed a value"
        );
        assert_eq!(lib.fmi2ExitInitializationMode(fmu.c), OK);

        // A reference instance that sees no bad call.
        let reference = Fmu::new(&model);
        reference.initialize(0.0);
        let mut tr = 0.0;
        let ref_rows_a = steps(&reference, &mut tr, 5);
        let rows_a = steps(&fmu, &mut t, 5);
        assert_eq!(first_difference(&ref_rows_a, &rows_a), None);

        // Null component: refused without a logger to report to.
        assert_eq!(lib.fmi2DoStep(ptr::null_mut(), t, H, 1), ERROR);
        let mut v = [0.0];
        assert_eq!(
            lib.fmi2GetReal(ptr::null_mut(), [0u32].as_ptr(), 1, v.as_mut_ptr()),
            ERROR
        );
        assert_eq!(
            lib.fmi2SetupExperiment(ptr::null_mut(), 0, 0.0, 0.0, 0, 0.0),
            ERROR
        );
        // A pointer that is not an instance.
        let mut bogus = [0u64; 16];
        assert_eq!(
            lib.fmi2Terminate(bogus.as_mut_ptr() as fmi2Component),
            ERROR
        );
        println!("null and bogus components: fmi2Error");

        let tc = t;
        let cases: Vec<BadCall> = vec![
            (
                "GetReal with vr = NULL, nvr = 2",
                Box::new(|| {
                    let mut v = [0.0; 2];
                    lib.fmi2GetReal(fmu.c, ptr::null(), 2, v.as_mut_ptr())
                }),
                "vr[] is NULL",
            ),
            (
                "GetReal with value = NULL, nvr = 1",
                Box::new(|| lib.fmi2GetReal(fmu.c, [0u32].as_ptr(), 1, ptr::null_mut())),
                "value[] is NULL",
            ),
            (
                "SetReal with vr = NULL, nvr = 1",
                Box::new(|| lib.fmi2SetReal(fmu.c, ptr::null(), 1, [1.0].as_ptr())),
                "vr[] is NULL",
            ),
            (
                "GetReal of an unknown value reference",
                Box::new(|| {
                    let mut v = [0.0; 2];
                    lib.fmi2GetReal(fmu.c, [0u32, 99_999].as_ptr(), 2, v.as_mut_ptr())
                }),
                "no variable with value reference 99999",
            ),
            (
                "SetReal of a fixed parameter after initialization",
                Box::new(|| lib.fmi2SetReal(fmu.c, [p0].as_ptr(), 1, [1.0].as_ptr())),
                "fixed parameter",
            ),
            (
                "GetInteger of value reference 0",
                Box::new(|| {
                    let mut v = [0];
                    lib.fmi2GetInteger(fmu.c, [0u32].as_ptr(), 1, v.as_mut_ptr())
                }),
                "no Integer variable with value reference 0",
            ),
            (
                "SetBoolean of value reference 3",
                Box::new(|| lib.fmi2SetBoolean(fmu.c, [3u32].as_ptr(), 1, [1].as_ptr())),
                "no Boolean variable with value reference 3",
            ),
            (
                "DoStep with a wrong currentCommunicationPoint",
                Box::new(|| lib.fmi2DoStep(fmu.c, tc + 1e-6, H, 1)),
                "is not the FMU's time",
            ),
            (
                "DoStep with a negative step",
                Box::new(|| lib.fmi2DoStep(fmu.c, tc, -H, 1)),
                "communicationStepSize must be finite and > 0",
            ),
            (
                "DoStep with a NaN step",
                Box::new(|| lib.fmi2DoStep(fmu.c, tc, f64::NAN, 1)),
                "communicationStepSize must be finite and > 0",
            ),
            (
                "DoStep with an infinite step",
                Box::new(|| lib.fmi2DoStep(fmu.c, tc, f64::INFINITY, 1)),
                "communicationStepSize must be finite and > 0",
            ),
            (
                "SetupExperiment after initialization",
                Box::new(|| lib.fmi2SetupExperiment(fmu.c, 0, 0.0, 0.0, 0, 0.0)),
                "illegal call sequence",
            ),
            (
                "EnterInitializationMode after initialization",
                Box::new(|| lib.fmi2EnterInitializationMode(fmu.c)),
                "illegal call sequence",
            ),
            (
                "CancelStep (synchronous steps)",
                Box::new(|| lib.fmi2CancelStep(fmu.c)),
                "synchronous",
            ),
            (
                "GetDirectionalDerivative with respect to a non-input (time)",
                Box::new(|| {
                    let mut dv = [0.0];
                    lib.fmi2GetDirectionalDerivative(
                        fmu.c,
                        [1u32].as_ptr(),
                        1,
                        [0u32].as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        dv.as_mut_ptr(),
                    )
                }),
                "not an input",
            ),
            (
                "EnterEventMode (Model Exchange) in a Co-Simulation instance",
                Box::new(|| lib.fmi2EnterEventMode(fmu.c)),
                "is a Model Exchange function: this instance was instantiated for Co-Simulation",
            ),
            (
                "SetFMUstate(NULL)",
                Box::new(|| lib.fmi2SetFMUstate(fmu.c, ptr::null_mut())),
                "the FMU state is NULL",
            ),
            (
                "GetFMUstate(NULL)",
                Box::new(|| lib.fmi2GetFMUstate(fmu.c, ptr::null_mut())),
                "is NULL",
            ),
            (
                "SetFMUstate of a pointer that is no state",
                Box::new(|| lib.fmi2SetFMUstate(fmu.c, bogus.as_ptr() as fmi2FMUstate)),
                "is not an FMU state of this library",
            ),
            (
                "GetRealStatus with value = NULL",
                Box::new(|| {
                    lib.fmi2GetRealStatus(
                        fmu.c,
                        fmi2StatusKind_fmi2LastSuccessfulTime,
                        ptr::null_mut(),
                    )
                }),
                "value is NULL",
            ),
        ];
        for (what, call, needle) in &cases {
            let n = fmu.logs().len();
            assert_eq!(call(), ERROR, "{what}");
            println!("{what}: {}", error_logged(&fmu, n, needle));
        }

        // h = 0 is refused (FMI 2.0.4 §4.2.2: communicationStepSize must be > 0.0), with
        // nothing changed: a master that does not advance its clock cannot spin on fmi2OK.
        let before = fmu.outputs_bits();
        assert_eq!(fmu.do_step(t, 0.0), ERROR);
        assert_eq!(fmu.outputs_bits(), before, "a step of 0 changed something");

        // Corrupted and foreign state blobs.
        let mut s: fmi2FMUstate = ptr::null_mut();
        assert_eq!(fmu.get_state(&mut s), OK);
        let blob = fmu.serialize(s);
        let other = ModelDir::new("two-tanks-foreign", &shipped_model("two_tanks"));
        let foreign_fmu = Fmu::new(&other);
        foreign_fmu.initialize(0.0);
        let mut fs: fmi2FMUstate = ptr::null_mut();
        assert_eq!(foreign_fmu.get_state(&mut fs), OK);
        let foreign = foreign_fmu.serialize(fs);
        assert_eq!(foreign_fmu.free_state(&mut fs), OK);
        let mut flipped = blob.clone();
        let mid = blob.len() / 2;
        flipped[mid] ^= 0x10;
        let mut bad_magic = blob.clone();
        bad_magic[0] = b'X';
        for (what, bytes, needle) in [
            (
                "truncated blob",
                blob[..blob.len() - 7].to_vec(),
                "truncated",
            ),
            (
                "blob cut inside its header",
                blob[..10].to_vec(),
                "truncated",
            ),
            ("one bit flipped in the body", flipped, "checksum mismatch"),
            ("another model's state", foreign, "state is for model GUID"),
            ("bad magic", bad_magic, "not a Plenum FMU state"),
            ("empty blob", Vec::new(), "truncated"),
        ] {
            let n = fmu.logs().len();
            let mut out: fmi2FMUstate = ptr::null_mut();
            assert_eq!(fmu.deserialize(&bytes, &mut out), ERROR, "{what}");
            assert!(out.is_null(), "{what}: a state was made");
            println!(
                "DeSerializeFMUstate, {what}: {}",
                error_logged(&fmu, n, needle)
            );
        }
        assert_eq!(fmu.free_state(&mut s), OK);

        let n_cases = cases.len();
        drop(cases);
        // After all that: the same results as the untouched instance.
        let ref_rows_b = steps(&reference, &mut tr, 10);
        let rows_b = steps(&fmu, &mut t, 10);
        assert_eq!(first_difference(&ref_rows_b, &rows_b), None);
        println!(
            "after {} refused calls the instance steps to t = {} s exactly as an untouched one",
            n_cases + 13,
            f64::from_bits(rows_b[9][0])
        );
    }
}

#[test]
fn a_percent_in_a_message_reaches_the_logger_verbatim() {
    let model = projectile("rk4");
    let fmu = Fmu::new(&model);
    let weird = "100%s%d%n%%x";
    let name = CString::new(weird).unwrap();
    let cats: [*const c_char; 1] = [name.as_ptr()];
    let n = fmu.logs().len();
    // SAFETY: one valid category string.
    let s = unsafe { fmu.lib.fmi2SetDebugLogging(fmu.c, 1, 1, cats.as_ptr()) };
    assert_eq!(s, ERROR);
    let text = error_logged(&fmu, n, "unknown log category");
    assert!(text.contains(&format!("`{weird}`")), "{text}");
    println!("format \"%s\", message: {text}");
    // Known categories are accepted, and every line so far used the format "%s".
    let ok = CString::new("logEvents").unwrap();
    let cats: [*const c_char; 1] = [ok.as_ptr()];
    // SAFETY: one valid category string.
    assert_eq!(
        unsafe { fmu.lib.fmi2SetDebugLogging(fmu.c, 1, 1, cats.as_ptr()) },
        OK
    );
    assert!(fmu.logs().iter().all(|r| r.format == "%s"));
}

#[test]
fn instantiate_refuses_bad_resources_guid_and_type() {
    let good = projectile("rk4");
    let spaced = ModelDir::new("with space %20 and é", &shipped_model("projectile"));
    let (c, env, _cb) = instantiate_raw(
        Some("spaced"),
        fmi2Type_fmi2CoSimulation,
        Some(&spaced.guid),
        Some(&spaced.uri()),
        true,
    );
    assert!(
        !c.is_null(),
        "percent-encoded URI {}: {:?}",
        spaced.uri(),
        logs_of(env)
    );
    println!("instantiated from {}", spaced.uri());
    // SAFETY: a live instance.
    unsafe { library().fmi2FreeInstance(c) };

    // file:/path and file://localhost/path (on Windows file:/C:/dir, file://localhost/C:/dir).
    let plain_form = good.uri().replacen("file://", "file:", 1);
    let localhost = good.uri().replacen("file://", "file://localhost", 1);
    for uri in [plain_form, localhost] {
        let (c, env, _cb) = instantiate_raw(
            Some("forms"),
            fmi2Type_fmi2CoSimulation,
            Some(&good.guid),
            Some(&uri),
            false,
        );
        assert!(!c.is_null(), "{uri}: {:?}", logs_of(env));
        // SAFETY: a live instance.
        unsafe { library().fmi2FreeInstance(c) };
    }

    let sensitivities = ModelDir::new(
        "sensitivities",
        &(shipped_model("projectile") + "\n[sensitivities]\nparameters = [\"projectile.mass\"]\n"),
    );
    let empty = ModelDir::new("empty", "");
    let not_utf8 = ModelDir::with_bytes("latin1", b"[model]\nname = \"caf\xe9\"\n");
    let invalid = ModelDir::new("invalid", "[model]\nname = 3\n");
    let missing = ModelDir::new("missing", "x");
    std::fs::remove_file(missing.resources.join("model.toml")).unwrap();
    let wrong_guid = "{00000000-0000-0000-0000-000000000000}".to_string();
    let cases: Vec<BadInstantiate> = vec![
        (
            "GUID mismatch",
            Some("x"),
            fmi2Type_fmi2CoSimulation,
            Some(wrong_guid),
            Some(good.uri()),
            "GUID mismatch: modelDescription says {00000000",
        ),
        (
            "an fmuType that is no FMI 2.0 type",
            Some("x"),
            7,
            Some(good.guid.clone()),
            Some(good.uri()),
            "fmuType 7 is not an FMI 2.0 type",
        ),
        (
            "Model Exchange of a model with [sensitivities]",
            Some("x"),
            fmi2Type_fmi2ModelExchange,
            Some(sensitivities.guid.clone()),
            Some(sensitivities.uri()),
            "Model Exchange is not offered for a model with [sensitivities]",
        ),
        (
            "missing model.toml",
            Some("x"),
            fmi2Type_fmi2CoSimulation,
            Some(missing.guid.clone()),
            Some(missing.uri()),
            "cannot read the model",
        ),
        (
            "empty model.toml",
            Some("x"),
            fmi2Type_fmi2CoSimulation,
            Some(empty.guid.clone()),
            Some(empty.uri()),
            "is empty",
        ),
        (
            "model.toml not UTF-8",
            Some("x"),
            fmi2Type_fmi2CoSimulation,
            Some(not_utf8.guid.clone()),
            Some(not_utf8.uri()),
            "not valid UTF-8",
        ),
        (
            "invalid model",
            Some("x"),
            fmi2Type_fmi2CoSimulation,
            Some(invalid.guid.clone()),
            Some(invalid.uri()),
            "the model file is invalid",
        ),
        (
            "NULL GUID",
            Some("x"),
            fmi2Type_fmi2CoSimulation,
            None,
            Some(good.uri()),
            "fmuGUID is NULL",
        ),
        (
            "NULL resource location",
            Some("x"),
            fmi2Type_fmi2CoSimulation,
            Some(good.guid.clone()),
            None,
            "fmuResourceLocation is NULL",
        ),
        (
            "not a file URI",
            Some("x"),
            fmi2Type_fmi2CoSimulation,
            Some(good.guid.clone()),
            Some("http://example.org/r".into()),
            "not a file URI",
        ),
        (
            "NULL instance name",
            None,
            fmi2Type_fmi2CoSimulation,
            Some(good.guid.clone()),
            Some(good.uri()),
            "instanceName is NULL",
        ),
    ];
    for (what, name, ty, guid, uri, needle) in cases {
        let (c, env, _cb) = instantiate_raw(name, ty, guid.as_deref(), uri.as_deref(), true);
        assert!(c.is_null(), "{what}: instantiated");
        let logs = logs_of(env);
        let line = logs
            .iter()
            .find(|r| r.status == ERROR as i32 && r.text.contains(needle))
            .unwrap_or_else(|| panic!("{what}: no message with {needle:?}: {logs:?}"));
        assert_eq!(line.format, "%s");
        println!("{what}: NULL, {}", line.text);
    }
    // NULL callbacks: NULL, no crash.
    let guid = CString::new(good.guid.clone()).unwrap();
    let uri = CString::new(good.uri()).unwrap();
    // SAFETY: FMI call with a deliberately NULL callback pointer.
    let c = unsafe {
        library().fmi2Instantiate(
            c"x".as_ptr(),
            fmi2Type_fmi2CoSimulation,
            guid.as_ptr(),
            uri.as_ptr(),
            ptr::null(),
            0,
            0,
        )
    };
    assert!(c.is_null());
}

/// A tiny cell drained through a valve far too large for Euler's step: check 2 refuses a step
/// inside a communication step; the master sees fmi2Discard and the last good time.
#[test]
fn negative_mass_discards_with_the_last_good_time() {
    let text = r#"
[model]
name = "overdrained"
description = "A tiny cell drained through a valve far too large for Euler's step (check 2)"
[gas]
species = "air"
[solver]
method = "euler"
step = 1e-3
t_end = 0.1
output_interval = 1e-2
[[chamber]]
name = "cell"
volume = 1e-6
pressure = 1.1e5
temperature = 300.0
[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 300.0
[[valve]]
name = "drain"
from = "cell"
to = "atm"
coefficient = 2.3e-8
"#;
    // The direct run says where the last good state is.
    let loaded = plenum::model::parse_str(text, "overdrained.toml", &[]).expect("model");
    let mut sim = plenum::model::build_simulation(&loaded.spec, None).expect("sim");
    let failure = sim.advance_to(0.01).expect_err("check 2 must fire");
    assert_eq!(failure.code, 2, "{failure}");

    let model = ModelDir::new("overdrained", text);
    let fmu = Fmu::new(&model);
    fmu.initialize(0.0);
    let h = 0.01;
    let n = fmu.logs().len();
    assert_eq!(fmu.do_step(0.0, h), DISCARD);
    let (s, lst) = fmu.last_successful_time();
    assert_eq!(s, OK);
    assert_eq!(lst.to_bits(), failure.last_good_t_s.to_bits());
    assert!(
        lst > 0.0 && lst < h,
        "the last good time is inside the step"
    );
    assert_eq!(
        fmu.terminated(),
        (OK, false),
        "a refused step does not end the run"
    );
    assert_eq!(fmu.time(), lst, "the state is kept at the last good time");
    let line = fmu.logs()[n..]
        .iter()
        .find(|r| r.status == DISCARD as i32 && r.text.contains("run-time check 2"))
        .cloned()
        .expect("a discard message naming check 2");
    assert_eq!(line.category, "logStatusDiscard");
    println!(
        "fmi2DoStep(0, {h}) → fmi2Discard; fmi2LastSuccessfulTime = {lst} s (direct run: {} s); \
         log: {}",
        failure.last_good_t_s, line.text
    );
    // stepFailed: no more steps, but values, states and fmi2Terminate are allowed.
    assert_eq!(fmu.do_step(lst, h), ERROR);
    let rc_vr = compliance_tests::value_reference(text, "rc");
    let (s, rc) = fmu.get_real(&[rc_vr]);
    assert_eq!((s, rc[0]), (OK, 2.0), "rc output");
    // SAFETY: a live instance.
    assert_eq!(unsafe { fmu.lib.fmi2Terminate(fmu.c) }, OK);
}

/// The projectile leaves the barrel with `stop_on_exit = true` in the model file: the step that
/// contains the exit returns fmi2Discard, fmi2Terminated is true and fmi2LastSuccessfulTime is
/// the exit time.
#[test]
fn projectile_exit_ends_the_run_with_discard_and_terminated() {
    let text = stopping_at_exit(&with_method(&shipped_model("projectile"), "rk4"));
    let (_, end) = direct_run(&text, 100_000);
    let exit = end.expect("the projectile exits");
    let model = ModelDir::new("projectile-exit", &text);
    let fmu = Fmu::new(&model);
    fmu.initialize(0.0);
    let mut t = 0.0;
    let before_exit = loop {
        let n = fmu.logs().len();
        let s = fmu.do_step(t, H);
        if s == DISCARD {
            let logs = fmu.logs();
            assert!(
                logs[n..]
                    .iter()
                    .any(|r| r.category == "logEvents" && r.text.contains("exit")),
                "an event line: {:?}",
                &logs[n..]
            );
            break t;
        }
        assert_eq!(s, OK);
        t += H;
    };
    let (s, lst) = fmu.last_successful_time();
    assert_eq!(s, OK);
    assert_eq!(fmu.terminated(), (OK, true));
    assert_eq!(
        lst.to_bits(),
        exit.to_bits(),
        "exit time as in the direct run"
    );
    assert!(lst > before_exit && lst <= before_exit + H);
    let (_, x) = fmu.get_real(&[0]);
    assert_eq!(x[0], lst, "time output at the exit");
    println!(
        "fmi2DoStep({before_exit}, {H}) → fmi2Discard, fmi2Terminated = true, \
         fmi2LastSuccessfulTime = {lst} s (direct run: {exit} s)"
    );
    // SAFETY: a live instance.
    assert_eq!(unsafe { fmu.lib.fmi2Terminate(fmu.c) }, OK);
    // After fmi2Terminate, fmi2Reset goes back to instantiated and the run can start again.
    // SAFETY: a live instance.
    assert_eq!(unsafe { fmu.lib.fmi2Reset(fmu.c) }, OK);
    fmu.initialize(0.0);
    assert_eq!(fmu.do_step(0.0, H), OK);
    println!("after fmi2Reset the instance runs again from t = 0");
}

fn vr_of(text: &str, name: &str) -> u32 {
    let loaded = plenum::model::parse_str(text, "m.toml", &[]).expect("model");
    plenum::cosim::describe(&loaded)
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variable {name}"))
        .value_reference
}

/// A parameter set in initialization mode (re-validated: a bad value is refused, nothing
/// changes) and an input set during the run give the results of the edited model file.
#[test]
fn parameters_and_inputs_set_through_the_abi_act_like_edited_models() {
    // Parameter: the projectile twice as heavy.
    let text = stopping_at_exit(&shipped_model("projectile"));
    let heavy = text.replace("mass = 0.002", "mass = 0.004");
    assert_ne!(heavy, text);
    let vr = vr_of(&text, "projectile.mass");
    let model = ModelDir::new("projectile-param", &text);
    let fmu = Fmu::new(&model);
    // SAFETY: FMI calls on a live instance.
    unsafe {
        assert_eq!(fmu.lib.fmi2SetupExperiment(fmu.c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(fmu.lib.fmi2EnterInitializationMode(fmu.c), OK);
    }
    assert_eq!(fmu.set_real(&[vr], &[0.004]), OK, "{:?}", fmu.logs());
    let n = fmu.logs().len();
    assert_eq!(
        fmu.set_real(&[vr], &[-1.0]),
        ERROR,
        "a negative mass was accepted"
    );
    let refusal = fmu.logs()[n..]
        .iter()
        .find(|r| r.status == ERROR as i32)
        .map(|r| r.text.clone())
        .expect("a message");
    assert_eq!(
        fmu.get_real(&[vr]),
        (OK, vec![0.004]),
        "a refused value changed the parameter"
    );
    // SAFETY: FMI call on a live instance.
    assert_eq!(unsafe { fmu.lib.fmi2ExitInitializationMode(fmu.c) }, OK);
    let (direct, end) = direct_run(&heavy, 100_000);
    let mut t = 0.0;
    let (rows, end_fmu) = steps_to_end(&fmu, &mut t);
    assert_eq!(first_difference(&direct, &rows), None);
    assert_eq!(end.map(f64::to_bits), Some(end_fmu.to_bits()));
    println!(
        "projectile.mass = 0.004 set in initialization mode: exit at {end_fmu} s, bit for bit as \
         the edited file ({} steps); mass = -1 refused: {refusal}",
        rows.len()
    );

    // Input: the blowdown's atmosphere at 2 bar from the first step on.
    let text = shipped_model("blowdown");
    let edited = text.replace("pressure = 101325.0", "pressure = 2e5");
    assert_ne!(edited, text);
    let vr = vr_of(&text, "atm.pressure");
    let model = ModelDir::new("blowdown-input", &text);
    let fmu = Fmu::new(&model);
    fmu.initialize(0.0);
    assert_eq!(fmu.set_real(&[vr], &[2e5]), OK, "{:?}", fmu.logs());
    let (direct, _) = direct_run(&edited, 200);
    let mut t = 0.0;
    let rows = steps(&fmu, &mut t, 200);
    assert_eq!(first_difference(&direct, &rows), None);
    // And changed again mid-run: it acts from then on.
    let before = fmu.outputs_bits();
    assert_eq!(fmu.set_real(&[vr], &[f64::NAN]), ERROR);
    assert_eq!(fmu.set_real(&[vr], &[9e5]), OK);
    assert_eq!(fmu.get_real(&[vr]), (OK, vec![9e5]));
    let after = steps(&fmu, &mut t, 1);
    assert_ne!(before, after[0]);
    println!(
        "atm.pressure = 2e5 set after initialization: 200 steps bit for bit as the edited file; \
         set to 9e5 at t = {} s, tank pressure then {} Pa",
        t - H,
        f64::from_bits(after[0][1])
    );
}

/// Codes 4, 5, 8, 9 make a step fmi2Warning with a log line naming the code; check 1 ends the
/// run like an exit; a defined stop time cannot be stepped past.
#[test]
fn warnings_check_1_and_the_stop_time_reach_the_master() {
    // Check 8: a gas whose critical pressure is below the chamber's.
    let text = shipped_model("blowdown").replace(
        "species = \"air\"",
        "R = 287.05\ncp = 1004.7\np_critical = 5e5",
    );
    assert!(text.contains("p_critical"));
    let model = ModelDir::new("blowdown-critical", &text);
    let fmu = Fmu::new(&model);
    fmu.initialize(0.0);
    let n = fmu.logs().len();
    assert_eq!(fmu.do_step(0.0, H), WARNING);
    let line = fmu.logs()[n..]
        .iter()
        .find(|r| r.status == WARNING as i32)
        .cloned()
        .expect("a warning line");
    assert!(line.text.contains("run-time check 8"), "{}", line.text);
    assert_eq!(line.category, "logStatusWarning");
    let rc = fmu
        .get_real(&[compliance_tests::value_reference(&text, "rc")])
        .1[0];
    assert_eq!(rc, 8.0);
    println!(
        "check 8: fmi2DoStep → fmi2Warning, rc = {rc}; log: {}",
        line.text
    );

    // Check 1: the projectile cannot leave before max_time.
    let text = shipped_model("projectile").replace("max_time = 0.05", "max_time = 0.00105");
    assert!(text.contains("0.00105"));
    let model = ModelDir::new("projectile-max-time", &text);
    let fmu = Fmu::new(&model);
    fmu.initialize(0.0);
    let mut t = 0.0;
    let status = loop {
        let s = fmu.do_step(t, H);
        if s != OK {
            break s;
        }
        t += H;
    };
    assert_eq!(status, DISCARD);
    assert_eq!(fmu.terminated(), (OK, true));
    let (_, lst) = fmu.last_successful_time();
    assert_eq!(lst, 0.00105);
    let logs = fmu.logs();
    let line = logs
        .iter()
        .find(|r| r.status == DISCARD as i32 && r.text.contains("run-time check 1"))
        .expect("a line naming check 1");
    println!(
        "check 1: fmi2DoStep({t}, {H}) → fmi2Discard, fmi2Terminated, \
         fmi2LastSuccessfulTime = {lst} s; log: {}",
        line.text
    );

    // A defined stop time.
    let model = projectile("rk4");
    let fmu = Fmu::new(&model);
    // SAFETY: FMI calls on a live instance.
    unsafe {
        assert_eq!(
            fmu.lib.fmi2SetupExperiment(fmu.c, 0, 0.0, 0.0, 1, 3.0 * H),
            OK
        );
        assert_eq!(fmu.lib.fmi2EnterInitializationMode(fmu.c), OK);
        assert_eq!(fmu.lib.fmi2ExitInitializationMode(fmu.c), OK);
    }
    let mut t = 0.0;
    steps(&fmu, &mut t, 3);
    let n = fmu.logs().len();
    assert_eq!(fmu.do_step(t, H), ERROR);
    println!(
        "stop time {}: {}",
        3.0 * H,
        error_logged(&fmu, n, "passes the stop time")
    );
    let (status, _) = fmu.get_real(&fmu.outputs);
    assert_eq!(status, OK, "the instance is still usable");
}
