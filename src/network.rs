//! The network: every component owns a slice of one flat state vector and adds its terms to
//! dy/dt, as Cantera's `ReactorNet::eval` does.
//!
//! State layout (fixed when the network is built):
//! `[m, U, V] per chamber | [x, v] per piston | [swept volume] per wall | mass_left, energy_left]`.
//! The two accumulators integrate the mass and energy that left the gas and the pistons (into
//! reservoirs, through friction, damping and dissipating walls), so that `mass_total` and
//! `energy_total` are constant in exact arithmetic and drift only by integration error.

use serde::{Deserialize, Serialize};

use crate::components::{
    Chamber, NodeState, Orifice, Piston, Reservoir, Valve, Wall, chamber, orifice, piston,
};
use crate::gas::IdealGas;
use crate::ode::OdeSystem;
use crate::param::Param;

/// Where a node's name points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeRef {
    Chamber(usize),
    Reservoir(usize),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub n_states: usize,
    pub piston_offset: usize,
    pub wall_offset: usize,
    pub accumulator_offset: usize,
}

/// A moving boundary of a chamber, for check 9: volume changes by `sign`·(coordinate state).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Boundary {
    pub chamber: usize,
    /// Index of the state that moves the boundary (x of a piston or swept volume of a wall).
    pub state: usize,
    /// m² for pistons (volume = area·x), ±1 for walls (the state is a volume).
    pub factor: f64,
    /// Area used to scale the desync threshold, m².
    pub area_m2: f64,
}

#[derive(Clone, Debug, Default)]
struct Scratch {
    nodes: Vec<NodeState>,
    link_mdot: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Network {
    pub gas: IdealGas,
    pub chambers: Vec<Chamber>,
    pub reservoirs: Vec<Reservoir>,
    pub orifices: Vec<Orifice>,
    pub valves: Vec<Valve>,
    pub pistons: Vec<Piston>,
    pub walls: Vec<Wall>,
    /// Exit flags of the pistons (discrete state).
    pub exited: Vec<bool>,
    /// Moving boundaries sorted by chamber; those of chamber i are
    /// `boundaries[boundary_start[i]..boundary_start[i + 1]]`.
    pub boundaries: Vec<Boundary>,
    pub boundary_start: Vec<usize>,
    pub layout: Layout,
    /// Start of the current integration segment (see `Param::value`).
    pub segment_start_s: f64,
    /// Right-hand-side evaluations so far.
    pub rhs_evaluations: u64,
    #[serde(skip)]
    scratch: Scratch,
}

/// Names of the per-link output (`<name>.mdot`) in order: orifices, then valves.
impl Network {
    pub fn new(
        gas: IdealGas,
        chambers: Vec<Chamber>,
        reservoirs: Vec<Reservoir>,
        orifices: Vec<Orifice>,
        valves: Vec<Valve>,
        pistons: Vec<Piston>,
        walls: Vec<Wall>,
    ) -> Self {
        let nc = chambers.len();
        let piston_offset = nc * chamber::STATES;
        let wall_offset = piston_offset + pistons.len() * piston::STATES;
        let accumulator_offset = wall_offset + walls.len();
        let layout = Layout {
            n_states: accumulator_offset + 2,
            piston_offset,
            wall_offset,
            accumulator_offset,
        };
        let mut boundaries = Vec::new();
        for (j, p) in pistons.iter().enumerate() {
            let xs = piston_offset + j * piston::STATES + piston::POSITION;
            if p.behind < nc {
                boundaries.push(Boundary {
                    chamber: p.behind,
                    state: xs,
                    factor: p.area_m2,
                    area_m2: p.area_m2,
                });
            }
            if p.ahead < nc {
                boundaries.push(Boundary {
                    chamber: p.ahead,
                    state: xs,
                    factor: -p.area_m2,
                    area_m2: p.area_m2,
                });
            }
        }
        for (k, w) in walls.iter().enumerate() {
            let s = wall_offset + k;
            if w.left < nc {
                boundaries.push(Boundary {
                    chamber: w.left,
                    state: s,
                    factor: 1.0,
                    area_m2: w.area_m2,
                });
            }
            if w.right < nc {
                boundaries.push(Boundary {
                    chamber: w.right,
                    state: s,
                    factor: -1.0,
                    area_m2: w.area_m2,
                });
            }
        }
        // Sorted by chamber (stable: file order within a chamber) for O(1) lookup per chamber.
        boundaries.sort_by_key(|b| b.chamber);
        let mut boundary_start = vec![0; nc + 1];
        for b in &boundaries {
            boundary_start[b.chamber + 1] += 1;
        }
        for i in 0..nc {
            boundary_start[i + 1] += boundary_start[i];
        }
        let exited = vec![false; pistons.len()];
        let mut net = Network {
            gas,
            chambers,
            reservoirs,
            orifices,
            valves,
            pistons,
            walls,
            exited,
            boundaries,
            boundary_start,
            layout,
            segment_start_s: 0.0,
            rhs_evaluations: 0,
            scratch: Scratch::default(),
        };
        net.ensure_scratch();
        net
    }

