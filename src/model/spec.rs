//! The model file as data: what a `.toml` model deserializes into, before validation.
//!
//! Field names are the model file's keys (docs/model-file.md); units are SI and given per field.

use serde::{Deserialize, Serialize};

use crate::components::keys::Spec;
pub use crate::param::{CubicSpec, CubicTimes, ParamSpec, TableSpec};

/// The model file: its sections, then one list per component kind of the registry
/// (`crate::with_kinds!`), each declared in its own file (`crate::components`).
macro_rules! model_file {
    ($($kind:ident => $Spec:ident,)* ; $($part:ident => $PartSpec:ident),* $(,)?) => {
        $(pub use crate::components::$kind::$Spec;)*
        $(pub use super::parts::$part::$PartSpec;)*

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
            $(
                #[serde(default)]
                pub $kind: Vec<$Spec>,
            )*
            /// What each part of the file became (`super::parts::expand`), for `plenum
            /// describe`; not written back.
            #[serde(skip)]
            pub expanded: Vec<super::parts::Expanded>,
            $(
                /// A part's list (`super::parts`): empty once the model is read.
                #[serde(default, skip_serializing_if = "Vec::is_empty")]
                pub $part: Vec<$PartSpec>,
            )*
        }

        impl ModelFile {
            /// Every component with its index within its kind, kind by kind in the registry's
            /// order, in file order within a kind.
            pub fn components(&self) -> Vec<(usize, &dyn Spec)> {
                let mut out: Vec<(usize, &dyn Spec)> = Vec::new();
                $(
                    out.extend(
                        self.$kind.iter().enumerate().map(|(i, c)| (i, c as &dyn Spec)),
                    );
                )*
                out
            }

            /// Every part with its index within its list, part by part in the registry's
            /// order (`super::parts`), in file order within a part.
            pub fn parts(&self) -> Vec<(usize, &dyn super::parts::Part)> {
                let mut out: Vec<(usize, &dyn super::parts::Part)> = Vec::new();
                $(
                    out.extend(
                        self.$part
                            .iter()
                            .enumerate()
                            .map(|(i, c)| (i, c as &dyn super::parts::Part)),
                    );
                )*
                out
            }
        }
    };
}
/// The kinds' lists, then `;` and the parts' (`crate::with_parts!`).
macro_rules! model_file_with_parts {
    ($($kind:ident => $Spec:ident),* $(,)?) => {
        crate::with_parts!(model_file $($kind => $Spec,)* ;);
    };
}
crate::with_kinds!(model_file_with_parts);

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
    #[serde(
        default = "default_max_steps",
        deserialize_with = "whole_number_from_1"
    )]
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

pub use crate::simulation::{DEFAULT_MAX_STEPS, default_max_steps};

/// A whole number ≥ 1 (`max_steps`): serde's `u64` would tell a user "expected u64".
fn whole_number_from_1<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    use serde::de::{Error, Unexpected, Visitor};
    struct WholeFrom1;
    impl Visitor<'_> for WholeFrom1 {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a whole number ≥ 1")
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<u64, E> {
            if v >= 1 {
                Ok(v)
            } else {
                Err(E::invalid_value(Unexpected::Unsigned(v), &self))
            }
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<u64, E> {
            match u64::try_from(v) {
                Ok(u) => self.visit_u64(u),
                Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
            }
        }
        fn visit_f64<E: Error>(self, v: f64) -> Result<u64, E> {
            Err(E::invalid_type(Unexpected::Float(v), &self))
        }
    }
    d.deserialize_u64(WholeFrom1)
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
