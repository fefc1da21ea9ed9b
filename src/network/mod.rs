//! The network: every component owns a slice of one flat state vector and adds its terms to
//! dy/dt, as Cantera's `ReactorNet::eval` does.
//!
//! State layout (fixed when the network is built):
//! `[m, U, V] per chamber | [x, v] per piston | [swept volume] per wall | [q] per inertance valve |
//! mass_left, energy_left]`.
//! The two accumulators integrate the mass and energy that left the gas and the pistons (into
//! reservoirs, through friction, damping and dissipating walls), so that `mass_total` and
//! `energy_total` are constant in exact arithmetic and drift only by integration error.
//!
//! Isothermal gas (`[gas] isothermal = true`, FONSim's containers): every chamber keeps its
//! initial temperature T₀. Mass and volume are integrated as always; the energy equation is
//! replaced by dU/dt = c_v·T₀·dm/dt, and the difference to the adiabatic dU/dt (the heat the
//! surroundings exchange to hold T₀) goes into `energy_left`, so `energy_total` = ΣU + piston
//! energy + energy_left stays closed then too.

mod events;
mod lookup;
mod outputs;
mod pattern;
mod sensitivity;
mod states;

pub use events::EventOutcome;
pub use outputs::Extra;
pub use pattern::parameter_rows;
pub use sensitivity::SensitivityParameter;

use std::cell::RefCell;

use num_dual::Dual64;
use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c, copysign, max0};
use crate::components::{
    Chamber, InertanceValve, MassFlow, NodeState, Orifice, OrificeForm, Piston, Reservoir,
    Restrictor, Tube, Valve, Wall, chamber, orifice, piston, restrictor, valve,
};
use crate::gas::IdealGas;
use crate::ode::{BlockLayout, OdeSystem};
use crate::param::ParamValue;
use crate::units::from_si;

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
    /// First state q (m³/s) of the inertance valves.
    pub inertance_offset: usize,
    pub accumulator_offset: usize,
}

/// The component kinds beyond the first seven, and the isothermal switch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Extras {
    pub mass_flows: Vec<MassFlow>,
    pub restrictors: Vec<Restrictor>,
    pub tubes: Vec<Tube>,
    pub inertance_valves: Vec<InertanceValve>,
    pub isothermal: bool,
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

