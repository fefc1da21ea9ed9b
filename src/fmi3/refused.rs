//! The fmi3 functions of features this FMU does not declare, exported (an importer may look
//! every symbol up) and refused with fmi3Error and a message: variable types other than
//! Float64, clocks, configuration mode, variable dependencies at run time, adjoint
//! derivatives and Scheduled Execution. The module above's safety contract applies.

use std::ptr;

use fmi_sys::fmi3::*;

use super::{Fmi3, fmi3};
use crate::cosim::{Call, CallError};
use crate::fmi::{Logger, report_without_logger, slice_in, with_component};

/// Refuse a typed access: the phase first (as for Float64), then the value references, then
/// the first of them (the model has Float64 variables only); an empty access is fine.
fn no_such(
    instance: fmi3Instance,
    function: &'static str,
    call: Call,
    kind: &'static str,
    vrs: *const fmi3ValueReference,
    nvr: usize,
) -> fmi3Status {
    fmi3(instance, function, call, |comp| {
        // SAFETY: nvr elements (contract).
        let vrs = unsafe { slice_in(vrs, nvr, "valueReferences[]")? };
        comp.no_values(kind, vrs)
    })
}

macro_rules! typed {
    ($get:ident, $set:ident, $t:ty, $kind:literal) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $get(
            instance: fmi3Instance,
            valueReferences: *const fmi3ValueReference,
            nValueReferences: usize,
            _values: *mut $t,
            _nValues: usize,
        ) -> fmi3Status {
            no_such(
                instance,
                stringify!($get),
                Call::GetValues,
                $kind,
                valueReferences,
                nValueReferences,
            )
        }

        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $set(
            instance: fmi3Instance,
            valueReferences: *const fmi3ValueReference,
            nValueReferences: usize,
            _values: *const $t,
            _nValues: usize,
        ) -> fmi3Status {
            no_such(
                instance,
                stringify!($set),
                Call::SetValues,
                $kind,
                valueReferences,
                nValueReferences,
            )
        }
    };
}

