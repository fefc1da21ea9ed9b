//! The FMI 3.0 Model Exchange functions (FMI 3.0 §3.2), on the instance's Model Exchange core
//! (the same as FMI 2.0's): pointers, lengths and statuses are handled here. The module
//! above's safety contract applies.

use fmi_sys::fmi3::*;

use super::{Component, OK, out_ptr, slice_in, slice_out, step_status, with_component};
use crate::cosim::{Call, CallError, StepReport};

/// Log a report's lines under `function` and return its status.
pub(super) fn reported(comp: &Component, function: &str, report: &StepReport) -> fmi3Status {
    for line in &report.log {
        let text = if line.text.starts_with(function) {
            line.text.clone()
        } else {
            format!("{function}: {}", line.text)
        };
        comp.log.log(step_status(line.status), line.category, &text);
    }
    step_status(report.status)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterEventMode(instance: fmi3Instance) -> fmi3Status {
    let f = "fmi3EnterEventMode";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::EnterEventMode, f)?;
        comp.instance.enter_event_mode()?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3UpdateDiscreteStates(
    instance: fmi3Instance,
    discreteStatesNeedUpdate: *mut fmi3Boolean,
    terminateSimulation: *mut fmi3Boolean,
    nominalsOfContinuousStatesChanged: *mut fmi3Boolean,
    valuesOfContinuousStatesChanged: *mut fmi3Boolean,
    nextEventTimeDefined: *mut fmi3Boolean,
    nextEventTime: *mut fmi3Float64,
) -> fmi3Status {
    let f = "fmi3UpdateDiscreteStates";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::NewDiscreteStates, f)?;
        let need = out_ptr(discreteStatesNeedUpdate, "discreteStatesNeedUpdate")?;
        let terminate = out_ptr(terminateSimulation, "terminateSimulation")?;
        let nominals = out_ptr(
            nominalsOfContinuousStatesChanged,
            "nominalsOfContinuousStatesChanged",
        )?;
        let values = out_ptr(
            valuesOfContinuousStatesChanged,
            "valuesOfContinuousStatesChanged",
        )?;
        let defined = out_ptr(nextEventTimeDefined, "nextEventTimeDefined")?;
        let next = out_ptr(nextEventTime, "nextEventTime")?;
        let u = comp.instance.update_discrete_states()?;
        *need = u.discrete_states_need_update;
        *terminate = u.terminate_simulation;
        *nominals = u.nominals_changed;
        *values = u.values_changed;
        *defined = u.next_event_time.is_some();
        *next = u.next_event_time.unwrap_or(0.0);
        Ok(reported(comp, f, &u.report))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterContinuousTimeMode(instance: fmi3Instance) -> fmi3Status {
    let f = "fmi3EnterContinuousTimeMode";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::EnterContinuousTimeMode, f)?;
        comp.instance.enter_continuous_time_mode()?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3CompletedIntegratorStep(
    instance: fmi3Instance,
    _noSetFMUStatePriorToCurrentPoint: fmi3Boolean,
    enterEventMode: *mut fmi3Boolean,
    terminateSimulation: *mut fmi3Boolean,
) -> fmi3Status {
    let f = "fmi3CompletedIntegratorStep";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::CompletedIntegratorStep, f)?;
        let enter = out_ptr(enterEventMode, "enterEventMode")?;
        let terminate = out_ptr(terminateSimulation, "terminateSimulation")?;
        let s = comp.instance.completed_integrator_step()?;
        *enter = s.enter_event_mode;
        *terminate = s.terminate_simulation;
        Ok(reported(comp, f, &s.report))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetTime(instance: fmi3Instance, time: fmi3Float64) -> fmi3Status {
    let f = "fmi3SetTime";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::SetTime, f)?;
        comp.instance.set_time(time)?;
        Ok(OK)
    })
}

