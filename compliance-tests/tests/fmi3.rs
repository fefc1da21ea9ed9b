//! Plenum's shared library driven through its fmi3 C functions as an FMI 3.0 importer drives
//! it: every function in every state of the FMI 3.0 Co-Simulation and Model Exchange state
//! machines, against the standard's calling-sequence tables written out here as data
//! (FMI 3.0 §4.2.5 and §3.2.3, restricted to the states this FMU has: Co-Simulation has no
//! Event Mode); NULL pointers, NaN inputs, lengths that do not match, foreign and damaged state
//! blobs. A refused call returns fmi3Error with a logged message, and the instance then goes on
//! exactly as a twin that never saw the call. fmi2 and fmi3 instances live in one process.

use std::ffi::{CStr, CString, c_char, c_void};
use std::path::Path;
use std::ptr;
use std::sync::{Mutex, OnceLock};

use compliance_tests::{ModelDir, library_path, shipped_model};
use fmi_sys::fmi3::*;

const OK: fmi3Status = fmi3Status_fmi3OK;
const ERROR: fmi3Status = fmi3Status_fmi3Error;

static LOGS: Mutex<Vec<(usize, fmi3Status, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn log_message(
    env: fmi3InstanceEnvironment,
    status: fmi3Status,
    _category: fmi3String,
    message: fmi3String,
) {
    // SAFETY: the FMU passes a NUL-terminated message (or NULL).
    let text = if message.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    };
    LOGS.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((env as usize, status, text));
}

fn lib() -> &'static Fmi3Binding {
    static LIB: OnceLock<&'static Fmi3Binding> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: loading the FMU's library; its initializers are Rust's.
        let lib = unsafe { Fmi3Binding::new(library_path()) }.expect("load the library");
        Box::leak(Box::new(lib))
    })
}

/// One fmi3 instance with its own environment (so parallel tests read their own logs).
struct Inst {
    lib: &'static Fmi3Binding,
    c: fmi3Instance,
    env: usize,
}

impl Inst {
    fn new(model: &ModelDir, me: bool) -> Inst {
        static ENV: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1 << 40);
        let env = ENV.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let lib = lib();
        let name = CString::new("fmi3-test").unwrap();
        let token = CString::new(model.guid.clone()).unwrap();
        let path = CString::new(format!(
            "{}{}",
            model.resources.display(),
            std::path::MAIN_SEPARATOR
        ))
        .unwrap();
        // SAFETY: valid strings and callback.
        let c = unsafe {
            if me {
                lib.fmi3InstantiateModelExchange(
                    name.as_ptr(),
                    token.as_ptr(),
                    path.as_ptr(),
                    false,
                    false,
                    env as fmi3InstanceEnvironment,
                    Some(log_message),
                )
            } else {
                lib.fmi3InstantiateCoSimulation(
                    name.as_ptr(),
                    token.as_ptr(),
                    path.as_ptr(),
                    false,
                    false,
                    false,
                    false,
                    ptr::null(),
                    0,
                    env as fmi3InstanceEnvironment,
                    Some(log_message),
                    None,
                )
            }
        };
        assert!(!c.is_null(), "instantiate: {:?}", logs(env));
        Inst { lib, c, env }
    }

    fn errors(&self) -> Vec<String> {
        logs(self.env)
            .into_iter()
            .filter(|(s, _)| *s == ERROR)
            .map(|(_, m)| m)
            .collect()
    }

    fn init(&self) {
        // SAFETY: a live instance.
        unsafe {
            assert_eq!(
                self.lib
                    .fmi3EnterInitializationMode(self.c, false, 0.0, 0.0, false, 0.0),
                OK
            );
            assert_eq!(self.lib.fmi3ExitInitializationMode(self.c), OK);
        }
    }

    fn get(&self, vrs: &[u32]) -> (fmi3Status, Vec<f64>) {
        let mut v = vec![0.0; vrs.len()];
        // SAFETY: matching lengths.
        let s = unsafe {
            self.lib
                .fmi3GetFloat64(self.c, vrs.as_ptr(), vrs.len(), v.as_mut_ptr(), v.len())
        };
        (s, v)
    }

    fn step(&self, t: f64, h: f64) -> (fmi3Status, bool, f64) {
        let (mut ev, mut term, mut early, mut last) = (false, false, false, f64::NAN);
        // SAFETY: valid out pointers.
        let s = unsafe {
            self.lib.fmi3DoStep(
                self.c, t, h, false, &mut ev, &mut term, &mut early, &mut last,
            )
        };
        assert!(
            !ev && !early,
            "eventHandlingNeeded/earlyReturn are never set"
        );
        (s, term, last)
    }
}

impl Drop for Inst {
    fn drop(&mut self) {
        // SAFETY: a live instance, freed once.
        unsafe { self.lib.fmi3FreeInstance(self.c) };
    }
}

/// Every message an FMI 3.0 importer reads is in FMI 3.0's words: no FMI 2.0 function or
/// section cited, the function it is about named once (not "fmi3X: fmi3X: ..."), no run of
/// spaces left by a broken line. Returns how many messages were read.
fn assert_fmi3_words(env: usize) -> usize {
    let logs = logs(env);
    for (_, m) in &logs {
        assert!(
            !m.contains("fmi2"),
            "an FMI 2.0 name in an FMI 3.0 message: {m:?}"
        );
        assert!(
            !m.contains("FMI 2.0"),
            "FMI 2.0 cited in an FMI 3.0 message: {m:?}"
        );
        assert!(!m.contains("  "), "a run of spaces: {m:?}");
        if let Some((function, _)) = m.split_once(": ") {
            assert!(
                !function.starts_with("fmi3") || m.matches(function).count() == 1,
                "{function} named twice: {m:?}"
            );
        }
    }
    logs.len()
}

fn logs(env: usize) -> Vec<(fmi3Status, String)> {
    LOGS.lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|(e, _, _)| *e == env)
        .map(|(_, s, m)| (*s, m.clone()))
        .collect()
}

const INSTANTIATED: u8 = 1;
const INIT_MODE: u8 = 2;
const STEP_OR_EVENT: u8 = 4; // Step Mode (CS) or Event Mode (ME)
const CONT_MODE: u8 = 8; // Continuous-Time Mode (ME only)
const TERMINATED: u8 = 16;
const ANY: u8 = INSTANTIATED | INIT_MODE | STEP_OR_EVENT | CONT_MODE | TERMINATED;
const NONE: u8 = 0;

type Call = fn(&Inst, u32) -> fmi3Status;

