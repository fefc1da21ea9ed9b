//! Events of the network: each kind's event functions (`Element::event_value`: piston exits and
//! end stops, an inertance valve's flow reversing).
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
use crate::components::element::Element;

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

    /// Value of event function `k` at (t, y); `None` while it cannot fire. (The driver asks
    /// every event function after every step.)
    #[inline]
    pub fn event_value(&self, k: usize, _t: f64, y: &[f64]) -> Option<f64> {
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                let (s, flag) = self.own_states::<K>(i);
                let flag = flag.is_some_and(|f| self.exited[f]);
                return K::list(&self.kinds)[i].event_value(e, &y[s], flag);
            }
        });
        None
    }

    /// Act on event `k`, which the driver located at (t, y): may change the discrete state of
    /// the network and the continuous state `y` (e.g. reverse a velocity at an end stop).
    pub fn handle_event(&mut self, k: usize, _t: f64, y: &mut [f64]) -> EventOutcome {
        let acc = self.layout.accumulator_offset;
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                let (s, flag) = self.own_states::<K>(i);
                let mut f = flag.is_some_and(|f| self.exited[f]);
                // The component's states lie before the accumulators.
                let (states, accumulators) = y.split_at_mut(acc);
                let h = K::list(&self.kinds)[i].handle_event(
                    e,
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

    /// ∂g_k/∂y·w for event function `k` (every event function is linear in y with a
    /// parameter-free threshold, so this is exact; see [`Self::event_value`]).
    pub fn event_gradient_dot(&self, k: usize, w: &[f64]) -> f64 {
        each_kind!(K => {
            if let Some((e, i)) = self.event_of::<K>(k) {
                let (s, _) = self.own_states::<K>(i);
                return K::list(&self.kinds)[i].event_gradient(e, &w[s]);
            }
        });
        0.0
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
