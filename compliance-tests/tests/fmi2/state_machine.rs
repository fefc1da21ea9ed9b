//! Bad calls, part 2 (part 1 is `abi.rs`): every fmi2 function called in every FMI 2.0
//! Co-Simulation state, against the standard's calling-sequence table written out here as data
//! (FMI 2.0.4 §4.2.4, the Co-Simulation state machine); a NULL for every pointer argument;
//! nvr = 0; unknown value references; fixed parameters after initialization; non-finite values;
//! fmi2DoStep's step and communication point. A refused call returns fmi2Error with a logger
//! message, and the instance then goes on exactly as a twin that never saw the call.

use std::ffi::c_char;
use std::ptr;

use compliance_tests::*;

use crate::calling_sequence::{Row, check_table, description, value_reference};

// The states of the table. stepInProgress and stepCanceled never occur (synchronous steps);
// fatal is reached only through an internal error (see src/fmi2's unit test of a caught panic).
const INSTANTIATED: u8 = 1;
const INIT_MODE: u8 = 2;
const STEP_COMPLETE: u8 = 4;
const STEP_FAILED: u8 = 8;
const TERMINATED: u8 = 16;
const ERROR_STATE: u8 = 32;
const ANY: u8 = INSTANTIATED | INIT_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR_STATE;
const NONE: u8 = 0;

const STATES: [(u8, &str); 6] = [
    (INSTANTIATED, "instantiated"),
    (INIT_MODE, "initializationMode"),
    (STEP_COMPLETE, "stepComplete"),
    (STEP_FAILED, "stepFailed"),
    (TERMINATED, "terminated"),
    (ERROR_STATE, "error"),
];

const H: f64 = 1e-4;

/// What a call needs besides the instance.
struct Ctx {
    input_vr: u32,
    time: f64,
}

