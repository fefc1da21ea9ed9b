//! Directional derivatives: exact partial derivatives (dual numbers) of outputs with respect to
//! inputs in Co-Simulation, of state derivatives and outputs with respect to states and inputs
//! in Model Exchange.

use super::{Call, CallError, Causality, Instance, StepReport, exchange::ok_report};
use crate::variables::write_output_tangents;

impl Instance {
    /// Directional derivatives in Co-Simulation (FMI 2.0.4 §2.1.9): dvUnknown =
    /// (∂outputs/∂inputs)·dvKnown
    /// at the current instant, exact (dual numbers). Knowns must be inputs, unknowns outputs.
    /// Only link flows (`<name>.mdot`) and the extra outputs after `rc` (openings, heat flows)
    /// depend on inputs directly; every other output is a function of the state (or time)
    /// alone, and its partial derivative is 0.
    pub fn directional_derivative(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        dv_known: &[f64],
        dv_unknown: &mut [f64],
    ) -> Result<(), CallError> {
        self.require(Call::GetDirectionalDerivative)?;
        if knowns.len() != dv_known.len() || unknowns.len() != dv_unknown.len() {
            return Err(CallError(
                "internal: value references and values differ in number".into(),
            ));
        }
        let mut seeds = Vec::with_capacity(knowns.len());
        for (&vr, &dv) in knowns.iter().zip(dv_known) {
            let v = self.variable(vr)?;
            let split = v.name.rsplit_once('.');
            match (v.causality, split) {
                (Causality::Input, Some((c, k))) if dv.is_finite() => {
                    seeds.push((c.to_string(), k.to_string(), dv))
                }
                (Causality::Input, _) => {
                    return Err(CallError(format!(
                        "dvKnown for `{}` (value reference {vr}) must be finite, got {dv}",
                        v.name
                    )));
                }
                _ => {
                    return Err(CallError(format!(
                        "`{}` (value reference {vr}) is not an input: directional derivatives \
                         are taken with respect to inputs",
                        v.name
                    )));
                }
            }
        }
        for &vr in unknowns {
            if vr as usize >= self.n_outputs {
                let v = self.variable(vr)?;
                return Err(CallError(format!(
                    "`{}` (value reference {vr}) is not an output: directional derivatives are \
                     of outputs",
                    v.name
                )));
            }
        }
        let net = &self.sim.network;
        // d(d(ṁ)/dp)/du would need second derivatives: refused where it is not 0.
        for &vr in unknowns {
            let i = vr as usize;
            if crate::variables::is_sensitivity_output(net, i)
                && seeds.iter().any(|(c, k, _)| {
                    crate::variables::output_depends_on(net, i, c.as_str(), k.as_str())
                })
            {
                return Err(CallError(format!(
                    "`{}` (value reference {vr}) is a sensitivity output that depends on the \
                     seeded inputs: its directional derivative (a second derivative) is not \
                     provided",
                    self.description.variables[i].name
                )));
            }
        }
        let first_link = crate::variables::first_link_output(net);
        let mut dflow = vec![0.0; net.n_named_links()];
        let (t, y) = (self.sim.t_s, self.sim.y.clone());
        let seeds: Vec<(&str, &str, f64)> = seeds
            .iter()
            .map(|(c, k, d)| (c.as_str(), k.as_str(), *d))
            .collect();
        self.sim
            .network
            .link_flow_derivatives(t, &y, &seeds, &mut dflow)
            .map_err(CallError)?;
        // The extra outputs after `rc` (openings, heat flows) at the state held fixed.
        let net = &mut self.sim.network;
        let n = net.layout.n_states;
        let (zero, mut dydt, mut df) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        net.tangent(t, &y, &zero, &seeds, &mut dydt, &mut df)
            .map_err(CallError)?;
        let mut dextra = Vec::new();
        net.write_extra_output_tangents(t, &seeds, &mut |x| dextra.push(x))
            .map_err(CallError)?;
        let end_extra = crate::variables::output_variables_of(net).len();
        let first_extra = end_extra - dextra.len();
        for (out, &vr) in dv_unknown.iter_mut().zip(unknowns) {
            let i = vr as usize;
            *out = if i >= first_link && i < first_link + dflow.len() {
                dflow[i - first_link]
            } else if i >= first_extra && i < end_extra {
                dextra[i - first_extra]
            } else {
                0.0
            };
        }
        Ok(())
    }

