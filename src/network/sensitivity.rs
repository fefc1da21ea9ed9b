//! Exact derivatives of the network with respect to its parameters: the link flows'
//! directional derivatives (fmi2GetDirectionalDerivative) and forward sensitivities (see
//! [`crate::sensitivity`]), by dual numbers.

use num_dual::Dual64;

use super::kinds::Registered;
use super::{DualScratch, Network};
use crate::components::{Piston, chamber, piston};
use crate::param::ParamValue;
use crate::units::from_si;

/// Exact derivatives with respect to parameters (fmi2GetDirectionalDerivative).
impl Network {
    /// The flows of the links with a `<name>.mdot` output at (t, y), differentiated in the
    /// direction `seeds` = [(component, key, direction)] of run-time parameters: `dflow[l]` =
    /// Σ_k ∂ṁ_l/∂p_k·direction_k at the current instant (the state held fixed). Errors name a
    /// parameter that is not a run-time parameter.
    pub fn link_flow_derivatives(
        &mut self,
        t: f64,
        y: &[f64],
        seeds: &[(&str, &str, f64)],
        dflow: &mut [f64],
    ) -> Result<(), String> {
        let mut d = std::mem::take(&mut self.dual);
        let result = self.link_flow_derivatives_in(&mut d, t, y, seeds, dflow);
        self.dual = d;
        result
    }

    fn link_flow_derivatives_in(
        &self,
        d: &mut DualScratch,
        t: f64,
        y: &[f64],
        seeds: &[(&str, &str, f64)],
        dflow: &mut [f64],
    ) -> Result<(), String> {
        let n = self.layout.n_states;
        let dual_seeds = self.dual_seeds(t, seeds)?;
        self.size_dual(d);
        for i in 0..n {
            d.y[i] = Dual64::from(y[i]);
        }
        self.eval(t, &d.y, &mut d.dy, &mut d.sc, &dual_seeds);
        for (out, f) in dflow.iter_mut().zip(&d.sc.link_mdot) {
            *out = f.eps;
        }
        Ok(())
    }

    /// The run-time parameters `seeds` = [(component, key, direction)] as dual seeds at time
    /// `t` (the same parameter twice: the directions add). Errors name a parameter that is not
    /// a run-time parameter.
    pub(super) fn dual_seeds(
        &self,
        t: f64,
        seeds: &[(&str, &str, f64)],
    ) -> Result<Vec<(&ParamValue, Dual64)>, String> {
        let seg = self.segment_start_s;
        let mut dual_seeds: Vec<(&ParamValue, Dual64)> = Vec::with_capacity(seeds.len());
        for &(component, key, dir) in seeds {
            let p = self.param_ref(component, key).ok_or_else(|| {
                format!("`{component}.{key}` is not a parameter that can change during a run")
            })?;
            match dual_seeds.iter_mut().find(|(q, _)| std::ptr::eq(*q, p)) {
                Some((_, v)) => v.eps += dir,
                None => dual_seeds.push((p, Dual64::new(p.value(t, seg), dir))),
            }
        }
        Ok(dual_seeds)
    }

    /// The dual-number buffers sized for this network (allocates only the first time).
    pub(super) fn size_dual(&self, d: &mut DualScratch) {
        let n = self.layout.n_states;
        let (nn, nl, lean) = (
            self.chambers().len() + self.reservoirs().len(),
            self.n_links(),
            self.lean_kinds_only(),
        );
        d.sc.ensure(nn, nl, lean, self.present_kinds());
        if d.y.len() != n {
            d.y = vec![Dual64::from(0.0); n];
            d.dy = vec![Dual64::from(0.0); n];
        }
    }
}

/// A parameter of a forward-sensitivity run (`[sensitivities] parameters`, see
/// [`crate::sensitivity`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SensitivityParameter {
    /// `<piston>.mass`: enters the right-hand side only through a = F/m.
    PistonMass(usize),
    /// `<chamber>.pressure`, the initial pressure: enters through the initial state only.
    ChamberPressure(usize),
    /// A run-time parameter `<component>.<key>` (a key that may change during a run,
    /// `crate::components::keys`): enters the right-hand side.
    Run { component: String, key: String },
}

impl SensitivityParameter {
    /// Whether the parameter is the mass of component `i` of kind `K` (which enters its event
    /// jumps: a piston's impact).
    pub(super) fn is_mass_of<K: Registered>(&self, i: usize) -> bool {
        matches!(self, SensitivityParameter::PistonMass(j) if *j == i && K::INDEX == Piston::INDEX)
    }
}

/// Forward sensitivities with dual numbers (see [`crate::sensitivity`]).
impl Network {
    /// The parameter named `<component>.<key>` as a sensitivity parameter; the error names what
    /// can be used.
    pub fn sensitivity_parameter(&self, name: &str) -> Result<SensitivityParameter, String> {
        let (component, key) = name.rsplit_once('.').ok_or_else(|| {
            format!("sensitivity parameter `{name}` is not of the form `<component>.<key>`")
        })?;
        if key == "mass"
            && let Some(j) = self.pistons().iter().position(|p| p.name == component)
        {
            return Ok(SensitivityParameter::PistonMass(j));
        }
        if key == "pressure"
            && let Some(i) = self.chambers().iter().position(|c| c.name == component)
        {
            return Ok(SensitivityParameter::ChamberPressure(i));
        }
        if self.param_ref(component, key).is_some() {
            return Ok(SensitivityParameter::Run {
                component: component.to_string(),
                key: key.to_string(),
            });
        }
        Err(format!(
            "`{name}` cannot be a sensitivity parameter (possible: a piston's mass, a chamber's \
             pressure, and the run-time parameters: {})",
            crate::components::settable_during_run()
        ))
    }

