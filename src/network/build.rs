//! Building a network: the state layout, the moving boundaries, the kinds' caches, and the
//! buffers of the right-hand side sized once.

use std::cell::RefCell;

use super::kinds::{Cached, each_kind, each_kind_by_role};
use super::{
    BreakpointCache, Caches, DualScratch, Kinds, Layout, N_KINDS, Network, Offsets, Registered,
};
use crate::components::element::{Boundary, Cache, CacheContext, Element};
use crate::components::keys::Role;
use crate::gas::IdealGas;

impl Network {
    /// A network of the components `kinds` (node indices: chambers, then reservoirs), with
    /// isothermal gas or not.
    pub fn new(gas: IdealGas, kinds: Kinds, isothermal: bool) -> Self {
        let layout = layout_of(&kinds);
        let nc = kinds.chamber.len();
        let mut boundaries = Vec::new();
        each_kind!(K => {
            let first = layout.first::<K>();
            for (i, x) in K::list(&kinds).iter().enumerate() {
                x.boundaries(first + i * K::STATES, &mut |b: Boundary| {
                    if b.chamber < nc {
                        boundaries.push(b);
                    }
                });
            }
        });
        // Sorted by chamber (stable: file order within a chamber) for O(1) lookup per chamber.
        boundaries.sort_by_key(|b| b.chamber);
        let mut boundary_start = vec![0; nc + 1];
        for b in &boundaries {
            boundary_start[b.chamber + 1] += 1;
        }
        for i in 0..nc {
            boundary_start[i + 1] += boundary_start[i];
        }
        let mut flags = 0;
        each_kind!(K => {
            flags += K::list(&kinds).len() * K::FLAGS;
        });
        let mut net = Network {
            gas,
            kinds,
            isothermal,
            exited: vec![false; flags],
            modes: Vec::new(),
            boundaries,
            boundary_start,
            layout,
            segment_start_s: 0.0,
            rhs_evaluations: 0,
            extra_terms: Vec::new(),
            scratch: RefCell::default(),
            dual: DualScratch::default(),
            breakpoints: BreakpointCache::default(),
            caches: Caches::default(),
            mass_moves_scratch: RefCell::default(),
            live_events: Default::default(),
            searched_events: None,
        };
        net.searched_events = Some(net.events_where());
        net.ensure_scratch();
        net.refresh_caches(true);
        net
    }

    /// Rebuild the kinds' caches that a parameter write left stale (`all`: every one).
    #[cold]
    pub(super) fn refresh_caches(&mut self, all: bool) {
        let at = CacheContext {
            chambers: self.kinds.chamber.len(),
            nodes: self.kinds.chamber.len() + self.kinds.reservoir.len(),
            n_states: self.layout.n_states,
            accumulator_offset: self.layout.accumulator_offset,
        };
        each_kind!(K => {
            let cache = K::cache_mut(&mut self.caches);
            if all || cache.is_stale() {
                K::refresh_cache(K::list(&self.kinds), cache, &at);
            }
        });
    }

    /// Rebuild whichever caches a parameter write (`param_mut`) left stale.
    #[inline]
    pub(super) fn refresh_stale_links(&mut self) {
        let mut stale = false;
        each_kind!(K => {
            stale |= K::cache(&self.caches).is_stale();
        });
        if stale {
            self.refresh_caches(false);
        }
    }

    /// Mark every kind's cache stale (a parameter may change).
    pub(super) fn mark_caches_stale(&mut self) {
        each_kind!(K => {
            K::cache_mut(&mut self.caches).mark_stale();
        });
    }

    /// Whether the network's components are chambers, reservoirs and kinds of the lean path
    /// (`Element::LEAN`) alone, without an extra term: see [`Network::rhs`](crate::ode::OdeSystem::rhs).
    pub(super) fn lean_kinds_only(&self) -> bool {
        let mut lean = self.extra_terms.is_empty();
        each_kind!(K => {
            if const { !matches!(K::KIND.role, Role::Node) && !K::LEAN } {
                lean &= K::list(&self.kinds).is_empty();
            }
        });
        lean
    }

    /// The kinds with components, as bits of their indices (see `Scratch::present`).
    pub(super) fn present_kinds(&self) -> u32 {
        let mut bits = 0;
        each_kind!(K => {
            if !K::list(&self.kinds).is_empty() {
                bits |= 1 << K::INDEX;
            }
        });
        bits
    }

    pub(super) fn ensure_scratch(&mut self) {
        let nn = self.kinds.chamber.len() + self.kinds.reservoir.len();
        let nl = self.n_links();
        let lean = self.lean_kinds_only();
        let present = self.present_kinds();
        self.scratch.get_mut().ensure(nn, nl, lean, present);
        let nc = self.kinds.chamber.len();
        let moves = self.mass_moves_scratch.get_mut();
        if cfg!(debug_assertions) && moves.len() != nc {
            *moves = vec![false; nc];
        }
    }
}

/// The places of every kind's states, flow slots, flags and events.
fn layout_of(kinds: &Kinds) -> Layout {
    let mut first_state = [0; N_KINDS];
    let mut first_flag = [0; N_KINDS];
    let mut first_event = [0; N_KINDS];
    let (mut states, mut flags, mut events) = (0, 0, 0);
    each_kind!(K => {
        let n = K::list(kinds).len();
        first_state[K::INDEX] = states;
        first_flag[K::INDEX] = flags;
        first_event[K::INDEX] = events;
        states += n * K::STATES;
        flags += n * K::FLAGS;
        events += n * K::EVENTS;
    });
    // (The totals of flags and events are `exited`'s length and `n_events`.)
    let _ = (flags, events);
    // Flow slots in the order of roles: the named links first.
    let mut first_flow = [0; N_KINDS];
    let mut flows = 0;
    each_kind_by_role!(K => {
        first_flow[K::INDEX] = flows;
        flows += K::list(kinds).len() * K::FLOWS;
    });
    Layout {
        n_states: states + 2,
        accumulator_offset: states,
        first: Box::new(Offsets {
            state: first_state,
            flow: first_flow,
            flag: first_flag,
            event: first_event,
        }),
    }
}