/// Require `call` (the phase first), then the `n` values at `p`.
fn states_in<'a>(
    comp: &Component,
    call: Call,
    function: &str,
    p: *const fmi3Float64,
    n: usize,
    what: &str,
) -> Result<&'a [f64], CallError> {
    comp.instance.require(call, function)?;
    // SAFETY: n elements (contract).
    unsafe { slice_in(p, n, what) }
}

fn states_out<'a>(
    comp: &Component,
    call: Call,
    function: &str,
    p: *mut fmi3Float64,
    n: usize,
    what: &str,
) -> Result<&'a mut [f64], CallError> {
    comp.instance.require(call, function)?;
    // SAFETY: n writable elements (contract).
    unsafe { slice_out(p, n, what) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetContinuousStates(
    instance: fmi3Instance,
    continuousStates: *const fmi3Float64,
    nContinuousStates: usize,
) -> fmi3Status {
    let f = "fmi3SetContinuousStates";
    with_component(instance, f, |comp| {
        let x = states_in(
            comp,
            Call::SetContinuousStates,
            f,
            continuousStates,
            nContinuousStates,
            "continuousStates[]",
        )?;
        comp.instance.set_continuous_states(x)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetContinuousStateDerivatives(
    instance: fmi3Instance,
    derivatives: *mut fmi3Float64,
    nContinuousStates: usize,
) -> fmi3Status {
    let f = "fmi3GetContinuousStateDerivatives";
    with_component(instance, f, |comp| {
        let dx = states_out(
            comp,
            Call::GetDerivatives,
            f,
            derivatives,
            nContinuousStates,
            "derivatives[]",
        )?;
        let r = comp.instance.derivatives(dx)?;
        Ok(reported(comp, f, &r))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetEventIndicators(
    instance: fmi3Instance,
    eventIndicators: *mut fmi3Float64,
    nEventIndicators: usize,
) -> fmi3Status {
    let f = "fmi3GetEventIndicators";
    with_component(instance, f, |comp| {
        let z = states_out(
            comp,
            Call::GetEventIndicators,
            f,
            eventIndicators,
            nEventIndicators,
            "eventIndicators[]",
        )?;
        comp.instance.event_indicators(z)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetContinuousStates(
    instance: fmi3Instance,
    continuousStates: *mut fmi3Float64,
    nContinuousStates: usize,
) -> fmi3Status {
    let f = "fmi3GetContinuousStates";
    with_component(instance, f, |comp| {
        let x = states_out(
            comp,
            Call::GetContinuousStates,
            f,
            continuousStates,
            nContinuousStates,
            "continuousStates[]",
        )?;
        comp.instance.continuous_states(x)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNominalsOfContinuousStates(
    instance: fmi3Instance,
    nominals: *mut fmi3Float64,
    nContinuousStates: usize,
) -> fmi3Status {
    let f = "fmi3GetNominalsOfContinuousStates";
    with_component(instance, f, |comp| {
        let out = states_out(
            comp,
            Call::GetNominals,
            f,
            nominals,
            nContinuousStates,
            "nominals[]",
        )?;
        comp.instance.nominals(out)?;
        Ok(OK)
    })
}

/// The number of event indicators (FMI 3.0 allows the query in every state but the fatal).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(
    instance: fmi3Instance,
    nEventIndicators: *mut usize,
) -> fmi3Status {
    let f = "fmi3GetNumberOfEventIndicators";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::SetDebugLogging, f)?;
        *out_ptr(nEventIndicators, "nEventIndicators")? = if comp.instance.is_model_exchange() {
            comp.instance.n_event_indicators()
        } else {
            0
        };
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNumberOfContinuousStates(
    instance: fmi3Instance,
    nContinuousStates: *mut usize,
) -> fmi3Status {
    let f = "fmi3GetNumberOfContinuousStates";
    with_component(instance, f, |comp| {
        comp.instance.require(Call::SetDebugLogging, f)?;
        *out_ptr(nContinuousStates, "nContinuousStates")? = if comp.instance.is_model_exchange() {
            comp.instance.n_states()
        } else {
            0
        };
        Ok(OK)
    })
}
