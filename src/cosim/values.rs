//! Values: reading every variable, setting parameters (before the run) and inputs (during it).

use super::{
    Call, CallError, Causality, Instance, Pending, Phase, build_at, errors_text,
    parameter_override, parameters,
};
use crate::checks;
use crate::units::Unit;

impl Instance {
    /// Get values: every variable (outputs at the current time, parameters and inputs as set,
    /// continuous states and derivatives).
    pub fn get_real(&mut self, vrs: &[u32], out: &mut [f64]) -> Result<(), CallError> {
        self.require(Call::GetValues)?;
        if out.len() != vrs.len() {
            return Err(CallError(format!(
                "internal: {} value references, {} values",
                vrs.len(),
                out.len()
            )));
        }
        let mut need_outputs = false;
        let mut computed = false;
        for &vr in vrs {
            self.variable(vr)?;
            need_outputs |= (vr as usize) < self.n_outputs;
            computed |= (vr as usize) < self.n_outputs || (vr as usize) >= self.first_local;
        }
        if computed {
            // The outputs (and states, derivatives) of a model the parameters set do not make.
            self.no_pending_parameters()?;
        }
        if need_outputs && !self.outputs_valid {
            crate::variables::write_outputs(&mut self.sim, &mut self.outputs);
            // No value that is not a number is ever reported (the run-time checks keep the
            // states finite; a derived value can still overflow).
            if let Some(k) = self.outputs.iter().position(|x| !x.is_finite()) {
                return Err(CallError(format!(
                    "output `{}` is {} at t = {:?} s: not reported (run-time check {}: {})",
                    self.description.variables[k].name,
                    self.outputs[k],
                    self.sim.t_s,
                    checks::IMPOSSIBLE_STATE,
                    checks::describe(checks::IMPOSSIBLE_STATE)
                )));
            }
            self.outputs_valid = true;
        }
        let mut need_locals = false;
        for (o, &vr) in out.iter_mut().zip(vrs) {
            let i = vr as usize;
            *o = if i < self.n_outputs {
                self.outputs[i]
            } else if i >= self.first_local {
                // Filled below.
                need_locals = true;
                0.0
            } else {
                let v = &self.description.variables[i];
                let live = match v.causality {
                    Causality::Input => v
                        .name
                        .rsplit_once('.')
                        .and_then(|(c, k)| self.sim.network.get_scalar(c, k, self.sim.t_s)),
                    _ => None,
                };
                live.unwrap_or(self.param_values[i - self.n_outputs])
            };
        }
        if need_locals {
            self.fill_locals(vrs, out);
        }
        Ok(())
    }

    /// Set values: parameters (until initialization ends) and inputs. Every value is checked
    /// before anything is set, against its key's rule (`crate::components::keys`, the same as in
    /// the model file); on an error nothing changes. The values of one call are judged
    /// together, on their final values (the last of a variable given twice); before the run,
    /// values that each obey their rule but break a rule joining keys (a piston's `x0` past
    /// its `x_exit`) are kept until initialization ends, so that a master that sets one
    /// parameter per call (FMPy's start values) is judged on the final values too:
    /// the end of initialization refuses the model they make if it is still invalid.
    pub fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError> {
        self.require(Call::SetValues)?;
        if values.len() != vrs.len() {
            return Err(CallError(format!(
                "internal: {} value references, {} values",
                vrs.len(),
                values.len()
            )));
        }
        let running = matches!(
            self.phase,
            Phase::StepComplete | Phase::EventMode | Phase::ContinuousTimeMode
        );
        for (&vr, &x) in vrs.iter().zip(values) {
            let v = self.variable(vr)?;
            match v.causality {
                Causality::Independent | Causality::Output => {
                    return Err(CallError(format!(
                        "`{}` (value reference {vr}) is an output: it cannot be set",
                        v.name
                    )));
                }
                Causality::Local => {
                    return Err(CallError(format!(
                        "`{}` (value reference {vr}) is a local variable (a continuous state or \
                         a derivative): it cannot be set (Model Exchange sets the continuous \
                         states all at once, not by value reference)",
                        v.name
                    )));
                }
                Causality::Parameter if running => {
                    return Err(CallError(format!(
                        "`{}` (value reference {vr}) is a fixed parameter: it can be set only \
                         before initialization ends",
                        v.name
                    )));
                }
                _ => {}
            }
            if !x.is_finite() {
                return Err(CallError(format!(
                    "`{}` (value reference {vr}) cannot be set to {x}: values must be finite",
                    v.name
                )));
            }
        }
        if vrs.is_empty() {
            return Ok(());
        }
        if running {
            self.set_inputs_live(vrs, values)
        } else {
            self.set_overrides(vrs, values)
        }
    }

