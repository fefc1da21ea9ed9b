//! The co-simulation view of a model: a flat table of variables (name, value reference,
//! causality, variability, unit) that the FMI layer and `fmu-build` use without knowing any
//! component. Parameters are discovered generically from the model file: every numeric key of
//! every component is a parameter `<component>.<key>`.

mod calls;
mod description;
mod exchange;
mod fits;
#[cfg(test)]
mod instance_tests;
mod structure;

pub use calls::{Call, Phase};
pub use description::{
    Causality, Description, LOG_CATEGORIES, Variability, Variable, describe, guid_of,
    parameter_override, parameters,
};
use fits::check_fits;

use serde::{Deserialize, Serialize};

use crate::checks;
use crate::integrators::Method;
use crate::model::ModelFile;
use crate::simulation::{Advance, Finish, Internal, Simulation, Stats, StepFailure};
use crate::units::Unit;

pub use exchange::{CompletedStep, DiscreteUpdate, ExchangeSnapshot, Interface};
pub use structure::{Structure, structure};

// ------------------------------------------------------------------------------------------
// The runtime behind the FMI 2.0 Co-Simulation ABI (`crate::fmi2`): one instance of a model,
// its life cycle, values, steps and states. It sees the variable table only; which component a
// parameter belongs to is the network's business (`Network::set_scalar`).
// ------------------------------------------------------------------------------------------

/// A refused or failed call: the FMI layer returns fmi2Error and logs the message.
#[derive(Clone, Debug, PartialEq)]
pub struct CallError(pub String);

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for CallError {
    fn from(s: String) -> Self {
        CallError(s)
    }
}

/// Status of a log line or a step (the non-error subset of fmi2Status).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StepStatus {
    Ok,
    Warning,
    Discard,
}

/// One message for the master's logger.
#[derive(Clone, Debug, PartialEq)]
pub struct LogLine {
    pub status: StepStatus,
    /// One of [`LOG_CATEGORIES`].
    pub category: &'static str,
    pub text: String,
}

/// What a step did: fmi2OK, fmi2Warning (a check 4, 5, 6, 7, 8, 9 or 11 fired) or fmi2Discard
/// (check 2, 3 or 10 refused a step, or the run ended), with the lines to log.
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport {
    pub status: StepStatus,
    pub log: Vec<LogLine>,
}

/// Codes that make a step return fmi2Warning (6 and 7 fire only with `[sensitivities]`).
pub(crate) const WARNING_CODES: [u8; 7] = [
    checks::MASS_DRIFT,
    checks::ENERGY_DRIFT,
    checks::MASS_GRADIENT_DRIFT,
    checks::ENERGY_GRADIENT_DRIFT,
    checks::ABOVE_CRITICAL_PRESSURE,
    checks::PISTON_DESYNC,
    checks::BEYOND_STABILITY,
];

/// Everything an FMU state holds: the dynamic part of the simulation only (time, state vectors,
/// integrator history, discrete flags, live inputs, counters, check latches) and what the
/// instance needs to go on from it. The static part (the network's components, the solver
/// settings, the check thresholds) is the instance's own model, rebuilt from `overrides` and
/// `start_time_s` where they differ from the instance's, and never carried: a state stays small
/// (a few hundred bytes for the projectile model) and a restore copies vectors into storage that
/// already has their size (no allocation).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Snapshot {
    /// GUID of the model the state belongs to.
    pub guid: String,
    phase: Phase,
    overrides: Vec<String>,
    start_time_s: f64,
    stop_time_s: Option<f64>,
    /// Values of the inputs set during the run (one per input variable, in value-reference
    /// order); `None`: as the model gives it.
    inputs: Vec<Option<f64>>,
    t_s: f64,
    y: Vec<f64>,
    y_compensation: Vec<f64>,
    rc: u8,
    first_fired_s: [Option<f64>; checks::CODES],
    finished: Option<Finish>,
    stats: Stats,
    internal: Internal,
    integrator: Method,
    /// The network's discrete state: piston exit flags, the segment start, the counter.
    exited: Vec<bool>,
    segment_start_s: f64,
    rhs_evaluations: u64,
    /// A Model Exchange instance's own part (`None`: a Co-Simulation state). Encoded after the
    /// body above (see [`encode_snapshot_into`]), so a Co-Simulation state's bytes are those
    /// of the format before Model Exchange.
    #[serde(skip)]
    exchange: Option<ExchangeSnapshot>,
}

impl Snapshot {
    /// Simulation time of the state, s.
    pub fn time_s(&self) -> f64 {
        self.t_s
    }

    /// For tests that forge states.
    #[cfg(test)]
    pub(crate) fn y_mut(&mut self) -> &mut Vec<f64> {
        &mut self.y
    }
}

/// Copy `src` into `dst`, reusing `dst`'s vectors (no allocation when the lengths agree).
fn copy_internal(dst: &mut Internal, src: &Internal) {
    dst.t_s = src.t_s;
    dst.y.clone_from(&src.y);
    dst.compensation.clone_from(&src.compensation);
    dst.t_prev_s = src.t_prev_s;
    dst.y_prev.clone_from(&src.y_prev);
    dst.compensation_prev.clone_from(&src.compensation_prev);
    dst.pending_event = src.pending_event;
    dst.at_breakpoint = src.at_breakpoint;
}

/// Copy the integrator's history into storage of the same size (`Method::assign_from`: no
/// allocation once sized, for every method).
fn copy_integrator(dst: &mut Method, src: &Method) {
    dst.assign_from(src);
}

/// The dynamic fields of a [`Snapshot`] and where each lives in a [`Simulation`], as
/// `(how to copy, snapshot field, simulation place)`: one list for both directions
/// ([`take_dynamic`], [`put_dynamic`]), so a field cannot be copied one way and forgotten the
/// other; `take_dynamic` also fails to compile when `Snapshot` gains a field that is in
/// neither this list nor its static part.
macro_rules! dynamic_fields {
    ($m:ident) => {
        $m! {
            (value, t_s, t_s),
            (vec, y, y),
            (vec, y_compensation, y_compensation),
            (value, rc, rc),
            (value, first_fired_s, first_fired_s),
            (value, finished, finished),
            (value, stats, stats),
            (internal, internal, internal),
            (integrator, integrator, integrator),
            (vec, exited, network.exited),
            (value, segment_start_s, network.segment_start_s),
            (value, rhs_evaluations, network.rhs_evaluations),
        }
    };
}

/// `dst = src` for one field of [`dynamic_fields`], reusing `dst`'s storage.
macro_rules! copy_field {
    (value, $dst:expr, $src:expr) => {
        $dst = $src
    };
    (vec, $dst:expr, $src:expr) => {
        $dst.clone_from(&$src)
    };
    (internal, $dst:expr, $src:expr) => {
        copy_internal(&mut $dst, &$src)
    };
    (integrator, $dst:expr, $src:expr) => {
        copy_integrator(&mut $dst, &$src)
    };
}

