//! The FMI 2.0 Model Exchange functions (FMI 2.0.4 §3.2), on top of the instance's Model
//! Exchange core (`crate::cosim`'s `exchange`): pointers, lengths and statuses are handled
//! here, everything else is the instance's. The safety contract of the module above applies.

use fmi_sys::fmi2::*;

use super::{Component, OK, out_ptr, slice_in, slice_out, step_status, with_component};
use crate::cosim::{Call, CallError, StepReport};

/// Log a report's lines under `function` and return its status.
pub(super) fn reported(comp: &Component, function: &str, report: &StepReport) -> fmi2Status {
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

fn boolean(b: bool) -> fmi2Boolean {
    fmi2Boolean::from(b)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterEventMode(c: fmi2Component) -> fmi2Status {
    with_component(c, "fmi2EnterEventMode", |comp| {
        comp.instance.enter_event_mode()?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2NewDiscreteStates(
    c: fmi2Component,
    fmi2eventInfo: *mut fmi2EventInfo,
) -> fmi2Status {
    with_component(c, "fmi2NewDiscreteStates", |comp| {
        comp.instance
            .require(Call::NewDiscreteStates, "fmi2NewDiscreteStates")?;
        let info = out_ptr(fmi2eventInfo, "fmi2eventInfo")?;
        let u = comp.instance.update_discrete_states()?;
        info.newDiscreteStatesNeeded = boolean(u.discrete_states_need_update);
        info.terminateSimulation = boolean(u.terminate_simulation);
        info.nominalsOfContinuousStatesChanged = boolean(u.nominals_changed);
        info.valuesOfContinuousStatesChanged = boolean(u.values_changed);
        info.nextEventTimeDefined = boolean(u.next_event_time.is_some());
        info.nextEventTime = u.next_event_time.unwrap_or(0.0);
        Ok(reported(comp, "fmi2NewDiscreteStates", &u.report))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: fmi2Component) -> fmi2Status {
    with_component(c, "fmi2EnterContinuousTimeMode", |comp| {
        comp.instance.enter_continuous_time_mode()?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CompletedIntegratorStep(
    c: fmi2Component,
    _noSetFMUStatePriorToCurrentPoint: fmi2Boolean,
    enterEventMode: *mut fmi2Boolean,
    terminateSimulation: *mut fmi2Boolean,
) -> fmi2Status {
    with_component(c, "fmi2CompletedIntegratorStep", |comp| {
        comp.instance
            .require(Call::CompletedIntegratorStep, "fmi2CompletedIntegratorStep")?;
        let enter = out_ptr(enterEventMode, "enterEventMode")?;
        let terminate = out_ptr(terminateSimulation, "terminateSimulation")?;
        let s = comp.instance.completed_integrator_step()?;
        *enter = boolean(s.enter_event_mode);
        *terminate = boolean(s.terminate_simulation);
        Ok(reported(comp, "fmi2CompletedIntegratorStep", &s.report))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetTime(c: fmi2Component, time: fmi2Real) -> fmi2Status {
    with_component(c, "fmi2SetTime", |comp| {
        comp.instance.set_time(time)?;
        Ok(OK)
    })
}

/// Require `call` (the phase first, as every function does), then the `n` values at `p`.
fn states_in<'a>(
    comp: &Component,
    call: Call,
    function: &str,
    p: *const fmi2Real,
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
    p: *mut fmi2Real,
    n: usize,
    what: &str,
) -> Result<&'a mut [f64], CallError> {
    comp.instance.require(call, function)?;
    // SAFETY: n writable elements (contract).
    unsafe { slice_out(p, n, what) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetContinuousStates(
    c: fmi2Component,
    x: *const fmi2Real,
    nx: usize,
) -> fmi2Status {
    let f = "fmi2SetContinuousStates";
    with_component(c, f, |comp| {
        let x = states_in(comp, Call::SetContinuousStates, f, x, nx, "x[]")?;
        comp.instance.set_continuous_states(x)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDerivatives(
    c: fmi2Component,
    derivatives: *mut fmi2Real,
    nx: usize,
) -> fmi2Status {
    let f = "fmi2GetDerivatives";
    with_component(c, f, |comp| {
        let dx = states_out(
            comp,
            Call::GetDerivatives,
            f,
            derivatives,
            nx,
            "derivatives[]",
        )?;
        let r = comp.instance.derivatives(dx)?;
        Ok(reported(comp, f, &r))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetEventIndicators(
    c: fmi2Component,
    eventIndicators: *mut fmi2Real,
    ni: usize,
) -> fmi2Status {
    let f = "fmi2GetEventIndicators";
    with_component(c, f, |comp| {
        let z = states_out(
            comp,
            Call::GetEventIndicators,
            f,
            eventIndicators,
            ni,
            "eventIndicators[]",
        )?;
        comp.instance.event_indicators(z)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetContinuousStates(
    c: fmi2Component,
    x: *mut fmi2Real,
    nx: usize,
) -> fmi2Status {
    let f = "fmi2GetContinuousStates";
    with_component(c, f, |comp| {
        let x = states_out(comp, Call::GetContinuousStates, f, x, nx, "x[]")?;
        comp.instance.continuous_states(x)?;
        Ok(OK)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(
    c: fmi2Component,
    x_nominal: *mut fmi2Real,
    nx: usize,
) -> fmi2Status {
    let f = "fmi2GetNominalsOfContinuousStates";
    with_component(c, f, |comp| {
        let out = states_out(comp, Call::GetNominals, f, x_nominal, nx, "x_nominal[]")?;
        comp.instance.nominals(out)?;
        Ok(OK)
    })
}
