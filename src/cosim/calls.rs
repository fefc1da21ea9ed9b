//! The calling sequences of FMI 2.0 (§3.2.3 Model Exchange, §4.2.4 Co-Simulation): the
//! phases an instance goes through and which calls each phase allows.

use serde::{Deserialize, Serialize};

use super::Interface;
use super::exchange;

/// Where an instance is in the FMI 2.0 Co-Simulation life cycle (FMI 2.0.4, §4.2.4). The
/// asynchronous states `stepInProgress` and `stepCanceled` never occur: steps are synchronous.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    Instantiated,
    InitializationMode,
    /// `slaveInitialized` / `stepComplete`: ready for fmi2DoStep.
    StepComplete,
    /// fmi2DoStep returned fmi2Discard (a refused step, or the end of the run).
    StepFailed,
    Terminated,
    /// A call failed in a way that leaves the run unusable (a solver failure): fmi2Reset,
    /// fmi2SetFMUstate or fmi2FreeInstance.
    Error,
    /// An internal error (a caught panic): only fmi2FreeInstance.
    Fatal,
    /// Model Exchange: Event Mode (after initialization and at events).
    EventMode,
    /// Model Exchange: Continuous-Time Mode (the master integrates).
    ContinuousTimeMode,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Instantiated => "instantiated",
            Phase::InitializationMode => "initializationMode",
            Phase::StepComplete => "stepComplete",
            Phase::StepFailed => "stepFailed",
            Phase::Terminated => "terminated",
            Phase::Error => "error",
            Phase::Fatal => "fatal",
            Phase::EventMode => "eventMode",
            Phase::ContinuousTimeMode => "continuousTimeMode",
        }
    }
}

/// The calls whose legality depends on the phase, with the phases that allow each (the calling
/// sequence table of FMI 2.0.4 §4.2.4 for Co-Simulation).
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
    /// fmi2Get/Set/FreeFMUstate, fmi2SerializedFMUstateSize, fmi2(De)SerializeFMUstate.
    States,
    GetDirectionalDerivative,
    SetRealInputDerivatives,
    GetRealOutputDerivatives,
    DoStep,
    CancelStep,
    GetStatus,
    // Model Exchange (FMI 2.0.4 §3.2.3).
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
            // stepInProgress never happens: fmi2DoStep is synchronous.
            Call::CancelStep => &[],
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
            | Call::GetStatus => Some(Interface::CoSimulation),
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
