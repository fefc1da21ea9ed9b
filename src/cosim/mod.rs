//! The FMU instance, one core for every interface the FMI layers export (FMI 2.0 and 3.0,
//! Co-Simulation and Model Exchange): a flat table of variables (name, value reference,
//! causality, variability, unit) that the FMI layers and `fmu-build` use without knowing any
//! component, and one instance of a model with its life cycle, values, steps, derivatives and
//! states. Parameters are discovered generically from the model file: every numeric key of
//! every component is a parameter `<component>.<key>`; which component a parameter belongs to
//! is the network's business (`Network::set_scalar`).
//!
//! - `description`, `structure`: the variable table and the model structure;
//! - `calls`: the phases and which calls each allows;
//! - `status`: what a call reports (errors, step statuses, log lines);
//! - `lifecycle`, `values`, `stepping`, `derivatives`, `states`: the instance's calls;
//!   `exchange`: Model Exchange's own part;
//! - `snapshot`: an FMU state and its blob format (`fits`: whether a restored state fits).

mod calls;
mod derivatives;
mod description;
mod exchange;
mod fits;
#[cfg(test)]
mod instance_tests;
mod lifecycle;
mod snapshot;
mod states;
mod status;
mod stepping;
mod structure;
mod values;

pub use calls::{Call, Phase, Refusal};
pub use description::{
    Causality, Description, Variability, Variable, describe, guid_of, parameter_override,
    parameters,
};
use fits::check_fits;
pub use snapshot::{
    STATE_FORMAT_VERSION, STATE_MAGIC, Snapshot, encode_snapshot, encode_snapshot_into,
};
pub use status::{CallError, LogLine, StepReport, StepStatus};
pub(crate) use status::{INTEGRATION_CODES, WARNING_CODES};

use crate::model::ModelFile;
use crate::simulation::Simulation;

pub use exchange::{CompletedStep, DiscreteUpdate, ExchangeSnapshot, Interface};
pub use structure::{Structure, structure};

/// One model instance (behind one instance pointer of an FMI layer). Clone: a copy is an
/// independent instance in the same phase (the fuzz targets start every input from a pristine
/// one).
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
    /// The warning codes the last step (or completed integrator step) fired (one bit per code):
    /// a warning is logged when its episode starts, not again while each following step fires
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

/// Values set before the run that break a rule joining keys (a piston's `x0`
/// past its `x_exit` until `x_exit` is set too): kept, and judged on the final values when
/// initialization ends.
#[derive(Clone, Debug)]
struct Pending {
    /// Every `name=value` set so far (the instance's `overrides` stay the last valid ones).
    overrides: Vec<String>,
    /// What is wrong with them together.
    problems: String,
}

/// Model errors as the FMU's log says them: a problem of a value the importer set names the
/// variable and says so, not the command line's `--set` (its errors' file and key).
fn errors_text(errors: &[crate::model::ModelError]) -> String {
    errors
        .iter()
        .map(|e| {
            if e.file != "--set" {
                return e.to_string();
            }
            let message = e.message.replace("--set", "the importer");
            match e.key.split_once('=') {
                Some((name, value)) => {
                    format!("`{name}` = {value} (set by the importer): {message}")
                }
                None => format!("a value set by the importer: {message}"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Build the simulation of a validated spec starting at `start_s`. The co-simulation ends at a
/// piston's exit (a discarded step, terminated) only when the model file says
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

    /// Why the current phase refuses `call` (`None`: it allows it). An FMI layer asks before
    /// it delegates, and says it in its standard's words.
    #[inline]
    pub fn refusal(&self, call: Call) -> Option<Refusal> {
        if call.allowed(self.interface()).contains(&self.phase) {
            return None;
        }
        Some(self.refusal_of(call))
    }

    #[cold]
    #[inline(never)]
    fn refusal_of(&self, call: Call) -> Refusal {
        let interface = self.interface();
        let allowed = call.allowed(interface);
        if self.phase == Phase::Fatal {
            Refusal::Fatal
        } else if let Some(only) = call.only_in().filter(|&i| i != interface) {
            Refusal::OtherInterface {
                only,
                this: interface,
            }
        } else if allowed.is_empty() {
            Refusal::Never
        } else {
            Refusal::Sequence {
                phase: self.phase,
                allowed,
            }
        }
    }

    /// Refuse a call the current phase does not allow (every call of the instance checks).
    #[inline]
    pub fn require(&self, call: Call) -> Result<(), CallError> {
        match self.refusal(call) {
            None => Ok(()),
            Some(r) => Err(refused(call, r)),
        }
    }

    fn variable(&self, vr: u32) -> Result<&Variable, CallError> {
        self.description
            .variables
            .get(vr as usize)
            .ok_or_else(|| CallError(format!("no variable with value reference {vr}")))
    }
}

/// The instance's own words for a refusal.
#[cold]
#[inline(never)]
fn refused(call: Call, r: Refusal) -> CallError {
    CallError(format!("{call:?} refused: {r}"))
}
