//! The orifices as the right-hand side streams them: plain orifices with constant parameters,
//! compacted to their nodes, dy offsets and law (`crate::components::orifice` has the laws).

use crate::ad::{Scalar, c};
use crate::components::NodeState;
use crate::components::element::transfer_at;
use crate::components::orifice::{
    Orifice, signed_iso6358_mass_flow_kg_per_s, signed_mass_flow_kg_per_s,
};
use crate::gas::IdealGas;
use crate::param::ParamValue;

/// An orifice's flow law with its constant parameters (see [`OrificeLink`]).
#[derive(Clone, Copy, Debug)]
pub enum ConstLaw {
    /// C_d·A, m²: the product [`Orifice::mass_flow_with`] forms, so the same bits.
    Isentropic(f64),
    /// Sonic conductance (m³/(s·Pa)) and critical pressure ratio.
    Iso6358(f64, f64),
}

/// One orifice as the right-hand side reads it: its nodes, the offsets of its ends in dy and
/// its constant law, 40 bytes against an [`Orifice`]'s 88 (its name, `usize` nodes, parameters
/// that may be tables): the right-hand side reads every orifice, which on large networks is
/// most of the bytes it streams (at 100k components the orifices alone outgrow L2). The dy
/// offsets spare each end its chamber-or-accumulator test (scale bench's rhs −5 %). The kind's
/// cache ([`Compact`]): built with the network, and again by the right-hand side after a
/// parameter write. Only plain orifices ([`Orifice::is_plain`]) with constant parameters.
#[derive(Clone, Copy, Debug)]
pub struct OrificeLink {
    pub from: u32,
    pub to: u32,
    /// Index in dy of each end's (mass, energy) pair.
    pub dy_from: u32,
    pub dy_to: u32,
    pub law: ConstLaw,
}

/// Mass flow of an orifice with constant parameters: [`Orifice::mass_flow_with`]'s arithmetic.
#[inline(always)]
pub fn const_orifice_flow<T: Scalar>(
    gas: &IdealGas,
    law: ConstLaw,
    from: NodeState<T>,
    to: NodeState<T>,
) -> T {
    match law {
        ConstLaw::Isentropic(k) => signed_mass_flow_kg_per_s(gas, c(k), from, to),
        ConstLaw::Iso6358(cond, b) => signed_iso6358_mass_flow_kg_per_s(c(cond), c(b), from, to),
    }
}

/// The orifices' flows from their links (usable) into `dy` and `flows` (from its start), at the
/// node states `nodes` (the plain parameters `items` for the test builds' check). Out of line:
/// its registers stay out of the networks without orifices; given the evaluation's parts
/// rather than the evaluation, which would then have to be built in memory.
#[inline(never)]
pub(super) fn link_flows<T: Scalar>(
    items: &[Orifice],
    links: &[OrificeLink],
    gas: &IdealGas,
    nodes: &[NodeState<T>],
    dy: &mut [T],
    flows: &mut [T],
) {
    for (k, (o, out)) in links.iter().zip(flows.iter_mut()).enumerate() {
        let (nf, nt) = (nodes[o.from as usize], nodes[o.to as usize]);
        let mdot = const_orifice_flow(gas, o.law, nf, nt);
        // The links hold constants only (no seed replaces them): any t gives their values.
        debug_assert_eq!(
            mdot.re().to_bits(),
            items[k]
                .mass_flow_with(gas, |p: &ParamValue| c(p.value(0.0, 0.0)), nf, nt)
                .re()
                .to_bits()
        );
        transfer_at(gas, nf, nt, o.dy_from as usize, o.dy_to as usize, mdot, dy);
        *out = mdot;
    }
}