/// Node states and link flows of one evaluation, allocated once (per scalar type).
#[derive(Clone, Debug)]
struct Scratch<T> {
    nodes: Vec<NodeState<T>>,
    link_mdot: Vec<T>,
    /// Sized for this network (a network's node and link counts never change after it is
    /// built; a deserialized or moved-out scratch is the empty default, not sized).
    sized: bool,
    /// The network has links or boundaries beyond orifices and valves (see
    /// [`Network::eval_more`]): one test skips six empty kinds on networks of orifices and valves.
    more: bool,
    /// The links are valves alone (no orifices, nothing `more`): see [`Network::rhs`].
    valves_only: bool,
    /// `valves_only` and `reservoirs_fresh` (and so sized): [`Network::rhs`]'s one test.
    lean: bool,
    /// The reservoir nodes hold their constant pressure and temperature already (the plain
    /// f64 right-hand side only, see [`Network::rhs`]): every parameter is constant and none
    /// was written since ([`Network::param_mut`] clears it).
    reservoirs_fresh: bool,
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
    fn ensure(&mut self, nn: usize, nl: usize, more: bool, no_orifices: bool) {
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

/// The next time-table breakpoint as last computed: `next_s` is the earliest breakpoint after
/// `from_s`, so it is also the earliest after any t in [from_s, next_s) (there is none in
/// between). Not serialized: a restored network starts without it.
#[derive(Clone, Copy, Debug, Default)]
struct BreakpointCache {
    valid: bool,
    from_s: f64,
    next_s: Option<f64>,
}

/// An orifice's flow law with its constant parameters (see [`OrificeLinks`]).
#[derive(Clone, Copy, Debug)]
enum ConstLaw {
    /// C_d·A, m²: the product [`Orifice::mass_flow_with`] forms, so the same bits.
    Isentropic(f64),
    /// Sonic conductance (m³/(s·Pa)) and critical pressure ratio.
    Iso6358(f64, f64),
}

/// One orifice as the right-hand side reads it: its nodes and its constant law.
#[derive(Clone, Copy, Debug)]
struct OrificeLink {
    from: u32,
    to: u32,
    /// Index in dy of each end's (mass, energy) pair (see [`ValveLink`]).
    dy_from: u32,
    dy_to: u32,
    law: ConstLaw,
}

/// The orifices reduced to their nodes, the offsets of their ends in dy and their constant
/// parameters, 40 bytes each against an [`Orifice`]'s 88 (its name, `usize` nodes, parameters
/// that may be tables): the right-hand side reads every orifice, which on large networks is
/// most of the bytes it streams (at 100k components the orifices alone outgrow L2). The dy
/// offsets spare each end its chamber-or-accumulator test (scale bench's rhs −5 %). Built with
/// the network, and again by the right-hand side (`rhs_general`, [`OdeSystem::jvp`]) after a
/// parameter write ([`Network::param_mut`] marks them stale). Not serialized: a restored
/// network rebuilds them.
#[derive(Clone, Debug, Default)]
struct OrificeLinks {
    state: LinksState,
    links: Vec<OrificeLink>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum LinksState {
    /// Not built since the network was made or a parameter written.
    #[default]
    Stale,
    /// `links` holds every orifice.
    Usable,
    /// Some orifice's parameter is not a constant (or the indices exceed `u32`): the orifices
    /// themselves are read.
    Unusable,
}

/// One valve as the right-hand side reads it (see [`ValveLinks`]).
#[derive(Clone, Copy, Debug)]
struct ValveLink {
    from: u32,
    to: u32,
    /// Index in dy of each end's (mass, energy) pair: its chamber's, or the accumulators'.
    dy_from: u32,
    dy_to: u32,
    /// K·opening, kg/(s·Pa), when both are constants (the product
    /// [`Valve::mass_flow_kg_per_s`] forms first, so the same bits).
    k_open: f64,
    /// The valve's index (the loop carries no counter of its own).
    index: u32,
    /// K or the opening varies (a table, a ramp): both read from the valve at t.
    varying: bool,
    one_way: bool,
}

/// The valves reduced to their nodes, the offsets of their ends in dy and their constant
/// K·opening, 32 bytes each against a [`Valve`]'s 96: per valve and evaluation the generic
/// loop paid two parameter matches, the upstream index tests and six bounds checks, as much as
/// the flow's arithmetic (the 20-tank chain's right-hand side). Built with the network and,
/// like [`OrificeLinks`], again after a parameter write ([`Network::param_mut`] marks them
/// stale). Not serialized.
#[derive(Clone, Debug, Default)]
struct ValveLinks {
    state: LinksState,
    links: Vec<ValveLink>,
}

/// Where node `node`'s (mass, energy) pair starts in dy (`nc` chambers, accumulators at `acc`):
/// a chamber's (m, U) and the accumulators (mass_left, energy_left) are both two adjacent
/// states in this order, so a link's end is one index, without branches.
#[inline(always)]
fn dy_pair(nc: usize, acc: usize, node: usize) -> usize {
    const _: () = assert!(chamber::MASS == 0 && chamber::ENERGY == 1);
    if node < nc {
        node * chamber::STATES
    } else {
        acc
    }
}

/// Mass flow of an orifice with constant parameters: [`Orifice::mass_flow_with`]'s arithmetic.
#[inline(always)]
fn const_orifice_flow<T: Scalar>(
    gas: &IdealGas,
    law: ConstLaw,
    from: NodeState<T>,
    to: NodeState<T>,
) -> T {
    match law {
        ConstLaw::Isentropic(k) => orifice::signed_mass_flow_kg_per_s(gas, c(k), from, to),
        ConstLaw::Iso6358(cond, b) => {
            orifice::signed_iso6358_mass_flow_kg_per_s(c(cond), c(b), from, to)
        }
    }
}

/// A test-only component that removes a fraction of a chamber's mass and energy per second
/// without counting it as having left (see `Network::test_sink`): only in builds with the
/// `test-support` feature (the test builds), never in the shipped library.
#[cfg(feature = "test-support")]
#[derive(Clone, Debug, PartialEq)]
pub struct TestSink {
    pub chamber: usize,
    pub mass_rate_per_s: f64,
    pub energy_rate_per_s: f64,
}

/// The dual-number evaluation's buffers (see [`Network::jvp`]), allocated once.
#[derive(Clone, Debug, Default)]
struct DualScratch {
    sc: Scratch<Dual64>,
    y: Vec<Dual64>,
    dy: Vec<Dual64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Network {
    pub gas: IdealGas,
    // The components are private: their parameters change only through `set_scalar`,
    // `adopt_input` and the `_mut` accessors, which drop the cached next breakpoint, so no
    // write can leave it stale. Read them through the accessors of the same name.
    chambers: Vec<Chamber>,
    reservoirs: Vec<Reservoir>,
    orifices: Vec<Orifice>,
    valves: Vec<Valve>,
    pistons: Vec<Piston>,
    walls: Vec<Wall>,
    mass_flows: Vec<MassFlow>,
    restrictors: Vec<Restrictor>,
    tubes: Vec<Tube>,
    inertance_valves: Vec<InertanceValve>,
    /// Chambers hold their initial temperature (see the module documentation).
    pub isothermal: bool,
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
    /// A deliberately non-conserving sink, for the tests of checks 4–7 only (no model file
    /// can create it; the `test-support` feature only).
    #[cfg(feature = "test-support")]
    #[serde(skip)]
    pub test_sink: Option<TestSink>,
    /// In a cell so that `rhs` lends it to `eval` (which borrows the network immutably)
    /// without moving the buffers out and back on every call.
    #[serde(skip)]
    scratch: RefCell<Scratch<f64>>,
    #[serde(skip)]
    dual: DualScratch,
    /// See [`Self::next_breakpoint`]; dropped by every writer of a parameter
    /// ([`Self::set_scalar`], [`Self::adopt_input`], [`Self::pistons_mut`]); the components
    /// are private, so there is no other way to write one.
    #[serde(skip)]
    breakpoints: BreakpointCache,
    #[serde(skip)]
    orifice_links: OrificeLinks,
    #[serde(skip)]
    valve_links: ValveLinks,
    /// Test builds: per chamber, whether its mass can move, for the check of the constant
    /// masses (`debug_check_constant_states`), sized with the scratch so that the check does
    /// not allocate. Empty in release builds.
    #[serde(skip)]
    mass_moves_scratch: RefCell<Vec<bool>>,
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
        Self::with_extras(
            gas,
            chambers,
            reservoirs,
            orifices,
            valves,
            pistons,
            walls,
            Extras::default(),
        )
    }

    /// A network with every component kind.
    #[allow(clippy::too_many_arguments)]
    pub fn with_extras(
        gas: IdealGas,
        chambers: Vec<Chamber>,
        reservoirs: Vec<Reservoir>,
        orifices: Vec<Orifice>,
        valves: Vec<Valve>,
        pistons: Vec<Piston>,
        walls: Vec<Wall>,
        extras: Extras,
    ) -> Self {
        let nc = chambers.len();
        let piston_offset = nc * chamber::STATES;
        let wall_offset = piston_offset + pistons.len() * piston::STATES;
        let inertance_offset = wall_offset + walls.len();
        let accumulator_offset = inertance_offset + extras.inertance_valves.len();
        let layout = Layout {
            n_states: accumulator_offset + 2,
            piston_offset,
            wall_offset,
            inertance_offset,
            accumulator_offset,
        };
        let mut boundaries = Vec::new();
        for (j, p) in pistons.iter().enumerate() {
            let xs = piston_offset + j * piston::STATES + piston::POSITION;
            if p.behind < nc {
                boundaries.push(Boundary {
                    chamber: p.behind,
                    state: xs,
                    factor: p.area.value,
                    area_m2: p.area.value,
                });
            }
            if p.ahead < nc {
                boundaries.push(Boundary {
                    chamber: p.ahead,
                    state: xs,
                    factor: -p.area.value,
                    area_m2: p.area.value,
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
                    area_m2: wall_area_scale(w),
                });
            }
            if w.right < nc {
                boundaries.push(Boundary {
                    chamber: w.right,
                    state: s,
                    factor: -1.0,
                    area_m2: wall_area_scale(w),
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
            mass_flows: extras.mass_flows,
            restrictors: extras.restrictors,
            tubes: extras.tubes,
            inertance_valves: extras.inertance_valves,
            isothermal: extras.isothermal,
            exited,
            boundaries,
            boundary_start,
            layout,
            segment_start_s: 0.0,
            rhs_evaluations: 0,
            #[cfg(feature = "test-support")]
            test_sink: None,
            scratch: RefCell::default(),
            dual: DualScratch::default(),
            breakpoints: BreakpointCache::default(),
            orifice_links: OrificeLinks::default(),
            valve_links: ValveLinks::default(),
            mass_moves_scratch: RefCell::default(),
        };
        net.ensure_scratch();
        net.refresh_orifice_links();
        net.refresh_valve_links();
        net
    }

    fn ensure_scratch(&mut self) {
        let nn = self.chambers.len() + self.reservoirs.len();
        let nl = self.n_links();
        let more = self.has_more_kinds();
        let no_orifices = self.orifices.is_empty();
        self.scratch.get_mut().ensure(nn, nl, more, no_orifices);
        let nc = self.chambers.len();
        let moves = self.mass_moves_scratch.get_mut();
        if cfg!(debug_assertions) && moves.len() != nc {
            *moves = vec![false; nc];
        }
    }

    /// Rebuild whichever compact links (`OrificeLinks`, `ValveLinks`) a parameter write
    /// (`param_mut`) left stale.
    fn refresh_stale_links(&mut self) {
        if self.orifice_links.state == LinksState::Stale {
            self.refresh_orifice_links();
        }
        if self.valve_links.state == LinksState::Stale {
            self.refresh_valve_links();
        }
    }

    /// Rebuild [`OrificeLinks`] (in place: no allocation once built).
    #[cold]
    fn refresh_orifice_links(&mut self) {
        let nc = self.chambers.len();
        let nodes = nc + self.reservoirs.len();
        let acc = self.layout.accumulator_offset;
        let l = &mut self.orifice_links;
        l.links.clear();
        l.state = LinksState::Unusable;
        if nodes > u32::MAX as usize || self.layout.n_states > u32::MAX as usize {
            return;
        }
        let dy_at = |node| dy_pair(nc, acc, node) as u32;
        let konst = |p: &ParamValue| match p {
            ParamValue::Const(v) => Some(*v),
            _ => None,
        };
        for o in &self.orifices {
            if !o.is_plain() {
                return;
            }
            let law = match &o.form {
                OrificeForm::Isentropic {
                    area_m2,
                    discharge_coefficient,
                } => match (konst(discharge_coefficient), konst(area_m2)) {
                    (Some(cd), Some(a)) => ConstLaw::Isentropic(cd * a),
                    _ => return,
                },
                OrificeForm::Iso6358 {
                    sonic_conductance_m3_per_s_pa,
                    critical_pressure_ratio,
                } => match (
                    konst(sonic_conductance_m3_per_s_pa),
                    konst(critical_pressure_ratio),
                ) {
                    (Some(cond), Some(b)) => ConstLaw::Iso6358(cond, b),
                    _ => return,
                },
            };
            l.links.push(OrificeLink {
                from: o.from as u32,
                to: o.to as u32,
                dy_from: dy_at(o.from),
                dy_to: dy_at(o.to),
                law,
            });
        }
        l.state = LinksState::Usable;
    }

    /// Rebuild [`ValveLinks`] (in place: no allocation once built).
    #[cold]
    fn refresh_valve_links(&mut self) {
        let nc = self.chambers.len();
        let nodes = nc + self.reservoirs.len();
        let acc = self.layout.accumulator_offset;
        let l = &mut self.valve_links;
        l.links.clear();
        l.state = LinksState::Unusable;
        let too_many = [nodes, self.layout.n_states, self.valves.len()];
        if too_many.iter().any(|&n| n > u32::MAX as usize) {
            return;
        }
        let dy_at = |node| dy_pair(nc, acc, node) as u32;
        for (index, v) in self.valves.iter().enumerate() {
            let (k, open) = (&*v.coefficient_kg_per_s_pa, &*v.opening);
            let (k_open, varying) = match (k, open) {
                (ParamValue::Const(k), ParamValue::Const(o)) => (k * o, false),
                _ => (0.0, true),
            };
            l.links.push(ValveLink {
                from: v.from as u32,
                to: v.to as u32,
                dy_from: dy_at(v.from),
                dy_to: dy_at(v.to),
                k_open,
                index: index as u32,
                varying,
                one_way: v.one_way,
            });
        }
        l.state = LinksState::Usable;
    }

    /// Whether a test sink is present (never without the `test-support` feature).
    #[inline(always)]
    fn has_test_sink(&self) -> bool {
        #[cfg(feature = "test-support")]
        return self.test_sink.is_some();
        #[cfg(not(feature = "test-support"))]
        false
    }

    /// Whether any link or boundary other than orifices and valves exists (see `eval_more`).
    fn has_more_kinds(&self) -> bool {
        !(self.mass_flows.is_empty()
            && self.restrictors.is_empty()
            && self.tubes.is_empty()
            && self.inertance_valves.is_empty()
            && self.pistons.is_empty()
            && self.walls.is_empty())
    }

    /// Flow links: those with a `<name>.mdot` output (orifices, valves, mass flows, restrictors,
    /// tubes, inertance valves, in this order), then exited pistons' bores.
    pub fn n_links(&self) -> usize {
        self.n_named_links() + self.pistons.len()
    }

    /// Links with a `<name>.mdot` output (see [`Self::n_links`]).
    pub fn n_named_links(&self) -> usize {
        self.orifices.len()
            + self.valves.len()
            + self.mass_flows.len()
            + self.restrictors.len()
            + self.tubes.len()
            + self.inertance_valves.len()
    }

    /// Volume flow q (m³/s) of inertance valve `k` in state `y`.
    pub fn inertance_flow_m3_per_s(&self, k: usize, y: &[f64]) -> f64 {
        y[self.layout.inertance_offset + k]
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
        let mut v = self.chambers[i].dead_volume.value;
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
            y[o + piston::POSITION] = p.x0.value;
            y[o + piston::VELOCITY] = p.v0.value;
        }
        for i in 0..self.chambers.len() {
            let v = self.geometric_volume_m3(i, &y);
            let (m, u) = self.chambers[i].initial_mass_energy(&self.gas, from_si(v));
            let o = i * chamber::STATES;
            y[o + chamber::MASS] = m.value;
            y[o + chamber::ENERGY] = u.value;
            y[o + chamber::VOLUME] = v;
        }
        for (k, iv) in self.inertance_valves.iter().enumerate() {
            y[self.layout.inertance_offset + k] = iv.q0.value;
        }
        y
    }

    /// Earliest time-table breakpoint strictly after `t`.
    pub fn next_breakpoint_after(&self, t: f64) -> Option<f64> {
        let params = self
            .reservoirs
            .iter()
            .flat_map(|r| [r.pressure_pa.raw(), r.temperature_k.raw()])
            .chain(self.orifices.iter().flat_map(|o| o.params()))
            .chain(
                self.valves
                    .iter()
                    .flat_map(|v| [v.opening.raw(), v.coefficient_kg_per_s_pa.raw()]),
            )
            .chain(self.walls.iter().flat_map(|w| w.params()))
            .chain(self.pistons.iter().flat_map(|p| p.params()))
            .chain(self.mass_flows.iter().map(|m| m.rate_kg_per_s.raw()))
            .chain(self.restrictors.iter().flat_map(|r| r.params()))
            .chain(self.tubes.iter().flat_map(|x| x.params()))
            .chain(self.inertance_valves.iter().flat_map(|x| x.params()));
        params
            .filter_map(|p| p.next_breakpoint_after(t))
            .fold(None, |acc: Option<f64>, b| {
                Some(acc.map_or(b, |a| a.min(b)))
            })
    }

    /// [`Self::next_breakpoint_after`], computed once per segment between breakpoints instead
    /// of on every step (it visits every parameter of the network): the driver asks after each
    /// step, with a time that only grows until a breakpoint is crossed.
    #[inline]
    pub fn next_breakpoint(&mut self, t: f64) -> Option<f64> {
        let c = self.breakpoints;
        if c.valid && t >= c.from_s && c.next_s.is_none_or(|b| t < b) {
            debug_assert_eq!(c.next_s, self.next_breakpoint_after(t));
            return c.next_s;
        }
        let next_s = self.next_breakpoint_after(t);
        self.breakpoints = BreakpointCache {
            valid: true,
            from_s: t,
            next_s,
        };
        next_s
    }

    /// Drop the cached next breakpoint: called by every writer of a parameter.
    fn forget_breakpoints(&mut self) {
        self.breakpoints.valid = false;
    }

    // ---- The components, read-only ------------------------------------------------------

    #[inline]
    pub fn chambers(&self) -> &[Chamber] {
        &self.chambers
    }

    #[inline]
    pub fn reservoirs(&self) -> &[Reservoir] {
        &self.reservoirs
    }

    #[inline]
    pub fn orifices(&self) -> &[Orifice] {
        &self.orifices
    }

    #[inline]
    pub fn valves(&self) -> &[Valve] {
        &self.valves
    }

    #[inline]
    pub fn pistons(&self) -> &[Piston] {
        &self.pistons
    }

    #[inline]
    pub fn walls(&self) -> &[Wall] {
        &self.walls
    }

    #[inline]
    pub fn mass_flows(&self) -> &[MassFlow] {
        &self.mass_flows
    }

    #[inline]
    pub fn restrictors(&self) -> &[Restrictor] {
        &self.restrictors
    }

    #[inline]
    pub fn tubes(&self) -> &[Tube] {
        &self.tubes
    }

    #[inline]
    pub fn inertance_valves(&self) -> &[InertanceValve] {
        &self.inertance_valves
    }

    /// The pistons, to change a parameter in place (the sensitivity tests perturb a mass):
    /// drops the cached next breakpoint, as every writer of a parameter does.
    pub fn pistons_mut(&mut self) -> &mut [Piston] {
        self.forget_breakpoints();
        &mut self.pistons
    }

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

    /// Total mass: gas in chambers plus the net mass that left into reservoirs, kg.
    #[inline]
    pub fn mass_total_kg(&self, y: &[f64]) -> f64 {
        self.mass_total(|i| y[i])
    }

    /// Closed energy total: internal energy, piston kinetic and spring energy, and everything that
    /// left through reservoirs, friction, damping and walls, J.
    #[inline]
    pub fn energy_total_j(&self, y: &[f64]) -> f64 {
        self.energy_total(|i| y[i], |j| self.pistons[j].mass.value)
    }

    /// [`Self::mass_total_kg`] over any scalar: `y(i)` is state `i` (a closure, so that the
    /// dual evaluation in [`Self::totals_sensitivity`] needs no dual state vector).
    #[inline]
    fn mass_total<T: Scalar>(&self, y: impl Fn(usize) -> T) -> T {
        let gas: T = (0..self.chambers.len())
            .map(|i| y(i * chamber::STATES + chamber::MASS))
            .sum();
        gas + y(self.layout.accumulator_offset)
    }

    /// [`Self::energy_total_j`] over any scalar: `y(i)` is state `i`, `mass_kg(j)` piston `j`'s
    /// mass (which the kinetic energy depends on directly, so it may be seeded).
    #[inline]
    fn energy_total<T: Scalar>(&self, y: impl Fn(usize) -> T, mass_kg: impl Fn(usize) -> T) -> T {
        let u: T = (0..self.chambers.len())
            .map(|i| y(i * chamber::STATES + chamber::ENERGY))
            .sum();
        let mech: T = self
            .pistons
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let o = self.layout.piston_offset + j * piston::STATES;
                let (x, v) = (y(o + piston::POSITION), y(o + piston::VELOCITY));
                mass_kg(j) * 0.5 * v * v + p.spring_energy_j(x)
            })
            .sum();
        u + mech + y(self.layout.accumulator_offset + 1)
    }
}

impl Network {
    /// Whether a piston or a wall bounds chamber `k` (and so moves its volume).
    fn volume_moves(&self, k: usize) -> bool {
        self.pistons.iter().any(|p| p.behind == k || p.ahead == k)
            || self.walls.iter().any(|w| w.left == k || w.right == k)
    }

    /// Per chamber (`moves`, one entry each, overwritten): whether an element can change its
    /// mass. Only `transfer` and the test sink write dm/dt; `transfer` moves mass along the
    /// flow links (orifices, valves, mass flows, restrictors, tubes) and along a piston's bore
    /// once the piston has left it. Every piston counts, with an `x_exit` or without: a
    /// restored FMU state may hold any exit flags (they are checked for their count only), and
    /// one set for a piston without an exit opens its bore all the same, after the BDF has
    /// taken the masses for constant. Walls move volume only, and an inertance valve's liquid
    /// runs between reservoirs (it writes only its own q). No run-time input sets a chamber's
    /// mass (the keys settable during a run set flows and boundary conditions only; a link
    /// whose flow an input may switch on is a link all the same, so its chambers count as
    /// moving). One pass over the components, no allocation.
    fn mark_mass_moves(&self, moves: &mut [bool]) {
        debug_assert_eq!(moves.len(), self.chambers.len());
        moves.fill(false);
        let nc = self.chambers.len();
        let mut mark = |node: usize| {
            if node < nc {
                moves[node] = true;
            }
        };
        for x in self.links().filter(|x| !x.flow_is_state()) {
            let (a, b) = x.ends();
            mark(a);
            mark(b);
        }
        for p in &self.pistons {
            mark(p.behind);
            mark(p.ahead);
        }
        #[cfg(feature = "test-support")]
        if let Some(k) = &self.test_sink {
            mark(k.chamber);
        }
    }

    /// [`Self::mark_mass_moves`] into a new vector.
    pub(crate) fn mass_moves(&self) -> Vec<bool> {
        let mut moves = vec![false; self.chambers.len()];
        self.mark_mass_moves(&mut moves);
        moves
    }

    /// Test builds: the states declared constant (`constant_states`) have f_i = 0 (without
    /// allocating, as `rhs`: the masses through `mass_moves_scratch`).
    #[inline(always)]
    fn debug_check_constant_states(&self, dy: &[f64]) {
        if cfg!(debug_assertions) {
            // Moved volumes looked up only where dV/dt ≠ 0: linear in the chambers.
            for k in 0..self.chambers.len() {
                let i = k * chamber::STATES + chamber::VOLUME;
                assert!(
                    dy[i] == 0.0 || self.volume_moves(k),
                    "constant state {i} has dV/dt = {}",
                    dy[i]
                );
            }
            let mut moves = self.mass_moves_scratch.borrow_mut();
            if moves.len() == self.chambers.len() {
                self.mark_mass_moves(&mut moves);
                for (k, &m) in moves.iter().enumerate() {
                    let i = k * chamber::STATES + chamber::MASS;
                    assert!(
                        dy[i] == 0.0 || m,
                        "constant state {i} (a closed chamber's mass) has dm/dt = {}",
                        dy[i]
                    );
                }
            }
        }
    }
}

/// The area a wall's desync threshold is scaled by: its largest area, m².
fn wall_area_scale(w: &Wall) -> f64 {
    w.area_m2
        .all_values()
        .iter()
        .fold(0.0_f64, |a, &b| a.max(b.abs()))
}

impl OdeSystem for Network {
    /// Chambers first, each as (m, U, V): a volume that no piston or wall moves and the mass of
    /// a closed chamber are constant (`constant_states`), the volume most often.
    const BLOCKS: Option<BlockLayout> = {
        assert!(chamber::VOLUME + 1 == chamber::STATES);
        Some(BlockLayout {
            size: chamber::STATES,
            live: chamber::VOLUME,
        })
    };

    fn dimension(&self) -> usize {
        self.layout.n_states
    }

    fn sparsity(&self) -> Option<crate::sparsity::Pattern> {
        pattern::network_pattern(self)
    }

    /// The walls' swept volumes (for check 9 only) and the two accumulators (mass and energy
    /// that left: checks 4 and 5, the `mass_total` / `energy_total` outputs): no derivative
    /// reads them. Out of BDF's error test, they are accurate to the BDF formula's truncation
    /// of integrals of controlled states. A swept volume starts at 0: with atol ≪ its scale its
    /// weight 1/(rtol·|y| + atol) set the first step (~10⁻⁷ s on `cantera_wall`, CVODES's
    /// 2.4·10⁻⁴ s) and held the next ones small (docs/performance.md, "BDF steps against
    /// CVODES"); Cantera's reactors have no such state.
    fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
        let l = &self.layout;
        [
            l.wall_offset..l.inertance_offset,
            l.accumulator_offset..l.n_states,
        ]
    }

    /// The volumes of the chambers that no piston or wall bounds: only `boundary_work` writes
    /// dV/dt, so theirs is 0 (their rows of `network_pattern` are empty, for the same reason);
    /// and the masses of the chambers that no element can fill or empty (no flow link, no
    /// piston, whose bore opens when it leaves: [`Self::mark_mass_moves`]), whose dm/dt is 0
    /// (their rows of `network_pattern` are empty too). Increasing.
    fn constant_states(&self) -> Vec<usize> {
        let mass_moves = self.mass_moves();
        let mut states = Vec::new();
        for (k, &mass_moves) in mass_moves.iter().enumerate() {
            let o = k * chamber::STATES;
            if !mass_moves {
                states.push(o + chamber::MASS);
            }
            if !self.volume_moves(k) {
                states.push(o + chamber::VOLUME);
            }
        }
        states
    }

    /// Mass: every chamber's mass and `mass_left` (`mass_total`, check 4). Every flow leaves one
    /// node and enters another through `transfer`, so the sum of their derivatives is zero
    /// whatever the state. (Energy is not linear in the states when pistons move: their kinetic
    /// energy.)
    fn linear_invariants(&self) -> Vec<Vec<usize>> {
        let mut mass: Vec<usize> = (0..self.chambers.len())
            .map(|i| i * chamber::STATES + chamber::MASS)
            .collect();
        mass.push(self.layout.accumulator_offset);
        vec![mass]
    }

    #[inline(always)]
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        debug_assert_eq!(y.len(), self.layout.n_states);
        debug_assert_eq!(dy.len(), self.layout.n_states);
        self.rhs_evaluations += 1;
        // `&mut self`: no other borrow of the cell exists, so this cannot fail.
        let mut sc = self.scratch.borrow_mut();
        if sc.lean && !self.has_test_sink() && !self.isothermal {
            // Chambers, reservoirs and valves alone (vents and chains of one-way valves),
            // the reservoirs' nodes kept: the same arithmetic without the other kinds' code,
            // whose registers and stack cost a small network's evaluation more than its
            // physics, and with one flag for the three tests.
            self.eval_with::<f64, false>(t, y, dy, &mut sc, &[], true);
            drop(sc);
            self.debug_check_constant_states(dy);
            return;
        }
        drop(sc);
        self.rhs_general(t, y, dy);
        self.debug_check_constant_states(dy);
    }

    /// f(t, y) and J·v in one dual-number evaluation (each state y_i + v_i·ε). The f64
    /// scratch (node states, link flows of the last `rhs`) is left alone.
    fn jvp(&mut self, t: f64, y: &[f64], v: &[f64], dydt: &mut [f64], jv: &mut [f64]) -> bool {
        let n = self.layout.n_states;
        debug_assert!(y.len() == n && v.len() == n && dydt.len() == n && jv.len() == n);
        self.refresh_stale_links();
        let mut d = std::mem::take(&mut self.dual);
        d.sc.ensure(
            self.chambers.len() + self.reservoirs.len(),
            self.n_links(),
            self.has_more_kinds(),
            self.orifices.is_empty(),
        );
        if d.y.len() != n {
            d.y = vec![Dual64::from(0.0); n];
            d.dy = vec![Dual64::from(0.0); n];
        }
        for i in 0..n {
            d.y[i] = Dual64::new(y[i], v[i]);
        }
        self.eval(t, &d.y, &mut d.dy, &mut d.sc, &[]);
        for i in 0..n {
            dydt[i] = d.dy[i].re;
            jv[i] = d.dy[i].eps;
        }
        self.dual = d;
        true
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
fn param_value<T: Scalar>(p: &ParamValue, seeds: &[(&ParamValue, T)], t: f64, seg: f64) -> T {
    for (q, v) in seeds {
        if std::ptr::eq(*q, p) {
            return *v;
        }
    }
    c(p.value(t, seg))
}

/// The right-hand side, once, for any scalar (see [`crate::ad`]).
impl Network {
    /// [`OdeSystem::rhs`] off its valves-only path: sizes the scratch, and keeps the reservoir
    /// nodes from here on when their parameters are constants.
    #[inline(never)]
    fn rhs_general(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
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
        if sc.valves_only && !self.has_test_sink() && !self.isothermal {
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
    fn eval<T: Scalar>(
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
    /// false: the network has no links but valves and neither a test sink nor isothermal gas
    /// (the caller checks), and the code for those is left out.
    #[inline]
    fn eval_with<T: Scalar, const FULL: bool>(
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

        #[cfg(feature = "test-support")]
        if let Some(k) = &self.test_sink {
            // Unaccounted losses (not in the accumulators): the totals are not conserved.
            let o = k.chamber * chamber::STATES;
            dy[o + chamber::MASS] -= y[o + chamber::MASS] * k.mass_rate_per_s;
            dy[o + chamber::ENERGY] -= y[o + chamber::ENERGY] * k.energy_rate_per_s;
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

    /// The orifices' flows from their links ([`OrificeLinks`], usable) into `dy` and
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
    /// links ([`ValveLinks`], usable, and no seed replaces a parameter).
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
    fn eval_more<T: Scalar>(
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
    }
}
