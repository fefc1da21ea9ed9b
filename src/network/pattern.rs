//! The structural Jacobian pattern of a network (its [`OdeSystem::sparsity`]).
//!
//! The network knows its links: a flow link (orifice, valve, mass flow, restrictor, tube, the
//! bore of an exited piston) couples the states of the two nodes it joins; an inertance valve's
//! q depends on itself and on its nodes' pressures; a piston couples its (x, v) with the chambers
//! behind and ahead of it; a wall couples the chambers on either side, and its swept volume's row
//! depends on them. Whatever flows into reservoirs, or is dissipated, is integrated by the two
//! accumulators, so the accumulator rows depend on every state of every such link. Nothing reads
//! the accumulators or the swept volumes (check 9 only), so their columns are empty.
//!
//! [`OdeSystem::sparsity`]: crate::ode::OdeSystem::sparsity

use super::Network;
use crate::components::{chamber, piston};
use crate::sparsity::{MASK_MAX, Pattern};

/// The structural Jacobian pattern of a network, or `None` when the network holds components
/// this function does not know (then the Jacobian is computed densely, column by column).
pub(crate) fn network_pattern(net: &Network) -> Option<Pattern> {
    let nc = net.chambers().len();
    let layout = &net.layout;
    let ni = net.inertance_valves().len();
    let known_states =
        nc * chamber::STATES + net.pistons().len() * piston::STATES + net.walls().len() + ni + 2;
    let flow_links = net.orifices().len()
        + net.valves().len()
        + net.mass_flows().len()
        + net.restrictors().len()
        + net.tubes().len();
    if layout.n_states != known_states
        || net.n_links() != flow_links + ni + net.pistons().len()
        || layout.piston_offset != nc * chamber::STATES
        || layout.wall_offset != layout.piston_offset + net.pistons().len() * piston::STATES
        || layout.inertance_offset != layout.wall_offset + net.walls().len()
        || layout.accumulator_offset != layout.inertance_offset + ni
    {
        return None;
    }
    let n = layout.n_states;
    let acc = layout.accumulator_offset;
    let swept = layout.wall_offset..layout.inertance_offset;
    if n <= MASK_MAX {
        let mut masks = [0u64; MASK_MAX];
        network_entries(net, &mut masks);
        // Nothing depends on the accumulators, nor on the walls' swept volumes.
        masks[acc] = 0;
        masks[acc + 1] = 0;
        masks[swept].fill(0);
        return Some(Pattern::from_masks(&masks[..n]));
    }
    // Sized for the cliques below (9 per chamber, up to 8² + 2·8 per link): no regrowth.
    let mut dep: Vec<(usize, usize)> =
        Vec::with_capacity(9 * nc + 80 * net.n_links() + 80 * net.walls().len());
    network_entries(net, &mut dep);
    // Nothing depends on the accumulators, nor on the walls' swept volumes.
    dep.retain(|&(j, _)| j != acc && j != acc + 1 && !swept.contains(&j));
    Some(Pattern::from_entries(n, dep))
}

/// The states of one component's clique: at most 8 (a piston's two and its two chambers'
/// three each), on the stack.
#[derive(Default)]
struct Clique {
    v: [usize; 8],
    len: usize,
}

impl Clique {
    fn clear(&mut self) {
        self.len = 0;
    }

    fn push(&mut self, i: usize) {
        self.v[self.len] = i;
        self.len += 1;
    }