/// The FMI 2.0.4 Co-Simulation calling-sequence table (§4.2.4), restricted to the states above:
/// function, states in which it may be called, a call with valid arguments.
/// fmi2GetTypesPlatform, fmi2GetVersion, fmi2Instantiate and fmi2FreeInstance take no
/// instance state to refuse.
fn table() -> Vec<Row<Ctx>> {
    // SAFETY (every closure): FMI calls on a live instance with valid arguments.
    unsafe {
        vec![
            ("fmi2SetDebugLogging", ANY, |f, _| {
                f.lib.fmi2SetDebugLogging(f.c, 0, 0, ptr::null())
            }),
            ("fmi2SetupExperiment", INSTANTIATED, |f, _| {
                f.lib.fmi2SetupExperiment(f.c, 0, 0.0, 0.0, 0, 0.0)
            }),
            ("fmi2EnterInitializationMode", INSTANTIATED, |f, _| {
                f.lib.fmi2EnterInitializationMode(f.c)
            }),
            ("fmi2ExitInitializationMode", INIT_MODE, |f, _| {
                f.lib.fmi2ExitInitializationMode(f.c)
            }),
            ("fmi2Terminate", STEP_COMPLETE | STEP_FAILED, |f, _| {
                f.lib.fmi2Terminate(f.c)
            }),
            ("fmi2Reset", ANY, |f, _| f.lib.fmi2Reset(f.c)),
            (
                "fmi2GetReal",
                INIT_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR_STATE,
                |f, _| f.get_real(&[0]).0,
            ),
            (
                "fmi2GetInteger",
                INIT_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR_STATE,
                |f, _| {
                    let mut v = [0];
                    f.lib.fmi2GetInteger(f.c, ptr::null(), 0, v.as_mut_ptr())
                },
            ),
            (
                "fmi2GetBoolean",
                INIT_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR_STATE,
                |f, _| {
                    let mut v = [0];
                    f.lib.fmi2GetBoolean(f.c, ptr::null(), 0, v.as_mut_ptr())
                },
            ),
            (
                "fmi2GetString",
                INIT_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR_STATE,
                |f, _| {
                    let mut v: [fmi2String; 1] = [ptr::null()];
                    f.lib.fmi2GetString(f.c, ptr::null(), 0, v.as_mut_ptr())
                },
            ),
            (
                "fmi2SetReal",
                INSTANTIATED | INIT_MODE | STEP_COMPLETE,
                |f, x| f.set_real(&[x.input_vr], &[101325.0]),
            ),
            (
                "fmi2SetInteger",
                INSTANTIATED | INIT_MODE | STEP_COMPLETE,
                |f, _| f.lib.fmi2SetInteger(f.c, ptr::null(), 0, ptr::null()),
            ),
            (
                "fmi2SetBoolean",
                INSTANTIATED | INIT_MODE | STEP_COMPLETE,
                |f, _| f.lib.fmi2SetBoolean(f.c, ptr::null(), 0, ptr::null()),
            ),
            (
                "fmi2SetString",
                INSTANTIATED | INIT_MODE | STEP_COMPLETE,
                |f, _| f.lib.fmi2SetString(f.c, ptr::null(), 0, ptr::null()),
            ),
            ("fmi2GetFMUstate+fmi2FreeFMUstate", ANY, |f, _| {
                let mut s: fmi2FMUstate = ptr::null_mut();
                let st = f.get_state(&mut s);
                f.free_state(&mut s);
                st
            }),
            ("fmi2SerializedFMUstateSize", ANY, |f, _| {
                let mut s: fmi2FMUstate = ptr::null_mut();
                f.get_state(&mut s);
                let mut n = 0usize;
                let st = f.lib.fmi2SerializedFMUstateSize(f.c, s, &mut n);
                f.free_state(&mut s);
                st
            }),
            (
                "fmi2GetDirectionalDerivative",
                INIT_MODE | STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR_STATE,
                |f, _| {
                    f.lib.fmi2GetDirectionalDerivative(
                        f.c,
                        ptr::null(),
                        0,
                        ptr::null(),
                        0,
                        ptr::null(),
                        ptr::null_mut(),
                    )
                },
            ),
            (
                "fmi2SetRealInputDerivatives",
                INSTANTIATED | INIT_MODE | STEP_COMPLETE,
                |f, x| {
                    f.lib.fmi2SetRealInputDerivatives(
                        f.c,
                        [x.input_vr].as_ptr(),
                        1,
                        [1].as_ptr(),
                        [0.0].as_ptr(),
                    )
                },
            ),
            (
                "fmi2GetRealOutputDerivatives",
                STEP_COMPLETE | STEP_FAILED | TERMINATED | ERROR_STATE,
                |f, _| {
                    let mut v = [0.0];
                    f.lib.fmi2GetRealOutputDerivatives(
                        f.c,
                        [1u32].as_ptr(),
                        1,
                        [1].as_ptr(),
                        v.as_mut_ptr(),
                    )
                },
            ),
            ("fmi2DoStep", STEP_COMPLETE, |f, x| f.do_step(x.time, H)),
            // Only in stepInProgress, which a synchronous fmi2DoStep never leaves behind.
            ("fmi2CancelStep", NONE, |f, _| f.lib.fmi2CancelStep(f.c)),
            (
                "fmi2GetStatus",
                STEP_COMPLETE | STEP_FAILED | TERMINATED,
                |f, _| {
                    let mut s = 0;
                    f.lib
                        .fmi2GetStatus(f.c, fmi2StatusKind_fmi2DoStepStatus, &mut s)
                },
            ),
            (
                "fmi2GetRealStatus",
                STEP_COMPLETE | STEP_FAILED | TERMINATED,
                |f, _| f.last_successful_time().0,
            ),
            (
                "fmi2GetIntegerStatus",
                STEP_COMPLETE | STEP_FAILED | TERMINATED,
                |f, _| {
                    let mut v = 0;
                    f.lib
                        .fmi2GetIntegerStatus(f.c, fmi2StatusKind_fmi2DoStepStatus, &mut v)
                },
            ),
            (
                "fmi2GetBooleanStatus",
                STEP_COMPLETE | STEP_FAILED | TERMINATED,
                |f, _| f.terminated().0,
            ),
            (
                "fmi2GetStringStatus",
                STEP_COMPLETE | STEP_FAILED | TERMINATED,
                |f, _| {
                    let mut v: fmi2String = ptr::null();
                    f.lib
                        .fmi2GetStringStatus(f.c, fmi2StatusKind_fmi2PendingStatus, &mut v)
                },
            ),
            // Model Exchange's own functions: not in the Co-Simulation table at all
            // (me_calls.rs runs them in Model Exchange's table).
            ("fmi2EnterEventMode", NONE, |f, _| {
                f.lib.fmi2EnterEventMode(f.c)
            }),
            ("fmi2NewDiscreteStates", NONE, |f, _| {
                let mut info: fmi2EventInfo = std::mem::zeroed();
                f.lib.fmi2NewDiscreteStates(f.c, &mut info)
            }),
            ("fmi2EnterContinuousTimeMode", NONE, |f, _| {
                f.lib.fmi2EnterContinuousTimeMode(f.c)
            }),
            ("fmi2CompletedIntegratorStep", NONE, |f, _| {
                let (mut a, mut b) = (0, 0);
                f.lib.fmi2CompletedIntegratorStep(f.c, 1, &mut a, &mut b)
            }),
            ("fmi2SetTime", NONE, |f, x| f.lib.fmi2SetTime(f.c, x.time)),
            ("fmi2SetContinuousStates", NONE, |f, _| {
                f.lib.fmi2SetContinuousStates(f.c, [0.0].as_ptr(), 1)
            }),
            ("fmi2GetDerivatives", NONE, |f, _| {
                let mut v = [0.0];
                f.lib.fmi2GetDerivatives(f.c, v.as_mut_ptr(), 1)
            }),
            ("fmi2GetEventIndicators", NONE, |f, _| {
                f.lib.fmi2GetEventIndicators(f.c, ptr::null_mut(), 0)
            }),
            ("fmi2GetContinuousStates", NONE, |f, _| {
                let mut v = [0.0];
                f.lib.fmi2GetContinuousStates(f.c, v.as_mut_ptr(), 1)
            }),
            ("fmi2GetNominalsOfContinuousStates", NONE, |f, _| {
                let mut v = [0.0];
                f.lib
                    .fmi2GetNominalsOfContinuousStates(f.c, v.as_mut_ptr(), 1)
            }),
        ]
    }
}

