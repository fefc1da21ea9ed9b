//! FMU states: taking a state, setting one (checked against the instance's own model before
//! anything changes), and their blobs.

use super::snapshot::{
    MAX_STATE_BODY, check_header, encode_snapshot, encode_snapshot_into, put_dynamic, take_dynamic,
};
use super::{
    Call, CallError, Instance, Phase, Snapshot, build_at, check_fits, errors_text, parameters,
};
use crate::simulation::Simulation;

impl Instance {
    /// Take the instance's state (an FMU state).
    pub fn snapshot(&self) -> Result<Snapshot, CallError> {
        self.require(Call::States)?;
        let sim = &self.sim;
        Ok(Snapshot {
            guid: self.description.guid.clone(),
            phase: self.phase,
            overrides: self.overrides.clone(),
            start_time_s: self.start_time_s,
            stop_time_s: self.stop_time_s,
            inputs: self.live_inputs.clone(),
            t_s: sim.t_s,
            y: sim.y.clone(),
            y_compensation: sim.y_compensation.clone(),
            rc: sim.rc,
            first_fired_s: sim.first_fired_s,
            finished: sim.finished,
            stats: sim.stats,
            internal: sim.internal.clone(),
            integrator: sim.integrator.clone(),
            exited: sim.network.exited.clone(),
            modes: sim.network.modes.clone(),
            segment_start_s: sim.network.segment_start_s,
            rhs_evaluations: sim.network.rhs_evaluations,
            exchange: self.exchange.as_ref().map(|x| x.snapshot()),
        })
    }

    /// Take the instance's state into an existing one: its storage is reused (no allocation when it
    /// holds a state of the same model with as many overrides of the same lengths).
    pub fn snapshot_into(&self, snapshot: &mut Snapshot) -> Result<(), CallError> {
        self.require(Call::States)?;
        snapshot.guid.clone_from(&self.description.guid);
        snapshot.phase = self.phase;
        snapshot.overrides.clone_from(&self.overrides);
        snapshot.start_time_s = self.start_time_s;
        snapshot.stop_time_s = self.stop_time_s;
        snapshot.inputs.clone_from(&self.live_inputs);
        take_dynamic(snapshot, &self.sim);
        match (&self.exchange, &mut snapshot.exchange) {
            (Some(x), Some(s)) => x.snapshot_into(s),
            (x, s) => *s = x.as_ref().map(|x| x.snapshot()),
        }
        Ok(())
    }

    /// Set a state: everything is checked before the instance changes. A state of the
    /// instance's own overrides and start time is copied into the running simulation (no
    /// allocation, for every method: `Method::assign_from`); another one rebuilds
    /// the model's simulation first.
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<(), CallError> {
        self.require(Call::States)?;
        let built = self.check_snapshot(snapshot)?;
        // The one step below that can refuse is re-applying the inputs: check it before any
        // field changes, so a refused state leaves the instance as it was.
        self.check_inputs_settable(&snapshot.inputs)?;
        let mut param_values = None;
        // A state holds a valid model's overrides: parameters pending when it is restored go.
        if snapshot.overrides != self.overrides || self.pending.is_some() {
            let model = crate::model::parse_str(&self.source, &self.label, &snapshot.overrides)
                .map_err(|e| CallError(errors_text(&e)))?;
            let now: std::collections::HashMap<String, f64> = parameters(&model.spec)
                .into_iter()
                .map(|(n, v, _)| (n, v))
                .collect();
            let start = &self.description.variables[self.n_outputs..];
            param_values = Some(
                start
                    .iter()
                    .map(|v| {
                        now.get(&v.name)
                            .copied()
                            .unwrap_or(v.start.unwrap_or(f64::NAN))
                    })
                    .collect::<Vec<f64>>(),
            );
        }
        if let Some(p) = param_values {
            self.param_values = p;
        }
        if let Some(reference) = built {
            self.sim = reference.clone();
            self.live_inputs.fill(None);
            self.reference = (
                snapshot.overrides.clone(),
                snapshot.start_time_s.to_bits(),
                reference,
            );
        }
        self.overrides.clone_from(&snapshot.overrides);
        self.pending = None;
        self.phase = snapshot.phase;
        self.start_time_s = snapshot.start_time_s;
        self.stop_time_s = snapshot.stop_time_s;
        self.put_inputs(&snapshot.inputs)?;
        put_dynamic(&mut self.sim, snapshot);
        if let (Some(x), Some(s)) = (&mut self.exchange, &snapshot.exchange) {
            x.restore(s);
        }
        self.outputs_valid = false;
        self.warned = 0;
        Ok(())
    }

    /// Every input `put_inputs` would change can change in this model's network, to the value
    /// the state holds (its key's rule, as when it is set).
    fn check_inputs_settable(&self, inputs: &[Option<f64>]) -> Result<(), CallError> {
        for (k, want) in inputs.iter().enumerate() {
            let Some(x) = want else {
                continue;
            };
            if self.live_inputs.get(k) == Some(want) {
                continue;
            }
            let name = self
                .description
                .variables
                .get(self.first_input + k)
                .map(|v| v.name.as_str())
                .unwrap_or("");
            let (c, key) = name.rsplit_once('.').unwrap_or((name, ""));
            if let Err(e) = self.sim.network.check_scalar(c, key, *x) {
                return Err(CallError(format!(
                    "the state sets input {k} (`{name}`) to {x}, which no importer can have \
                     set: {e}; the instance is unchanged"
                )));
            }
        }
        Ok(())
    }