/// (function, states that allow it in CS, in ME, a valid call). FMI 3.0 §4.2.5 (CS without
/// Event Mode) and §3.2.3 (ME).
fn table() -> Vec<(&'static str, u8, u8, Call)> {
    let rw_me = INSTANTIATED | INIT_MODE | STEP_OR_EVENT | CONT_MODE;
    let read = INIT_MODE | STEP_OR_EVENT | CONT_MODE | TERMINATED;
    // SAFETY (every closure): FMI calls on a live instance with valid arguments.
    unsafe {
        vec![
            ("fmi3SetDebugLogging", ANY, ANY, |f, _| {
                f.lib.fmi3SetDebugLogging(f.c, false, 0, ptr::null())
            }),
            (
                "fmi3EnterInitializationMode",
                INSTANTIATED,
                INSTANTIATED,
                |f, _| {
                    f.lib
                        .fmi3EnterInitializationMode(f.c, false, 0.0, 0.0, false, 0.0)
                },
            ),
            (
                "fmi3ExitInitializationMode",
                INIT_MODE,
                INIT_MODE,
                |f, _| f.lib.fmi3ExitInitializationMode(f.c),
            ),
            (
                "fmi3Terminate",
                STEP_OR_EVENT,
                STEP_OR_EVENT | CONT_MODE,
                |f, _| f.lib.fmi3Terminate(f.c),
            ),
            ("fmi3Reset", ANY, ANY, |f, _| f.lib.fmi3Reset(f.c)),
            ("fmi3GetFloat64", read, read, |f, _| f.get(&[0]).0),
            (
                "fmi3SetFloat64",
                INSTANTIATED | INIT_MODE | STEP_OR_EVENT,
                rw_me,
                |f, vr| f.lib.fmi3SetFloat64(f.c, &vr, 1, &101325.0, 1),
            ),
            ("fmi3GetInt32 (no such variable)", NONE, NONE, |f, _| {
                f.lib.fmi3GetInt32(f.c, &0, 1, &mut 0, 1)
            }),
            ("fmi3GetFMUState", ANY, ANY, |f, _| {
                let mut s: fmi3FMUState = ptr::null_mut();
                let r = f.lib.fmi3GetFMUState(f.c, &mut s);
                f.lib.fmi3FreeFMUState(f.c, &mut s);
                r
            }),
            ("fmi3DoStep", STEP_OR_EVENT, NONE, |f, _| {
                let (mut a, mut b, mut c, mut d) = (false, false, false, 0.0);
                f.lib
                    .fmi3DoStep(f.c, 0.0, 1e-4, false, &mut a, &mut b, &mut c, &mut d)
            }),
            ("fmi3EnterStepMode", NONE, NONE, |f, _| {
                f.lib.fmi3EnterStepMode(f.c)
            }),
            (
                "fmi3EnterEventMode",
                NONE,
                STEP_OR_EVENT | CONT_MODE,
                |f, _| f.lib.fmi3EnterEventMode(f.c),
            ),
            (
                "fmi3EnterContinuousTimeMode",
                NONE,
                STEP_OR_EVENT,
                |f, _| f.lib.fmi3EnterContinuousTimeMode(f.c),
            ),
            ("fmi3UpdateDiscreteStates", NONE, STEP_OR_EVENT, |f, _| {
                let (mut a, mut b, mut c, mut d, mut e, mut t) =
                    (false, false, false, false, false, 0.0);
                f.lib
                    .fmi3UpdateDiscreteStates(f.c, &mut a, &mut b, &mut c, &mut d, &mut e, &mut t)
            }),
            ("fmi3CompletedIntegratorStep", NONE, CONT_MODE, |f, _| {
                let (mut a, mut b) = (false, false);
                f.lib.fmi3CompletedIntegratorStep(f.c, true, &mut a, &mut b)
            }),
            ("fmi3SetTime", NONE, STEP_OR_EVENT | CONT_MODE, |f, _| {
                f.lib.fmi3SetTime(f.c, 0.0)
            }),
            (
                "fmi3GetContinuousStateDerivatives",
                NONE,
                STEP_OR_EVENT | CONT_MODE | TERMINATED,
                |f, _| {
                    let mut n = 0;
                    assert_eq!(f.lib.fmi3GetNumberOfContinuousStates(f.c, &mut n), OK);
                    let mut dx = vec![0.0; n.max(1)];
                    f.lib
                        .fmi3GetContinuousStateDerivatives(f.c, dx.as_mut_ptr(), n.max(1))
                },
            ),
            ("fmi3EnterConfigurationMode", NONE, NONE, |f, _| {
                f.lib.fmi3EnterConfigurationMode(f.c)
            }),
            ("fmi3GetAdjointDerivative", NONE, NONE, |f, _| {
                f.lib.fmi3GetAdjointDerivative(
                    f.c,
                    ptr::null(),
                    0,
                    ptr::null(),
                    0,
                    ptr::null(),
                    0,
                    ptr::null_mut(),
                    0,
                )
            }),
        ]
    }
}

/// An instance in `state`, or None when the interface has no such state.
fn reach(model: &ModelDir, me: bool, state: u8) -> Option<Inst> {
    let f = Inst::new(model, me);
    // SAFETY: valid calls on a live instance.
    unsafe {
        match state {
            INSTANTIATED => {}
            INIT_MODE => {
                assert_eq!(
                    f.lib
                        .fmi3EnterInitializationMode(f.c, false, 0.0, 0.0, false, 0.0),
                    OK
                )
            }
            STEP_OR_EVENT => f.init(),
            CONT_MODE if me => {
                f.init();
                assert_eq!(f.lib.fmi3EnterContinuousTimeMode(f.c), OK);
            }
            CONT_MODE => return None,
            TERMINATED => {
                f.init();
                assert_eq!(f.lib.fmi3Terminate(f.c), OK);
            }
            _ => unreachable!(),
        }
    }
    Some(f)
}

fn input_vr(model: &ModelDir) -> u32 {
    let loaded = plenum::model::parse_str(&model.text, "m.toml", &[]).expect("model");
    let d = plenum::cosim::describe(&loaded);
    d.variables
        .iter()
        .find(|v| v.name == "atm.pressure")
        .expect("input atm.pressure")
        .value_reference
}

