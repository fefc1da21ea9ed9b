//! The FMI 2.0 C ABI, Co-Simulation and Model Exchange: every fmi2 function of the standard's
//! headers, exported unmangled, on top of [`crate::cosim::Instance`] (the Model Exchange
//! functions in `me`). This module is the ABI and nothing else:
//! pointers, strings, callbacks, memory and panics are handled here; the life cycle, values,
//! steps and states are the instance's.
//!
//! # Safety contract (all exported functions)
//! The caller is an FMI 2.0 master and keeps the standard's contract:
//! - a non-null `fmi2Component` is one that `fmi2Instantiate` returned and that was not freed
//!   (pointers that are not, or no longer, live instances are recognised from a registry and
//!   refused without being dereferenced);
//! - a non-null array pointer points to at least `nvr` (or `size`, `nCategories`) readable
//!   (or, for results, writable) elements; a non-null string is NUL-terminated;
//! - an `fmi2FMUstate` is one this library returned and that was not freed (checked against a
//!   registry as well);
//! - the callback functions stay valid until `fmi2FreeInstance`; the logger accepts the
//!   format `"%s"` with one string argument; `allocateMemory` returns memory aligned for any
//!   type, like `calloc`.
//!
//! Null pointers are refused with fmi2Error (or NULL from fmi2Instantiate) and a message. No
//! panic crosses the ABI: every function catches it, puts the instance in the fatal state and
//! returns fmi2Fatal. One instance must not be called from two threads at once (FMI 2.0 §2.1.5);
//! different instances may run in parallel.
//!
//! Memory: instances are Rust boxes. FMU states are allocated with the master's
//! `allocateMemory` when it gave one (with `freeMemory`), else boxed; each state remembers which,
//! so fmi2FreeFMUstate releases it with the matching function. A state may be set into any live
//! instance of the same model (the GUID is checked); fmi2FreeInstance releases every state its
//! instance handed out that the master has not freed (with that instance's `freeMemory`, valid
//! until then), so a later fmi2FreeFMUstate of such a pointer is refused like any unknown one.
//! The registries of live instances and states give their storage back when they become empty:
//! a master that frees what it made and unloads the library leaves nothing allocated behind.
//!
//! Logging: the master's logger is always called with the format `"%s"` and the message as its
//! argument. Categories are [`crate::cosim::LOG_CATEGORIES`]; the status categories (warning,
//! discard, error, fatal) are on from the start, `logEvents` and `logCalls` follow `loggingOn`;
//! fmi2SetDebugLogging switches the listed categories (all when none are listed).

#![allow(non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

pub mod me;
mod uri;

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use fmi_sys::fmi2::*;

use crate::cosim::{Call, CallError, Instance, Interface, LOG_CATEGORIES, Snapshot, StepStatus};

pub use uri::resource_dir;

const OK: fmi2Status = fmi2Status_fmi2OK;
const WARNING: fmi2Status = fmi2Status_fmi2Warning;
const DISCARD: fmi2Status = fmi2Status_fmi2Discard;
const ERROR: fmi2Status = fmi2Status_fmi2Error;
const FATAL: fmi2Status = fmi2Status_fmi2Fatal;

/// Live instances and FMU states, by address: a pointer not in these sets is never dereferenced.
/// Hashes an address (the registries' keys) by one multiply: every fmi2 call looks its
/// component up, and SipHash would be a third of the ABI's overhead (docs/performance.md, "FMI
/// overhead"). The keys are our own allocations' addresses, not chosen by an attacker.
#[derive(Default, Clone, Copy)]
pub(crate) struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // Fibonacci hashing; the high bits (which hashbrown uses) depend on every input bit.
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub(crate) type Hasher = std::hash::BuildHasherDefault<AddressHasher>;
pub(crate) type Registry = HashSet<usize, Hasher>;
/// Live FMU states, each with the component that handed it out.
pub(crate) type StateRegistry = HashMap<usize, usize, Hasher>;

// Plain statics (no lazy initialization): an empty set holds no heap storage, and the sets
// are emptied of their storage when their last entry leaves (`shrink_if_empty`).
static COMPONENTS: Mutex<Registry> = Mutex::new(HashSet::with_hasher(Hasher::new()));
static STATES: Mutex<StateRegistry> = Mutex::new(HashMap::with_hasher(Hasher::new()));

/// Bumped after a component leaves the registry (fmi2FreeInstance): a pointer found live at
/// generation g is live while the generation is still g.
static COMPONENT_GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The component this thread last found in the registry, and the generation then: a call
    /// on it skips the registry's lock (the master calls one instance from one thread at a
    /// time, mostly the same one in a row).
    static LAST_COMPONENT: Cell<(usize, u64)> = const { Cell::new((0, u64::MAX)) };
}