/// The dynamic part of `sim` into `s` (storage reused).
fn take_dynamic(s: &mut Snapshot, sim: &Simulation) {
    macro_rules! take {
        ($(($how:ident, $field:ident, $($place:ident).+)),* $(,)?) => {
            // Every field is static (the model's, set when the snapshot is made) or listed.
            let Snapshot {
                guid: _,
                phase: _,
                overrides: _,
                start_time_s: _,
                stop_time_s: _,
                inputs: _,
                exchange: _,
                $($field: _,)*
            } = s;
            $(copy_field!($how, s.$field, sim.$($place).+);)*
        };
    }
    dynamic_fields!(take);
}

/// The dynamic part of `s` into `sim`, whose static part is the state's model (storage reused;
/// the inputs are applied by the caller).
fn put_dynamic(sim: &mut Simulation, s: &Snapshot) {
    macro_rules! put {
        ($(($how:ident, $field:ident, $($place:ident).+)),* $(,)?) => {
            $(copy_field!($how, sim.$($place).+, s.$field);)*
        };
    }
    dynamic_fields!(put);
    sim.last_event = None;
}

/// Serialized FMU state: `PLNMSTAT`, format version (u32), GUID length (u32) and bytes, body
/// length (u64), CRC-32 of the body (u32), all little-endian, then the bincode body.
pub const STATE_MAGIC: &[u8; 8] = b"PLNMSTAT";
/// Version 2: the body carries the dynamic part of the simulation only (version 1 carried the
/// whole network). Version 3: a BDF history's saved Jacobian is its values over the model's
/// pattern of I − γJ (version 2: n² dense values). Version 4: the first firings of run-time
/// checks 0..=11 (version 3: 0..=9).
pub const STATE_FORMAT_VERSION: u32 = 4;
/// Longest GUID a header may carry (ours are 38 characters).
const MAX_GUID_LEN: usize = 256;
/// Largest body the decoder accepts (a guard against absurd length claims), bytes.
const MAX_STATE_BODY: usize = 1 << 30;

fn bincode_config() -> impl bincode::config::Config {
    bincode::config::standard()
}

/// Encode a state as a self-checking blob.
pub fn encode_snapshot(snapshot: &Snapshot) -> Result<Vec<u8>, CallError> {
    let mut out = Vec::new();
    encode_snapshot_into(snapshot, &mut out)?;
    Ok(out)
}

/// Encode a state into `out` (cleared first; its storage is reused).
pub fn encode_snapshot_into(snapshot: &Snapshot, out: &mut Vec<u8>) -> Result<(), CallError> {
    let guid = snapshot.guid.as_bytes();
    out.clear();
    out.extend_from_slice(STATE_MAGIC);
    out.extend_from_slice(&STATE_FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(guid.len() as u32).to_le_bytes());
    out.extend_from_slice(guid);
    // Body length and CRC are filled in once the body is written behind them.
    let fields = out.len();
    out.extend_from_slice(&[0u8; 12]);
    let body_start = out.len();
    bincode::serde::encode_into_std_write(snapshot, out, bincode_config())
        .map_err(|e| CallError(format!("cannot encode the state: {e}")))?;
    if let Some(x) = &snapshot.exchange {
        bincode::serde::encode_into_std_write(x, out, bincode_config())
            .map_err(|e| CallError(format!("cannot encode the state: {e}")))?;
    }
    let body_len = (out.len() - body_start) as u64;
    let crc = crc32fast::hash(&out[body_start..]);
    out[fields..fields + 8].copy_from_slice(&body_len.to_le_bytes());
    out[fields + 8..fields + 12].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// Split a blob into (GUID, body), checking every header field. `expected_guid` is the GUID of
/// the instance that reads it.
fn check_header<'a>(blob: &'a [u8], expected_guid: &str) -> Result<&'a [u8], CallError> {
    let truncated = |need: usize| {
        CallError(format!(
            "state blob is truncated: {} bytes, its header needs at least {need}",
            blob.len()
        ))
    };
    if blob.len() < 8 {
        return Err(truncated(8));
    }
    if &blob[..8] != STATE_MAGIC {
        return Err(CallError(format!(
            "not a Plenum FMU state: it starts with {:?}, expected {:?}",
            String::from_utf8_lossy(&blob[..8]),
            String::from_utf8_lossy(STATE_MAGIC)
        )));
    }
    let u32_at = |o: usize| -> Result<u32, CallError> {
        let b = blob.get(o..o + 4).ok_or_else(|| truncated(o + 4))?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let version = u32_at(8)?;
    if version != STATE_FORMAT_VERSION {
        return Err(CallError(format!(
            "state format version {version}, this FMU reads version {STATE_FORMAT_VERSION}"
        )));
    }
    let guid_len = u32_at(12)? as usize;
    if guid_len > MAX_GUID_LEN {
        return Err(CallError(format!(
            "state header claims a {guid_len}-byte GUID (at most {MAX_GUID_LEN}): corrupted state"
        )));
    }
    let guid_end = 16 + guid_len;
    let guid = blob.get(16..guid_end).ok_or_else(|| truncated(guid_end))?;
    let guid = String::from_utf8_lossy(guid);
    if guid != expected_guid {
        return Err(CallError(format!(
            "state is for model GUID {guid}, this instance is {expected_guid}"
        )));
    }
    let len_bytes = blob
        .get(guid_end..guid_end + 8)
        .ok_or_else(|| truncated(guid_end + 12))?;
    let mut l = [0u8; 8];
    l.copy_from_slice(len_bytes);
    let body_len = u64::from_le_bytes(l);
    let crc = u32_at(guid_end + 8)?;
    let body_start = guid_end + 12;
    if body_len > MAX_STATE_BODY as u64 {
        return Err(CallError(format!(
            "state header claims a body of {body_len} bytes (at most {MAX_STATE_BODY}): \
             corrupted state"
        )));
    }
    let total = body_start + body_len as usize;
    if blob.len() < total {
        return Err(CallError(format!(
            "state blob is truncated: {} bytes, header says {total}",
            blob.len()
        )));
    }
    if blob.len() > total {
        return Err(CallError(format!(
            "state blob has {} bytes, header says {total}: trailing data",
            blob.len()
        )));
    }
    let body = &blob[body_start..];
    let actual = crc32fast::hash(body);
    if actual != crc {
        return Err(CallError(format!(
            "checksum mismatch: header says CRC-32 {crc:08x}, body hashes to {actual:08x} \
             (corrupted state)"
        )));
    }
    Ok(body)
}

