//! A bang-bang pressure controller with hysteresis, as an FMI 2.0 Co-Simulation FMU
//! (`modelDescription.xml` next to this crate; packaged by `examples/libcosim/package.py`).
//!
//! Input `p` (Pa), parameters `p_low` < `p_high` (Pa), output `opening` (0 or 1, starts at 1).
//! At the end of every `fmi2DoStep` the output switches to 0 when the input seen during the step
//! is at or above `p_high`, to 1 when it is at or below `p_low`, and otherwise holds: the
//! discrete-time controller a PLC runs at the communication rate.
//!
//! No dependencies; every fmi2 function of the standard's Co-Simulation interface is exported
//! (importers resolve them all), those this FMU does not support return fmi2Error. Null pointers
//! and unknown value references are refused; nothing panics across the ABI (each entry point is
//! wrapped in `catch_unwind`).
// The FMI 2.0 standard is the safety contract of every exported function.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

pub type Fmi2Status = c_int;
pub const OK: Fmi2Status = 0;
pub const ERROR: Fmi2Status = 3;
pub const FATAL: Fmi2Status = 4;

const VR_P: u32 = 0;
const VR_OPENING: u32 = 1;
const VR_P_LOW: u32 = 2;
const VR_P_HIGH: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Instantiated,
    Initializing,
    Stepping,
    Terminated,
}

/// The controller's whole state.
#[derive(Clone, Debug, PartialEq)]
pub struct Controller {
    pub p_pa: f64,
    pub opening: f64,
    pub p_low_pa: f64,
    pub p_high_pa: f64,
    pub time_s: f64,
    phase: Phase,
}

impl Default for Controller {
    fn default() -> Self {
        Self {
            p_pa: 1e5,
            opening: 1.0,
            p_low_pa: 4e5,
            p_high_pa: 5e5,
            time_s: 0.0,
            phase: Phase::Instantiated,
        }
    }
}

impl Controller {
    /// The hysteresis law, applied once per communication step.
    pub fn step(&mut self, h_s: f64) {
        if self.p_pa >= self.p_high_pa {
            self.opening = 0.0;
        } else if self.p_pa <= self.p_low_pa {
            self.opening = 1.0;
        }
        self.time_s += h_s;
    }

    fn get(&self, vr: u32) -> Option<f64> {
        Some(match vr {
            VR_P => self.p_pa,
            VR_OPENING => self.opening,
            VR_P_LOW => self.p_low_pa,
            VR_P_HIGH => self.p_high_pa,
            _ => return None,
        })
    }

    fn set(&mut self, vr: u32, value: f64) -> Result<(), &'static str> {
        if !value.is_finite() {
            return Err("value is not finite");
        }
        let before_init = matches!(self.phase, Phase::Instantiated | Phase::Initializing);
        match vr {
            VR_P => self.p_pa = value,
            VR_P_LOW if before_init => self.p_low_pa = value,
            VR_P_HIGH if before_init => self.p_high_pa = value,
            VR_P_LOW | VR_P_HIGH => return Err("parameters are fixed after initialization"),
            VR_OPENING => return Err("opening is an output"),
            _ => return Err("unknown value reference"),
        }
        Ok(())
    }
}

fn guard(f: impl FnOnce() -> Fmi2Status) -> Fmi2Status {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(FATAL)
}

unsafe fn instance<'a>(c: *mut c_void) -> Option<&'a mut Controller> {
    // SAFETY: a non-null component is a pointer returned by fmi2Instantiate (FMI 2.0 §2.1.5).
    unsafe { c.cast::<Controller>().as_mut() }
}

/// The value reference and value arrays of a get/set call, or None when a pointer is null.
unsafe fn arrays<'a, T>(
    vr: *const u32,
    n: usize,
    values: *const T,
) -> Option<(&'a [u32], *const T)> {
    if n == 0 {
        return Some((&[], values));
    }
    if vr.is_null() || values.is_null() {
        return None;
    }
    // SAFETY: the master passes n value references (FMI 2.0 §2.1.7).
    Some((unsafe { std::slice::from_raw_parts(vr, n) }, values))
}

