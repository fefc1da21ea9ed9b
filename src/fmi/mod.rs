//! The FMI layer, written once for FMI 2.0 and FMI 3.0, as the FMI Reference FMUs keep one
//! implementation behind thin `fmi2Functions.c` and `fmi3Functions.c`: the guard every call
//! runs under (a pointer checked against the registry before it is used, a panic caught and
//! turned into the fatal status, the call logged), the registries of live instances and FMU
//! states, the importer's logger with its categories, the state handles, instantiation and the
//! bodies of the functions both standards have. It is generic over [`Standard`]: the status
//! type and its values, the function names messages cite, the phase names and the log
//! categories of one standard. `crate::fmi2` and `crate::fmi3` keep only the exported functions,
//! each checking the phase and delegating, and the conversions of their own types.
//!
//! The instance (`crate::cosim`) speaks no standard: it reports which [`Call`] a phase refuses
//! ([`Refusal`]) and why a call failed; the layer names the function in its standard's words.
//!
//! # Safety contract (every exported function of both standards)
//! The caller is an FMI importer and keeps its standard's contract:
//! - a non-null instance pointer is one that an instantiate function of the same standard
//!   returned and that was not freed (pointers that are not, or no longer, live instances are
//!   recognised from a registry and refused without being dereferenced);
//! - a non-null array pointer points to at least as many readable (or, for results, writable)
//!   elements as its length argument says; a non-null string is NUL-terminated;
//! - an FMU state is one this library returned and that was not freed (a registry too);
//! - the callbacks stay valid until the instance is freed; FMI 2.0's logger accepts the format
//!   `"%s"` with one string argument, and its `allocateMemory` returns memory aligned for any
//!   type, like `calloc`.
//!
//! Null pointers are refused with the error status (NULL from the instantiate functions) and a
//! message. No panic crosses the ABI: every function catches it, puts the instance in the fatal
//! state and returns the fatal status. One instance must not be called from two threads at
//! once; different instances may run in parallel.
//!
//! Memory: instances are Rust boxes. FMU states are allocated with the importer's
//! `allocateMemory` when it gave one with `freeMemory` (FMI 2.0), else boxed; each state
//! remembers which, so freeing it uses the matching function. A state may be set into any live
//! instance of the same model (the GUID is checked); freeing an instance releases every state it
//! handed out that the importer has not freed, so a later free of such a pointer is refused like
//! any unknown one.
//!
//! Logging: categories are [`Standard::LOG_CATEGORIES`]; the status categories (warning,
//! discard, error, fatal) are on from the start, the others follow `loggingOn`; the debug
//! logging function switches the listed categories (all when none are listed).

mod args;
mod component;
mod functions;
mod registry;
mod uri;

use std::ffi::{CStr, c_void};
use std::path::PathBuf;

pub(crate) use args::{out_ptr, same_length, slice_in, slice_out};
pub(crate) use component::{Component, Logger, call, report_without_logger, with_component};
pub(crate) use functions::{Instantiation, free_instance, instantiate};
pub(crate) use registry::Registries;
pub use uri::resource_dir;

use crate::cosim::{Call, Interface, Phase, Refusal, StepStatus};

/// A status as the layer reports it; each standard has its own type for it
/// ([`Standard::status`]), with these values (FMI 2.0's `fmi2Status` and FMI 3.0's
/// `fmi3Status` agree on them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub(crate) enum Status {
    Ok = 0,
    Warning = 1,
    Discard = 2,
    Error = 3,
    Fatal = 4,
}

impl From<StepStatus> for Status {
    fn from(s: StepStatus) -> Status {
        match s {
            StepStatus::Ok => Status::Ok,
            StepStatus::Warning => Status::Warning,
            StepStatus::Discard => Status::Discard,
        }
    }
}

/// The importer's `allocateMemory` and `freeMemory` (FMI 2.0; FMI 3.0 has none).
pub(crate) type Allocate = unsafe extern "C" fn(usize, usize) -> *mut c_void;
pub(crate) type Free = unsafe extern "C" fn(*mut c_void);