    fn ensure_scratch(&mut self) {
        let nn = self.chambers.len() + self.reservoirs.len();
        let nl = self.n_links();
        if self.scratch.nodes.len() != nn || self.scratch.link_mdot.len() != nl {
            self.scratch.nodes = vec![NodeState::default(); nn];
            self.scratch.link_mdot = vec![0.0; nl];
        }
    }

    /// Flow links with a `<name>.mdot` output: orifices, valves, then exited pistons' bores.
    pub fn n_links(&self) -> usize {
        self.orifices.len() + self.valves.len() + self.pistons.len()
    }

    pub fn node_of_chamber(&self, i: usize) -> usize {
        i
    }

    pub fn node_of_reservoir(&self, j: usize) -> usize {
        self.chambers.len() + j
    }

    /// The moving boundaries (pistons, walls) of chamber `i`.
    pub fn chamber_boundaries(&self, i: usize) -> &[Boundary] {
        &self.boundaries[self.boundary_start[i]..self.boundary_start[i + 1]]
    }

    /// Volume of chamber `i` implied by the boundary coordinates (what check 9 compares with).
    pub fn geometric_volume_m3(&self, i: usize, y: &[f64]) -> f64 {
        let mut v = self.chambers[i].dead_volume_m3;
        for b in self.chamber_boundaries(i) {
            v += b.factor * y[b.state];
        }
        v
    }

    /// Initial state vector.
    pub fn initial_state(&self) -> Vec<f64> {
        let mut y = vec![0.0; self.layout.n_states];
        for (j, p) in self.pistons.iter().enumerate() {
            let o = self.layout.piston_offset + j * piston::STATES;
            y[o + piston::POSITION] = p.x0_m;
            y[o + piston::VELOCITY] = p.v0_m_per_s;
        }
        for i in 0..self.chambers.len() {
            let v = self.geometric_volume_m3(i, &y);
            let (m, u) = self.chambers[i].initial_mass_energy(&self.gas, v);
            let o = i * chamber::STATES;
            y[o + chamber::MASS] = m;
            y[o + chamber::ENERGY] = u;
            y[o + chamber::VOLUME] = v;
        }
        y
    }

    /// Earliest time-table breakpoint strictly after `t`.
    pub fn next_breakpoint_after(&self, t: f64) -> Option<f64> {
        let params = self
            .reservoirs
            .iter()
            .flat_map(|r| [&r.pressure_pa, &r.temperature_k])
            .chain(self.valves.iter().map(|v| &v.opening))
            .chain(self.walls.iter().map(|w| &w.velocity_m_per_s));
        params
            .filter_map(|p| p.next_breakpoint_after(t))
            .fold(None, |acc: Option<f64>, b| {
                Some(acc.map_or(b, |a| a.min(b)))
            })
    }

    /// Fill the node states (pressure, temperature) at (t, y).
    #[inline]
    fn update_nodes(&mut self, t: f64, y: &[f64]) {
        let seg = self.segment_start_s;
        let gas = &self.gas;
        let nodes = &mut self.scratch.nodes;
        let nc = self.chambers.len();
        for i in 0..nc {
            let o = i * chamber::STATES;
            let (m, u, v) = (
                y[o + chamber::MASS],
                y[o + chamber::ENERGY],
                y[o + chamber::VOLUME],
            );
            nodes[i] = NodeState {
                pressure_pa: gas.pressure_pa(u, v),
                temperature_k: gas.temperature_k(m, u),
            };
        }
        for (j, r) in self.reservoirs.iter().enumerate() {
            nodes[nc + j] = NodeState {
                pressure_pa: r.pressure_pa.value(t, seg),
                temperature_k: r.temperature_k.value(t, seg),
            };
        }
    }

