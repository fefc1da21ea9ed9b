//! What a component kind is to the network: the trait [`Element`] every kind implements in its
//! own file, as each device of SPICE brings its own setup (its states), load (its terms of the
//! equations), and the rest of the device table's entries. The network (`crate::network`) holds
//! one list per kind of the registry (`crate::with_kinds!`) and calls these in loops that the
//! registry generates, with static dispatch: a kind's terms are inlined into the right-hand side
//! as if written out there.
//!
//! Everything but the terms has a default: no states, no events, no outputs, no flags; its
//! Jacobian pattern one clique of its own states and its nodes' states ([`Element::cliques`]),
//! which is a superset of any coupling a kind's terms can make through its nodes.

use std::fmt::Debug;
use std::ops::Range;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ad::Scalar;
use crate::components::NodeState;
use crate::components::chamber;
use crate::components::keys::{Component, Kind, Link, Role};
use crate::gas::IdealGas;
use crate::param::ParamValue;
use crate::units::Unit;

/// A component kind as the network assembles it. Implemented by the component struct of each
/// kind (`Tube`), in the kind's file.
pub trait Element:
    Component + Clone + Debug + PartialEq + Serialize + DeserializeOwned + Sized + 'static
{
    /// The kind's key table (its file's `KIND`).
    const KIND: &'static Kind;
    /// States per component. They follow those of the kinds before it in the registry, kind by
    /// kind, component by component.
    const STATES: usize = 0;
    /// Its states are quadratures: nothing's derivative reads them (a wall's swept volume, for
    /// check 9 only), so they are out of the BDF's error test and their Jacobian columns are
    /// empty. At most one kind has them (`OdeSystem::quadratures` gives one range).
    const QUADRATURES: bool = false;
    /// Flow slots per component in the network's link flows: a link's flow is its
    /// `<name>.mdot` output (the slots of the kinds of role `Link` and `LiquidLink`, in the
    /// registry's order), then the slots of other kinds (a piston's bore once it has left it).
    const FLOWS: usize = match Self::KIND.role {
        Role::Link | Role::LiquidLink => 1,
        Role::Node | Role::Boundary => 0,
    };
    /// Discrete flags per component (0 or 1: a piston's `exited`), kept by the network,
    /// handled by its events and saved with the FMU state.
    const FLAGS: usize = 0;
    /// Event functions per component (see [`Element::event_value`]).
    const EVENTS: usize = 0;
    /// Its events are switches of its law (a kink or a jump of the right-hand side, no jump
    /// of the state): an adaptive method's step that straddled one is taken again to it.
    const SWITCHES: bool = false;
    /// Its flows move gas into or out of the chambers it joins (so their masses are not
    /// constant states): a gas link's, and a piston's through its bore once it has left it.
    const MOVES_MASS: bool = matches!(Self::KIND.role, Role::Link);
    /// Evaluated on the network's lean path (networks of chambers, reservoirs and such kinds
    /// alone: the right-hand side is inlined into `OdeSystem::rhs` without the other kinds'
    /// code). Only for a kind whose terms are a handful of instructions per component.
    const LEAN: bool = false;
    /// Its outputs, per component, after its name (`<name>.<suffix>`); see [`Output`].
    const OUTPUTS: &'static [Output] = &[];
    /// Its states as variables, one per state (`<name>.<suffix>`; an output of the same name is
    /// the same variable).
    const STATE_VARIABLES: &'static [Variable] = &[];
    /// Why a dual-number seed on one of its run-time parameters would not reach the
    /// right-hand side, if it would not (`None`: it does).
    const SEED_REFUSAL: Option<&'static str> = None;
    /// Its terms store mechanical energy ([`Element::stored_energy_j`]), part of
    /// `energy_total`.
    const STORES_ENERGY: bool = false;

    /// What the right-hand side keeps of a kind beyond its components (a compact copy of
    /// constant parameters, [`Compact`]), rebuilt after a parameter write; `()` for none.
    type Cache: Cache;

    /// The nodes it joins (network node indices: chambers, then reservoirs), in its keys'
    /// order (`from`, `to`; `behind`, `ahead`; `left`, `right`).
    fn nodes(&self) -> impl Iterator<Item = usize>;

    /// Its link, if its flow is a `<name>.mdot` output (the kinds of role `Link` and
    /// `LiquidLink`).
    fn as_link(&self) -> Option<&dyn Link> {
        None
    }

    /// Add the terms of every component `items` of the kind to `dy` and their flows to
    /// `at.flows`, at the instant and node states of `e`. The network calls it only when
    /// `items` is not empty (and, on its lean path, for `LEAN` kinds alone). No allocation.
    fn terms<T: Scalar>(
        items: &[Self],
        cache: &Self::Cache,
        e: &Eval<'_, T>,
        dy: &mut [T],
        at: Slots<'_, T>,
    );

    /// Rebuild the kind's cache (after a parameter write marked it stale, and when the network
    /// is built). No allocation once built.
    fn refresh_cache(_items: &[Self], _cache: &mut Self::Cache, _at: &CacheContext) {}

    /// Its initial states into `out` (its own, zero before).
    fn initial_state(&self, _out: &mut [f64]) {}

    /// The scale of its states (`out`, its own, 1 before) for a master's error weights (FMI's
    /// nominal values); `volume0(node)`: a chamber's initial volume (`None` for a reservoir).
    fn nominals(&self, _out: &mut [f64], _volume0: &dyn Fn(usize) -> Option<f64>) {}

    /// The moving boundaries it makes (the chambers whose volumes its state moves), with its
    /// first state `first`; see [`Boundary`].
    fn boundaries(&self, _first: usize, _push: &mut dyn FnMut(Boundary)) {}

    /// Its cliques of the Jacobian pattern: sets of states every one of which may depend on
    /// every other, given as its own states (absolute indices) and nodes (each chamber's three
    /// states). By default one: all its states with all its nodes, into the accumulators as
    /// its role says ([`Accumulators::of`]), moving the nodes' volumes if it is a boundary.
    fn cliques(&self, first: usize, add: &mut dyn FnMut(Clique<'_>)) {
        let mut nodes = [0; MAX_NODES];
        let mut n = 0;
        for node in self.nodes() {
            nodes[n] = node;
            n += 1;
        }
        add(Clique {
            states: first..first + Self::STATES,
            nodes: &nodes[..n],
            accumulators: Accumulators::of(Self::KIND.role),
            moves_volumes: Self::KIND.role == Role::Boundary,
        });
    }

    /// Its stored mechanical energy, J (`STORES_ENERGY` kinds), from its own states `s(i)`,
    /// with its mass `mass_kg` where it is seeded (a sensitivity to a piston's mass).
    fn stored_energy_j<T: Scalar>(&self, _s: impl Fn(usize) -> T, _mass_kg: Option<T>) -> T {
        T::zero()
    }

    /// The own states [`Element::stored_energy_j`] reads, increasing.
    fn stored_energy_states(&self) -> impl Iterator<Item = usize> {
        std::iter::empty()
    }

    /// Event function `e` (< `EVENTS`) at its own states `s` and flag: `None` while it cannot
    /// fire. An event fires where its function crosses 0 upward.
    fn event_value(&self, _e: usize, _s: &[f64], _flag: bool) -> Option<f64> {
        None
    }

    /// ∂g_e/∂s·w over its own states (an event function of its own states is linear in them).
    fn event_gradient(&self, _e: usize, _w: &[f64]) -> f64 {
        0.0
    }

    /// ∂g_e/∂s·w over its own states where the gradient depends on the point `at` (static
    /// friction's breakaway: the drive's sign): [`Element::event_gradient`] by default.
    fn event_gradient_at(&self, e: usize, _at: &EventAt<'_>, w: &[f64]) -> f64 {
        self.event_gradient(e, w)
    }

    /// Whether any of its event functions can ever fire (a plain orifice has no switch): the
    /// driver skips the event search of a network where none can.
    fn has_events(&self) -> bool {
        Self::EVENTS > 0
    }

    /// Event function `e` where it may read its nodes' states too (a valve's cracking point is
    /// a point of its pressure difference): [`Element::event_value`] of its own states by
    /// default. A law's switch in both directions is two events, g and −g, as each fires only
    /// upward.
    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        self.event_value(e, at.s, at.flag)
    }

    /// Whether event `e` is a switch of its law (an adaptive step that straddled it is taken
    /// again to it): [`Element::SWITCHES`] by default.
    fn event_is_switch(&self, _e: usize) -> bool {
        Self::SWITCHES
    }

    /// Whether event `e` can never fire in this component, by its structure (a piston's
    /// cushion events at an end without a cushion): the driver's event search leaves it out,
    /// and Model Exchange does not report it (an indicator that would stay 1).
    fn event_never_fires(&self, _e: usize) -> bool {
        false
    }

    /// Whether the driver locates event `e` where its function crosses zero downward too (a
    /// restart-only kink of a law, met from either side: a flow path's laminar band, left as
    /// well as entered). Model Exchange's importer sees a sign change either way regardless.
    fn event_both_ways(&self, _e: usize) -> bool {
        false
    }

    /// [`Element::handle_event`] where the handler reads its nodes' states too (`at.s` is a
    /// copy of its own states before the event): a piston sticking where the pressures' force
    /// is within static friction.
    fn handle_event_at(
        &self,
        e: usize,
        _at: &EventAt<'_>,
        s: &mut [f64],
        flag: &mut bool,
        energy_left: &mut f64,
    ) -> Handled {
        self.handle_event(e, s, flag, energy_left)
    }

    /// Put a mode held by its law in line with the state where no event can (at the start, or
    /// after another event left it in a mode its switch function is already past): its own
    /// states `s` (a copy; `at.s` the same before), changed in place. Whether it changed them.
    fn settle(&self, _at: &EventAt<'_>, _s: &mut [f64]) -> bool {
        false
    }

    /// The mode its law holds through the steps from the point `at` until its next event,
    /// read by its terms as `Eval::modes[Slots::first_mode + i]`: derived from the state where
    /// the integrator stands (after [`Element::settle`]), so that it is never saved. 0: none
    /// (the law reads its mode from the state at every instant).
    fn held_mode(&self, _at: &EventAt<'_>) -> i8 {
        0
    }

    /// Whether event `e` only restarts the integrator: a kink of a continuous law whose handler
    /// changes no state and no mode (an orifice's choked and laminar ratios). The driver then
    /// restarts at its own point before its next step, without moving the reported state to the
    /// event (as at a table breakpoint).
    fn event_only_restarts(&self, _e: usize) -> bool {
        false
    }

    /// ∂g_e/∂p_node of the node pressures event `e` reads, as `(node, ∂g/∂p)`: the network
    /// chains them through each chamber's p(U, V) (sensitivities across the event). None by
    /// default.
    fn event_pressure_gradient(
        &self,
        _e: usize,
        _at: &EventAt<'_>,
        _push: &mut dyn FnMut(usize, f64),
    ) {
    }

    /// Act on event `e`, located by the driver: may change its own states `s`, its flag and the
    /// energy accumulator (energy that left the gas and the pistons).
    fn handle_event(
        &self,
        _e: usize,
        _s: &mut [f64],
        _flag: &mut bool,
        _energy_left: &mut f64,
    ) -> Handled {
        Handled::default()
    }

    /// The tangent map of event `e`'s jump: `w` (its own states' tangents) and the energy
    /// accumulator's, from its states `s_before` before the event, with `dm` the derivative of
    /// its mass with respect to the sensitivity parameter. The identity by default.
    fn event_jump_tangent(
        &self,
        _e: usize,
        _s_before: &[f64],
        _w: &mut [f64],
        _w_energy_left: &mut f64,
        _dm: f64,
    ) {
    }

    /// Event `e` in words (for logs and tests).
    fn event_description(&self, e: usize) -> String {
        format!("{} `{}`: event {e}", Self::KIND.name, self.name())
    }

    /// The value of output `k` (an [`Output::Extra`] of `OUTPUTS`) from its own states `s`
    /// (`STATES` of them: a lagged spool's position), the node states and the parameters `pv`.
    fn extra_output<T: Scalar>(
        &self,
        _k: usize,
        _s: &[T],
        _gas: &IdealGas,
        _nodes: &[NodeState<T>],
        _pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        T::zero()
    }

    /// What output `k` (an [`Output::Extra`]) reads directly: its keys, its own states and its
    /// nodes' pressures or temperatures (the FMU's dependencies).
    fn extra_output_reads(&self, _k: usize) -> Reads {
        Reads::NOTHING
    }
}

