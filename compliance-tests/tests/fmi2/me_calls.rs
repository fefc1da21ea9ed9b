//! Bad calls in Model Exchange, as `state_machine.rs` and `abi.rs` for Co-Simulation:
//! every fmi2 function called in every Model Exchange state against the standard's
//! calling-sequence table written out here as data (FMI 2.0.4 §3.2.3); a NULL for every pointer
//! argument of the Model Exchange functions, wrong lengths, non-finite states and times,
//! knowns and unknowns of the wrong kind; states of the other interface and damaged Model
//! Exchange states. A refused call returns fmi2Error with a logger message, and the instance
//! then goes on exactly as a twin that never saw the call. Also: store/restore and
//! serialization are bit-exact in Model Exchange.

use std::ptr;

use compliance_tests::*;

use crate::calling_sequence::{Row, check_table, description, value_reference};

const INSTANTIATED: u8 = 1;
const INIT_MODE: u8 = 2;
const EVENT_MODE: u8 = 4;
const CONT_MODE: u8 = 8;
const TERMINATED: u8 = 16;
const ANY: u8 = INSTANTIATED | INIT_MODE | EVENT_MODE | CONT_MODE | TERMINATED;
const READ: u8 = INIT_MODE | EVENT_MODE | CONT_MODE | TERMINATED;
const NONE: u8 = 0;

/// The states of Model Exchange's table. The error state is left out: no call of a Model
/// Exchange instance of a valid model leads there (its event handling cannot fail without
/// `[sensitivities]`, which Model Exchange does not offer); fatal needs an internal error.
const STATES: [(u8, &str); 5] = [
    (INSTANTIATED, "instantiated"),
    (INIT_MODE, "initializationMode"),
    (EVENT_MODE, "eventMode"),
    (CONT_MODE, "continuousTimeMode"),
    (TERMINATED, "terminated"),
];

/// The blowdown's Euler step (its output interval).
const H: f64 = 1e-3;

struct Ctx {
    input_vr: u32,
    /// The model's number of continuous states and its initial state vector.
    n: usize,
    x0: Vec<f64>,
}

fn model() -> ModelDir {
    ModelDir::new("me-calls", &shipped_model("blowdown"))
}

fn ctx(model: &ModelDir) -> Ctx {
    let loaded = plenum::model::parse_str(&model.text, "m.toml", &[]).expect("model");
    let sim = plenum::model::build_simulation(&loaded.spec, None).expect("sim");
    Ctx {
        input_vr: value_reference(model, "atm.pressure"),
        n: description(model).states.len(),
        x0: sim.y.clone(),
    }
}