    /// Directional derivatives in Model Exchange: dvUnknown =
    /// (∂unknowns/∂knowns)·dvKnown at the current point, exact (one dual-number evaluation of
    /// the right-hand side, [`crate::network::Network::tangent`]). Knowns are continuous
    /// states and inputs; unknowns are state derivatives and outputs.
    pub fn exchange_directional_derivative(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        dv_known: &[f64],
        dv_unknown: &mut [f64],
    ) -> Result<StepReport, CallError> {
        self.require(Call::GetDirectionalDerivative)?;
        self.no_pending_parameters()?;
        if knowns.len() != dv_known.len() || unknowns.len() != dv_unknown.len() {
            return Err(CallError(
                "internal: value references and values differ in number".into(),
            ));
        }
        let mut direction = std::mem::take(&mut self.exchange_mut()?.direction);
        direction.fill(0.0);
        let result = self.directional_derivative_into(
            &mut direction,
            unknowns,
            knowns,
            dv_known,
            dv_unknown,
        );
        self.exchange_mut()?.direction = direction;
        result
    }

    fn directional_derivative_into(
        &mut self,
        direction: &mut [f64],
        unknowns: &[u32],
        knowns: &[u32],
        dv_known: &[f64],
        dv_unknown: &mut [f64],
    ) -> Result<StepReport, CallError> {
        let mut seeds: Vec<(String, String, f64)> = Vec::new();
        for (&vr, &dv) in knowns.iter().zip(dv_known) {
            let v = self.variable(vr)?;
            if !dv.is_finite() {
                return Err(CallError(format!(
                    "dvKnown for `{}` (value reference {vr}) must be finite, got {dv}",
                    v.name
                )));
            }
            if let Some(i) = self.description.states.iter().position(|&s| s == vr) {
                direction[i] += dv;
                continue;
            }
            match (v.causality, v.name.rsplit_once('.')) {
                (Causality::Input, Some((c, k))) => {
                    if let Some(why) = self.sim.network.parameter_seed_refusal(c, k) {
                        return Err(CallError(format!(
                            "`{}` (value reference {vr}): no directional derivative with \
                             respect to it: {why}",
                            v.name
                        )));
                    }
                    seeds.push((c.to_string(), k.to_string(), dv));
                }
                _ => {
                    return Err(CallError(format!(
                        "`{}` (value reference {vr}) is neither a continuous state nor an \
                         input: directional derivatives are taken with respect to states and \
                         inputs",
                        v.name
                    )));
                }
            }
        }
        for &vr in unknowns {
            let is_derivative = self.description.derivatives.contains(&vr);
            if (vr as usize) >= self.n_outputs && !is_derivative {
                let v = self.variable(vr)?;
                return Err(CallError(format!(
                    "`{}` (value reference {vr}) is neither a state derivative nor an output: \
                     directional derivatives are of derivatives and outputs",
                    v.name
                )));
            }
        }
        if let Some(r) = self.outside_domain() {
            return Ok(r);
        }
        let seeds: Vec<(&str, &str, f64)> = seeds
            .iter()
            .map(|(c, k, d)| (c.as_str(), k.as_str(), *d))
            .collect();
        let mut outputs = vec![0.0; self.n_outputs];
        let x = self.exchange.as_deref_mut().expect("Model Exchange");
        let (t, n) = (self.sim.t_s, self.sim.network.layout.n_states);
        write_output_tangents(
            &mut self.sim.network,
            t,
            &self.sim.y[..n],
            direction,
            &seeds,
            &mut x.dydt,
            &mut x.df,
            &mut outputs,
        )
        .map_err(CallError)?;
        for (out, &vr) in dv_unknown.iter_mut().zip(unknowns) {
            *out = match self.description.derivatives.iter().position(|&d| d == vr) {
                Some(i) => x.df[i],
                None => outputs[vr as usize],
            };
        }
        Ok(ok_report())
    }
}