#[test]
fn every_fmi3_function_in_every_state_follows_the_calling_sequence_tables() {
    let model = ModelDir::new("fmi3-calls", &shipped_model("blowdown"));
    let vr = input_vr(&model);
    let states = [
        (INSTANTIATED, "Instantiated"),
        (INIT_MODE, "Initialization Mode"),
        (STEP_OR_EVENT, "Step Mode / Event Mode"),
        (CONT_MODE, "Continuous-Time Mode"),
        (TERMINATED, "Terminated"),
    ];
    let (mut allowed, mut refused, mut messages) = (0, 0, 0);
    for me in [false, true] {
        for (name, cs_states, me_states, call) in table() {
            let ok_in = if me { me_states } else { cs_states };
            for (state, state_name) in states {
                let Some(f) = reach(&model, me, state) else {
                    continue;
                };
                let status = call(&f, vr);
                messages += assert_fmi3_words(f.env);
                let what = format!("{} {name} in {state_name}", if me { "ME" } else { "CS" });
                if ok_in & state != 0 {
                    assert_eq!(status, OK, "{what}: {:?}", f.errors());
                    allowed += 1;
                } else {
                    assert_eq!(status, ERROR, "{what}");
                    let errors = f.errors();
                    assert!(
                        errors
                            .iter()
                            .any(|e| e.starts_with(name.split(' ').next().unwrap())),
                        "{what}: no error naming the function: {errors:?}"
                    );
                    refused += 1;
                }
            }
        }
    }
    println!(
        "fmi3 calling sequences (CS and ME, blowdown): {allowed} calls allowed and OK, {refused} \
         refused with fmi3Error and a message naming the function; {messages} messages in FMI \
         3.0's words"
    );
    // Step Mode: a Co-Simulation instance has no Event Mode to enter it from; a Model Exchange
    // instance has no Step Mode at all, and is told so.
    for (me, says) in [(false, "no Event Mode"), (true, "a Co-Simulation function")] {
        let f = reach(&model, me, STEP_OR_EVENT).expect("step or event mode");
        // SAFETY: a live instance.
        assert_eq!(unsafe { f.lib.fmi3EnterStepMode(f.c) }, ERROR);
        let errors = f.errors();
        println!("{}: {errors:?}", if me { "ME" } else { "CS" });
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("fmi3EnterStepMode: ") && e.contains(says))
        );
    }
}

