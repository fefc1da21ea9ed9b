//! The FMI 2.0 C ABI, Co-Simulation and Model Exchange: every fmi2 function of the standard's
//! headers, exported unmangled (the Model Exchange functions in `me`). Each checks the phase in
//! FMI 2.0's words, converts its arguments and delegates to the layer both standards share
//! (`crate::fmi`, whose safety contract applies to every function here), on top of
//! [`crate::cosim::Instance`].
//!
//! FMI 2.0's own: the logger is called with the format `"%s"` and the message as its argument;
//! FMU states live in the master's `allocateMemory` when it gives one (with `freeMemory`); the
//! status getters of Co-Simulation (FMI 2.0.4 §4.2.3).

#![allow(non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

pub mod me;

use std::ffi::{CStr, c_char, c_void};
use std::path::PathBuf;

use fmi_sys::fmi2::*;

use crate::cosim::{Call, Interface, Phase};
use crate::fmi::{
    Component, Instantiation, Registries, Standard, Status, call, free_instance, instantiate,
    log_categories, out_ptr, report_without_logger, slice_in, slice_out, with_component,
};

/// FMI 2.0 to the shared layer.
pub(crate) struct Fmi2;

static REGISTRIES: Registries = Registries::new();

/// Log categories (`fmi2SetDebugLogging`, `<LogCategories>`).
pub const LOG_CATEGORIES: [(&str, &str); 7] = log_categories("every fmi2 call (verbose)");

impl Standard for Fmi2 {
    type Status = fmi2Status;
    type Logger = fmi2CallbackLogger;

    const PREFIX: &'static str = "fmi2";
    const LOG_CATEGORIES: &'static [(&'static str, &'static str)] = &LOG_CATEGORIES;
    const INSTANTIATE: &'static str = "fmi2Instantiate";
    const FREE_INSTANCE: &'static str = "fmi2FreeInstance";
    const DO_STEP: &'static str = "fmi2DoStep";
    const TOKEN: &'static str = "fmuGUID";
    const RESOURCES: &'static str = "fmuResourceLocation";

    fn registries() -> &'static Registries {
        &REGISTRIES
    }

    /// The state names of FMI 2.0.4's state machines (§3.2.3, §4.2.4).
    fn phase_name(phase: Phase) -> &'static str {
        match phase {
            Phase::Instantiated => "instantiated",
            Phase::InitializationMode => "initializationMode",
            Phase::StepComplete => "stepComplete",
            Phase::StepFailed => "stepFailed",
            Phase::Terminated => "terminated",
            Phase::Error => "error",
            Phase::Fatal => "fatal",
            Phase::EventMode => "eventMode",
            Phase::ContinuousTimeMode => "continuousTimeMode",
        }
    }

    fn never_possible(call: Call) -> &'static str {
        match call {
            Call::CancelStep => "fmi2DoStep is synchronous",
            _ => "this FMU does not provide it",
        }
    }

    fn resource_dir(location: &str) -> Result<PathBuf, String> {
        crate::fmi::resource_dir(location)
    }

    unsafe fn send(
        logger: fmi2CallbackLogger,
        environment: *mut c_void,
        instance_name: &CStr,
        status: fmi2Status,
        category: &CStr,
        message: &CStr,
    ) {
        if let Some(logger) = logger {
            // SAFETY: the master's logger (the caller's contract), called as
            // `logger(..., "%s", message)` so no `%` in a message is read as a conversion.
            unsafe {
                logger(
                    environment,
                    instance_name.as_ptr(),
                    status,
                    category.as_ptr(),
                    c"%s".as_ptr(),
                    message.as_ptr(),
                )
            };
        }
    }
}

