//! The model file as data: what a `.toml` model deserializes into, before validation.
//!
//! Field names are the keys of DESIGN.md's model file; units are SI and given per field.

use serde::{Deserialize, Serialize};

use crate::param::{Cubic, Interpolation, Param, ParamValue, Table};

/// A scalar that may be a constant or a time table:
/// `pressure = 2e5` or `pressure = { table = [[0.0, 0.0], [0.1, 2000.0]], interpolation = "step" }`,
/// or, for a valve's `opening` only, BlasterSim's cubic opening curve
/// `opening = { cubic = { t_open = 0.01, duration = 0.005 } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamSpec {
    Const(f64),
    Table(TableSpec),
    Cubic(CubicSpec),
}

/// `{ cubic = { t_open = 0.01, duration = 0.005 } }`: 0 before `t_open` (s), 3s² − 2s³ with
/// s = (t − t_open)/duration during the opening, 1 after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CubicSpec {
    pub cubic: CubicTimes,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CubicTimes {
    /// Time the opening starts, s.
    pub t_open: f64,
    /// Opening time, s.
    pub duration: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Rows of `[time_s, value]`.
    pub table: Vec<[f64; 2]>,
    #[serde(default = "default_interpolation")]
    pub interpolation: Interpolation,
}

fn default_interpolation() -> Interpolation {
    Interpolation::Linear
}

impl ParamSpec {
    pub fn to_param<Q>(&self) -> Param<Q> {
        let raw = match self {
            ParamSpec::Const(v) => ParamValue::Const(*v),
            ParamSpec::Table(t) => ParamValue::Table(Box::new(Table {
                times_s: t.table.iter().map(|r| r[0]).collect(),
                values: t.table.iter().map(|r| r[1]).collect(),
                interpolation: t.interpolation,
            })),
            ParamSpec::Cubic(c) => ParamValue::Cubic(Cubic {
                t_open_s: c.cubic.t_open,
                duration_s: c.cubic.duration,
            }),
        };
        raw.into()
    }

    pub fn as_const(&self) -> Option<f64> {
        match self {
            ParamSpec::Const(v) => Some(*v),
            ParamSpec::Table(_) | ParamSpec::Cubic(_) => None,
        }
    }

    pub fn values(&self) -> Vec<f64> {
        match self {
            ParamSpec::Const(v) => vec![*v],
            ParamSpec::Table(t) => t.table.iter().map(|r| r[1]).collect(),
            ParamSpec::Cubic(_) => vec![0.0, 1.0],
        }
    }
}

