//! The variable table of a model: what modelDescription.xml lists and the instance serves.

use sha2::{Digest, Sha256};

use crate::model::{LoadedModel, ModelFile};
use crate::units::Unit;
use crate::variables::output_variables;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Causality {
    Independent,
    Parameter,
    Input,
    Output,
    /// A continuous state that is no output (a wall's swept volume, the accumulators) or a
    /// state's derivative.
    Local,
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
    /// Unit from the quantity type: its symbol as written in UnitDefinitions ("Pa", "m3", "kg/s",
    /// "1" = dimensionless) and its SI exponents (`BaseUnit`).
    pub unit: Unit,
    pub description: String,
    /// Start value (parameters and inputs: `initial="exact"`); outputs have none (calculated).
    pub start: Option<f64>,
    /// A state's derivative: the value reference of the state.
    pub derivative_of: Option<u32>,
    /// A continuous state's nominal value (its scale for a master's error weights), where it
    /// is not 1.
    pub nominal: Option<f64>,
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
    /// Default relative tolerance of an importer's integration = the model's own `rtol`, at
    /// which the shipped models integrate in Model Exchange without tripping the drift checks.
    pub tolerance: f64,
    /// Model Exchange is offered (every model but those with `[sensitivities]`).
    pub model_exchange: bool,
    /// Value references of the continuous states, in the state vector's order (empty without
    /// Model Exchange), and of their derivatives.
    pub states: Vec<u32>,
    pub derivatives: Vec<u32>,
    /// Number of event indicators (the network's event functions).
    pub event_indicators: usize,
}

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

/// Every number of every component: (`<component>.<key>`, value, unit), kind by kind in the
/// registry's order, components in file order, keys sorted: the numbers the file gives and the
/// ones its kinds fill in (`crate::components::keys`), each with its key's declared unit; a
/// cubic schedule's times as `<component>.<key>.t_open` and `.duration` (s); then the solver's
/// tolerances `solver.rtol` and `solver.atol` (as the run uses them).
pub fn parameters(spec: &ModelFile) -> Vec<(String, f64, Unit)> {
    let mut out = Vec::new();
    let number = |v: &toml::Value| match v {
        toml::Value::Float(f) => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    };
    for (_, x) in spec.components() {
        let table = x.to_table();
        let mut keys: Vec<(&String, f64)> = table
            .iter()
            .filter_map(|(k, v)| number(v).map(|f| (k, f)))
            .collect();
        keys.sort_by(|a, b| a.0.cmp(b.0));
        for (k, v) in keys {
            let unit = x
                .kind()
                .key(k)
                .map_or_else(Unit::dimensionless, |k| k.unit());
            out.push((format!("{}.{k}", x.name()), v, unit));
        }
        let mut cubics: Vec<(&String, &toml::Table)> = table
            .iter()
            .filter_map(|(k, v)| Some((k, v.get(CUBIC)?.as_table()?)))
            .collect();
        cubics.sort_by(|a, b| a.0.cmp(b.0));
        for (k, times) in cubics {
            for t in CUBIC_TIMES {
                if let Some(v) = times.get(t).and_then(number) {
                    out.push((format!("{}.{k}.{t}", x.name()), v, Unit::time()));
                }
            }
        }
    }
    let s = &spec.solver;
    for (k, v) in [
        ("rtol", s.rtol.unwrap_or(crate::integrators::DEFAULT_RTOL)),
        ("atol", s.atol.unwrap_or(crate::integrators::DEFAULT_ATOL)),
    ] {
        out.push((format!("solver.{k}"), v, Unit::dimensionless()));
    }
    out
}

/// A cubic schedule's key (`opening = { cubic = { t_open = …, duration = … } }`) and its times.
const CUBIC: &str = "cubic";
const CUBIC_TIMES: [&str; 2] = ["t_open", "duration"];

/// The model-file override that sets parameter `name` = `x` (`name=x`), or, for a cubic
/// schedule's time `<component>.<key>.t_open` or `.duration`, the whole schedule with the other
/// time as `current` gives it (`<component>.<key>={ cubic = { … } }`): an override sets one
/// key of a component.
pub fn parameter_override(name: &str, x: f64, current: impl Fn(&str) -> Option<f64>) -> String {
    if let Some((schedule, t)) = name.rsplit_once('.')
        && CUBIC_TIMES.contains(&t)
        && schedule.contains('.')
    {
        let other = if t == "t_open" { "duration" } else { "t_open" };
        if let Some(y) = current(&format!("{schedule}.{other}")) {
            let (t_open, duration) = if t == "t_open" { (x, y) } else { (y, x) };
            return format!(
                "{schedule}={{ {CUBIC} = {{ t_open = {t_open:?}, duration = {duration:?} }} }}"
            );
        }
    }
    format!("{name}={x:?}")
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
                n if crate::variables::is_discrete_output(n) => {
                    (Causality::Output, Variability::Discrete)
                }
                _ => (Causality::Output, Variability::Continuous),
            };
            variables.push(Variable {
                name: v.name,
                value_reference: 0,
                causality,
                variability,
                unit: v.unit,
                description: v.description,
                start: None,
                derivative_of: None,
                nominal: None,
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
            unit,
            start: Some(value),
            derivative_of: None,
            nominal: None,
        });
    }
    // Inputs after parameters, as documented.
    variables.sort_by_key(|v| match v.causality {
        Causality::Independent | Causality::Output => 0,
        Causality::Parameter => 1,
        Causality::Input => 2,
        Causality::Local => 3,
    });
    for (i, v) in variables.iter_mut().enumerate() {
        v.value_reference = i as u32;
    }
    let start = spec.solver.t_start;
    let stop = spec.solver.t_end;
    let mut d = Description {
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
        tolerance: spec.solver.rtol.unwrap_or(crate::integrators::DEFAULT_RTOL),
        model_exchange: false,
        states: Vec::new(),
        derivatives: Vec::new(),
        event_indicators: 0,
    };
    if let Ok(sim) = &sim {
        super::exchange::extend_description(&mut d, sim);
    }
    d
}
