//! The calling sequences the instance enforces: the phases it goes through and which calls
//! each phase allows. They are the state machines of FMI 2.0 (FMI 2.0.4 §3.2.3 Model Exchange,
//! §4.2.4 Co-Simulation) and of FMI 3.0 (§3.2.3, §4.2.5), which agree on every call this FMU
//! has (FMI 3.0's Co-Simulation without Event Mode); each FMI layer names the phases and calls
//! in its own standard's words.

use serde::{Deserialize, Serialize};

use super::Interface;
use super::exchange;

/// Where an instance is in its life cycle. Asynchronous steps never occur: steps are
/// synchronous.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    Instantiated,
    InitializationMode,
    /// Co-Simulation: ready for a communication step (FMI 2.0's `stepComplete`, FMI 3.0's Step
    /// Mode).
    StepComplete,
    /// A communication step was discarded (a refused step, or the end of the run).
    StepFailed,
    Terminated,
    /// A call failed in a way that leaves the run unusable (a solver failure): reset, set a
    /// state or free the instance.
    Error,
    /// An internal error (a caught panic): only freeing the instance.
    Fatal,
    /// Model Exchange: Event Mode (after initialization and at events).
    EventMode,
    /// Model Exchange: Continuous-Time Mode (the importer integrates).
    ContinuousTimeMode,
}

impl Phase {
    /// The phase in the instance's own messages (a layer names it in its standard's words).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Instantiated => "instantiated",
            Phase::InitializationMode => "initialization mode",
            Phase::StepComplete => "step mode",
            Phase::StepFailed => "step failed",
            Phase::Terminated => "terminated",
            Phase::Error => "error",
            Phase::Fatal => "fatal",
            Phase::EventMode => "event mode",
            Phase::ContinuousTimeMode => "continuous-time mode",
        }
    }
}

/// Why the current phase refuses a call: the FMI layer says it in its standard's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// After an internal error only freeing the instance is possible.
    Fatal,
    /// The call belongs to the other interface.
    OtherInterface { only: Interface, this: Interface },
    /// No phase of this instance ever allows it (a capability the FMU does not have).
    Never,
    /// The phase does not allow it; `allowed` do.
    Sequence {
        phase: Phase,
        allowed: &'static [Phase],
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Refusal::Fatal => f.write_str(
                "the instance is in the fatal state after an internal error: it can only be freed",
            ),
            Refusal::OtherInterface { only, this } => write!(
                f,
                "a {} call, and this instance is {}",
                only.name(),
                this.name()
            ),
            Refusal::Never => f.write_str("never possible with this FMU"),
            Refusal::Sequence { phase, allowed } => {
                let names: Vec<&str> = allowed.iter().map(|p| p.name()).collect();
                write!(
                    f,
                    "not allowed in phase {} (allowed in: {})",
                    phase.name(),
                    names.join(", ")
                )
            }
        }
    }
}

/// The calls whose legality depends on the phase, with the phases that allow each (the calling
/// sequence tables of Co-Simulation here, of Model Exchange in `exchange`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    SetDebugLogging,
    SetupExperiment,
    EnterInitializationMode,
    ExitInitializationMode,
    Terminate,
    Reset,
    GetValues,
    SetValues,
    /// Get, set and free FMU states, their size, (de)serialize them.
    States,
    GetDirectionalDerivative,
    SetRealInputDerivatives,
    GetRealOutputDerivatives,
    DoStep,
    /// FMI 2.0's asynchronous step, cancelled.
    CancelStep,
    /// FMI 2.0's status getters.
    GetStatus,
    /// FMI 3.0's Step Mode entered from Event Mode.
    EnterStepMode,
    // Model Exchange.
    EnterEventMode,
    NewDiscreteStates,
    EnterContinuousTimeMode,
    CompletedIntegratorStep,
    SetTime,
    SetContinuousStates,
    GetEventIndicators,
    GetContinuousStates,
    GetDerivatives,
    GetNominals,
}

impl Call {
    /// The phases that allow the call in an instance of `interface`.
    #[inline]
    pub fn allowed(self, interface: Interface) -> &'static [Phase] {
        match interface {
            Interface::CoSimulation => self.allowed_in(),
            Interface::ModelExchange => exchange::allowed_in(self),
        }
    }

    /// The phases that allow the call in a Co-Simulation instance.
    pub fn allowed_in(self) -> &'static [Phase] {
        use Phase::*;
        match self {
            Call::SetDebugLogging => &[
                Instantiated,
                InitializationMode,
                StepComplete,
                StepFailed,
                Terminated,
                Error,
            ],
            Call::SetupExperiment | Call::EnterInitializationMode => &[Instantiated],
            Call::ExitInitializationMode => &[InitializationMode],
            Call::Terminate => &[StepComplete, StepFailed],
            Call::Reset | Call::States => &[
                Instantiated,
                InitializationMode,
                StepComplete,
                StepFailed,
                Terminated,
                Error,
            ],
            Call::GetValues | Call::GetDirectionalDerivative => &[
                InitializationMode,
                StepComplete,
                StepFailed,
                Terminated,
                Error,
            ],
            Call::SetValues | Call::SetRealInputDerivatives => {
                &[Instantiated, InitializationMode, StepComplete]
            }
            Call::GetRealOutputDerivatives => &[StepComplete, StepFailed, Terminated, Error],
            Call::DoStep => &[StepComplete],
            // No step is ever in progress: steps are synchronous.
            Call::CancelStep => &[],
            // Co-Simulation has no Event Mode (`hasEventMode="false"`).
            Call::EnterStepMode => &[],
            Call::GetStatus => &[StepComplete, StepFailed, Terminated],
            Call::EnterEventMode
            | Call::NewDiscreteStates
            | Call::EnterContinuousTimeMode
            | Call::CompletedIntegratorStep
            | Call::SetTime
            | Call::SetContinuousStates
            | Call::GetEventIndicators
            | Call::GetContinuousStates
            | Call::GetDerivatives
            | Call::GetNominals => &[],
        }
    }

    /// The interface a call belongs to, when only one has it.
    pub fn only_in(self) -> Option<Interface> {
        match self {
            Call::SetRealInputDerivatives
            | Call::GetRealOutputDerivatives
            | Call::DoStep
            | Call::CancelStep
            | Call::GetStatus
            | Call::EnterStepMode => Some(Interface::CoSimulation),
            Call::EnterEventMode
            | Call::NewDiscreteStates
            | Call::EnterContinuousTimeMode
            | Call::CompletedIntegratorStep
            | Call::SetTime
            | Call::SetContinuousStates
            | Call::GetEventIndicators
            | Call::GetContinuousStates
            | Call::GetDerivatives
            | Call::GetNominals => Some(Interface::ModelExchange),
            _ => None,
        }
    }
}
