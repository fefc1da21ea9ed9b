//! The model file as data: what a `.toml` model deserializes into, before validation.
//!
//! Field names are the keys of DESIGN.md's model file; units are SI and given per field.

use serde::{Deserialize, Serialize};

use crate::param::{Interpolation, Param, Table};

/// A scalar that may be a constant or a time table:
/// `pressure = 2e5` or `pressure = { table = [[0.0, 0.0], [0.1, 2000.0]], interpolation = "step" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamSpec {
    Const(f64),
    Table(TableSpec),
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
    pub fn to_param(&self) -> Param {
        match self {
            ParamSpec::Const(v) => Param::Const(*v),
            ParamSpec::Table(t) => Param::Table(Table {
                times_s: t.table.iter().map(|r| r[0]).collect(),
                values: t.table.iter().map(|r| r[1]).collect(),
                interpolation: t.interpolation,
            }),
        }
    }

    pub fn as_const(&self) -> Option<f64> {
        match self {
            ParamSpec::Const(v) => Some(*v),
            ParamSpec::Table(_) => None,
        }
    }

    pub fn values(&self) -> Vec<f64> {
        match self {
            ParamSpec::Const(v) => vec![*v],
            ParamSpec::Table(t) => t.table.iter().map(|r| r[1]).collect(),
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
    #[serde(default)]
    pub t_start: f64,
    pub t_end: f64,
    /// Output (and default FMU communication) interval, s; default (t_end − t_start)/100.
    pub output_interval: Option<f64>,
    /// Run-time check 1 fires when a piston with `x_exit` has not exited by this time, s.
    pub max_time: Option<f64>,
    #[serde(default = "default_true")]
    pub stop_on_exit: bool,
}

fn default_method() -> String {
    "auto".to_string()
}

fn default_true() -> bool {
    true
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
        }
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
    /// Geometric area, m².
    pub area: f64,
    #[serde(default = "default_one")]
    pub discharge_coefficient: f64,
}

fn default_one() -> f64 {
    1.0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValveSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    /// kg/(s·Pa).
    pub coefficient: f64,
    #[serde(default)]
    pub one_way: bool,
    /// Fraction open, 0..1.
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
    #[serde(default)]
    pub friction_static: f64,
    #[serde(default)]
    pub friction_dynamic: f64,
    /// N/m, and the position where the spring force is zero, m.
    #[serde(default)]
    pub spring_stiffness: f64,
    #[serde(default)]
    pub spring_x0: f64,
    /// Linear damping, N·s/m.
    #[serde(default)]
    pub damping: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallSpec {
    pub name: String,
    pub left: String,
    pub right: String,
    /// m².
    pub area: f64,
    /// U, W/(m²·K).
    #[serde(default)]
    pub heat_transfer_coefficient: f64,
    /// K, m/(s·Pa): wall velocity K·(p_left − p_right).
    #[serde(default)]
    pub expansion_coefficient: f64,
    /// Prescribed velocity, m/s (positive grows `left`).
    #[serde(default = "default_zero_param")]
    pub velocity: ParamSpec,
}
