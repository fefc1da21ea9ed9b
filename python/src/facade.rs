//! Everything the binding takes from the `plenum` and `fmu-build` crates, in one place: a rename
//! or a move there changes this file only. The rest of the binding sees plain Rust types
//! (strings, numbers, vectors) and the handful of types re-exported here.

use std::path::{Path, PathBuf};

use plenum::cosim::{self, Causality, Instance, Phase};
use plenum::simulation::Finish;

pub use plenum::model::{LoadedModel, ModelError};

/// One variable of a model: what the FMU's modelDescription lists.
pub struct VariableInfo {
    pub name: String,
    pub unit: String,
    pub causality: &'static str,
    pub description: String,
    pub start: Option<f64>,
}

/// Parse and validate a model from its text, with `name=value` overrides (the command line's
/// `--set`); every problem located.
pub fn load(text: &str, label: &str, overrides: &[String]) -> Result<LoadedModel, Vec<ModelError>> {
    plenum::model::parse_str(text, label, overrides)
}

/// The bytes of a model file (with the library's size limit).
pub fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    plenum::model::read_model_file(path)
}

/// The model's text with its overrides applied (what an FMU built from it ships).
pub fn source(model: &LoadedModel) -> &str {
    &model.source
}

pub fn name(model: &LoadedModel) -> &str {
    &model.spec.model.name
}

pub fn warnings(model: &LoadedModel) -> &[ModelError] {
    &model.warnings
}

/// Whether a piston of the model has an exit and the file leaves `stop_on_exit` unsaid: the
/// command line then stops at the exit, an FMU goes on.
pub fn exit_unsaid(model: &LoadedModel) -> bool {
    model.spec.solver.stop_on_exit.is_none() && model.spec.piston.iter().any(|p| p.x_exit.is_some())
}

/// Why the model's simulation cannot start (`plenum check`'s last test), if it cannot.
pub fn cannot_start(model: &LoadedModel) -> Option<String> {
    plenum::model::build_simulation(&model.spec, None).err()
}

/// Every variable (outputs, parameters, inputs, states and derivatives), as the FMU has them.
pub fn variables(model: &LoadedModel) -> Vec<VariableInfo> {
    cosim::describe(model)
        .variables
        .into_iter()
        .map(|v| VariableInfo {
            causality: causality_name(v.causality),
            unit: v.unit.symbol,
            name: v.name,
            description: v.description,
            start: v.start,
        })
        .collect()
}

fn causality_name(c: Causality) -> &'static str {
    match c {
        Causality::Independent => "independent",
        Causality::Parameter => "parameter",
        Causality::Input => "input",
        Causality::Output => "output",
        Causality::Local => "local",
    }
}

/// A whole run as `plenum run` makes it (the same loop: `plenum::run::solve`), every row kept.
pub struct Run {
    pub names: Vec<String>,
    pub units: Vec<String>,
    /// Row-major, `names.len()` values a row.
    pub values: Vec<f64>,
    pub rows: usize,
    /// The run's final check code, as the command line reports it.
    pub rc: u8,
    /// `check N fired first at t = … s: …`, and the sensitivities' line.
    pub messages: Vec<String>,
    pub solve_s: f64,
    pub steps: u64,
    pub rejected_steps: u64,
    pub rhs_evaluations: u64,
    pub events: u64,
    pub method: &'static str,
    pub exit_time_s: Option<f64>,
    /// How the run was stopped early: (check code, 0 for a solver failure; time; message).
    pub stopped: Option<(u8, f64, String)>,
}

