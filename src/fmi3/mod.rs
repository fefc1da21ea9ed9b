//! The FMI 3.0 C ABI, Co-Simulation and Model Exchange: every fmi3 function of the standard's
//! headers, exported unmangled. Each checks the phase in FMI 3.0's words, converts its
//! arguments and delegates to the layer both standards share (`crate::fmi`, whose safety
//! contract applies to every function here), on top of [`crate::cosim::Instance`].
//! Co-Simulation's own functions are in `cs`, Model Exchange's in `me`, the functions of
//! features the FMU does not declare (other variable types, clocks, configuration mode,
//! scheduled execution) in `refused`.
//!
//! Mapping onto the instance's phases (FMI 3.0 §4.2.5 state machine of Co-Simulation, §3.2.3
//! of Model Exchange): Instantiated and Initialization Mode are the same; Step Mode is the
//! instance's `StepComplete` (and `StepFailed` after a discarded step); Model Exchange's Event
//! Mode and Continuous-Time Mode are the instance's. Co-Simulation has no Event Mode
//! (`hasEventMode="false"`): `eventModeUsed` is refused, and fmi3ExitInitializationMode goes
//! straight to Step Mode. FMI 3.0 makes the event indicators variables (after the variable
//! table, [`event_indicators`]): fmi3GetFloat64 reads them in either interface. FMU states:
//! the same snapshot and the same serialized blob (header, checksum, GUID) as FMI 2.0, always
//! boxed (FMI 3.0 has no memory callbacks).

#![allow(non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

mod cs;
pub mod me;
mod refused;

use std::ffi::{CStr, c_char, c_void};
use std::path::PathBuf;

use fmi_sys::fmi3::*;

use crate::cosim::{Call, CallError, Description, Interface, Phase};
use crate::fmi::{
    Component, Instantiation, Registries, Requested, Standard, Status, call, free_instance,
    instantiate, log_categories, same_length, slice_in, slice_out, with_component,
};

/// FMI 3.0 to the shared layer.
pub(crate) struct Fmi3;

/// Live fmi3 instances and FMU states, apart from the fmi2 ones: a pointer of one standard is
/// never taken for the other's.
static REGISTRIES: Registries = Registries::new();

/// Log categories (`fmi3SetDebugLogging`, `<LogCategories>`).
pub const LOG_CATEGORIES: [(&str, &str); 7] = log_categories("every fmi3 call (verbose)");

impl Standard for Fmi3 {
    type Status = fmi3Status;
    type Logger = fmi3LogMessageCallback;

    const PREFIX: &'static str = "fmi3";
    const LOG_CATEGORIES: &'static [(&'static str, &'static str)] = &LOG_CATEGORIES;
    const INSTANTIATE: &'static str = "fmi3InstantiateCoSimulation / fmi3InstantiateModelExchange";
    const FREE_INSTANCE: &'static str = "fmi3FreeInstance";
    const DO_STEP: &'static str = "fmi3DoStep";
    const TOKEN: &'static str = "instantiationToken";
    const RESOURCES: &'static str = "resourcePath";

    fn registries() -> &'static Registries {
        &REGISTRIES
    }

    /// The state names of FMI 3.0's state machines (§3.2.3, §4.2.5).
    fn phase_name(phase: Phase) -> &'static str {
        match phase {
            Phase::Instantiated => "Instantiated",
            Phase::InitializationMode => "Initialization Mode",
            Phase::StepComplete => "Step Mode",
            Phase::StepFailed => "Step Mode after a discarded step",
            Phase::Terminated => "Terminated",
            Phase::Error => "the error state",
            Phase::Fatal => "the fatal state",
            Phase::EventMode => "Event Mode",
            Phase::ContinuousTimeMode => "Continuous-Time Mode",
        }
    }

    fn never_possible(call: Call) -> &'static str {
        match call {
            Call::EnterStepMode => {
                "this FMU has no Event Mode in Co-Simulation (hasEventMode=\"false\"): \
                 fmi3ExitInitializationMode enters Step Mode directly"
            }
            _ => "this FMU does not provide it",
        }
    }

    /// FMI 3.0 passes a native path (with a trailing separator); a file URI is accepted too.
    fn resource_dir(location: &str) -> Result<PathBuf, String> {
        if location.starts_with("file:") {
            crate::fmi::resource_dir(location)
        } else if location.is_empty() {
            Err("the resource path is empty".into())
        } else {
            Ok(PathBuf::from(location))
        }
    }

    unsafe fn send(
        logger: fmi3LogMessageCallback,
        environment: *mut c_void,
        _instance_name: &CStr,
        status: fmi3Status,
        category: &CStr,
        message: &CStr,
    ) {
        if let Some(logger) = logger {
            // SAFETY: the importer's callback (the caller's contract); both strings live for
            // the duration of the call.
            unsafe { logger(environment, status, category.as_ptr(), message.as_ptr()) };
        }
    }
}

