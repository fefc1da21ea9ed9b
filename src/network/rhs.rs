//! The right-hand side dy/dt: the node states, then every kind's terms (links before
//! boundaries, each kind's [`Element::terms`]) assembled into one flat vector (as Cantera's
//! `ReactorNet::eval`).

use num_dual::Dual64;

use super::Network;
use super::extra::NetScalar;
use super::kinds::{BOUNDARY_KINDS, Cached, LINK_KINDS, Registered, each_kind, is_link};
use crate::ad::Scalar;
use crate::components::element::{Element, Eval, Slots, param_value};
use crate::components::keys::Role;
use crate::components::{NodeState, chamber};
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
    /// The network's components are chambers, reservoirs and kinds of the lean path alone
    /// (`Element::LEAN`: valves), and no extra term: see [`Network::rhs`].
    pub(super) lean_kinds: bool,
    /// `lean_kinds` and `reservoirs_fresh` (and so sized): [`Network::rhs`]'s one test.
    pub(super) lean: bool,
    /// The kinds with components: bit `Registered::INDEX` of each (a network's components never
    /// change after it is built). The right-hand side tests these bits, kept in a register,
    /// rather than the lists' lengths in memory.
    pub(super) present: u32,
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
            lean_kinds: false,
            lean: false,
            present: 0,
            reservoirs_fresh: false,
        }
    }
}

impl<T: Scalar> Scratch<T> {
    /// Sized for `nn` nodes and `nl` links (`lean_kinds`, `present`: see the fields);
    /// allocates only when the sizes change.
    pub(super) fn ensure(&mut self, nn: usize, nl: usize, lean_kinds: bool, present: u32) {
        self.lean_kinds = lean_kinds;
        self.present = present;
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
        let nc = self.kinds.chamber.len();
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
            // Only the two accumulators (no other kind's states): two stores.
            *mass_left = zero;
            *energy_left = zero;
        } else {
            dy_rest.fill(T::zero());
        }
        if reservoirs_fresh {
            return;
        }
        for (node, r) in reservoir_nodes.iter_mut().zip(&self.kinds.reservoir) {
            *node = NodeState {
                pressure_pa: pv(&r.pressure_pa),
                temperature_k: pv(&r.temperature_k),
            };
        }
    }

    /// Node state as computed by the last right-hand-side evaluation.
    pub fn node_state(&self, node: usize) -> NodeState {
        self.scratch.borrow().nodes[node]
    }

    /// Mass flow of link `l` (the flow slots: named links, then piston bores) at the last
    /// evaluation, kg/s.
    pub fn link_mass_flow(&self, l: usize) -> f64 {
        self.scratch.borrow().link_mdot[l]
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

/// The right-hand side, once, for any scalar (see [`crate::ad`]).
impl Network {
    /// [`OdeSystem::rhs`](crate::ode::OdeSystem::rhs) off its lean path: sizes the scratch,
    /// and keeps the reservoir nodes from here on when their parameters are constants.
    #[inline(never)]
    pub(super) fn rhs_general(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        if !self.scratch.get_mut().sized {
            self.ensure_scratch();
        }
        debug_assert!({
            let nn = self.kinds.chamber.len() + self.kinds.reservoir.len();
            let nl = self.n_links();
            let sc = self.scratch.get_mut();
            sc.nodes.len() == nn && sc.link_mdot.len() == nl
        });
        let mut sc = self.scratch.borrow_mut();
        let fresh = sc.reservoirs_fresh;
        if sc.lean_kinds && !self.isothermal {
            self.eval_with::<f64, false>(t, y, dy, &mut sc, &[], fresh);
        } else {
            // Every component kind, here in `rhs_general` (out of line: the lean path in `rhs`
            // does not carry its registers).
            self.eval_with::<f64, true>(t, y, dy, &mut sc, &[], fresh);
        }
        if !fresh {
            sc.reservoirs_fresh = self.reservoirs_constant();
            sc.lean = sc.lean_kinds && sc.reservoirs_fresh;
            drop(sc);
            // A parameter write clears `reservoirs_fresh` too: the caches are rebuilt here,
            // off the steady path, for the next evaluation (this one read the components).
            self.refresh_stale_links();
            return;
        }
        sc.lean = sc.lean_kinds && sc.reservoirs_fresh;
    }

    /// Every reservoir's pressure and temperature is a constant: its node state can be kept
    /// from one right-hand side to the next (the vent's two `ParamValue` reads per evaluation).
    #[cold]
    fn reservoirs_constant(&self) -> bool {
        let c = |p: &ParamValue| matches!(p, ParamValue::Const(_));
        self.kinds
            .reservoir
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
    /// false: the network has no components but chambers, reservoirs and kinds of the lean
    /// path (`Element::LEAN`), and neither an extra term nor isothermal gas (the caller
    /// checks), and the code for the others is left out.
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
        let e = Eval {
            gas: &self.gas,
            t,
            seg,
            seeds,
            nodes: &sc.nodes,
            y,
            flags: &self.exited,
            modes: &self.modes,
            nc: self.kinds.chamber.len(),
            acc: self.layout.accumulator_offset,
        };
        let flows = &mut sc.link_mdot;
        let present = sc.present;
        // Every kind's terms, links before boundaries; each kind behind a test of its own bit
        // in `present`, and each role behind one of its kinds' bits, so that a network pays for
        // the kinds it has (on the lean path, the lean kinds only, untested). The flow slots
        // are counted along (`Offsets::flow`): on the lean path the first lean kind's
        // start is the constant 0, the other kinds being empty there.
        let mut link = 0;
        macro_rules! terms {
            ($K:ident) => {
                let items = $K::list(&self.kinds);
                debug_assert_eq!(link, self.layout.first.flow[$K::INDEX]);
                let at = Slots {
                    first_state: self.layout.first.state[$K::INDEX],
                    flows: &mut flows[link..],
                    first_flag: self.layout.first.flag[$K::INDEX],
                    first_mode: self.layout.first.event[$K::INDEX],
                };
                $K::terms(items, $K::cache(&self.caches), &e, dy, at);
                link += items.len() * $K::FLOWS;
            };
        }
        if !FULL || present & LINK_KINDS != 0 {
            each_kind!(K => {
                if const { is_link(K::KIND.role) && (FULL || K::LEAN) }
                    && (!FULL || present & (1 << K::INDEX) != 0)
                {
                    terms!(K);
                }
            });
        }
        if FULL && present & BOUNDARY_KINDS != 0 {
            each_kind!(K => {
                if const { matches!(K::KIND.role, Role::Boundary) }
                    && present & (1 << K::INDEX) != 0
                {
                    terms!(K);
                }
            });
        }
        let _ = link;
        if !FULL {
            return;
        }
        for term in &self.extra_terms {
            T::add_extra(&**term, y, dy);
        }
        if self.isothermal {
            // dU/dt = c_v·T₀·dm/dt; the heat that holds T₀ is counted as energy that left.
            let acc = self.layout.accumulator_offset;
            let cv = self.gas.cv_j_per_kg_k;
            for (i, ch) in self.kinds.chamber.iter().enumerate() {
                let o = i * chamber::STATES;
                let du = dy[o + chamber::MASS] * (cv * ch.initial_temperature.value);
                dy[acc + 1] += dy[o + chamber::ENERGY] - du;
                dy[o + chamber::ENERGY] = du;
            }
        }
    }
}
