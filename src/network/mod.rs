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

mod build;
mod events;
mod extra;
mod links;
mod lookup;
mod ode_system;
mod outputs;
mod pattern;
mod rhs;
mod sensitivity;
mod states;

pub use events::EventOutcome;
pub use extra::ExtraTerm;
pub use outputs::Extra;
pub use pattern::parameter_rows;
pub use sensitivity::SensitivityParameter;

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use crate::ad::Scalar;
use crate::components::{
    Chamber, InertanceValve, MassFlow, Orifice, Piston, Reservoir, Restrictor, Tube, Valve, Wall,
    chamber, piston,
};
use crate::gas::IdealGas;
use crate::param::ParamValue;
use crate::units::from_si;
use links::{LinksState, OrificeLinks, ValveLinks};
use rhs::{DualScratch, Scratch};

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

impl Network {
    /// Whether any link or boundary other than orifices and valves exists (see `eval_more`).
    fn has_more_kinds(&self) -> bool {
        !(self.mass_flows.is_empty()
            && self.restrictors.is_empty()
            && self.tubes.is_empty()
            && self.inertance_valves.is_empty()
            && self.pistons.is_empty()
            && self.walls.is_empty()
            && self.extra_terms.is_empty())
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