#[test]
fn a_refused_call_leaves_the_instance_as_its_twin() {
    let model = ModelDir::new("fmi3-twin", &shipped_model("blowdown"));
    let vr = input_vr(&model);
    let (a, b) = (Inst::new(&model, false), Inst::new(&model, false));
    a.init();
    b.init();
    let vrs: Vec<u32> = (0..9).collect();
    // SAFETY: bad calls on a live instance: each must be refused without effect.
    unsafe {
        let nan = f64::NAN;
        let bad: Vec<(&str, fmi3Status)> = vec![
            ("NaN input", a.lib.fmi3SetFloat64(a.c, &vr, 1, &nan, 1)),
            (
                "NULL values",
                a.lib.fmi3SetFloat64(a.c, &vr, 1, ptr::null(), 1),
            ),
            (
                "NULL value references",
                a.lib.fmi3GetFloat64(a.c, ptr::null(), 1, &mut 0.0, 1),
            ),
            (
                "nValues ≠ nValueReferences",
                a.lib.fmi3GetFloat64(a.c, &0, 1, [0.0; 2].as_mut_ptr(), 2),
            ),
            ("unknown value reference", a.get(&[1_000_000]).0),
            ("step from the wrong time", a.step(0.5, 1e-2).0),
            ("negative step", a.step(0.0, -1e-2).0),
            ("NaN step", a.step(0.0, nan).0),
            ("NULL eventHandlingNeeded", {
                let (mut b2, mut c2, mut d2) = (false, false, 0.0);
                a.lib.fmi3DoStep(
                    a.c,
                    0.0,
                    1e-2,
                    false,
                    ptr::null_mut(),
                    &mut b2,
                    &mut c2,
                    &mut d2,
                )
            }),
            ("NULL lastSuccessfulTime", {
                let (mut a2, mut b2, mut c2) = (false, false, false);
                a.lib.fmi3DoStep(
                    a.c,
                    0.0,
                    1e-2,
                    false,
                    &mut a2,
                    &mut b2,
                    &mut c2,
                    ptr::null_mut(),
                )
            }),
            ("Int32 access", a.lib.fmi3SetInt32(a.c, &0, 1, &1, 1)),
            ("NULL instance", a.lib.fmi3Terminate(ptr::null_mut())),
            (
                "freed-looking instance",
                a.lib.fmi3Terminate(8usize as fmi3Instance),
            ),
            ("NULL state", a.lib.fmi3SetFMUState(a.c, ptr::null_mut())),
            (
                "unknown state",
                a.lib.fmi3SetFMUState(a.c, 16usize as fmi3FMUState),
            ),
            (
                "NULL FMUState*",
                a.lib.fmi3GetFMUState(a.c, ptr::null_mut()),
            ),
        ];
        for (what, s) in &bad {
            assert_eq!(*s, ERROR, "{what}");
        }
        let read = assert_fmi3_words(a.env);
        println!(
            "{read} messages of the bad calls, all in FMI 3.0's words: {:?}",
            a.errors()
        );
        let mut t = 0.0;
        for _ in 0..20 {
            let (sa, _, la) = a.step(t, 1e-2);
            let (sb, _, lb) = b.step(t, 1e-2);
            assert_eq!((sa, la.to_bits()), (sb, lb.to_bits()));
            t += 1e-2;
            assert_eq!(la, t, "lastSuccessfulTime is the end of a full step");
            let (va, vb) = (a.get(&vrs).1, b.get(&vrs).1);
            assert_eq!(
                va.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                vb.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        println!(
            "{} bad calls refused with fmi3Error ({} error lines logged); then 20 steps \
             bit-identical to the twin's",
            bad.len(),
            a.errors().len()
        );
    }
}

/// Blobs: a CS blob restores in another instance; truncated, bit-flipped and other-model blobs
/// are refused; an ME instance refuses a CS blob; the FMI 2.0 and 3.0 blobs of one state agree.
#[test]
fn fmi3_state_blobs_are_checked_and_shared_with_fmi2() {
    let model = ModelDir::new("fmi3-blobs", &shipped_model("projectile"));
    let other = ModelDir::new("fmi3-blobs-other", &shipped_model("blowdown"));
    let a = Inst::new(&model, false);
    a.init();
    for k in 0..5 {
        assert_eq!(a.step(k as f64 * 1e-4, 1e-4).0, OK);
    }
    // SAFETY: valid calls on live instances; bad blobs must be refused.
    unsafe {
        let mut s: fmi3FMUState = ptr::null_mut();
        assert_eq!(a.lib.fmi3GetFMUState(a.c, &mut s), OK);
        let mut size = 0usize;
        assert_eq!(a.lib.fmi3SerializedFMUStateSize(a.c, s, &mut size), OK);
        let mut blob = vec![0u8; size];
        assert_eq!(
            a.lib.fmi3SerializeFMUState(a.c, s, blob.as_mut_ptr(), size),
            OK
        );
        assert_eq!(
            a.lib
                .fmi3SerializeFMUState(a.c, s, blob.as_mut_ptr(), size - 1),
            ERROR
        );

        // The same state through fmi2: byte-identical blob.
        let f2 = compliance_tests::Fmu::new(&model);
        f2.initialize(0.0);
        for k in 0..5 {
            assert_eq!(f2.do_step(k as f64 * 1e-4, 1e-4), compliance_tests::OK);
        }
        let mut s2: compliance_tests::fmi2FMUstate = ptr::null_mut();
        assert_eq!(f2.get_state(&mut s2), compliance_tests::OK);
        let blob2 = f2.serialize(s2);
        f2.free_state(&mut s2);
        assert_eq!(blob, blob2, "FMI 3.0 and FMI 2.0 blobs of one state");

        let b = Inst::new(&model, false);
        let mut r: fmi3FMUState = ptr::null_mut();
        assert_eq!(
            b.lib
                .fmi3DeserializeFMUState(b.c, blob.as_ptr(), size, &mut r),
            OK
        );
        assert_eq!(b.lib.fmi3SetFMUState(b.c, r), OK);
        let outs: Vec<u32> = (0..11).collect();
        assert_eq!(a.get(&outs).1, b.get(&outs).1);

        let mut refused = 0;
        let mut try_blob = |inst: &Inst, bytes: &[u8], what: &str| {
            let mut st: fmi3FMUState = ptr::null_mut();
            let s = inst
                .lib
                .fmi3DeserializeFMUState(inst.c, bytes.as_ptr(), bytes.len(), &mut st);
            assert_eq!(s, ERROR, "{what}");
            assert!(st.is_null(), "{what}: no state made");
            refused += 1;
        };
        for cut in [0, 1, 8, size / 2, size - 1] {
            try_blob(&b, &blob[..cut], &format!("truncated to {cut} bytes"));
        }
        for bit in (0..size * 8).step_by(size * 8 / 16 + 1) {
            let mut bad = blob.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            try_blob(&b, &bad, &format!("bit {bit} flipped"));
        }
        let c = Inst::new(&other, false);
        try_blob(&c, &blob, "another model's instance");
        let m = Inst::new(&model, true);
        try_blob(&m, &blob, "a Model Exchange instance");

        // A state belongs to the instance that made it.
        assert_eq!(b.lib.fmi3FreeFMUState(b.c, &mut s), ERROR);
        assert_eq!(a.lib.fmi3FreeFMUState(a.c, &mut s), OK);
        assert!(s.is_null());
        assert_eq!(b.lib.fmi3FreeFMUState(b.c, &mut r), OK);
        println!(
            "state blob {size} bytes (= the FMI 2.0 blob); restored in a fresh instance; \
             {refused} damaged or foreign blobs refused"
        );
    }
}

/// Model Exchange through fmi3: forward Euler on fmi3GetContinuousStateDerivatives agrees
/// with FMI 2.0 Model Exchange's bit for bit, and the event indicator variables read through
/// fmi3GetFloat64 equal fmi3GetEventIndicators.
#[test]
fn fmi3_model_exchange_agrees_with_fmi2_bit_for_bit() {
    let model = ModelDir::new("fmi3-me", &shipped_model("projectile"));
    let inst = plenum::cosim::Instance::with_interface(
        &model.text,
        "m.toml",
        plenum::cosim::Interface::ModelExchange,
    )
    .expect("instance");
    let d = inst.description().clone();
    let n = d.states.len();
    let ni = d.event_indicators;
    let f3 = Inst::new(&model, true);
    let f2 = compliance_tests::Fmu::model_exchange(&model);
    f3.init();
    f2.initialize_model_exchange(0.0);
    // SAFETY: valid calls with matching lengths.
    unsafe {
        let (mut a, mut b, mut c, mut e, mut def, mut next) = (true, true, true, true, true, 0.0);
        assert_eq!(
            f3.lib.fmi3UpdateDiscreteStates(
                f3.c, &mut a, &mut b, &mut c, &mut e, &mut def, &mut next
            ),
            OK
        );
        assert_eq!(f3.lib.fmi3EnterContinuousTimeMode(f3.c), OK);
        let mut nx = 0usize;
        assert_eq!(f3.lib.fmi3GetNumberOfContinuousStates(f3.c, &mut nx), OK);
        assert_eq!(nx, n);
        let h = 1e-6;
        let (mut t2, mut t3) = (0.0, 0.0);
        for _ in 0..200 {
            let (s2, _) = f2.euler_step(&mut t2, h, n);
            assert_eq!(s2, compliance_tests::OK);
            let mut x = vec![0.0; n];
            let mut dx = vec![0.0; n];
            assert_eq!(f3.lib.fmi3GetContinuousStates(f3.c, x.as_mut_ptr(), n), OK);
            assert_eq!(
                f3.lib
                    .fmi3GetContinuousStateDerivatives(f3.c, dx.as_mut_ptr(), n),
                OK
            );
            t3 += h;
            assert_eq!(f3.lib.fmi3SetTime(f3.c, t3), OK);
            for (xi, di) in x.iter_mut().zip(&dx) {
                *xi += h * di;
            }
            assert_eq!(f3.lib.fmi3SetContinuousStates(f3.c, x.as_ptr(), n), OK);
            let (mut enter, mut term) = (false, false);
            assert_eq!(
                f3.lib
                    .fmi3CompletedIntegratorStep(f3.c, true, &mut enter, &mut term),
                OK
            );
        }
        let x2 = f2.states(n);
        let mut x3 = vec![0.0; n];
        assert_eq!(f3.lib.fmi3GetContinuousStates(f3.c, x3.as_mut_ptr(), n), OK);
        assert_eq!(
            x2.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            x3.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "FMI 2.0 and 3.0 Euler states after 200 steps"
        );
        let mut z = vec![0.0; ni];
        assert_eq!(f3.lib.fmi3GetEventIndicators(f3.c, z.as_mut_ptr(), ni), OK);
        let zvr: Vec<u32> = (0..ni as u32)
            .map(|k| d.variables.len() as u32 + k)
            .collect();
        let (s, zv) = f3.get(&zvr);
        assert_eq!(s, OK);
        assert_eq!(z, zv, "event indicator variables = fmi3GetEventIndicators");

        // A state no physics allows (the first chamber's mass negative): every evaluation is a
        // discard, and each says so in FMI 3.0's words, naming its function once.
        let discard = fmi3Status_fmi3Discard;
        let mut x = vec![0.0; n];
        assert_eq!(f3.lib.fmi3GetContinuousStates(f3.c, x.as_mut_ptr(), n), OK);
        x[0] = -1.0;
        assert_eq!(f3.lib.fmi3SetContinuousStates(f3.c, x.as_ptr(), n), OK);
        let mut dx = vec![0.0; n];
        let s = f3
            .lib
            .fmi3GetContinuousStateDerivatives(f3.c, dx.as_mut_ptr(), n);
        assert_eq!(s, discard);
        let (mut enter, mut term) = (false, false);
        let s = f3
            .lib
            .fmi3CompletedIntegratorStep(f3.c, true, &mut enter, &mut term);
        assert_eq!((s, term), (discard, true));
        let discards: Vec<String> = logs(f3.env)
            .into_iter()
            .filter(|(s, _)| *s == discard)
            .map(|(_, m)| m)
            .collect();
        println!("at a negative mass: {discards:#?}");
        assert_eq!(discards.len(), 2, "{discards:?}");
        assert!(discards[1].starts_with("fmi3CompletedIntegratorStep: run-time check 2"));
        let read = assert_fmi3_words(f3.env);
        println!(
            "ME: {n} states, 200 Euler steps of {h:e} s bit-identical through fmi2 and fmi3; \
             {ni} event indicators {z:?} read both ways; {read} messages in FMI 3.0's words"
        );
    }
}

#[test]
fn instantiation_refuses_what_the_fmu_does_not_offer() {
    let model = ModelDir::new("fmi3-inst", &shipped_model("blowdown"));
    let lib = lib();
    let name = CString::new("x").unwrap();
    let token = CString::new(model.guid.clone()).unwrap();
    let bad_token = CString::new("{00000000-0000-0000-0000-000000000000}").unwrap();
    let path = CString::new(format!("{}/", model.resources.display())).unwrap();
    let env = 999_999usize as *mut c_void;
    let cs = |n: *const c_char, t: *const c_char, p: *const c_char, event_mode: bool| {
        // SAFETY: strings valid or NULL.
        unsafe {
            lib.fmi3InstantiateCoSimulation(
                n,
                t,
                p,
                false,
                false,
                event_mode,
                false,
                ptr::null(),
                0,
                env,
                Some(log_message),
                None,
            )
        }
    };
    let cases = [
        (
            "eventModeUsed",
            cs(name.as_ptr(), token.as_ptr(), path.as_ptr(), true),
        ),
        (
            "wrong token",
            cs(name.as_ptr(), bad_token.as_ptr(), path.as_ptr(), false),
        ),
        (
            "NULL token",
            cs(name.as_ptr(), ptr::null(), path.as_ptr(), false),
        ),
        (
            "NULL resourcePath",
            cs(name.as_ptr(), token.as_ptr(), ptr::null(), false),
        ),
        (
            "NULL instanceName",
            cs(ptr::null(), token.as_ptr(), path.as_ptr(), false),
        ),
        // SAFETY: valid strings.
        ("Scheduled Execution", unsafe {
            lib.fmi3InstantiateScheduledExecution(
                name.as_ptr(),
                token.as_ptr(),
                path.as_ptr(),
                false,
                false,
                env,
                Some(log_message),
                None,
                None,
                None,
            )
        }),
    ];
    for (what, c) in &cases {
        assert!(c.is_null(), "{what}: instantiated");
    }
    let errors = logs(env as usize);
    assert!(errors.len() >= cases.len(), "{errors:?}");
    println!(
        "{} refused instantiations, {} error lines, e.g. {:?}",
        cases.len(),
        errors.len(),
        errors[0].1
    );
    assert!(Path::new(&model.resources).is_dir());
}

/// The plausibility warnings reach an FMI 3.0 importer as they reach an FMI 2.0 one: the model
/// file's at instantiation, the parameters' at fmi3ExitInitializationMode, each naming the fmi3
/// function and what was probably meant.
#[test]
fn plausibility_warnings_reach_the_fmi3_log() {
    let warnings = |env| -> Vec<String> {
        logs(env)
            .into_iter()
            .filter(|(s, _)| *s == fmi3Status_fmi3Warning)
            .map(|(_, m)| m)
            .collect()
    };
    let text = shipped_model("blowdown");
    let fine = ModelDir::new("fmi3-plausible", &text);
    let inst = Inst::new(&fine, false);
    let vr = input_vr(&fine);
    // SAFETY: a live instance; one value for one reference.
    unsafe {
        assert_eq!(
            inst.lib
                .fmi3EnterInitializationMode(inst.c, false, 0.0, 0.0, false, 0.0),
            OK
        );
        assert_eq!(inst.lib.fmi3SetFloat64(inst.c, &vr, 1, &10.0, 1), OK);
        assert_eq!(inst.lib.fmi3ExitInitializationMode(inst.c), OK);
    }
    let w = warnings(inst.env);
    println!("atm.pressure set to 10 Pa: {w:?}");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("fmi3ExitInitializationMode: ") && w[0].contains("10 bar"));

    let six = text.replacen("pressure = 1e6", "pressure = 6.0", 1);
    assert_ne!(six, text);
    let tripped = ModelDir::new("fmi3-plausible-file", &six);
    let inst = Inst::new(&tripped, false);
    let w = warnings(inst.env);
    println!("tank.pressure = 6.0 in the file: {w:?}");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("fmi3InstantiateCoSimulation: ") && w[0].contains("6 bar"));
    assert!(warnings(Inst::new(&fine, true).env).is_empty());
}

