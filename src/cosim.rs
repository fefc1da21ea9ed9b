//! The co-simulation view of a model: a flat table of variables (name, value reference,
//! causality, variability, unit) that the FMI layer and `fmu-build` use without knowing any
//! component. Parameters are discovered generically from the model file: every numeric key of
//! every component is a parameter `<component>.<key>`.

use sha2::{Digest, Sha256};

use crate::model::{LoadedModel, ModelFile};
use crate::variables::output_variables;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Causality {
    Independent,
    Parameter,
    Input,
    Output,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variability {
    Fixed,
    Discrete,
    Continuous,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub name: String,
    pub value_reference: u32,
    pub causality: Causality,
    pub variability: Variability,
    /// Unit symbol as written in UnitDefinitions ("Pa", "m3", "kg/s", "1" = dimensionless).
    pub unit: String,
    pub description: String,
    /// Start value (parameters and inputs: `initial="exact"`); outputs have none (calculated).
    pub start: Option<f64>,
}

/// Everything a modelDescription.xml needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    pub model_name: String,
    pub description: String,
    pub guid: String,
    pub variables: Vec<Variable>,
    pub start_time_s: f64,
    pub stop_time_s: f64,
    /// Default communication step = the model's output interval.
    pub step_size_s: f64,
}

/// Log categories the FMU understands (`fmi2SetDebugLogging`).
pub const LOG_CATEGORIES: &[(&str, &str)] = &[
    (
        "logStatusWarning",
        "run-time check warnings (codes 4, 5, 8, 9) and other warnings",
    ),
    (
        "logStatusDiscard",
        "steps refused by run-time checks 2 and 3",
    ),
    (
        "logStatusError",
        "errors: bad calls, bad values, bad state blobs",
    ),
    ("logStatusFatal", "fatal errors"),
    ("logEvents", "piston exits and the end of the run"),
    ("logCalls", "every fmi2 call (verbose)"),
];

/// GUID of a model: the SHA-256 of the exact model file bytes, written as a UUID-shaped string,
/// so a modelDescription.xml is tied to the resources/model.toml it was built from.
pub fn guid_of(model_toml: &[u8]) -> String {
    let d = Sha256::digest(model_toml);
    let h: String = d.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{{{}-{}-{}-{}-{}}}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Unit of a component key, by the key's name (the model file's keys are SI, DESIGN.md).
pub fn unit_of_key(key: &str) -> &'static str {
    match key {
        "volume" => "m3",
        "pressure" | "friction_static" | "friction_dynamic" => "Pa",
        "temperature" => "K",
        "area" => "m2",
        "mass" => "kg",
        "x0" | "x_exit" | "spring_x0" => "m",
        "v0" | "velocity" => "m/s",
        "coefficient" => "kg/(s.Pa)",
        "spring_stiffness" => "N/m",
        "damping" => "N.s/m",
        "heat_transfer_coefficient" => "W/(m2.K)",
        "expansion_coefficient" => "m/(s.Pa)",
        _ => "1",
    }
}

/// Every numeric scalar key of every component: (`<component>.<key>`, value, unit), in file
/// order of kinds and components, keys sorted.
pub fn parameters(spec: &ModelFile) -> Vec<(String, f64, &'static str)> {
    let mut out = Vec::new();
    let Ok(toml::Value::Table(root)) = toml::Value::try_from(spec) else {
        return out;
    };
    for kind in ["chamber", "reservoir", "orifice", "valve", "piston", "wall"] {
        let Some(toml::Value::Array(items)) = root.get(kind) else {
            continue;
        };
        for item in items {
            let toml::Value::Table(t) = item else {
                continue;
            };
            let Some(toml::Value::String(name)) = t.get("name") else {
                continue;
            };
            let mut keys: Vec<(&String, f64)> = t
                .iter()
                .filter_map(|(k, v)| match v {
                    toml::Value::Float(f) => Some((k, *f)),
                    toml::Value::Integer(i) => Some((k, *i as f64)),
                    _ => None,
                })
                .collect();
            keys.sort_by(|a, b| a.0.cmp(b.0));
            for (k, v) in keys {
                out.push((format!("{name}.{k}"), v, unit_of_key(k)));
            }
        }
    }
    out
}

/// The variable table of a loaded model. Value references are the indices in this table:
/// outputs (with `time` first), then parameters, then inputs.
pub fn describe(model: &LoadedModel) -> Description {
    let spec = &model.spec;
    let sim = crate::model::build_simulation(spec, None);
    let mut variables = Vec::new();
    if let Ok(sim) = &sim {
        for v in output_variables(sim) {
            let (causality, variability) = match v.name.as_str() {
                "time" => (Causality::Independent, Variability::Continuous),
                n if n == "rc" || n.ends_with(".exited") => {
                    (Causality::Output, Variability::Discrete)
                }
                _ => (Causality::Output, Variability::Continuous),
            };
            variables.push(Variable {
                name: v.name,
                value_reference: 0,
                causality,
                variability,
                unit: v.unit.to_string(),
                description: v.description,
                start: None,
            });
        }
    }
    let inputs = &spec.inputs.names;
    for (name, value, unit) in parameters(spec) {
        let is_input = inputs.contains(&name);
        variables.push(Variable {
            description: if is_input {
                format!("input {name}: settable between steps")
            } else {
                format!("parameter {name}: settable until initialization ends")
            },
            name,
            value_reference: 0,
            causality: if is_input {
                Causality::Input
            } else {
                Causality::Parameter
            },
            variability: if is_input {
                Variability::Continuous
            } else {
                Variability::Fixed
            },
            unit: unit.to_string(),
            start: Some(value),
        });
    }
    // Inputs after parameters, as documented.
    variables.sort_by_key(|v| match v.causality {
        Causality::Independent | Causality::Output => 0,
        Causality::Parameter => 1,
        Causality::Input => 2,
    });
    for (i, v) in variables.iter_mut().enumerate() {
        v.value_reference = i as u32;
    }
    let start = spec.solver.t_start;
    let stop = spec.solver.t_end;
    Description {
        model_name: spec.model.name.clone(),
        description: spec.model.description.clone(),
        guid: guid_of(model.source.as_bytes()),
        variables,
        start_time_s: start,
        stop_time_s: stop,
        step_size_s: spec
            .solver
            .output_interval
            .unwrap_or((stop - start) / 100.0),
    }
}
