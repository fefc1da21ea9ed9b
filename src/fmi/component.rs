//! One instance as the layer holds it ([`Component`]: the importer's logger and memory
//! functions around the [`Instance`]), its FMU state handles, and the guard every call runs
//! under ([`with_component`], [`call`]).

use std::ffi::{CString, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use super::args::{c_string, panic_text};
use super::{Allocate, Free, Standard, Status, refusal_text};
use crate::cosim::{Call, CallError, Instance, Snapshot, StepReport};

/// The importer's logger with the instance name and the enabled categories.
pub(crate) struct Logger<S: Standard> {
    instance_name: CString,
    callback: S::Logger,
    environment: *mut c_void,
    /// One flag per [`Standard::LOG_CATEGORIES`] entry.
    pub(super) enabled: Vec<bool>,
    /// `logCalls` is on (read by every call: kept apart from the search by name).
    pub(crate) calls: bool,
}

impl<S: Standard> Logger<S> {
    pub(crate) fn new(
        instance_name: &str,
        callback: S::Logger,
        environment: *mut c_void,
        logging_on: bool,
    ) -> Logger<S> {
        let enabled = S::LOG_CATEGORIES
            .iter()
            .map(|(n, _)| n.starts_with("logStatus") || logging_on)
            .collect();
        let mut log = Logger {
            instance_name: c_string(instance_name),
            callback,
            environment,
            enabled,
            calls: false,
        };
        log.calls = log.enabled("logCalls");
        log
    }

    pub(super) fn category_index(name: &str) -> Option<usize> {
        S::LOG_CATEGORIES.iter().position(|(n, _)| *n == name)
    }

    pub(crate) fn enabled(&self, category: &str) -> bool {
        Self::category_index(category).is_some_and(|i| self.enabled[i])
    }

    /// Send one message (if its category is on).
    pub(crate) fn log(&self, status: Status, category: &str, message: &str) {
        if !self.enabled(category) {
            return;
        }
        let message = c_string(message);
        let category = c_string(category);
        // SAFETY: the importer's logger, valid until the instance is freed (the contract);
        // every pointer is a live NUL-terminated string for the duration of the call.
        unsafe {
            S::send(
                self.callback,
                self.environment,
                &self.instance_name,
                S::status(status),
                &category,
                &message,
            );
        }
    }

    pub(crate) fn error(&self, message: &str) {
        self.log(Status::Error, "logStatusError", message);
    }
}

/// One instance of standard `S`.
pub(crate) struct Component<S: Standard> {
    pub(crate) log: Logger<S>,
    /// The importer's memory functions (both or neither): FMU states live in its memory.
    memory: Option<(Allocate, Free)>,
    pub(crate) instance: Instance,
}

/// One FMU state.
pub(super) struct StateHandle {
    /// How the handle's own memory was obtained: the importer's freeMemory, or a Rust box.
    free: Option<Free>,
    pub(super) snapshot: Snapshot,
    /// The serialized form, made at the first size query and kept until the state changes
    /// (`blob_valid`); its storage is reused when the state is overwritten.
    blob: Vec<u8>,
    pub(super) blob_valid: bool,
}

impl<S: Standard> Component<S> {
    pub(super) fn new(
        log: Logger<S>,
        memory: Option<(Allocate, Free)>,
        instance: Instance,
    ) -> Component<S> {
        Component {
            log,
            memory,
            instance,
        }
    }

    /// Refuse `call` in the words of `S` when the instance's phase does not allow it.
    #[inline]
    pub(crate) fn check(&self, call: Call) -> Result<(), CallError> {
        match self.instance.refusal(call) {
            None => Ok(()),
            Some(r) => Err(CallError(refusal_text::<S>(call, r))),
        }
    }

    /// Log a report's lines under `function` and return its status.
    pub(crate) fn reported(&self, function: &str, report: &StepReport) -> Status {
        for line in &report.log {
            self.log.log(
                line.status.into(),
                line.category,
                &format!("{function}: {}", line.text),
            );
        }
        report.status.into()
    }

    /// A new state handle holding `snapshot`, in the importer's memory if it gave its memory
    /// functions, registered as handed out by this instance.
    pub(super) fn new_state(&self, snapshot: Snapshot) -> Result<*mut c_void, CallError> {
        let handle = |free| StateHandle {
            free,
            snapshot,
            blob: Vec::new(),
            blob_valid: false,
        };
        let p: *mut StateHandle = match self.memory {
            Some((allocate, free)) => {
                let size = std::mem::size_of::<StateHandle>();
                // SAFETY: the importer's allocator (the contract).
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
                unsafe { ptr::write(raw, handle(Some(free))) };
                raw
            }
            None => Box::into_raw(Box::new(handle(None))),
        };
        S::registries().add_state(p as usize, self as *const Self as usize);
        Ok(p as *mut c_void)
    }

    /// The serialized form of a state (made once, kept in the handle).
    pub(super) fn blob_of<'a>(&self, handle: &'a mut StateHandle) -> Result<&'a [u8], CallError> {
        if !handle.blob_valid {
            self.instance
                .serialize_into(&handle.snapshot, &mut handle.blob)?;
            handle.blob_valid = true;
        }
        Ok(&handle.blob)
    }
}

