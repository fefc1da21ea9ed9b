//! The FMI 3.0 C ABI, Co-Simulation and Model Exchange, on the same [`crate::cosim::Instance`]
//! as the FMI 2.0 layer: pointers, strings, the logger, states and panics are handled here;
//! the life cycle, values, steps, events and states are the instance's. Co-Simulation's own
//! functions are in `cs`, Model Exchange's in `me`, the functions of features the FMU does not
//! declare (other variable types, clocks, configuration mode, scheduled execution) in
//! `refused`.
//!
//! # Safety contract (all exported functions)
//! The caller is an FMI 3.0 importer and keeps the standard's contract:
//! - a non-null `fmi3Instance` is one that `fmi3Instantiate…` returned and that was not freed
//!   (other pointers are recognised from a registry and refused without being dereferenced);
//! - a non-null array pointer points to at least as many readable (or, for results, writable)
//!   elements as its length argument says; a non-null string is NUL-terminated;
//! - an `fmi3FMUState` is one this library returned and that was not freed (registry too);
//! - the `logMessage` callback stays valid until `fmi3FreeInstance`.
//!
//! Null pointers are refused with fmi3Error (or NULL from the instantiate functions) and a
//! message. No panic crosses the ABI: every function catches it, puts the instance in the
//! fatal state and returns fmi3Fatal. One instance must not be called from two threads at once;
//! different instances may run in parallel.
//!
//! Mapping onto the instance's phases (FMI 3.0 §4.2.5 state machine of Co-Simulation, §3.2.3
//! of Model Exchange): Instantiated and Initialization Mode are the same; Step Mode is the
//! instance's `stepComplete` (and `stepFailed` after a discarded step); Model Exchange's Event
//! Mode and Continuous-Time Mode are the instance's. Co-Simulation has no Event Mode
//! (`hasEventMode="false"`): `eventModeUsed` is refused, and fmi3ExitInitializationMode goes
//! straight to Step Mode. FMU states: the same snapshot and the same serialized blob (header,
//! checksum, GUID) as FMI 2.0, always boxed (FMI 3.0 has no memory callbacks).

#![allow(non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

mod cs;
pub mod me;
mod refused;

use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::Mutex;

use fmi_sys::fmi3::*;

use crate::cosim::{Call, CallError, Instance, Interface, LOG_CATEGORIES, Snapshot, StepStatus};
use crate::fmi2::{
    Hasher, Registry, StateRegistry, c_string, category_index, out_ptr, panic_text, registry,
    shrink_if_empty, shrink_set_if_empty, slice_in, slice_out,
};

const OK: fmi3Status = fmi3Status_fmi3OK;
const WARNING: fmi3Status = fmi3Status_fmi3Warning;
const DISCARD: fmi3Status = fmi3Status_fmi3Discard;
const ERROR: fmi3Status = fmi3Status_fmi3Error;
const FATAL: fmi3Status = fmi3Status_fmi3Fatal;

/// Live fmi3 instances and FMU states, by address (apart from the fmi2 ones: a pointer of one
/// interface is never taken for the other's).
static COMPONENTS: Mutex<Registry> =
    Mutex::new(std::collections::HashSet::with_hasher(Hasher::new()));
static STATES: Mutex<StateRegistry> =
    Mutex::new(std::collections::HashMap::with_hasher(Hasher::new()));

fn component_is_live(c: usize) -> bool {
    registry(&COMPONENTS).contains(&c)
}

/// The importer's logMessage with the enabled categories.
struct Logger {
    callback: fmi3LogMessageCallback,
    environment: fmi3InstanceEnvironment,
    enabled: Vec<bool>,
    calls: bool,
}

impl Logger {
    fn new(
        callback: fmi3LogMessageCallback,
        environment: fmi3InstanceEnvironment,
        on: bool,
    ) -> Self {
        let enabled: Vec<bool> = LOG_CATEGORIES
            .iter()
            .map(|(n, _)| n.starts_with("logStatus") || on)
            .collect();
        let calls = category_index("logCalls").is_some_and(|i| enabled[i]);
        Logger {
            callback,
            environment,
            enabled,
            calls,
        }
    }

