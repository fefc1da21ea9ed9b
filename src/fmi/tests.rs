//! The layer's words for each standard.

use std::ffi::CString;
use std::fmt::Debug;
use std::ptr;

use super::*;
use crate::cosim::Instance;
use crate::fmi2::Fmi2;
use crate::fmi3::Fmi3;

const PHASES: [Phase; 9] = [
    Phase::Instantiated,
    Phase::InitializationMode,
    Phase::StepComplete,
    Phase::StepFailed,
    Phase::Terminated,
    Phase::Error,
    Phase::Fatal,
    Phase::EventMode,
    Phase::ContinuousTimeMode,
];

/// Each standard's status values, from its own header's constants.
#[test]
fn statuses_are_each_standards_values() {
    use fmi_sys::{fmi2::*, fmi3::*};
    let all = [
        Status::Ok,
        Status::Warning,
        Status::Discard,
        Status::Error,
        Status::Fatal,
    ];
    let two = [
        fmi2Status_fmi2OK,
        fmi2Status_fmi2Warning,
        fmi2Status_fmi2Discard,
        fmi2Status_fmi2Error,
        fmi2Status_fmi2Fatal,
    ];
    let three = [
        fmi3Status_fmi3OK,
        fmi3Status_fmi3Warning,
        fmi3Status_fmi3Discard,
        fmi3Status_fmi3Error,
        fmi3Status_fmi3Fatal,
    ];
    for (k, s) in all.into_iter().enumerate() {
        assert_eq!(Fmi2::status(s), two[k], "{s:?}");
        assert_eq!(Fmi3::status(s), three[k], "{s:?}");
    }
    println!("statuses {all:?} = fmi2 {two:?} = fmi3 {three:?}");
}

/// Both standards declare the same categories (the logger finds them by name), each saying
/// its own function prefix.
#[test]
fn both_standards_declare_the_same_log_categories() {
    let names = |list: &[(&str, &str)]| list.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>();
    assert_eq!(names(Fmi2::LOG_CATEGORIES), names(Fmi3::LOG_CATEGORIES));
    for (standard, list, other) in [
        ("fmi2", Fmi2::LOG_CATEGORIES, "fmi3"),
        ("fmi3", Fmi3::LOG_CATEGORIES, "fmi2"),
    ] {
        println!("{standard}: {list:?}");
        for (name, description) in list {
            assert!(
                !description.is_empty() && !description.contains("  "),
                "{name}"
            );
            assert!(
                !description.contains(other),
                "{standard} {name}: {description}"
            );
        }
    }
}

/// Every refusal the layer can say, for every call in every phase of either interface: FMI
/// 3.0's never cites FMI 2.0, names no function twice and has no run of spaces; each standard
/// names the phases by its own state names.
#[test]
fn refusals_are_in_each_standards_words() {
    let refusals = |phase| {
        [
            Refusal::Fatal,
            Refusal::Never,
            Refusal::OtherInterface {
                only: Interface::CoSimulation,
                this: Interface::ModelExchange,
            },
            Refusal::Sequence {
                phase,
                allowed: &[Phase::StepComplete, Phase::EventMode],
            },
        ]
    };
    let calls = [Call::CancelStep, Call::EnterStepMode, Call::DoStep];
    let mut n = 0;
    for phase in PHASES {
        for r in refusals(phase) {
            for call in calls {
                let (two, three) = (refusal_text::<Fmi2>(call, r), refusal_text::<Fmi3>(call, r));
                for (text, own, other) in [(&two, "fmi2", "fmi3"), (&three, "fmi3", "fmi2")] {
                    assert!(!text.contains(other), "{text}");
                    assert!(!text.contains("  "), "{text}");
                    assert!(text.matches(own).count() <= 1, "{text}");
                }
                assert!(!three.contains("FMI 2.0"), "{three}");
                n += 2;
            }
        }
    }
    let sample = refusal_text::<Fmi3>(
        Call::DoStep,
        Refusal::Sequence {
            phase: Phase::Instantiated,
            allowed: &[Phase::StepComplete],
        },
    );
    println!("{n} refusal texts checked, e.g. fmi3DoStep: {sample}");
    assert_eq!(
        sample,
        "illegal call sequence: not allowed in state Instantiated (allowed in: Step Mode)"
    );
}