/// The FMI 2.0.4 Model Exchange calling-sequence table (§3.2.3): function, states in which it
/// may be called, a call with valid arguments.
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
            ("fmi2Terminate", EVENT_MODE | CONT_MODE, |f, _| {
                f.lib.fmi2Terminate(f.c)
            }),
            ("fmi2Reset", ANY, |f, _| f.lib.fmi2Reset(f.c)),
            ("fmi2GetReal", READ, |f, _| f.get_real(&[0]).0),
            ("fmi2GetInteger", READ, |f, _| {
                f.lib.fmi2GetInteger(f.c, ptr::null(), 0, [0].as_mut_ptr())
            }),
            ("fmi2GetBoolean", READ, |f, _| {
                f.lib.fmi2GetBoolean(f.c, ptr::null(), 0, [0].as_mut_ptr())
            }),
            ("fmi2GetString", READ, |f, _| {
                f.lib
                    .fmi2GetString(f.c, ptr::null(), 0, [ptr::null()].as_mut_ptr())
            }),
            (
                "fmi2SetReal",
                INSTANTIATED | INIT_MODE | EVENT_MODE | CONT_MODE,
                |f, x| f.set_real(&[x.input_vr], &[101325.0]),
            ),
            (
                "fmi2SetInteger",
                INSTANTIATED | INIT_MODE | EVENT_MODE | CONT_MODE,
                |f, _| f.lib.fmi2SetInteger(f.c, ptr::null(), 0, ptr::null()),
            ),
            (
                "fmi2SetBoolean",
                INSTANTIATED | INIT_MODE | EVENT_MODE | CONT_MODE,
                |f, _| f.lib.fmi2SetBoolean(f.c, ptr::null(), 0, ptr::null()),
            ),
            (
                "fmi2SetString",
                INSTANTIATED | INIT_MODE | EVENT_MODE | CONT_MODE,
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
            ("fmi2GetDirectionalDerivative", READ, |f, _| {
                f.lib.fmi2GetDirectionalDerivative(
                    f.c,
                    ptr::null(),
                    0,
                    ptr::null(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                )
            }),
            ("fmi2EnterEventMode", EVENT_MODE | CONT_MODE, |f, _| {
                f.lib.fmi2EnterEventMode(f.c)
            }),
            ("fmi2NewDiscreteStates", EVENT_MODE, |f, _| {
                let mut info: fmi2EventInfo = std::mem::zeroed();
                f.lib.fmi2NewDiscreteStates(f.c, &mut info)
            }),
            ("fmi2EnterContinuousTimeMode", EVENT_MODE, |f, _| {
                f.lib.fmi2EnterContinuousTimeMode(f.c)
            }),
            ("fmi2CompletedIntegratorStep", CONT_MODE, |f, _| {
                let (mut a, mut b) = (0, 0);
                f.lib.fmi2CompletedIntegratorStep(f.c, 1, &mut a, &mut b)
            }),
            ("fmi2SetTime", EVENT_MODE | CONT_MODE, |f, _| {
                f.lib.fmi2SetTime(f.c, 0.0)
            }),
            ("fmi2SetContinuousStates", CONT_MODE, |f, x| {
                f.lib.fmi2SetContinuousStates(f.c, x.x0.as_ptr(), x.n)
            }),
            (
                "fmi2GetDerivatives",
                EVENT_MODE | CONT_MODE | TERMINATED,
                |f, x| f.derivatives(x.n).0,
            ),
            ("fmi2GetEventIndicators", READ, |f, _| {
                f.lib.fmi2GetEventIndicators(f.c, ptr::null_mut(), 0)
            }),
            ("fmi2GetContinuousStates", READ, |f, x| {
                let mut v = vec![0.0; x.n];
                f.lib.fmi2GetContinuousStates(f.c, v.as_mut_ptr(), x.n)
            }),
            (
                "fmi2GetNominalsOfContinuousStates",
                INSTANTIATED | EVENT_MODE | CONT_MODE | TERMINATED,
                |f, x| {
                    let mut v = vec![0.0; x.n];
                    f.lib
                        .fmi2GetNominalsOfContinuousStates(f.c, v.as_mut_ptr(), x.n)
                },
            ),
            // Co-Simulation's own functions: not in the Model Exchange table at all.
            ("fmi2SetRealInputDerivatives", NONE, |f, x| {
                f.lib.fmi2SetRealInputDerivatives(
                    f.c,
                    [x.input_vr].as_ptr(),
                    1,
                    [1].as_ptr(),
                    [0.0].as_ptr(),
                )
            }),
            ("fmi2GetRealOutputDerivatives", NONE, |f, _| {
                let mut v = [0.0];
                f.lib.fmi2GetRealOutputDerivatives(
                    f.c,
                    [1u32].as_ptr(),
                    1,
                    [1].as_ptr(),
                    v.as_mut_ptr(),
                )
            }),
            ("fmi2DoStep", NONE, |f, _| f.do_step(0.0, H)),
            ("fmi2CancelStep", NONE, |f, _| f.lib.fmi2CancelStep(f.c)),
            ("fmi2GetStatus", NONE, |f, _| {
                let mut s = 0;
                f.lib
                    .fmi2GetStatus(f.c, fmi2StatusKind_fmi2DoStepStatus, &mut s)
            }),
            ("fmi2GetRealStatus", NONE, |f, _| f.last_successful_time().0),
            ("fmi2GetIntegerStatus", NONE, |f, _| {
                let mut v = 0;
                f.lib
                    .fmi2GetIntegerStatus(f.c, fmi2StatusKind_fmi2DoStepStatus, &mut v)
            }),
            ("fmi2GetBooleanStatus", NONE, |f, _| f.terminated().0),
            ("fmi2GetStringStatus", NONE, |f, _| {
                let mut v: fmi2String = ptr::null();
                f.lib
                    .fmi2GetStringStatus(f.c, fmi2StatusKind_fmi2PendingStatus, &mut v)
            }),
        ]
    }
}

