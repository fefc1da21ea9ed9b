//! What the instance reports to its FMI layer: a refused or failed call's error, the status of
//! a step or an evaluation, and the lines for the importer's log.

use crate::checks;

/// A refused or failed call: the FMI layer returns its error status and logs the message.
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

/// Status of a log line or a step (the statuses below an error).
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

/// What a step did: OK, a warning (a check 4, 5, 6, 7, 8, 9 or 11 fired) or a discard
/// (check 2, 3 or 10 refused a step, or the run ended), with the lines to log.
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport {
    pub status: StepStatus,
    pub log: Vec<LogLine>,
}

/// The codes that measure the integration rather than the model: the drift of the conserved
/// totals (4, 5) and of their gradients (6, 7), and the volume states against the piston
/// coordinates (9). In Model Exchange the importer integrates, so there they measure its
/// integration (its tolerance), and are said with status OK, never as a warning an importer
/// may take for a failure.
pub(crate) const INTEGRATION_CODES: [u8; 5] = [
    checks::MASS_DRIFT,
    checks::ENERGY_DRIFT,
    checks::MASS_GRADIENT_DRIFT,
    checks::ENERGY_GRADIENT_DRIFT,
    checks::PISTON_DESYNC,
];

/// Codes that make a step return a warning (6 and 7 fire only with `[sensitivities]`).
pub(crate) const WARNING_CODES: [u8; 7] = [
    checks::MASS_DRIFT,
    checks::ENERGY_DRIFT,
    checks::MASS_GRADIENT_DRIFT,
    checks::ENERGY_GRADIENT_DRIFT,
    checks::ABOVE_CRITICAL_PRESSURE,
    checks::PISTON_DESYNC,
    checks::BEYOND_STABILITY,
];