    /// Node state as computed by the last right-hand-side evaluation.
    pub fn node_state(&self, node: usize) -> NodeState {
        self.scratch.nodes[node]
    }

    /// Mass flow of link `l` (orifices, valves, piston bores) at the last evaluation, kg/s.
    pub fn link_mass_flow(&self, l: usize) -> f64 {
        self.scratch.link_mdot[l]
    }

    /// Move `mdot` (kg/s, signed) from node `from` to node `to`, carrying the upstream enthalpy.
    #[inline]
    fn transfer(&self, from: usize, to: usize, mdot: f64, dy: &mut [f64]) {
        let nc = self.chambers.len();
        let nodes = &self.scratch.nodes;
        let up = if mdot >= 0.0 { from } else { to };
        let edot = mdot * self.gas.enthalpy_j_per_kg(nodes[up].temperature_k);
        let acc = self.layout.accumulator_offset;
        if from < nc {
            dy[from * chamber::STATES + chamber::MASS] -= mdot;
            dy[from * chamber::STATES + chamber::ENERGY] -= edot;
        } else {
            dy[acc] -= mdot;
            dy[acc + 1] -= edot;
        }
        if to < nc {
            dy[to * chamber::STATES + chamber::MASS] += mdot;
            dy[to * chamber::STATES + chamber::ENERGY] += edot;
        } else {
            dy[acc] += mdot;
            dy[acc + 1] += edot;
        }
    }

    /// Work rate `p·dV/dt` done by node `node` on a moving boundary (W, positive = node loses).
    #[inline]
    fn boundary_work(&self, node: usize, dvdt: f64, dy: &mut [f64]) {
        let nc = self.chambers.len();
        let power = self.scratch.nodes[node].pressure_pa * dvdt;
        if node < nc {
            dy[node * chamber::STATES + chamber::VOLUME] += dvdt;
            dy[node * chamber::STATES + chamber::ENERGY] -= power;
        } else {
            // A reservoir supplies (or absorbs) the work from outside the system.
            dy[self.layout.accumulator_offset + 1] -= power;
        }
    }

    /// Heat flow `q` (W) out of `node` (positive = node loses).
    #[inline]
    fn heat_out(&self, node: usize, q: f64, dy: &mut [f64]) {
        if node < self.chambers.len() {
            dy[node * chamber::STATES + chamber::ENERGY] -= q;
        } else {
            dy[self.layout.accumulator_offset + 1] -= q;
        }
    }

    /// Total mass: gas in chambers plus the net mass that left into reservoirs, kg.
    pub fn mass_total_kg(&self, y: &[f64]) -> f64 {
        let gas: f64 = (0..self.chambers.len())
            .map(|i| y[i * chamber::STATES + chamber::MASS])
            .sum();
        gas + y[self.layout.accumulator_offset]
    }