/// Every variable the modelDescription declares, read in one call (FMI 2.0's variable table;
/// FMI 3.0's adds the event indicator variables after it).
fn read_all2(f: &compliance_tests::Fmu, n: u32, what: &str) -> Vec<u64> {
    let vrs: Vec<u32> = (0..n).collect();
    let (s, v) = f.get_real(&vrs);
    assert_eq!(s, compliance_tests::OK, "{what}: {:?}", f.logs());
    assert!(v.iter().all(|x| x.is_finite()), "{what}: {v:?}");
    v.iter().map(|x| x.to_bits()).collect()
}

fn read_all3(f: &Inst, n: u32, what: &str) -> Vec<u64> {
    let vrs: Vec<u32> = (0..n).collect();
    let (s, v) = f.get(&vrs);
    assert_eq!(s, OK, "{what}: {:?}", f.errors());
    assert!(v.iter().all(|x| x.is_finite()), "{what}: {v:?}");
    v.iter().map(|x| x.to_bits()).collect()
}

/// Every variable declared in the modelDescription is readable in every phase where the
/// standard allows a get, through both standards and both interfaces: Initialization Mode,
/// Step Mode (and after a discarded step: the projectile ending its run at the exit),
/// Event Mode, Continuous-Time Mode, Terminated. The event indicator variables of FMI 3.0 are
/// read in Co-Simulation too. The peer runs agree bit for bit: at the start every interface
/// reads the same values (derivatives and event indicators included), and the two standards'
/// Co-Simulation the same values after each step.
#[test]
fn every_declared_variable_is_readable_wherever_a_get_is_allowed() {
    let (mut reads, mut values) = (0, 0);
    for name in ["blowdown", "projectile", "two_tanks"] {
        let mut text = shipped_model(name);
        if name == "projectile" {
            text = text.replacen("[solver]\n", "[solver]\nstop_on_exit = true\n", 1);
            assert!(text.contains("stop_on_exit = true"));
        }
        let model = ModelDir::new(&format!("fmi3-every-{name}"), &text);
        let loaded = plenum::model::parse_str(&text, "m.toml", &[]).expect("model");
        let d = plenum::cosim::describe(&loaded);
        let n2 = d.variables.len() as u32;
        let n3 = n2 + d.event_indicators as u32;
        let h = d.step_size_s;
        let mut count = |v: &[u64]| {
            reads += 1;
            values += v.len();
        };

        // FMI 2.0 and FMI 3.0 Co-Simulation, side by side.
        let f2 = compliance_tests::Fmu::new(&model);
        let f3 = Inst::new(&model, false);
        // SAFETY (all calls below): FMI calls on live instances with valid arguments.
        unsafe {
            assert_eq!(f2.lib.fmi2SetupExperiment(f2.c, 0, 0.0, 0.0, 0, 0.0), OK);
            assert_eq!(f2.lib.fmi2EnterInitializationMode(f2.c), OK);
            assert_eq!(
                f3.lib
                    .fmi3EnterInitializationMode(f3.c, false, 0.0, 0.0, false, 0.0),
                OK
            );
        }
        let init2 = read_all2(&f2, n2, &format!("{name} fmi2 CS initializationMode"));
        let init3 = read_all3(&f3, n3, &format!("{name} fmi3 CS Initialization Mode"));
        assert_eq!(init2[..], init3[..n2 as usize], "{name}: CS at the start");
        count(&init2);
        count(&init3);
        // SAFETY: as above.
        unsafe {
            assert_eq!(f2.lib.fmi2ExitInitializationMode(f2.c), OK);
            assert_eq!(f3.lib.fmi3ExitInitializationMode(f3.c), OK);
        }
        let mut t = 0.0;
        let mut discarded = false;
        for k in 0..10_000 {
            let (s2, s3) = (f2.do_step(t, h), f3.step(t, h).0);
            assert_eq!(s2, s3, "{name}: step {k}");
            let phase = if s2 == fmi3Status_fmi3Discard {
                "after a discarded step"
            } else {
                assert_eq!(s2, OK, "{name}: step {k}");
                "Step Mode"
            };
            let a = read_all2(&f2, n2, &format!("{name} fmi2 CS {phase}"));
            let b = read_all3(&f3, n3, &format!("{name} fmi3 CS {phase}"));
            assert_eq!(a[..], b[..n2 as usize], "{name}: CS {phase}, step {k}");
            count(&a);
            count(&b);
            t += h;
            if s2 != OK {
                discarded = true;
                break;
            }
            if k == 4 && name != "projectile" {
                break;
            }
        }
        assert_eq!(
            discarded,
            name == "projectile",
            "{name}: the run ends at the exit"
        );
        // SAFETY: as above.
        unsafe {
            assert_eq!(f2.lib.fmi2Terminate(f2.c), OK);
            assert_eq!(f3.lib.fmi3Terminate(f3.c), OK);
        }
        count(&read_all2(&f2, n2, &format!("{name} fmi2 CS terminated")));
        count(&read_all3(&f3, n3, &format!("{name} fmi3 CS Terminated")));

        // FMI 2.0 and FMI 3.0 Model Exchange.
        let m2 = compliance_tests::Fmu::model_exchange(&model);
        let m3 = Inst::new(&model, true);
        // SAFETY: as above.
        unsafe {
            assert_eq!(m2.lib.fmi2SetupExperiment(m2.c, 0, 0.0, 0.0, 0, 0.0), OK);
            assert_eq!(m2.lib.fmi2EnterInitializationMode(m2.c), OK);
            assert_eq!(
                m3.lib
                    .fmi3EnterInitializationMode(m3.c, false, 0.0, 0.0, false, 0.0),
                OK
            );
        }
        let a = read_all2(&m2, n2, &format!("{name} fmi2 ME initializationMode"));
        let b = read_all3(&m3, n3, &format!("{name} fmi3 ME Initialization Mode"));
        assert_eq!(a, init2, "{name}: ME and CS at the start");
        assert_eq!(b, init3, "{name}: FMI 3.0 ME and CS at the start");
        count(&a);
        count(&b);
        // SAFETY: as above.
        unsafe {
            assert_eq!(m2.lib.fmi2ExitInitializationMode(m2.c), OK);
            assert_eq!(m3.lib.fmi3ExitInitializationMode(m3.c), OK);
        }
        count(&read_all2(&m2, n2, &format!("{name} fmi2 ME eventMode")));
        count(&read_all3(&m3, n3, &format!("{name} fmi3 ME Event Mode")));
        m2.new_discrete_states();
        // SAFETY: as above.
        unsafe {
            assert_eq!(m2.lib.fmi2EnterContinuousTimeMode(m2.c), OK);
            let (mut a, mut b, mut c, mut e, mut def, mut next) =
                (false, false, false, false, false, 0.0);
            let s = m3.lib.fmi3UpdateDiscreteStates(
                m3.c, &mut a, &mut b, &mut c, &mut e, &mut def, &mut next,
            );
            assert_eq!(s, OK);
            assert_eq!(m3.lib.fmi3EnterContinuousTimeMode(m3.c), OK);
        }
        count(&read_all2(
            &m2,
            n2,
            &format!("{name} fmi2 ME continuousTimeMode"),
        ));
        count(&read_all3(
            &m3,
            n3,
            &format!("{name} fmi3 ME Continuous-Time Mode"),
        ));
        // SAFETY: as above.
        unsafe {
            assert_eq!(m2.lib.fmi2Terminate(m2.c), OK);
            assert_eq!(m3.lib.fmi3Terminate(m3.c), OK);
        }
        count(&read_all2(&m2, n2, &format!("{name} fmi2 ME terminated")));
        count(&read_all3(&m3, n3, &format!("{name} fmi3 ME Terminated")));
        println!(
            "{name}: {n2} variables (FMI 2.0), {n3} (FMI 3.0, with {} event indicators), every \
             one read in every phase that allows a get; CS and ME, FMI 2.0 and 3.0 agree at \
             the start",
            d.event_indicators
        );
    }
    println!("{reads} reads of every declared variable, {values} values, all fmiOK and finite");
}

