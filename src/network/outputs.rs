//! The outputs of the components beyond the chambers' and the link flows, as each kind declares
//! them (`Element::OUTPUTS`): its states and flags (a piston's x, v and exit flag, an inertance
//! valve's q), which follow the link flows in the output table (`crate::variables`), and its
//! extra outputs (an orifice's opening and choked flag, a valve's opening, a wall's heat flow),
//! which follow `rc`; both kind by kind, links before boundaries. The extra outputs are
//! functions of the node states and the parameters at the instant, computed outside the
//! right-hand side from the node states it left: the values from the last evaluation, their
//! tangents from the last dual-number one ([`Network::tangent`]).

use num_dual::Dual64;

use super::Network;
use super::kinds::{Registered, each_kind, each_kind_by_role};
use crate::components::chamber;
use crate::components::element::{Element, Output, Reads, Variable, param_value};
use crate::components::keys::Component;
use crate::param::ParamValue;
use crate::units::Unit;

/// Output `output` (an index in its kind's `Element::OUTPUTS`) of component `component` of the
/// kind of registry index `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComponentOutput {
    kind: usize,
    component: usize,
    output: usize,
}

/// An output as the output table names it.
#[derive(Clone, Debug)]
pub struct OutputName<'a> {
    pub component: &'a str,
    pub variable: Variable,
    /// 0 or 1, without a derivative (a flag, a choked flag).
    pub discrete: bool,
}

impl Network {
    /// The outputs of one group in output order: `extra` false, the states and flags; true,
    /// the extra outputs.
    fn outputs_of(&self, extra: bool) -> Vec<ComponentOutput> {
        let mut out = Vec::new();
        each_kind_by_role!(K => {
            for component in 0..K::list(&self.kinds).len() {
                for (output, o) in K::OUTPUTS.iter().enumerate() {
                    if matches!(o, Output::Extra { .. }) == extra {
                        out.push(ComponentOutput {
                            kind: K::INDEX,
                            component,
                            output,
                        });
                    }
                }
            }
        });
        out
    }

    /// The outputs that are a component's states or flags, in output order (after the link
    /// flows).
    pub fn state_outputs(&self) -> Vec<ComponentOutput> {
        self.outputs_of(false)
    }

    /// The extra outputs, in output order (after `rc`).
    pub fn extra_outputs(&self) -> Vec<ComponentOutput> {
        self.outputs_of(true)
    }

