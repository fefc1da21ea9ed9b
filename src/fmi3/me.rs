//! The FMI 3.0 Model Exchange functions (FMI 3.0 §3.2): each checks the phase and delegates to
//! the instance's Model Exchange core (the same as FMI 2.0's); pointers, lengths and statuses
//! are handled here. The safety contract of `crate::fmi` applies.

use fmi_sys::fmi3::*;

use super::fmi3;
use crate::cosim::Call;
use crate::fmi::{Status, out_ptr, slice_in, slice_out};

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterEventMode(instance: fmi3Instance) -> fmi3Status {
    fmi3(
        instance,
        "fmi3EnterEventMode",
        Call::EnterEventMode,
        |comp| {
            comp.instance.enter_event_mode()?;
            Ok(Status::Ok)
        },
    )
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
    fmi3(instance, f, Call::NewDiscreteStates, |comp| {
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
        Ok(comp.reported(f, &u.report))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterContinuousTimeMode(instance: fmi3Instance) -> fmi3Status {
    let f = "fmi3EnterContinuousTimeMode";
    fmi3(instance, f, Call::EnterContinuousTimeMode, |comp| {
        comp.instance.enter_continuous_time_mode()?;
        Ok(Status::Ok)
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
    fmi3(instance, f, Call::CompletedIntegratorStep, |comp| {
        let enter = out_ptr(enterEventMode, "enterEventMode")?;
        let terminate = out_ptr(terminateSimulation, "terminateSimulation")?;
        let s = comp.instance.completed_integrator_step()?;
        *enter = s.enter_event_mode;
        *terminate = s.terminate_simulation;
        Ok(comp.reported(f, &s.report))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetTime(instance: fmi3Instance, time: fmi3Float64) -> fmi3Status {
    fmi3(instance, "fmi3SetTime", Call::SetTime, |comp| {
        comp.instance.set_time(time)?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetContinuousStates(
    instance: fmi3Instance,
    continuousStates: *const fmi3Float64,
    nContinuousStates: usize,
) -> fmi3Status {
    let f = "fmi3SetContinuousStates";
    fmi3(instance, f, Call::SetContinuousStates, |comp| {
        // SAFETY: nContinuousStates elements (contract).
        let x = unsafe { slice_in(continuousStates, nContinuousStates, "continuousStates[]")? };
        comp.instance.set_continuous_states(x)?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetContinuousStateDerivatives(
    instance: fmi3Instance,
    derivatives: *mut fmi3Float64,
    nContinuousStates: usize,
) -> fmi3Status {
    let f = "fmi3GetContinuousStateDerivatives";
    fmi3(instance, f, Call::GetDerivatives, |comp| {
        // SAFETY: nContinuousStates writable elements (contract).
        let dx = unsafe { slice_out(derivatives, nContinuousStates, "derivatives[]")? };
        let r = comp.instance.derivatives(dx)?;
        Ok(comp.reported(f, &r))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetEventIndicators(
    instance: fmi3Instance,
    eventIndicators: *mut fmi3Float64,
    nEventIndicators: usize,
) -> fmi3Status {
    let f = "fmi3GetEventIndicators";
    fmi3(instance, f, Call::GetEventIndicators, |comp| {
        // SAFETY: nEventIndicators writable elements (contract).
        let z = unsafe { slice_out(eventIndicators, nEventIndicators, "eventIndicators[]")? };
        comp.instance.event_indicators(z)?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetContinuousStates(
    instance: fmi3Instance,
    continuousStates: *mut fmi3Float64,
    nContinuousStates: usize,
) -> fmi3Status {
    let f = "fmi3GetContinuousStates";
    fmi3(instance, f, Call::GetContinuousStates, |comp| {
        // SAFETY: nContinuousStates writable elements (contract).
        let x = unsafe { slice_out(continuousStates, nContinuousStates, "continuousStates[]")? };
        comp.instance.continuous_states(x)?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNominalsOfContinuousStates(
    instance: fmi3Instance,
    nominals: *mut fmi3Float64,
    nContinuousStates: usize,
) -> fmi3Status {
    let f = "fmi3GetNominalsOfContinuousStates";
    fmi3(instance, f, Call::GetNominals, |comp| {
        // SAFETY: nContinuousStates writable elements (contract).
        let out = unsafe { slice_out(nominals, nContinuousStates, "nominals[]")? };
        comp.instance.nominals(out)?;
        Ok(Status::Ok)
    })
}

/// The number of event indicators: FMI 3.0 allows the query in every state but the fatal;
/// a Co-Simulation instance has none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(
    instance: fmi3Instance,
    nEventIndicators: *mut usize,
) -> fmi3Status {
    let f = "fmi3GetNumberOfEventIndicators";
    fmi3(instance, f, Call::SetDebugLogging, |comp| {
        let n = out_ptr(nEventIndicators, "nEventIndicators")?;
        *n = match comp.instance.is_model_exchange() {
            true => comp.instance.n_event_indicators(),
            false => 0,
        };
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNumberOfContinuousStates(
    instance: fmi3Instance,
    nContinuousStates: *mut usize,
) -> fmi3Status {
    let f = "fmi3GetNumberOfContinuousStates";
    fmi3(instance, f, Call::SetDebugLogging, |comp| {
        let n = out_ptr(nContinuousStates, "nContinuousStates")?;
        *n = match comp.instance.is_model_exchange() {
            true => comp.instance.n_states(),
            false => 0,
        };
        Ok(Status::Ok)
    })
}
