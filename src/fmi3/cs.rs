//! The FMI 3.0 Co-Simulation functions (FMI 3.0 §4.2), on the instance's steps: the module
//! above's safety contract applies.

use fmi_sys::fmi3::*;

use super::{Component, OK, out_ptr, step_status, with_component};
use crate::cosim::{Call, CallError};

/// Log a step's report lines under fmi3DoStep.
fn log_report(comp: &Component, report: &crate::cosim::StepReport) {
    for line in &report.log {
        comp.log.log(
            step_status(line.status),
            line.category,
            &format!("fmi3DoStep: {}", line.text),
        );
    }
}

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
    let f = "fmi3DoStep";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::DoStep, f)?;
        let event = out_ptr(eventHandlingNeeded, "eventHandlingNeeded")?;
        let terminate = out_ptr(terminateSimulation, "terminateSimulation")?;
        let early = out_ptr(earlyReturn, "earlyReturn")?;
        let last = out_ptr(lastSuccessfulTime, "lastSuccessfulTime")?;
        if comp.log.calls {
            comp.log.log(
                OK,
                "logCalls",
                &format!(
                    "{f}(currentCommunicationPoint = {currentCommunicationPoint:?}, \
                     communicationStepSize = {communicationStepSize:?})"
                ),
            );
        }
        let report = comp
            .instance
            .do_step(currentCommunicationPoint, communicationStepSize)?;
        log_report(comp, &report);
        *event = false;
        *early = false;
        *terminate = comp.instance.terminated()?;
        *last = comp.instance.last_successful_time()?;
        Ok(step_status(report.status))
    })
}

/// Step Mode is entered from Event Mode only, which Co-Simulation does not have here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterStepMode(instance: fmi3Instance) -> fmi3Status {
    with_component(instance, "fmi3EnterStepMode", |_| {
        Err(CallError(
            "this FMU has no Event Mode in Co-Simulation (hasEventMode=\"false\"): \
             fmi3ExitInitializationMode enters Step Mode directly"
                .into(),
        ))
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
    with_component(instance, f, |comp| {
        comp.instance.require(Call::GetRealOutputDerivatives, f)?;
        Err(CallError(
            "output derivatives are not provided (maxOutputDerivativeOrder=\"0\")".into(),
        ))
    })
}