    fn enabled(&self, category: &str) -> bool {
        category_index(category).is_some_and(|i| self.enabled[i])
    }

    fn log(&self, status: fmi3Status, category: &str, message: &str) {
        if !self.enabled(category) {
            return;
        }
        let Some(callback) = self.callback else {
            return;
        };
        let message = c_string(&fmi3_names(message));
        let category = c_string(category);
        // SAFETY: the importer's callback, valid until fmi3FreeInstance (contract); both
        // strings live for the duration of the call.
        unsafe {
            callback(
                self.environment,
                status,
                category.as_ptr(),
                message.as_ptr(),
            )
        };
    }

    fn error(&self, message: &str) {
        self.log(ERROR, "logStatusError", message);
    }
}

/// One fmi3Instance.
struct Component {
    log: Logger,
    instance: Instance,
}

/// One fmi3FMUState.
struct StateHandle {
    snapshot: Snapshot,
    /// The serialized form, made at the first size query and kept until the state changes.
    blob: Vec<u8>,
    blob_valid: bool,
}

/// The shared instance code (`crate::cosim`) names the FMI 2.0 function a message is about; an
/// FMI 3.0 importer reads the name of the function it called. Functions whose FMI 3.0 name
/// differs beyond the prefix come first; any other `fmi2X` becomes `fmi3X`.
const FMI3_NAMES: &[(&str, &str)] = &[
    ("fmi2GetReal", "fmi3GetFloat64"),
    ("fmi2SetReal", "fmi3SetFloat64"),
    ("fmi2SetupExperiment", "fmi3EnterInitializationMode"),
    ("fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives"),
    ("fmi2NewDiscreteStates", "fmi3UpdateDiscreteStates"),
    ("fmi2GetFMUstate", "fmi3GetFMUState"),
    ("fmi2SetFMUstate", "fmi3SetFMUState"),
    ("fmi2FreeFMUstate", "fmi3FreeFMUState"),
    ("fmi2SerializedFMUstateSize", "fmi3SerializedFMUStateSize"),
    ("fmi2SerializeFMUstate", "fmi3SerializeFMUState"),
    ("fmi2DeSerializeFMUstate", "fmi3DeserializeFMUState"),
    ("fmi2", "fmi3"),
];

fn fmi3_names(message: &str) -> std::borrow::Cow<'_, str> {
    if !message.contains("fmi2") {
        return std::borrow::Cow::Borrowed(message);
    }
    let mut out = message.to_owned();
    for (fmi2, fmi3) in FMI3_NAMES {
        out = out.replace(fmi2, fmi3);
    }
    std::borrow::Cow::Owned(out)
}

fn report_without_logger(message: &str) {
    let _ = catch_unwind(|| eprintln!("plenum fmi3: {message}"));
}

fn lookup(c: fmi3Instance, function: &str) -> Option<*mut Component> {
    if c.is_null() {
        report_without_logger(&format!("{function} called with a null fmi3Instance"));
        return None;
    }
    if !component_is_live(c as usize) {
        report_without_logger(&format!(
            "{function} called with {c:p}, which is not a live Plenum FMI 3.0 instance (freed, \
             or never returned by fmi3InstantiateCoSimulation / fmi3InstantiateModelExchange)"
        ));
        return None;
    }
    Some(c as *mut Component)
}