/// Where an event function is evaluated ([`Element::event_value_at`]): the instant, the
/// component's own states and flag, its nodes' states and its parameters' values.
pub struct EventAt<'a> {
    pub t: f64,
    pub s: &'a [f64],
    pub flag: bool,
    /// The mode its law holds ([`Element::held_mode`]): `None` before one is held (a built
    /// network), where a law falls back on its state alone.
    pub mode: Option<i8>,
    pub gas: &'a IdealGas,
    /// A node's pressure and temperature at the instant (chambers from the state).
    pub node: &'a dyn Fn(usize) -> NodeState,
    /// A parameter's value at the instant.
    pub pv: &'a dyn Fn(&ParamValue) -> f64,
}

/// Most nodes one component may join (the default clique is built on the stack).
pub const MAX_NODES: usize = 8;

/// An output or a state as a variable: `<component name>.<suffix>`, its unit and its
/// description (`{}` stands for the component's name).
#[derive(Clone, Copy, Debug)]
pub struct Variable {
    pub suffix: &'static str,
    pub unit: fn() -> Unit,
    pub description: &'static str,
}

impl Variable {
    /// Its name and description for component `name`.
    pub fn of(&self, name: &str) -> (String, String) {
        (
            format!("{name}.{}", self.suffix),
            self.description.replace("{}", name),
        )
    }
}

