//! The bodies of the functions both standards have, generic over [`Standard`]: instantiation and
//! freeing, debug logging, the experiment's times, values, FMU states, directional derivatives
//! and the communication step. Each exported function of `crate::fmi2` and `crate::fmi3` checks
//! the phase ([`super::call`]), converts its arguments and calls one of these.

use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use super::args::{out_ptr, panic_text, slice_in, slice_out};
use super::component::{Logger, release_state, state_handle};
use super::registry::StateOwner;
use super::{Allocate, Component, Free, Requested, Standard, Status, report_without_logger};
use crate::cosim::{CallError, Instance};

/// Everything an instantiate function was given.
pub(crate) struct Instantiation<S: Standard> {
    pub function: &'static str,
    pub interface: Requested,
    pub instance_name: *const c_char,
    pub token: *const c_char,
    pub resources: *const c_char,
    pub logging_on: bool,
    pub logger: S::Logger,
    pub environment: *mut c_void,
    pub memory: Option<(Allocate, Free)>,
}

/// A C string argument, or `None` for NULL.
///
/// # Safety
/// A non-null `p` is NUL-terminated (the contract).
unsafe fn text(p: *const c_char) -> Option<String> {
    // SAFETY: non-null NUL-terminated string (the contract).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The instance an instantiation asks for, from the model in the FMU's resources; `Err` is the
/// message to log.
///
/// # Safety
/// As [`instantiate`].
unsafe fn load<S: Standard>(a: &Instantiation<S>) -> Result<Instance, String> {
    let interface = a.interface.clone()?;
    // SAFETY: strings valid or NULL (the contract).
    let token = unsafe { text(a.token) }.ok_or_else(|| format!("{} is NULL", S::TOKEN))?;
    let location = unsafe { text(a.resources) }.ok_or_else(|| {
        format!(
            "{} is NULL (the model is resources/model.toml)",
            S::RESOURCES
        )
    })?;
    let dir = S::resource_dir(&location)?;
    let path = dir.join("model.toml");
    let label = path.display().to_string();
    let bytes = crate::model::read_model_file(&path).map_err(|e| {
        format!(
            "cannot read the model {label} (from {} `{location}`): {}",
            S::RESOURCES,
            e.trim_start_matches("cannot read: ")
        )
    })?;
    if bytes.is_empty() {
        return Err(format!("the model file {label} is empty"));
    }
    let hashed = crate::cosim::guid_of(&bytes);
    if hashed != token {
        return Err(format!(
            "{} mismatch: modelDescription says {token}, resources/model.toml hashes to \
             {hashed} ({label})",
            S::TOKEN
        ));
    }
    let source = String::from_utf8(bytes).map_err(|e| {
        format!(
            "the model file {label} is not valid UTF-8 (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    Instance::with_interface(&source, &label, interface).map_err(|e| {
        if e.starts_with("Model Exchange is not offered") {
            e
        } else {
            format!("the model file is invalid: {e}")
        }
    })
}

/// Make an instance: NULL (after a log line naming the problem) when anything is wrong.
///
/// # Safety
/// The strings are NULL or NUL-terminated, the callbacks valid (the contract).
pub(crate) unsafe fn instantiate<S: Standard>(a: Instantiation<S>) -> *mut c_void {
    let function = a.function;
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: NULL or NUL-terminated (the contract).
        let name = unsafe { text(a.instance_name) }.unwrap_or_default();
        let log = Logger::<S>::new(&name, a.logger, a.environment, a.logging_on);
        if name.is_empty() {
            log.error(&format!("{function}: instanceName is NULL or empty"));
            return ptr::null_mut();
        }
        // SAFETY: as above.
        let instance = match unsafe { load(&a) } {
            Ok(i) => i,
            Err(message) => {
                log.error(&format!("{function}: {message}"));
                return ptr::null_mut();
            }
        };
        log.log(
            Status::Ok,
            "logEvents",
            &format!(
                "{function}: `{name}`, model `{}` ({}), {} {}",
                instance.description().model_name,
                instance.description().description,
                S::TOKEN,
                instance.guid()
            ),
        );
        for w in instance.plausibility_warnings() {
            log.log(
                Status::Warning,
                "logStatusWarning",
                &format!("{function}: {w}"),
            );
        }
        let comp = Box::into_raw(Box::new(Component::new(log, a.memory, instance)));
        S::registries().add_component(comp as usize);
        comp as *mut c_void
    }));
    match made {
        Ok(c) => c,
        Err(payload) => {
            report_without_logger::<S>(&format!(
                "{function}: internal error ({})",
                panic_text(payload.as_ref())
            ));
            ptr::null_mut()
        }
    }
}