/// One forward Euler step of `h` through fmi3 Model Exchange (the event iteration where the
/// FMU asks for one); the completed step's status.
fn euler3(f: &Inst, t: &mut f64, h: f64, n: usize) -> fmi3Status {
    let (mut x, mut dx) = (vec![0.0; n], vec![0.0; n]);
    // SAFETY: valid calls with matching lengths.
    unsafe {
        assert_eq!(f.lib.fmi3GetContinuousStates(f.c, x.as_mut_ptr(), n), OK);
        let s = f
            .lib
            .fmi3GetContinuousStateDerivatives(f.c, dx.as_mut_ptr(), n);
        assert_eq!(s, OK);
        *t += h;
        assert_eq!(f.lib.fmi3SetTime(f.c, *t), OK);
        for (xi, di) in x.iter_mut().zip(&dx) {
            *xi += h * di;
        }
        assert_eq!(f.lib.fmi3SetContinuousStates(f.c, x.as_ptr(), n), OK);
        let (mut enter, mut term) = (false, false);
        let s = f
            .lib
            .fmi3CompletedIntegratorStep(f.c, true, &mut enter, &mut term);
        if enter {
            assert_eq!(f.lib.fmi3EnterEventMode(f.c), OK);
            let (mut a, mut b, mut c, mut e, mut def, mut next) =
                (false, false, false, false, false, 0.0);
            let u = f
                .lib
                .fmi3UpdateDiscreteStates(f.c, &mut a, &mut b, &mut c, &mut e, &mut def, &mut next);
            assert_eq!(u, OK);
            assert_eq!(f.lib.fmi3EnterContinuousTimeMode(f.c), OK);
        }
        s
    }
}