/// One model instance (one fmi2Component). Clone: a copy is an independent instance in the
/// same phase (the fuzz targets start every input from a pristine one).
#[derive(Clone)]
pub struct Instance {
    /// The model file text exactly as read (its hash is the GUID).
    source: String,
    label: String,
    description: Description,
    /// Variables with value reference < this are outputs (`time` first), in the order of
    /// [`crate::variables::write_outputs`].
    n_outputs: usize,
    /// `name=value` for every parameter (and, before initialization ends, input) set so far.
    overrides: Vec<String>,
    /// Values of the parameters and inputs as the model (with overrides) gives them, indexed by
    /// value reference − `n_outputs`.
    param_values: Vec<f64>,
    phase: Phase,
    start_time_s: f64,
    stop_time_s: Option<f64>,
    sim: Simulation,
    /// The simulation as built from the model with `reference.0` as overrides and start time
    /// `reference.1` (bits), untouched: what restored states are checked against.
    reference: (Vec<String>, u64, Simulation),
    /// Value reference of the first input (inputs come last in the variable table).
    first_input: usize,
    /// The inputs set during the run (index = value reference − `first_input`); `None`: as the
    /// model gives it. Part of a state (`Snapshot::inputs`).
    live_inputs: Vec<Option<f64>>,
    /// Output values at the current time (valid when `outputs_valid`).
    outputs: Vec<f64>,
    outputs_valid: bool,
    /// The warning codes the last fmi2DoStep returned fmi2Warning for (one bit per code): a
    /// warning is logged when its episode starts, not again while each following step fires
    /// it too.
    warned: u16,
    /// Value reference of the first local variable (states that are no output, derivatives:
    /// they come after the inputs).
    first_local: usize,
    /// Model Exchange's part of the instance (`None`: a Co-Simulation instance).
    exchange: Option<Box<exchange::Exchange>>,
    /// Parameters set before the run whose values, each valid on its own, do not yet make a
    /// valid model together (see [`Instance::set_real`]).
    pending: Option<Pending>,
}

/// Values set by fmi2SetReal before the run that break a rule joining keys (a piston's `x0`
/// past its `x_exit` until `x_exit` is set too): kept, and judged on the final values when
/// initialization ends.
#[derive(Clone, Debug)]
struct Pending {
    /// Every `name=value` set so far (the instance's `overrides` stay the last valid ones).
    overrides: Vec<String>,
    /// What is wrong with them together.
    problems: String,
}