/// Run `model` through its output times. `Err`: the simulation cannot be built.
pub fn run(model: &LoadedModel) -> Result<Run, String> {
    let (rows, s) = plenum::run::solve_keeping_rows(model, None)?;
    let sim = &s.sim;
    let vars = plenum::variables::output_variables(sim);
    let mut messages = Vec::new();
    if !sim.sensitivities.names.is_empty() {
        let [mass, energy] = sim.checks.max_gradient_drift;
        messages.push(format!(
            "sensitivities of {}: largest gradient drifts mass {mass:e}, energy {energy:e}",
            sim.sensitivities.names.join(", ")
        ));
    }
    for (code, t) in sim.first_fired_s.iter().enumerate() {
        if let Some(t) = t {
            messages.push(format!(
                "check {code} fired first at t = {t:?} s: {}",
                plenum::checks::describe(code as u8)
            ));
        }
    }
    let rc = match &s.failure {
        Some(f) if f.code != 0 => f.code,
        _ => sim.rc,
    };
    let stopped = match (&s.failure, sim.finished) {
        (Some(f), _) => Some((f.code, f.last_good_t_s, f.to_string())),
        (None, Some(Finish::NeverExited { t_s })) => Some((
            plenum::checks::NEVER_EXITED,
            t_s,
            format!(
                "run-time check {}: {} by t = {t_s:?} s",
                plenum::checks::NEVER_EXITED,
                plenum::checks::describe(plenum::checks::NEVER_EXITED)
            ),
        )),
        _ => None,
    };
    Ok(Run {
        names: vars.iter().map(|v| v.name.clone()).collect(),
        units: vars.iter().map(|v| v.unit.symbol.clone()).collect(),
        rows: rows.len(),
        values: rows.concat(),
        rc,
        messages,
        solve_s: s.solve_s,
        steps: sim.stats.steps,
        rejected_steps: sim.stats.rejected_steps,
        rhs_evaluations: sim.rhs_evaluations(),
        events: sim.stats.events,
        method: sim.integrator_name(),
        exit_time_s: match sim.finished {
            Some(Finish::Exited { t_s }) => Some(t_s),
            _ => None,
        },
        stopped,
    })
}

/// A running model: the FMU's Co-Simulation instance, in-process, past initialization. Its
/// states are the FMU's state blobs.
pub struct Stepper {
    instance: Instance,
    /// Value reference of each variable, by name.
    index: std::collections::HashMap<String, u32>,
}

/// How one `advance` ended.
pub enum Advanced {
    /// At the target time, or the run had ended before it (`finished`).
    Reached,
    /// The run ended at a piston's exit (`stop_on_exit`).
    Exited,
    /// A run-time check stopped the run: code, time, message.
    CheckFailed(u8, f64, String),
    /// The solver failed (the instance can go on from no state but a restored one).
    SolverFailed(f64, String),
    /// The call was refused (a target the time axis cannot resolve): nothing changed.
    Refused(String),
}

impl Stepper {
    /// An instance of the model whose text is `text`, initialized at its start time.
    pub fn new(text: &str, label: &str) -> Result<Stepper, String> {
        let mut instance = Instance::new(text, label)?;
        instance.enter_initialization_mode().map_err(|e| e.0)?;
        instance.exit_initialization_mode().map_err(|e| e.0)?;
        let index = instance
            .description()
            .variables
            .iter()
            .map(|v| (v.name.clone(), v.value_reference))
            .collect();
        Ok(Stepper { instance, index })
    }

    pub fn time_s(&self) -> f64 {
        self.instance.simulation().t_s
    }

    /// `None` while running; "exited" or "never_exited" once the run has ended.
    pub fn finished(&self) -> Option<&'static str> {
        match self.instance.simulation().finished {
            None => None,
            Some(Finish::Exited { .. }) => Some("exited"),
            Some(Finish::NeverExited { .. }) => Some("never_exited"),
        }
    }

    /// The current run-time check code (0: none fired at the last step).
    pub fn rc(&self) -> u8 {
        self.instance.simulation().rc
    }

    pub fn steps(&self) -> (u64, u64, u64, u64) {
        let s = self.instance.simulation();
        (
            s.stats.steps,
            s.stats.rejected_steps,
            s.rhs_evaluations(),
            s.stats.events,
        )
    }

    pub fn method(&self) -> &'static str {
        self.instance.simulation().integrator_name()
    }

    pub fn value_reference(&self, name: &str) -> Option<u32> {
        self.index.get(name).copied()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.instance
            .description()
            .variables
            .iter()
            .map(|v| v.name.as_str())
    }

    /// Values of variables by value reference (outputs at the current time, parameters and
    /// inputs as set).
    pub fn get(&mut self, vrs: &[u32], out: &mut [f64]) -> Result<(), String> {
        self.instance.get_real(vrs, out).map_err(|e| e.0)
    }

    /// Set an input during the run (the FMU's fmi2SetReal: its key's rule, a restart of the
    /// integrator at the current time).
    pub fn set(&mut self, vr: u32, x: f64) -> Result<(), String> {
        self.instance.set_real(&[vr], &[x]).map_err(|e| e.0)
    }

    /// Whether `target_s` lies inside the step the integrator has already taken: reaching it
    /// is an interpolation of tens of nanoseconds (no right-hand side).
    pub fn within_last_step(&self, target_s: f64) -> bool {
        target_s < self.instance.simulation().internal_time_s()
    }

    /// Advance to `target_s` (> the current time), past piston exits.
    pub fn advance(&mut self, target_s: f64) -> Advanced {
        let t = self.time_s();
        match self.instance.do_step(t, target_s - t) {
            Ok(_) => match self.instance.simulation().finished {
                None => Advanced::Reached,
                Some(Finish::Exited { .. }) => Advanced::Exited,
                Some(Finish::NeverExited { t_s }) => Advanced::CheckFailed(
                    plenum::checks::NEVER_EXITED,
                    t_s,
                    format!(
                        "run-time check {}: {} by t = {t_s:?} s",
                        plenum::checks::NEVER_EXITED,
                        plenum::checks::describe(plenum::checks::NEVER_EXITED)
                    ),
                ),
            }
            .or_check_failure(self),
            Err(e) if self.instance.phase() == Phase::Error => {
                Advanced::SolverFailed(self.time_s(), e.0)
            }
            Err(e) => Advanced::Refused(e.0),
        }
    }

    /// The FMU state blob of the current state (fmi2GetFMUstate + fmi2SerializeFMUstate).
    pub fn state(&self) -> Result<Vec<u8>, String> {
        let s = self.instance.snapshot().map_err(|e| e.0)?;
        self.instance.serialize(&s).map_err(|e| e.0)
    }

    /// Go back to a state blob of this model (fmi2DeSerializeFMUstate + fmi2SetFMUstate):
    /// checked whole before anything changes.
    pub fn restore(&mut self, blob: &[u8]) -> Result<(), String> {
        let s = self.instance.deserialize(blob).map_err(|e| e.0)?;
        self.instance.restore(&s).map_err(|e| e.0)
    }
}

