//! The right-hand side dy/dt: the node states, then every link's flow and every boundary's
//! work, assembled kind by kind into one flat vector (as Cantera's `ReactorNet::eval`).

use num_dual::Dual64;

use super::Network;
use super::extra::NetScalar;
use super::links::{LinksState, const_orifice_flow, dy_pair};
use crate::ad::{Scalar, c, copysign, max0};
use crate::components::{NodeState, Restrictor, chamber, orifice, piston, restrictor, valve};
use crate::gas::IdealGas;
use crate::param::ParamValue;

/// Node states and link flows of one evaluation, allocated once (per scalar type).
#[derive(Clone, Debug)]
pub(super) struct Scratch<T> {
    pub(super) nodes: Vec<NodeState<T>>,
    pub(super) link_mdot: Vec<T>,
    /// Sized for this network (a network's node and link counts never change after it is
    /// built; a deserialized or moved-out scratch is the empty default, not sized).
    pub(super) sized: bool,
    /// The network has links or boundaries beyond orifices and valves (see
    /// [`Network::eval_more`]): one test skips six empty kinds on networks of orifices and valves.
    pub(super) more: bool,
    /// The links are valves alone (no orifices, nothing `more`): see [`Network::rhs`].
    pub(super) valves_only: bool,
    /// `valves_only` and `reservoirs_fresh` (and so sized): [`Network::rhs`]'s one test.
    pub(super) lean: bool,
    /// The reservoir nodes hold their constant pressure and temperature already (the plain
    /// f64 right-hand side only, see [`Network::rhs`]): every parameter is constant and none
    /// was written since ([`Network::param_mut`] clears it).
    pub(super) reservoirs_fresh: bool,
}

impl<T> Default for Scratch<T> {
    fn default() -> Self {
        Scratch {
            nodes: Vec::new(),
            link_mdot: Vec::new(),
            sized: false,
            more: false,
            valves_only: false,
            lean: false,
            reservoirs_fresh: false,
        }
    }
}

impl<T: Scalar> Scratch<T> {
    /// Sized for `nn` nodes and `nl` links (`more`: see the field); allocates only when the
    /// sizes change.
    pub(super) fn ensure(&mut self, nn: usize, nl: usize, more: bool, no_orifices: bool) {
        self.more = more;
        self.valves_only = !more && no_orifices;
        self.lean = false;
        if self.nodes.len() != nn || self.link_mdot.len() != nl {
            self.reservoirs_fresh = false;
            let z = NodeState {
                pressure_pa: T::zero(),
                temperature_k: T::zero(),
            };
            self.nodes = vec![z; nn];
            self.link_mdot = vec![T::zero(); nl];
        }
        self.sized = true;
    }
}

/// The dual-number evaluation's buffers (see [`Network::jvp`]), allocated once.
#[derive(Clone, Debug, Default)]
pub(super) struct DualScratch {
    pub(super) sc: Scratch<Dual64>,
    pub(super) y: Vec<Dual64>,
    pub(super) dy: Vec<Dual64>,
}

impl Network {
    /// Fill the node states (pressure, temperature) at (t, y) (the reservoirs' unless
    /// `reservoirs_fresh`), and zero dy.
    #[inline]
    fn update_nodes<T: Scalar>(
        &self,
        y: &[T],
        dy: &mut [T],
        nodes: &mut [NodeState<T>],
        pv: &impl Fn(&ParamValue) -> T,
        reservoirs_fresh: bool,
    ) {
        let gas = &self.gas;
        let nc = self.chambers.len();
        debug_assert!(y.len() >= nc * chamber::STATES);
        // Each chamber's states as a chunk zipped with its node: the indexed form made LLVM
        // set up a bounds-checked trip count (~60 instructions per right-hand side, as much as
        // a one-chamber network's arithmetic). Its dy entries are zeroed here too: a `fill`
        // of all of dy is a memset call, as dear as a one-chamber network's arithmetic. The
        // zero is opaque to LLVM, which would otherwise turn these stores back into memsets.
        let zero = std::hint::black_box(T::zero());
        let (chamber_nodes, reservoir_nodes) = nodes.split_at_mut(nc);
        let (dy_chambers, dy_rest) = dy.split_at_mut(nc * chamber::STATES);
        fill_chamber_nodes(gas, y, dy_chambers, chamber_nodes, zero);
        if let [mass_left, energy_left] = dy_rest {
            // Only the two accumulators (no pistons, walls, inertance valves): two stores.
            *mass_left = zero;
            *energy_left = zero;
        } else {
            dy_rest.fill(T::zero());
        }
        if reservoirs_fresh {
            return;
        }
        for (node, r) in reservoir_nodes.iter_mut().zip(&self.reservoirs) {
            *node = NodeState {
                pressure_pa: pv(&r.pressure_pa),
                temperature_k: pv(&r.temperature_k),
            };
        }
    }

