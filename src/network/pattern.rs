//! The structural Jacobian pattern of a network (its [`OdeSystem::sparsity`]).
//!
//! Every component gives its cliques ([`Element::cliques`]): sets of states every one of which
//! may depend on every other, by default all its own states with all the states of its nodes
//! (each chamber's m, U, V). So a flow link (orifice, valve, mass flow, restrictor, tube, the
//! bore of an exited piston) couples the states of the two nodes it joins; an inertance valve's
//! q depends on itself and on its nodes' pressures; a piston couples its (x, v) with the
//! chambers behind and ahead of it; a wall couples the chambers on either side, and its swept
//! volume's row depends on them. Whatever flows into reservoirs, or is dissipated, is
//! integrated by the two accumulators, so the accumulator rows depend on every state of every
//! such clique. Nothing reads the accumulators or the quadrature states (the walls' swept
//! volumes, check 9 only), so their columns are empty.
//!
//! [`OdeSystem::sparsity`]: crate::ode::OdeSystem::sparsity

use super::Network;
use super::kinds::{Registered, each_kind};
use crate::components::chamber;
use crate::components::element::{Accumulators, Clique, Element};
use crate::components::keys::Component;
use crate::sparsity::{MASK_MAX, Pattern};

/// The structural Jacobian pattern of a network. Every kind gives its cliques, so every built
/// network has one (`OdeSystem::sparsity` is never `None` for a network).
pub(crate) fn network_pattern(net: &Network) -> Pattern {
    let layout = &net.layout;
    let n = layout.n_states;
    let acc = layout.accumulator_offset;
    let quadratures = net.quadrature_states();
    if n <= MASK_MAX {
        let mut masks = [0u64; MASK_MAX];
        network_entries(net, &mut masks);
        // Nothing depends on the accumulators, nor on the quadrature states.
        masks[acc] = 0;
        masks[acc + 1] = 0;
        masks[quadratures].fill(0);
        return Pattern::from_masks(&masks[..n]);
    }
    // Sized for the cliques below (9 per chamber, up to 8² + 2·8 per other component): no
    // regrowth on networks of two-node components.
    let mut components = 0;
    each_kind!(K => {
        components += K::list(&net.kinds).len();
    });
    let mut dep: Vec<(usize, usize)> =
        Vec::with_capacity(9 * net.chambers().len() + 80 * components);
    network_entries(net, &mut dep);
    // Nothing depends on the accumulators, nor on the quadrature states.
    dep.retain(|&(j, _)| j != acc && j != acc + 1 && !quadratures.contains(&j));
    Pattern::from_entries(n, dep)
}

/// Most states of one clique: its own and three per chamber it joins.
const CLIQUE_MAX: usize = 32;

/// The states of one clique, on the stack.
struct States {
    v: [usize; CLIQUE_MAX],
    len: usize,
}

impl States {
    fn push(&mut self, i: usize) {
        assert!(
            self.len < CLIQUE_MAX,
            "a clique of more than {CLIQUE_MAX} states"
        );
        self.v[self.len] = i;
        self.len += 1;
    }

    fn as_slice(&self) -> &[usize] {
        &self.v[..self.len]
    }
}

/// Where [`network_entries`] puts the (column, row) entries: a list, or a row mask per column.
trait EntrySink {
    fn add(&mut self, j: usize, i: usize);
}

impl EntrySink for Vec<(usize, usize)> {
    #[inline(always)]
    fn add(&mut self, j: usize, i: usize) {
        self.push((j, i));
    }
}

impl EntrySink for [u64; MASK_MAX] {
    #[inline(always)]
    fn add(&mut self, j: usize, i: usize) {
        self[j] |= 1 << i;
    }
}

/// The entries of [`network_pattern`] ("row depends on column"), repeats allowed, the
/// accumulators' columns included (the caller empties them), into `dep`.
fn network_entries<E: EntrySink>(net: &Network, dep: &mut E) {
    network_entries_of(net, dep, |_, _| true);
}

/// The rows of the right-hand side that the run-time parameter `<component>.<key>` enters
/// (increasing), or `None` when there is no such parameter: the rows of the cliques of
/// [`network_pattern`] of the parameter's component, or, for a reservoir's parameter, of every
/// clique joined to that reservoir. A structural pattern, as the states' (a superset of where
/// ∂f/∂p is nonzero).
pub fn parameter_rows(net: &Network, component: &str, key: &str) -> Option<Vec<usize>> {
    net.get_scalar(component, key, net.segment_start_s)?;
    let nc = net.chambers().len();
    let reservoir = net
        .reservoirs()
        .iter()
        .position(|r| r.name == component)
        .map(|j| nc + j);
    let keep = |name: &str, nodes: &[usize]| match reservoir {
        Some(node) => nodes.contains(&node),
        None => name == component,
    };
    let mut dep: Vec<(usize, usize)> = Vec::new();
    network_entries_of(net, &mut dep, keep);
    let mut rows: Vec<usize> = dep.into_iter().map(|(_, i)| i).collect();
    rows.sort_unstable();
    rows.dedup();
    Some(rows)
}