/// Free an instance and every state it handed out that the importer did not free.
///
/// # Safety
/// `c` is NULL or any pointer (checked against the registry).
pub(crate) unsafe fn free_instance<S: Standard>(c: *mut c_void) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if super::component::lookup::<S>(c, S::FREE_INSTANCE).is_none() {
            return;
        }
        // Out of the registry first (a later free of one of its states is refused), then
        // released with the functions that allocated them (the instance's callbacks are valid
        // until this returns).
        for s in S::registries().remove_component(c as usize) {
            // SAFETY: a live handle just removed from the registry: used nowhere else.
            unsafe { release_state(s as *mut super::component::StateHandle) };
        }
        // SAFETY: a live instance just taken out of the registry: nothing else uses it.
        drop(unsafe { Box::from_raw(c as *mut Component<S>) });
    }));
}

impl<S: Standard> Component<S> {
    /// Switch the listed log categories (all when none are listed) on or off.
    ///
    /// # Safety
    /// `categories` holds `n` strings (the contract).
    pub(crate) unsafe fn set_debug_logging(
        &mut self,
        on: bool,
        categories: *const *const c_char,
        n: usize,
    ) -> Result<Status, CallError> {
        // SAFETY: n strings (the contract).
        let names = unsafe { slice_in(categories, n, "categories[]")? };
        let mut idx = Vec::with_capacity(names.len());
        for (k, &p) in names.iter().enumerate() {
            // SAFETY: NULL or NUL-terminated (the contract).
            let name =
                unsafe { text(p) }.ok_or_else(|| CallError(format!("categories[{k}] is NULL")))?;
            let i = Logger::<S>::category_index(&name).ok_or_else(|| {
                let known: Vec<&str> = S::LOG_CATEGORIES.iter().map(|(n, _)| *n).collect();
                CallError(format!(
                    "unknown log category `{name}` (known: {})",
                    known.join(", ")
                ))
            })?;
            idx.push(i);
        }
        if idx.is_empty() {
            self.log.enabled.iter_mut().for_each(|e| *e = on);
        } else {
            for i in idx {
                self.log.enabled[i] = on;
            }
        }
        self.log.calls = self.log.enabled("logCalls");
        Ok(Status::Ok)
    }

    /// The experiment's start and stop time; a tolerance is not used (the model file's
    /// `[solver]` governs the steps), and the log says so.
    pub(crate) fn setup_experiment(
        &mut self,
        function: &str,
        tolerance: Option<f64>,
        start_s: f64,
        stop_s: Option<f64>,
    ) -> Result<Status, CallError> {
        self.instance.setup_experiment(start_s, stop_s)?;
        if let Some(tolerance) = tolerance {
            self.log.log(
                Status::Ok,
                "logEvents",
                &format!(
                    "{function}: tolerance {tolerance:e} not used (the model file's [solver] \
                     settings govern the steps: a fixed step or its own rtol)"
                ),
            );
        }
        Ok(Status::Ok)
    }

    /// The end of initialization, with the plausibility warnings of the parameters set since
    /// instantiation (the model file's own were logged there).
    pub(crate) fn exit_initialization(&mut self, function: &str) -> Result<Status, CallError> {
        self.instance.exit_initialization_mode()?;
        if self.instance.has_overrides() {
            for w in self.instance.plausibility_warnings() {
                self.log.log(
                    Status::Warning,
                    "logStatusWarning",
                    &format!("{function}: {w}"),
                );
            }
        }
        Ok(Status::Ok)
    }

    /// Get the values of `vrs` into `out` (checked: a Model Exchange state no physics allows
    /// is a discard).
    pub(crate) fn get_values(
        &mut self,
        function: &str,
        vrs: &[u32],
        out: &mut [f64],
    ) -> Result<Status, CallError> {
        if !self.instance.is_model_exchange() {
            self.instance.get_real(vrs, out)?;
            return Ok(Status::Ok);
        }
        let r = self.instance.get_real_checked(vrs, out)?;
        Ok(self.reported(function, &r))
    }

    /// A typed access the model has no variable of: fine for no value references, else an
    /// error naming the first (`kind` is the standard's type name).
    pub(crate) fn no_values(&self, kind: &str, vrs: &[u32]) -> Result<Status, CallError> {
        match vrs.first() {
            None => Ok(Status::Ok),
            Some(vr) => Err(CallError(format!(
                "no {kind} variable with value reference {vr} (every variable of this model is a \
                 real number)"
            ))),
        }
    }

    /// Take the instance's state into `*slot`: a new handle when it is NULL, else the given
    /// handle overwritten in place (the handle stays the same).
    pub(crate) fn get_state(&mut self, slot: *mut *mut c_void) -> Result<Status, CallError> {
        let slot = out_ptr(slot, "FMUstate (the state pointer argument)")?;
        if slot.is_null() {
            let snapshot = self.instance.snapshot()?;
            *slot = self.new_state(snapshot)?;
        } else {
            let handle = state_handle::<S>(*slot)?;
            self.instance.snapshot_into(&mut handle.snapshot)?;
            handle.blob_valid = false;
        }
        Ok(Status::Ok)
    }