    /// The parameter's value at time `t`.
    pub fn sensitivity_parameter_value(&self, p: &SensitivityParameter, t: f64) -> f64 {
        match p {
            SensitivityParameter::PistonMass(j) => self.pistons()[*j].mass.value,
            SensitivityParameter::ChamberPressure(i) => self.chambers()[*i].initial_pressure.value,
            SensitivityParameter::Run { component, key } => {
                self.get_scalar(component, key, t).unwrap_or(f64::NAN)
            }
        }
    }

    /// s(0) = ∂y(0)/∂p into `s0`. The initial mass p·V/(R·T) and energy m·c_v·T of a chamber
    /// are linear in its pressure, so their derivatives are their values at p = 1 Pa.
    pub fn initial_sensitivity(&self, p: &SensitivityParameter, s0: &mut [f64]) {
        s0.fill(0.0);
        if let SensitivityParameter::ChamberPressure(i) = *p {
            let y0 = self.initial_state();
            let ch = &self.chambers()[i];
            let o = i * chamber::STATES;
            // ∂m/∂p₀ = V/(R·T): the mass of 1 Pa; ∂U/∂p₀ = cv·T·∂m/∂p₀.
            let dm = self.gas.mass(
                from_si(1.0),
                from_si(y0[o + chamber::VOLUME]),
                ch.initial_temperature,
            );
            s0[o + chamber::MASS] = dm.value;
            s0[o + chamber::ENERGY] = self.gas.internal_energy(dm, ch.initial_temperature).value;
        }
    }

    /// f(t, y) into `dydt` and ṡ = J·s + ∂f/∂p into `ds`, in one dual-number evaluation
    /// (y + s·ε, p + ε). The f64 scratch is left alone. No allocation after the first call.
    pub fn sensitivity_rhs(
        &mut self,
        t: f64,
        y: &[f64],
        s: &[f64],
        p: &SensitivityParameter,
        dydt: &mut [f64],
        ds: &mut [f64],
    ) {
        let n = self.layout.n_states;
        debug_assert!(y.len() == n && s.len() == n && dydt.len() == n && ds.len() == n);
        self.rhs_evaluations += 1;
        let mut d = std::mem::take(&mut self.dual);
        let (nn, nl, lean) = (
            self.chambers().len() + self.reservoirs().len(),
            self.n_links(),
            self.lean_kinds_only(),
        );
        d.sc.ensure(nn, nl, lean, self.present_kinds());
        if d.y.len() != n {
            d.y = vec![Dual64::from(0.0); n];
            d.dy = vec![Dual64::from(0.0); n];
        }
        for i in 0..n {
            d.y[i] = Dual64::new(y[i], s[i]);
        }
        let seg = self.segment_start_s;
        match p {
            SensitivityParameter::PistonMass(j) => {
                self.eval(t, &d.y, &mut d.dy, &mut d.sc, &[]);
                // The mass enters only through a = F/m (0 once exited): with m = m₀ + ε the
                // acceleration is a·m₀/m.
                let m0 = self.pistons()[*j].mass.value;
                let v = self.layout.first::<Piston>() + j * piston::STATES + piston::VELOCITY;
                d.dy[v] = d.dy[v] * m0 / Dual64::new(m0, 1.0);
            }
            SensitivityParameter::ChamberPressure(_) => {
                self.eval(t, &d.y, &mut d.dy, &mut d.sc, &[]);
            }
            SensitivityParameter::Run { component, key } => match self.param_ref(component, key) {
                Some(q) => {
                    let seed = [(q, Dual64::new(q.value(t, seg), 1.0))];
                    self.eval(t, &d.y, &mut d.dy, &mut d.sc, &seed);
                }
                None => {
                    debug_assert!(false, "`{component}.{key}` was checked when resolved");
                    self.eval(t, &d.y, &mut d.dy, &mut d.sc, &[]);
                }
            },
        }
        for i in 0..n {
            dydt[i] = d.dy[i].re;
            ds[i] = d.dy[i].eps;
        }
        self.dual = d;
    }

    /// The derivatives of the named links' flows (`<name>.mdot`) computed by the last
    /// [`Self::sensitivity_rhs`], d ṁ/dp = ∂ṁ/∂y·s + ∂ṁ/∂p, into `dflow`.
    pub fn last_dual_link_flow_derivatives(&self, dflow: &mut [f64]) {
        for (out, f) in dflow.iter_mut().zip(&self.dual.sc.link_mdot) {
            *out = f.eps;
        }
    }

    /// d(mass_total)/dp and d(energy_total)/dp along a trajectory with sensitivity `s`: the
    /// totals ([`Self::mass_total_kg`], [`Self::energy_total_j`]) evaluated on y + ε·s, with a
    /// piston's mass seeded (m + ε) when it is the parameter (the kinetic energy depends on it
    /// directly; no other parameter enters the totals except through the state).
    pub fn totals_sensitivity(&self, y: &[f64], s: &[f64], p: &SensitivityParameter) -> (f64, f64) {
        let state = |i: usize| Dual64::new(y[i], s[i]);
        let mass_kg = |kind: usize, j: usize| match p {
            SensitivityParameter::PistonMass(k) if *k == j && kind == Piston::INDEX => {
                Some(Dual64::new(self.pistons()[j].mass.value, 1.0))
            }
            _ => None,
        };
        (
            self.mass_total(state).eps,
            self.energy_total(state, mass_kg).eps,
        )
    }
}
