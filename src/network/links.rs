//! The compact copies of the orifices and valves that the right-hand side reads, and their
//! rebuilding after a parameter write.

use super::Network;
use crate::ad::{Scalar, c};
use crate::components::{NodeState, OrificeForm, chamber, orifice};
use crate::gas::IdealGas;
use crate::param::ParamValue;

/// An orifice's flow law with its constant parameters (see [`OrificeLinks`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum ConstLaw {
    /// C_d·A, m²: the product [`Orifice::mass_flow_with`](crate::components::Orifice::mass_flow_with) forms, so the same bits.
    Isentropic(f64),
    /// Sonic conductance (m³/(s·Pa)) and critical pressure ratio.
    Iso6358(f64, f64),
}

/// One orifice as the right-hand side reads it: its nodes and its constant law.
#[derive(Clone, Copy, Debug)]
pub(super) struct OrificeLink {
    pub(super) from: u32,
    pub(super) to: u32,
    /// Index in dy of each end's (mass, energy) pair (see [`ValveLink`]).
    pub(super) dy_from: u32,
    pub(super) dy_to: u32,
    pub(super) law: ConstLaw,
}

/// The orifices reduced to their nodes, the offsets of their ends in dy and their constant
/// parameters, 40 bytes each against an [`Orifice`](crate::components::Orifice)'s 88 (its name, `usize` nodes, parameters
/// that may be tables): the right-hand side reads every orifice, which on large networks is
/// most of the bytes it streams (at 100k components the orifices alone outgrow L2). The dy
/// offsets spare each end its chamber-or-accumulator test (scale bench's rhs −5 %). Built with
/// the network, and again by the right-hand side (`rhs_general`, [`OdeSystem::jvp`](crate::ode::OdeSystem::jvp)) after a
/// parameter write ([`Network::param_mut`] marks them stale). Not serialized: a restored
/// network rebuilds them.
#[derive(Clone, Debug, Default)]
pub(super) struct OrificeLinks {
    pub(super) state: LinksState,
    pub(super) links: Vec<OrificeLink>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum LinksState {
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
pub(super) struct ValveLink {
    pub(super) from: u32,
    pub(super) to: u32,
    /// Index in dy of each end's (mass, energy) pair: its chamber's, or the accumulators'.
    pub(super) dy_from: u32,
    pub(super) dy_to: u32,
    /// K·opening, kg/(s·Pa), when both are constants (the product
    /// [`Valve::mass_flow_kg_per_s`](crate::components::Valve::mass_flow_kg_per_s) forms first, so the same bits).
    pub(super) k_open: f64,
    /// The valve's index (the loop carries no counter of its own).
    pub(super) index: u32,
    /// K or the opening varies (a table, a ramp): both read from the valve at t.
    pub(super) varying: bool,
    pub(super) one_way: bool,
}

/// The valves reduced to their nodes, the offsets of their ends in dy and their constant
/// K·opening, 32 bytes each against a [`Valve`](crate::components::Valve)'s 96: per valve and evaluation the generic
/// loop paid two parameter matches, the upstream index tests and six bounds checks, as much as
/// the flow's arithmetic (the 20-tank chain's right-hand side). Built with the network and,
/// like [`OrificeLinks`], again after a parameter write ([`Network::param_mut`] marks them
/// stale). Not serialized.
#[derive(Clone, Debug, Default)]
pub(super) struct ValveLinks {
    pub(super) state: LinksState,
    pub(super) links: Vec<ValveLink>,
}

/// Where node `node`'s (mass, energy) pair starts in dy (`nc` chambers, accumulators at `acc`):
/// a chamber's (m, U) and the accumulators (mass_left, energy_left) are both two adjacent
/// states in this order, so a link's end is one index, without branches.
#[inline(always)]
pub(super) fn dy_pair(nc: usize, acc: usize, node: usize) -> usize {
    const _: () = assert!(chamber::MASS == 0 && chamber::ENERGY == 1);
    if node < nc {
        node * chamber::STATES
    } else {
        acc
    }
}

/// Mass flow of an orifice with constant parameters: [`Orifice::mass_flow_with`](crate::components::Orifice::mass_flow_with)'s arithmetic.
#[inline(always)]
pub(super) fn const_orifice_flow<T: Scalar>(
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

impl Network {
    /// Rebuild whichever compact links (`OrificeLinks`, `ValveLinks`) a parameter write
    /// (`param_mut`) left stale.
    pub(super) fn refresh_stale_links(&mut self) {
        if self.orifice_links.state == LinksState::Stale {
            self.refresh_orifice_links();
        }
        if self.valve_links.state == LinksState::Stale {
            self.refresh_valve_links();
        }
    }

    /// Rebuild [`OrificeLinks`] (in place: no allocation once built).
    #[cold]
    pub(super) fn refresh_orifice_links(&mut self) {
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
    pub(super) fn refresh_valve_links(&mut self) {
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
}