/// [`network_entries`] of the cliques `keep(component name, nodes)` accepts.
fn network_entries_of<E: EntrySink>(
    net: &Network,
    dep: &mut E,
    keep: impl Fn(&str, &[usize]) -> bool,
) {
    let nc = net.chambers().len();
    let acc = net.layout.accumulator_offset;
    // With an isothermal gas the energy accumulator takes every chamber's dU/dt.
    let all_to_accumulators = net.isothermal;
    // A chamber's volume changes only through a moving boundary (`Eval::boundary_work`): only
    // their cliques write its row, so a fixed volume's row stays empty (dV/dt ≡ 0) and the
    // BDF's direct solves take it out of the LU (`bdf::Peel`).
    let is_volume = |i: usize| i < nc * chamber::STATES && i % chamber::STATES == chamber::VOLUME;
    // Likewise a chamber's mass changes only through a flow (`Network::mark_mass_moves`): a
    // closed chamber's row of m stays empty in every clique (dm/dt ≡ 0), though its column
    // does not (its temperature reaches a wall's heat flow).
    let mass_moves = net.mass_moves();
    let is_closed_mass = |i: usize| {
        i < nc * chamber::STATES
            && i % chamber::STATES == chamber::MASS
            && !mass_moves[i / chamber::STATES]
    };
    let mut add = |name: &str, c: Clique<'_>| {
        if !keep(name, c.nodes) {
            return;
        }
        let mut s = States {
            v: [0; CLIQUE_MAX],
            len: 0,
        };
        for i in c.states.clone() {
            s.push(i);
        }
        for &node in c.nodes {
            if node < nc {
                let o = node * chamber::STATES;
                s.push(o + chamber::MASS);
                s.push(o + chamber::ENERGY);
                s.push(o + chamber::VOLUME);
            }
        }
        let states = s.as_slice();
        for &i in states {
            if (!c.moves_volumes && is_volume(i)) || is_closed_mass(i) {
                continue;
            }
            for &j in states {
                dep.add(j, i);
            }
        }
        let into_accumulators = match c.accumulators {
            Accumulators::Never => false,
            Accumulators::IfReservoir => c.nodes.iter().any(|&node| node >= nc),
            Accumulators::Always => true,
        };
        if into_accumulators || all_to_accumulators {
            for i in [acc, acc + 1] {
                for &j in states {
                    dep.add(j, i);
                }
            }
        }
    };
    each_kind!(K => {
        let first = net.layout.first::<K>();
        for (k, x) in K::list(&net.kinds).iter().enumerate() {
            x.cliques(first + k * K::STATES, &mut |c| add(x.name(), c));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sparsity::{greedy_colors, greedy_colors_masks, newton_groups};

    /// The bit-mask analysis (n ≤ MASK_MAX) on the network patterns of the shipped, peer and
    /// FONSim models: the same patterns as the entry list gives, the same colours.
    #[test]
    fn mask_analysis_equals_the_general_path_on_networks() {
        let models = [
            include_str!("../../compliance-tests/peers/models/cantera_vent.toml"),
            include_str!("../../compliance-tests/peers/models/cantera_two_tanks.toml"),
            include_str!("../../compliance-tests/peers/models/cantera_wall.toml"),
            include_str!("../../compliance-tests/peers/models/cantera_piston.toml"),
            include_str!("../../compliance-tests/peers/models/cantera_chain20.toml"),
            include_str!("../../tests/fonsim/models/source_restrictor_container.toml"),
            include_str!("../../tests/fonsim/models/source_tube_container.toml"),
            include_str!("../../tests/fonsim/models/two_containers_restrictor.toml"),
            include_str!("../../models/projectile.toml"),
            include_str!("../../models/two_tanks.toml"),
            include_str!("../../models/blowdown.toml"),
        ];
        for src in models {
            let model = crate::model::parse_str(src, "model.toml", &[]).unwrap();
            let net = crate::model::build_network(&model.spec);
            let n = net.layout.n_states;
            assert!(n <= MASK_MAX);
            let p = network_pattern(&net);
            let mut dep = Vec::new();
            network_entries(&net, &mut dep);
            let acc = net.layout.accumulator_offset;
            let quadratures = net.quadrature_states();
            dep.retain(|&(j, _)| j != acc && j != acc + 1 && !quadratures.contains(&j));
            let q = Pattern::from_entries(n, dep);
            let (groups, coloring) = newton_groups(p.clone());
            println!(
                "{}: {n} states, {} entries, {} groups",
                model.spec.model.name,
                p.nonzeros(),
                coloring.n_colors()
            );
            assert_eq!(p, q);
            assert_eq!(greedy_colors_masks(&groups), greedy_colors(&groups));
        }
    }
}
