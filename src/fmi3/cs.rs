//! The FMI 3.0 Co-Simulation functions (FMI 3.0 §4.2): each checks the phase and delegates to
//! the instance's steps. The safety contract of `crate::fmi` applies.

use fmi_sys::fmi3::*;

use super::fmi3;
use crate::cosim::{Call, CallError};
use crate::fmi::{Status, out_ptr};

/// fmi3DoStep: one communication step of the instance. Events are handled inside the step
/// (`eventHandlingNeeded` is always false), a step never returns early; `terminateSimulation`
/// is the instance's end of run (a piston's exit with `stop_on_exit`, check 1), and
/// `lastSuccessfulTime` the time the instance reached (before `current + h` only when the
/// step is discarded).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3DoStep(
    instance: fmi3Instance,
    currentCommunicationPoint: fmi3Float64,
    communicationStepSize: fmi3Float64,
    _noSetFMUStatePriorToCurrentPoint: fmi3Boolean,
    eventHandlingNeeded: *mut fmi3Boolean,
    terminateSimulation: *mut fmi3Boolean,
    earlyReturn: *mut fmi3Boolean,
    lastSuccessfulTime: *mut fmi3Float64,
) -> fmi3Status {
    fmi3(instance, "fmi3DoStep", Call::DoStep, |comp| {
        let event = out_ptr(eventHandlingNeeded, "eventHandlingNeeded")?;
        let terminate = out_ptr(terminateSimulation, "terminateSimulation")?;
        let early = out_ptr(earlyReturn, "earlyReturn")?;
        let last = out_ptr(lastSuccessfulTime, "lastSuccessfulTime")?;
        let status = comp.do_step(currentCommunicationPoint, communicationStepSize)?;
        *event = false;
        *early = false;
        *terminate = comp.instance.terminated()?;
        *last = comp.instance.last_successful_time()?;
        Ok(status)
    })
}

/// Step Mode is entered from Event Mode only, which Co-Simulation does not have here; a Model
/// Exchange instance has no Step Mode at all.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterStepMode(instance: fmi3Instance) -> fmi3Status {
    fmi3(instance, "fmi3EnterStepMode", Call::EnterStepMode, |_| {
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetOutputDerivatives(
    instance: fmi3Instance,
    _valueReferences: *const fmi3ValueReference,
    _nValueReferences: usize,
    _orders: *const fmi3Int32,
    _values: *mut fmi3Float64,
    _nValues: usize,
) -> fmi3Status {
    let f = "fmi3GetOutputDerivatives";
    fmi3(instance, f, Call::GetRealOutputDerivatives, |_| {
        Err(CallError(
            "output derivatives are not provided (maxOutputDerivativeOrder=\"0\")".into(),
        ))
    })
}