    /// FONSim's mean density of a restrictor or tube between two nodes, kg/m³: the mean pressure
    /// (not below p_atm/10) over R·T of the upstream node.
    #[inline]
    fn mean_density_kg_per_m3<T: Scalar>(&self, a: NodeState<T>, b: NodeState<T>) -> T {
        let t_up = if a.pressure_pa.re() >= b.pressure_pa.re() {
            a.temperature_k
        } else {
            b.temperature_k
        };
        restrictor::mean_pressure_pa(a.pressure_pa, b.pressure_pa) / (t_up * self.gas.r_j_per_kg_k)
    }

    /// Node state as computed by the last right-hand-side evaluation.
    pub fn node_state(&self, node: usize) -> NodeState {
        self.scratch.borrow().nodes[node]
    }

    /// Mass flow of link `l` (orifices, valves, piston bores) at the last evaluation, kg/s.
    pub fn link_mass_flow(&self, l: usize) -> f64 {
        self.scratch.borrow().link_mdot[l]
    }

    /// Move `mdot` (kg/s, signed) from node `from` to node `to`, carrying the upstream enthalpy.
    // Always inlined: a call costs about as much as its body on small networks.
    #[inline(always)]
    fn transfer<T: Scalar>(
        &self,
        nodes: &[NodeState<T>],
        from: usize,
        to: usize,
        mdot: T,
        dy: &mut [T],
    ) {
        let nc = self.chambers.len();
        // Both ends read (not nodes[upstream]): the callers read them already, so the bounds
        // checks fold into theirs.
        let (nf, nt) = (nodes[from], nodes[to]);
        let acc = self.layout.accumulator_offset;
        let (f, t) = (dy_pair(nc, acc, from), dy_pair(nc, acc, to));
        self.transfer_at(nf, nt, f, t, mdot, dy);
    }

    /// [`Self::transfer`] between ends whose (mass, energy) pairs start at `f` and `t` in dy.
    #[inline(always)]
    fn transfer_at<T: Scalar>(
        &self,
        nf: NodeState<T>,
        nt: NodeState<T>,
        f: usize,
        t: usize,
        mdot: T,
        dy: &mut [T],
    ) {
        let t_up = if mdot.re() >= 0.0 {
            nf.temperature_k
        } else {
            nt.temperature_k
        };
        let edot = mdot * self.gas.enthalpy_j_per_kg(t_up);
        // Each pair as one slice of two: one bounds check per end, not two. The same updates
        // in the same order (the ends may coincide).
        let from = &mut dy[f..f + 2];
        from[0] -= mdot;
        from[1] -= edot;
        let to = &mut dy[t..t + 2];
        to[0] += mdot;
        to[1] += edot;
    }

