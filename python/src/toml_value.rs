//! Python values as TOML: `Model.from_dict`'s document and `Model.set`'s override values.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use toml::Value;

/// A Python value (bool, int, float, str, list or tuple, dict with string keys) as TOML.
pub fn to_toml(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    // bool before int: Python's True is an int.
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Value::Boolean(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        return match v.extract::<i64>() {
            Ok(i) => Ok(Value::Integer(i)),
            Err(_) => Ok(Value::Float(v.extract::<f64>()?)),
        };
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(v.extract::<f64>()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Value::String(v.extract::<String>()?));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let key: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!("model dict keys must be strings, got {k:?}"))
            })?;
            t.insert(key, to_toml(&x)?);
        }
        return Ok(Value::Table(t));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items = v
            .try_iter()?
            .map(|x| to_toml(&x?))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Array(items));
    }
    // NumPy scalars and other numbers.
    if let Ok(x) = v.extract::<f64>() {
        return Ok(Value::Float(x));
    }
    Err(PyTypeError::new_err(format!(
        "cannot write {} as a model value (numbers, strings, booleans, lists and dicts)",
        v.get_type().name()?
    )))
}

/// A value as inline TOML (an override's right-hand side).
pub fn inline(v: &Value) -> String {
    v.to_string()
}

/// A table as a TOML document (a model file's text).
pub fn document(v: &Value) -> PyResult<String> {
    match v {
        Value::Table(t) => toml::to_string(t)
            .map_err(|e| PyTypeError::new_err(format!("cannot write the dict as TOML: {e}"))),
        _ => Err(PyTypeError::new_err("a model is a dict")),
    }
}

/// A string as a TOML string literal.
pub fn quoted(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A number as TOML, every digit kept.
pub fn number(x: f64) -> String {
    Value::Float(x).to_string()
}