/// The blowdown with a small cell drained by Euler through a huge valve next to it: check 2
/// refuses the first step (fmi2Discard, stepFailed); atm.pressure is an input.
fn model() -> ModelDir {
    let text = shipped_model("blowdown")
        .replace("method = \"rk4\"", "method = \"euler\"")
        .replace("step = 1e-4", "step = 1e-3")
        + r#"
[[chamber]]
name = "cell"
volume = 1e-6
pressure = 1.1e5
temperature = 300.0
[[valve]]
name = "drain"
from = "cell"
to = "atm"
coefficient = 2.3e-8
"#;
    ModelDir::new("state-machine", &text)
}

/// A fresh instance driven into `state` (None when the library gives no way there).
fn reach(model: &ModelDir, state: u8, x: &Ctx) -> Option<Fmu> {
    let f = Fmu::new(model);
    // SAFETY: FMI calls on a live instance.
    unsafe {
        if state == INSTANTIATED {
            return Some(f);
        }
        assert_eq!(f.lib.fmi2SetupExperiment(f.c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(f.lib.fmi2EnterInitializationMode(f.c), OK);
        if state == INIT_MODE {
            return Some(f);
        }
        assert_eq!(f.lib.fmi2ExitInitializationMode(f.c), OK);
        match state {
            STEP_COMPLETE => Some(f),
            STEP_FAILED | TERMINATED => {
                assert_eq!(f.do_step(0.0, 0.01), DISCARD, "check 2 refuses the step");
                if state == TERMINATED {
                    assert_eq!(f.lib.fmi2Terminate(f.c), OK);
                }
                Some(f)
            }
            ERROR_STATE => {
                // A solver failure: an input so large that the right-hand side overflows.
                assert_eq!(f.set_real(&[x.input_vr], &[1e308]), OK);
                // Pressures grow by ~1e304 Pa per 1e-4 s: a 1 s step overflows them.
                let s = f.do_step(0.0, 1.0);
                if s != ERROR {
                    println!(
                        "no error state: fmi2DoStep(0, 1) → {s}: {:?}",
                        f.logs().last()
                    );
                }
                (s == ERROR).then_some(f)
            }
            _ => unreachable!(),
        }
    }
}

/// What an instance in `state` does next under the standard's usual sequence from there: the
/// statuses and every output read along the way.
fn continuation(f: &Fmu, state: u8) -> Vec<(u32, Vec<u64>)> {
    let mut rows = Vec::new();
    let outputs = |rows: &mut Vec<(u32, Vec<u64>)>| {
        let (s, v) = f.get_real(&f.outputs);
        rows.push((s, v.iter().map(|x| x.to_bits()).collect()));
    };
    // SAFETY: FMI calls on a live instance.
    unsafe {
        if state == INSTANTIATED {
            rows.push((f.lib.fmi2SetupExperiment(f.c, 0, 0.0, 0.0, 0, 0.0), vec![]));
            rows.push((f.lib.fmi2EnterInitializationMode(f.c), vec![]));
        }
        if state <= INIT_MODE {
            outputs(&mut rows);
            rows.push((f.lib.fmi2ExitInitializationMode(f.c), vec![]));
        }
        if state <= STEP_COMPLETE {
            for k in 0..3 {
                rows.push((f.do_step(k as f64 * H, H), vec![]));
                outputs(&mut rows);
            }
            return rows;
        }
        outputs(&mut rows);
        if state == STEP_FAILED {
            let (s, t) = f.last_successful_time();
            rows.push((s, vec![t.to_bits()]));
            rows.push((f.lib.fmi2Terminate(f.c), vec![]));
        }
        rows.push((f.lib.fmi2Reset(f.c), vec![]));
        f.initialize(0.0);
        rows.push((f.do_step(0.0, H), vec![]));
        outputs(&mut rows);
    }
    rows
}

#[test]
fn every_function_in_every_state_follows_the_calling_sequence_table() {
    let model = model();
    let x = Ctx {
        input_vr: value_reference(&model, "atm.pressure"),
        time: 0.0,
    };
    let table = table();
    let counts = check_table(
        &STATES,
        &table,
        &x,
        &["is a Model Exchange function", "fmi2DoStep is synchronous"],
        |state| reach(&model, state, &x),
        continuation,
    );
    let (refused, allowed, unreachable) = (counts.refused, counts.allowed, counts.unreachable);
    println!(
        "{} functions × {} states: {refused} forbidden calls refused with fmi2Error and a \
         logStatusError line naming the state, each instance then continuing bit for bit as \
         an untouched twin; {allowed} allowed calls not refused for their state",
        table.len(),
        STATES.len()
    );
    if !unreachable.is_empty() {
        println!("states not reachable through the ABI here: {unreachable:?}");
    }
    assert!(
        unreachable.is_empty(),
        "the error state must be reachable: {unreachable:?}"
    );
    assert!(refused >= 100, "{refused}");
}

/// An initialized instance and its untouched twin (stepComplete, two steps done).
fn pair(model: &ModelDir) -> (Fmu, Fmu, f64) {
    let (a, b) = (Fmu::new(model), Fmu::new(model));
    let mut t = 0.0;
    for f in [&a, &b] {
        f.initialize(0.0);
        t = 0.0;
        for _ in 0..2 {
            assert_eq!(f.do_step(t, H), OK);
            t += H;
        }
    }
    (a, b, t)
}

fn same_future(a: &Fmu, b: &Fmu, mut t: f64, what: &str) {
    for _ in 0..3 {
        assert_eq!(a.do_step(t, H), b.do_step(t, H), "{what}");
        assert_eq!(a.outputs_bits(), b.outputs_bits(), "{what}: outputs differ");
        t += H;
    }
}

/// A NULL for every pointer argument of every function (the component's NULL included),
/// unknown value references, nvr = 0, fixed parameters after initialization, non-finite values,
/// and fmi2DoStep's arguments: fmi2Error with a message (fmi2OK where the standard says so), and
/// the instance goes on bit for bit as its twin.
#[test]
fn null_pointers_unknown_references_and_bad_values_are_refused() {
    let model = ModelDir::new("bad-args", &shipped_model("blowdown"));
    let d = description(&model);
    let input = d
        .variables
        .iter()
        .find(|v| v.name == "atm.pressure")
        .unwrap()
        .value_reference;
    let fixed: Vec<u32> = d
        .variables
        .iter()
        .filter(|v| v.causality == plenum::cosim::Causality::Parameter)
        .map(|v| v.value_reference)
        .collect();
    let n_vars = d.variables.len() as u32;
    let (f, twin, t) = pair(&model);
    let mut st: fmi2FMUstate = ptr::null_mut();
    assert_eq!(f.get_state(&mut st), OK);
    let blob = f.serialize(st);
    let lib = f.lib;
    let c = f.c;
    let nul = ptr::null_mut::<f64>();
    type Case<'a> = (String, Box<dyn Fn() -> fmi2Status + 'a>, fmi2Status);
    let mut cases: Vec<Case> = Vec::new();
    macro_rules! add {
        ($what:expr, $call:expr, $want:expr $(,)?) => {
            cases.push(($what.to_string(), $call, $want))
        };
    }
    // SAFETY (all calls): FMI calls on a live instance with the bad arguments named.
    unsafe {
        add!(
            "SetDebugLogging categories = NULL, n = 1",
            Box::new(|| lib.fmi2SetDebugLogging(c, 1, 1, ptr::null())),
            ERROR,
        );
        add!(
            "SetDebugLogging categories[0] = NULL",
            Box::new(|| lib.fmi2SetDebugLogging(c, 1, 1, [ptr::null()].as_ptr())),
            ERROR,
        );
        add!(
            "GetReal vr = NULL",
            Box::new(|| lib.fmi2GetReal(c, ptr::null(), 1, [0.0].as_mut_ptr())),
            ERROR,
        );
        add!(
            "GetReal value = NULL",
            Box::new(|| lib.fmi2GetReal(c, [0].as_ptr(), 1, nul)),
            ERROR,
        );
        add!(
            "GetInteger vr = NULL",
            Box::new(|| lib.fmi2GetInteger(c, ptr::null(), 1, [0].as_mut_ptr())),
            ERROR,
        );
        add!(
            "GetInteger value = NULL",
            Box::new(|| lib.fmi2GetInteger(c, [0].as_ptr(), 1, ptr::null_mut())),
            ERROR,
        );
        add!(
            "GetBoolean vr = NULL",
            Box::new(|| lib.fmi2GetBoolean(c, ptr::null(), 1, [0].as_mut_ptr())),
            ERROR,
        );
        add!(
            "GetBoolean value = NULL",
            Box::new(|| lib.fmi2GetBoolean(c, [0].as_ptr(), 1, ptr::null_mut())),
            ERROR,
        );
        add!(
            "GetString vr = NULL",
            Box::new(|| lib.fmi2GetString(c, ptr::null(), 1, [ptr::null()].as_mut_ptr())),
            ERROR,
        );
        add!(
            "GetString value = NULL",
            Box::new(|| lib.fmi2GetString(c, [0].as_ptr(), 1, ptr::null_mut())),
            ERROR,
        );
        add!(
            "SetReal vr = NULL",
            Box::new(|| lib.fmi2SetReal(c, ptr::null(), 1, [1e5].as_ptr())),
            ERROR,
        );
        add!(
            "SetReal value = NULL",
            Box::new(|| lib.fmi2SetReal(c, [input].as_ptr(), 1, ptr::null())),
            ERROR,
        );
        add!(
            "SetInteger vr = NULL",
            Box::new(|| lib.fmi2SetInteger(c, ptr::null(), 1, [0].as_ptr())),
            ERROR,
        );
        add!(
            "SetInteger value = NULL",
            Box::new(|| lib.fmi2SetInteger(c, [0].as_ptr(), 1, ptr::null())),
            ERROR,
        );
        add!(
            "SetBoolean vr = NULL",
            Box::new(|| lib.fmi2SetBoolean(c, ptr::null(), 1, [0].as_ptr())),
            ERROR,
        );
        add!(
            "SetBoolean value = NULL",
            Box::new(|| lib.fmi2SetBoolean(c, [0].as_ptr(), 1, ptr::null())),
            ERROR,
        );
        add!(
            "SetString vr = NULL",
            Box::new(|| lib.fmi2SetString(c, ptr::null(), 1, [c"x".as_ptr()].as_ptr())),
            ERROR,
        );
        add!(
            "SetString value = NULL",
            Box::new(|| lib.fmi2SetString(c, [0].as_ptr(), 1, ptr::null())),
            ERROR,
        );
        add!(
            "GetFMUstate FMUstate = NULL",
            Box::new(|| lib.fmi2GetFMUstate(c, ptr::null_mut())),
            ERROR,
        );
        add!(
            "SetFMUstate FMUstate = NULL",
            Box::new(|| lib.fmi2SetFMUstate(c, ptr::null_mut())),
            ERROR,
        );
        add!(
            "FreeFMUstate FMUstate = NULL",
            Box::new(|| lib.fmi2FreeFMUstate(c, ptr::null_mut())),
            ERROR,
        );
        add!(
            "SerializedFMUstateSize FMUstate = NULL",
            Box::new(|| lib.fmi2SerializedFMUstateSize(c, ptr::null_mut(), &mut 0)),
            ERROR,
        );
        add!(
            "SerializedFMUstateSize size = NULL",
            Box::new(|| lib.fmi2SerializedFMUstateSize(c, st, ptr::null_mut())),
            ERROR,
        );
        add!(
            "SerializeFMUstate FMUstate = NULL",
            Box::new(|| {
                let mut b = vec![0 as c_char; blob.len()];
                lib.fmi2SerializeFMUstate(c, ptr::null_mut(), b.as_mut_ptr(), b.len())
            }),
            ERROR,
        );
        add!(
            "SerializeFMUstate serializedState = NULL",
            Box::new(|| lib.fmi2SerializeFMUstate(c, st, ptr::null_mut(), blob.len())),
            ERROR,
        );
        add!(
            "DeSerializeFMUstate serializedState = NULL",
            Box::new(|| {
                let mut s: fmi2FMUstate = ptr::null_mut();
                lib.fmi2DeSerializeFMUstate(c, ptr::null(), blob.len(), &mut s)
            }),
            ERROR,
        );
        add!(
            "DeSerializeFMUstate FMUstate = NULL",
            Box::new(|| {
                lib.fmi2DeSerializeFMUstate(
                    c,
                    blob.as_ptr() as *const c_char,
                    blob.len(),
                    ptr::null_mut(),
                )
            }),
            ERROR,
        );
        add!(
            "GetDirectionalDerivative all NULL",
            Box::new(|| {
                lib.fmi2GetDirectionalDerivative(
                    c,
                    ptr::null(),
                    1,
                    ptr::null(),
                    1,
                    ptr::null(),
                    ptr::null_mut(),
                )
            }),
            ERROR,
        );
        add!(
            "SetRealInputDerivatives all NULL",
            Box::new(|| {
                lib.fmi2SetRealInputDerivatives(c, ptr::null(), 1, ptr::null(), ptr::null())
            }),
            ERROR,
        );
        add!(
            "GetRealOutputDerivatives all NULL",
            Box::new(|| {
                lib.fmi2GetRealOutputDerivatives(c, ptr::null(), 1, ptr::null(), ptr::null_mut())
            }),
            ERROR,
        );
        add!(
            "GetStatus value = NULL",
            Box::new(|| lib.fmi2GetStatus(c, fmi2StatusKind_fmi2DoStepStatus, ptr::null_mut())),
            ERROR,
        );
        add!(
            "GetRealStatus value = NULL",
            Box::new(|| {
                lib.fmi2GetRealStatus(c, fmi2StatusKind_fmi2LastSuccessfulTime, ptr::null_mut())
            }),
            ERROR,
        );
        add!(
            "GetIntegerStatus value = NULL",
            Box::new(|| {
                lib.fmi2GetIntegerStatus(c, fmi2StatusKind_fmi2DoStepStatus, ptr::null_mut())
            }),
            ERROR,
        );
        add!(
            "GetBooleanStatus value = NULL",
            Box::new(|| {
                lib.fmi2GetBooleanStatus(c, fmi2StatusKind_fmi2Terminated, ptr::null_mut())
            }),
            ERROR,
        );
        add!(
            "GetStringStatus value = NULL",
            Box::new(|| {
                lib.fmi2GetStringStatus(c, fmi2StatusKind_fmi2PendingStatus, ptr::null_mut())
            }),
            ERROR,
        );
        add!(
            "NewDiscreteStates eventInfo = NULL",
            Box::new(|| lib.fmi2NewDiscreteStates(c, ptr::null_mut())),
            ERROR,
        );
        add!(
            "CompletedIntegratorStep outputs = NULL",
            Box::new(|| lib.fmi2CompletedIntegratorStep(c, 1, ptr::null_mut(), ptr::null_mut())),
            ERROR,
        );
        add!(
            "SetContinuousStates x = NULL",
            Box::new(|| lib.fmi2SetContinuousStates(c, ptr::null(), 1)),
            ERROR,
        );
        for (what, call) in [
            ("GetDerivatives", lib.fmi2GetDerivatives.as_ref().unwrap()),
            (
                "GetEventIndicators",
                lib.fmi2GetEventIndicators.as_ref().unwrap(),
            ),
            (
                "GetContinuousStates",
                lib.fmi2GetContinuousStates.as_ref().unwrap(),
            ),
            (
                "GetNominalsOfContinuousStates",
                lib.fmi2GetNominalsOfContinuousStates.as_ref().unwrap(),
            ),
        ] {
            let call = *call;
            add!(
                &format!("{what} = NULL"),
                Box::new(move || call(c, ptr::null_mut(), 1)),
                ERROR,
            );
        }
        // nvr = 0: nothing to do, fmi2OK, whatever the pointers.
        add!(
            "GetReal nvr = 0, NULL arrays",
            Box::new(|| lib.fmi2GetReal(c, ptr::null(), 0, nul)),
            OK,
        );
        add!(
            "SetReal nvr = 0, NULL arrays",
            Box::new(|| lib.fmi2SetReal(c, ptr::null(), 0, ptr::null())),
            OK,
        );
        add!(
            "GetInteger nvr = 0",
            Box::new(|| lib.fmi2GetInteger(c, ptr::null(), 0, ptr::null_mut())),
            OK,
        );
        add!(
            "SetBoolean nvr = 0",
            Box::new(|| lib.fmi2SetBoolean(c, ptr::null(), 0, ptr::null())),
            OK,
        );
        // Unknown value references.
        for vr in [n_vars, n_vars + 1, 99_999, u32::MAX] {
            add!(
                &format!("GetReal vr = {vr}"),
                Box::new(move || lib.fmi2GetReal(c, [0, vr].as_ptr(), 2, [0.0; 2].as_mut_ptr())),
                ERROR,
            );
            add!(
                &format!("SetReal vr = {vr}"),
                Box::new(move || lib.fmi2SetReal(c, [input, vr].as_ptr(), 2, [2e5, 1.0].as_ptr())),
                ERROR,
            );
            add!(
                &format!("GetInteger vr = {vr}"),
                Box::new(move || lib.fmi2GetInteger(c, [vr].as_ptr(), 1, [0].as_mut_ptr())),
                ERROR,
            );
        }
        // Fixed parameters after initialization (every one of them, each with its own value).
        for &vr in &fixed {
            add!(
                &format!("SetReal of fixed parameter vr {vr} in stepComplete"),
                Box::new(move || {
                    let mut v = [0.0];
                    lib.fmi2GetReal(c, [vr].as_ptr(), 1, v.as_mut_ptr());
                    lib.fmi2SetReal(c, [vr].as_ptr(), 1, v.as_ptr())
                }),
                ERROR,
            );
        }
        // Non-finite values.
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -f64::NAN] {
            add!(
                &format!("SetReal input = {x}"),
                Box::new(move || lib.fmi2SetReal(c, [input].as_ptr(), 1, [x].as_ptr())),
                ERROR,
            );
            add!(
                &format!("DoStep h = {x}"),
                Box::new(move || lib.fmi2DoStep(c, t, x, 1)),
                ERROR,
            );
            add!(
                &format!("DoStep currentCommunicationPoint = {x}"),
                Box::new(move || lib.fmi2DoStep(c, x, H, 1)),
                ERROR,
            );
        }
        // fmi2DoStep's arguments.
        for (what, cur, h) in [
            ("negative step", t, -H),
            ("tiny negative step", t, -1e-300),
            ("communication point ahead by 1e-9 s", t + 1e-9, H),
            ("communication point behind by one step", t - H, H),
            ("communication point 0 (a restart)", 0.0, H),
            ("communication point far ahead", 1e6, H),
        ] {
            add!(
                &format!("DoStep {what}"),
                Box::new(move || lib.fmi2DoStep(c, cur, h, 1)),
                ERROR,
            );
        }
        // A zero step: fmi2Error and nothing changes (FMI 2.0.4 §4.2.2: communicationStepSize
        // "must be > 0.0"; a master that never advances cannot spin on fmi2OK).
        add!(
            "DoStep h = 0",
            Box::new(move || lib.fmi2DoStep(c, t, 0.0, 1)),
            ERROR,
        );
        add!(
            "DoStep h = -0.0",
            Box::new(move || lib.fmi2DoStep(c, t, -0.0, 1)),
            ERROR,
        );
    }
    let mut refused = 0;
    let n_cases = cases.len();
    for (what, call, want) in &cases {
        let n = f.logs().len();
        let before = f.outputs_bits();
        let status = call();
        assert_eq!(status, *want, "{what}");
        let logs = f.logs();
        if *want == ERROR {
            let line = logs[n..]
                .iter()
                .find(|r| r.status == ERROR as i32 && r.category == "logStatusError")
                .unwrap_or_else(|| panic!("{what}: no error message: {:?}", &logs[n..]));
            assert_eq!(line.format, "%s");
            println!("{what}: fmi2Error, {}", line.text);
            refused += 1;
        } else {
            println!("{what}: fmi2OK");
        }
        assert_eq!(f.outputs_bits(), before, "{what} changed an output");
    }
    // NULL component: fmi2Error for every function that takes one (no logger to call).
    let null = ptr::null_mut();
    // SAFETY: FMI calls with a NULL component, which the library must refuse.
    let null_component = unsafe {
        [
            lib.fmi2SetDebugLogging(null, 0, 0, ptr::null()),
            lib.fmi2SetupExperiment(null, 0, 0.0, 0.0, 0, 0.0),
            lib.fmi2EnterInitializationMode(null),
            lib.fmi2ExitInitializationMode(null),
            lib.fmi2Terminate(null),
            lib.fmi2Reset(null),
            lib.fmi2GetReal(null, [0].as_ptr(), 1, [0.0].as_mut_ptr()),
            lib.fmi2SetReal(null, [0].as_ptr(), 1, [0.0].as_ptr()),
            lib.fmi2GetFMUstate(null, &mut ptr::null_mut()),
            lib.fmi2SetFMUstate(null, st),
            lib.fmi2FreeFMUstate(null, &mut ptr::null_mut()),
            lib.fmi2SerializedFMUstateSize(null, st, &mut 0),
            lib.fmi2DeSerializeFMUstate(
                null,
                blob.as_ptr() as *const c_char,
                blob.len(),
                &mut ptr::null_mut(),
            ),
            lib.fmi2DoStep(null, 0.0, H, 1),
            lib.fmi2CancelStep(null),
            lib.fmi2GetStatus(null, 0, &mut 0),
            lib.fmi2GetRealStatus(null, 2, &mut 0.0),
            lib.fmi2GetBooleanStatus(null, 3, &mut 0),
            lib.fmi2EnterEventMode(null),
            lib.fmi2SetTime(null, 0.0),
        ]
    };
    assert!(
        null_component.iter().all(|&s| s == ERROR),
        "{null_component:?}"
    );
    // fmi2FreeInstance(NULL) does nothing (and does not crash).
    // SAFETY: the standard allows a NULL component here.
    unsafe { lib.fmi2FreeInstance(null) };
    drop(cases);
    assert_eq!(f.free_state(&mut st), OK);
    same_future(&f, &twin, t, "after the bad calls");
    println!(
        "{} calls: {refused} refused with fmi2Error and a message, {} answered fmi2OK as the \
         standard says; {} functions refuse a NULL component; the instance then steps bit for \
         bit as its twin",
        n_cases,
        n_cases - refused,
        null_component.len()
    );
}