/// Model errors as the FMU's log says them: a problem of a value set by fmi2SetReal names the
/// variable and says fmi2SetReal, not the command line's `--set` (its errors' file and key).
fn errors_text(errors: &[crate::model::ModelError]) -> String {
    errors
        .iter()
        .map(|e| {
            if e.file != "--set" {
                return e.to_string();
            }
            let message = e.message.replace("--set", "fmi2SetReal");
            match e.key.split_once('=') {
                Some((name, value)) => format!("`{name}` = {value} (fmi2SetReal): {message}"),
                None => format!("fmi2SetReal: {message}"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Build the simulation of a validated spec starting at `start_s`. The co-simulation ends at a
/// piston's exit (fmi2Discard, fmi2Terminated) only when the model file says
/// `stop_on_exit = true`: a master that runs the default experiment reaches its stop time.
fn build_at(spec: &ModelFile, start_s: f64) -> Result<Simulation, String> {
    let mut sim = if start_s.to_bits() == spec.solver.t_start.to_bits() {
        crate::model::build_simulation(spec, None)
    } else {
        let mut spec = spec.clone();
        spec.solver.t_start = start_s;
        crate::model::build_simulation(&spec, None)
    }?;
    sim.settings.stop_on_exit = spec.solver.stop_on_exit == Some(true);
    Ok(sim)
}

impl Instance {
    /// Load a model from its TOML text as a Co-Simulation instance; `label` names the file in
    /// messages.
    pub fn new(source: &str, label: &str) -> Result<Instance, String> {
        Self::with_interface(source, label, Interface::CoSimulation)
    }

    /// Load a model from its TOML text as an instance of `interface`.
    pub fn with_interface(
        source: &str,
        label: &str,
        interface: Interface,
    ) -> Result<Instance, String> {
        let model = crate::model::parse_str(source, label, &[]).map_err(|e| errors_text(&e))?;
        let sim = build_at(&model.spec, model.spec.solver.t_start)?;
        let mut description = describe(&model);
        description.guid = guid_of(source.as_bytes());
        let n_outputs = description
            .variables
            .iter()
            .take_while(|v| matches!(v.causality, Causality::Independent | Causality::Output))
            .count();
        let n_written = crate::variables::output_variables(&sim).len();
        if n_outputs != n_written {
            return Err(format!(
                "internal: the variable table has {n_outputs} outputs, the simulation writes \
                 {n_written}"
            ));
        }
        for (i, v) in description.variables.iter().enumerate() {
            if v.value_reference as usize != i {
                return Err(format!(
                    "internal: variable `{}` has value reference {}, expected {i}",
                    v.name, v.value_reference
                ));
            }
        }
        let param_values = description.variables[n_outputs..]
            .iter()
            .map(|v| v.start.unwrap_or(f64::NAN))
            .collect();
        let first_local = description
            .variables
            .iter()
            .position(|v| v.causality == Causality::Local)
            .unwrap_or(description.variables.len());
        let first_input = description.variables[..first_local]
            .iter()
            .position(|v| v.causality == Causality::Input)
            .unwrap_or(first_local);
        let n_inputs = first_local - first_input;
        let exchange = match interface {
            Interface::CoSimulation => None,
            Interface::ModelExchange => {
                Some(Box::new(exchange::Exchange::new(&description, &sim)?))
            }
        };
        Ok(Instance {
            source: source.to_string(),
            label: label.to_string(),
            n_outputs,
            overrides: Vec::new(),
            param_values,
            phase: Phase::Instantiated,
            start_time_s: model.spec.solver.t_start,
            stop_time_s: None,
            outputs: vec![0.0; n_written],
            outputs_valid: false,
            warned: 0,
            reference: (Vec::new(), model.spec.solver.t_start.to_bits(), sim.clone()),
            first_input,
            live_inputs: vec![None; n_inputs],
            sim,
            description,
            first_local,
            exchange,
            pending: None,
        })
    }

    pub fn description(&self) -> &Description {
        &self.description
    }

    pub fn guid(&self) -> &str {
        &self.description.guid
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The simulation as it is now (read-only).
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// After an internal error the instance cannot be trusted any more.
    pub fn set_fatal(&mut self) {
        self.phase = Phase::Fatal;
    }

    /// Refuse a call the current phase does not allow.
    #[inline]
    pub fn require(&self, call: Call, function: &str) -> Result<(), CallError> {
        if call.allowed(self.interface()).contains(&self.phase) {
            return Ok(());
        }
        Err(self.refusal(call, function))
    }

    /// Why `call` is refused in the current phase.
    #[cold]
    #[inline(never)]
    fn refusal(&self, call: Call, function: &str) -> CallError {
        let interface = self.interface();
        let allowed = call.allowed(interface);
        let names: Vec<&str> = allowed.iter().map(|p| p.name()).collect();
        CallError(if self.phase == Phase::Fatal {
            format!(
                "{function} is not possible: the instance is in the fatal state after an \
                 internal error; only fmi2FreeInstance is"
            )
        } else if let Some(only) = call.only_in().filter(|&i| i != interface) {
            format!(
                "{function} is a {} function: this instance was instantiated for {}",
                only.name(),
                interface.name()
            )
        } else if names.is_empty() {
            format!("{function} is never possible here: fmi2DoStep is synchronous")
        } else {
            format!(
                "illegal call sequence: {function} is not allowed in state {} (allowed in: {})",
                self.phase.name(),
                names.join(", ")
            )
        })
    }

    fn variable(&self, vr: u32, kind: &str) -> Result<&Variable, CallError> {
        self.description
            .variables
            .get(vr as usize)
            .ok_or_else(|| CallError(format!("no {kind} variable with value reference {vr}")))
    }

    /// fmi2SetupExperiment: the start time (the model's t_start otherwise) and an optional stop
    /// time that no step may pass.
    pub fn setup_experiment(&mut self, start_s: f64, stop_s: Option<f64>) -> Result<(), CallError> {
        self.require(Call::SetupExperiment, "fmi2SetupExperiment")?;
        if !start_s.is_finite() {
            return Err(CallError(format!(
                "startTime must be finite, got {start_s}"
            )));
        }
        if let Some(stop) = stop_s {
            if !stop.is_finite() || stop < start_s {
                return Err(CallError(format!(
                    "stopTime must be finite and ≥ startTime = {start_s}, got {stop}"
                )));
            }
        }
        if start_s.to_bits() != self.start_time_s.to_bits() {
            let model = crate::model::parse_str(&self.source, &self.label, &self.overrides)
                .map_err(|e| CallError(errors_text(&e)))?;
            self.sim = build_at(&model.spec, start_s)?;
            self.reference = (self.overrides.clone(), start_s.to_bits(), self.sim.clone());
            self.live_inputs.fill(None);
            self.start_time_s = start_s;
            self.outputs_valid = false;
        }
        self.stop_time_s = stop_s;
        self.warned = 0;
        Ok(())
    }

    /// The plausibility warnings of the model with the parameters set so far (a pressure of
    /// 6 Pa...: `crate::model::LoadedModel::warnings`), for the master's log.
    pub fn plausibility_warnings(&self) -> Vec<String> {
        match crate::model::parse_str(&self.source, &self.label, &self.overrides) {
            // A parameter set by fmi2SetReal is an override inside: say so, not `--set`.
            Ok(model) => model
                .warnings
                .iter()
                .map(|w| match w.file.as_str() {
                    "--set" => format!("fmi2SetReal `{}`: {}", w.key, w.message),
                    _ => w.to_string(),
                })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Whether parameters were set (the model differs from the file's).
    pub fn has_overrides(&self) -> bool {
        !self.overrides.is_empty()
    }

    pub fn enter_initialization_mode(&mut self) -> Result<(), CallError> {
        self.require(Call::EnterInitializationMode, "fmi2EnterInitializationMode")?;
        self.phase = Phase::InitializationMode;
        Ok(())
    }

    /// fmi2ExitInitializationMode: refused (the instance stays in initialization mode) while
    /// the parameters set do not make a valid model together.
    pub fn exit_initialization_mode(&mut self) -> Result<(), CallError> {
        self.require(Call::ExitInitializationMode, "fmi2ExitInitializationMode")?;
        self.no_pending_parameters()?;
        self.phase = Phase::StepComplete;
        self.exchange_exit_initialization();
        Ok(())
    }

    /// An error while parameters set by fmi2SetReal do not make a valid model together.
    fn no_pending_parameters(&self) -> Result<(), CallError> {
        match &self.pending {
            None => Ok(()),
            Some(p) => Err(CallError(format!(
                "the parameters set by fmi2SetReal do not make a valid model together: {}; \
                 set other values with fmi2SetReal (or fmi2Reset)",
                p.problems
            ))),
        }
    }

    pub fn terminate(&mut self) -> Result<(), CallError> {
        self.require(Call::Terminate, "fmi2Terminate")?;
        self.phase = Phase::Terminated;
        Ok(())
    }

    /// fmi2Reset: back to the state after instantiation, with the model as in the file.
    pub fn reset(&mut self) -> Result<(), CallError> {
        self.require(Call::Reset, "fmi2Reset")?;
        let fresh = Instance::with_interface(&self.source, &self.label, self.interface())
            .map_err(CallError)?;
        *self = fresh;
        Ok(())
    }

    /// fmi2GetReal: every variable (outputs at the current time, parameters and inputs as set).
    pub fn get_real(&mut self, vrs: &[u32], out: &mut [f64]) -> Result<(), CallError> {
        self.require(Call::GetValues, "fmi2GetReal")?;
        if out.len() != vrs.len() {
            return Err(CallError(format!(
                "internal: {} value references, {} values",
                vrs.len(),
                out.len()
            )));
        }
        let mut need_outputs = false;
        let mut computed = false;
        for &vr in vrs {
            self.variable(vr, "Real")?;
            need_outputs |= (vr as usize) < self.n_outputs;
            computed |= (vr as usize) < self.n_outputs || (vr as usize) >= self.first_local;
        }
        if computed {
            // The outputs (and states, derivatives) of a model the parameters set do not make.
            self.no_pending_parameters()?;
        }
        if need_outputs && !self.outputs_valid {
            crate::variables::write_outputs(&mut self.sim, &mut self.outputs);
            // No value that is not a number is ever reported (the run-time checks keep the
            // states finite; a derived value can still overflow).
            if let Some(k) = self.outputs.iter().position(|x| !x.is_finite()) {
                return Err(CallError(format!(
                    "output `{}` is {} at t = {:?} s: not reported (run-time check {}: {})",
                    self.description.variables[k].name,
                    self.outputs[k],
                    self.sim.t_s,
                    checks::IMPOSSIBLE_STATE,
                    checks::describe(checks::IMPOSSIBLE_STATE)
                )));
            }
            self.outputs_valid = true;
        }
        let mut need_locals = false;
        for (o, &vr) in out.iter_mut().zip(vrs) {
            let i = vr as usize;
            *o = if i < self.n_outputs {
                self.outputs[i]
            } else if i >= self.first_local {
                // Filled below.
                need_locals = true;
                0.0
            } else {
                let v = &self.description.variables[i];
                let live = match v.causality {
                    Causality::Input => v
                        .name
                        .rsplit_once('.')
                        .and_then(|(c, k)| self.sim.network.get_scalar(c, k, self.sim.t_s)),
                    _ => None,
                };
                live.unwrap_or(self.param_values[i - self.n_outputs])
            };
        }
        if need_locals {
            self.fill_locals(vrs, out);
        }
        Ok(())
    }

    /// fmi2SetReal: parameters (until initialization ends) and inputs. Every value is checked
    /// before anything is set, against its key's rule (`crate::components::keys`, the same as in
    /// the model file); on an error nothing changes. The values of one call are judged
    /// together, on their final values (the last of a variable given twice); before the run,
    /// values that each obey their rule but break a rule joining keys (a piston's `x0` past
    /// its `x_exit`) are kept until initialization ends, so that a master that sets one
    /// parameter per call (FMPy's start values) is judged on the final values too:
    /// fmi2ExitInitializationMode refuses the model they make if it is still invalid.
    pub fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError> {
        self.require(Call::SetValues, "fmi2SetReal")?;
        if values.len() != vrs.len() {
            return Err(CallError(format!(
                "internal: {} value references, {} values",
                vrs.len(),
                values.len()
            )));
        }
        let running = matches!(
            self.phase,
            Phase::StepComplete | Phase::EventMode | Phase::ContinuousTimeMode
        );
        for (&vr, &x) in vrs.iter().zip(values) {
            let v = self.variable(vr, "Real")?;
            match v.causality {
                Causality::Independent | Causality::Output => {
                    return Err(CallError(format!(
                        "`{}` (value reference {vr}) is an output: it cannot be set",
                        v.name
                    )));
                }
                Causality::Local => {
                    return Err(CallError(format!(
                        "`{}` (value reference {vr}) is a local variable (a continuous state or \
                         a derivative): it cannot be set (Model Exchange sets the states with \
                         fmi2SetContinuousStates)",
                        v.name
                    )));
                }
                Causality::Parameter if running => {
                    return Err(CallError(format!(
                        "`{}` (value reference {vr}) is a fixed parameter: it can be set only \
                         before fmi2ExitInitializationMode",
                        v.name
                    )));
                }
                _ => {}
            }
            if !x.is_finite() {
                return Err(CallError(format!(
                    "`{}` (value reference {vr}) cannot be set to {x}: values must be finite",
                    v.name
                )));
            }
        }
        if vrs.is_empty() {
            return Ok(());
        }
        if running {
            self.set_inputs_live(vrs, values)
        } else {
            self.set_overrides(vrs, values)
        }
    }

    /// Inputs during the run: changed in the network at once; a change is a discontinuity, so
    /// the integrator starts afresh (multistep history is not carried across it).
    fn set_inputs_live(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError> {
        // Check every value (its key can change during a run, and the value obeys the key's
        // rule) before changing any.
        for (&vr, &x) in vrs.iter().zip(values) {
            let name = &self.description.variables[vr as usize].name;
            let (c, k) = name.rsplit_once('.').unwrap_or((name, ""));
            self.sim.network.check_scalar(c, k, x).map_err(|e| {
                CallError(format!(
                    "input `{name}` (value reference {vr}) cannot be set to {x}: {e}; nothing \
                     was set"
                ))
            })?;
        }
        let mut changed = false;
        for (&vr, &x) in vrs.iter().zip(values) {
            let i = vr as usize;
            let name = &self.description.variables[i].name;
            if let Some((c, k)) = name.rsplit_once('.') {
                changed |= self.sim.network.set_scalar(c, k, x)?;
                self.live_inputs[i - self.first_input] = Some(x);
            }
            self.param_values[i - self.n_outputs] = x;
        }
        if changed {
            self.sim.restart_at_reported_state();
            self.outputs_valid = false;
        }
        Ok(())
    }

    /// Parameters (and inputs) before the run: each value is checked against its key's rule
    /// (refused at once, nothing set), then recorded as a `name=value` override of the model
    /// file, which is parsed and validated again with every override set so far; the
    /// simulation is rebuilt from it. Overrides that break a rule joining keys are kept as
    /// [`Pending`] (the simulation stays the last valid one) until later values make the model
    /// valid; fmi2ExitInitializationMode refuses it until then.
    fn set_overrides(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError> {
        for (&vr, &x) in vrs.iter().zip(values) {
            let name = &self.description.variables[vr as usize].name;
            let Some((c, k)) = name.rsplit_once('.') else {
                continue;
            };
            if let Some(rule) = self.sim.network.rule_of(c, k)
                && !rule.holds(x)
            {
                let unit = self
                    .sim
                    .network
                    .key_of(name)
                    .map_or_else(Unit::dimensionless, |k| k.unit());
                return Err(CallError(format!(
                    "`{name}` (value reference {vr}) cannot be set to {x}: it must be {}; \
                     nothing was set",
                    rule.text(&unit)
                )));
            }
        }
        let mut overrides = match &self.pending {
            Some(p) => p.overrides.clone(),
            None => self.overrides.clone(),
        };
        // The values as set so far (a cubic schedule's override carries both its times).
        let mut current = self.param_values.clone();
        for (&vr, &x) in vrs.iter().zip(values) {
            let name = &self.description.variables[vr as usize].name;
            current[vr as usize - self.n_outputs] = x;
            let value_of = |n: &str| {
                let k = self.description.variables[self.n_outputs..]
                    .iter()
                    .position(|v| v.name == n)?;
                Some(current[k])
            };
            let entry = parameter_override(name, x, value_of);
            let target = entry.split_once('=').map(|(n, _)| n.to_string());
            match overrides
                .iter_mut()
                .find(|o| o.split_once('=').map(|(n, _)| n) == target.as_deref())
            {
                Some(o) => *o = entry,
                None => overrides.push(entry),
            }
        }
        let model = match crate::model::parse_str(&self.source, &self.label, &overrides) {
            Ok(model) => model,
            Err(e) => {
                // Valid one by one, not (yet) together: judged on the final values.
                for (&vr, &x) in vrs.iter().zip(values) {
                    self.param_values[vr as usize - self.n_outputs] = x;
                }
                self.pending = Some(Pending {
                    overrides,
                    problems: errors_text(&e),
                });
                return Ok(());
            }
        };
        // The loader must have applied every override (value for value).
        let now: std::collections::HashMap<String, f64> = parameters(&model.spec)
            .into_iter()
            .map(|(n, v, _)| (n, v))
            .collect();
        let set = vrs.iter().zip(values).map(|(&vr, &x)| {
            let name = &self.description.variables[vr as usize].name;
            (name.clone(), format!("{x:?}"))
        });
        // Each number set, and each plain override (a cubic schedule's is checked by its times).
        let plain = overrides.iter().filter_map(|o| {
            let (name, x) = o.split_once('=')?;
            x.parse::<f64>()
                .is_ok()
                .then(|| (name.to_string(), x.to_string()))
        });
        for (name, x) in plain.chain(set) {
            let name = name.as_str();
            let x = x.as_str();
            match (now.get(name), x.parse::<f64>()) {
                (Some(v), Ok(x)) if v.to_bits() == x.to_bits() => {}
                (other, _) => {
                    return Err(CallError(format!(
                        "setting `{name}` = {x} had no effect on the model (it reads {}): \
                         the model loader did not apply the override",
                        other.map_or("nothing".to_string(), |v| format!("{v:?}"))
                    )));
                }
            }
        }
        let sim = build_at(&model.spec, self.start_time_s)?;
        let mut param_values = self.param_values.clone();
        for (k, v) in self.description.variables[self.n_outputs..]
            .iter()
            .enumerate()
        {
            if let Some(x) = now.get(&v.name) {
                param_values[k] = *x;
            }
        }
        self.reference = (overrides.clone(), self.start_time_s.to_bits(), sim.clone());
        self.overrides = overrides;
        self.param_values = param_values;
        self.pending = None;
        self.live_inputs.fill(None);
        self.sim = sim;
        self.outputs_valid = false;
        Ok(())
    }

    /// Integer, Boolean and String access: the model has Real variables only.
    pub fn no_such_variables(&self, kind: &str, vrs: &[u32]) -> Result<(), CallError> {
        match vrs.first() {
            None => Ok(()),
            Some(vr) => Err(CallError(format!(
                "no {kind} variable with value reference {vr} (this model has Real variables \
                 only)"
            ))),
        }
    }

    /// fmi2GetDirectionalDerivative (FMI 2.0.4 §2.1.9): dvUnknown = (∂outputs/∂inputs)·dvKnown
    /// at the current instant, exact (dual numbers). Knowns must be inputs, unknowns outputs.
    /// Only link flows (`<name>.mdot`) and the extra outputs after `rc` (openings, heat flows)
    /// depend on inputs directly; every other output is a function of the state (or time)
    /// alone, and its partial derivative is 0.
    pub fn directional_derivative(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        dv_known: &[f64],
        dv_unknown: &mut [f64],
    ) -> Result<(), CallError> {
        self.require(
            Call::GetDirectionalDerivative,
            "fmi2GetDirectionalDerivative",
        )?;
        if knowns.len() != dv_known.len() || unknowns.len() != dv_unknown.len() {
            return Err(CallError(
                "internal: value references and values differ in number".into(),
            ));
        }
        let mut seeds = Vec::with_capacity(knowns.len());
        for (&vr, &dv) in knowns.iter().zip(dv_known) {
            let v = self.variable(vr, "Real")?;
            let split = v.name.rsplit_once('.');
            match (v.causality, split) {
                (Causality::Input, Some((c, k))) if dv.is_finite() => {
                    seeds.push((c.to_string(), k.to_string(), dv))
                }
                (Causality::Input, _) => {
                    return Err(CallError(format!(
                        "dvKnown for `{}` (value reference {vr}) must be finite, got {dv}",
                        v.name
                    )));
                }
                _ => {
                    return Err(CallError(format!(
                        "`{}` (value reference {vr}) is not an input: directional derivatives \
                         are taken with respect to inputs",
                        v.name
                    )));
                }
            }
        }
        for &vr in unknowns {
            if vr as usize >= self.n_outputs {
                let v = self.variable(vr, "Real")?;
                return Err(CallError(format!(
                    "`{}` (value reference {vr}) is not an output: directional derivatives are \
                     of outputs",
                    v.name
                )));
            }
        }
        let net = &self.sim.network;
        // d(d(ṁ)/dp)/du would need second derivatives: refused where it is not 0.
        for &vr in unknowns {
            let i = vr as usize;
            if crate::variables::is_sensitivity_output(net, i)
                && seeds.iter().any(|(c, k, _)| {
                    crate::variables::output_depends_on(net, i, c.as_str(), k.as_str())
                })
            {
                return Err(CallError(format!(
                    "`{}` (value reference {vr}) is a sensitivity output that depends on the \
                     seeded inputs: its directional derivative (a second derivative) is not \
                     provided",
                    self.description.variables[i].name
                )));
            }
        }
        let first_link = crate::variables::first_link_output(net);
        let mut dflow = vec![0.0; net.n_named_links()];
        let (t, y) = (self.sim.t_s, self.sim.y.clone());
        let seeds: Vec<(&str, &str, f64)> = seeds
            .iter()
            .map(|(c, k, d)| (c.as_str(), k.as_str(), *d))
            .collect();
        self.sim
            .network
            .link_flow_derivatives(t, &y, &seeds, &mut dflow)
            .map_err(CallError)?;
        // The extra outputs after `rc` (openings, heat flows) at the state held fixed.
        let net = &mut self.sim.network;
        let n = net.layout.n_states;
        let (zero, mut dydt, mut df) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        net.tangent(t, &y, &zero, &seeds, &mut dydt, &mut df)
            .map_err(CallError)?;
        let mut dextra = Vec::new();
        net.write_extra_output_tangents(t, &seeds, &mut |x| dextra.push(x))
            .map_err(CallError)?;
        let end_extra = crate::variables::output_variables_of(net).len();
        let first_extra = end_extra - dextra.len();
        for (out, &vr) in dv_unknown.iter_mut().zip(unknowns) {
            let i = vr as usize;
            *out = if i >= first_link && i < first_link + dflow.len() {
                dflow[i - first_link]
            } else if i >= first_extra && i < end_extra {
                dextra[i - first_extra]
            } else {
                0.0
            };
        }
        Ok(())
    }

    /// fmi2DoStep from `current_s` over `h_s` (docs/fmu.md, "Behaviour"; docs/checks.md).
    pub fn do_step(&mut self, current_s: f64, h_s: f64) -> Result<StepReport, CallError> {
        self.require(Call::DoStep, "fmi2DoStep")?;
        let t = self.sim.t_s;
        if !current_s.is_finite() {
            return Err(CallError(format!(
                "currentCommunicationPoint must be finite, got {current_s}"
            )));
        }
        // FMI 2.0.4, §4.2.2 "Computation", fmi2DoStep: communicationStepSize "must be > 0.0";
        // fmi2Error: "the communication step could not be carried out at all". A step of 0
        // (or −0, NaN, negative) is refused, so a master that does not advance its clock gets
        // an error instead of fmi2OK forever.
        if !(h_s > 0.0 && h_s.is_finite()) {
            return Err(CallError(format!(
                "communicationStepSize must be finite and > 0 (FMI 2.0.4 §4.2.2), got {h_s:?}"
            )));
        }
        let tol = 1e-12 * t.abs().max(1.0);
        if (current_s - t).abs() > tol {
            return Err(CallError(format!(
                "currentCommunicationPoint = {current_s:?} s is not the FMU's time {t:?} s \
                 (tolerance {tol:e} s)"
            )));
        }
        let target = current_s + h_s;
        if !target.is_finite() {
            return Err(CallError(format!(
                "the step from {current_s:?} s over {h_s:?} s ends at a non-finite time"
            )));
        }
        let resolution = crate::time_axis::time_resolution_s(target);
        if h_s < resolution {
            return Err(CallError(format!(
                "communicationStepSize = {h_s:e} s is below the time axis's resolution \
                 {resolution:e} s at t = {target:?} s (100·ε·|t|): the time would not advance by it"
            )));
        }
        // A fixed-step method's work is bounded per call as the adaptive methods' is: refused
        // before any step, with nothing changed.
        self.sim.fixed_step_work(target).map_err(CallError)?;
        if let Some(stop) = self.stop_time_s {
            if target > stop + 1e-12 * stop.abs().max(1.0) {
                return Err(CallError(format!(
                    "a step to t = {target:?} s passes the stop time {stop:?} s given to \
                     fmi2SetupExperiment"
                )));
            }
        }
        let mut report = StepReport {
            status: StepStatus::Ok,
            log: Vec::new(),
        };
        self.outputs_valid = false;

        // Which warning codes fire inside this step, and when first (the run's own record of
        // first firings is kept as it is).
        self.sim.window.open();
        let outcome = self.advance(target, &mut report);
        let mut warned = 0u16;
        for c in WARNING_CODES {
            if let Some(tf) = self.sim.window.first_fired_s(c) {
                report.status = report.status.max(StepStatus::Warning);
                let bit = 1u16 << c;
                warned |= bit;
                // Logged once per episode: a code that fired in the previous step too is
                // still returned as fmi2Warning, without another line.
                if self.warned & bit == 0 {
                    report.log.push(LogLine {
                        status: StepStatus::Warning,
                        category: "logStatusWarning",
                        text: format!(
                            "run-time check {c}: {} (at t = {tf:?} s in the step from \
                             {current_s:?} s; not logged again while the following steps fire \
                             it too)",
                            checks::describe(c)
                        ),
                    });
                }
            }
        }
        self.warned = warned;
        match outcome {
            Ok(None) => Ok(report),
            Ok(Some(finish)) => {
                let text = match finish {
                    Finish::Exited { t_s } => format!(
                        "the run ends at t = {t_s:?} s: the projectile has exited and \
                         stop_on_exit is set (fmi2Terminated = true)"
                    ),
                    Finish::NeverExited { t_s } => format!(
                        "run-time check 1: {} by t = {t_s:?} s; the run ends \
                         (fmi2Terminated = true)",
                        checks::describe(checks::NEVER_EXITED)
                    ),
                };
                report.status = StepStatus::Discard;
                report.log.push(LogLine {
                    status: StepStatus::Discard,
                    category: "logEvents",
                    text,
                });
                self.phase = Phase::StepFailed;
                Ok(report)
            }
            Err(fail)
                if matches!(
                    fail.code,
                    checks::NEGATIVE_MASS | checks::NEGATIVE_TEMPERATURE | checks::IMPOSSIBLE_STATE
                ) =>
            {
                report.status = StepStatus::Discard;
                report.log.push(LogLine {
                    status: StepStatus::Discard,
                    category: "logStatusDiscard",
                    text: format!("{fail}; fmi2LastSuccessfulTime = {:?} s", self.sim.t_s),
                });
                self.phase = Phase::StepFailed;
                Ok(report)
            }
            Err(fail) => {
                self.phase = Phase::Error;
                Err(CallError(fail.to_string()))
            }
        }
    }

    /// Advance to `target`, going on past piston exits; `Some(finish)` when the run ended.
    fn advance(
        &mut self,
        target: f64,
        report: &mut StepReport,
    ) -> Result<Option<Finish>, StepFailure> {
        loop {
            match self.sim.advance_to(target)? {
                Advance::Reached => return Ok(None),
                Advance::Finished(f) => return Ok(Some(f)),
                Advance::Exit { piston, t_s } => {
                    let name = self
                        .sim
                        .network
                        .pistons()
                        .get(piston)
                        .map_or("?", |p| p.name.as_str());
                    report.log.push(LogLine {
                        status: StepStatus::Ok,
                        category: "logEvents",
                        text: format!("event: `{name}` passed its exit at t = {t_s:?} s"),
                    });
                }
            }
        }
    }

    /// fmi2GetRealStatus(fmi2LastSuccessfulTime): the state is always kept at the last good
    /// time, so this is the current time.
    pub fn last_successful_time(&self) -> Result<f64, CallError> {
        self.require(Call::GetStatus, "fmi2GetRealStatus")?;
        Ok(self.sim.t_s)
    }

    /// fmi2GetBooleanStatus(fmi2Terminated): whether the run has ended (exit with
    /// stop_on_exit, or check 1).
    pub fn terminated(&self) -> Result<bool, CallError> {
        self.require(Call::GetStatus, "fmi2GetBooleanStatus")?;
        Ok(self.sim.finished.is_some())
    }

    /// fmi2GetFMUstate.
    pub fn snapshot(&self) -> Result<Snapshot, CallError> {
        self.require(Call::States, "fmi2GetFMUstate")?;
        let sim = &self.sim;
        Ok(Snapshot {
            guid: self.description.guid.clone(),
            phase: self.phase,
            overrides: self.overrides.clone(),
            start_time_s: self.start_time_s,
            stop_time_s: self.stop_time_s,
            inputs: self.live_inputs.clone(),
            t_s: sim.t_s,
            y: sim.y.clone(),
            y_compensation: sim.y_compensation.clone(),
            rc: sim.rc,
            first_fired_s: sim.first_fired_s,
            finished: sim.finished,
            stats: sim.stats,
            internal: sim.internal.clone(),
            integrator: sim.integrator.clone(),
            exited: sim.network.exited.clone(),
            segment_start_s: sim.network.segment_start_s,
            rhs_evaluations: sim.network.rhs_evaluations,
            exchange: self.exchange.as_ref().map(|x| x.snapshot()),
        })
    }

    /// fmi2GetFMUstate into an existing state: its storage is reused (no allocation when it
    /// holds a state of the same model with as many overrides of the same lengths).
    pub fn snapshot_into(&self, snapshot: &mut Snapshot) -> Result<(), CallError> {
        self.require(Call::States, "fmi2GetFMUstate")?;
        snapshot.guid.clone_from(&self.description.guid);
        snapshot.phase = self.phase;
        snapshot.overrides.clone_from(&self.overrides);
        snapshot.start_time_s = self.start_time_s;
        snapshot.stop_time_s = self.stop_time_s;
        snapshot.inputs.clone_from(&self.live_inputs);
        take_dynamic(snapshot, &self.sim);
        match (&self.exchange, &mut snapshot.exchange) {
            (Some(x), Some(s)) => x.snapshot_into(s),
            (x, s) => *s = x.as_ref().map(|x| x.snapshot()),
        }
        Ok(())
    }

    /// fmi2SetFMUstate: everything is checked before the instance changes. A state of the
    /// instance's own overrides and start time is copied into the running simulation (no
    /// allocation, for every method: `Method::assign_from`); another one rebuilds
    /// the model's simulation first.
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<(), CallError> {
        self.require(Call::States, "fmi2SetFMUstate")?;
        let built = self.check_snapshot(snapshot)?;
        // The one step below that can refuse is re-applying the inputs: check it before any
        // field changes, so a refused state leaves the instance as it was.
        self.check_inputs_settable(&snapshot.inputs)?;
        let mut param_values = None;
        // A state holds a valid model's overrides: parameters pending when it is restored go.
        if snapshot.overrides != self.overrides || self.pending.is_some() {
            let model = crate::model::parse_str(&self.source, &self.label, &snapshot.overrides)
                .map_err(|e| CallError(errors_text(&e)))?;
            let now: std::collections::HashMap<String, f64> = parameters(&model.spec)
                .into_iter()
                .map(|(n, v, _)| (n, v))
                .collect();
            let start = &self.description.variables[self.n_outputs..];
            param_values = Some(
                start
                    .iter()
                    .map(|v| {
                        now.get(&v.name)
                            .copied()
                            .unwrap_or(v.start.unwrap_or(f64::NAN))
                    })
                    .collect::<Vec<f64>>(),
            );
        }
        if let Some(p) = param_values {
            self.param_values = p;
        }
        if let Some(reference) = built {
            self.sim = reference.clone();
            self.live_inputs.fill(None);
            self.reference = (
                snapshot.overrides.clone(),
                snapshot.start_time_s.to_bits(),
                reference,
            );
        }
        self.overrides.clone_from(&snapshot.overrides);
        self.pending = None;
        self.phase = snapshot.phase;
        self.start_time_s = snapshot.start_time_s;
        self.stop_time_s = snapshot.stop_time_s;
        self.put_inputs(&snapshot.inputs)?;
        put_dynamic(&mut self.sim, snapshot);
        if let (Some(x), Some(s)) = (&mut self.exchange, &snapshot.exchange) {
            x.restore(s);
        }
        self.outputs_valid = false;
        self.warned = 0;
        Ok(())
    }

    /// Every input `put_inputs` would change can change in this model's network, to the value
    /// the state holds (its key's rule, as for fmi2SetReal).
    fn check_inputs_settable(&self, inputs: &[Option<f64>]) -> Result<(), CallError> {
        for (k, want) in inputs.iter().enumerate() {
            let Some(x) = want else {
                continue;
            };
            if self.live_inputs.get(k) == Some(want) {
                continue;
            }
            let name = self
                .description
                .variables
                .get(self.first_input + k)
                .map(|v| v.name.as_str())
                .unwrap_or("");
            let (c, key) = name.rsplit_once('.').unwrap_or((name, ""));
            if let Err(e) = self.sim.network.check_scalar(c, key, *x) {
                return Err(CallError(format!(
                    "the state sets input {k} (`{name}`) to {x}, which no fmi2SetReal can have \
                     set: {e}; the instance is unchanged"
                )));
            }
        }
        Ok(())
    }

    /// Put the network's inputs as a state has them: a value set during the run, or the
    /// model's own (taken from the reference simulation).
    fn put_inputs(&mut self, inputs: &[Option<f64>]) -> Result<(), CallError> {
        for (k, want) in inputs.iter().enumerate() {
            if self.live_inputs.get(k) == Some(want) {
                continue;
            }
            let vr = self.first_input + k;
            let Some((c, key)) = self
                .description
                .variables
                .get(vr)
                .and_then(|v| v.name.rsplit_once('.'))
            else {
                return Err(CallError(format!("internal: no input {k}")));
            };
            match want {
                Some(x) => {
                    self.sim.network.set_scalar(c, key, *x)?;
                }
                None => {
                    self.sim
                        .network
                        .adopt_input(&self.reference.2.network, c, key);
                }
            }
            if let Some(slot) = self.live_inputs.get_mut(k) {
                *slot = *want;
            }
        }
        Ok(())
    }

    /// fmi2SetFMUstate without any check (tests that need a state no check lets through, to
    /// reach the panic guard of the ABI).
    #[cfg(test)]
    pub(crate) fn restore_unchecked(&mut self, snapshot: &Snapshot) {
        self.phase = snapshot.phase;
        put_dynamic(&mut self.sim, snapshot);
        self.outputs_valid = false;
    }

    /// A state must be of this model, and fit it. Its contents were checked when it entered
    /// (`deserialize` runs [`check_fits`]; `snapshot` takes a running simulation's), so here
    /// only what differs between instances of one model is: the GUID, the phase, the times,
    /// and the overrides and start time, for which the model's simulation is built (and
    /// returned for reuse) when they are not the instance's.
    fn check_snapshot(&self, s: &Snapshot) -> Result<Option<Simulation>, CallError> {
        if s.guid != self.description.guid {
            return Err(CallError(format!(
                "state is for model GUID {}, this instance is {}",
                s.guid, self.description.guid
            )));
        }
        if matches!(s.phase, Phase::Fatal) {
            return Err(CallError("state was taken in the fatal state".into()));
        }
        // A Co-Simulation state in a Co-Simulation instance: nothing more to check here.
        if self.exchange.is_some()
            || s.exchange.is_some()
            || matches!(s.phase, Phase::EventMode | Phase::ContinuousTimeMode)
        {
            self.check_snapshot_interface(s)?;
        }
        if !s.start_time_s.is_finite() || !s.t_s.is_finite() {
            return Err(CallError("state has a non-finite time".into()));
        }
        // The phase is part of the state and is restored with it, so it must agree with the
        // rest: before fmi2ExitInitializationMode no step has been taken, the simulation is at
        // the start time. (A bit flip 2 → 0 in a stepping instance's state otherwise sets it
        // back to `instantiated` at a later time, where fmi2GetReal and fmi2DoStep refuse.)
        if matches!(s.phase, Phase::Instantiated | Phase::InitializationMode)
            && (s.t_s.to_bits() != s.start_time_s.to_bits()
                || s.stats.steps != 0
                || s.stats.rejected_steps != 0)
        {
            return Err(CallError(format!(
                "state does not fit: its phase is {} (before any step) but it is at t = {:?} s \
                 (start time {:?} s) after {} steps (corrupted state)",
                s.phase.name(),
                s.t_s,
                s.start_time_s,
                s.stats.steps
            )));
        }
        let misfit = |what: String| CallError(format!("state does not fit this model: {what}"));
        if let Some(stop) = s.stop_time_s
            && !(stop.is_finite() && stop >= s.start_time_s)
        {
            return Err(misfit(format!(
                "stop time {stop:?} s (start time {:?} s)",
                s.start_time_s
            )));
        }
        let (ref_overrides, ref_start, _) = &self.reference;
        if s.overrides == *ref_overrides && s.start_time_s.to_bits() == *ref_start {
            return Ok(None);
        }
        let model = crate::model::parse_str(&self.source, &self.label, &s.overrides)
            .map_err(|e| misfit(format!("its parameters do not load: {}", errors_text(&e))))?;
        let built = build_at(&model.spec, s.start_time_s)
            .map_err(|e| misfit(format!("its model does not build: {e}")))?;
        Ok(Some(built))
    }

    /// fmi2SerializeFMUstate (and the size query): the blob of a state.
    pub fn serialize(&self, snapshot: &Snapshot) -> Result<Vec<u8>, CallError> {
        self.require(Call::States, "fmi2SerializeFMUstate")?;
        encode_snapshot(snapshot)
    }

    /// fmi2SerializeFMUstate into `out` (its storage reused).
    pub fn serialize_into(&self, snapshot: &Snapshot, out: &mut Vec<u8>) -> Result<(), CallError> {
        self.require(Call::States, "fmi2SerializeFMUstate")?;
        encode_snapshot_into(snapshot, out)
    }

    /// fmi2DeSerializeFMUstate: header checked and body decoded completely, nothing changes
    /// in the instance.
    pub fn deserialize(&self, blob: &[u8]) -> Result<Snapshot, CallError> {
        self.require(Call::States, "fmi2DeSerializeFMUstate")?;
        let body = check_header(blob, &self.description.guid)?;
        let config = bincode::config::standard().with_limit::<MAX_STATE_BODY>();
        let (mut snapshot, used): (Snapshot, usize) =
            bincode::serde::decode_from_slice(body, config)
                .map_err(|e| CallError(format!("state body does not decode: {e}")))?;
        if used != body.len() || self.exchange.is_some() {
            snapshot.exchange = self.decode_exchange_part(body, used)?;
        }
        let built = self.check_snapshot(&snapshot)?;
        let expected = built.as_ref().unwrap_or(&self.reference.2);
        let n_inputs = self.first_local - self.first_input;
        check_fits(&snapshot, expected, n_inputs)
            .map_err(|e| CallError(format!("state does not fit this model: {e}")))?;
        Ok(snapshot)
    }
}