/// Run `body` on the instance behind `c`: refuses unknown pointers, logs errors, catches
/// panics (the instance becomes fatal), and logs the call under `logCalls`.
fn with_component<F>(c: fmi3Instance, function: &'static str, body: F) -> fmi3Status
where
    F: FnOnce(&mut Component) -> Result<fmi3Status, CallError>,
{
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Some(p) = lookup(c, function) else {
            return ERROR;
        };
        // SAFETY: a live component (registry), called from one thread at a time (contract).
        let comp = unsafe { &mut *p };
        if comp.log.calls {
            comp.log.log(OK, "logCalls", function);
        }
        match body(comp) {
            Ok(status) => status,
            Err(e) => {
                comp.log.error(&format!("{function}: {e}"));
                ERROR
            }
        }
    }));
    match outcome {
        Ok(status) => status,
        Err(payload) => {
            let text = panic_text(payload.as_ref());
            let logged = catch_unwind(AssertUnwindSafe(|| {
                if c.is_null() || !registry(&COMPONENTS).contains(&(c as usize)) {
                    return false;
                }
                // SAFETY: as above; the panicking borrow ended with the unwind.
                let comp = unsafe { &mut *(c as *mut Component) };
                comp.instance.set_fatal();
                comp.log.log(
                    FATAL,
                    "logStatusFatal",
                    &format!("{function}: internal error ({text}); the instance is unusable"),
                );
                true
            }));
            if !matches!(logged, Ok(true)) {
                report_without_logger(&format!("{function}: internal error ({text})"));
            }
            FATAL
        }
    }
}

fn step_status(s: StepStatus) -> fmi3Status {
    match s {
        StepStatus::Ok => OK,
        StepStatus::Warning => WARNING,
        StepStatus::Discard => DISCARD,
    }
}

/// A value array's length must be its value references' (every variable is a scalar).
fn same_length(what: &str, n_values: usize, n_refs: usize) -> Result<(), CallError> {
    if n_values != n_refs {
        return Err(CallError(format!(
            "{what} is {n_values}, expected {n_refs} (every variable of this model is a scalar)"
        )));
    }
    Ok(())
}

fn state_handle<'a>(s: fmi3FMUState) -> Result<&'a mut StateHandle, CallError> {
    if s.is_null() {
        return Err(CallError("the FMU state is NULL".into()));
    }
    if !registry(&STATES).contains_key(&(s as usize)) {
        return Err(CallError(format!(
            "{s:p} is not an FMU state of this library (freed, or never returned by \
             fmi3GetFMUState / fmi3DeserializeFMUState)"
        )));
    }
    // SAFETY: a live state (registry), not shared between threads (contract).
    Ok(unsafe { &mut *(s as *mut StateHandle) })
}

impl Component {
    fn new_state(&self, snapshot: Snapshot) -> fmi3FMUState {
        let p = Box::into_raw(Box::new(StateHandle {
            snapshot,
            blob: Vec::new(),
            blob_valid: false,
        }));
        registry(&STATES).insert(p as usize, self as *const Component as usize);
        p as fmi3FMUState
    }
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
    let f = "fmi3SetDebugLogging";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::SetDebugLogging, f)?;
        // SAFETY: nCategories strings (contract).
        let names = unsafe { slice_in(categories, nCategories, "categories[]")? };
        let mut idx = Vec::with_capacity(names.len());
        for (k, &p) in names.iter().enumerate() {
            if p.is_null() {
                return Err(CallError(format!("categories[{k}] is NULL")));
            }
            // SAFETY: non-null NUL-terminated string (contract).
            let name = unsafe { CStr::from_ptr(p) }.to_string_lossy();
            let i = category_index(&name).ok_or_else(|| {
                let known: Vec<&str> = LOG_CATEGORIES.iter().map(|(n, _)| *n).collect();
                CallError(format!(
                    "unknown log category `{name}` (known: {})",
                    known.join(", ")
                ))
            })?;
            idx.push(i);
        }
        if idx.is_empty() {
            comp.log.enabled.iter_mut().for_each(|e| *e = loggingOn);
        } else {
            for i in idx {
                comp.log.enabled[i] = loggingOn;
            }
        }
        comp.log.calls = comp.log.enabled("logCalls");
        Ok(OK)
    })
}

