//! `plenum.Simulation`: a model advanced step by step from Python, as Cantera's `ReactorNet`.
//! Inside it is the FMU's Co-Simulation instance (in-process), so its states are the FMU's
//! versioned state blobs and its inputs obey the FMU's rules.

use std::sync::{Mutex, MutexGuard};

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::errors::{detached, guarded, model_error_text, raise};
use crate::facade::{Advanced, Stepper};

/// A running model: advance it to a time, read any variable by name, set inputs between
/// advances, save and restore its state. Made by :meth:`plenum.Model.simulation`.
///
/// The same steps as :meth:`plenum.Model.run` at the same times give the same values, bit for
/// bit. ``state()`` returns the FMU's own state blob (``PLNMSTAT``, versioned, with a
/// checksum); a simulation pickles as its model and that blob.
#[pyclass(module = "plenum")]
pub struct Simulation {
    /// Behind a mutex for `Sync` only (the network keeps scratch space in cells): the methods
    /// that change it take `&mut self` and reach it with `get_mut`, no lock; PyO3's borrow
    /// flag keeps a second thread out while one advances with the GIL released.
    stepper: Mutex<Stepper>,
    /// The model text it runs (overrides applied) and the file label, for pickling.
    text: String,
    label: String,
}

impl Simulation {
    pub fn start(py: Python<'_>, text: String, label: String) -> PyResult<Simulation> {
        let stepper = detached(py, || Stepper::new(&text, &label))?
            .map_err(|why| model_error_text(py, &label, &why))?;
        Ok(Simulation {
            stepper: Mutex::new(stepper),
            text,
            label,
        })
    }

    /// The stepper for reading (uncontended: see `stepper`).
    fn read(&self) -> MutexGuard<'_, Stepper> {
        self.stepper.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn stepper(&mut self) -> &mut Stepper {
        self.stepper.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    fn vr(&self, name: &str) -> PyResult<u32> {
        let stepper = self.read();
        stepper.value_reference(name).ok_or_else(|| {
            let close: Vec<&str> = stepper
                .names()
                .filter(|n| n.split('.').next() == name.split('.').next())
                .take(12)
                .collect();
            PyKeyError::new_err(if close.is_empty() {
                format!("no variable `{name}` in this model (see Model.variables)")
            } else {
                format!(
                    "no variable `{name}` in this model; of that component: {}",
                    close.join(", ")
                )
            })
        })
    }

    fn value(&mut self, py: Python<'_>, name: &str) -> PyResult<f64> {
        let vr = self.vr(name)?;
        let mut out = [0.0];
        let stepper = self.stepper();
        guarded(py, || stepper.get(&[vr], &mut out))?
            .map_err(|m| raise(py, "PlenumError", (m,), &[]))?;
        Ok(out[0])
    }
}

#[pymethods]
impl Simulation {
    /// Advance to time ``t`` (s), going on past piston exits, and return the time reached:
    /// ``t``, or where the run ended (a projectile's exit with ``stop_on_exit``, the command
    /// line's default; then :attr:`finished` says ``"exited"`` and later calls return at
    /// once). A run-time check that stops the run (codes 1, 2, 3, 10) raises
    /// :class:`plenum.CheckFailed` and a solver failure :class:`plenum.SolverError`, with the
    /// state kept at the last good time. The GIL is released while it integrates (a target
    /// inside the step already taken is an interpolation, done with it held).
    fn advance(&mut self, py: Python<'_>, t: f64) -> PyResult<f64> {
        let stepper = self.stepper();
        let now = stepper.time_s();
        if stepper.finished().is_some() || t == now {
            return Ok(now);
        }
        if !t.is_finite() || t < now {
            return Err(PyValueError::new_err(format!(
                "advance({t:?}): the target must be finite and after the current time {now:?} s"
            )));
        }
        // Most output times of an adaptive run fall inside the step already taken: reached by
        // interpolation in tens of nanoseconds, less than releasing and taking back the GIL
        // costs. Every call that integrates releases it.
        let advanced = if stepper.within_last_step(t) {
            guarded(py, || stepper.advance(t))?
        } else {
            detached(py, || stepper.advance(t))?
        };
        match advanced {
            Advanced::Reached | Advanced::Exited => Ok(stepper.time_s()),
            Advanced::CheckFailed(code, at, message) => Err(raise(
                py,
                "CheckFailed",
                (message,),
                &[
                    ("code", code.into_bound_py_any(py)?),
                    ("time", at.into_bound_py_any(py)?),
                ],
            )),
            Advanced::SolverFailed(at, message) => Err(raise(
                py,
                "SolverError",
                (message,),
                &[("time", at.into_bound_py_any(py)?)],
            )),
            Advanced::Refused(message) => Err(PyValueError::new_err(message)),
        }
    }

