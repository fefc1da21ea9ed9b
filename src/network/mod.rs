//! The network: every component owns a slice of one flat state vector and adds its terms to
//! dy/dt, as Cantera's `ReactorNet::eval` does.
//!
//! The network holds one list per kind of the registry (`crate::with_kinds!`, [`Kinds`]) and
//! knows a kind only through [`Element`] (`crate::components::element`): its states, terms,
//! cliques, events and outputs, called in loops over the kinds that the registry generates
//! ([`kinds`]). It knows the nodes by name: chambers hold the gas (their m, U, V are the first
//! states, block by block), reservoirs prescribe a state.
//!
//! State layout (fixed when the network is built): each kind's states in the registry's order,
//! component by component, then the two accumulators:
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

mod build;
mod events;
mod extra;
pub(crate) mod kinds;
mod lookup;
mod ode_system;
mod outputs;
mod pattern;
mod rhs;
mod sensitivity;
mod states;

pub use crate::components::element::Boundary;
pub use events::EventOutcome;
pub use extra::ExtraTerm;
pub use kinds::{Kinds, N_KINDS, Registered};
pub use outputs::{ComponentOutput, OutputName};
pub use pattern::parameter_rows;
pub use sensitivity::SensitivityParameter;

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use crate::ad::Scalar;
use crate::components::element::Element;
use crate::components::keys::Component;
use crate::components::{Chamber, Piston, Reservoir, chamber};
use crate::gas::IdealGas;
use crate::units::from_si;
use kinds::{Caches, each_kind};
use rhs::{DualScratch, Scratch};

/// Where a node's name points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeRef {
    Chamber(usize),
    Reservoir(usize),
}

/// Where each kind's parts start in the network's vectors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub n_states: usize,
    pub accumulator_offset: usize,
    /// Per kind, by registry index. Boxed: a `Simulation` moved by value (a restored FMU
    /// state's) stays as small as before the kinds had offsets.
    pub first: Box<Offsets>,
}

/// Where each kind's parts start, by registry index (`Registered::INDEX`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Offsets {
    /// Its first state (registry order).
    pub state: [usize; N_KINDS],
    /// Its first flow slot (named links first: see `Element::FLOWS`).
    pub flow: [usize; N_KINDS],
    /// Its first discrete flag (`exited`).
    pub flag: [usize; N_KINDS],
    /// Its first event function (registry order).
    pub event: [usize; N_KINDS],
}

