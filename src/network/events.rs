//! Events of the network: each kind's event functions (`Element::event_value_at`: piston exits
//! and end stops, an inertance valve's flow reversing, a check or relief valve's cracking and
//! full-flow points and a one-way orifice's closing: every switch of a law).
//!
//! An event is a scalar function g_k(t, y) of the state; it fires when g_k crosses 0 upward
//! within a step (g_old < 0 ≤ g_new). The driver (`Simulation`) locates the crossing by root
//! finding on the integrator's dense output, stops the step there, calls `handle_event`, and
//! restarts the integrator (a discontinuity). Events are numbered kind by kind in the
//! registry's order, then by the kind's event function, then component by component (per
//! piston its exit, then per piston its `x_max` stop, then its `x_min` stop); `None` marks an
//! event that cannot fire now (a piston already out). A kind's events keep their numbers as
//! long as no kind before it in the registry gains one.

use super::kinds::{Registered, each_kind};
use super::{Network, SensitivityParameter};
use crate::components::chamber;
use crate::components::element::{Element, EventAt};

impl Network {
    /// Number of event functions (active or not).
    #[inline]
    pub fn n_events(&self) -> usize {
        let mut n = 0;
        each_kind!(K => {
            n += K::list(&self.kinds).len() * K::EVENTS;
        });
        n
    }