/// The instance for `token` from the model in `resource_path`; `Err` is the message to log.
unsafe fn instantiate(
    token: fmi3String,
    resource_path: fmi3String,
    interface: Interface,
) -> Result<Instance, String> {
    if token.is_null() {
        return Err("instantiationToken is NULL".into());
    }
    if resource_path.is_null() {
        return Err("resourcePath is NULL (the model is resources/model.toml)".into());
    }
    // SAFETY: non-null NUL-terminated strings (contract).
    let token = unsafe { CStr::from_ptr(token) }
        .to_string_lossy()
        .into_owned();
    let location = unsafe { CStr::from_ptr(resource_path) }.to_string_lossy();
    // FMI 3.0 passes a native path (with a trailing separator); a file URI is accepted too.
    let dir = if location.starts_with("file:") {
        crate::fmi2::resource_dir(&location)?
    } else {
        std::path::PathBuf::from(location.as_ref())
    };
    let path = dir.join("model.toml");
    let label = path.display().to_string();
    let bytes = crate::model::read_model_file(&path).map_err(|e| {
        format!(
            "cannot read the model {label} (from resourcePath `{location}`): {}",
            e.trim_start_matches("cannot read: ")
        )
    })?;
    if bytes.is_empty() {
        return Err(format!("the model file {label} is empty"));
    }
    let hashed = crate::cosim::guid_of(&bytes);
    if hashed != token {
        return Err(format!(
            "instantiationToken mismatch: modelDescription says {token}, resources/model.toml \
             hashes to {hashed} ({label})"
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "the model file {label} is not valid UTF-8 (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    Instance::with_interface(&text, &label, interface).map_err(|e| {
        if e.starts_with("Model Exchange is not offered") {
            e
        } else {
            format!("the model file is invalid: {e}")
        }
    })
}

/// Shared by both instantiate functions: `check` refuses arguments the interface does not
/// accept before anything is loaded.
#[allow(clippy::too_many_arguments)]
unsafe fn instantiate_as(
    function: &str,
    interface: Interface,
    instance_name: fmi3String,
    token: fmi3String,
    resource_path: fmi3String,
    logging_on: bool,
    environment: fmi3InstanceEnvironment,
    log_message: fmi3LogMessageCallback,
    check: Option<String>,
) -> fmi3Instance {
    let made = catch_unwind(AssertUnwindSafe(|| {
        let log = Logger::new(log_message, environment, logging_on);
        let name = if instance_name.is_null() {
            String::new()
        } else {
            // SAFETY: non-null NUL-terminated string (contract).
            unsafe { CStr::from_ptr(instance_name) }
                .to_string_lossy()
                .into_owned()
        };
        if name.is_empty() {
            log.error(&format!("{function}: instanceName is NULL or empty"));
            return ptr::null_mut();
        }
        if let Some(why) = check {
            log.error(&format!("{function}: {why}"));
            return ptr::null_mut();
        }
        // SAFETY: the strings are checked for NULL inside (contract for the rest).
        let instance = match unsafe { instantiate(token, resource_path, interface) } {
            Ok(i) => i,
            Err(message) => {
                log.error(&format!("{function}: {message}"));
                return ptr::null_mut();
            }
        };
        log.log(
            OK,
            "logEvents",
            &format!(
                "{function}: `{name}`, model `{}` ({}), instantiationToken {}",
                instance.description().model_name,
                instance.description().description,
                instance.guid()
            ),
        );
        for w in instance.plausibility_warnings() {
            log.log(WARNING, "logStatusWarning", &format!("{function}: {w}"));
        }
        let comp = Box::into_raw(Box::new(Component { log, instance }));
        registry(&COMPONENTS).insert(comp as usize);
        comp as fmi3Instance
    }));
    match made {
        Ok(c) => c,
        Err(payload) => {
            report_without_logger(&format!(
                "{function}: internal error ({})",
                panic_text(payload.as_ref())
            ));
            ptr::null_mut()
        }
    }
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
    let check = if eventModeUsed {
        Some(
            "eventModeUsed is true, but this FMU has no Event Mode in Co-Simulation \
             (hasEventMode=\"false\": events are handled inside fmi3DoStep)"
                .to_string(),
        )
    } else if nRequiredIntermediateVariables > 0 {
        Some(format!(
            "{nRequiredIntermediateVariables} required intermediate variables, but this FMU \
             provides none (providesIntermediateUpdate=\"false\")"
        ))
    } else {
        None
    };
    // SAFETY: forwarded arguments (contract).
    unsafe {
        instantiate_as(
            "fmi3InstantiateCoSimulation",
            Interface::CoSimulation,
            instanceName,
            instantiationToken,
            resourcePath,
            loggingOn,
            instanceEnvironment,
            logMessage,
            check,
        )
    }
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
    // SAFETY: forwarded arguments (contract).
    unsafe {
        instantiate_as(
            "fmi3InstantiateModelExchange",
            Interface::ModelExchange,
            instanceName,
            instantiationToken,
            resourcePath,
            loggingOn,
            instanceEnvironment,
            logMessage,
            None,
        )
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeInstance(instance: fmi3Instance) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if lookup(instance, "fmi3FreeInstance").is_none() {
            return;
        }
        let c = instance as usize;
        {
            let mut components = registry(&COMPONENTS);
            components.remove(&c);
            shrink_set_if_empty(&mut components);
        }
        // Every state this instance handed out and the importer did not free goes with it.
        let owned: Vec<usize> = {
            let mut states = registry(&STATES);
            let owned: Vec<usize> = states
                .iter()
                .filter(|&(_, &owner)| owner == c)
                .map(|(&s, _)| s)
                .collect();
            for s in &owned {
                states.remove(s);
            }
            shrink_if_empty(&mut states);
            owned
        };
        for s in owned {
            // SAFETY: a live handle just removed from the registry: used nowhere else.
            drop(unsafe { Box::from_raw(s as *mut StateHandle) });
        }
        // SAFETY: a live component just taken out of the registry: nothing else uses it.
        drop(unsafe { Box::from_raw(instance as *mut Component) });
    }));
}

