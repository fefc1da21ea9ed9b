//! Python exceptions of the binding: the classes live in `plenum/_errors.py` (documented there);
//! these functions build them with their attributes. A panic caught in the library becomes
//! `PlenumError`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::facade::ModelError;
use crate::model::Diagnostic;

/// An instance of `plenum._errors.<class>` called with `args`, with `attrs` set on it.
pub fn raise<'py, A>(
    py: Python<'py>,
    class: &str,
    args: A,
    attrs: &[(&str, Bound<'py, PyAny>)],
) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    let made = (|| -> PyResult<Bound<'py, PyAny>> {
        let cls = py.import("plenum._errors")?.getattr(class)?;
        let e = cls.call1(args)?;
        for (k, v) in attrs {
            e.setattr(*k, v)?;
        }
        Ok(e)
    })();
    match made {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// `ModelError` for every problem of a model (the first one's position as attributes).
pub fn model_error(py: Python<'_>, errors: &[ModelError]) -> PyErr {
    let text = errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let list: Vec<Diagnostic> = errors.iter().map(Diagnostic::from).collect();
    match PyList::new(py, list) {
        Ok(list) => raise(py, "ModelError", (text,), &[("errors", list.into_any())]),
        Err(e) => e,
    }
}

/// `ModelError` without a position in a file (a model that cannot start, an unreadable file).
pub fn model_error_text(py: Python<'_>, file: &str, message: &str) -> PyErr {
    model_error(
        py,
        &[ModelError {
            file: file.to_string(),
            line: 0,
            column: 0,
            key: String::new(),
            message: message.to_string(),
        }],
    )
}

/// Run `f` with the GIL released; a panic in it becomes `PlenumError`.
pub fn detached<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f)))
        .map_err(|p| internal(py, &p))
}

/// `f` with the GIL held; a panic in it becomes `PlenumError`.
pub fn guarded<T, F: FnOnce() -> T>(py: Python<'_>, f: F) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| internal(py, &p))
}

fn internal(py: Python<'_>, payload: &Box<dyn std::any::Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    raise(
        py,
        "PlenumError",
        (format!("internal error in the Plenum library: {what}"),),
        &[],
    )
}