/// The live state behind `s`.
pub(super) fn state_handle<'a, S: Standard>(
    s: *mut c_void,
) -> Result<&'a mut StateHandle, CallError> {
    if s.is_null() {
        return Err(CallError("the FMU state is NULL".into()));
    }
    if !S::registries().state_is_live(s as usize) {
        return Err(CallError(format!(
            "{s:p} is not an FMU state of this library (freed, or never handed out by it)"
        )));
    }
    // SAFETY: a live state (registry); states are not shared between threads (the contract).
    Ok(unsafe { &mut *(s as *mut StateHandle) })
}

/// Drop a state handle and release its memory with the function that matches its allocation.
///
/// # Safety
/// `p` is a live handle the caller has taken out of the registry.
pub(super) unsafe fn release_state(p: *mut StateHandle) {
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

/// Last resort for calls that have no instance (and so no logger) to report to.
pub(crate) fn report_without_logger<S: Standard>(message: &str) {
    let _ = catch_unwind(|| eprintln!("plenum {}: {message}", S::PREFIX));
}

/// The live instance behind `c`, or `None` (reported on stderr: there is no logger).
pub(super) fn lookup<S: Standard>(c: *mut c_void, function: &str) -> Option<*mut Component<S>> {
    if c.is_null() {
        report_without_logger::<S>(&format!("{function} called with a null instance"));
        return None;
    }
    if !S::registries().is_live(c as usize) {
        report_without_logger::<S>(&format!(
            "{function} called with {c:p}, which is not a live Plenum instance of this standard \
             (freed, or never returned by {})",
            S::INSTANTIATE
        ));
        return None;
    }
    Some(c as *mut Component<S>)
}

/// Run `body` on the instance behind `c`: refuses unknown pointers, logs errors, catches
/// panics (the instance becomes fatal), and logs the call under `logCalls` (the communication
/// step logs its own line, with its arguments).
pub(crate) fn with_component<S: Standard, F>(
    c: *mut c_void,
    function: &'static str,
    body: F,
) -> S::Status
where
    F: FnOnce(&mut Component<S>) -> Result<Status, CallError>,
{
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Some(p) = lookup::<S>(c, function) else {
            return Status::Error;
        };
        // SAFETY: `p` is a live instance (registry) and the importer does not call one
        // instance from two threads at once (the contract).
        let comp = unsafe { &mut *p };
        if comp.log.calls && function != S::DO_STEP {
            comp.log.log(Status::Ok, "logCalls", function);
        }
        match body(comp) {
            Ok(status) => status,
            Err(e) => {
                comp.log.error(&format!("{function}: {e}"));
                Status::Error
            }
        }
    }));
    match outcome {
        Ok(status) => S::status(status),
        Err(payload) => {
            fatal::<S>(c, function, &panic_text(payload.as_ref()));
            S::status(Status::Fatal)
        }
    }
}

/// After a panic inside `function`: the instance becomes fatal, and the importer is told.
#[cold]
fn fatal<S: Standard>(c: *mut c_void, function: &str, text: &str) {
    let logged = catch_unwind(AssertUnwindSafe(|| {
        if c.is_null() || !S::registries().contains(c as usize) {
            return false;
        }
        // SAFETY: as in `with_component`; the panicking borrow has ended with the unwind.
        let comp = unsafe { &mut *(c as *mut Component<S>) };
        comp.instance.set_fatal();
        comp.log.log(
            Status::Fatal,
            "logStatusFatal",
            &format!("{function}: internal error ({text}); the instance is unusable"),
        );
        true
    }));
    if !matches!(logged, Ok(true)) {
        report_without_logger::<S>(&format!("{function}: internal error ({text})"));
    }
}

/// [`with_component`] for a call whose legality depends on the phase: refused in `S`'s words
/// before `body` runs when the phase does not allow `call`.
#[inline]
pub(crate) fn call<S: Standard, F>(
    c: *mut c_void,
    function: &'static str,
    call: Call,
    body: F,
) -> S::Status
where
    F: FnOnce(&mut Component<S>) -> Result<Status, CallError>,
{
    with_component::<S, _>(c, function, |comp| {
        comp.check(call)?;
        body(comp)
    })
}