/// Whether `c` is a live component. The generation is read before the registry, so a free
/// that the registry did not show yet bumps it after this read and the next call looks again.
fn component_is_live(c: usize) -> bool {
    let g = COMPONENT_GENERATION.load(Ordering::SeqCst);
    if LAST_COMPONENT.with(Cell::get) == (c, g) {
        return true;
    }
    let live = registry(&COMPONENTS).contains(&c);
    if live {
        LAST_COMPONENT.with(|l| l.set((c, g)));
    }
    live
}

pub(crate) fn registry<T>(set: &'static Mutex<T>) -> MutexGuard<'static, T> {
    set.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Give a registry's storage back once its last entry has left (a `HashSet` keeps its
/// capacity): nothing the library allocated outlives the master's last free, and a dlclose
/// then leaves no block behind.
pub(crate) fn shrink_if_empty<K, V>(map: &mut HashMap<K, V, Hasher>) {
    if map.is_empty() {
        *map = HashMap::with_hasher(Hasher::new());
    }
}

pub(crate) fn shrink_set_if_empty(set: &mut Registry) {
    if set.is_empty() {
        *set = HashSet::with_hasher(Hasher::new());
    }
}

pub(crate) fn category_index(name: &str) -> Option<usize> {
    LOG_CATEGORIES.iter().position(|(n, _)| *n == name)
}

/// The master's logger with the instance name and the enabled categories.
struct Logger {
    instance_name: CString,
    logger: fmi2CallbackLogger,
    environment: fmi2ComponentEnvironment,
    enabled: Vec<bool>,
    /// `logCalls` is on (read by every call: kept apart from the search by name).
    calls: bool,
}

impl Logger {
    fn new(instance_name: &str, functions: &fmi2CallbackFunctions, logging_on: bool) -> Logger {
        let enabled = LOG_CATEGORIES
            .iter()
            .map(|(n, _)| n.starts_with("logStatus") || logging_on)
            .collect();
        let mut log = Logger {
            instance_name: c_string(instance_name),
            logger: functions.logger,
            environment: functions.componentEnvironment,
            enabled,
            calls: false,
        };
        log.calls = log.enabled("logCalls");
        log
    }

    fn enabled(&self, category: &str) -> bool {
        category_index(category).is_some_and(|i| self.enabled[i])
    }

    /// Send one message (if its category is on), always as `logger(..., "%s", message)`.
    fn log(&self, status: fmi2Status, category: &str, message: &str) {
        if !self.enabled(category) {
            return;
        }
        let Some(logger) = self.logger else {
            return;
        };
        let message = c_string(message);
        let category = c_string(category);
        // SAFETY: the master's logger, valid until fmi2FreeInstance (contract above); every
        // pointer is a live NUL-terminated string for the duration of the call.
        unsafe {
            logger(
                self.environment,
                self.instance_name.as_ptr(),
                status,
                category.as_ptr(),
                c"%s".as_ptr(),
                message.as_ptr(),
            );
        }
    }

    fn error(&self, message: &str) {
        self.log(ERROR, "logStatusError", message);
    }
}

/// A C string of `s`, with any NUL shown as `\0` so nothing is cut off.
pub(crate) fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

/// One fmi2Component.
struct Component {
    log: Logger,
    allocate: fmi2CallbackAllocateMemory,
    free: fmi2CallbackFreeMemory,
    instance: Instance,
}

/// One fmi2FMUstate.
struct StateHandle {
    /// How the handle's own memory was obtained: the master's freeMemory, or a Rust box.
    free: fmi2CallbackFreeMemory,
    snapshot: Snapshot,
    /// The serialized form, made at the first size query and kept until the state changes
    /// (`blob_valid`); its storage is reused when the state is overwritten.
    blob: Vec<u8>,
    blob_valid: bool,
}

pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Last resort for calls that have no instance (and so no logger) to report to.
fn report_without_logger(message: &str) {
    let _ = catch_unwind(|| eprintln!("plenum fmi2: {message}"));
}

/// The live component behind `c`, or `None` (reported on stderr: there is no logger).
fn lookup(c: fmi2Component, function: &str) -> Option<*mut Component> {
    if c.is_null() {
        report_without_logger(&format!("{function} called with a null fmi2Component"));
        return None;
    }
    if !component_is_live(c as usize) {
        report_without_logger(&format!(
            "{function} called with {c:p}, which is not a live Plenum instance (freed, or never \
             returned by fmi2Instantiate)"
        ));
        return None;
    }
    Some(c as *mut Component)
}

/// Run `body` on the component behind `c`: refuses unknown pointers, logs errors, catches
/// panics (the instance becomes fatal), and logs the call under `logCalls`.
fn with_component<F>(c: fmi2Component, function: &'static str, body: F) -> fmi2Status
where
    F: FnOnce(&mut Component) -> Result<fmi2Status, CallError>,
{
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Some(p) = lookup(c, function) else {
            return ERROR;
        };
        // SAFETY: `p` is a live component (registry) and the master does not call one
        // instance from two threads at once (contract above).
        let comp = unsafe { &mut *p };
        // fmi2DoStep logs its own call line, with its arguments.
        if comp.log.calls && function != "fmi2DoStep" {
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
                // SAFETY: as above; the panicking borrow has ended with the unwind.
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

/// `n` elements at `p` (an empty slice for n = 0, whatever `p` is), or an error naming `what`.
pub(crate) unsafe fn slice_in<'a, T>(
    p: *const T,
    n: usize,
    what: &str,
) -> Result<&'a [T], CallError> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(CallError(format!("{what} is NULL with {n} elements")));
    }
    if n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(CallError(format!(
            "{what}: {n} elements is not a valid length"
        )));
    }
    // SAFETY: non-null, and the master provides n elements (contract above).
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

pub(crate) unsafe fn slice_out<'a, T>(
    p: *mut T,
    n: usize,
    what: &str,
) -> Result<&'a mut [T], CallError> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(CallError(format!("{what} is NULL with {n} elements")));
    }
    if n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(CallError(format!(
            "{what}: {n} elements is not a valid length"
        )));
    }
    // SAFETY: non-null, and the master provides n writable elements (contract above).
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