impl From<f64> for ParamSpec {
    fn from(v: f64) -> Self {
        ParamSpec::Const(v)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    pub model: ModelSection,
    #[serde(default)]
    pub gas: Option<GasSection>,
    pub solver: SolverSection,
    #[serde(default)]
    pub checks: ChecksSection,
    #[serde(default)]
    pub inputs: InputsSection,
    #[serde(default, skip_serializing_if = "SensitivitiesSection::is_empty")]
    pub sensitivities: SensitivitiesSection,
    #[serde(default)]
    pub chamber: Vec<ChamberSpec>,
    #[serde(default)]
    pub reservoir: Vec<ReservoirSpec>,
    #[serde(default)]
    pub orifice: Vec<OrificeSpec>,
    #[serde(default)]
    pub valve: Vec<ValveSpec>,
    #[serde(default)]
    pub piston: Vec<PistonSpec>,
    #[serde(default)]
    pub wall: Vec<WallSpec>,
    #[serde(default)]
    pub mass_flow: Vec<MassFlowSpec>,
    #[serde(default)]
    pub restrictor: Vec<RestrictorSpec>,
    #[serde(default)]
    pub tube: Vec<TubeSpec>,
    #[serde(default)]
    pub inertance_valve: Vec<InertanceValveSpec>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// `species = "air"`, or `R` and `cp` (J/(kg·K)) with optional critical point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GasSection {
    pub species: Option<String>,
    #[serde(rename = "R")]
    pub r: Option<f64>,
    pub cp: Option<f64>,
    pub p_critical: Option<f64>,
    #[serde(rename = "T_critical")]
    pub t_critical: Option<f64>,
    /// Chambers keep their initial temperature (FONSim's isothermal containers).
    #[serde(default, skip_serializing_if = "is_false")]
    pub isothermal: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverSection {
    #[serde(default = "default_method")]
    pub method: String,
    /// Fixed step, s (fixed-step methods).
    pub step: Option<f64>,
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
    pub max_step: Option<f64>,
    pub initial_step: Option<f64>,
    /// Most accepted adaptive steps in one advance (one FMU communication step, one CLI output
    /// interval) before the run stops with an error: CVODE's `mxstep`, so that no input can
    /// make one call run without end.
    #[serde(default = "default_max_steps")]
    pub max_steps: u64,
    /// Newton Jacobian of the implicit methods: "exact" (dual numbers, the default) or
    /// "finite-difference".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jacobian: Option<String>,
    /// How the BDF solves its Newton systems: "auto" (the default), "dense", "band", "sparse"
    /// or "krylov".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear_solver: Option<String>,
    #[serde(default)]
    pub t_start: f64,
    pub t_end: f64,
    /// Output (and default FMU communication) interval, s; default (t_end − t_start)/100.
    pub output_interval: Option<f64>,
    /// Run-time check 1 fires when a piston with `x_exit` has not exited by this time, s.
    pub max_time: Option<f64>,
    /// End the run when every piston with an `x_exit` has exited. Unset: the command line ends
    /// its run there, the FMU does not (a master runs the default experiment to its stop time);
    /// only an explicit `true` makes the FMU end the co-simulation at the exit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_on_exit: Option<bool>,
}

/// CVODE's default `mxstep` is 500 per output call; Plenum's calls may span a whole run (one
/// fmi2DoStep over the whole experiment), so the guard is set far above any shipped model's
/// needs (the stiffest takes a few thousand steps per run) and still ends a runaway call in
/// well under a second of release-build time.
pub const DEFAULT_MAX_STEPS: u64 = 100_000;

pub fn default_max_steps() -> u64 {
    DEFAULT_MAX_STEPS
}

fn default_method() -> String {
    "auto".to_string()
}

/// Thresholds of the run-time checks (BlasterSim's defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecksSection {
    /// Check 4: |m_total − m_total,0| / m_total,0.
    #[serde(default = "default_mass_drift")]
    pub mass_drift: f64,
    /// Check 5: |E_total − E_total,0| / |E_total,0|.
    #[serde(default = "default_energy_drift")]
    pub energy_drift: f64,
    /// Check 9: piston-coordinate desynchronization, m (multiplied by the piston area).
    #[serde(default = "default_desync")]
    pub piston_desync: f64,
    /// Check 6 (sensitivity runs): |d m_total/dp − its initial value|·|p| / m_total,0.
    #[serde(default = "default_mass_drift")]
    pub mass_gradient_drift: f64,
    /// Check 7 (sensitivity runs): |d E_total/dp − its initial value|·|p| / |E_total,0|.
    #[serde(default = "default_energy_drift")]
    pub energy_gradient_drift: f64,
}

fn default_mass_drift() -> f64 {
    1e-5
}
fn default_energy_drift() -> f64 {
    1e-4
}
fn default_desync() -> f64 {
    1e-12
}

impl Default for ChecksSection {
    fn default() -> Self {
        ChecksSection {
            mass_drift: default_mass_drift(),
            energy_drift: default_energy_drift(),
            piston_desync: default_desync(),
            mass_gradient_drift: default_mass_drift(),
            energy_gradient_drift: default_energy_drift(),
        }
    }
}

/// Forward parameter sensitivities (see `crate::sensitivity`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SensitivitiesSection {
    /// `<component>.<key>` parameters to differentiate every state and output with respect to.
    #[serde(default)]
    pub parameters: Vec<String>,
}