    /// Work rate `p·dV/dt` done by node `node` on a moving boundary (W, positive = node loses).
    #[inline]
    fn boundary_work<T: Scalar>(&self, nodes: &[NodeState<T>], node: usize, dvdt: T, dy: &mut [T]) {
        let nc = self.chambers.len();
        let power = nodes[node].pressure_pa * dvdt;
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
    fn heat_out<T: Scalar>(&self, node: usize, q: T, dy: &mut [T]) {
        if node < self.chambers.len() {
            dy[node * chamber::STATES + chamber::ENERGY] -= q;
        } else {
            dy[self.layout.accumulator_offset + 1] -= q;
        }
    }
}

/// The chambers' node states from their states in `y`, and their entries of `dy` zeroed.
#[inline(always)]
fn fill_chamber_nodes<T: Scalar>(
    gas: &IdealGas,
    y: &[T],
    dy: &mut [T],
    nodes: &mut [NodeState<T>],
    zero: T,
) {
    for ((node, s), d) in nodes
        .iter_mut()
        .zip(y.chunks_exact(chamber::STATES))
        .zip(dy.chunks_exact_mut(chamber::STATES))
    {
        let (m, u, v) = (s[chamber::MASS], s[chamber::ENERGY], s[chamber::VOLUME]);
        *node = NodeState {
            pressure_pa: gas.pressure_pa(u, v),
            temperature_k: gas.temperature_k(m, u),
        };
        d[chamber::MASS] = zero;
        d[chamber::ENERGY] = zero;
        d[chamber::VOLUME] = zero;
    }
}

/// A parameter's value at (t, segment start `seg`), or its seed's if `seeds` has one for it
/// (matched by address).
#[inline(always)]
pub(super) fn param_value<T: Scalar>(
    p: &ParamValue,
    seeds: &[(&ParamValue, T)],
    t: f64,
    seg: f64,
) -> T {
    for (q, v) in seeds {
        if std::ptr::eq(*q, p) {
            return *v;
        }
    }
    c(p.value(t, seg))
}

/// The right-hand side, once, for any scalar (see [`crate::ad`]).
impl Network {
    /// [`OdeSystem::rhs`](crate::ode::OdeSystem::rhs) off its valves-only path: sizes the scratch, and keeps the reservoir
    /// nodes from here on when their parameters are constants.
    #[inline(never)]
    pub(super) fn rhs_general(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        if !self.scratch.get_mut().sized {
            self.ensure_scratch();
        }
        debug_assert!({
            let (nn, nl) = (self.chambers.len() + self.reservoirs.len(), self.n_links());
            let sc = self.scratch.get_mut();
            sc.nodes.len() == nn && sc.link_mdot.len() == nl
        });
        let mut sc = self.scratch.borrow_mut();
        let fresh = sc.reservoirs_fresh;
        if sc.valves_only && !self.isothermal {
            self.eval_with::<f64, false>(t, y, dy, &mut sc, &[], fresh);
        } else {
            // Every component kind, here in `rhs_general` (out of line: the valves-only path
            // in `rhs` does not carry its registers).
            self.eval_with::<f64, true>(t, y, dy, &mut sc, &[], fresh);
        }
        if !fresh {
            sc.reservoirs_fresh = self.reservoirs_constant();
            sc.lean = sc.valves_only && sc.reservoirs_fresh;
            drop(sc);
            // A parameter write clears `reservoirs_fresh` too: the links are rebuilt
            // here, off the steady path, for the next evaluation (this one read the orifices).
            self.refresh_stale_links();
            return;
        }
        sc.lean = sc.valves_only && sc.reservoirs_fresh;
    }

    /// Every reservoir's pressure and temperature is a constant: its node state can be kept
    /// from one right-hand side to the next (the vent's two `ParamValue` reads per evaluation).
    #[cold]
    fn reservoirs_constant(&self) -> bool {
        let c = |p: &ParamValue| matches!(p, ParamValue::Const(_));
        self.reservoirs
            .iter()
            .all(|r| c(&r.pressure_pa) && c(&r.temperature_k))
    }

    /// [`Self::eval_with`] with every node state computed.
    #[inline]
    pub(super) fn eval<T: NetScalar>(
        &self,
        t: f64,
        y: &[T],
        dy: &mut [T],
        sc: &mut Scratch<T>,
        seeds: &[(&ParamValue, T)],
    ) {
        self.eval_with::<T, true>(t, y, dy, sc, seeds, false);
    }

