//! The outputs an engineer reads off links and walls beyond their mass flows (they follow `rc`
//! in the output table, `crate::variables`): each orifice's opening and choked flag, each
//! valve's opening, each wall's heat flow. They are functions of the node states and the
//! parameters at the instant, computed outside the right-hand side from the node states it
//! left: the values from the last evaluation, their tangents from the last dual-number one
//! ([`Network::tangent`]).

use num_dual::Dual64;

use crate::ad::Scalar;
use crate::components::{NodeState, OrificeForm};
use crate::param::ParamValue;

use super::Network;
use super::rhs::param_value;

/// What an extra output is (in output order: per orifice its opening then its choked flag,
/// per valve its opening, per wall its heat flow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extra {
    /// Orifice k's opening, 0..1: its `opening` times a check or relief valve's poppet opening.
    OrificeOpening(usize),
    /// 1 while orifice k's flow is choked (and it is open), else 0: a discrete output.
    OrificeChoked(usize),
    /// Valve k's opening, 0..1.
    ValveOpening(usize),
    /// Wall k's heat flow from left to right, W.
    WallHeat(usize),
}

impl Network {
    /// The extra outputs in order.
    pub fn extra_outputs(&self) -> impl Iterator<Item = Extra> + '_ {
        let orifices = (0..self.orifices.len())
            .flat_map(|k| [Extra::OrificeOpening(k), Extra::OrificeChoked(k)]);
        let valves = (0..self.valves.len()).map(Extra::ValveOpening);
        let walls = (0..self.walls.len()).map(Extra::WallHeat);
        orifices.chain(valves).chain(walls)
    }

    /// The component an extra output belongs to.
    pub fn extra_output_name(&self, x: Extra) -> &str {
        match x {
            Extra::OrificeOpening(k) | Extra::OrificeChoked(k) => &self.orifices[k].name,
            Extra::ValveOpening(k) => &self.valves[k].name,
            Extra::WallHeat(k) => &self.walls[k].name,
        }
    }

    /// The value of extra output `x` from node states `nodes` and parameters `pv`.
    fn extra_output<T: Scalar>(
        &self,
        x: Extra,
        nodes: &[NodeState<T>],
        pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        match x {
            Extra::OrificeOpening(k) => {
                let o = &self.orifices[k];
                o.opening_with(pv, nodes[o.from], nodes[o.to])
            }
            Extra::OrificeChoked(k) => {
                let o = &self.orifices[k];
                let (a, b) = (nodes[o.from].pressure_pa.re(), nodes[o.to].pressure_pa.re());
                let r = a.min(b) / a.max(b);
                let critical = match &o.form {
                    OrificeForm::Isentropic { .. } => self.gas.critical_pressure_ratio,
                    OrificeForm::Iso6358 {
                        critical_pressure_ratio,
                        ..
                    } => pv(critical_pressure_ratio).re(),
                };
                let open = o.opening_with(pv, nodes[o.from], nodes[o.to]).re() > 0.0;
                T::from(if open && r <= critical { 1.0 } else { 0.0 })
            }
            Extra::ValveOpening(k) => pv(&self.valves[k].opening),
            Extra::WallHeat(k) => {
                let w = &self.walls[k];
                w.heat_flow_w(
                    pv(&w.heat_transfer_coefficient_w_per_m2_k),
                    pv(&w.area_m2),
                    nodes[w.left].temperature_k,
                    nodes[w.right].temperature_k,
                )
            }
        }
    }

    /// The extra outputs at time `t` from the node states of the last evaluation (after
    /// [`crate::simulation::Simulation::refresh_flows`]), in order.
    pub fn write_extra_outputs(&self, t: f64, put: &mut impl FnMut(f64)) {
        let seg = self.segment_start_s;
        let pv = |p: &ParamValue| p.value(t, seg);
        let sc = self.scratch.borrow();
        for x in self.extra_outputs() {
            put(self.extra_output(x, &sc.nodes, &pv));
        }
    }

    /// The tangents of the extra outputs, in order, from the node states of the last
    /// [`Network::tangent`] at time `t` with the same `seeds`; a discrete output's is 0.
    pub fn write_extra_output_tangents(
        &self,
        t: f64,
        seeds: &[(&str, &str, f64)],
        put: &mut impl FnMut(f64),
    ) -> Result<(), String> {
        let seg = self.segment_start_s;
        let dual_seeds = self.dual_seeds(t, seeds)?;
        let pv = |p: &ParamValue| param_value::<Dual64>(p, &dual_seeds, t, seg);
        for x in self.extra_outputs() {
            let v = self.extra_output(x, &self.dual.sc.nodes, &pv);
            put(if matches!(x, Extra::OrificeChoked(_)) {
                0.0
            } else {
                v.eps
            });
        }
        Ok(())
    }

    /// Whether extra output `x` depends directly (the state held fixed) on the run-time
    /// parameter `<component>.<key>`: its own opening, heat transfer coefficient or area, and
    /// the pressure (a poppet) or temperature (a wall) of a reservoir it joins.
    pub fn extra_output_depends_on(&self, x: Extra, component: &str, key: &str) -> bool {
        if self.param_ref(component, key).is_none() {
            return false;
        }
        let reservoir = |node: usize| {
            node >= self.chambers.len()
                && self.reservoirs[node - self.chambers.len()].name == component
        };
        match x {
            Extra::OrificeOpening(k) => {
                let o = &self.orifices[k];
                (o.name == component && key == "opening")
                    || (o.poppet.is_some()
                        && key == "pressure"
                        && (reservoir(o.from) || reservoir(o.to)))
            }
            Extra::OrificeChoked(_) => false,
            Extra::ValveOpening(k) => self.valves[k].name == component && key == "opening",
            Extra::WallHeat(k) => {
                let w = &self.walls[k];
                (w.name == component && (key == "heat_transfer_coefficient" || key == "area"))
                    || (key == "temperature" && (reservoir(w.left) || reservoir(w.right)))
            }
        }
    }

    /// The states extra output `x` reads directly, increasing: a poppet's opening the pressures
    /// (energy and volume) of its chambers, a wall's heat flow the temperatures (mass and
    /// energy) of its chambers.
    pub fn extra_output_state_dependencies(&self, x: Extra) -> Vec<usize> {
        use crate::components::chamber;
        let nc = self.chambers.len();
        let mut d = Vec::new();
        let mut chamber_states = |node: usize, a: usize, b: usize| {
            if node < nc {
                d.push(node * chamber::STATES + a);
                d.push(node * chamber::STATES + b);
            }
        };
        match x {
            Extra::OrificeOpening(k) => {
                let o = &self.orifices[k];
                if o.poppet.is_some() {
                    chamber_states(o.from, chamber::ENERGY, chamber::VOLUME);
                    chamber_states(o.to, chamber::ENERGY, chamber::VOLUME);
                }
            }
            Extra::OrificeChoked(_) | Extra::ValveOpening(_) => {}
            Extra::WallHeat(k) => {
                let w = &self.walls[k];
                chamber_states(w.left, chamber::MASS, chamber::ENERGY);
                chamber_states(w.right, chamber::MASS, chamber::ENERGY);
            }
        }
        d.sort_unstable();
        d.dedup();
        d
    }
}