/// Non-finite values in initialization mode and fmi2SetupExperiment.
#[test]
fn non_finite_times_and_parameters_are_refused_before_initialization_ends() {
    let model = ModelDir::new("nonfinite", &shipped_model("blowdown"));
    let f = Fmu::new(&model);
    let twin = Fmu::new(&model);
    let p0 = f.n_outputs as u32;
    // SAFETY: FMI calls on live instances.
    unsafe {
        for (what, start, stop_defined, stop) in [
            ("startTime NaN", f64::NAN, 0, 0.0),
            ("startTime inf", f64::INFINITY, 0, 0.0),
            ("stopTime NaN", 0.0, 1, f64::NAN),
            ("stopTime -inf", 0.0, 1, f64::NEG_INFINITY),
            ("stopTime before startTime", 1.0, 1, 0.5),
        ] {
            let n = f.logs().len();
            assert_eq!(
                f.lib
                    .fmi2SetupExperiment(f.c, 0, 0.0, start, stop_defined, stop),
                ERROR,
                "{what}"
            );
            let line = f.logs()[n..]
                .iter()
                .find(|r| r.status == ERROR as i32)
                .cloned()
                .expect("message");
            println!("SetupExperiment {what}: fmi2Error, {}", line.text);
        }
        assert_eq!(f.lib.fmi2SetupExperiment(f.c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(f.lib.fmi2EnterInitializationMode(f.c), OK);
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(f.set_real(&[p0], &[x]), ERROR, "parameter = {x}");
        }
        assert_eq!(f.lib.fmi2ExitInitializationMode(f.c), OK);
    }
    twin.initialize(0.0);
    same_future(&f, &twin, 0.0, "after refused non-finite values");
    println!("non-finite parameters refused in initialization mode; the run is the twin's");
}