    /// dy/dt at (t, y) into `dy`, with the node states and link flows left in `sc`.
    ///
    /// `seeds` replace parameters' values (matched by address) with given scalars: a dual
    /// seed differentiates with respect to that parameter. `reservoirs_fresh`: the reservoir
    /// nodes in `sc` are up to date (constants, no seeds), not computed again. `FULL`
    /// false: the network has no links but valves and neither an extra term nor isothermal gas
    /// (the caller checks), and the code for those is left out.
    #[inline]
    pub(super) fn eval_with<T: NetScalar, const FULL: bool>(
        &self,
        t: f64,
        y: &[T],
        dy: &mut [T],
        sc: &mut Scratch<T>,
        seeds: &[(&ParamValue, T)],
        reservoirs_fresh: bool,
    ) {
        let seg = self.segment_start_s;
        let pv = |p: &ParamValue| param_value(p, seeds, t, seg);
        self.update_nodes(y, dy, &mut sc.nodes, &pv, reservoirs_fresh);
        let more = sc.more;
        let nodes = &sc.nodes;
        let link_mdot = &mut sc.link_mdot;
        let mut link = 0;

        // The test of the orifices first: a network without any pays no more than the loop's
        // own test.
        if FULL && !self.orifices.is_empty() {
            let links = &self.orifice_links;
            if links.state == LinksState::Usable && seeds.is_empty() {
                // The compact copy (no seed can replace a parameter here), out of line: its
                // registers stay out of the networks without orifices.
                self.orifice_link_flows(nodes, dy, link_mdot, &pv);
                link = links.links.len();
            } else {
                for o in &self.orifices {
                    let mdot = o.mass_flow_with(&self.gas, pv, nodes[o.from], nodes[o.to]);
                    self.transfer(nodes, o.from, o.to, mdot, dy);
                    link_mdot[link] = mdot;
                    link += 1;
                }
            }
        }
        // Behind a test of its own when other kinds may be present: the networks without
        // valves (walls, pistons) skip the links' setup and spills.
        if !FULL || !self.valves.is_empty() {
            let compact = self.valve_links.state == LinksState::Usable && seeds.is_empty();
            self.valve_links(nodes, dy, &mut link_mdot[link..], &pv, compact);
            link += self.valves.len();
        }
        if !FULL {
            return;
        }
        if more {
            self.eval_more(t, y, dy, nodes, link_mdot, link, seeds);
        }

        if self.isothermal {
            // dU/dt = c_v·T₀·dm/dt; the heat that holds T₀ is counted as energy that left.
            let acc = self.layout.accumulator_offset;
            let cv = self.gas.cv_j_per_kg_k;
            for (i, ch) in self.chambers.iter().enumerate() {
                let o = i * chamber::STATES;
                let du = dy[o + chamber::MASS] * (cv * ch.initial_temperature.value);
                dy[acc + 1] += dy[o + chamber::ENERGY] - du;
                dy[o + chamber::ENERGY] = du;
            }
        }
    }

    /// The orifices' flows from their links ([`OrificeLinks`](super::links::OrificeLinks), usable) into `dy` and
    /// `link_mdot` (from its start).
    #[inline(never)]
    fn orifice_link_flows<T: Scalar>(
        &self,
        nodes: &[NodeState<T>],
        dy: &mut [T],
        link_mdot: &mut [T],
        pv: &impl Fn(&ParamValue) -> T,
    ) {
        let links = &self.orifice_links.links;
        for (k, (o, out)) in links.iter().zip(link_mdot.iter_mut()).enumerate() {
            let (nf, nt) = (nodes[o.from as usize], nodes[o.to as usize]);
            let mdot = const_orifice_flow(&self.gas, o.law, nf, nt);
            debug_assert_eq!(
                mdot.re().to_bits(),
                self.orifices[k]
                    .mass_flow_with(&self.gas, pv, nf, nt)
                    .re()
                    .to_bits()
            );
            self.transfer_at(nf, nt, o.dy_from as usize, o.dy_to as usize, mdot, dy);
            *out = mdot;
        }
    }