    /// Closed energy total: internal energy, piston kinetic and spring energy, and everything that
    /// left through reservoirs, friction, damping and walls, J.
    pub fn energy_total_j(&self, y: &[f64]) -> f64 {
        let u: f64 = (0..self.chambers.len())
            .map(|i| y[i * chamber::STATES + chamber::ENERGY])
            .sum();
        let mech: f64 = self
            .pistons
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let o = self.layout.piston_offset + j * piston::STATES;
                let (x, v) = (y[o + piston::POSITION], y[o + piston::VELOCITY]);
                0.5 * p.mass_kg * v * v + p.spring_energy_j(x)
            })
            .sum();
        u + mech + y[self.layout.accumulator_offset + 1]
    }

    /// The current value of a parameter that may change during a run (see [`Self::set_scalar`]),
    /// by the model file's names: `component` is a component's `name`, `key` its key.
    pub fn get_scalar(&self, component: &str, key: &str, t: f64) -> Option<f64> {
        let seg = self.segment_start_s;
        if let Some(r) = self.reservoirs.iter().find(|r| r.name == component) {
            return match key {
                "pressure" => Some(r.pressure_pa.value(t, seg)),
                "temperature" => Some(r.temperature_k.value(t, seg)),
                _ => None,
            };
        }
        if let Some(o) = self.orifices.iter().find(|o| o.name == component) {
            return match key {
                "area" => Some(o.area_m2),
                "discharge_coefficient" => Some(o.discharge_coefficient),
                _ => None,
            };
        }
        if let Some(v) = self.valves.iter().find(|v| v.name == component) {
            return match key {
                "coefficient" => Some(v.coefficient_kg_per_s_pa),
                "opening" => Some(v.opening.value(t, seg)),
                _ => None,
            };
        }
        if let Some(w) = self.walls.iter().find(|w| w.name == component) {
            return match key {
                "heat_transfer_coefficient" => Some(w.heat_transfer_coefficient_w_per_m2_k),
                "expansion_coefficient" => Some(w.expansion_coefficient_m_per_s_pa),
                "velocity" => Some(w.velocity_m_per_s.value(t, seg)),
                _ => None,
            };
        }
        if let Some(p) = self.pistons.iter().find(|p| p.name == component) {
            return match key {
                "friction_static" => Some(p.friction_static_pa),
                "friction_dynamic" => Some(p.friction_dynamic_pa),
                "damping" => Some(p.damping_n_s_per_m),
                _ => None,
            };
        }
        None
    }

    /// Change a parameter during a run (a co-simulation input). Only parameters that set a flow
    /// or a boundary condition can change; the ones that fix initial conditions or geometry
    /// (and so the stored mass and energy) cannot. A table becomes the constant `value`.
    /// Returns whether the value changed.
    pub fn set_scalar(&mut self, component: &str, key: &str, value: f64) -> Result<bool, String> {
        fn put(slot: &mut f64, value: f64) -> bool {
            let changed = slot.to_bits() != value.to_bits();
            *slot = value;
            changed
        }
        fn put_param(slot: &mut Param, value: f64) -> bool {
            let changed = *slot != Param::Const(value);
            *slot = Param::Const(value);
            changed
        }
        let cannot = || {
            format!(
                "`{component}.{key}` cannot change during a run (settable during a run: \
                 reservoir pressure, temperature; orifice area, discharge_coefficient; valve \
                 coefficient, opening; wall heat_transfer_coefficient, expansion_coefficient, \
                 velocity; piston friction_static, friction_dynamic, damping)"
            )
        };
        if let Some(r) = self.reservoirs.iter_mut().find(|r| r.name == component) {
            return match key {
                "pressure" => Ok(put_param(&mut r.pressure_pa, value)),
                "temperature" => Ok(put_param(&mut r.temperature_k, value)),
                _ => Err(cannot()),
            };
        }
        if let Some(o) = self.orifices.iter_mut().find(|o| o.name == component) {
            return match key {
                "area" => Ok(put(&mut o.area_m2, value)),
                "discharge_coefficient" => Ok(put(&mut o.discharge_coefficient, value)),
                _ => Err(cannot()),
            };
        }
        if let Some(v) = self.valves.iter_mut().find(|v| v.name == component) {
            return match key {
                "coefficient" => Ok(put(&mut v.coefficient_kg_per_s_pa, value)),
                "opening" => Ok(put_param(&mut v.opening, value)),
                _ => Err(cannot()),
            };
        }
        if let Some(w) = self.walls.iter_mut().find(|w| w.name == component) {
            return match key {
                "heat_transfer_coefficient" => {
                    Ok(put(&mut w.heat_transfer_coefficient_w_per_m2_k, value))
                }
                "expansion_coefficient" => Ok(put(&mut w.expansion_coefficient_m_per_s_pa, value)),
                "velocity" => Ok(put_param(&mut w.velocity_m_per_s, value)),
                _ => Err(cannot()),
            };
        }
        if let Some(p) = self.pistons.iter_mut().find(|p| p.name == component) {
            return match key {
                "friction_static" => Ok(put(&mut p.friction_static_pa, value)),
                "friction_dynamic" => Ok(put(&mut p.friction_dynamic_pa, value)),
                "damping" => Ok(put(&mut p.damping_n_s_per_m, value)),
                _ => Err(cannot()),
            };
        }
        Err(cannot())
    }

    /// Event functions: for each piston with an exit not yet passed, x − x_exit (crosses 0 upward).
    pub fn exit_event_value(&self, j: usize, y: &[f64]) -> Option<f64> {
        let p = &self.pistons[j];
        match p.x_exit_m {
            Some(xe) if !self.exited[j] => {
                Some(y[self.layout.piston_offset + j * piston::STATES + piston::POSITION] - xe)
            }
            _ => None,
        }
    }
}