    /// Put the network's inputs as a state has them: a value set during the run, or the
    /// model's own (taken from the reference simulation).
    fn put_inputs(&mut self, inputs: &[Option<f64>]) -> Result<(), CallError> {
        for (k, want) in inputs.iter().enumerate() {
            if self.live_inputs.get(k) == Some(want) {
                continue;
            }
            let vr = self.first_input + k;
            let Some((c, key)) = self
                .description
                .variables
                .get(vr)
                .and_then(|v| v.name.rsplit_once('.'))
            else {
                return Err(CallError(format!("internal: no input {k}")));
            };
            match want {
                Some(x) => {
                    self.sim.network.set_scalar(c, key, *x)?;
                }
                None => {
                    self.sim
                        .network
                        .adopt_input(&self.reference.2.network, c, key);
                }
            }
            if let Some(slot) = self.live_inputs.get_mut(k) {
                *slot = *want;
            }
        }
        Ok(())
    }

    /// Set a state without any check (tests that need a state no check lets through, to
    /// reach the panic guard of the ABI).
    #[cfg(test)]
    pub(crate) fn restore_unchecked(&mut self, snapshot: &Snapshot) {
        self.phase = snapshot.phase;
        put_dynamic(&mut self.sim, snapshot);
        self.outputs_valid = false;
    }

    /// A state must be of this model, and fit it. Its contents were checked when it entered
    /// (`deserialize` runs [`check_fits`]; `snapshot` takes a running simulation's), so here
    /// only what differs between instances of one model is: the GUID, the phase, the times,
    /// and the overrides and start time, for which the model's simulation is built (and
    /// returned for reuse) when they are not the instance's.
    fn check_snapshot(&self, s: &Snapshot) -> Result<Option<Simulation>, CallError> {
        if s.guid != self.description.guid {
            return Err(CallError(format!(
                "state is for model GUID {}, this instance is {}",
                s.guid, self.description.guid
            )));
        }
        if matches!(s.phase, Phase::Fatal) {
            return Err(CallError("state was taken in the fatal state".into()));
        }
        // A Co-Simulation state in a Co-Simulation instance: nothing more to check here.
        if self.exchange.is_some()
            || s.exchange.is_some()
            || matches!(s.phase, Phase::EventMode | Phase::ContinuousTimeMode)
        {
            self.check_snapshot_interface(s)?;
        }
        if !s.start_time_s.is_finite() || !s.t_s.is_finite() {
            return Err(CallError("state has a non-finite time".into()));
        }
        // The phase is part of the state and is restored with it, so it must agree with the
        // rest: before initialization ends no step has been taken, the simulation is at
        // the start time. (A bit flip 2 → 0 in a stepping instance's state otherwise sets it
        // back to `instantiated` at a later time, where getting values and stepping refuse.)
        if matches!(s.phase, Phase::Instantiated | Phase::InitializationMode)
            && (s.t_s.to_bits() != s.start_time_s.to_bits()
                || s.stats.steps != 0
                || s.stats.rejected_steps != 0)
        {
            return Err(CallError(format!(
                "state does not fit: its phase is {} (before any step) but it is at t = {:?} s \
                 (start time {:?} s) after {} steps (corrupted state)",
                s.phase.name(),
                s.t_s,
                s.start_time_s,
                s.stats.steps
            )));
        }
        let misfit = |what: String| CallError(format!("state does not fit this model: {what}"));
        if let Some(stop) = s.stop_time_s
            && !(stop.is_finite() && stop >= s.start_time_s)
        {
            return Err(misfit(format!(
                "stop time {stop:?} s (start time {:?} s)",
                s.start_time_s
            )));
        }
        let (ref_overrides, ref_start, _) = &self.reference;
        if s.overrides == *ref_overrides && s.start_time_s.to_bits() == *ref_start {
            return Ok(None);
        }
        let model = crate::model::parse_str(&self.source, &self.label, &s.overrides)
            .map_err(|e| misfit(format!("its parameters do not load: {}", errors_text(&e))))?;
        let built = build_at(&model.spec, s.start_time_s)
            .map_err(|e| misfit(format!("its model does not build: {e}")))?;
        Ok(Some(built))
    }

    /// The blob of a state (serialization and its size query).
    pub fn serialize(&self, snapshot: &Snapshot) -> Result<Vec<u8>, CallError> {
        self.require(Call::States)?;
        encode_snapshot(snapshot)
    }

    /// The blob of a state into `out` (its storage reused).
    pub fn serialize_into(&self, snapshot: &Snapshot, out: &mut Vec<u8>) -> Result<(), CallError> {
        self.require(Call::States)?;
        encode_snapshot_into(snapshot, out)
    }

    /// A state from its blob: header checked and body decoded completely, nothing changes
    /// in the instance.
    pub fn deserialize(&self, blob: &[u8]) -> Result<Snapshot, CallError> {
        self.require(Call::States)?;
        let body = check_header(blob, &self.description.guid)?;
        let config = bincode::config::standard().with_limit::<MAX_STATE_BODY>();
        let (mut snapshot, used): (Snapshot, usize) =
            bincode::serde::decode_from_slice(body, config)
                .map_err(|e| CallError(format!("state body does not decode: {e}")))?;
        if used != body.len() || self.exchange.is_some() {
            snapshot.exchange = self.decode_exchange_part(body, used)?;
        }
        let built = self.check_snapshot(&snapshot)?;
        let expected = built.as_ref().unwrap_or(&self.reference.2);
        let n_inputs = self.first_local - self.first_input;
        check_fits(&snapshot, expected, n_inputs)
            .map_err(|e| CallError(format!("state does not fit this model: {e}")))?;
        Ok(snapshot)
    }
}