typed!(fmi3GetFloat32, fmi3SetFloat32, fmi3Float32, "Float32");
typed!(fmi3GetInt8, fmi3SetInt8, fmi3Int8, "Int8");
typed!(fmi3GetUInt8, fmi3SetUInt8, fmi3UInt8, "UInt8");
typed!(fmi3GetInt16, fmi3SetInt16, fmi3Int16, "Int16");
typed!(fmi3GetUInt16, fmi3SetUInt16, fmi3UInt16, "UInt16");
typed!(fmi3GetInt32, fmi3SetInt32, fmi3Int32, "Int32");
typed!(fmi3GetUInt32, fmi3SetUInt32, fmi3UInt32, "UInt32");
typed!(fmi3GetInt64, fmi3SetInt64, fmi3Int64, "Int64");
typed!(fmi3GetUInt64, fmi3SetUInt64, fmi3UInt64, "UInt64");
typed!(fmi3GetBoolean, fmi3SetBoolean, fmi3Boolean, "Boolean");
typed!(fmi3GetString, fmi3SetString, fmi3String, "String");

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetBinary(
    instance: fmi3Instance,
    valueReferences: *const fmi3ValueReference,
    nValueReferences: usize,
    _valueSizes: *mut usize,
    _values: *mut fmi3Binary,
    _nValues: usize,
) -> fmi3Status {
    let f = "fmi3GetBinary";
    no_such(
        instance,
        f,
        Call::GetValues,
        "Binary",
        valueReferences,
        nValueReferences,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetBinary(
    instance: fmi3Instance,
    valueReferences: *const fmi3ValueReference,
    nValueReferences: usize,
    _valueSizes: *const usize,
    _values: *const fmi3Binary,
    _nValues: usize,
) -> fmi3Status {
    let f = "fmi3SetBinary";
    no_such(
        instance,
        f,
        Call::SetValues,
        "Binary",
        valueReferences,
        nValueReferences,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetClock(
    instance: fmi3Instance,
    valueReferences: *const fmi3ValueReference,
    nValueReferences: usize,
    _values: *mut fmi3Clock,
) -> fmi3Status {
    let f = "fmi3GetClock";
    no_such(
        instance,
        f,
        Call::GetValues,
        "Clock",
        valueReferences,
        nValueReferences,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetClock(
    instance: fmi3Instance,
    valueReferences: *const fmi3ValueReference,
    nValueReferences: usize,
    _values: *const fmi3Clock,
) -> fmi3Status {
    let f = "fmi3SetClock";
    no_such(
        instance,
        f,
        Call::SetValues,
        "Clock",
        valueReferences,
        nValueReferences,
    )
}

/// Refuse a function this FMU does not provide, with why.
fn refuse(instance: fmi3Instance, function: &'static str, why: &'static str) -> fmi3Status {
    with_component::<Fmi3, _>(instance, function, |_| Err(CallError(why.into())))
}

const NO_CLOCKS: &str = "this FMU has no clocks";

macro_rules! clock_query {
    ($name:ident, $($arg:ident: $t:ty),*) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(instance: fmi3Instance, $($arg: $t),*) -> fmi3Status {
            $(let _ = $arg;)*
            refuse(instance, stringify!($name), NO_CLOCKS)
        }
    };
}

clock_query!(fmi3GetIntervalDecimal, _vrs: *const fmi3ValueReference, _n: usize,
    _intervals: *mut fmi3Float64, _qualifiers: *mut fmi3IntervalQualifier);
clock_query!(fmi3GetIntervalFraction, _vrs: *const fmi3ValueReference, _n: usize,
    _counters: *mut fmi3UInt64, _resolutions: *mut fmi3UInt64,
    _qualifiers: *mut fmi3IntervalQualifier);
clock_query!(fmi3GetShiftDecimal, _vrs: *const fmi3ValueReference, _n: usize,
    _shifts: *mut fmi3Float64);
clock_query!(fmi3GetShiftFraction, _vrs: *const fmi3ValueReference, _n: usize,
    _counters: *mut fmi3UInt64, _resolutions: *mut fmi3UInt64);
clock_query!(fmi3SetIntervalDecimal, _vrs: *const fmi3ValueReference, _n: usize,
    _intervals: *const fmi3Float64);
clock_query!(fmi3SetIntervalFraction, _vrs: *const fmi3ValueReference, _n: usize,
    _counters: *const fmi3UInt64, _resolutions: *const fmi3UInt64);
clock_query!(fmi3SetShiftDecimal, _vrs: *const fmi3ValueReference, _n: usize,
    _shifts: *const fmi3Float64);
clock_query!(fmi3SetShiftFraction, _vrs: *const fmi3ValueReference, _n: usize,
    _counters: *const fmi3UInt64, _resolutions: *const fmi3UInt64);
clock_query!(fmi3EvaluateDiscreteStates,);
clock_query!(fmi3ActivateModelPartition, _clock: fmi3ValueReference, _time: fmi3Float64);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterConfigurationMode(instance: fmi3Instance) -> fmi3Status {
    refuse(
        instance,
        "fmi3EnterConfigurationMode",
        "this FMU has no structural parameters (no Configuration Mode)",
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3ExitConfigurationMode(instance: fmi3Instance) -> fmi3Status {
    refuse(
        instance,
        "fmi3ExitConfigurationMode",
        "this FMU has no structural parameters (no Configuration Mode)",
    )
}

const NO_DEPENDENCIES: &str = "run-time dependency queries are not provided: <ModelStructure> \
                               in modelDescription.xml lists every dependency";

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNumberOfVariableDependencies(
    instance: fmi3Instance,
    _valueReference: fmi3ValueReference,
    _nDependencies: *mut usize,
) -> fmi3Status {
    refuse(
        instance,
        "fmi3GetNumberOfVariableDependencies",
        NO_DEPENDENCIES,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetVariableDependencies(
    instance: fmi3Instance,
    _dependent: fmi3ValueReference,
    _elementIndicesOfDependent: *mut usize,
    _independents: *mut fmi3ValueReference,
    _elementIndicesOfIndependents: *mut usize,
    _dependencyKinds: *mut fmi3DependencyKind,
    _nDependencies: usize,
) -> fmi3Status {
    refuse(instance, "fmi3GetVariableDependencies", NO_DEPENDENCIES)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetAdjointDerivative(
    instance: fmi3Instance,
    _unknowns: *const fmi3ValueReference,
    _nUnknowns: usize,
    _knowns: *const fmi3ValueReference,
    _nKnowns: usize,
    _seed: *const fmi3Float64,
    _nSeed: usize,
    _sensitivity: *mut fmi3Float64,
    _nSensitivity: usize,
) -> fmi3Status {
    refuse(
        instance,
        "fmi3GetAdjointDerivative",
        "adjoint derivatives are not provided (providesAdjointDerivatives=\"false\"); \
         fmi3GetDirectionalDerivative is",
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3InstantiateScheduledExecution(
    _instanceName: fmi3String,
    _instantiationToken: fmi3String,
    _resourcePath: fmi3String,
    _visible: fmi3Boolean,
    _loggingOn: fmi3Boolean,
    instanceEnvironment: fmi3InstanceEnvironment,
    logMessage: fmi3LogMessageCallback,
    _clockUpdate: fmi3ClockUpdateCallback,
    _lockPreemption: fmi3LockPreemptionCallback,
    _unlockPreemption: fmi3UnlockPreemptionCallback,
) -> fmi3Instance {
    let message = "fmi3InstantiateScheduledExecution: this FMU offers Co-Simulation and Model \
                   Exchange, not Scheduled Execution";
    if logMessage.is_some() {
        let log = Logger::<Fmi3>::new("", logMessage, instanceEnvironment, false);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| log.error(message)));
    } else {
        report_without_logger::<Fmi3>(message);
    }
    ptr::null_mut()
}