    /// Inputs during the run: changed in the network at once; a change is a discontinuity, so
    /// the integrator starts afresh (multistep history is not carried across it).
    fn set_inputs_live(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError> {
        // Check every value (its key can change during a run, and the value obeys the key's
        // rule) before changing any.
        for (&vr, &x) in vrs.iter().zip(values) {
            let name = &self.description.variables[vr as usize].name;
            let (c, k) = name.rsplit_once('.').unwrap_or((name, ""));
            self.sim.network.check_scalar(c, k, x).map_err(|e| {
                CallError(format!(
                    "input `{name}` (value reference {vr}) cannot be set to {x}: {e}; nothing \
                     was set"
                ))
            })?;
        }
        let mut changed = false;
        for (&vr, &x) in vrs.iter().zip(values) {
            let i = vr as usize;
            let name = &self.description.variables[i].name;
            if let Some((c, k)) = name.rsplit_once('.') {
                changed |= self.sim.network.set_scalar(c, k, x)?;
                self.live_inputs[i - self.first_input] = Some(x);
            }
            self.param_values[i - self.n_outputs] = x;
        }
        if changed {
            self.sim.restart_at_reported_state();
            self.outputs_valid = false;
        }
        Ok(())
    }

    /// Parameters (and inputs) before the run: each value is checked against its key's rule
    /// (refused at once, nothing set), then recorded as a `name=value` override of the model
    /// file, which is parsed and validated again with every override set so far; the
    /// simulation is rebuilt from it. Overrides that break a rule joining keys are kept as
    /// [`Pending`] (the simulation stays the last valid one) until later values make the model
    /// valid; the end of initialization refuses it until then.
    fn set_overrides(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError> {
        for (&vr, &x) in vrs.iter().zip(values) {
            let name = &self.description.variables[vr as usize].name;
            let Some((c, k)) = name.rsplit_once('.') else {
                continue;
            };
            if let Some(rule) = self.sim.network.rule_of(c, k)
                && !rule.holds(x)
            {
                let unit = self
                    .sim
                    .network
                    .key_of(name)
                    .map_or_else(Unit::dimensionless, |k| k.unit());
                return Err(CallError(format!(
                    "`{name}` (value reference {vr}) cannot be set to {x}: it must be {}; \
                     nothing was set",
                    rule.text(&unit)
                )));
            }
        }
        let mut overrides = match &self.pending {
            Some(p) => p.overrides.clone(),
            None => self.overrides.clone(),
        };
        // The values as set so far (a cubic schedule's override carries both its times).
        let mut current = self.param_values.clone();
        for (&vr, &x) in vrs.iter().zip(values) {
            let name = &self.description.variables[vr as usize].name;
            current[vr as usize - self.n_outputs] = x;
            let value_of = |n: &str| {
                let k = self.description.variables[self.n_outputs..]
                    .iter()
                    .position(|v| v.name == n)?;
                Some(current[k])
            };
            let entry = parameter_override(name, x, value_of);
            let target = entry.split_once('=').map(|(n, _)| n.to_string());
            match overrides
                .iter_mut()
                .find(|o| o.split_once('=').map(|(n, _)| n) == target.as_deref())
            {
                Some(o) => *o = entry,
                None => overrides.push(entry),
            }
        }
        let model = match crate::model::parse_str(&self.source, &self.label, &overrides) {
            Ok(model) => model,
            Err(e) => {
                // Valid one by one, not (yet) together: judged on the final values.
                for (&vr, &x) in vrs.iter().zip(values) {
                    self.param_values[vr as usize - self.n_outputs] = x;
                }
                self.pending = Some(Pending {
                    overrides,
                    problems: errors_text(&e),
                });
                return Ok(());
            }
        };
        // The loader must have applied every override (value for value).
        let now: std::collections::HashMap<String, f64> = parameters(&model.spec)
            .into_iter()
            .map(|(n, v, _)| (n, v))
            .collect();
        let set = vrs.iter().zip(values).map(|(&vr, &x)| {
            let name = &self.description.variables[vr as usize].name;
            (name.clone(), format!("{x:?}"))
        });
        // Each number set, and each plain override (a cubic schedule's is checked by its times).
        let plain = overrides.iter().filter_map(|o| {
            let (name, x) = o.split_once('=')?;
            x.parse::<f64>()
                .is_ok()
                .then(|| (name.to_string(), x.to_string()))
        });
        for (name, x) in plain.chain(set) {
            let name = name.as_str();
            let x = x.as_str();
            match (now.get(name), x.parse::<f64>()) {
                (Some(v), Ok(x)) if v.to_bits() == x.to_bits() => {}
                (other, _) => {
                    return Err(CallError(format!(
                        "setting `{name}` = {x} had no effect on the model (it reads {}): \
                         the model loader did not apply the override",
                        other.map_or("nothing".to_string(), |v| format!("{v:?}"))
                    )));
                }
            }
        }
        let sim = build_at(&model.spec, self.start_time_s)?;
        let mut param_values = self.param_values.clone();
        for (k, v) in self.description.variables[self.n_outputs..]
            .iter()
            .enumerate()
        {
            if let Some(x) = now.get(&v.name) {
                param_values[k] = *x;
            }
        }
        self.reference = (overrides.clone(), self.start_time_s.to_bits(), sim.clone());
        self.overrides = overrides;
        self.param_values = param_values;
        self.pending = None;
        self.live_inputs.fill(None);
        self.sim = sim;
        self.outputs_valid = false;
        Ok(())
    }

    /// Integer, Boolean and String access: the model has Real variables only.
    pub fn no_such_variables(&self, kind: &str, vrs: &[u32]) -> Result<(), CallError> {
        match vrs.first() {
            None => Ok(()),
            Some(vr) => Err(CallError(format!(
                "no {kind} variable with value reference {vr} (this model has Real variables \
                 only)"
            ))),
        }
    }
}