/// The layer's calls, for FMI 3.0.
fn fmi3<F>(c: fmi3Instance, function: &'static str, what: Call, body: F) -> fmi3Status
where
    F: FnOnce(&mut Component<Fmi3>) -> Result<Status, CallError>,
{
    call::<Fmi3, F>(c, function, what, body)
}

// ---------------------------------------------------------------------------------------------
// Inquire version, logging, instantiation
// ---------------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetDebugLogging(
    instance: fmi3Instance,
    loggingOn: fmi3Boolean,
    nCategories: usize,
    categories: *const fmi3String,
) -> fmi3Status {
    fmi3(
        instance,
        "fmi3SetDebugLogging",
        Call::SetDebugLogging,
        |comp| {
            // SAFETY: nCategories strings (contract).
            unsafe { comp.set_debug_logging(loggingOn, categories, nCategories) }
        },
    )
}

/// Both instantiate functions: the instance name, token and resource path, and the logger
/// (`loggingOn`, the callback, its environment).
///
/// # Safety
/// The strings and the callback as the contract says.
unsafe fn instantiate3(
    function: &'static str,
    interface: Requested,
    [name, token, resources]: [fmi3String; 3],
    (logging_on, logger, environment): (bool, fmi3LogMessageCallback, fmi3InstanceEnvironment),
) -> fmi3Instance {
    let a = Instantiation::<Fmi3> {
        function,
        interface,
        instance_name: name,
        token,
        resources,
        logging_on,
        logger,
        environment,
        memory: None,
    };
    // SAFETY: forwarded (the caller's contract).
    unsafe { instantiate(a) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    instanceName: fmi3String,
    instantiationToken: fmi3String,
    resourcePath: fmi3String,
    _visible: fmi3Boolean,
    loggingOn: fmi3Boolean,
    eventModeUsed: fmi3Boolean,
    _earlyReturnAllowed: fmi3Boolean,
    _requiredIntermediateVariables: *const fmi3ValueReference,
    nRequiredIntermediateVariables: usize,
    instanceEnvironment: fmi3InstanceEnvironment,
    logMessage: fmi3LogMessageCallback,
    _intermediateUpdate: fmi3IntermediateUpdateCallback,
) -> fmi3Instance {
    let interface = if eventModeUsed {
        Err(
            "eventModeUsed is true, but this FMU has no Event Mode in Co-Simulation \
             (hasEventMode=\"false\": events are handled inside fmi3DoStep)"
                .to_string(),
        )
    } else if nRequiredIntermediateVariables > 0 {
        Err(format!(
            "{nRequiredIntermediateVariables} required intermediate variables, but this FMU \
             provides none (providesIntermediateUpdate=\"false\")"
        ))
    } else {
        Ok(Interface::CoSimulation)
    };
    let strings = [instanceName, instantiationToken, resourcePath];
    let logger = (loggingOn, logMessage, instanceEnvironment);
    // SAFETY: the strings and the callback as the contract says.
    unsafe { instantiate3("fmi3InstantiateCoSimulation", interface, strings, logger) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    instanceName: fmi3String,
    instantiationToken: fmi3String,
    resourcePath: fmi3String,
    _visible: fmi3Boolean,
    loggingOn: fmi3Boolean,
    instanceEnvironment: fmi3InstanceEnvironment,
    logMessage: fmi3LogMessageCallback,
) -> fmi3Instance {
    let strings = [instanceName, instantiationToken, resourcePath];
    let logger = (loggingOn, logMessage, instanceEnvironment);
    let interface = Ok(Interface::ModelExchange);
    // SAFETY: the strings and the callback as the contract says.
    unsafe { instantiate3("fmi3InstantiateModelExchange", interface, strings, logger) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeInstance(instance: fmi3Instance) {
    // SAFETY: checked against the registry inside.
    unsafe { free_instance::<Fmi3>(instance) }
}

// ---------------------------------------------------------------------------------------------
// Life cycle
// ---------------------------------------------------------------------------------------------

/// Initialization Mode, with the experiment's times (FMI 2.0's fmi2SetupExperiment).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterInitializationMode(
    instance: fmi3Instance,
    toleranceDefined: fmi3Boolean,
    tolerance: fmi3Float64,
    startTime: fmi3Float64,
    stopTimeDefined: fmi3Boolean,
    stopTime: fmi3Float64,
) -> fmi3Status {
    let f = "fmi3EnterInitializationMode";
    fmi3(instance, f, Call::EnterInitializationMode, |comp| {
        let tolerance = toleranceDefined.then_some(tolerance);
        let stop = stopTimeDefined.then_some(stopTime);
        comp.setup_experiment(f, tolerance, startTime, stop)?;
        comp.instance.enter_initialization_mode()?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3ExitInitializationMode(instance: fmi3Instance) -> fmi3Status {
    let f = "fmi3ExitInitializationMode";
    fmi3(instance, f, Call::ExitInitializationMode, |comp| {
        comp.exit_initialization(f)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Terminate(instance: fmi3Instance) -> fmi3Status {
    fmi3(instance, "fmi3Terminate", Call::Terminate, |comp| {
        comp.instance.terminate()?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Reset(instance: fmi3Instance) -> fmi3Status {
    fmi3(instance, "fmi3Reset", Call::Reset, |comp| {
        comp.instance.reset()?;
        Ok(Status::Ok)
    })
}

// ---------------------------------------------------------------------------------------------
// Float64 values
// ---------------------------------------------------------------------------------------------

/// FMI 3.0 makes the event indicators variables: value references after the description's
/// variables, `event_indicator_<k>` (k from 1), in the network's order.
pub fn event_indicators(d: &Description) -> Vec<(u32, String)> {
    let first = d.variables.len() as u32;
    (0..d.event_indicators as u32)
        .map(|k| (first + k, format!("event_indicator_{}", k + 1)))
        .collect()
}

/// fmi3GetFloat64 of a list naming event indicator variables (value references past the
/// table's): the indicators are evaluated once, the table's values read one by one.
fn get_with_indicators(
    comp: &mut Component<Fmi3>,
    function: &str,
    vrs: &[u32],
    out: &mut [f64],
) -> Result<Status, CallError> {
    let n_vars = comp.instance.description().variables.len();
    let mut z = vec![0.0; comp.instance.description().event_indicators];
    if let Some(&vr) = vrs.iter().find(|&&vr| vr as usize >= n_vars + z.len()) {
        return Err(CallError(format!("no variable with value reference {vr}")));
    }
    comp.instance.event_indicator_values(&mut z)?;
    let mut status = Status::Ok;
    for (&vr, o) in vrs.iter().zip(out.iter_mut()) {
        match (vr as usize).checked_sub(n_vars) {
            Some(k) => *o = z[k],
            None => {
                let one =
                    comp.get_values(function, std::slice::from_ref(&vr), std::slice::from_mut(o))?;
                status = status.max(one);
            }
        }
    }
    Ok(status)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetFloat64(
    instance: fmi3Instance,
    valueReferences: *const fmi3ValueReference,
    nValueReferences: usize,
    values: *mut fmi3Float64,
    nValues: usize,
) -> fmi3Status {
    let f = "fmi3GetFloat64";
    fmi3(instance, f, Call::GetValues, |comp| {
        same_length("nValues", nValues, nValueReferences)?;
        // SAFETY: nValueReferences elements each (contract).
        let vrs = unsafe { slice_in(valueReferences, nValueReferences, "valueReferences[]")? };
        let out = unsafe { slice_out(values, nValues, "values[]")? };
        let n_vars = comp.instance.description().variables.len();
        if vrs.iter().any(|&vr| vr as usize >= n_vars) {
            return get_with_indicators(comp, f, vrs, out);
        }
        comp.get_values(f, vrs, out)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetFloat64(
    instance: fmi3Instance,
    valueReferences: *const fmi3ValueReference,
    nValueReferences: usize,
    values: *const fmi3Float64,
    nValues: usize,
) -> fmi3Status {
    fmi3(instance, "fmi3SetFloat64", Call::SetValues, |comp| {
        same_length("nValues", nValues, nValueReferences)?;
        // SAFETY: nValueReferences elements each (contract).
        let vrs = unsafe { slice_in(valueReferences, nValueReferences, "valueReferences[]")? };
        let vals = unsafe { slice_in(values, nValues, "values[]")? };
        comp.instance.set_real(vrs, vals)?;
        Ok(Status::Ok)
    })
}

// ---------------------------------------------------------------------------------------------
// FMU states
// ---------------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetFMUState(
    instance: fmi3Instance,
    FMUState: *mut fmi3FMUState,
) -> fmi3Status {
    fmi3(instance, "fmi3GetFMUState", Call::States, |comp| {
        comp.get_state(FMUState)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetFMUState(
    instance: fmi3Instance,
    FMUState: fmi3FMUState,
) -> fmi3Status {
    fmi3(instance, "fmi3SetFMUState", Call::States, |comp| {
        comp.set_state(FMUState)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeFMUState(
    instance: fmi3Instance,
    FMUState: *mut fmi3FMUState,
) -> fmi3Status {
    // Allowed in every state, the fatal one included.
    with_component::<Fmi3, _>(instance, "fmi3FreeFMUState", |comp| {
        comp.free_state(FMUState)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SerializedFMUStateSize(
    instance: fmi3Instance,
    FMUState: fmi3FMUState,
    size: *mut usize,
) -> fmi3Status {
    fmi3(
        instance,
        "fmi3SerializedFMUStateSize",
        Call::States,
        |comp| comp.state_size(FMUState, size),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SerializeFMUState(
    instance: fmi3Instance,
    FMUState: fmi3FMUState,
    serializedState: *mut fmi3Byte,
    size: usize,
) -> fmi3Status {
    fmi3(instance, "fmi3SerializeFMUState", Call::States, |comp| {
        // SAFETY: `size` writable bytes (contract).
        unsafe { comp.serialize_state(FMUState, serializedState, size) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3DeserializeFMUState(
    instance: fmi3Instance,
    serializedState: *const fmi3Byte,
    size: usize,
    FMUState: *mut fmi3FMUState,
) -> fmi3Status {
    fmi3(instance, "fmi3DeserializeFMUState", Call::States, |comp| {
        // SAFETY: `size` readable bytes (contract).
        unsafe { comp.deserialize_state(serializedState, size, FMUState) }
    })
}

// ---------------------------------------------------------------------------------------------
// Partial derivatives
// ---------------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetDirectionalDerivative(
    instance: fmi3Instance,
    unknowns: *const fmi3ValueReference,
    nUnknowns: usize,
    knowns: *const fmi3ValueReference,
    nKnowns: usize,
    seed: *const fmi3Float64,
    nSeed: usize,
    sensitivity: *mut fmi3Float64,
    nSensitivity: usize,
) -> fmi3Status {
    let f = "fmi3GetDirectionalDerivative";
    fmi3(instance, f, Call::GetDirectionalDerivative, |comp| {
        same_length("nSeed", nSeed, nKnowns)?;
        same_length("nSensitivity", nSensitivity, nUnknowns)?;
        // SAFETY: nUnknowns and nKnowns elements each (contract).
        let unknowns = unsafe { slice_in(unknowns, nUnknowns, "unknowns[]")? };
        let knowns = unsafe { slice_in(knowns, nKnowns, "knowns[]")? };
        let seed = unsafe { slice_in(seed, nSeed, "seed[]")? };
        let sensitivity = unsafe { slice_out(sensitivity, nSensitivity, "sensitivity[]")? };
        comp.directional_derivative(f, unknowns, knowns, seed, sensitivity)
    })
}