/// A fresh Model Exchange instance driven into `state`.
fn reach(model: &ModelDir, state: u8) -> Fmu {
    let f = Fmu::model_exchange(model);
    // SAFETY: FMI calls on a live instance.
    unsafe {
        if state == INSTANTIATED {
            return f;
        }
        assert_eq!(f.lib.fmi2SetupExperiment(f.c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(f.lib.fmi2EnterInitializationMode(f.c), OK);
        if state == INIT_MODE {
            return f;
        }
        assert_eq!(f.lib.fmi2ExitInitializationMode(f.c), OK);
        if state == EVENT_MODE {
            return f;
        }
        f.new_discrete_states();
        assert_eq!(f.lib.fmi2EnterContinuousTimeMode(f.c), OK);
        if state == TERMINATED {
            assert_eq!(f.lib.fmi2Terminate(f.c), OK);
        }
    }
    f
}

/// What an instance in `state` does next under the standard's usual sequence from there: the
/// statuses, every output and every state read along the way.
fn continuation(f: &Fmu, state: u8, x: &Ctx) -> Vec<(u32, Vec<u64>)> {
    let mut rows = Vec::new();
    let read = |rows: &mut Vec<(u32, Vec<u64>)>| {
        let (s, v) = f.get_real(&f.outputs);
        rows.push((s, v.iter().map(|x| x.to_bits()).collect()));
    };
    let mut t = 0.0;
    // SAFETY: FMI calls on a live instance.
    unsafe {
        if state == TERMINATED {
            read(&mut rows);
            rows.push((f.lib.fmi2Reset(f.c), vec![]));
            f.initialize_model_exchange(0.0);
        }
        if state == INSTANTIATED {
            rows.push((f.lib.fmi2SetupExperiment(f.c, 0, 0.0, 0.0, 0, 0.0), vec![]));
            rows.push((f.lib.fmi2EnterInitializationMode(f.c), vec![]));
        }
        if state <= INIT_MODE {
            read(&mut rows);
            rows.push((f.lib.fmi2ExitInitializationMode(f.c), vec![]));
        }
        if state <= EVENT_MODE {
            let info = f.new_discrete_states();
            rows.push((info.terminateSimulation as u32, vec![]));
            rows.push((f.lib.fmi2EnterContinuousTimeMode(f.c), vec![]));
        }
    }
    for _ in 0..3 {
        let (s, _) = f.euler_step(&mut t, H, x.n);
        read(&mut rows);
        rows.push((s, f.states(x.n).iter().map(|v| v.to_bits()).collect()));
    }
    rows
}

#[test]
fn every_function_in_every_model_exchange_state_follows_the_calling_sequence_table() {
    let model = model();
    let x = ctx(&model);
    let table = table();
    let counts = check_table(
        &STATES,
        &table,
        &x,
        &["is a Co-Simulation function"],
        |state| Some(reach(&model, state)),
        |f, state| continuation(f, state, &x),
    );
    let (refused, allowed) = (counts.refused, counts.allowed);
    assert!(counts.unreachable.is_empty(), "{:?}", counts.unreachable);
    println!(
        "{} functions × {} Model Exchange states: {refused} forbidden calls refused with \
         fmi2Error and a logStatusError line naming the state (or the other interface), each \
         instance then continuing bit for bit as an untouched twin; {allowed} allowed calls not \
         refused for their state",
        table.len(),
        STATES.len()
    );
    assert!(refused >= 80, "{refused}");
}

/// The Model Exchange functions with a NULL for every pointer argument, wrong lengths,
/// non-finite states and times, knowns and unknowns of the wrong kind, locals and fixed
/// parameters set in continuous-time mode: fmi2Error with a message, and the instance goes on
/// bit for bit as its twin.
#[test]
fn model_exchange_bad_arguments_are_refused() {
    let text = shipped_model("projectile");
    let model = ModelDir::new("me-bad-args", &text);
    let d = description(&model);
    let n = d.states.len();
    let k = d.event_indicators;
    let der = d.derivatives[0];
    let state = d.states[0];
    let param = d
        .variables
        .iter()
        .find(|v| v.causality == plenum::cosim::Causality::Parameter)
        .unwrap()
        .value_reference;
    let make = || {
        let f = Fmu::model_exchange(&model);
        f.initialize_model_exchange(0.0);
        let mut t = 0.0;
        for _ in 0..3 {
            f.euler_step(&mut t, 1e-6, n);
        }
        (f, t)
    };
    let (f, t) = make();
    let (twin, _) = make();
    let lib = f.lib;
    let c = f.c;
    let x = f.states(n);
    let mut bad = x.clone();
    bad[1] = f64::NAN;
    let mut inf = x.clone();
    inf[0] = f64::INFINITY;
    type Case<'a> = (&'static str, Box<dyn Fn() -> fmi2Status + 'a>, &'static str);
    let mut out = vec![0.0; n + 1];
    let mut z = vec![0.0; k + 1];
    let outp = out.as_mut_ptr();
    let zp = z.as_mut_ptr();
    // SAFETY (all calls): FMI calls on a live instance with the bad arguments named.
    let cases: Vec<Case> = unsafe {
        vec![
            (
                "SetContinuousStates x = NULL",
                Box::new(|| lib.fmi2SetContinuousStates(c, ptr::null(), n)),
                "x[] is NULL",
            ),
            (
                "SetContinuousStates nx too small",
                Box::new(|| lib.fmi2SetContinuousStates(c, x.as_ptr(), n - 1)),
                "this model has",
            ),
            (
                "SetContinuousStates NaN",
                Box::new(|| lib.fmi2SetContinuousStates(c, bad.as_ptr(), n)),
                "states must be finite",
            ),
            (
                "SetContinuousStates infinite",
                Box::new(|| lib.fmi2SetContinuousStates(c, inf.as_ptr(), n)),
                "states must be finite",
            ),
            (
                "GetContinuousStates x = NULL",
                Box::new(|| lib.fmi2GetContinuousStates(c, ptr::null_mut(), n)),
                "x[] is NULL",
            ),
            (
                "GetContinuousStates nx too large",
                Box::new(|| lib.fmi2GetContinuousStates(c, outp, n + 1)),
                "this model has",
            ),
            (
                "GetDerivatives derivatives = NULL",
                Box::new(|| lib.fmi2GetDerivatives(c, ptr::null_mut(), n)),
                "derivatives[] is NULL",
            ),
            (
                "GetDerivatives nx = 0",
                Box::new(|| lib.fmi2GetDerivatives(c, outp, 0)),
                "this model has",
            ),
            (
                "GetNominals x_nominal = NULL",
                Box::new(|| lib.fmi2GetNominalsOfContinuousStates(c, ptr::null_mut(), n)),
                "x_nominal[] is NULL",
            ),
            (
                "GetEventIndicators NULL",
                Box::new(|| lib.fmi2GetEventIndicators(c, ptr::null_mut(), k)),
                "eventIndicators[] is NULL",
            ),
            (
                "GetEventIndicators ni too large",
                Box::new(|| lib.fmi2GetEventIndicators(c, zp, k + 1)),
                "this model has",
            ),
            (
                "SetTime NaN",
                Box::new(|| lib.fmi2SetTime(c, f64::NAN)),
                "time must be finite",
            ),
            (
                "SetTime infinite",
                Box::new(|| lib.fmi2SetTime(c, f64::INFINITY)),
                "time must be finite",
            ),
            (
                "CompletedIntegratorStep enterEventMode = NULL",
                Box::new(|| lib.fmi2CompletedIntegratorStep(c, 1, ptr::null_mut(), &mut 0)),
                "enterEventMode is NULL",
            ),
            (
                "CompletedIntegratorStep terminateSimulation = NULL",
                Box::new(|| lib.fmi2CompletedIntegratorStep(c, 1, &mut 0, ptr::null_mut())),
                "terminateSimulation is NULL",
            ),
            (
                "GetDirectionalDerivative known is a derivative",
                Box::new(|| {
                    lib.fmi2GetDirectionalDerivative(
                        c,
                        [der].as_ptr(),
                        1,
                        [der].as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        outp,
                    )
                }),
                "neither a continuous state nor an input",
            ),
            (
                "GetDirectionalDerivative known is a fixed parameter",
                Box::new(|| {
                    lib.fmi2GetDirectionalDerivative(
                        c,
                        [der].as_ptr(),
                        1,
                        [param].as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        outp,
                    )
                }),
                "neither a continuous state nor an input",
            ),
            (
                "GetDirectionalDerivative unknown is a parameter",
                Box::new(|| {
                    lib.fmi2GetDirectionalDerivative(
                        c,
                        [param].as_ptr(),
                        1,
                        [state].as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        outp,
                    )
                }),
                "neither a state derivative nor an output",
            ),
            (
                "GetDirectionalDerivative dvKnown NaN",
                Box::new(|| {
                    lib.fmi2GetDirectionalDerivative(
                        c,
                        [der].as_ptr(),
                        1,
                        [state].as_ptr(),
                        1,
                        [f64::NAN].as_ptr(),
                        outp,
                    )
                }),
                "must be finite",
            ),
            (
                "GetDirectionalDerivative unknown value reference",
                Box::new(|| {
                    lib.fmi2GetDirectionalDerivative(
                        c,
                        [der].as_ptr(),
                        1,
                        [9999].as_ptr(),
                        1,
                        [1.0].as_ptr(),
                        outp,
                    )
                }),
                "no variable with value reference 9999",
            ),
            (
                "SetReal of a state derivative",
                Box::new(|| lib.fmi2SetReal(c, [der].as_ptr(), 1, [1.0].as_ptr())),
                "is a local variable",
            ),
            (
                "SetReal of a fixed parameter after initialization",
                Box::new(|| lib.fmi2SetReal(c, [param].as_ptr(), 1, [1.0].as_ptr())),
                "fixed parameter",
            ),
        ]
    };
    for (what, call, want) in &cases {
        let n_logs = f.logs().len();
        let status = call();
        let logs = f.logs();
        let line = logs[n_logs..]
            .iter()
            .find(|r| r.status == ERROR as i32)
            .map(|r| r.text.clone())
            .unwrap_or_default();
        println!("{what}: status {status}: {line}");
        assert_eq!(status, ERROR, "{what}");
        assert!(line.contains(want), "{what}: {line:?} lacks {want:?}");
    }
    // The refused calls changed nothing: both go on bit for bit.
    let (mut ta, mut tb) = (t, t);
    for _ in 0..5 {
        let a = f.euler_step(&mut ta, 1e-6, n);
        let b = twin.euler_step(&mut tb, 1e-6, n);
        assert_eq!(a, b);
        assert_eq!(f.outputs_bits(), twin.outputs_bits());
    }
    println!(
        "{} bad Model Exchange calls refused with fmi2Error and a message; the instance went on \
         bit for bit as its twin",
        cases.len()
    );
}

/// States of the other interface and damaged Model Exchange parts are refused by
/// fmi2DeSerializeFMUstate and fmi2SetFMUstate, with a message, and leave the instance as it was.
#[test]
fn states_of_the_other_interface_and_damaged_exchange_parts_are_refused() {
    let model = ModelDir::new("me-states", &shipped_model("projectile"));
    let n = description(&model).states.len();
    let me = Fmu::model_exchange(&model);
    me.initialize_model_exchange(0.0);
    let mut t = 0.0;
    for _ in 0..5 {
        me.euler_step(&mut t, 1e-6, n);
    }
    let cs = Fmu::new(&model);
    cs.initialize(0.0);
    assert_eq!(cs.do_step(0.0, 1e-4), OK);
    let (mut me_state, mut cs_state): (fmi2FMUstate, fmi2FMUstate) =
        (ptr::null_mut(), ptr::null_mut());
    assert_eq!(me.get_state(&mut me_state), OK);
    assert_eq!(cs.get_state(&mut cs_state), OK);
    let me_blob = me.serialize(me_state);
    let cs_blob = cs.serialize(cs_state);
    let before = me.outputs_bits();
    let refused = |f: &Fmu, status: fmi2Status, want: &str, what: &str| {
        let line = f
            .logs()
            .iter()
            .rev()
            .find(|r| r.status == ERROR as i32)
            .map(|r| r.text.clone())
            .unwrap_or_default();
        println!("{what}: status {status}: {line}");
        assert_eq!(status, ERROR, "{what}");
        assert!(line.contains(want), "{what}: {line}");
    };
    let mut s: fmi2FMUstate = ptr::null_mut();
    refused(
        &me,
        me.deserialize(&cs_blob, &mut s),
        "taken by a Co-Simulation instance",
        "CS blob into ME",
    );
    refused(
        &cs,
        cs.deserialize(&me_blob, &mut s),
        "taken by a Model Exchange instance",
        "ME blob into CS",
    );
    refused(
        &me,
        me.set_state(cs_state),
        "taken by a Co-Simulation instance",
        "CS state handle into ME",
    );
    refused(
        &cs,
        cs.set_state(me_state),
        "taken by a Model Exchange instance",
        "ME state handle into CS",
    );
    // The Model Exchange part (the event functions at the last accepted point, one per event
    // function) damaged behind a repaired header: a value too few, a NaN.
    let header = 8
        + 4
        + 4
        + me_blob[12..16]
            .iter()
            .rev()
            .fold(0, |a, &b| a * 256 + b as usize);
    let repaired = |mut body: Vec<u8>| {
        let mut out = me_blob[..header].to_vec();
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        out.append(&mut body);
        out
    };
    let body = me_blob[header + 12..].to_vec();
    // The part is a bincode Vec<Option<f64>> at the body's end: its length (1 byte), then per
    // entry a tag byte and for Some the 8 value bytes, one entry per event function (the
    // projectile's piston: its exit, its stops, its friction's and its cushions' events, the
    // indicators and the ones its structure keeps from firing).
    let events = {
        let loaded = plenum::model::parse_str(&model.text, "m.toml", &[]).expect("model");
        let sim = plenum::model::build_simulation(&loaded.spec, None).expect("sim");
        sim.network.n_events()
    };
    assert!(events > description(&model).event_indicators);
    // Where entry by entry a part starting at c ends on the body's end: its last entry's start.
    let last_entry = |c: usize| {
        let (mut i, mut last) = (c + 1, None);
        for _ in 0..body[c] {
            last = Some(i);
            match body.get(i) {
                Some(0) => i += 1,
                Some(1) => i += 9,
                _ => return None,
            }
        }
        last.filter(|_| i == body.len())
    };
    let (cut, last) = (0..body.len())
        .rev()
        .filter(|&c| body[c] as usize == events)
        .find_map(|c| last_entry(c).map(|l| (c, l)))
        .expect("the Model Exchange part");
    // The last one left off, the length one less.
    let mut fewer = body[..last].to_vec();
    fewer[cut] = (events - 1) as u8;
    refused(
        &me,
        me.deserialize(&repaired(fewer), &mut s),
        &format!("{} event function values for {events}", events - 1),
        "ME part with an event value too few",
    );
    let mut nan = body.clone();
    nan[cut + 2..cut + 10].copy_from_slice(&f64::NAN.to_le_bytes());
    refused(
        &me,
        me.deserialize(&repaired(nan), &mut s),
        "not finite",
        "ME part with a NaN",
    );
    assert!(s.is_null());
    assert_eq!(me.outputs_bits(), before, "the instance is unchanged");
    assert_eq!(me.free_state(&mut me_state), OK);
    assert_eq!(cs.free_state(&mut cs_state), OK);
}

/// The projectile through a forward Euler master: the state taken 0.4 ms before the exit,
/// the run to the exit event and the end, restore and the same steps again, and the state
/// serialized into a fresh instance: every output and state bit for bit.
#[test]
fn model_exchange_store_restore_and_serialization_are_bit_exact() {
    // The run ends at the exit event only when the model file asks for it (docs/fmu.md).
    let text =
        shipped_model("projectile").replacen("[solver]\n", "[solver]\nstop_on_exit = true\n", 1);
    let model = ModelDir::new("me-restore", &text);
    let n = description(&model).states.len();
    let h = 1e-6;
    let run = |f: &Fmu, t: &mut f64| {
        let mut rows = Vec::new();
        for _ in 0..2000 {
            let (s, end) = f.euler_step(t, h, n);
            let mut row = f.outputs_bits();
            row.extend(f.states(n).iter().map(|v| v.to_bits()));
            rows.push((s, row));
            if end {
                break;
            }
        }
        rows
    };
    let a = Fmu::model_exchange(&model);
    a.initialize_model_exchange(0.0);
    let mut t = 0.0;
    for _ in 0..8200 {
        a.euler_step(&mut t, h, n);
    }
    let t_state = t;
    let mut s: fmi2FMUstate = ptr::null_mut();
    assert_eq!(a.get_state(&mut s), OK);
    let first = run(&a, &mut t);
    assert_eq!(a.set_state(s), OK);
    let mut t2 = t_state;
    let again = run(&a, &mut t2);
    let blob = a.serialize(s);
    let b = Fmu::model_exchange(&model);
    b.initialize_model_exchange(0.0);
    let mut s2: fmi2FMUstate = ptr::null_mut();
    assert_eq!(b.deserialize(&blob, &mut s2), OK, "{:?}", b.logs());
    assert_eq!(b.set_state(s2), OK);
    let mut t3 = t_state;
    let fresh = run(&b, &mut t3);
    let exited = a
        .logs()
        .iter()
        .any(|r| r.category == "logEvents" && r.text.contains("exit"));
    println!(
        "state at t = {t_state} s ({} bytes); {} Euler steps to the end of the run at t = {t} s \
         (exit event logged: {exited}); restored and deserialized: bit for bit",
        blob.len(),
        first.len()
    );
    assert!(exited && first.len() < 2000);
    assert_eq!(first, again);
    assert_eq!(first, fresh);
    assert_eq!(a.free_state(&mut s), OK);
    assert_eq!(b.free_state(&mut s2), OK);
}
