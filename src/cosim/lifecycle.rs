//! The instance's life cycle: the experiment's times, initialization, termination, reset.

use super::{Call, CallError, Instance, Phase, build_at, errors_text};
use crate::units::text::number;

impl Instance {
    /// The experiment: the start time (the model's t_start otherwise) and an optional stop
    /// time that no step may pass.
    pub fn setup_experiment(&mut self, start_s: f64, stop_s: Option<f64>) -> Result<(), CallError> {
        self.require(Call::SetupExperiment)?;
        if !start_s.is_finite() {
            return Err(CallError(format!(
                "startTime must be finite, got {}",
                number(start_s)
            )));
        }
        if let Some(stop) = stop_s {
            if !stop.is_finite() || stop < start_s {
                return Err(CallError(format!(
                    "stopTime must be finite and ≥ startTime = {}, got {}",
                    number(start_s),
                    number(stop)
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
            // A parameter the importer set is an override inside: say so, not `--set`.
            Ok(model) => model
                .warnings
                .iter()
                .map(|w| match w.file.as_str() {
                    "--set" => format!("`{}` set by the importer: {}", w.key, w.message),
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
        self.require(Call::EnterInitializationMode)?;
        self.phase = Phase::InitializationMode;
        Ok(())
    }

    /// The end of initialization: refused (the instance stays in initialization mode) while
    /// the parameters set do not make a valid model together.
    pub fn exit_initialization_mode(&mut self) -> Result<(), CallError> {
        self.require(Call::ExitInitializationMode)?;
        self.no_pending_parameters()?;
        self.phase = Phase::StepComplete;
        self.exchange_exit_initialization();
        Ok(())
    }

    /// An error while parameters the importer set do not make a valid model together.
    pub(super) fn no_pending_parameters(&self) -> Result<(), CallError> {
        match &self.pending {
            None => Ok(()),
            Some(p) => Err(CallError(format!(
                "the parameters set so far do not make a valid model together: {}; set other \
                 values (or reset the instance)",
                p.problems
            ))),
        }
    }

    pub fn terminate(&mut self) -> Result<(), CallError> {
        self.require(Call::Terminate)?;
        self.phase = Phase::Terminated;
        Ok(())
    }

    /// Reset: back to the state after instantiation, with the model as in the file.
    pub fn reset(&mut self) -> Result<(), CallError> {
        self.require(Call::Reset)?;
        let fresh = Instance::with_interface(&self.source, &self.label, self.interface())
            .map_err(CallError)?;
        *self = fresh;
        Ok(())
    }
}