    pub(crate) fn set_state(&mut self, state: *mut c_void) -> Result<Status, CallError> {
        let handle = state_handle::<S>(state)?;
        self.instance.restore(&handle.snapshot)?;
        Ok(Status::Ok)
    }

    /// Free the state in `*slot` (NULL is ignored, as the standards say) and set `*slot` to
    /// NULL. Only the instance that handed a state out may free it.
    pub(crate) fn free_state(&mut self, slot: *mut *mut c_void) -> Result<Status, CallError> {
        let slot = out_ptr(slot, "FMUstate (the state pointer argument)")?;
        if slot.is_null() {
            return Ok(Status::Ok);
        }
        let me = self as *const Self as usize;
        match S::registries().remove_state(*slot as usize, me) {
            Ok(()) => {}
            Err(StateOwner::Unknown) => {
                return Err(CallError(format!(
                    "{:p} is not an FMU state of this library (freed, or never handed out by it)",
                    *slot
                )));
            }
            Err(StateOwner::Other) => {
                return Err(CallError(format!(
                    "{:p} is an FMU state of another instance: only the instance that returned \
                     it may free it",
                    *slot
                )));
            }
        }
        // SAFETY: a live handle of this instance, just removed from the registry.
        unsafe { release_state(*slot as *mut super::component::StateHandle) };
        *slot = ptr::null_mut();
        Ok(Status::Ok)
    }

    pub(crate) fn state_size(
        &mut self,
        state: *mut c_void,
        size: *mut usize,
    ) -> Result<Status, CallError> {
        let size = out_ptr(size, "size")?;
        let handle = state_handle::<S>(state)?;
        *size = self.blob_of(handle)?.len();
        Ok(Status::Ok)
    }

    /// Serialize a state into the importer's `size` bytes (exactly the state's size).
    ///
    /// # Safety
    /// `out` points to `size` writable bytes (the contract).
    pub(crate) unsafe fn serialize_state(
        &mut self,
        state: *mut c_void,
        out: *mut u8,
        size: usize,
    ) -> Result<Status, CallError> {
        let handle = state_handle::<S>(state)?;
        let blob = self.blob_of(handle)?;
        if size != blob.len() {
            return Err(CallError(format!(
                "size is {size} bytes, the state takes {} (ask for its size first)",
                blob.len()
            )));
        }
        // SAFETY: `size` writable bytes (the contract).
        let out = unsafe { slice_out(out, size, "serializedState[]")? };
        out.copy_from_slice(blob);
        Ok(Status::Ok)
    }

    /// A state from its blob, decoded and checked completely before anything is touched: a new
    /// handle in `*slot` when it is NULL, else the given handle overwritten.
    ///
    /// # Safety
    /// `bytes` points to `size` readable bytes (the contract).
    pub(crate) unsafe fn deserialize_state(
        &mut self,
        bytes: *const u8,
        size: usize,
        slot: *mut *mut c_void,
    ) -> Result<Status, CallError> {
        let slot = out_ptr(slot, "FMUstate (the state pointer argument)")?;
        if !slot.is_null() {
            state_handle::<S>(*slot)?;
        }
        // SAFETY: `size` readable bytes (the contract).
        let bytes = unsafe { slice_in(bytes, size, "serializedState[]")? };
        let snapshot = self.instance.deserialize(bytes)?;
        if slot.is_null() {
            *slot = self.new_state(snapshot)?;
        } else {
            let handle = state_handle::<S>(*slot)?;
            handle.snapshot = snapshot;
            handle.blob_valid = false;
        }
        Ok(Status::Ok)
    }

    /// Directional derivatives: of outputs with respect to inputs in Co-Simulation, of
    /// derivatives and outputs with respect to states and inputs in Model Exchange.
    pub(crate) fn directional_derivative(
        &mut self,
        function: &str,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        sensitivity: &mut [f64],
    ) -> Result<Status, CallError> {
        if self.instance.is_model_exchange() {
            let r = self.instance.exchange_directional_derivative(
                unknowns,
                knowns,
                seed,
                sensitivity,
            )?;
            return Ok(self.reported(function, &r));
        }
        self.instance
            .directional_derivative(unknowns, knowns, seed, sensitivity)?;
        Ok(Status::Ok)
    }

    /// One communication step, its call logged with its arguments under `logCalls`.
    pub(crate) fn do_step(&mut self, current_s: f64, h_s: f64) -> Result<Status, CallError> {
        if self.log.calls {
            self.log.log(
                Status::Ok,
                "logCalls",
                &format!(
                    "{}(currentCommunicationPoint = {current_s:?}, communicationStepSize = \
                     {h_s:?})",
                    S::DO_STEP
                ),
            );
        }
        let report = self.instance.do_step(current_s, h_s)?;
        Ok(self.reported(S::DO_STEP, &report))
    }
}