/// The episodes of run-time check codes in a sequence of `rc` values: a new one starts
/// wherever the code becomes one it was not at the step before.
fn episodes(rcs: &[f64]) -> usize {
    let mut before = 0.0;
    let mut n = 0;
    for &rc in rcs {
        if rc != 0.0 && rc != before {
            n += 1;
        }
        before = rc;
    }
    n
}

/// In Model Exchange the drift checks measure the importer's integration, not the model:
/// forward Euler at 4 µs on the projectile drifts past check 5's threshold, and both standards
/// say so once per episode, with status OK (category `logChecks`), while every completed
/// integrator step returns OK (an importer such as OMSimulator stops at a warning there) and
/// `rc` shows the code. The episodes are counted from `rc` read after each step.
#[test]
fn drift_in_model_exchange_is_said_once_per_episode_with_status_ok() {
    let model = ModelDir::new("fmi3-me-drift", &shipped_model("projectile"));
    let loaded = plenum::model::parse_str(&model.text, "m.toml", &[]).expect("model");
    let d = plenum::cosim::describe(&loaded);
    let n = d.states.len();
    let rc = d
        .variables
        .iter()
        .find(|v| v.name == "rc")
        .unwrap()
        .value_reference;
    let (h, steps) = (4e-6, 1200);

    let f2 = compliance_tests::Fmu::model_exchange(&model);
    f2.initialize_model_exchange(0.0);
    let mut t = 0.0;
    let mut rcs2 = Vec::new();
    for _ in 0..steps {
        let (s, end) = f2.euler_step(&mut t, h, n);
        assert_eq!(
            s,
            compliance_tests::OK,
            "fmi2CompletedIntegratorStep at t = {t}"
        );
        assert!(!end);
        rcs2.push(f2.get_real(&[rc]).1[0]);
    }
    let logs2 = f2.logs();
    let notes2: Vec<&String> = logs2
        .iter()
        .filter(|r| r.category == "logChecks")
        .map(|r| &r.text)
        .collect();
    assert!(
        logs2
            .iter()
            .all(|r| r.status == compliance_tests::OK as i32)
    );

    let f3 = Inst::new(&model, true);
    // SAFETY: a live instance: every category on (loggingOn was false).
    unsafe {
        assert_eq!(f3.lib.fmi3SetDebugLogging(f3.c, true, 0, ptr::null()), OK);
    }
    f3.init();
    // SAFETY: valid calls.
    unsafe {
        let (mut a, mut b, mut c, mut e, mut def, mut next) =
            (false, false, false, false, false, 0.0);
        let s = f3
            .lib
            .fmi3UpdateDiscreteStates(f3.c, &mut a, &mut b, &mut c, &mut e, &mut def, &mut next);
        assert_eq!(s, OK);
        assert_eq!(f3.lib.fmi3EnterContinuousTimeMode(f3.c), OK);
    }
    let mut t = 0.0;
    let mut rcs3 = Vec::new();
    for _ in 0..steps {
        assert_eq!(
            euler3(&f3, &mut t, h, n),
            OK,
            "fmi3CompletedIntegratorStep at t = {t}"
        );
        rcs3.push(f3.get(&[rc]).1[0]);
    }
    let logs3 = logs(f3.env);
    assert!(logs3.iter().all(|(s, _)| *s == OK));
    let notes3: Vec<&String> = logs3
        .iter()
        .map(|(_, m)| m)
        .filter(|m| m.contains("run-time check"))
        .collect();

    assert_eq!(rcs2, rcs3, "rc through FMI 2.0 and 3.0");
    let fired = rcs2.iter().filter(|&&r| r == 5.0).count();
    let expected = episodes(&rcs2);
    println!(
        "projectile, forward Euler at {h:e} s, {steps} steps: check 5 fired in {fired} steps, \
         {expected} episodes; {} notes through fmi2, {} through fmi3, every status OK; e.g. \
         {:?}",
        notes2.len(),
        notes3.len(),
        notes3.first()
    );
    assert!(
        fired > 0 && expected > 0,
        "the drift must fire for the test to mean anything"
    );
    assert!(rcs2.iter().all(|&r| r == 0.0 || r == 5.0), "{rcs2:?}");
    assert_eq!(notes2.len(), expected);
    assert_eq!(notes3.len(), expected);
    for m in notes2.iter().chain(&notes3) {
        assert!(
            m.contains("run-time check 5") && m.contains("importer's integration"),
            "{m}"
        );
    }
    assert_fmi3_words(f3.env);
}