/// A step that the FMU discarded because check 2, 3 or 10 refused it ends the run with that
/// code; anything else is as `advance` found it.
trait OrCheckFailure {
    fn or_check_failure(self, s: &Stepper) -> Advanced;
}

impl OrCheckFailure for Advanced {
    fn or_check_failure(self, s: &Stepper) -> Advanced {
        let phase = s.instance.phase();
        match self {
            Advanced::Reached if phase == Phase::StepFailed => {
                let code = s.rc();
                Advanced::CheckFailed(
                    code,
                    s.time_s(),
                    format!(
                        "run-time check {code}: {} (state kept at t = {:?} s)",
                        plenum::checks::describe(code),
                        s.time_s()
                    ),
                )
            }
            other => other,
        }
    }
}

/// Platform names of the FMU libraries (`linux64`, `win64`).
pub fn platform_names() -> Vec<&'static str> {
    fmu_build::Platform::ALL
        .iter()
        .map(|p| p.fmi2_folder())
        .collect()
}

/// Write the model as an FMU at `path` (FMI 2.0, or 3.0 with `fmi3`) with the given libraries
/// (one per platform, each checked to be a Plenum library of the platform its headers say).
pub fn build_fmu(
    model: &LoadedModel,
    libraries: &[PathBuf],
    path: &Path,
    fmi3: bool,
) -> Result<PathBuf, FmuError> {
    fmu_build::check_packageable(model).map_err(fmu_error)?;
    let libs = libraries
        .iter()
        .map(|p| fmu_build::Library::load(p, None))
        .collect::<Result<Vec<_>, String>>()
        .map_err(FmuError::Build)?;
    let version = if fmi3 {
        fmu_build::FmiVersion::V3
    } else {
        fmu_build::FmiVersion::V2
    };
    // fmu-build writes `<dir>/<model>.fmu`: into a directory of its own beside `path`, then
    // renamed (the same file system), so that any file name works.
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let scratch = parent.join(format!(".plenum-fmu-{}-{}", std::process::id(), unique()));
    let written = fmu_build::write_fmu_as(model, &libs, &scratch, version).map_err(fmu_error);
    let result = written.and_then(|w| {
        std::fs::rename(&w, path)
            .map(|()| path.to_path_buf())
            .map_err(|e| FmuError::Build(format!("cannot write {}: {e}", path.display())))
    });
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Why an FMU was not built.
pub enum FmuError {
    Model(Vec<ModelError>),
    Build(String),
}

fn fmu_error(e: fmu_build::Error) -> FmuError {
    match e {
        fmu_build::Error::Model(m) => FmuError::Model(m),
        fmu_build::Error::Build(b) => FmuError::Build(b),
    }
}