impl SensitivitiesSection {
    pub fn is_empty(&self) -> bool {
        self.parameters.is_empty()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputsSection {
    #[serde(default)]
    pub names: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChamberSpec {
    pub name: String,
    /// Dead volume, m³ (pistons add or remove area·x).
    pub volume: f64,
    /// Initial pressure, Pa (absolute).
    pub pressure: f64,
    /// Initial temperature, K.
    pub temperature: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReservoirSpec {
    pub name: String,
    pub pressure: ParamSpec,
    pub temperature: ParamSpec,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrificeSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    /// Geometric area, m² (isentropic form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub area: Option<ParamSpec>,
    /// 0..1, default 1 (isentropic form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discharge_coefficient: Option<ParamSpec>,
    /// C, m³/(s·Pa) (ISO 6358 form, instead of `area`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sonic_conductance: Option<ParamSpec>,
    /// b, 0 ≤ b < 0.999 (ISO 6358 form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_pressure_ratio: Option<ParamSpec>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValveSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    /// kg/(s·Pa).
    pub coefficient: ParamSpec,
    #[serde(default)]
    pub one_way: bool,
    /// Fraction open, 0..1: a number, a table or `{ cubic = { t_open, duration } }`.
    #[serde(default = "default_opening")]
    pub opening: ParamSpec,
}

fn default_opening() -> ParamSpec {
    ParamSpec::Const(1.0)
}

fn default_zero_param() -> ParamSpec {
    ParamSpec::Const(0.0)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PistonSpec {
    pub name: String,
    /// The node whose volume grows by area·x.
    pub behind: String,
    /// The node whose volume shrinks by area·x.
    pub ahead: String,
    /// m².
    pub area: f64,
    /// kg.
    pub mass: f64,
    /// Initial position, m.
    pub x0: f64,
    /// Initial velocity, m/s.
    #[serde(default)]
    pub v0: f64,
    /// Exit position, m: crossing it is an event.
    pub x_exit: Option<f64>,
    /// Static and dynamic friction, expressed as pressures on the area, Pa.
    #[serde(default = "default_zero_param")]
    pub friction_static: ParamSpec,
    #[serde(default = "default_zero_param")]
    pub friction_dynamic: ParamSpec,
    /// N/m, and the position where the spring force is zero, m.
    #[serde(default)]
    pub spring_stiffness: f64,
    #[serde(default)]
    pub spring_x0: f64,
    /// Linear damping, N·s/m.
    #[serde(default = "default_zero_param")]
    pub damping: ParamSpec,
    /// End stops, m: reaching one is an impact (an event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_max: Option<f64>,
    /// Coefficient of restitution at the stops, 0..1 (0: the piston stays at the stop).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restitution: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallSpec {
    pub name: String,
    pub left: String,
    pub right: String,
    /// m².
    pub area: ParamSpec,
    /// U, W/(m²·K).
    #[serde(default = "default_zero_param")]
    pub heat_transfer_coefficient: ParamSpec,
    /// K, m/(s·Pa): wall velocity K·(p_left − p_right).
    #[serde(default = "default_zero_param")]
    pub expansion_coefficient: ParamSpec,
    /// Prescribed velocity, m/s (positive grows `left`).
    #[serde(default = "default_zero_param")]
    pub velocity: ParamSpec,
}

/// A prescribed mass flow (Cantera's MassFlowController).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MassFlowSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    /// kg/s, ≥ 0.
    pub rate: ParamSpec,
}

/// FONSim's FlowRestrictor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestrictorSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    /// Diameter d, m.
    pub diameter: ParamSpec,
    /// K-factor (minor loss coefficient).
    pub k: ParamSpec,
}

/// FONSim's CircularTube.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TubeSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    /// m.
    pub length: ParamSpec,
    /// Inner diameter, m.
    pub diameter: ParamSpec,
    /// Wall roughness ε, m (FONSim's default 1.5e-6).
    #[serde(default = "default_roughness")]
    pub roughness: ParamSpec,
    /// Dynamic viscosity μ, Pa·s (FONSim's air: 1.82e-5).
    #[serde(default = "default_viscosity")]
    pub viscosity: ParamSpec,
}

fn default_roughness() -> ParamSpec {
    ParamSpec::Const(0.0015e-3)
}

fn default_viscosity() -> ParamSpec {
    ParamSpec::Const(1.82e-5)
}

/// CircAdapt's Valve between two reservoirs holding liquid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InertanceValveSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    /// Liquid density ρ, kg/m³.
    pub density: f64,
    /// m².
    pub area_open: ParamSpec,
    pub area_leak: ParamSpec,
    pub area_from: ParamSpec,
    pub area_to: ParamSpec,
    /// m.
    pub length: ParamSpec,
    /// Initial volume flow, m³/s.
    #[serde(default)]
    pub q0: f64,
}