/// One output of each component of a kind. In the output table, the `State` and `Flag`
/// outputs of every kind follow the link flows, and the `Extra` ones follow `rc`, both kind by
/// kind, links before boundaries.
#[derive(Clone, Copy, Debug)]
pub enum Output {
    /// Its own state (an index in `STATE_VARIABLES`, which names it).
    State(usize),
    /// Its discrete flag, 1 or 0.
    Flag(Variable),
    /// A function of the node states and the parameters at the instant
    /// ([`Element::extra_output`]); `discrete`: 0 or 1, without a derivative.
    Extra { variable: Variable, discrete: bool },
}

/// What an output reads directly (the state held fixed): run-time parameters of its own, by
/// key, its own states, by index among them, and the pressures or temperatures of its nodes (a
/// reservoir's parameters, a chamber's states).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reads {
    pub keys: &'static [&'static str],
    /// Its own states it reads (indices < `STATES`).
    pub states: &'static [usize],
    pub pressures: bool,
    pub temperatures: bool,
}

impl Reads {
    pub const NOTHING: Reads = Reads {
        keys: &[],
        states: &[],
        pressures: false,
        temperatures: false,
    };
}

/// What handling an event did ([`Element::handle_event`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handled {
    /// A piston passed its exit (the driver reports it).
    pub exit: bool,
    /// The own states changed.
    pub state_changed: bool,
}