/// The layer's calls, for FMI 2.0.
fn fmi2<F>(c: fmi2Component, function: &'static str, what: Call, body: F) -> fmi2Status
where
    F: FnOnce(&mut Component<Fmi2>) -> Result<Status, crate::cosim::CallError>,
{
    call::<Fmi2, F>(c, function, what, body)
}

// ---------------------------------------------------------------------------------------------
// Common functions
// ---------------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: fmi2Component,
    loggingOn: fmi2Boolean,
    nCategories: usize,
    categories: *const fmi2String,
) -> fmi2Status {
    fmi2(c, "fmi2SetDebugLogging", Call::SetDebugLogging, |comp| {
        // SAFETY: nCategories strings (contract).
        unsafe { comp.set_debug_logging(loggingOn != 0, categories, nCategories) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Instantiate(
    instanceName: fmi2String,
    fmuType: fmi2Type,
    fmuGUID: fmi2String,
    fmuResourceLocation: fmi2String,
    functions: *const fmi2CallbackFunctions,
    _visible: fmi2Boolean,
    loggingOn: fmi2Boolean,
) -> fmi2Component {
    if functions.is_null() {
        report_without_logger::<Fmi2>("fmi2Instantiate: functions (the callbacks) is NULL");
        return std::ptr::null_mut();
    }
    // SAFETY: non-null pointer to the master's callbacks (contract).
    let functions = unsafe { &*functions };
    let interface = match fmuType {
        fmi2Type_fmi2CoSimulation => Ok(Interface::CoSimulation),
        fmi2Type_fmi2ModelExchange => Ok(Interface::ModelExchange),
        other => Err(format!(
            "fmuType {other} is not an FMI 2.0 type (fmi2ModelExchange = \
             {fmi2Type_fmi2ModelExchange}, fmi2CoSimulation = {fmi2Type_fmi2CoSimulation})"
        )),
    };
    let memory = match (functions.allocateMemory, functions.freeMemory) {
        (Some(a), Some(f)) => Some((a, f)),
        _ => None,
    };
    // SAFETY: the strings and callbacks as the contract says.
    unsafe {
        instantiate(Instantiation::<Fmi2> {
            function: "fmi2Instantiate",
            interface,
            instance_name: instanceName,
            token: fmuGUID,
            resources: fmuResourceLocation,
            logging_on: loggingOn != 0,
            logger: functions.logger,
            environment: functions.componentEnvironment,
            memory,
        })
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeInstance(c: fmi2Component) {
    // SAFETY: checked against the registry inside.
    unsafe { free_instance::<Fmi2>(c) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: fmi2Component,
    toleranceDefined: fmi2Boolean,
    tolerance: fmi2Real,
    startTime: fmi2Real,
    stopTimeDefined: fmi2Boolean,
    stopTime: fmi2Real,
) -> fmi2Status {
    let f = "fmi2SetupExperiment";
    fmi2(c, f, Call::SetupExperiment, |comp| {
        let tolerance = (toleranceDefined != 0).then_some(tolerance);
        let stop = (stopTimeDefined != 0).then_some(stopTime);
        comp.setup_experiment(f, tolerance, startTime, stop)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: fmi2Component) -> fmi2Status {
    let f = "fmi2EnterInitializationMode";
    fmi2(c, f, Call::EnterInitializationMode, |comp| {
        comp.instance.enter_initialization_mode()?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: fmi2Component) -> fmi2Status {
    let f = "fmi2ExitInitializationMode";
    fmi2(c, f, Call::ExitInitializationMode, |comp| {
        comp.exit_initialization(f)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Terminate(c: fmi2Component) -> fmi2Status {
    fmi2(c, "fmi2Terminate", Call::Terminate, |comp| {
        comp.instance.terminate()?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Reset(c: fmi2Component) -> fmi2Status {
    fmi2(c, "fmi2Reset", Call::Reset, |comp| {
        comp.instance.reset()?;
        Ok(Status::Ok)
    })
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetReal(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *mut fmi2Real,
) -> fmi2Status {
    fmi2(c, "fmi2GetReal", Call::GetValues, |comp| {
        // SAFETY: nvr elements each (contract).
        let vrs = unsafe { slice_in(vr, nvr, "vr[]")? };
        let out = unsafe { slice_out(value, nvr, "value[]")? };
        comp.get_values("fmi2GetReal", vrs, out)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetReal(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *const fmi2Real,
) -> fmi2Status {
    fmi2(c, "fmi2SetReal", Call::SetValues, |comp| {
        // SAFETY: nvr elements each (contract).
        let vrs = unsafe { slice_in(vr, nvr, "vr[]")? };
        let values = unsafe { slice_in(value, nvr, "value[]")? };
        comp.instance.set_real(vrs, values)?;
        Ok(Status::Ok)
    })
}

/// Integer, Boolean, String access: the model has Real variables only.
unsafe fn no_values<T>(
    c: fmi2Component,
    function: &'static str,
    kind: &str,
    call: Call,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *const T,
) -> fmi2Status {
    fmi2(c, function, call, |comp| {
        // SAFETY: nvr elements each (contract).
        let vrs = unsafe { slice_in(vr, nvr, "vr[]")? };
        let _ = unsafe { slice_in(value, nvr, "value[]")? };
        comp.no_values(kind, vrs)
    })
}

/// The typed accessors of a type the model has no variable of.
macro_rules! no_values {
    ($($name:ident($kind:literal, $call:ident, $t:ty, $ptr:ident);)*) => {$(
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            c: fmi2Component,
            vr: *const fmi2ValueReference,
            nvr: usize,
            value: *$ptr $t,
        ) -> fmi2Status {
            // SAFETY: forwarded arguments (contract).
            unsafe { no_values(c, stringify!($name), $kind, Call::$call, vr, nvr, value) }
        }
    )*};
}

no_values! {
    fmi2GetInteger("Integer", GetValues, fmi2Integer, mut);
    fmi2GetBoolean("Boolean", GetValues, fmi2Boolean, mut);
    fmi2GetString("String", GetValues, fmi2String, mut);
    fmi2SetInteger("Integer", SetValues, fmi2Integer, const);
    fmi2SetBoolean("Boolean", SetValues, fmi2Boolean, const);
    fmi2SetString("String", SetValues, fmi2String, const);
}

// ---------------------------------------------------------------------------------------------
// FMU states
// ---------------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetFMUstate(
    c: fmi2Component,
    FMUstate: *mut fmi2FMUstate,
) -> fmi2Status {
    fmi2(c, "fmi2GetFMUstate", Call::States, |comp| {
        comp.get_state(FMUstate)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetFMUstate(c: fmi2Component, FMUstate: fmi2FMUstate) -> fmi2Status {
    fmi2(c, "fmi2SetFMUstate", Call::States, |comp| {
        comp.set_state(FMUstate)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeFMUstate(
    c: fmi2Component,
    FMUstate: *mut fmi2FMUstate,
) -> fmi2Status {
    // Releasing memory is possible in every state, the fatal one included.
    with_component::<Fmi2, _>(c, "fmi2FreeFMUstate", |comp| comp.free_state(FMUstate))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
    c: fmi2Component,
    FMUstate: fmi2FMUstate,
    size: *mut usize,
) -> fmi2Status {
    fmi2(c, "fmi2SerializedFMUstateSize", Call::States, |comp| {
        comp.state_size(FMUstate, size)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    c: fmi2Component,
    FMUstate: fmi2FMUstate,
    serializedState: *mut fmi2Byte,
    size: usize,
) -> fmi2Status {
    fmi2(c, "fmi2SerializeFMUstate", Call::States, |comp| {
        // SAFETY: `size` writable bytes (contract).
        unsafe { comp.serialize_state(FMUstate, serializedState as *mut u8, size) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    c: fmi2Component,
    serializedState: *const fmi2Byte,
    size: usize,
    FMUstate: *mut fmi2FMUstate,
) -> fmi2Status {
    fmi2(c, "fmi2DeSerializeFMUstate", Call::States, |comp| {
        // SAFETY: `size` readable bytes (contract).
        unsafe { comp.deserialize_state(serializedState as *const u8, size, FMUstate) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
    c: fmi2Component,
    vUnknown_ref: *const fmi2ValueReference,
    nUnknown: usize,
    vKnown_ref: *const fmi2ValueReference,
    nKnown: usize,
    dvKnown: *const fmi2Real,
    dvUnknown: *mut fmi2Real,
) -> fmi2Status {
    let f = "fmi2GetDirectionalDerivative";
    fmi2(c, f, Call::GetDirectionalDerivative, |comp| {
        // SAFETY: nUnknown and nKnown elements each (contract).
        let unknowns = unsafe { slice_in(vUnknown_ref, nUnknown, "vUnknown_ref[]")? };
        let knowns = unsafe { slice_in(vKnown_ref, nKnown, "vKnown_ref[]")? };
        let dv_known = unsafe { slice_in(dvKnown, nKnown, "dvKnown[]")? };
        let dv_unknown = unsafe { slice_out(dvUnknown, nUnknown, "dvUnknown[]")? };
        comp.directional_derivative(f, unknowns, knowns, dv_known, dv_unknown)
    })
}

// ---------------------------------------------------------------------------------------------
// Co-Simulation
// ---------------------------------------------------------------------------------------------

/// A function of a capability the FMU does not declare: exported, refused after the phase
/// check.
fn not_provided(c: fmi2Component, function: &'static str, what: Call, why: &str) -> fmi2Status {
    fmi2(c, function, what, |_| {
        Err(crate::cosim::CallError(why.to_string()))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
    c: fmi2Component,
    _vr: *const fmi2ValueReference,
    _nvr: usize,
    _order: *const fmi2Integer,
    _value: *const fmi2Real,
) -> fmi2Status {
    not_provided(
        c,
        "fmi2SetRealInputDerivatives",
        Call::SetRealInputDerivatives,
        "input derivatives are not used (canInterpolateInputs=\"false\")",
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
    c: fmi2Component,
    _vr: *const fmi2ValueReference,
    _nvr: usize,
    _order: *const fmi2Integer,
    _value: *mut fmi2Real,
) -> fmi2Status {
    not_provided(
        c,
        "fmi2GetRealOutputDerivatives",
        Call::GetRealOutputDerivatives,
        "output derivatives are not provided (maxOutputDerivativeOrder=\"0\")",
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DoStep(
    c: fmi2Component,
    currentCommunicationPoint: fmi2Real,
    communicationStepSize: fmi2Real,
    _noSetFMUStatePriorToCurrentPoint: fmi2Boolean,
) -> fmi2Status {
    fmi2(c, "fmi2DoStep", Call::DoStep, |comp| {
        comp.do_step(currentCommunicationPoint, communicationStepSize)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CancelStep(c: fmi2Component) -> fmi2Status {
    fmi2(c, "fmi2CancelStep", Call::CancelStep, |_| Ok(Status::Ok))
}

/// A status kind the getter does not provide: fmi2Discard (FMI 2.0.4 §4.2.3), logged. An out
/// of range kind is an error.
fn status_not_available(
    comp: &Component<Fmi2>,
    function: &str,
    s: fmi2StatusKind,
) -> Result<Status, crate::cosim::CallError> {
    let what = match s {
        fmi2StatusKind_fmi2DoStepStatus => {
            "fmi2DoStepStatus: fmi2DoStep is synchronous and never returns fmi2Pending"
        }
        fmi2StatusKind_fmi2PendingStatus => {
            "fmi2PendingStatus: fmi2DoStep is synchronous and never returns fmi2Pending"
        }
        fmi2StatusKind_fmi2LastSuccessfulTime => {
            "fmi2LastSuccessfulTime is a Real status (fmi2GetRealStatus)"
        }
        fmi2StatusKind_fmi2Terminated => {
            "fmi2Terminated is a Boolean status (fmi2GetBooleanStatus)"
        }
        other => {
            return Err(crate::cosim::CallError(format!(
                "unknown fmi2StatusKind {other}"
            )));
        }
    };
    comp.log.log(
        Status::Discard,
        "logStatusDiscard",
        &format!("{function}: status not available: {what}"),
    );
    Ok(Status::Discard)
}

/// A status getter: `get` answers the kinds it provides, every other kind is
/// [`status_not_available`].
fn status_getter<T>(
    c: fmi2Component,
    function: &'static str,
    s: fmi2StatusKind,
    value: *mut T,
    get: impl FnOnce(&Component<Fmi2>, fmi2StatusKind) -> Option<Result<T, crate::cosim::CallError>>,
) -> fmi2Status {
    fmi2(c, function, Call::GetStatus, |comp| {
        let value = out_ptr(value, "value")?;
        match get(comp, s) {
            Some(v) => {
                *value = v?;
                Ok(Status::Ok)
            }
            None => status_not_available(comp, function, s),
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2Status,
) -> fmi2Status {
    status_getter(c, "fmi2GetStatus", s, value, |_, _| None)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2Real,
) -> fmi2Status {
    status_getter(c, "fmi2GetRealStatus", s, value, |comp, s| {
        (s == fmi2StatusKind_fmi2LastSuccessfulTime).then(|| comp.instance.last_successful_time())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetIntegerStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2Integer,
) -> fmi2Status {
    status_getter(c, "fmi2GetIntegerStatus", s, value, |_, _| None)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2Boolean,
) -> fmi2Status {
    status_getter(c, "fmi2GetBooleanStatus", s, value, |comp, s| {
        (s == fmi2StatusKind_fmi2Terminated)
            .then(|| comp.instance.terminated().map(fmi2Boolean::from))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStringStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2String,
) -> fmi2Status {
    status_getter(c, "fmi2GetStringStatus", s, value, |_, _| None)
}
