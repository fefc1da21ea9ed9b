//! `plenum.Model`: a model file loaded and validated, its values overridden as `plenum run
//! --set` overrides them; runs, simulations and FMUs made from it.

use std::path::PathBuf;

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::errors::{detached, guarded, model_error, model_error_text, raise};
use crate::facade::{self, LoadedModel, ModelError};
use crate::simulation::Simulation;

/// A Plenum model: a network read from a model file (TOML, docs/model-file.md), validated, with
/// values overridden by :meth:`set` as ``plenum run --set`` does.
///
/// Make one with :meth:`from_file`, :meth:`from_toml` or :meth:`from_dict`; run it whole with
/// :meth:`run`, step it with :meth:`simulation`, package it with :meth:`build_fmu`. A model is
/// picklable (its text and overrides).
#[pyclass(module = "plenum")]
pub struct Model {
    /// The model's text as read (the overrides apply to it).
    text: String,
    /// The file as messages name it.
    label: String,
    overrides: Vec<String>,
    loaded: LoadedModel,
}

impl Model {
    fn load(
        py: Python<'_>,
        text: String,
        label: String,
        overrides: Vec<String>,
    ) -> PyResult<Model> {
        let loaded = load_detached(py, &text, &label, &overrides)?;
        Ok(Model {
            text,
            label,
            overrides,
            loaded,
        })
    }

    /// The model with `extra` overrides after its own (the run's method, end time, ...).
    fn with_extra(&self, py: Python<'_>, extra: &[String]) -> PyResult<LoadedModel> {
        if extra.is_empty() {
            return Ok(self.loaded.clone());
        }
        let mut all = self.overrides.clone();
        all.extend(extra.iter().cloned());
        load_detached(py, &self.text, &self.label, &all)
    }
}

fn load_detached(
    py: Python<'_>,
    text: &str,
    label: &str,
    overrides: &[String],
) -> PyResult<LoadedModel> {
    detached(py, || facade::load(text, label, overrides))?.map_err(|e| model_error(py, &e))
}

/// A value from Python as the text of an override: numbers and booleans as TOML, a string as
/// a TOML string (a quantity with its unit, `"6 bar"`, or a name, `"bdf"`), lists and dicts as
/// TOML arrays and inline tables (time tables).
fn override_text(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let v = crate::toml_value::to_toml(value)?;
    Ok(format!("{name}={}", crate::toml_value::inline(&v)))
}

/// The name of an override (`name=value`).
fn override_name(o: &str) -> &str {
    o.split_once('=').map_or(o, |(n, _)| n)
}

#[pymethods]
impl Model {
    /// Load a model file (TOML). Raises :class:`plenum.ModelError` listing every problem with
    /// its file, line, column and key.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Model> {
        let label = path.display().to_string();
        let bytes = detached(py, || facade::read_file(&path))?
            .map_err(|m| model_error_text(py, &label, &m))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            model_error_text(
                py,
                &label,
                &format!(
                    "not valid UTF-8 (first bad byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })?;
        Model::load(py, text, label, Vec::new())
    }

    /// A model from the text of a model file; ``name`` labels it in messages.
    #[staticmethod]
    #[pyo3(signature = (text, name = "<string>"))]
    fn from_toml(py: Python<'_>, text: String, name: &str) -> PyResult<Model> {
        Model::load(py, text, name.to_string(), Vec::new())
    }

    /// A model from a dict shaped as the model file (``{"model": {...}, "solver": {...},
    /// "chamber": [{...}, ...]}``); ``name`` labels it in messages.
    #[staticmethod]
    #[pyo3(signature = (d, name = "<dict>"))]
    fn from_dict(py: Python<'_>, d: &Bound<'_, PyDict>, name: &str) -> PyResult<Model> {
        let v = crate::toml_value::to_toml(d.as_any())?;
        let text = crate::toml_value::document(&v)?;
        Model::load(py, text, name.to_string(), Vec::new())
    }

    /// Override one value, as ``plenum run --set NAME=VALUE``: ``"<component>.<key>"`` or
    /// ``"<section>.<key>"`` (``"solver.rtol"``). The value is a number in the key's SI unit,
    /// a string with a unit (``"6 bar"``, ``"20 degC"``: units as in model files), a string
    /// (``set("solver.method", "bdf")``), or a time table as a dict. Setting a name again
    /// replaces its value. The model is checked again; on an error it raises
    /// :class:`plenum.ModelError` and stays as it was. Returns the model (calls chain).
    fn set<'py>(
        mut slf: PyRefMut<'py, Self>,
        name: &str,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<PyRefMut<'py, Self>> {
        let py = slf.py();
        let entry = override_text(name, value)?;
        let mut overrides: Vec<String> = slf
            .overrides
            .iter()
            .filter(|o| override_name(o) != name)
            .cloned()
            .collect();
        overrides.push(entry);
        let loaded = load_detached(py, &slf.text, &slf.label, &overrides)?;
        slf.overrides = overrides;
        slf.loaded = loaded;
        Ok(slf)
    }