/// A moving boundary of a chamber, for check 9: volume changes by `factor`·(the state).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Boundary {
    pub chamber: usize,
    /// Index of the state that moves the boundary (x of a piston or swept volume of a wall).
    pub state: usize,
    /// m² for pistons (volume = area·x), ±1 for walls (the state is a volume).
    pub factor: f64,
    /// Area used to scale the desync threshold, m².
    pub area_m2: f64,
}

/// Whether a clique's states also enter the accumulator rows (what flows into reservoirs or is
/// dissipated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulators {
    Never,
    /// When one of its nodes is a reservoir (a gas link).
    IfReservoir,
    Always,
}

impl Accumulators {
    /// By role: a gas link's flow reaches them through a reservoir end, a boundary's work and
    /// dissipation always, a liquid link's never (its liquid is not the gas's).
    pub const fn of(role: Role) -> Accumulators {
        match role {
            Role::Link => Accumulators::IfReservoir,
            Role::Boundary => Accumulators::Always,
            Role::Node | Role::LiquidLink => Accumulators::Never,
        }
    }
}

/// One clique of a component ([`Element::cliques`]).
#[derive(Clone, Debug)]
pub struct Clique<'a> {
    pub states: Range<usize>,
    pub nodes: &'a [usize],
    pub accumulators: Accumulators,
    /// Its terms write its chambers' dV/dt (a moving boundary).
    pub moves_volumes: bool,
}