#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Instantiate(
    _name: *const c_char,
    kind: c_int,
    _guid: *const c_char,
    _resources: *const c_char,
    _callbacks: *const c_void,
    _visible: c_int,
    _logging: c_int,
) -> *mut c_void {
    // fmi2CoSimulation = 1; the GUID is this crate's only description, not checked.
    if kind != 1 {
        return std::ptr::null_mut();
    }
    catch_unwind(|| Box::into_raw(Box::new(Controller::default())).cast::<c_void>())
        .unwrap_or(std::ptr::null_mut())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeInstance(c: *mut c_void) {
    if !c.is_null() {
        // SAFETY: c came from Box::into_raw in fmi2Instantiate and is freed once (FMI 2.0).
        drop(unsafe { Box::from_raw(c.cast::<Controller>()) });
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: *mut c_void,
    _on: c_int,
    _n: usize,
    _categories: *const *const c_char,
) -> Fmi2Status {
    if unsafe { instance(c) }.is_some() {
        OK
    } else {
        ERROR
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: *mut c_void,
    _tol_defined: c_int,
    _tol: f64,
    start: f64,
    _stop_defined: c_int,
    _stop: f64,
) -> Fmi2Status {
    guard(|| match unsafe { instance(c) } {
        Some(s) if s.phase == Phase::Instantiated && start.is_finite() => {
            s.time_s = start;
            OK
        }
        _ => ERROR,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: *mut c_void) -> Fmi2Status {
    guard(|| match unsafe { instance(c) } {
        Some(s) if s.phase == Phase::Instantiated => {
            s.phase = Phase::Initializing;
            OK
        }
        _ => ERROR,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: *mut c_void) -> Fmi2Status {
    guard(|| match unsafe { instance(c) } {
        Some(s) if s.phase == Phase::Initializing && s.p_low_pa < s.p_high_pa => {
            s.phase = Phase::Stepping;
            OK
        }
        _ => ERROR,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Terminate(c: *mut c_void) -> Fmi2Status {
    guard(|| match unsafe { instance(c) } {
        Some(s) => {
            s.phase = Phase::Terminated;
            OK
        }
        None => ERROR,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Reset(c: *mut c_void) -> Fmi2Status {
    guard(|| match unsafe { instance(c) } {
        Some(s) => {
            *s = Controller::default();
            OK
        }
        None => ERROR,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetReal(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    values: *mut f64,
) -> Fmi2Status {
    guard(|| {
        let (Some(s), Some((vrs, out))) = (unsafe { instance(c) }, unsafe {
            arrays(vr, n, values.cast_const())
        }) else {
            return ERROR;
        };
        for (i, &r) in vrs.iter().enumerate() {
            let Some(v) = s.get(r) else { return ERROR };
            // SAFETY: the master passes room for n values.
            unsafe { *out.cast_mut().add(i) = v };
        }
        OK
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetReal(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    values: *const f64,
) -> Fmi2Status {
    guard(|| {
        let (Some(s), Some((vrs, vals))) =
            (unsafe { instance(c) }, unsafe { arrays(vr, n, values) })
        else {
            return ERROR;
        };
        // Validate everything first so that a refused call leaves the instance unchanged.
        let mut next = s.clone();
        for (i, &r) in vrs.iter().enumerate() {
            // SAFETY: the master passes n values.
            if next.set(r, unsafe { *vals.add(i) }).is_err() {
                return ERROR;
            }
        }
        *s = next;
        OK
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DoStep(
    c: *mut c_void,
    t: f64,
    h: f64,
    _no_prior: c_int,
) -> Fmi2Status {
    guard(|| match unsafe { instance(c) } {
        Some(s)
            if s.phase == Phase::Stepping
                && h.is_finite()
                && h >= 0.0
                && (t - s.time_s).abs() <= 1e-9 * t.abs().max(1.0) =>
        {
            s.time_s = t;
            s.step(h);
            OK
        }
        _ => ERROR,
    })
}

/// No integer, boolean or string variables: only an empty call succeeds.
unsafe fn no_variables(c: *mut c_void, n: usize) -> Fmi2Status {
    if unsafe { instance(c) }.is_some() && n == 0 {
        OK
    } else {
        ERROR
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetInteger(
    c: *mut c_void,
    _vr: *const u32,
    n: usize,
    _v: *mut c_int,
) -> Fmi2Status {
    unsafe { no_variables(c, n) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBoolean(
    c: *mut c_void,
    _vr: *const u32,
    n: usize,
    _v: *mut c_int,
) -> Fmi2Status {
    unsafe { no_variables(c, n) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetString(
    c: *mut c_void,
    _vr: *const u32,
    n: usize,
    _v: *mut *const c_char,
) -> Fmi2Status {
    unsafe { no_variables(c, n) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetInteger(
    c: *mut c_void,
    _vr: *const u32,
    n: usize,
    _v: *const c_int,
) -> Fmi2Status {
    unsafe { no_variables(c, n) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetBoolean(
    c: *mut c_void,
    _vr: *const u32,
    n: usize,
    _v: *const c_int,
) -> Fmi2Status {
    unsafe { no_variables(c, n) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetString(
    c: *mut c_void,
    _vr: *const u32,
    n: usize,
    _v: *const *const c_char,
) -> Fmi2Status {
    unsafe { no_variables(c, n) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStatus(
    _c: *mut c_void,
    _kind: c_int,
    _v: *mut c_int,
) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealStatus(c: *mut c_void, kind: c_int, v: *mut f64) -> Fmi2Status {
    // fmi2LastSuccessfulTime = 2: every step succeeds, so it is the current time.
    match unsafe { instance(c) } {
        Some(s) if kind == 2 && !v.is_null() => {
            // SAFETY: checked non-null; the master passes room for one value.
            unsafe { *v = s.time_s };
            OK
        }
        _ => ERROR,
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetIntegerStatus(
    _c: *mut c_void,
    _kind: c_int,
    _v: *mut c_int,
) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    _c: *mut c_void,
    _kind: c_int,
    _v: *mut c_int,
) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStringStatus(
    _c: *mut c_void,
    _kind: c_int,
    _v: *mut *const c_char,
) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CancelStep(_c: *mut c_void) -> Fmi2Status {
    ERROR
}

// Not supported (canGetAndSetFMUstate="false", no derivatives): fmi2Error.

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetFMUstate(_c: *mut c_void, _s: *mut *mut c_void) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetFMUstate(_c: *mut c_void, _s: *mut c_void) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeFMUstate(_c: *mut c_void, _s: *mut *mut c_void) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
    _c: *mut c_void,
    _s: *mut c_void,
    _n: *mut usize,
) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    _c: *mut c_void,
    _s: *mut c_void,
    _b: *mut c_char,
    _n: usize,
) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    _c: *mut c_void,
    _b: *const c_char,
    _n: usize,
    _s: *mut *mut c_void,
) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
    _c: *mut c_void,
    _u: *const u32,
    _nu: usize,
    _z: *const u32,
    _nz: usize,
    _dv: *const f64,
    _dz: *mut f64,
) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
    _c: *mut c_void,
    _vr: *const u32,
    _n: usize,
    _order: *const c_int,
    _v: *const f64,
) -> Fmi2Status {
    ERROR
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
    _c: *mut c_void,
    _vr: *const u32,
    _n: usize,
    _order: *const c_int,
    _v: *mut f64,
) -> Fmi2Status {
    ERROR
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hysteresis_switches_at_the_thresholds_and_holds_between() {
        let mut c = Controller::default();
        let seen: Vec<f64> = [1e5, 4.5e5, 5e5, 4.5e5, 4.0e5, 4.5e5, 5.1e5]
            .iter()
            .map(|&p| {
                c.p_pa = p;
                c.step(1e-3);
                c.opening
            })
            .collect();
        println!("openings {seen:?}");
        assert_eq!(seen, [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn refused_calls_leave_the_instance_unchanged() {
        unsafe {
            let c = fmi2Instantiate(
                std::ptr::null(),
                1,
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
                0,
                0,
            );
            assert!(!c.is_null());
            let vrs = [VR_P, 99];
            let vals = [3e5, 1.0];
            assert_eq!(fmi2SetReal(c, vrs.as_ptr(), 2, vals.as_ptr()), ERROR);
            let mut p = 0.0;
            assert_eq!(fmi2GetReal(c, vrs.as_ptr(), 1, &mut p), OK);
            assert_eq!(p, 1e5);
            assert_eq!(fmi2SetReal(c, vrs.as_ptr(), 1, std::ptr::null()), ERROR);
            assert_eq!(fmi2DoStep(c, 0.0, 1e-3, 1), ERROR, "not initialized");
            assert_eq!(fmi2DoStep(std::ptr::null_mut(), 0.0, 1e-3, 1), ERROR);
            fmi2FreeInstance(c);
        }
    }
}