    /// The overrides set so far, as ``name=value`` texts.
    #[getter]
    fn overrides(&self) -> Vec<String> {
        self.overrides.clone()
    }

    /// The model's name (``[model] name``).
    #[getter]
    fn name(&self) -> &str {
        facade::name(&self.loaded)
    }

    /// The file the model came from (or its label).
    #[getter]
    fn file(&self) -> &str {
        &self.label
    }

    /// The model's text with the overrides applied: what an FMU built from it ships.
    #[getter]
    fn source(&self) -> &str {
        facade::source(&self.loaded)
    }

    /// Check the model as ``plenum check`` does: it is valid (or :meth:`set` would have
    /// raised) and its simulation can start (else :class:`plenum.ModelError`). Returns the
    /// plausibility warnings (values that are probably a unit mistake) as
    /// :class:`plenum.Diagnostic` objects.
    fn check(&self, py: Python<'_>) -> PyResult<Vec<Diagnostic>> {
        if let Some(why) = detached(py, || facade::cannot_start(&self.loaded))? {
            return Err(model_error_text(py, &self.label, &why));
        }
        Ok(facade::warnings(&self.loaded)
            .iter()
            .map(Diagnostic::from)
            .collect())
    }

    /// Every variable (outputs, parameters, inputs, states and derivatives) with its unit,
    /// causality and description: the FMU's variables (docs/fmu.md).
    #[getter]
    fn variables(&self, py: Python<'_>) -> PyResult<Vec<Variable>> {
        let vars = guarded(py, || facade::variables(&self.loaded))?;
        Ok(vars
            .into_iter()
            .map(|v| Variable {
                name: v.name,
                unit: v.unit,
                causality: v.causality.to_string(),
                description: v.description,
                start: v.start,
            })
            .collect())
    }

    /// Run the model through its output times, as ``plenum run`` does (the same results, bit
    /// for bit): returns a :class:`plenum.Result`. ``method``, ``t_end`` and
    /// ``output_interval`` override the ``[solver]`` section for this run. A run stopped by a
    /// run-time check (codes 1, 2, 3, 10) raises :class:`plenum.CheckFailed`, a solver
    /// failure :class:`plenum.SolverError`; both carry the rows up to there as ``.result``.
    /// The GIL is released while it runs.
    #[pyo3(signature = (method = None, t_end = None, output_interval = None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        method: Option<&str>,
        t_end: Option<f64>,
        output_interval: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut extra = Vec::new();
        if let Some(m) = method {
            extra.push(format!("solver.method={}", crate::toml_value::quoted(m)));
        }
        if let Some(t) = t_end {
            extra.push(format!("solver.t_end={}", crate::toml_value::number(t)));
        }
        if let Some(dt) = output_interval {
            extra.push(format!(
                "solver.output_interval={}",
                crate::toml_value::number(dt)
            ));
        }
        let loaded = self.with_extra(py, &extra)?;
        let run = detached(py, || facade::run(&loaded))?
            .map_err(|why| model_error_text(py, &self.label, &why))?;
        result_of(py, run)
    }

    /// A :class:`plenum.Simulation` of the model at its start time, to advance step by step
    /// (as Cantera's ``ReactorNet``); ``method`` overrides ``[solver] method``.
    #[pyo3(signature = (method = None))]
    fn simulation(&self, py: Python<'_>, method: Option<&str>) -> PyResult<Simulation> {
        let mut extra = Vec::new();
        if let Some(m) = method {
            extra.push(format!("solver.method={}", crate::toml_value::quoted(m)));
        }
        // As `plenum run` (and `Model.run`): the run ends at the exit when the file does not
        // say otherwise (an FMU goes on).
        if facade::exit_unsaid(&self.loaded) {
            extra.push("solver.stop_on_exit=true".to_string());
        }
        let loaded = self.with_extra(py, &extra)?;
        Simulation::start(py, facade::source(&loaded).to_string(), self.label.clone())
    }

    /// Write the model as an FMU (Co-Simulation and Model Exchange) at ``path`` — a file
    /// name, or a directory for ``<dir>/<model name>.fmu`` — for FMI ``fmi_version`` 2 or 3,
    /// with the Plenum libraries this package ships for ``platforms`` (default: all of them,
    /// ``["linux64", "win64"]``). Returns the FMU's path.
    #[pyo3(signature = (path, fmi_version = 2, platforms = None))]
    fn build_fmu(
        &self,
        py: Python<'_>,
        path: PathBuf,
        fmi_version: u32,
        platforms: Option<Vec<String>>,
    ) -> PyResult<String> {
        if fmi_version != 2 && fmi_version != 3 {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "fmi_version must be 2 or 3, got {fmi_version}"
            )));
        }
        let libs: Vec<PathBuf> = py
            .import("plenum._fmu")?
            .getattr("library_paths")?
            .call1((platforms,))?
            .extract()?;
        let path = if path.is_dir() {
            path.join(format!("{}.fmu", facade::name(&self.loaded)))
        } else {
            path
        };
        let built = detached(py, || {
            facade::build_fmu(&self.loaded, &libs, &path, fmi_version == 3)
        })?;
        match built {
            Ok(p) => Ok(p.display().to_string()),
            Err(facade::FmuError::Model(e)) => Err(model_error(py, &e)),
            Err(facade::FmuError::Build(m)) => Err(raise(py, "PlenumError", (m,), &[])),
        }
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let f = py.import("plenum._state")?.getattr("model_from_parts")?;
        let args = PyTuple::new(
            py,
            [
                self.text.clone().into_bound_py_any(py)?,
                self.label.clone().into_bound_py_any(py)?,
                self.overrides.clone().into_bound_py_any(py)?,
            ],
        )?;
        Ok((f, args))
    }

    /// Rebuild a model from its text, label and overrides (unpickling).
    #[staticmethod]
    fn _from_parts(
        py: Python<'_>,
        text: String,
        label: String,
        overrides: Vec<String>,
    ) -> PyResult<Model> {
        Model::load(py, text, label, overrides)
    }

    fn __repr__(&self) -> String {
        let n = self.overrides.len();
        format!(
            "<plenum.Model {:?} from {}{}>",
            facade::name(&self.loaded),
            self.label,
            match n {
                0 => String::new(),
                1 => ", 1 override".to_string(),
                _ => format!(", {n} overrides"),
            }
        )
    }
}