    /// A short description of event `k` (for logs and tests).
    pub fn event_description(&self, k: usize) -> String {
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                return K::list(&self.kinds)[i].event_description(e);
            }
        });
        format!("event {k} (none)")
    }

    /// Event `k` as kind `K`'s (its event function, its component), if it is one of `K`'s.
    #[inline(always)]
    fn event_of<K: Registered>(&self, k: usize) -> Option<(usize, usize)> {
        if K::EVENTS == 0 {
            return None;
        }
        let n = K::list(&self.kinds).len();
        // One comparison for both ends (k below the kind's first wraps around).
        let j = k.wrapping_sub(self.layout.first.event[K::INDEX]);
        (j < n * K::EVENTS).then(|| (j / n, j % n))
    }

    /// Where component `i` of kind `K`'s own states start in the state vector, and its flag in
    /// the network's flags (if the kind has flags).
    #[inline(always)]
    fn own_states<K: Registered>(&self, i: usize) -> (std::ops::Range<usize>, Option<usize>) {
        let o = self.layout.first::<K>() + i * K::STATES;
        let flag = (K::FLAGS > 0).then(|| self.layout.first.flag[K::INDEX] + i);
        (o..o + K::STATES, flag)
    }

    /// The mode component `i` of kind `K` holds (`None` before any is held).
    fn mode_of<K: Registered>(&self, i: usize) -> Option<i8> {
        self.modes
            .get(self.layout.first.event[K::INDEX] + i)
            .copied()
    }

    /// Whether any event function of the network can ever fire: the driver's event search is
    /// skipped where none can (a network whose orifices have no valve switch).
    #[inline]
    pub fn has_events(&self) -> bool {
        match self.live_events.get() {
            1 => false,
            2 => true,
            _ => {
                let any = self.any_live_event();
                self.live_events.set(if any { 2 } else { 1 });
                any
            }
        }
    }

    /// The events the driver's steps search, in order: every event but those that can never
    /// fire ([`Element::event_never_fires`]). Computed once (at build).
    pub fn searched_events(&mut self) -> &[u32] {
        if self.searched_events.is_none() {
            self.searched_events = Some(self.events_where());
        }
        self.searched_events.as_deref().unwrap_or(&[])
    }

    /// The events Model Exchange reports as its event indicators: the driver's
    /// ([`Network::searched_events`]), every event but those that can never fire (a piston's
    /// cushion events at an end without a cushion), which would be indicators that stay 1.
    pub fn reported_events(&mut self) -> &[u32] {
        self.searched_events()
    }

    /// The number of [`Network::reported_events`].
    pub fn n_reported_events(&self) -> usize {
        match &self.searched_events {
            Some(r) => r.len(),
            None => self.events_where().len(),
        }
    }

    /// The events that can fire in this network's structure, in the events' order.
    #[cold]
    pub(super) fn events_where(&self) -> Vec<u32> {
        let mut out = Vec::new();
        each_kind!(K => {
            if K::EVENTS != 0 {
                // Event k = first + e·n + i of component i (`event_of`), in k's order.
                let (first, list) = (self.layout.first.event[K::INDEX], K::list(&self.kinds));
                let events = K::EVENTS;
                for e in 0..events {
                    for (i, x) in list.iter().enumerate() {
                        if !x.event_never_fires(e) {
                            out.push((first + e * list.len() + i) as u32);
                        }
                    }
                }
            }
        });
        out
    }

    #[cold]
    fn any_live_event(&self) -> bool {
        let mut any = false;
        each_kind!(K => {
            if K::EVENTS != 0 && !any {
                any = K::list(&self.kinds).iter().any(|x| x.has_events());
            }
        });
        any
    }

    /// Every component's held modes put in line with the state (`Element::settle`: a piston
    /// at rest whose drive already exceeds its static friction is set moving). Whether any
    /// state changed. No allocation.
    pub fn settle(&self, t: f64, y: &mut [f64]) -> bool {
        let mut changed = false;
        let seg = self.segment_start_s;
        each_kind!(K => {
            if K::EVENTS != 0 {
                for (i, x) in K::list(&self.kinds).iter().enumerate() {
                    let (s, flag) = self.own_states::<K>(i);
                    let mut own = [0.0; 8];
                    let m = s.len().min(own.len());
                    own[..m].copy_from_slice(&y[s.start..s.start + m]);
                    let before = own;
                    let at = EventAt {
                        t,
                        s: &before[..m],
                        flag: flag.is_some_and(|f| self.exited[f]),
                        mode: self.mode_of::<K>(i),
                        gas: &self.gas,
                        node: &|n| self.node_state_at(n, t, y),
                        pv: &|p| p.value(t, seg),
                    };
                    if x.settle(&at, &mut own[..m]) {
                        y[s.start..s.start + m].copy_from_slice(&own[..m]);
                        changed = true;
                    }
                }
            }
        });
        changed
    }

    /// Every component's held mode ([`Element::held_mode`]) from the state `y` at `t`, where
    /// the integrator stands, and the mode it held before: the mode its law holds through the
    /// steps until its next event. Allocates only the first time (a built network, or a state
    /// saved before any mode was held, has none yet).
    pub fn hold_modes(&mut self, t: f64, y: &[f64]) {
        let n = self.n_events();
        let mut modes = std::mem::take(&mut self.modes);
        let held = modes.len() == n;
        if !held {
            modes.clear();
            modes.resize(n, 0);
        }
        let seg = self.segment_start_s;
        each_kind!(K => {
            if K::EVENTS != 0 {
                let first = self.layout.first.event[K::INDEX];
                for (i, x) in K::list(&self.kinds).iter().enumerate() {
                    let (s, flag) = self.own_states::<K>(i);
                    let at = EventAt {
                        t,
                        s: &y[s],
                        flag: flag.is_some_and(|f| self.exited[f]),
                        mode: held.then_some(modes[first + i]),
                        gas: &self.gas,
                        node: &|n| self.node_state_at(n, t, y),
                        pv: &|p| p.value(t, seg),
                    };
                    modes[first + i] = x.held_mode(&at);
                }
            }
        });
        self.modes = modes;
    }

    /// Whether event `k` is a switch of a law ([`Element::SWITCHES`]).
    pub fn event_is_switch(&self, k: usize) -> bool {
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                return K::list(&self.kinds)[i].event_is_switch(e);
            }
        });
        false
    }

    /// Whether the driver locates event `k` both ways, its function crossing zero downward as
    /// well as upward ([`Element::event_both_ways`]).
    pub fn event_both_ways(&self, k: usize) -> bool {
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                return K::list(&self.kinds)[i].event_both_ways(e);
            }
        });
        false
    }

    /// Whether event `k` only restarts the integrator ([`Element::event_only_restarts`]).
    pub fn event_only_restarts(&self, k: usize) -> bool {
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                return K::list(&self.kinds)[i].event_only_restarts(e);
            }
        });
        false
    }

    /// Node `node`'s pressure and temperature at (t, y): a chamber's from its states, a
    /// reservoir's from its parameters.
    fn node_state_at(&self, node: usize, t: f64, y: &[f64]) -> crate::components::NodeState {
        let nc = self.kinds.chamber.len();
        if node < nc {
            let s = &y[node * chamber::STATES..(node + 1) * chamber::STATES];
            let (m, u, v) = (s[chamber::MASS], s[chamber::ENERGY], s[chamber::VOLUME]);
            crate::components::NodeState {
                pressure_pa: self.gas.pressure_pa(u, v),
                temperature_k: self.gas.temperature_k(m, u),
            }
        } else {
            let r = &self.kinds.reservoir[node - nc];
            let seg = self.segment_start_s;
            crate::components::NodeState {
                pressure_pa: r.pressure_pa.value(t, seg),
                temperature_k: r.temperature_k.value(t, seg),
            }
        }
    }

    /// Value of event function `k` at (t, y); `None` while it cannot fire. (The driver asks
    /// every event function after every step.)
    #[inline]
    pub fn event_value(&self, k: usize, t: f64, y: &[f64]) -> Option<f64> {
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                let (s, flag) = self.own_states::<K>(i);
                let flag = flag.is_some_and(|f| self.exited[f]);
                let seg = self.segment_start_s;
                let at = EventAt {
                    t,
                    s: &y[s],
                    flag,
                    mode: self.mode_of::<K>(i),
                    gas: &self.gas,
                    node: &|n| self.node_state_at(n, t, y),
                    pv: &|p| p.value(t, seg),
                };
                return K::list(&self.kinds)[i].event_value_at(e, &at);
            }
        });
        None
    }

    /// Act on event `k`, which the driver located at (t, y): may change the discrete state of
    /// the network and the continuous state `y` (e.g. reverse a velocity at an end stop).
    pub fn handle_event(&mut self, k: usize, t: f64, y: &mut [f64]) -> EventOutcome {
        let acc = self.layout.accumulator_offset;
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                let (s, flag) = self.own_states::<K>(i);
                let mut f = flag.is_some_and(|f| self.exited[f]);
                let x = &K::list(&self.kinds)[i];
                // Its nodes' states and its own before the event, on the stack (no allocation):
                // the handler may read them while it writes its own states.
                let mut nodes = [(usize::MAX, crate::components::NodeState::default());
                    crate::components::element::MAX_NODES];
                for (slot, n) in nodes.iter_mut().zip(x.nodes()) {
                    *slot = (n, self.node_state_at(n, t, y));
                }
                let mut own = [0.0; 8];
                let m = s.len().min(own.len());
                own[..m].copy_from_slice(&y[s.start..s.start + m]);
                let seg = self.segment_start_s;
                let at = EventAt {
                    t,
                    s: &own[..m],
                    flag: f,
                    mode: self.mode_of::<K>(i),
                    gas: &self.gas,
                    node: &|n| {
                        nodes
                            .iter()
                            .find(|(j, _)| *j == n)
                            .map_or_else(Default::default, |(_, st)| *st)
                    },
                    pv: &|p| p.value(t, seg),
                };
                // The component's states lie before the accumulators.
                let (states, accumulators) = y.split_at_mut(acc);
                let h = x.handle_event_at(
                    e,
                    &at,
                    &mut states[s],
                    &mut f,
                    &mut accumulators[1],
                );
                if let Some(flag) = flag {
                    self.exited[flag] = f;
                }
                return EventOutcome {
                    exit_of_piston: h.exit.then_some(i),
                    state_changed: h.state_changed,
                };
            }
        });
        EventOutcome::default()
    }

    /// The tangent map of event `k`'s state jump y⁺ = h(y⁻, p): w ← ∂h/∂y·w + ∂h/∂p, at the
    /// state `y_before` before the event (the identity for events that leave the state alone).
    /// Only a piston's own mass enters its impact map as a parameter.
    pub fn event_jump_tangent(
        &self,
        k: usize,
        y_before: &[f64],
        w: &mut [f64],
        p: &SensitivityParameter,
    ) {
        let acc = self.layout.accumulator_offset;
        // (Event `k` is one kind's: the other kinds pass.)
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                let (s, _) = self.own_states::<K>(i);
                let dm = if p.is_mass_of::<K>(i) { 1.0 } else { 0.0 };
                let (states, accumulators) = w.split_at_mut(acc);
                K::list(&self.kinds)[i].event_jump_tangent(
                    e,
                    &y_before[s.clone()],
                    &mut states[s],
                    &mut accumulators[1],
                    dm,
                );
            }
        });
    }

    /// ∂g_k/∂y·w for event function `k` at (t, y): its own states' part (linear in them), and
    /// the part through its nodes' pressures, p = (γ − 1)·U/V for a chamber (a reservoir's
    /// pressure is no state). No threshold is a state-independent parameter's function of p,
    /// so this is exact; see [`Self::event_value`].
    pub fn event_gradient_dot(&self, k: usize, t: f64, y: &[f64], w: &[f64]) -> f64 {
        let nc = self.kinds.chamber.len();
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                return self.at_component::<K, _>(i, t, y, |x, at, s| {
                    let mut d = x.event_gradient_at(e, at, &w[s]);
                    x.event_pressure_gradient(e, at, &mut |node, dg_dp| {
                        if node < nc {
                            let o = node * chamber::STATES;
                            let (u, v) = (y[o + chamber::ENERGY], y[o + chamber::VOLUME]);
                            let dp_du = (self.gas.gamma - 1.0) / v;
                            let dp_dv = -(self.gas.gamma - 1.0) * u / (v * v);
                            d += dg_dp
                                * (dp_du * w[o + chamber::ENERGY]
                                    + dp_dv * w[o + chamber::VOLUME]);
                        }
                    });
                    d
                });
            }
        });
        0.0
    }

    /// The change of event function `k` at (t, y) that errors within an adaptive method's
    /// tolerance can make: Σ_j |∂g_k/∂y_j|·(rtol·|y_j| + atol), over the states it reads (its
    /// own, and its nodes' chambers' energies). A crossing of a switch that stays within it is the
    /// method's noise, not a motion of the state across the switch (the driver's disarmed
    /// switches, docs/integrators.md "Switches"). 0 for a function of no state.
    pub fn event_noise(&self, k: usize, t: f64, y: &[f64], rtol: f64, atol: f64) -> f64 {
        let nc = self.kinds.chamber.len();
        let w = |x: f64| rtol * x.abs() + atol;
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                return self.at_component::<K, _>(i, t, y, |x, at, s| {
                    let mut noise = 0.0;
                    // Its own states one at a time (a kind has at most 8), so that terms of
                    // opposite sign do not cancel.
                    let mut unit = [0.0; 8];
                    let m = s.len().min(unit.len());
                    for j in 0..m {
                        unit[j] = 1.0;
                        noise += x.event_gradient_at(e, at, &unit[..m]).abs() * w(y[s.start + j]);
                        unit[j] = 0.0;
                    }
                    // A chamber's p = (γ − 1)·U/V through its energy's tolerance. Its volume's
                    // is left out: fixed, it has no error, and its weight with a coarse atol
                    // (1e-6 m³ in a 0.2 L chamber) would make the noise 0.5 % of p.
                    x.event_pressure_gradient(e, at, &mut |node, dg_dp| {
                        if node < nc {
                            let o = node * chamber::STATES;
                            let (u, v) = (y[o + chamber::ENERGY], y[o + chamber::VOLUME]);
                            noise += dg_dp.abs() * (self.gas.gamma - 1.0) / v.abs() * w(u);
                        }
                    });
                    noise
                });
            }
        });
        0.0
    }

    /// `f` of component `i` of kind `K`, the point (t, y) as its event functions read it, and
    /// its own states' place in y.
    #[inline(always)]
    fn at_component<K: Registered, R>(
        &self,
        i: usize,
        t: f64,
        y: &[f64],
        f: impl FnOnce(&K, &EventAt<'_>, std::ops::Range<usize>) -> R,
    ) -> R {
        let (s, flag) = self.own_states::<K>(i);
        let seg = self.segment_start_s;
        let at = EventAt {
            t,
            s: &y[s.clone()],
            flag: flag.is_some_and(|f| self.exited[f]),
            mode: self.mode_of::<K>(i),
            gas: &self.gas,
            node: &|n| self.node_state_at(n, t, y),
            pv: &|p| p.value(t, seg),
        };
        f(&K::list(&self.kinds)[i], &at, s)
    }
}

/// What handling an event did, for the driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventOutcome {
    /// A piston passed its exit: the driver reports it (`Advance::Exit`) and, with
    /// `stop_on_exit`, ends the run once no piston with an exit is left in its bore.
    pub exit_of_piston: Option<usize>,
    /// The handler changed `y` (the driver then drops the Kahan compensation of the changed
    /// entries). Events that only change discrete state leave it false.
    pub state_changed: bool,
}