/// What one FMI standard is to the shared layer: its status type, its logger, the names of the
/// functions and phases its messages cite, its log categories and its registries.
pub(crate) trait Standard: Sized + 'static {
    /// The status type the standard's functions return (its values are [`Status`]'s).
    type Status: Copy + From<u32>;
    /// The importer's logging callback.
    type Logger: Copy + Default;

    /// "fmi2", "fmi3": the prefix of the standard's functions, for lines that have no instance
    /// (and so no logger) to go to.
    const PREFIX: &'static str;
    /// Log categories (name, description): [`log_categories`] with the standard's words.
    const LOG_CATEGORIES: &'static [(&'static str, &'static str)];
    /// The functions that make an instance, that free one, and the communication step.
    const INSTANTIATE: &'static str;
    const FREE_INSTANCE: &'static str;
    const DO_STEP: &'static str;
    /// What the standard calls the instantiation token (fmi2's `fmuGUID`) and the resource
    /// location argument.
    const TOKEN: &'static str;
    const RESOURCES: &'static str;

    fn status(s: Status) -> Self::Status {
        Self::Status::from(s as u32)
    }
    fn registries() -> &'static Registries;
    /// The standard's name of a phase.
    fn phase_name(phase: Phase) -> &'static str;
    /// Why no phase of an instance ever allows `call`.
    fn never_possible(call: Call) -> &'static str;
    /// The directory of the FMU's resources, from the location the importer gave.
    fn resource_dir(location: &str) -> Result<PathBuf, String>;
    /// Send one message to the importer's logger (nothing when it gave none).
    ///
    /// # Safety
    /// `logger` is the importer's, valid until the instance is freed (the contract above).
    unsafe fn send(
        logger: Self::Logger,
        environment: *mut c_void,
        instance_name: &CStr,
        status: Self::Status,
        category: &CStr,
        message: &CStr,
    );
}

/// The log categories both standards declare: the statuses FMI recommends as categories, the
/// run-time checks that measure an importer's integration, events, and every call (`calls`
/// describes it in the standard's words).
pub(crate) const fn log_categories(calls: &'static str) -> [(&'static str, &'static str); 7] {
    [
        (
            "logStatusWarning",
            "run-time check warnings (codes 4 to 9 and 11 in Co-Simulation, 8 in Model \
             Exchange) and other warnings",
        ),
        (
            "logStatusDiscard",
            "steps and states refused by run-time checks 2, 3 and 10",
        ),
        (
            "logStatusError",
            "errors: bad calls, bad values, bad state blobs",
        ),
        ("logStatusFatal", "fatal errors"),
        (
            "logChecks",
            "Model Exchange: run-time checks 4, 5 and 9, which measure the integration by the \
             importer (status OK, once per episode)",
        ),
        ("logEvents", "piston exits and the end of the run"),
        ("logCalls", calls),
    ]
}

/// A refusal in the words of standard `S` (the function's name comes before it).
#[cold]
#[inline(never)]
pub(crate) fn refusal_text<S: Standard>(call: Call, refusal: Refusal) -> String {
    match refusal {
        Refusal::Fatal => format!(
            "not possible: the instance is in the fatal state after an internal error; only {} \
             is",
            S::FREE_INSTANCE
        ),
        Refusal::OtherInterface { only, this } => format!(
            "this is a {} function: this instance was instantiated for {}",
            only.name(),
            this.name()
        ),
        Refusal::Never => format!("never possible here: {}", S::never_possible(call)),
        Refusal::Sequence { phase, allowed } => {
            let names: Vec<&str> = allowed.iter().map(|&p| S::phase_name(p)).collect();
            format!(
                "illegal call sequence: not allowed in state {} (allowed in: {})",
                S::phase_name(phase),
                names.join(", ")
            )
        }
    }
}

/// The interface an instantiation asks for, or why it cannot be had.
pub(crate) type Requested = Result<Interface, String>;

#[cfg(test)]
mod tests;