/// A :class:`plenum.Result` from a run; a stopped run raises with it attached.
fn result_of<'py>(py: Python<'py>, run: facade::Run) -> PyResult<Bound<'py, PyAny>> {
    let mut bytes = Vec::with_capacity(run.values.len() * 8);
    for x in &run.values {
        bytes.extend_from_slice(&x.to_ne_bytes());
    }
    let stats = PyDict::new(py);
    stats.set_item("steps", run.steps)?;
    stats.set_item("rejected_steps", run.rejected_steps)?;
    stats.set_item("rhs_evaluations", run.rhs_evaluations)?;
    stats.set_item("events", run.events)?;
    stats.set_item("solve_s", run.solve_s)?;
    stats.set_item("method", run.method)?;
    let result = py.import("plenum._result")?.getattr("Result")?.call1((
        run.names,
        run.units,
        PyBytes::new(py, &bytes),
        run.rows,
        run.rc,
        run.messages,
        stats,
        run.exit_time_s,
    ))?;
    match run.stopped {
        None => Ok(result),
        Some((0, t, message)) => Err(raise(
            py,
            "SolverError",
            (message,),
            &[("time", t.into_bound_py_any(py)?), ("result", result)],
        )),
        Some((code, t, message)) => Err(raise(
            py,
            "CheckFailed",
            (message,),
            &[
                ("code", code.into_bound_py_any(py)?),
                ("time", t.into_bound_py_any(py)?),
                ("result", result),
            ],
        )),
    }
}

/// The platforms whose FMU libraries exist (the names `build_fmu` takes).
#[pyfunction]
pub fn platforms() -> Vec<&'static str> {
    facade::platform_names()
}

/// One variable of a model: its name, unit (SI, as the FMU declares it: ``"Pa"``,
/// ``"kg/s"``, ``"1"``), causality (``"independent"``, ``"output"``, ``"parameter"``,
/// ``"input"``, ``"local"``), description and start value (parameters and inputs).
#[pyclass(module = "plenum", frozen, get_all)]
pub struct Variable {
    name: String,
    unit: String,
    causality: String,
    description: String,
    start: Option<f64>,
}

#[pymethods]
impl Variable {
    fn __repr__(&self) -> String {
        format!(
            "Variable({:?}, unit={:?}, causality={:?})",
            self.name, self.unit, self.causality
        )
    }
}

/// A problem (or warning) found in a model: the file, the 1-based line and column (0: no
/// position, such as an override's problem), the key (``chamber.barrel.volume``) and the
/// message. ``str()`` gives ``file:line:column: `key`: message``.
#[pyclass(module = "plenum", frozen, get_all)]
#[derive(Clone)]
pub struct Diagnostic {
    file: String,
    line: usize,
    column: usize,
    key: String,
    message: String,
}

impl From<&ModelError> for Diagnostic {
    fn from(e: &ModelError) -> Diagnostic {
        Diagnostic {
            file: e.file.clone(),
            line: e.line,
            column: e.column,
            key: e.key.clone(),
            message: e.message.clone(),
        }
    }
}

#[pymethods]
impl Diagnostic {
    fn __str__(&self) -> String {
        ModelError {
            file: self.file.clone(),
            line: self.line,
            column: self.column,
            key: self.key.clone(),
            message: self.message.clone(),
        }
        .to_string()
    }

    fn __repr__(&self) -> String {
        format!("Diagnostic({:?})", self.__str__())
    }
}