    /// The valves' flows into `dy` and `link_mdot` (from its start); `compact`: from their
    /// links ([`ValveLinks`](super::links::ValveLinks), usable, and no seed replaces a parameter).
    #[inline(always)]
    fn valve_links<T: Scalar>(
        &self,
        nodes: &[NodeState<T>],
        dy: &mut [T],
        link_mdot: &mut [T],
        pv: &impl Fn(&ParamValue) -> T,
        compact: bool,
    ) {
        if compact {
            let links = &self.valve_links.links;
            for (l, out) in links.iter().zip(link_mdot.iter_mut()) {
                let (nf, nt) = (nodes[l.from as usize], nodes[l.to as usize]);
                let k_open = if l.varying {
                    // Off the constant path: the valve's own parameters at t.
                    self.varying_k_open(l.index as usize, pv)
                } else {
                    c(l.k_open)
                };
                let mdot = valve::signed_mass_flow_kg_per_s(
                    k_open,
                    l.one_way,
                    nf.pressure_pa,
                    nt.pressure_pa,
                );
                debug_assert_eq!(mdot.re().to_bits(), {
                    let v = &self.valves[l.index as usize];
                    let (a, b) = (pv(&v.coefficient_kg_per_s_pa), pv(&v.opening));
                    v.mass_flow_kg_per_s(a, b, nf.pressure_pa, nt.pressure_pa)
                        .re()
                        .to_bits()
                });
                self.transfer_at(nf, nt, l.dy_from as usize, l.dy_to as usize, mdot, dy);
                *out = mdot;
            }
            return;
        }
        for (v, out) in self.valves.iter().zip(link_mdot.iter_mut()) {
            let mdot = v.mass_flow_kg_per_s(
                pv(&v.coefficient_kg_per_s_pa),
                pv(&v.opening),
                nodes[v.from].pressure_pa,
                nodes[v.to].pressure_pa,
            );
            self.transfer(nodes, v.from, v.to, mdot, dy);
            *out = mdot;
        }
    }

    /// K·opening of valve `k` from its parameters (one of them not a constant).
    #[inline(never)]
    fn varying_k_open<T: Scalar>(&self, k: usize, pv: &impl Fn(&ParamValue) -> T) -> T {
        let v = &self.valves[k];
        pv(&v.coefficient_kg_per_s_pa) * pv(&v.opening)
    }