/// A kind's cache ([`Element::Cache`]): stale after a parameter write until rebuilt.
pub trait Cache: Default + Clone + Debug {
    fn is_stale(&self) -> bool;
    fn mark_stale(&mut self);
}

impl Cache for () {
    fn is_stale(&self) -> bool {
        false
    }
    fn mark_stale(&mut self) {}
}

/// Where the network's cache of a kind stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CompactState {
    /// Not built since the network was made or a parameter written.
    #[default]
    Stale,
    /// `links` holds every component.
    Usable,
    /// Some component's parameter is not a constant (or the indices exceed `u32`): the
    /// components themselves are read.
    Unusable,
}

/// A compact copy of a kind's components as its terms read them: their nodes, the offsets of
/// their ends in dy and their constant parameters (the orifices' and valves' links).
#[derive(Clone, Debug)]
pub struct Compact<L> {
    pub state: CompactState,
    pub links: Vec<L>,
}

impl<L> Default for Compact<L> {
    fn default() -> Self {
        Compact {
            state: CompactState::Stale,
            links: Vec::new(),
        }
    }
}

impl<L: Clone + Debug> Cache for Compact<L> {
    fn is_stale(&self) -> bool {
        self.state == CompactState::Stale
    }
    fn mark_stale(&mut self) {
        self.state = CompactState::Stale;
    }
}

/// What a cache's rebuilding needs of the network.
#[derive(Clone, Copy, Debug)]
pub struct CacheContext {
    /// Chambers (the first nodes).
    pub chambers: usize,
    /// Chambers and reservoirs.
    pub nodes: usize,
    pub n_states: usize,
    pub accumulator_offset: usize,
}

impl CacheContext {
    /// Where node `node`'s (mass, energy) pair starts in dy.
    #[inline]
    pub fn dy_pair(&self, node: usize) -> usize {
        dy_pair(self.chambers, self.accumulator_offset, node)
    }

    /// Whether the node and state indices fit a `u32` (compact links store them so).
    pub fn fits_u32(&self) -> bool {
        self.nodes <= u32::MAX as usize && self.n_states <= u32::MAX as usize
    }
}

/// Where node `node`'s (mass, energy) pair starts in dy (`nc` chambers, accumulators at `acc`):
/// a chamber's (m, U) and the accumulators (mass_left, energy_left) are both two adjacent
/// states in this order, so a link's end is one index, without branches.
#[inline(always)]
pub fn dy_pair(nc: usize, acc: usize, node: usize) -> usize {
    const _: () = assert!(chamber::MASS == 0 && chamber::ENERGY == 1);
    if node < nc {
        node * chamber::STATES
    } else {
        acc
    }
}

/// One evaluation of the right-hand side as a kind's terms see it: the instant, the node
/// states and the state, and the operations that put a flow, work or heat into dy.
pub struct Eval<'a, T> {
    pub gas: &'a IdealGas,
    pub t: f64,
    /// Start of the current integration segment (see `Param::value`).
    pub seg: f64,
    /// Parameters replaced by given scalars (matched by address): a dual seed differentiates
    /// with respect to that parameter.
    pub seeds: &'a [(&'a ParamValue, T)],
    pub nodes: &'a [NodeState<T>],
    pub y: &'a [T],
    /// The network's discrete flags (a kind's start at `Slots::first_flag`).
    pub flags: &'a [bool],
    /// The modes the components' laws hold through the step ([`Element::held_mode`]; a
    /// kind's start at `Slots::first_mode`); may be empty (a restored network before its
    /// modes are put in line): read as 0 then.
    pub modes: &'a [i8],
    /// Chambers (the first nodes).
    pub nc: usize,
    /// The accumulators (mass_left, energy_left).
    pub acc: usize,
}