// ---------------------------------------------------------------------------------------------
// Life cycle
// ---------------------------------------------------------------------------------------------

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
    with_component(instance, f, |comp| {
        comp.instance.require(Call::EnterInitializationMode, f)?;
        let stop = stopTimeDefined.then_some(stopTime);
        comp.instance.setup_experiment(startTime, stop)?;
        comp.instance.enter_initialization_mode()?;
        if toleranceDefined {
            comp.log.log(
                OK,
                "logEvents",
                &format!(
                    "{f}: tolerance {tolerance:e} not used (the model file's [solver] settings \
                     govern the steps: a fixed step or its own rtol)"
                ),
            );
        }
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3ExitInitializationMode(instance: fmi3Instance) -> fmi3Status {
    let f = "fmi3ExitInitializationMode";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::ExitInitializationMode, f)?;
        comp.instance.exit_initialization_mode()?;
        // Parameters set since instantiation (its own warnings were logged there).
        if comp.instance.has_overrides() {
            for w in comp.instance.plausibility_warnings() {
                comp.log
                    .log(WARNING, "logStatusWarning", &format!("{f}: {w}"));
            }
        }
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Terminate(instance: fmi3Instance) -> fmi3Status {
    let f = "fmi3Terminate";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::Terminate, f)?;
        comp.instance.terminate()?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Reset(instance: fmi3Instance) -> fmi3Status {
    let f = "fmi3Reset";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::Reset, f)?;
        comp.instance.reset()?;
        Ok(OK)
    })
}

// ---------------------------------------------------------------------------------------------
// Float64 values
// ---------------------------------------------------------------------------------------------

/// FMI 3.0 makes Model Exchange's event indicators variables: value references after the
/// description's variables, `event_indicator_<k>` (k from 1), in the network's order.
pub fn event_indicators(d: &crate::cosim::Description) -> Vec<(u32, String)> {
    let first = d.variables.len() as u32;
    (0..d.event_indicators as u32)
        .map(|k| (first + k, format!("event_indicator_{}", k + 1)))
        .collect()
}