/// A master's communication grid: (currentCommunicationPoint, communicationStepSize) pairs.
type Grid = Vec<(f64, f64)>;

/// The grid of a master that adds `h` to its clock while that stays at or before `stop`, then
/// takes what is left (`stop − t`: far below the time axis's resolution 100·ε·|t| when the sum
/// falls just short of `stop`). `next_h` gives each step's size.
fn accumulated(stop: f64, mut next_h: impl FnMut() -> f64) -> Grid {
    let (mut t, mut grid) = (0.0, Vec::new());
    loop {
        let h = next_h();
        if t + h > stop {
            break;
        }
        grid.push((t, h));
        t += h;
    }
    if t < stop {
        grid.push((t, stop - t));
    }
    grid
}

/// Runs `grid` through both standards' Co-Simulation: every step returns OK and lands exactly
/// on current + h (the FMU's `time` read back); the values of every declared variable at the
/// end (the two standards agree bit for bit). Also returns the smallest step relative to the
/// time axis's resolution at its end.
fn run_grid(model: &ModelDir, n: u32, grid: &Grid, what: &str) -> (Vec<f64>, f64) {
    let f2 = compliance_tests::Fmu::new(model);
    f2.initialize(0.0);
    let f3 = Inst::new(model, false);
    f3.init();
    let mut smallest = f64::INFINITY;
    for &(t, h) in grid {
        smallest = smallest.min(h / (100.0 * f64::EPSILON * (t + h).abs()));
        assert_eq!(
            f2.do_step(t, h),
            compliance_tests::OK,
            "{what}: fmi2DoStep({t:?}, {h:e})"
        );
        assert_eq!(f3.step(t, h).0, OK, "{what}: fmi3DoStep({t:?}, {h:e})");
        assert_eq!(
            f2.time().to_bits(),
            (t + h).to_bits(),
            "{what}: fmi2 at {t:?} + {h:e}"
        );
        assert_eq!(
            f3.get(&[0]).1[0].to_bits(),
            (t + h).to_bits(),
            "{what}: fmi3"
        );
    }
    let v2 = read_all2(&f2, n, what);
    assert_eq!(v2, read_all3(&f3, n, what), "{what}: fmi2 against fmi3");
    (v2.into_iter().map(f64::from_bits).collect(), smallest)
}

/// A master's rounding is accepted: a communication step below the time axis's resolution
/// that still moves time succeeds and lands exactly on current + h, through both standards.
/// Accumulated `t += h` to the stop time (blowdown: 3.0 s by 0.01 s, whose last step is
/// 2.0e-14 s; the projectile: 0.02 s by 1e-4 s, last step 6.6e-17 s), `n·h`, and random steps
/// each land on every point with status OK and end where the run on the exact grid (k·stop/N)
/// ends; a step that cannot move time (1e-300 s at t > 0) is refused and changes nothing.
#[test]
fn a_masters_rounding_is_accepted_and_lands_exactly() {
    for (name, stop, h) in [("blowdown", 3.0_f64, 0.01_f64), ("projectile", 0.02, 1e-4)] {
        let model = ModelDir::new(&format!("fmi3-rounding-{name}"), &shipped_model(name));
        let loaded = plenum::model::parse_str(&model.text, "m.toml", &[]).expect("model");
        let d = plenum::cosim::describe(&loaded);
        let states: Vec<usize> = d.states.iter().map(|&vr| vr as usize).collect();
        let names: Vec<String> = d.variables.iter().map(|v| v.name.clone()).collect();
        let n = names.len() as u32;
        let steps = (stop / h).round() as usize;
        let exact: Grid = (0..steps)
            .map(|k| {
                let (a, b) = (
                    k as f64 * stop / steps as f64,
                    (k + 1) as f64 * stop / steps as f64,
                );
                (a, b - a)
            })
            .collect();
        let n_h: Grid = (0..steps).map(|k| (k as f64 * h, h)).collect();
        let sum = accumulated(stop, || h);
        // A linear congruential generator (Knuth's MMIX constants): steps in [h/2, 3h/2).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let random = accumulated(stop, || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            h * (0.5 + (state >> 11) as f64 / (1u64 << 53) as f64)
        });
        let (reference, _) = run_grid(&model, n, &exact, &format!("{name} exact grid"));
        for (label, grid) in [("n·h", &n_h), ("t += h", &sum), ("random h", &random)] {
            let what = format!("{name} {label}");
            let (end, smallest) = run_grid(&model, n, grid, &what);
            let last = grid.last().unwrap();
            let rel = |k: usize| (end[k] - reference[k]).abs() / reference[k].abs().max(1e-300);
            let (worst, at) = (0..end.len())
                .map(|k| (rel(k), names[k].as_str()))
                .fold((0.0, ""), |w, d| if d.0 > w.0 { d } else { w });
            let worst_state = states.iter().map(|&k| rel(k)).fold(0.0, f64::max);
            println!(
                "{what}: {} steps, last {:e} s from {:?} s, smallest step {smallest:.3e} of the \
                 resolution; against the exact grid's end: states within {worst_state:.2e} \
                 (relative), every variable within {worst:.2e} ({at})",
                grid.len(),
                last.1,
                last.0
            );
            if label != "n·h" {
                assert_eq!(last.0 + last.1, stop, "{what} ends at the stop time");
            }
            // The grids' points differ by round-off, so a fixed-step method's steps do too: the
            // states agree to round-off accumulated over the run.
            assert!(worst_state < 1e-9, "{what}: {worst_state:e}");
        }
        assert!(
            sum.last().unwrap().1 < 100.0 * f64::EPSILON * stop,
            "{name}: the case tested"
        );
    }
    // A step that cannot move time: refused, through both standards, and nothing changes.
    let model = ModelDir::new("fmi3-rounding-still", &shipped_model("blowdown"));
    let f2 = compliance_tests::Fmu::new(&model);
    f2.initialize(0.0);
    let f3 = Inst::new(&model, false);
    f3.init();
    assert_eq!(f2.do_step(0.0, 0.5), compliance_tests::OK);
    assert_eq!(f3.step(0.0, 0.5).0, OK);
    assert_eq!(f2.do_step(0.5, 1e-300), compliance_tests::ERROR);
    assert_eq!(f3.step(0.5, 1e-300).0, ERROR);
    assert_eq!((f2.time(), f3.get(&[0]).1[0]), (0.5, 0.5));
    let said = f3.errors();
    println!("a step of 1e-300 s at 0.5 s: {said:?}");
    assert!(
        said.iter().any(|m| m.contains("does not move the time")),
        "{said:?}"
    );
    assert_fmi3_words(f3.env);
}