pub(crate) fn out_ptr<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, CallError> {
    if p.is_null() {
        return Err(CallError(format!("{what} is NULL")));
    }
    // SAFETY: non-null pointer to a writable value (contract above).
    Ok(unsafe { &mut *p })
}

/// The live state behind `s`.
fn state_handle<'a>(s: fmi2FMUstate) -> Result<&'a mut StateHandle, CallError> {
    if s.is_null() {
        return Err(CallError("the FMU state is NULL".into()));
    }
    if !registry(&STATES).contains_key(&(s as usize)) {
        return Err(CallError(format!(
            "{s:p} is not an FMU state of this library (freed, or never returned by \
             fmi2GetFMUstate / fmi2DeSerializeFMUstate)"
        )));
    }
    // SAFETY: a live state (registry); states are not shared between threads (contract).
    Ok(unsafe { &mut *(s as *mut StateHandle) })
}

impl Component {
    /// A new state handle holding `snapshot`, in the master's memory if it gave an allocator,
    /// registered as handed out by this component.
    fn new_state(&self, snapshot: Snapshot) -> Result<fmi2FMUstate, CallError> {
        let p: *mut StateHandle = match (self.allocate, self.free) {
            (Some(allocate), Some(free)) => {
                let size = std::mem::size_of::<StateHandle>();
                // SAFETY: the master's allocator (contract above).
                let raw = unsafe { allocate(1, size) } as *mut StateHandle;
                if raw.is_null() {
                    return Err(CallError(format!(
                        "allocateMemory(1, {size}) returned NULL"
                    )));
                }
                if (raw as usize) % std::mem::align_of::<StateHandle>() != 0 {
                    // SAFETY: returned by allocate above, not used.
                    unsafe { free(raw as *mut c_void) };
                    return Err(CallError(format!(
                        "allocateMemory returned {raw:p}, not aligned to {} bytes",
                        std::mem::align_of::<StateHandle>()
                    )));
                }
                // SAFETY: fresh, aligned memory of the right size.
                unsafe {
                    ptr::write(
                        raw,
                        StateHandle {
                            free: Some(free),
                            snapshot,
                            blob: Vec::new(),
                            blob_valid: false,
                        },
                    )
                };
                raw
            }
            _ => Box::into_raw(Box::new(StateHandle {
                free: None,
                snapshot,
                blob: Vec::new(),
                blob_valid: false,
            })),
        };
        registry(&STATES).insert(p as usize, self as *const Component as usize);
        Ok(p as fmi2FMUstate)
    }
}

/// Drop a state handle and release its memory with the function that matches its allocation.
/// The caller has removed it from the registry.
unsafe fn release_state(p: *mut StateHandle) {
    // SAFETY: a live handle, removed from the registry by the caller, so used nowhere else.
    unsafe {
        match (*p).free {
            Some(free) => {
                ptr::drop_in_place(p);
                free(p as *mut c_void);
            }
            None => drop(Box::from_raw(p)),
        }
    }
}