/// A kind's own places in one evaluation: its first state, its flow slots (from its first),
/// its first flag and its first held mode (one per component, at its first event's number).
pub struct Slots<'a, T> {
    pub first_state: usize,
    pub flows: &'a mut [T],
    pub first_flag: usize,
    pub first_mode: usize,
}

impl<T: Scalar> Eval<'_, T> {
    /// A parameter's value at the instant, or its seed's.
    #[inline(always)]
    pub fn pv(&self, p: &ParamValue) -> T {
        param_value(p, self.seeds, self.t, self.seg)
    }

    /// Move `mdot` (kg/s, signed) from node `from` to node `to`, carrying the upstream enthalpy.
    // Always inlined: a call costs about as much as its body on small networks.
    #[inline(always)]
    pub fn transfer(&self, from: usize, to: usize, mdot: T, dy: &mut [T]) {
        // Both ends read (not nodes[upstream]): the callers read them already, so the bounds
        // checks fold into theirs.
        let (nf, nt) = (self.nodes[from], self.nodes[to]);
        let (f, t) = (
            dy_pair(self.nc, self.acc, from),
            dy_pair(self.nc, self.acc, to),
        );
        self.transfer_at(nf, nt, f, t, mdot, dy);
    }

    /// [`Self::transfer`] between ends whose (mass, energy) pairs start at `f` and `t` in dy.
    #[inline(always)]
    pub fn transfer_at(
        &self,
        nf: NodeState<T>,
        nt: NodeState<T>,
        f: usize,
        t: usize,
        mdot: T,
        dy: &mut [T],
    ) {
        transfer_at(self.gas, nf, nt, f, t, mdot, dy);
    }

    /// Work rate `p·dV/dt` done by node `node` on a moving boundary (W, positive = node loses).
    #[inline]
    pub fn boundary_work(&self, node: usize, dvdt: T, dy: &mut [T]) {
        let power = self.nodes[node].pressure_pa * dvdt;
        if node < self.nc {
            dy[node * chamber::STATES + chamber::VOLUME] += dvdt;
            dy[node * chamber::STATES + chamber::ENERGY] -= power;
        } else {
            // A reservoir supplies (or absorbs) the work from outside the system.
            dy[self.acc + 1] -= power;
        }
    }

    /// Heat flow `q` (W) out of `node` (positive = node loses).
    #[inline]
    pub fn heat_out(&self, node: usize, q: T, dy: &mut [T]) {
        if node < self.nc {
            dy[node * chamber::STATES + chamber::ENERGY] -= q;
        } else {
            dy[self.acc + 1] -= q;
        }
    }

    /// Energy that leaves the gas and the pistons (friction, damping, a wall's dissipation),
    /// W, into the energy accumulator.
    #[inline(always)]
    pub fn dissipate(&self, power: T, dy: &mut [T]) {
        dy[self.acc + 1] += power;
    }
}

/// [`Eval::transfer_at`] with the gas alone (for a kind's loops out of line, which then need
/// not be given the whole evaluation: taking its address would keep it in memory).
#[inline(always)]
pub fn transfer_at<T: Scalar>(
    gas: &IdealGas,
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
    let edot = mdot * gas.enthalpy_j_per_kg(t_up);
    // Each pair as one slice of two: one bounds check per end, not two. The same updates in the
    // same order (the ends may coincide).
    let from = &mut dy[f..f + 2];
    from[0] -= mdot;
    from[1] -= edot;
    let to = &mut dy[t..t + 2];
    to[0] += mdot;
    to[1] += edot;
}

/// A parameter's value at (t, segment start `seg`), or its seed's if `seeds` has one for it
/// (matched by address).
#[inline(always)]
pub fn param_value<T: Scalar>(p: &ParamValue, seeds: &[(&ParamValue, T)], t: f64, seg: f64) -> T {
    for (q, v) in seeds {
        if std::ptr::eq(*q, p) {
            return *v;
        }
    }
    crate::ad::c(p.value(t, seg))
}

/// A kind's spec (what the model file's `[[kind]]` tables deserialize into) builds its
/// component.
pub trait Build {
    type Component: Element;
    /// The component of a validated spec (`node`: a node's index by name).
    fn build(&self, node: &dyn Fn(&str) -> usize) -> Self::Component;
}