    /// ``sim["tank.p"]``: a variable's value now (outputs at the current time, parameters and
    /// inputs as set); a list of names gives a list of values.
    fn __getitem__<'py>(
        &mut self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Ok(s) = key.cast::<PyString>() {
            let name: String = s.extract()?;
            return self.value(py, &name)?.into_bound_py_any(py);
        }
        if key.is_instance_of::<PyList>() || key.is_instance_of::<PyTuple>() {
            let names: Vec<String> = key.extract()?;
            let vrs = names
                .iter()
                .map(|n| self.vr(n))
                .collect::<PyResult<Vec<u32>>>()?;
            let mut out = vec![0.0; vrs.len()];
            let stepper = self.stepper();
            guarded(py, || stepper.get(&vrs, &mut out))?
                .map_err(|m| raise(py, "PlenumError", (m,), &[]))?;
            return out.into_bound_py_any(py);
        }
        Err(PyTypeError::new_err(
            "a variable's name (str) or a list of names",
        ))
    }

    fn __contains__(&self, name: &str) -> bool {
        self.read().value_reference(name).is_some()
    }

    /// Set an input (a name of the model's ``[inputs] names``) to ``value`` (SI) from now on,
    /// as an FMU's fmi2SetReal between steps: the value obeys its key's rule (else
    /// ``ValueError``, nothing set) and the integrator restarts at the current time.
    fn set_input(&mut self, py: Python<'_>, name: &str, value: f64) -> PyResult<()> {
        let vr = self.vr(name)?;
        let stepper = self.stepper();
        guarded(py, || stepper.set(vr, value))?.map_err(PyValueError::new_err)
    }

    /// The current time, s.
    #[getter]
    fn time(&self) -> f64 {
        self.read().time_s()
    }

    /// ``None`` while the run goes on; ``"exited"`` once it ended at a projectile's exit,
    /// ``"never_exited"`` once run-time check 1 ended it.
    #[getter]
    fn finished(&self) -> Option<&'static str> {
        self.read().finished()
    }

    /// The run-time check code of the last step (0: none; warnings 4 to 9 and 11 do not stop
    /// the run, docs/checks.md).
    #[getter]
    fn rc(&self) -> u8 {
        self.read().rc()
    }

    /// The integrator (``"auto"``, ``"bdf"``, ...).
    #[getter]
    fn method(&self) -> &'static str {
        self.read().method()
    }

    /// Counters so far: steps, rejected steps, right-hand-side evaluations, events.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (steps, rejected, rhs, events) = self.read().steps();
        let d = PyDict::new(py);
        d.set_item("steps", steps)?;
        d.set_item("rejected_steps", rejected)?;
        d.set_item("rhs_evaluations", rhs)?;
        d.set_item("events", events)?;
        Ok(d)
    }

    /// Every variable's name (in the FMU's order: time, outputs, parameters, inputs, locals).
    #[getter]
    fn names(&self) -> Vec<String> {
        self.read().names().map(str::to_string).collect()
    }

    /// The state as bytes: the FMU's serialized state (fmi2SerializeFMUstate's blob, versioned
    /// and checksummed). :meth:`restore` goes back to it, bit for bit.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let stepper = self.read();
        let blob =
            guarded(py, || stepper.state())?.map_err(|m| raise(py, "StateError", (m,), &[]))?;
        Ok(PyBytes::new(py, &blob))
    }

    /// Go back to a state from :meth:`state` of a simulation of the same model (the same
    /// text): checked whole first; a state of another model, another format version or a
    /// damaged one raises :class:`plenum.StateError` and changes nothing.
    fn restore(&mut self, py: Python<'_>, state: &[u8]) -> PyResult<()> {
        let stepper = self.stepper();
        detached(py, || stepper.restore(state))?.map_err(|m| raise(py, "StateError", (m,), &[]))
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let f = py
            .import("plenum._state")?
            .getattr("simulation_from_state")?;
        let args = PyTuple::new(
            py,
            [
                self.text.clone().into_bound_py_any(py)?,
                self.label.clone().into_bound_py_any(py)?,
                self.state(py)?.into_any(),
            ],
        )?;
        Ok((f, args))
    }

    /// A simulation of the model text `text` at the state `state` (unpickling).
    #[staticmethod]
    fn _from_state(py: Python<'_>, text: String, label: String, state: &[u8]) -> PyResult<Self> {
        let mut sim = Simulation::start(py, text, label)?;
        sim.restore(py, state)?;
        Ok(sim)
    }

    fn __repr__(&self) -> String {
        let stepper = self.read();
        format!(
            "<plenum.Simulation of {} at t = {:?} s, method {}{}>",
            self.label,
            stepper.time_s(),
            stepper.method(),
            stepper
                .finished()
                .map_or(String::new(), |f| format!(", {f}"))
        )
    }
}