fn step_status(s: StepStatus) -> fmi2Status {
    match s {
        StepStatus::Ok => OK,
        StepStatus::Warning => WARNING,
        StepStatus::Discard => DISCARD,
    }
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
    with_component(c, "fmi2SetDebugLogging", |comp| {
        comp.instance
            .require(Call::SetDebugLogging, "fmi2SetDebugLogging")?;
        let on = loggingOn != 0;
        // SAFETY: nCategories strings (contract).
        let names = unsafe { slice_in(categories, nCategories, "categories[]")? };
        let mut idx = Vec::with_capacity(names.len());
        for (k, &p) in names.iter().enumerate() {
            if p.is_null() {
                return Err(CallError(format!("categories[{k}] is NULL")));
            }
            // SAFETY: non-null NUL-terminated string (contract).
            let name = unsafe { CStr::from_ptr(p) }.to_string_lossy();
            match category_index(&name) {
                Some(i) => idx.push(i),
                None => {
                    let known: Vec<&str> = LOG_CATEGORIES.iter().map(|(n, _)| *n).collect();
                    return Err(CallError(format!(
                        "unknown log category `{name}` (known: {})",
                        known.join(", ")
                    )));
                }
            }
        }
        if idx.is_empty() {
            comp.log.enabled.iter_mut().for_each(|e| *e = on);
        } else {
            for i in idx {
                comp.log.enabled[i] = on;
            }
        }
        comp.log.calls = comp.log.enabled("logCalls");
        Ok(OK)
    })
}

