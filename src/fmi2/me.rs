//! The FMI 2.0 Model Exchange functions (FMI 2.0.4 §3.2): each checks the phase and delegates
//! to the instance's Model Exchange core; pointers, lengths and statuses are handled here. The
//! safety contract of `crate::fmi` applies.

use fmi_sys::fmi2::*;

use super::fmi2;
use crate::cosim::Call;
use crate::fmi::{Status, out_ptr, slice_in, slice_out};

fn boolean(b: bool) -> fmi2Boolean {
    fmi2Boolean::from(b)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterEventMode(c: fmi2Component) -> fmi2Status {
    fmi2(c, "fmi2EnterEventMode", Call::EnterEventMode, |comp| {
        comp.instance.enter_event_mode()?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2NewDiscreteStates(
    c: fmi2Component,
    fmi2eventInfo: *mut fmi2EventInfo,
) -> fmi2Status {
    let f = "fmi2NewDiscreteStates";
    fmi2(c, f, Call::NewDiscreteStates, |comp| {
        let info = out_ptr(fmi2eventInfo, "fmi2eventInfo")?;
        let u = comp.instance.update_discrete_states()?;
        info.newDiscreteStatesNeeded = boolean(u.discrete_states_need_update);
        info.terminateSimulation = boolean(u.terminate_simulation);
        info.nominalsOfContinuousStatesChanged = boolean(u.nominals_changed);
        info.valuesOfContinuousStatesChanged = boolean(u.values_changed);
        info.nextEventTimeDefined = boolean(u.next_event_time.is_some());
        info.nextEventTime = u.next_event_time.unwrap_or(0.0);
        Ok(comp.reported(f, &u.report))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: fmi2Component) -> fmi2Status {
    let f = "fmi2EnterContinuousTimeMode";
    fmi2(c, f, Call::EnterContinuousTimeMode, |comp| {
        comp.instance.enter_continuous_time_mode()?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CompletedIntegratorStep(
    c: fmi2Component,
    _noSetFMUStatePriorToCurrentPoint: fmi2Boolean,
    enterEventMode: *mut fmi2Boolean,
    terminateSimulation: *mut fmi2Boolean,
) -> fmi2Status {
    let f = "fmi2CompletedIntegratorStep";
    fmi2(c, f, Call::CompletedIntegratorStep, |comp| {
        let enter = out_ptr(enterEventMode, "enterEventMode")?;
        let terminate = out_ptr(terminateSimulation, "terminateSimulation")?;
        let s = comp.instance.completed_integrator_step()?;
        *enter = boolean(s.enter_event_mode);
        *terminate = boolean(s.terminate_simulation);
        Ok(comp.reported(f, &s.report))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetTime(c: fmi2Component, time: fmi2Real) -> fmi2Status {
    fmi2(c, "fmi2SetTime", Call::SetTime, |comp| {
        comp.instance.set_time(time)?;
        Ok(Status::Ok)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetContinuousStates(
    c: fmi2Component,
    x: *const fmi2Real,
    nx: usize,
) -> fmi2Status {
    fmi2(
        c,
        "fmi2SetContinuousStates",
        Call::SetContinuousStates,
        |comp| {
            // SAFETY: nx elements (contract).
            let x = unsafe { slice_in(x, nx, "x[]")? };
            comp.instance.set_continuous_states(x)?;
            Ok(Status::Ok)
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDerivatives(
    c: fmi2Component,
    derivatives: *mut fmi2Real,
    nx: usize,
) -> fmi2Status {
    let f = "fmi2GetDerivatives";
    fmi2(c, f, Call::GetDerivatives, |comp| {
        // SAFETY: nx writable elements (contract).
        let dx = unsafe { slice_out(derivatives, nx, "derivatives[]")? };
        let r = comp.instance.derivatives(dx)?;
        Ok(comp.reported(f, &r))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetEventIndicators(
    c: fmi2Component,
    eventIndicators: *mut fmi2Real,
    ni: usize,
) -> fmi2Status {
    fmi2(
        c,
        "fmi2GetEventIndicators",
        Call::GetEventIndicators,
        |comp| {
            // SAFETY: ni writable elements (contract).
            let z = unsafe { slice_out(eventIndicators, ni, "eventIndicators[]")? };
            comp.instance.event_indicators(z)?;
            Ok(Status::Ok)
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetContinuousStates(
    c: fmi2Component,
    x: *mut fmi2Real,
    nx: usize,
) -> fmi2Status {
    fmi2(
        c,
        "fmi2GetContinuousStates",
        Call::GetContinuousStates,
        |comp| {
            // SAFETY: nx writable elements (contract).
            let x = unsafe { slice_out(x, nx, "x[]")? };
            comp.instance.continuous_states(x)?;
            Ok(Status::Ok)
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(
    c: fmi2Component,
    x_nominal: *mut fmi2Real,
    nx: usize,
) -> fmi2Status {
    let f = "fmi2GetNominalsOfContinuousStates";
    fmi2(c, f, Call::GetNominals, |comp| {
        // SAFETY: nx writable elements (contract).
        let out = unsafe { slice_out(x_nominal, nx, "x_nominal[]")? };
        comp.instance.nominals(out)?;
        Ok(Status::Ok)
    })
}