    /// The links and boundaries beyond orifices and valves (from link index `link` on), behind
    /// one test: networks of orifices and valves alone skip six empty kinds. (Out of line it
    /// cost the piston and wall networks a call per evaluation and gained the vent nothing.)
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn eval_more<T: NetScalar>(
        &self,
        t: f64,
        y: &[T],
        dy: &mut [T],
        nodes: &[NodeState<T>],
        link_mdot: &mut [T],
        mut link: usize,
        seeds: &[(&ParamValue, T)],
    ) {
        let seg = self.segment_start_s;
        // Its own closure (not the caller's by reference, which would put that one's captures
        // in memory and cost the caller's loops their constant folding).
        let pv = |p: &ParamValue| param_value(p, seeds, t, seg);
        for m in &self.mass_flows {
            let mdot = max0(pv(&m.rate_kg_per_s));
            self.transfer(nodes, m.from, m.to, mdot, dy);
            link_mdot[link] = mdot;
            link += 1;
        }
        for r in &self.restrictors {
            let (nf, nt) = (nodes[r.from], nodes[r.to]);
            let rho = self.mean_density_kg_per_m3(nf, nt);
            let mdot = Restrictor::mass_flow_kg_per_s(
                pv(&r.diameter_m),
                pv(&r.k),
                rho,
                nf.pressure_pa,
                nt.pressure_pa,
            );
            self.transfer(nodes, r.from, r.to, mdot, dy);
            link_mdot[link] = mdot;
            link += 1;
        }
        for x in &self.tubes {
            let (nf, nt) = (nodes[x.from], nodes[x.to]);
            let rho = self.mean_density_kg_per_m3(nf, nt);
            let dp = nf.pressure_pa - nt.pressure_pa;
            let mdot = copysign(x.at_with(pv).mass_flow_magnitude(dp.abs(), rho), dp);
            self.transfer(nodes, x.from, x.to, mdot, dy);
            link_mdot[link] = mdot;
            link += 1;
        }
        for (k, iv) in self.inertance_valves.iter().enumerate() {
            // Liquid between two reservoirs: only q is a state; nothing enters the gas totals
            // (see `components::inertance_valve`).
            let s = self.layout.inertance_offset + k;
            let q = y[s];
            let rate = iv.rate(
                &iv.geometry(t, seg),
                q,
                nodes[iv.from].pressure_pa,
                nodes[iv.to].pressure_pa,
            );
            dy[s] = rate.dq_dt_m3_per_s2;
            link_mdot[link] = q * iv.density.value;
            link += 1;
        }

        let acc = self.layout.accumulator_offset;
        for (j, p) in self.pistons.iter().enumerate() {
            let o = self.layout.piston_offset + j * piston::STATES;
            let (behind, ahead, area) = (p.behind, p.ahead, p.area.value);
            if self.exited[j] {
                // The projectile has left the bore: it keeps its velocity, and the bore becomes
                // an open orifice (C_d = 1) between the nodes it separated.
                let (nb, na) = (nodes[behind], nodes[ahead]);
                let mdot = orifice::signed_mass_flow_kg_per_s(&self.gas, c(area), nb, na);
                self.transfer(nodes, behind, ahead, mdot, dy);
                link_mdot[link + j] = mdot;
                continue;
            }
            let (x, v) = (y[o + piston::POSITION], y[o + piston::VELOCITY]);
            let f = p.forces_with(
                pv,
                x,
                v,
                nodes[behind].pressure_pa,
                nodes[ahead].pressure_pa,
            );
            let damping_power = v * pv(&p.damping_n_s_per_m) * v;
            dy[o + piston::POSITION] = v;
            dy[o + piston::VELOCITY] = f.acceleration_m_per_s2;
            let dvdt = v * area;
            self.boundary_work(nodes, behind, dvdt, dy);
            self.boundary_work(nodes, ahead, -dvdt, dy);
            // Friction and damping turn kinetic energy into heat that leaves the gas.
            dy[acc + 1] += -f.friction_n * v + damping_power;
            link_mdot[link + j] = T::zero();
        }

        for (k, w) in self.walls.iter().enumerate() {
            let (l, r) = (w.left, w.right);
            let (nl, nr) = (nodes[l], nodes[r]);
            let area = pv(&w.area_m2);
            let vel = w.velocity(
                pv(&w.expansion_coefficient_m_per_s_pa),
                pv(&w.velocity_m_per_s),
                nl.pressure_pa,
                nr.pressure_pa,
            );
            let dvdt = area * vel;
            let q = w.heat_flow_w(
                pv(&w.heat_transfer_coefficient_w_per_m2_k),
                area,
                nl.temperature_k,
                nr.temperature_k,
            );
            dy[self.layout.wall_offset + k] = dvdt;
            self.boundary_work(nodes, l, dvdt, dy);
            self.boundary_work(nodes, r, -dvdt, dy);
            self.heat_out(l, q, dy);
            self.heat_out(r, -q, dy);
            // A massless wall stores nothing: (p_l − p_r)·dV/dt is dissipated.
            dy[acc + 1] += (nl.pressure_pa - nr.pressure_pa) * dvdt;
        }

        for term in &self.extra_terms {
            T::add_extra(&**term, y, dy);
        }
    }
}