/// Everything fmi2Instantiate needs before an instance exists; `Err` is the message to log.
unsafe fn instantiate(
    instance_name: &str,
    fmu_type: fmi2Type,
    fmu_guid: fmi2String,
    resource_location: fmi2String,
) -> Result<Instance, String> {
    let interface = match fmu_type {
        fmi2Type_fmi2CoSimulation => Interface::CoSimulation,
        fmi2Type_fmi2ModelExchange => Interface::ModelExchange,
        other => {
            return Err(format!(
                "fmuType {other} is not an FMI 2.0 type (fmi2ModelExchange = \
                 {fmi2Type_fmi2ModelExchange}, fmi2CoSimulation = {fmi2Type_fmi2CoSimulation})"
            ));
        }
    };
    if fmu_guid.is_null() {
        return Err("fmuGUID is NULL".into());
    }
    if resource_location.is_null() {
        return Err("fmuResourceLocation is NULL".into());
    }
    // SAFETY: non-null NUL-terminated strings (contract).
    let guid = unsafe { CStr::from_ptr(fmu_guid) }
        .to_string_lossy()
        .into_owned();
    let location = unsafe { CStr::from_ptr(resource_location) }.to_string_lossy();
    let dir = resource_dir(&location)?;
    let path = dir.join("model.toml");
    let label = path.display().to_string();
    let bytes = crate::model::read_model_file(&path).map_err(|e| {
        format!(
            "cannot read the model {label} (from fmuResourceLocation `{location}`): {}",
            e.trim_start_matches("cannot read: ")
        )
    })?;
    if bytes.is_empty() {
        return Err(format!("the model file {label} is empty"));
    }
    let hashed = crate::cosim::guid_of(&bytes);
    if hashed != guid {
        return Err(format!(
            "GUID mismatch: modelDescription says {guid}, resources/model.toml hashes to \
             {hashed} ({label})"
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "the model file {label} is not valid UTF-8 (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    let _ = instance_name;
    Instance::with_interface(&text, &label, interface).map_err(|e| {
        if e.starts_with("Model Exchange is not offered") {
            e
        } else {
            format!("the model file is invalid: {e}")
        }
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
    let made = catch_unwind(AssertUnwindSafe(|| {
        if functions.is_null() {
            report_without_logger("fmi2Instantiate: functions (the callbacks) is NULL");
            return ptr::null_mut();
        }
        // SAFETY: non-null pointer to the master's callbacks (contract).
        let functions = unsafe { &*functions };
        let name = if instanceName.is_null() {
            None
        } else {
            // SAFETY: non-null NUL-terminated string (contract).
            Some(
                unsafe { CStr::from_ptr(instanceName) }
                    .to_string_lossy()
                    .into_owned(),
            )
        };
        let log = Logger::new(name.as_deref().unwrap_or(""), functions, loggingOn != 0);
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            log.error("fmi2Instantiate: instanceName is NULL or empty");
            return ptr::null_mut();
        };
        // SAFETY: the strings are checked for NULL inside (contract for the rest).
        let instance = match unsafe { instantiate(&name, fmuType, fmuGUID, fmuResourceLocation) } {
            Ok(i) => i,
            Err(message) => {
                log.error(&format!("fmi2Instantiate: {message}"));
                return ptr::null_mut();
            }
        };
        let (allocate, free) = match (functions.allocateMemory, functions.freeMemory) {
            (Some(a), Some(f)) => (Some(a), Some(f)),
            _ => (None, None),
        };
        log.log(
            OK,
            "logEvents",
            &format!(
                "fmi2Instantiate: model `{}` ({}), GUID {}",
                instance.description().model_name,
                instance.description().description,
                instance.guid()
            ),
        );
        for w in instance.plausibility_warnings() {
            log.log(
                WARNING,
                "logStatusWarning",
                &format!("fmi2Instantiate: {w}"),
            );
        }
        let comp = Box::into_raw(Box::new(Component {
            log,
            allocate,
            free,
            instance,
        }));
        registry(&COMPONENTS).insert(comp as usize);
        comp as fmi2Component
    }));
    match made {
        Ok(c) => c,
        Err(payload) => {
            report_without_logger(&format!(
                "fmi2Instantiate: internal error ({})",
                panic_text(payload.as_ref())
            ));
            ptr::null_mut()
        }
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeInstance(c: fmi2Component) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if lookup(c, "fmi2FreeInstance").is_none() {
            return;
        }
        {
            let mut components = registry(&COMPONENTS);
            components.remove(&(c as usize));
            shrink_set_if_empty(&mut components);
        }
        COMPONENT_GENERATION.fetch_add(1, Ordering::SeqCst);
        // Every state this instance handed out and the master did not free, out of the
        // registry first (a later fmi2FreeFMUstate of one is refused), then released with the
        // functions that allocated it (the instance's callbacks are valid until this returns).
        let owned: Vec<usize> = {
            let mut states = registry(&STATES);
            let owned: Vec<usize> = states
                .iter()
                .filter(|&(_, &owner)| owner == c as usize)
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
            unsafe { release_state(s as *mut StateHandle) };
        }
        // SAFETY: a live component just taken out of the registry: nothing else uses it.
        drop(unsafe { Box::from_raw(c as *mut Component) });
    }));
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
    with_component(c, "fmi2SetupExperiment", |comp| {
        let stop = (stopTimeDefined != 0).then_some(stopTime);
        comp.instance.setup_experiment(startTime, stop)?;
        if toleranceDefined != 0 {
            comp.log.log(
                OK,
                "logEvents",
                &format!(
                    "fmi2SetupExperiment: tolerance {tolerance:e} not used (the model file's \
                     [solver] settings govern the steps: a fixed step or its own rtol)"
                ),
            );
        }
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: fmi2Component) -> fmi2Status {
    with_component(c, "fmi2EnterInitializationMode", |comp| {
        comp.instance.enter_initialization_mode()?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: fmi2Component) -> fmi2Status {
    with_component(c, "fmi2ExitInitializationMode", |comp| {
        comp.instance.exit_initialization_mode()?;
        // Parameters set since fmi2Instantiate (its own warnings were logged there).
        if comp.instance.has_overrides() {
            for w in comp.instance.plausibility_warnings() {
                comp.log.log(
                    WARNING,
                    "logStatusWarning",
                    &format!("fmi2ExitInitializationMode: {w}"),
                );
            }
        }
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Terminate(c: fmi2Component) -> fmi2Status {
    with_component(c, "fmi2Terminate", |comp| {
        comp.instance.terminate()?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Reset(c: fmi2Component) -> fmi2Status {
    with_component(c, "fmi2Reset", |comp| {
        comp.instance.reset()?;
        Ok(OK)
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
    with_component(c, "fmi2GetReal", |comp| {
        comp.instance.require(Call::GetValues, "fmi2GetReal")?;
        // SAFETY: nvr elements each (contract).
        let vrs = unsafe { slice_in(vr, nvr, "vr[]")? };
        let out = unsafe { slice_out(value, nvr, "value[]")? };
        if comp.instance.is_model_exchange() {
            let r = comp.instance.get_real_checked(vrs, out)?;
            return Ok(me::reported(comp, "fmi2GetReal", &r));
        }
        comp.instance.get_real(vrs, out)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetReal(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *const fmi2Real,
) -> fmi2Status {
    with_component(c, "fmi2SetReal", |comp| {
        comp.instance.require(Call::SetValues, "fmi2SetReal")?;
        // SAFETY: nvr elements each (contract).
        let vrs = unsafe { slice_in(vr, nvr, "vr[]")? };
        let values = unsafe { slice_in(value, nvr, "value[]")? };
        comp.instance.set_real(vrs, values)?;
        Ok(OK)
    })
}

/// Integer, Boolean, String access: the model has Real variables only.
unsafe fn no_values<T>(
    c: fmi2Component,
    function: &'static str,
    kind: &'static str,
    call: Call,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *const T,
) -> fmi2Status {
    with_component(c, function, |comp| {
        comp.instance.require(call, function)?;
        // SAFETY: nvr elements each (contract).
        let vrs = unsafe { slice_in(vr, nvr, "vr[]")? };
        let _ = unsafe { slice_in(value, nvr, "value[]")? };
        comp.instance.no_such_variables(kind, vrs)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetInteger(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *mut fmi2Integer,
) -> fmi2Status {
    unsafe {
        no_values(
            c,
            "fmi2GetInteger",
            "Integer",
            Call::GetValues,
            vr,
            nvr,
            value,
        )
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBoolean(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *mut fmi2Boolean,
) -> fmi2Status {
    unsafe {
        no_values(
            c,
            "fmi2GetBoolean",
            "Boolean",
            Call::GetValues,
            vr,
            nvr,
            value,
        )
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetString(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *mut fmi2String,
) -> fmi2Status {
    unsafe {
        no_values(
            c,
            "fmi2GetString",
            "String",
            Call::GetValues,
            vr,
            nvr,
            value,
        )
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetInteger(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *const fmi2Integer,
) -> fmi2Status {
    unsafe {
        no_values(
            c,
            "fmi2SetInteger",
            "Integer",
            Call::SetValues,
            vr,
            nvr,
            value,
        )
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetBoolean(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *const fmi2Boolean,
) -> fmi2Status {
    unsafe {
        no_values(
            c,
            "fmi2SetBoolean",
            "Boolean",
            Call::SetValues,
            vr,
            nvr,
            value,
        )
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetString(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *const fmi2String,
) -> fmi2Status {
    unsafe {
        no_values(
            c,
            "fmi2SetString",
            "String",
            Call::SetValues,
            vr,
            nvr,
            value,
        )
    }
}

// ---------------------------------------------------------------------------------------------
// FMU states
// ---------------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetFMUstate(
    c: fmi2Component,
    FMUstate: *mut fmi2FMUstate,
) -> fmi2Status {
    with_component(c, "fmi2GetFMUstate", |comp| {
        comp.instance.require(Call::States, "fmi2GetFMUstate")?;
        let slot = out_ptr(FMUstate, "FMUstate (the fmi2FMUstate* argument)")?;
        if slot.is_null() {
            let snapshot = comp.instance.snapshot()?;
            *slot = comp.new_state(snapshot)?;
        } else {
            // Overwrite the given state in place: the handle stays the same.
            let handle = state_handle(*slot)?;
            comp.instance.snapshot_into(&mut handle.snapshot)?;
            handle.blob_valid = false;
        }
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetFMUstate(c: fmi2Component, FMUstate: fmi2FMUstate) -> fmi2Status {
    with_component(c, "fmi2SetFMUstate", |comp| {
        comp.instance.require(Call::States, "fmi2SetFMUstate")?;
        let handle = state_handle(FMUstate)?;
        comp.instance.restore(&handle.snapshot)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeFMUstate(
    c: fmi2Component,
    FMUstate: *mut fmi2FMUstate,
) -> fmi2Status {
    // Releasing memory is possible in every state, the fatal one included.
    with_component(c, "fmi2FreeFMUstate", |_comp| {
        let slot = out_ptr(FMUstate, "FMUstate (the fmi2FMUstate* argument)")?;
        if slot.is_null() {
            return Ok(OK); // the standard: a NULL state is ignored
        }
        {
            // Checked and removed under one lock: only the instance that returned a state may
            // free it (a state another instance holds at a reused address is not this one's).
            let mut states = registry(&STATES);
            match states.get(&(*slot as usize)) {
                None => {
                    return Err(CallError(format!(
                        "{:p} is not an FMU state of this library (freed, or never returned by \
                         fmi2GetFMUstate / fmi2DeSerializeFMUstate)",
                        *slot
                    )));
                }
                Some(&owner) if owner != c as usize => {
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
        unsafe { release_state(*slot as *mut StateHandle) };
        *slot = ptr::null_mut();
        Ok(OK)
    })
}

/// The serialized form of a state (made once, kept in the handle).
fn blob_of<'a>(comp: &Component, handle: &'a mut StateHandle) -> Result<&'a [u8], CallError> {
    if !handle.blob_valid {
        comp.instance
            .serialize_into(&handle.snapshot, &mut handle.blob)?;
        handle.blob_valid = true;
    }
    Ok(&handle.blob)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
    c: fmi2Component,
    FMUstate: fmi2FMUstate,
    size: *mut usize,
) -> fmi2Status {
    with_component(c, "fmi2SerializedFMUstateSize", |comp| {
        comp.instance
            .require(Call::States, "fmi2SerializedFMUstateSize")?;
        let size = out_ptr(size, "size")?;
        let handle = state_handle(FMUstate)?;
        *size = blob_of(comp, handle)?.len();
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    c: fmi2Component,
    FMUstate: fmi2FMUstate,
    serializedState: *mut fmi2Byte,
    size: usize,
) -> fmi2Status {
    with_component(c, "fmi2SerializeFMUstate", |comp| {
        comp.instance
            .require(Call::States, "fmi2SerializeFMUstate")?;
        let handle = state_handle(FMUstate)?;
        let blob = blob_of(comp, handle)?;
        if size != blob.len() {
            return Err(CallError(format!(
                "size is {size} bytes, the state takes {} (ask fmi2SerializedFMUstateSize)",
                blob.len()
            )));
        }
        // SAFETY: `size` writable bytes (contract).
        let out = unsafe { slice_out(serializedState as *mut u8, size, "serializedState[]")? };
        out.copy_from_slice(blob);
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    c: fmi2Component,
    serializedState: *const fmi2Byte,
    size: usize,
    FMUstate: *mut fmi2FMUstate,
) -> fmi2Status {
    with_component(c, "fmi2DeSerializeFMUstate", |comp| {
        comp.instance
            .require(Call::States, "fmi2DeSerializeFMUstate")?;
        let slot = out_ptr(FMUstate, "FMUstate (the fmi2FMUstate* argument)")?;
        if !slot.is_null() {
            state_handle(*slot)?;
        }
        // SAFETY: `size` readable bytes (contract).
        let bytes = unsafe { slice_in(serializedState as *const u8, size, "serializedState[]")? };
        // Decoded and checked completely before anything is touched.
        let snapshot = comp.instance.deserialize(bytes)?;
        if slot.is_null() {
            *slot = comp.new_state(snapshot)?;
        } else {
            let handle = state_handle(*slot)?;
            handle.snapshot = snapshot;
            handle.blob_valid = false;
        }
        Ok(OK)
    })
}

// ---------------------------------------------------------------------------------------------
// Not provided (capability flags false): exported, refused
// ---------------------------------------------------------------------------------------------

fn not_provided(
    c: fmi2Component,
    function: &'static str,
    call: Option<Call>,
    why: &'static str,
) -> fmi2Status {
    with_component(c, function, |comp| {
        if let Some(call) = call {
            comp.instance.require(call, function)?;
        }
        Err(CallError(why.to_string()))
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
    with_component(c, "fmi2GetDirectionalDerivative", |comp| {
        comp.instance.require(
            Call::GetDirectionalDerivative,
            "fmi2GetDirectionalDerivative",
        )?;
        // SAFETY: nUnknown and nKnown elements each (contract).
        let unknowns = unsafe { slice_in(vUnknown_ref, nUnknown, "vUnknown_ref[]")? };
        let knowns = unsafe { slice_in(vKnown_ref, nKnown, "vKnown_ref[]")? };
        let dv_known = unsafe { slice_in(dvKnown, nKnown, "dvKnown[]")? };
        let dv_unknown = unsafe { slice_out(dvUnknown, nUnknown, "dvUnknown[]")? };
        if comp.instance.is_model_exchange() {
            let r = comp
                .instance
                .exchange_directional_derivative(unknowns, knowns, dv_known, dv_unknown)?;
            return Ok(me::reported(comp, "fmi2GetDirectionalDerivative", &r));
        }
        comp.instance
            .directional_derivative(unknowns, knowns, dv_known, dv_unknown)?;
        Ok(OK)
    })
}

// ---------------------------------------------------------------------------------------------
// Co-Simulation
// ---------------------------------------------------------------------------------------------

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
        Some(Call::SetRealInputDerivatives),
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
        Some(Call::GetRealOutputDerivatives),
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
    with_component(c, "fmi2DoStep", |comp| {
        if comp.log.calls {
            comp.log.log(
                OK,
                "logCalls",
                &format!(
                    "fmi2DoStep(currentCommunicationPoint = {currentCommunicationPoint:?}, \
                     communicationStepSize = {communicationStepSize:?})"
                ),
            );
        }
        let report = comp
            .instance
            .do_step(currentCommunicationPoint, communicationStepSize)?;
        for line in &report.log {
            comp.log.log(
                step_status(line.status),
                line.category,
                &format!("fmi2DoStep: {}", line.text),
            );
        }
        Ok(step_status(report.status))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CancelStep(c: fmi2Component) -> fmi2Status {
    with_component(c, "fmi2CancelStep", |comp| {
        comp.instance.require(Call::CancelStep, "fmi2CancelStep")?;
        Ok(OK)
    })
}

/// A status kind the getter does not provide: fmi2Discard (FMI 2.0 §4.2.3), logged. An out of
/// range kind is an error.
fn status_not_available(
    comp: &Component,
    function: &str,
    s: fmi2StatusKind,
) -> Result<fmi2Status, CallError> {
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
            return Err(CallError(format!("unknown fmi2StatusKind {other}")));
        }
    };
    comp.log.log(
        DISCARD,
        "logStatusDiscard",
        &format!("{function}: status not available: {what}"),
    );
    Ok(DISCARD)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2Status,
) -> fmi2Status {
    with_component(c, "fmi2GetStatus", |comp| {
        comp.instance.require(Call::GetStatus, "fmi2GetStatus")?;
        out_ptr(value, "value")?;
        status_not_available(comp, "fmi2GetStatus", s)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2Real,
) -> fmi2Status {
    with_component(c, "fmi2GetRealStatus", |comp| {
        comp.instance
            .require(Call::GetStatus, "fmi2GetRealStatus")?;
        let value = out_ptr(value, "value")?;
        if s == fmi2StatusKind_fmi2LastSuccessfulTime {
            *value = comp.instance.last_successful_time()?;
            return Ok(OK);
        }
        status_not_available(comp, "fmi2GetRealStatus", s)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetIntegerStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2Integer,
) -> fmi2Status {
    with_component(c, "fmi2GetIntegerStatus", |comp| {
        comp.instance
            .require(Call::GetStatus, "fmi2GetIntegerStatus")?;
        out_ptr(value, "value")?;
        status_not_available(comp, "fmi2GetIntegerStatus", s)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2Boolean,
) -> fmi2Status {
    with_component(c, "fmi2GetBooleanStatus", |comp| {
        comp.instance
            .require(Call::GetStatus, "fmi2GetBooleanStatus")?;
        let value = out_ptr(value, "value")?;
        if s == fmi2StatusKind_fmi2Terminated {
            *value = fmi2Boolean::from(comp.instance.terminated()?);
            return Ok(OK);
        }
        status_not_available(comp, "fmi2GetBooleanStatus", s)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStringStatus(
    c: fmi2Component,
    s: fmi2StatusKind,
    value: *mut fmi2String,
) -> fmi2Status {
    with_component(c, "fmi2GetStringStatus", |comp| {
        comp.instance
            .require(Call::GetStatus, "fmi2GetStringStatus")?;
        out_ptr(value, "value")?;
        status_not_available(comp, "fmi2GetStringStatus", s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state that passes every check of its blob but makes the simulation index out of
    /// bounds: the panic is caught inside fmi2DoStep, which returns fmi2Fatal; the instance then
    /// refuses everything but freeing.
    #[test]
    fn a_panic_inside_a_call_becomes_fmi2fatal_and_never_crosses_the_abi() {
        let text = include_str!("../../models/projectile.toml");
        let dir = std::env::temp_dir().join(format!("plenum-fmi2-panic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("model.toml"), text).unwrap();
        let guid = CString::new(crate::cosim::guid_of(text.as_bytes())).unwrap();
        let uri = CString::new(format!("file://{}", dir.display())).unwrap();
        let callbacks = fmi2CallbackFunctions {
            logger: None,
            allocateMemory: None,
            freeMemory: None,
            stepFinished: None,
            componentEnvironment: ptr::null_mut(),
        };

        // The forged state: fewer state values than the model has.
        let mut inst = Instance::new(text, "model.toml").unwrap();
        inst.setup_experiment(0.0, None).unwrap();
        inst.enter_initialization_mode().unwrap();
        inst.exit_initialization_mode().unwrap();
        let mut snap = inst.snapshot().unwrap();
        snap.y_mut().truncate(3);
        let blob = crate::cosim::encode_snapshot(&snap).unwrap();

        unsafe {
            let c = fmi2Instantiate(
                c"panic".as_ptr(),
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
            let mut s: fmi2FMUstate = ptr::null_mut();
            // fmi2DeSerializeFMUstate refuses it (the network does not fit the model) ...
            assert_eq!(
                fmi2DeSerializeFMUstate(c, blob.as_ptr() as *const c_char, blob.len(), &mut s),
                ERROR
            );
            assert!(s.is_null());
            // ... so it is put into the instance behind the checks.
            assert_eq!(fmi2GetFMUstate(c, &mut s), OK);
            let put = with_component(c, "test", |comp| {
                comp.instance.restore_unchecked(&snap);
                Ok(OK)
            });
            assert_eq!(put, OK);
            assert_eq!(fmi2DoStep(c, 0.0, 1e-4, 1), FATAL);
            assert_eq!(fmi2DoStep(c, 0.0, 1e-4, 1), ERROR);
            let mut v = [0.0];
            assert_eq!(fmi2GetReal(c, [0u32].as_ptr(), 1, v.as_mut_ptr()), ERROR);
            assert_eq!(fmi2Reset(c), ERROR);
            assert_eq!(fmi2FreeFMUstate(c, &mut s), OK);
            assert!(s.is_null());
            fmi2FreeInstance(c);
        }
        let _ = std::fs::remove_dir_all(&dir);
        println!("a panic in fmi2DoStep → fmi2Fatal; then fmi2Error for every call but the frees");
    }
}