/// A panic inside a call is caught by the one guard both standards run under: the call returns
/// the fatal status, and the instance then refuses every call but freeing (its states and
/// itself). The panic: a state behind the checks (put in without them) that makes the
/// simulation index out of bounds in the communication step.
#[test]
fn a_panic_inside_a_call_becomes_fatal_and_never_crosses_the_abi() {
    panic_becomes_fatal::<Fmi2>();
    panic_becomes_fatal::<Fmi3>();
}

fn panic_becomes_fatal<S: Standard>()
where
    S::Status: PartialEq + Debug,
{
    let text = include_str!("../../models/projectile.toml");
    let dir =
        std::env::temp_dir().join(format!("plenum-{}-panic-{}", S::PREFIX, std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.toml"), text).unwrap();
    let token = CString::new(crate::cosim::guid_of(text.as_bytes())).unwrap();
    let uri = CString::new(format!("file://{}", dir.display())).unwrap();

    // The forged state: fewer state values than the model has.
    let mut inst = Instance::new(text, "model.toml").unwrap();
    inst.setup_experiment(0.0, None).unwrap();
    inst.enter_initialization_mode().unwrap();
    inst.exit_initialization_mode().unwrap();
    let mut snap = inst.snapshot().unwrap();
    snap.y_mut().truncate(3);

    let status = S::status;
    // SAFETY: valid strings; the instance is used until it is freed below.
    let c = unsafe {
        instantiate::<S>(Instantiation {
            function: "instantiate",
            interface: Ok(Interface::CoSimulation),
            instance_name: c"panic".as_ptr(),
            token: token.as_ptr(),
            resources: uri.as_ptr(),
            logging_on: false,
            logger: S::Logger::default(),
            environment: ptr::null_mut(),
            memory: None,
        })
    };
    assert!(!c.is_null());
    let setup = |comp: &mut Component<S>| comp.setup_experiment("setup", None, 0.0, None);
    assert_eq!(
        call(c, "setup", Call::SetupExperiment, setup),
        status(Status::Ok)
    );
    let init = call::<S, _>(c, "init", Call::EnterInitializationMode, |comp| {
        comp.instance.enter_initialization_mode()?;
        comp.exit_initialization("init")
    });
    assert_eq!(init, status(Status::Ok));
    let mut s: *mut std::ffi::c_void = ptr::null_mut();
    let get = call::<S, _>(c, "get state", Call::States, |comp| comp.get_state(&mut s));
    assert_eq!(get, status(Status::Ok));
    let put = with_component::<S, _>(c, "put", |comp| {
        comp.instance.restore_unchecked(&snap);
        Ok(Status::Ok)
    });
    assert_eq!(put, status(Status::Ok));
    let step = |comp: &mut Component<S>| comp.do_step(0.0, 1e-4);
    assert_eq!(
        call(c, S::DO_STEP, Call::DoStep, step),
        status(Status::Fatal)
    );
    assert_eq!(
        call(c, S::DO_STEP, Call::DoStep, step),
        status(Status::Error)
    );
    let mut v = [0.0];
    let read = call::<S, _>(c, "get", Call::GetValues, |comp| {
        comp.get_values("get", &[0], &mut v)
    });
    assert_eq!(read, status(Status::Error));
    let reset = call::<S, _>(c, "reset", Call::Reset, |comp| {
        comp.instance.reset()?;
        Ok(Status::Ok)
    });
    assert_eq!(reset, status(Status::Error));
    let free = with_component::<S, _>(c, "free state", |comp| comp.free_state(&mut s));
    assert_eq!(free, status(Status::Ok));
    assert!(s.is_null());
    // SAFETY: a live instance, freed once.
    unsafe { free_instance::<S>(c) };
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{}: a panic in {} → the fatal status; then the error status for every call but the \
         frees",
        S::PREFIX,
        S::DO_STEP
    );
}