impl OdeSystem for Network {
    fn dimension(&self) -> usize {
        self.layout.n_states
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        debug_assert_eq!(y.len(), self.layout.n_states);
        debug_assert_eq!(dy.len(), self.layout.n_states);
        self.rhs_evaluations += 1;
        self.ensure_scratch();
        self.update_nodes(t, y);
        dy.fill(0.0);
        let seg = self.segment_start_s;
        let mut link = 0;

        for k in 0..self.orifices.len() {
            let o = &self.orifices[k];
            let mdot = o.mass_flow_kg_per_s(
                &self.gas,
                self.scratch.nodes[o.from],
                self.scratch.nodes[o.to],
            );
            let (from, to) = (o.from, o.to);
            self.transfer(from, to, mdot, dy);
            self.scratch.link_mdot[link] = mdot;
            link += 1;
        }
        for k in 0..self.valves.len() {
            let v = &self.valves[k];
            let mdot = v.mass_flow_kg_per_s(
                v.opening.value(t, seg),
                self.scratch.nodes[v.from].pressure_pa,
                self.scratch.nodes[v.to].pressure_pa,
            );
            let (from, to) = (v.from, v.to);
            self.transfer(from, to, mdot, dy);
            self.scratch.link_mdot[link] = mdot;
            link += 1;
        }

        let acc = self.layout.accumulator_offset;
        for j in 0..self.pistons.len() {
            let o = self.layout.piston_offset + j * piston::STATES;
            let p = &self.pistons[j];
            let (behind, ahead, area) = (p.behind, p.ahead, p.area_m2);
            if self.exited[j] {
                // The projectile has left the bore: it keeps its velocity, and the bore becomes
                // an open orifice (C_d = 1) between the nodes it separated.
                let (nb, na) = (self.scratch.nodes[behind], self.scratch.nodes[ahead]);
                let mdot = orifice::signed_mass_flow_kg_per_s(&self.gas, area, nb, na);
                self.transfer(behind, ahead, mdot, dy);
                self.scratch.link_mdot[link + j] = mdot;
                continue;
            }
            let (x, v) = (y[o + piston::POSITION], y[o + piston::VELOCITY]);
            let f = p.forces(
                x,
                v,
                self.scratch.nodes[behind].pressure_pa,
                self.scratch.nodes[ahead].pressure_pa,
            );
            let damping_power = p.damping_n_s_per_m * v * v;
            dy[o + piston::POSITION] = v;
            dy[o + piston::VELOCITY] = f.acceleration_m_per_s2;
            let dvdt = area * v;
            self.boundary_work(behind, dvdt, dy);
            self.boundary_work(ahead, -dvdt, dy);
            // Friction and damping turn kinetic energy into heat that leaves the gas.
            dy[acc + 1] += -f.friction_n * v + damping_power;
            self.scratch.link_mdot[link + j] = 0.0;
        }

        for k in 0..self.walls.len() {
            let w = &self.walls[k];
            let (l, r) = (w.left, w.right);
            let (nl, nr) = (self.scratch.nodes[l], self.scratch.nodes[r]);
            let vel = w.velocity(
                w.velocity_m_per_s.value(t, seg),
                nl.pressure_pa,
                nr.pressure_pa,
            );
            let dvdt = w.area_m2 * vel;
            let q = w.heat_flow_w(nl.temperature_k, nr.temperature_k);
            dy[self.layout.wall_offset + k] = dvdt;
            self.boundary_work(l, dvdt, dy);
            self.boundary_work(r, -dvdt, dy);
            self.heat_out(l, q, dy);
            self.heat_out(r, -q, dy);
            // A massless wall stores nothing: (p_l − p_r)·dV/dt is dissipated.
            dy[acc + 1] += (nl.pressure_pa - nr.pressure_pa) * dvdt;
        }
    }
}