    fn extend<const K: usize>(&mut self, states: [usize; K]) {
        for i in states {
            self.push(i);
        }
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

/// One component's clique in [`network_entries_of`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part<'a> {
    /// A chamber's own states (its pressure and temperature).
    Chamber,
    /// Component `name` (a gas link, an inertance valve, a piston, a wall) between nodes `a`
    /// and `b`.
    Between { name: &'a str, a: usize, b: usize },
}

/// The entries of [`network_pattern`] ("row depends on column"), repeats allowed, the
/// accumulators' columns included (the caller empties them), into `dep`.
fn network_entries<E: EntrySink>(net: &Network, dep: &mut E) {
    network_entries_of(net, dep, |_| true);
}

/// The rows of the right-hand side that the run-time parameter `<component>.<key>` enters
/// (increasing), or `None` when there is no such parameter: the rows of the cliques of
/// [`network_pattern`] that hold the parameter's component, or, for a reservoir's parameter,
/// of every component joined to that reservoir. A structural pattern, as the states' (a
/// superset of where ∂f/∂p is nonzero).
pub fn parameter_rows(net: &Network, component: &str, key: &str) -> Option<Vec<usize>> {
    net.get_scalar(component, key, net.segment_start_s)?;
    let nc = net.chambers().len();
    let reservoir = net
        .reservoirs()
        .iter()
        .position(|r| r.name == component)
        .map(|j| nc + j);
    let keep = |part: Part| match (part, reservoir) {
        (Part::Chamber, _) => false,
        (Part::Between { a, b, .. }, Some(node)) => a == node || b == node,
        (Part::Between { name, .. }, None) => name == component,
    };
    let mut dep: Vec<(usize, usize)> = Vec::new();
    network_entries_of(net, &mut dep, keep);
    let mut rows: Vec<usize> = dep.into_iter().map(|(_, i)| i).collect();
    rows.sort_unstable();
    rows.dedup();
    Some(rows)
}

/// [`network_entries`] of the components `keep` accepts.
fn network_entries_of<E: EntrySink>(net: &Network, dep: &mut E, keep: impl Fn(Part) -> bool) {
    let nc = net.chambers().len();
    let layout = &net.layout;
    let acc = layout.accumulator_offset;
    // With an isothermal gas the energy accumulator takes every chamber's dU/dt.
    let all_to_accumulators = net.isothermal;
    // A chamber's volume changes only through a moving boundary (`Network::boundary_work`:
    // pistons and walls): only their cliques write its row, so a fixed volume's row stays
    // empty (dV/dt ≡ 0) and the BDF's direct solves take it out of the LU (`bdf::Peel`).
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
    let clique = |states: &Clique, dep: &mut E, into_accumulators: bool, moves_volumes: bool| {
        let states = states.as_slice();
        for &i in states {
            if (!moves_volumes && is_volume(i)) || is_closed_mass(i) {
                continue;
            }
            for &j in states {
                dep.add(j, i);
            }
        }
        if into_accumulators || all_to_accumulators {
            for i in [acc, acc + 1] {
                for &j in states {
                    dep.add(j, i);
                }
            }
        }
    };
    let node_states = |node: usize, out: &mut Clique| {
        if node < nc {
            let o = node * chamber::STATES;
            out.extend([o + chamber::MASS, o + chamber::ENERGY, o + chamber::VOLUME]);
        }
    };
    let mut s = Clique::default();
    // A chamber's own (m, U, V) (its pressure and temperature).
    for i in 0..nc {
        if !keep(Part::Chamber) {
            continue;
        }
        s.clear();
        node_states(i, &mut s);
        clique(&s, dep, false, false);
    }
    // The gas links (an inertance valve's q is a state of its own: below).
    for link in net.links().filter(|x| !x.flow_is_state()) {
        let (a, b) = link.ends();
        if !keep(Part::Between {
            name: link.name(),
            a,
            b,
        }) {
            continue;
        }
        s.clear();
        node_states(a, &mut s);
        node_states(b, &mut s);
        clique(&s, dep, a >= nc || b >= nc, false);
    }
    for (k, iv) in net.inertance_valves().iter().enumerate() {
        let (name, a, b) = (iv.name.as_str(), iv.from, iv.to);
        if !keep(Part::Between { name, a, b }) {
            continue;
        }
        // q depends on itself and on the pressures of its two nodes.
        s.clear();
        s.push(layout.inertance_offset + k);
        node_states(iv.from, &mut s);
        node_states(iv.to, &mut s);
        clique(&s, dep, false, false);
    }
    for (j, p) in net.pistons().iter().enumerate() {
        let (name, a, b) = (p.name.as_str(), p.behind, p.ahead);
        if !keep(Part::Between { name, a, b }) {
            continue;
        }
        // Before the exit: x, v and both chambers (forces, boundary work, friction heat);
        // after it, the bore is an orifice between the same chambers: a subset.
        s.clear();
        let o = layout.piston_offset + j * piston::STATES;
        s.extend([o + piston::POSITION, o + piston::VELOCITY]);
        node_states(p.behind, &mut s);
        node_states(p.ahead, &mut s);
        clique(&s, dep, true, true);
    }
    for (k, w) in net.walls().iter().enumerate() {
        let (name, a, b) = (w.name.as_str(), w.left, w.right);
        if !keep(Part::Between { name, a, b }) {
            continue;
        }
        s.clear();
        s.push(layout.wall_offset + k);
        node_states(w.left, &mut s);
        node_states(w.right, &mut s);
        clique(&s, dep, true, true);
    }
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
            let p = network_pattern(&net).expect("known components");
            let mut dep = Vec::new();
            network_entries(&net, &mut dep);
            let acc = net.layout.accumulator_offset;
            let swept = net.layout.wall_offset..net.layout.inertance_offset;
            dep.retain(|&(j, _)| j != acc && j != acc + 1 && !swept.contains(&j));
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