impl Layout {
    /// The first state of kind `K` (its component `i`'s at `first::<K>() + i·K::STATES`).
    #[inline(always)]
    pub fn first<K: Registered>(&self) -> usize {
        self.first.state[K::INDEX]
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

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Network {
    pub gas: IdealGas,
    // The components are private: their parameters change only through `set_scalar`,
    // `adopt_input` and the `_mut` accessors, which drop the cached next breakpoint and mark
    // the kinds' caches stale, so no write can leave them stale. Read them through `of`.
    kinds: Kinds,
    /// Chambers hold their initial temperature (see the module documentation).
    pub isothermal: bool,
    /// The discrete flags of the kinds that have them (`Element::FLAGS`): the pistons' exit
    /// flags.
    pub exited: Vec<bool>,
    /// The modes the laws hold through a step (`Element::held_mode`), one per component of
    /// a kind with events, at its first event's number. Not serialized: derived from the state
    /// where the integrator stands ([`Self::hold_modes`]).
    #[serde(skip)]
    pub modes: Vec<i8>,
    /// Moving boundaries sorted by chamber; those of chamber i are
    /// `boundaries[boundary_start[i]..boundary_start[i + 1]]`.
    pub boundaries: Vec<Boundary>,
    pub boundary_start: Vec<usize>,
    pub layout: Layout,
    /// Start of the current integration segment (see `Param::value`).
    pub segment_start_s: f64,
    /// Right-hand-side evaluations so far.
    pub rhs_evaluations: u64,
    /// Terms tests add to the right-hand side ([`ExtraTerm`]); none in a built model.
    #[serde(skip)]
    extra_terms: Vec<std::sync::Arc<dyn ExtraTerm>>,
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
    /// The kinds' caches (`Element::Cache`: the orifices' and valves' compact links). Not
    /// serialized: a restored network rebuilds them.
    #[serde(skip)]
    caches: Caches,
    /// Test builds: per chamber, whether its mass can move, for the check of the constant
    /// masses (`debug_check_constant_states`), sized with the scratch so that the check does
    /// not allocate. Empty in release builds.
    #[serde(skip)]
    mass_moves_scratch: RefCell<Vec<bool>>,
    /// Whether any event function can fire (`has_events`), computed once: 0 not yet, 1 no,
    /// 2 yes. Which events can fire follows from the components' structure (a valve's
    /// poppet, a one-way flag), which no run-time write changes.
    #[serde(skip)]
    live_events: std::cell::Cell<u8>,
    /// The events the driver's steps search and Model Exchange reports as indicators
    /// (`searched_events`): all but those the structure keeps from firing. Set at build;
    /// `None` after a deserialization until first asked for.
    #[serde(skip)]
    searched_events: Option<Vec<u32>>,
}

impl Network {
    /// Flow slots: the links with a `<name>.mdot` output (the kinds of role `Link` and
    /// `LiquidLink`, in the registry's order), then the other kinds' (exited pistons' bores).
    pub fn n_links(&self) -> usize {
        let mut n = 0;
        each_kind!(K => {
            n += K::list(&self.kinds).len() * K::FLOWS;
        });
        n
    }

    /// Links with a `<name>.mdot` output (see [`Self::n_links`]).
    pub fn n_named_links(&self) -> usize {
        let mut n = 0;
        each_kind!(K => {
            if const { kinds::is_link(K::KIND.role) } {
                n += K::list(&self.kinds).len() * K::FLOWS;
            }
        });
        n
    }

    /// The components of kind `K` (`net.of::<Orifice>()`).
    #[inline(always)]
    pub fn of<K: Registered>(&self) -> &[K] {
        K::list(&self.kinds)
    }

    /// Every component, kind by kind.
    pub fn kinds(&self) -> &Kinds {
        &self.kinds
    }

    #[inline(always)]
    pub fn chambers(&self) -> &[Chamber] {
        &self.kinds.chamber
    }

    #[inline(always)]
    pub fn reservoirs(&self) -> &[Reservoir] {
        &self.kinds.reservoir
    }

    #[inline(always)]
    pub fn pistons(&self) -> &[Piston] {
        &self.kinds.piston
    }

    /// The pistons, to change a parameter in place (the sensitivity tests perturb a mass):
    /// drops the cached next breakpoint, as every writer of a parameter does.
    pub fn pistons_mut(&mut self) -> &mut [Piston] {
        self.forget_breakpoints();
        &mut self.kinds.piston
    }

    pub fn node_of_chamber(&self, i: usize) -> usize {
        i
    }

    pub fn node_of_reservoir(&self, j: usize) -> usize {
        self.kinds.chamber.len() + j
    }

    /// The moving boundaries (pistons, walls) of chamber `i`.
    pub fn chamber_boundaries(&self, i: usize) -> &[Boundary] {
        &self.boundaries[self.boundary_start[i]..self.boundary_start[i + 1]]
    }

    /// Volume of chamber `i` implied by the boundary coordinates (what check 9 compares with).
    pub fn geometric_volume_m3(&self, i: usize, y: &[f64]) -> f64 {
        let mut v = self.kinds.chamber[i].dead_volume.value;
        for b in self.chamber_boundaries(i) {
            v += b.factor * y[b.state];
        }
        v
    }

    /// Initial state vector: every kind's own initial states, then the chambers' (m, U) at the
    /// volumes the boundaries' initial coordinates give them.
    pub fn initial_state(&self) -> Vec<f64> {
        let mut y = vec![0.0; self.layout.n_states];
        each_kind!(K => {
            let first = self.layout.first::<K>();
            for (i, x) in K::list(&self.kinds).iter().enumerate() {
                let o = first + i * K::STATES;
                x.initial_state(&mut y[o..o + K::STATES]);
            }
        });
        for i in 0..self.kinds.chamber.len() {
            let v = self.geometric_volume_m3(i, &y);
            let (m, u) = self.kinds.chamber[i].initial_mass_energy(&self.gas, from_si(v));
            let o = i * chamber::STATES;
            y[o + chamber::MASS] = m.value;
            y[o + chamber::ENERGY] = u.value;
            y[o + chamber::VOLUME] = v;
        }
        y
    }

    /// Earliest time-table breakpoint strictly after `t`: of every parameter that may change
    /// during a run (the only ones that may be tables).
    pub fn next_breakpoint_after(&self, t: f64) -> Option<f64> {
        let mut next: Option<f64> = None;
        each_kind!(K => {
            for x in K::list(&self.kinds) {
                for key in K::KIND.keys {
                    if let Some(b) = x.param(key.name).and_then(|p| p.next_breakpoint_after(t)) {
                        next = Some(next.map_or(b, |a| a.min(b)));
                    }
                }
            }
        });
        next
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

    /// Total mass: gas in chambers plus the net mass that left into reservoirs, kg.
    #[inline]
    pub fn mass_total_kg(&self, y: &[f64]) -> f64 {
        self.mass_total(|i| y[i])
    }

    /// Closed energy total: internal energy, the mechanical energy the kinds store (piston
    /// kinetic and spring energy), and everything that left through reservoirs, friction,
    /// damping and walls, J.
    #[inline]
    pub fn energy_total_j(&self, y: &[f64]) -> f64 {
        self.energy_total(|i| y[i], |_, _| None)
    }

    /// The mechanical energy the kinds store (`Element::stored_energy_j`: piston kinetic and
    /// spring energy) at `y`, J.
    #[inline]
    pub fn stored_energy_j(&self, y: &[f64]) -> f64 {
        self.stored_energy(|i| y[i], |_, _| None)
    }

    /// [`Self::mass_total_kg`] over any scalar: `y(i)` is state `i` (a closure, so that the
    /// dual evaluation in [`Self::totals_sensitivity`] needs no dual state vector).
    #[inline]
    fn mass_total<T: Scalar>(&self, y: impl Fn(usize) -> T) -> T {
        let gas: T = (0..self.kinds.chamber.len())
            .map(|i| y(i * chamber::STATES + chamber::MASS))
            .sum();
        gas + y(self.layout.accumulator_offset)
    }

    /// [`Self::energy_total_j`] over any scalar: `y(i)` is state `i`, `mass_kg(kind, i)` a
    /// seeded mass of component `i` of a kind (a piston's kinetic energy depends on its mass
    /// directly), `None` for its own.
    #[inline]
    fn energy_total<T: Scalar>(
        &self,
        y: impl Fn(usize) -> T,
        mass_kg: impl Fn(usize, usize) -> Option<T>,
    ) -> T {
        let u: T = (0..self.kinds.chamber.len())
            .map(|i| y(i * chamber::STATES + chamber::ENERGY))
            .sum();
        let mech = self.stored_energy(&y, mass_kg);
        u + mech + y(self.layout.accumulator_offset + 1)
    }

    /// The kinds' stored mechanical energy, one sum over their components in the registry's
    /// order (`mass_kg(kind index, i)`: see [`Self::energy_total`]).
    #[inline]
    fn stored_energy<T: Scalar>(
        &self,
        y: impl Fn(usize) -> T,
        mass_kg: impl Fn(usize, usize) -> Option<T>,
    ) -> T {
        // The same additions, in the same order, as `Sum` over the components in the registry's
        // order (it folds from its own zero); a loop per kind rather than one chained iterator,
        // so that a kind that stores no energy costs nothing (`STORES_ENERGY` is a constant).
        let mut total: T = std::iter::empty::<T>().sum();
        macro_rules! add_kinds {
            ($($kind:ident => $Spec:ident),* $(,)?) => {
                $({
                    type K = <crate::components::$kind::$Spec
                        as crate::components::element::Build>::Component;
                    if K::STORES_ENERGY {
                        let first = self.layout.first::<K>();
                        for (i, x) in K::list(&self.kinds).iter().enumerate() {
                            let o = first + i * K::STATES;
                            total += x.stored_energy_j(|s| y(o + s), mass_kg(K::INDEX, i));
                        }
                    }
                })*
            };
        }
        crate::with_kinds!(add_kinds);
        total
    }
}

/// The chambers are the first kind (their states the first, block by block: `BLOCKS`), so
/// that node `i < nc` is chamber `i` and its states start at `i·chamber::STATES`.
const _: () = assert!(<Chamber as Registered>::INDEX == 0);

/// At most one kind has quadrature states (`OdeSystem::quadratures` gives one range).
const _: () = {
    let mut n = 0;
    macro_rules! count_quadratures {
        ($($kind:ident => $Spec:ident),* $(,)?) => {
            $(
                if <<crate::components::$kind::$Spec as crate::components::element::Build>::Component
                    as Element>::QUADRATURES
                {
                    n += 1;
                }
            )*
        };
    }
    crate::with_kinds!(count_quadratures);
    assert!(n <= 1, "at most one kind may have quadrature states");
};