    /// The component, variable and discreteness of output `o`.
    pub fn output_name(&self, o: ComponentOutput) -> OutputName<'_> {
        each_kind!(K => {
            if o.kind == K::INDEX {
                let x = &K::list(&self.kinds)[o.component];
                let (variable, discrete) = match K::OUTPUTS[o.output] {
                    Output::State(s) => (K::STATE_VARIABLES[s], false),
                    Output::Flag(v) => (v, true),
                    Output::Extra { variable, discrete } => (variable, discrete),
                };
                return OutputName {
                    component: x.name(),
                    variable,
                    discrete,
                };
            }
        });
        unreachable!("output of kind {} not in the registry", o.kind)
    }

    /// The values of the state outputs at state `y`, in order (`put`), without allocating.
    pub fn write_state_outputs(&self, y: &[f64], put: &mut impl FnMut(f64)) {
        each_kind_by_role!(K => {
            if const { has_state_outputs(K::OUTPUTS) } {
                let first = self.layout.first::<K>();
                let flag0 = self.layout.first.flag[K::INDEX];
                for i in 0..K::list(&self.kinds).len() {
                    for o in K::OUTPUTS {
                        match o {
                            Output::State(s) => put(y[first + i * K::STATES + s]),
                            Output::Flag(_) => put(if self.exited[flag0 + i] { 1.0 } else { 0.0 }),
                            Output::Extra { .. } => {}
                        }
                    }
                }
            }
        });
    }

    /// The tangents of the state outputs in the direction `s` of the states, in order (`put`):
    /// a state's own; a flag's 0 when `flags`, else none (a sensitivity block leaves them out).
    pub fn write_state_output_tangents(&self, s: &[f64], flags: bool, put: &mut impl FnMut(f64)) {
        each_kind_by_role!(K => {
            if const { has_state_outputs(K::OUTPUTS) } {
                let first = self.layout.first::<K>();
                for i in 0..K::list(&self.kinds).len() {
                    for o in K::OUTPUTS {
                        match o {
                            Output::State(j) => put(s[first + i * K::STATES + j]),
                            Output::Flag(_) if flags => put(0.0),
                            _ => {}
                        }
                    }
                }
            }
        });
    }

    /// The extra outputs at time `t` and state `y` (its first `n_states`), from the node
    /// states of the last evaluation at `y` (after
    /// [`crate::simulation::Simulation::refresh_flows`]), in order, without allocating.
    pub fn write_extra_outputs(&self, t: f64, y: &[f64], put: &mut impl FnMut(f64)) {
        let seg = self.segment_start_s;
        let pv = |p: &ParamValue| p.value(t, seg);
        let sc = self.scratch.borrow();
        each_kind_by_role!(K => {
            if const { has_extra_outputs(K::OUTPUTS) } {
                let first = self.layout.first::<K>();
                for (i, x) in K::list(&self.kinds).iter().enumerate() {
                    let s = &y[first + i * K::STATES..first + (i + 1) * K::STATES];
                    for (k, o) in K::OUTPUTS.iter().enumerate() {
                        if matches!(o, Output::Extra { .. }) {
                            put(x.extra_output(k, s, &self.gas, &sc.nodes, &pv));
                        }
                    }
                }
            }
        });
    }

    /// The tangents of the extra outputs, in order, from the states and node states of the
    /// last [`Network::tangent`] at time `t` with the same `seeds`; a discrete output's is 0.
    pub fn write_extra_output_tangents(
        &self,
        t: f64,
        seeds: &[(&str, &str, f64)],
        put: &mut impl FnMut(f64),
    ) -> Result<(), String> {
        let seg = self.segment_start_s;
        let dual_seeds = self.dual_seeds(t, seeds)?;
        let pv = |p: &ParamValue| param_value::<Dual64>(p, &dual_seeds, t, seg);
        let (y, nodes) = (&self.dual.y, &self.dual.sc.nodes);
        each_kind_by_role!(K => {
            if const { has_extra_outputs(K::OUTPUTS) } {
                let first = self.layout.first::<K>();
                for (i, x) in K::list(&self.kinds).iter().enumerate() {
                    let s = &y[first + i * K::STATES..first + (i + 1) * K::STATES];
                    for (k, o) in K::OUTPUTS.iter().enumerate() {
                        if let Output::Extra { discrete, .. } = o {
                            let v = x.extra_output(k, s, &self.gas, nodes, &pv);
                            put(if *discrete { 0.0 } else { v.eps });
                        }
                    }
                }
            }
        });
        Ok(())
    }

    /// What output `o` reads directly: an extra output's declared reads, nothing for a state
    /// or a flag (functions of the state alone).
    fn output_reads(&self, o: ComponentOutput) -> (Reads, Vec<usize>) {
        each_kind!(K => {
            if o.kind == K::INDEX {
                let x = &K::list(&self.kinds)[o.component];
                return match K::OUTPUTS[o.output] {
                    Output::Extra { .. } => (x.extra_output_reads(o.output), x.nodes().collect()),
                    _ => (Reads::NOTHING, Vec::new()),
                };
            }
        });
        (Reads::NOTHING, Vec::new())
    }

    /// Whether output `o` depends directly (the state held fixed) on the run-time parameter
    /// `<component>.<key>`: one of its own keys it reads, or the pressure or temperature of a
    /// reservoir it joins where it reads them.
    pub fn output_depends_on(&self, o: ComponentOutput, component: &str, key: &str) -> bool {
        if self.param_ref(component, key).is_none() {
            return false;
        }
        let (reads, nodes) = self.output_reads(o);
        let own = self.output_name(o).component == component && reads.keys.contains(&key);
        let reservoir = nodes.iter().any(|&n| self.is_reservoir(n, component));
        own || (reservoir
            && ((key == "pressure" && reads.pressures)
                || (key == "temperature" && reads.temperatures)))
    }

    /// The states output `o` reads directly, increasing: a state output its state; an extra
    /// output the own states it reads and the pressures (energy and volume) or temperatures
    /// (mass and energy) of its chambers as it reads them; a flag none.
    pub fn output_state_dependencies(&self, o: ComponentOutput) -> Vec<usize> {
        let mut d = Vec::new();
        let (reads, nodes) = self.output_reads(o);
        each_kind!(K => {
            if o.kind == K::INDEX {
                let first = self.layout.first::<K>() + o.component * K::STATES;
                if let Output::State(s) = K::OUTPUTS[o.output] {
                    d.push(first + s);
                }
                let own = first..first + K::STATES;
                d.extend(reads.states.iter().map(|s| {
                    debug_assert!(own.contains(&(first + s)), "{}: own state {s}", K::KIND.name);
                    first + s
                }));
            }
        });
        let nc = self.chambers().len();
        for node in nodes.into_iter().filter(|&n| n < nc) {
            let at = node * chamber::STATES;
            if reads.pressures {
                d.extend([at + chamber::ENERGY, at + chamber::VOLUME]);
            }
            if reads.temperatures {
                d.extend([at + chamber::MASS, at + chamber::ENERGY]);
            }
        }
        d.sort_unstable();
        d.dedup();
        d
    }

    /// Every state before the accumulators as a variable, in the state vector's order, as its
    /// kind declares it (`Element::STATE_VARIABLES`): (name, unit, description).
    pub fn state_names(&self) -> Vec<(String, Unit, String)> {
        let mut names = Vec::with_capacity(self.layout.n_states);
        each_kind!(K => {
            for x in K::list(&self.kinds) {
                for v in K::STATE_VARIABLES {
                    let (name, description) = v.of(x.name());
                    names.push((name, (v.unit)(), description));
                }
            }
        });
        names
    }

    /// The states the stored mechanical energy reads (`Element::stored_energy_states`: a
    /// piston's velocity, and its position with a spring), increasing.
    pub fn stored_energy_state_dependencies(&self) -> Vec<usize> {
        let mut d = Vec::new();
        each_kind!(K => {
            if K::STORES_ENERGY {
                let first = self.layout.first::<K>();
                for (i, x) in K::list(&self.kinds).iter().enumerate() {
                    d.extend(x.stored_energy_states().map(|s| first + i * K::STATES + s));
                }
            }
        });
        d
    }
}

/// Whether a kind declares outputs that are its states or flags.
const fn has_state_outputs(outputs: &[Output]) -> bool {
    let mut i = 0;
    while i < outputs.len() {
        if !matches!(outputs[i], Output::Extra { .. }) {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether a kind declares extra outputs.
const fn has_extra_outputs(outputs: &[Output]) -> bool {
    let mut i = 0;
    while i < outputs.len() {
        if matches!(outputs[i], Output::Extra { .. }) {
            return true;
        }
        i += 1;
    }
    false
}