/// fmi3GetFloat64 of a list naming event indicators (value references past the table's):
/// the indicators are evaluated once, the other values read one by one.
fn get_with_indicators(
    comp: &mut Component,
    vrs: &[u32],
    out: &mut [f64],
) -> Result<fmi3Status, CallError> {
    let f = "fmi3GetFloat64";
    let n_vars = comp.instance.description().variables.len();
    let n_ind = comp.instance.description().event_indicators;
    if let Some(&vr) = vrs.iter().find(|&&vr| vr as usize >= n_vars + n_ind) {
        return Err(CallError(format!("no variable with value reference {vr}")));
    }
    if !comp.instance.is_model_exchange() {
        return Err(CallError(format!(
            "value reference {} is an event indicator, which a Co-Simulation instance does not              evaluate (events are handled inside fmi3DoStep)",
            vrs.iter()
                .find(|&&vr| vr as usize >= n_vars)
                .copied()
                .unwrap_or(0)
        )));
    }
    let mut z = vec![0.0; n_ind];
    comp.instance.require(Call::GetEventIndicators, f)?;
    comp.instance.event_indicators(&mut z)?;
    let mut status = OK;
    for (&vr, o) in vrs.iter().zip(out.iter_mut()) {
        if let Some(k) = (vr as usize).checked_sub(n_vars) {
            *o = z[k];
        } else {
            let r = comp
                .instance
                .get_real_checked(std::slice::from_ref(&vr), std::slice::from_mut(o))?;
            status = status.max(me::reported(comp, f, &r));
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
    with_component(instance, f, |comp| {
        comp.instance.require(Call::GetValues, f)?;
        same_length("nValues", nValues, nValueReferences)?;
        // SAFETY: nValueReferences elements each (contract).
        let vrs = unsafe { slice_in(valueReferences, nValueReferences, "valueReferences[]")? };
        let out = unsafe { slice_out(values, nValues, "values[]")? };
        let n_vars = comp.instance.description().variables.len();
        if vrs.iter().any(|&vr| vr as usize >= n_vars) {
            return get_with_indicators(comp, vrs, out);
        }
        if comp.instance.is_model_exchange() {
            let r = comp.instance.get_real_checked(vrs, out)?;
            return Ok(me::reported(comp, f, &r));
        }
        comp.instance.get_real(vrs, out)?;
        Ok(OK)
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
    let f = "fmi3SetFloat64";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::SetValues, f)?;
        same_length("nValues", nValues, nValueReferences)?;
        // SAFETY: nValueReferences elements each (contract).
        let vrs = unsafe { slice_in(valueReferences, nValueReferences, "valueReferences[]")? };
        let vals = unsafe { slice_in(values, nValues, "values[]")? };
        comp.instance.set_real(vrs, vals)?;
        Ok(OK)
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
    let f = "fmi3GetFMUState";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::States, f)?;
        let slot = out_ptr(FMUState, "FMUState (the fmi3FMUState* argument)")?;
        if slot.is_null() {
            let snapshot = comp.instance.snapshot()?;
            *slot = comp.new_state(snapshot);
        } else {
            let handle = state_handle(*slot)?;
            comp.instance.snapshot_into(&mut handle.snapshot)?;
            handle.blob_valid = false;
        }
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetFMUState(
    instance: fmi3Instance,
    FMUState: fmi3FMUState,
) -> fmi3Status {
    let f = "fmi3SetFMUState";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::States, f)?;
        let handle = state_handle(FMUState)?;
        comp.instance.restore(&handle.snapshot)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeFMUState(
    instance: fmi3Instance,
    FMUState: *mut fmi3FMUState,
) -> fmi3Status {
    // Allowed in every state, the fatal one included.
    with_component(instance, "fmi3FreeFMUState", |_comp| {
        let slot = out_ptr(FMUState, "FMUState (the fmi3FMUState* argument)")?;
        if slot.is_null() {
            return Ok(OK);
        }
        {
            let mut states = registry(&STATES);
            match states.get(&(*slot as usize)) {
                None => {
                    return Err(CallError(format!(
                        "{:p} is not an FMU state of this library (freed, or never returned by \
                         fmi3GetFMUState / fmi3DeserializeFMUState)",
                        *slot
                    )));
                }
                Some(&owner) if owner != instance as usize => {
                    return Err(CallError(format!(
                        "{:p} is an FMU state of another instance: only the instance that \
                         returned it may free it",
                        *slot
                    )));
                }
                Some(_) => {}
            }
            states.remove(&(*slot as usize));
            shrink_if_empty(&mut states);
        }
        // SAFETY: a live handle of this instance, just removed from the registry.
        drop(unsafe { Box::from_raw(*slot as *mut StateHandle) });
        *slot = ptr::null_mut();
        Ok(OK)
    })
}

fn blob_of<'a>(comp: &Component, handle: &'a mut StateHandle) -> Result<&'a [u8], CallError> {
    if !handle.blob_valid {
        comp.instance
            .serialize_into(&handle.snapshot, &mut handle.blob)?;
        handle.blob_valid = true;
    }
    Ok(&handle.blob)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SerializedFMUStateSize(
    instance: fmi3Instance,
    FMUState: fmi3FMUState,
    size: *mut usize,
) -> fmi3Status {
    let f = "fmi3SerializedFMUStateSize";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::States, f)?;
        let size = out_ptr(size, "size")?;
        let handle = state_handle(FMUState)?;
        *size = blob_of(comp, handle)?.len();
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SerializeFMUState(
    instance: fmi3Instance,
    FMUState: fmi3FMUState,
    serializedState: *mut fmi3Byte,
    size: usize,
) -> fmi3Status {
    let f = "fmi3SerializeFMUState";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::States, f)?;
        let handle = state_handle(FMUState)?;
        let blob = blob_of(comp, handle)?;
        if size != blob.len() {
            return Err(CallError(format!(
                "size is {size} bytes, the state takes {} (ask fmi3SerializedFMUStateSize)",
                blob.len()
            )));
        }
        // SAFETY: `size` writable bytes (contract).
        let out = unsafe { slice_out(serializedState, size, "serializedState[]")? };
        out.copy_from_slice(blob);
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3DeserializeFMUState(
    instance: fmi3Instance,
    serializedState: *const fmi3Byte,
    size: usize,
    FMUState: *mut fmi3FMUState,
) -> fmi3Status {
    let f = "fmi3DeserializeFMUState";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::States, f)?;
        let slot = out_ptr(FMUState, "FMUState (the fmi3FMUState* argument)")?;
        if !slot.is_null() {
            state_handle(*slot)?;
        }
        // SAFETY: `size` readable bytes (contract).
        let bytes = unsafe { slice_in(serializedState, size, "serializedState[]")? };
        // Decoded and checked completely before anything is touched.
        let snapshot = comp.instance.deserialize(bytes)?;
        if slot.is_null() {
            *slot = comp.new_state(snapshot);
        } else {
            let handle = state_handle(*slot)?;
            handle.snapshot = snapshot;
            handle.blob_valid = false;
        }
        Ok(OK)
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
    with_component(instance, f, |comp| {
        comp.instance.require(Call::GetDirectionalDerivative, f)?;
        same_length("nSeed", nSeed, nKnowns)?;
        same_length("nSensitivity", nSensitivity, nUnknowns)?;
        // SAFETY: nUnknowns and nKnowns elements each (contract).
        let unknowns = unsafe { slice_in(unknowns, nUnknowns, "unknowns[]")? };
        let knowns = unsafe { slice_in(knowns, nKnowns, "knowns[]")? };
        let seed = unsafe { slice_in(seed, nSeed, "seed[]")? };
        let sensitivity = unsafe { slice_out(sensitivity, nSensitivity, "sensitivity[]")? };
        if comp.instance.is_model_exchange() {
            let r = comp.instance.exchange_directional_derivative(
                unknowns,
                knowns,
                seed,
                sensitivity,
            )?;
            return Ok(me::reported(comp, f, &r));
        }
        comp.instance
            .directional_derivative(unknowns, knowns, seed, sensitivity)?;
        Ok(OK)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn messages_name_the_fmi3_function_the_importer_called() {
        let cases = [
            (
                "`relief.area` = -1 (fmi2SetReal): must be > 0",
                "`relief.area` = -1 (fmi3SetFloat64): must be > 0",
            ),
            (
                "fmi2DeSerializeFMUstate: wrong model; fmi2DoStep is synchronous",
                "fmi3DeserializeFMUState: wrong model; fmi3DoStep is synchronous",
            ),
            (
                "fmi2GetDerivatives at t = 1 s; fmi2NewDiscreteStates",
                "fmi3GetContinuousStateDerivatives at t = 1 s; fmi3UpdateDiscreteStates",
            ),
            ("no function named", "no function named"),
        ];
        for (fmi2, fmi3) in cases {
            println!("{fmi2:?} -> {:?}", super::fmi3_names(fmi2));
            assert_eq!(super::fmi3_names(fmi2), fmi3);
        }
    }

    use super::*;

    /// A state behind the checks that makes the simulation index out of bounds: the panic is
    /// caught inside fmi3DoStep, which returns fmi3Fatal; the instance then refuses everything
    /// but freeing.
    #[test]
    fn a_panic_inside_a_call_becomes_fmi3fatal_and_never_crosses_the_abi() {
        let text = include_str!("../../models/projectile.toml");
        let dir = std::env::temp_dir().join(format!("plenum-fmi3-panic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("model.toml"), text).unwrap();
        let token = std::ffi::CString::new(crate::cosim::guid_of(text.as_bytes())).unwrap();
        let path = std::ffi::CString::new(format!("{}/", dir.display())).unwrap();

        let mut inst = Instance::new(text, "model.toml").unwrap();
        inst.setup_experiment(0.0, None).unwrap();
        inst.enter_initialization_mode().unwrap();
        inst.exit_initialization_mode().unwrap();
        let mut snap = inst.snapshot().unwrap();
        snap.y_mut().truncate(3);

        unsafe {
            let c = fmi3InstantiateCoSimulation(
                c"panic".as_ptr(),
                token.as_ptr(),
                path.as_ptr(),
                false,
                false,
                false,
                false,
                ptr::null(),
                0,
                ptr::null_mut(),
                None,
                None,
            );
            assert!(!c.is_null());
            assert_eq!(
                fmi3EnterInitializationMode(c, false, 0.0, 0.0, false, 0.0),
                OK
            );
            assert_eq!(fmi3ExitInitializationMode(c), OK);
            let mut s: fmi3FMUState = ptr::null_mut();
            assert_eq!(fmi3GetFMUState(c, &mut s), OK);
            let put = with_component(c, "test", |comp| {
                comp.instance.restore_unchecked(&snap);
                Ok(OK)
            });
            assert_eq!(put, OK);
            let (mut e, mut t, mut r, mut l) = (false, false, false, 0.0);
            let status = cs::fmi3DoStep(c, 0.0, 1e-4, false, &mut e, &mut t, &mut r, &mut l);
            assert_eq!(status, FATAL);
            let mut v = [0.0];
            assert_eq!(
                fmi3GetFloat64(c, [0u32].as_ptr(), 1, v.as_mut_ptr(), 1),
                ERROR
            );
            assert_eq!(fmi3Reset(c), ERROR);
            assert_eq!(fmi3FreeFMUState(c, &mut s), OK);
            assert!(s.is_null());
            fmi3FreeInstance(c);
        }
        let _ = std::fs::remove_dir_all(&dir);
        println!("a panic in fmi3DoStep → fmi3Fatal; then fmi3Error for every call but the frees");
    }
}
