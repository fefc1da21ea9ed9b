//! Events: the earliest zero crossing of the network's event functions inside a step, located
//! by root finding on the method's step or dense output, and the handling of an event at the
//! reported state (the network acts, the sensitivities jump, the integrator restarts).

use super::driver::kahan_add;
use super::{Advance, Finish, Simulation, StepFailure};
use crate::integrators::Integrator;
#[cfg(doc)]
use crate::network::Network;
use crate::ode::OdeSystem;
use crate::time_axis::time_resolution_s;

/// An event as the driver handled it: which one, where it was located, and the state just
/// before and just after the network acted on it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventRecord {
    /// Event number (see [`Network::n_events`]).
    pub k: usize,
    pub t_s: f64,
    pub y_before: Vec<f64>,
    pub y_after: Vec<f64>,
    /// dt_e/dp per sensitivity parameter (empty without sensitivities).
    pub dt_dp: Vec<f64>,
}

/// A crossing of a disarmed switch ([`Internal::disarmed`](super::Internal)) whose step ends
/// within this fraction of the tolerance's noise of g ([`Network::event_noise`]) is passed
/// over. The error a pass leaves is at most that much of g. At the full noise, a BDF run
/// across the kinks of a cylinder's regulator held at its set point drifted 13 × the bound
/// of `tests/verification/chattering.rs`; at a hundredth, a state at rest whose every step
/// crossed a valve's switch by 2 % of the noise was located again and again (2.3 million
/// events in 2 s).
pub const PASSED_OVER_NOISE: f64 = 0.1;

/// Whether an event function crossed zero upward between two of its values (`g_old` before,
/// `g_new` after): g_old < 0 ≤ g_new. Every event of [`Network::event_value`] fires this way,
/// in the driver's steps and in Model Exchange's event mode alike
/// ([`exchange`](super::exchange)).
#[inline(always)]
pub fn crosses(g_old: f64, g_new: f64) -> bool {
    g_old < 0.0 && g_new >= 0.0
}

impl Simulation {
    /// The network's held modes put in line with the reported state where the integrator
    /// stands there too (`Network::settle`): at the start of an advance and after an event.
    /// The integrator restarts if a state changed; whether one did.
    pub(super) fn settle_modes(&mut self) -> bool {
        if !self.network.has_events() {
            return false;
        }
        if self.internal.t_s != self.t_s {
            self.hold_modes();
            return false;
        }
        let n = self.network.layout.n_states;
        let changed = self.network.settle(self.t_s, &mut self.y[..n]);
        if changed {
            let i = &mut self.internal;
            i.y[..n].copy_from_slice(&self.y[..n]);
            i.y_prev[..n].copy_from_slice(&self.y[..n]);
            self.integrator.restart();
        }
        self.hold_modes();
        changed
    }

    /// The modes the network's laws hold through the next steps (`Network::hold_modes`),
    /// from the integrator's own point (the reported one where it stands there too): its
    /// steps go on from there. At the start of an
    /// advance, after an event and after a state is restored.
    pub(crate) fn hold_modes(&mut self) {
        if !self.network.has_events() {
            return;
        }
        let n = self.network.layout.n_states;
        let i = &self.internal;
        if self.y.len() < n || i.y.len() < n {
            // A forged state (restored unchecked) is refused by the step that reads it.
            return;
        }
        if self.integrator.fixed_step() || i.t_s == self.t_s {
            // (After an event the integrator's own point is set from the reported one.)
            self.network.hold_modes(self.t_s, &self.y[..n]);
        } else {
            self.network.hold_modes(i.t_s, &i.y[..n]);
        }
    }

    /// Handle event `k` at the reported state (the step has ended at its time): the network
    /// acts, the sensitivities jump, the integrator restarts (a discontinuity), and a piston
    /// exit is reported.
    ///
    /// Sensitivities: the event time moves with p, dt_e/dp = −∂g/∂y·s⁻/ġ with ġ = ∂g/∂y·f⁻
    /// (no event threshold is a parameter, so ∂g/∂p = 0). With the state jump y⁺ = h(y⁻, p)
    /// (the identity except at end-stop impacts) and H = ∂h/∂y,
    /// s⁺ = H·s⁻ + ∂h/∂p + (H·f⁻ − f⁺)·dt_e/dp (Hairer, Nørsett & Wanner, *Solving ODEs I*,
    /// §II.14; CVODES's root sensitivities), computed as H·(s⁻ + f⁻·dt_e/dp) + ∂h/∂p − f⁺·dt_e/dp
    /// by one dual-number evaluation of the jump ([`Network::event_jump_tangent`]).
    pub(super) fn handle_event_at_reported(
        &mut self,
        k: usize,
    ) -> Result<Option<Advance>, StepFailure> {
        self.y_new.copy_from_slice(&self.y);
        let n = self.network.layout.n_states;
        let kp = self.sensitivities.params.len();
        let t = self.t_s;
        let spare = &mut self.spare_event;
        let record = self.last_event.get_or_insert_with(|| std::mem::take(spare));
        record.dt_dp.clear();
        if kp > 0 {
            // f⁻ into dy[..n] (dy has n·(1 + kp) entries).
            OdeSystem::rhs(&mut self.network, t, &self.y[..n], &mut self.dy[..n]);
            let gdot = self
                .network
                .event_gradient_dot(k, t, &self.y[..n], &self.dy[..n]);
            if gdot == 0.0 || !gdot.is_finite() {
                return Err(self.sensitivity_failure(
                    k,
                    "the event function does not cross (ġ = 0), so its time has no derivative",
                ));
            }
            for i in 0..kp {
                let s = &self.y[(i + 1) * n..(i + 2) * n];
                record
                    .dt_dp
                    .push(-self.network.event_gradient_dot(k, t, &self.y[..n], s) / gdot);
            }
        }
        let mut y = std::mem::take(&mut self.y);
        let outcome = self.network.handle_event(k, t, &mut y[..n]);
        if kp > 0 {
            // f⁺ into dy[n..2n]; the state before the event is still in y_new.
            let (f_before, rest) = self.dy.split_at_mut(n);
            OdeSystem::rhs(&mut self.network, t, &y[..n], &mut rest[..n]);
            let dt_dp = &self.last_event.as_ref().expect("set above").dt_dp;
            for (i, (dt, p)) in dt_dp.iter().zip(&self.sensitivities.params).enumerate() {
                let s = &mut y[(i + 1) * n..(i + 2) * n];
                if outcome.state_changed {
                    for j in 0..n {
                        s[j] += f_before[j] * dt;
                    }
                    self.network.event_jump_tangent(k, &self.y_new[..n], s, p);
                    for j in 0..n {
                        s[j] -= rest[j] * dt;
                    }
                } else {
                    for j in 0..n {
                        s[j] += (f_before[j] - rest[j]) * dt;
                    }
                }
            }
        }
        if outcome.state_changed || kp > 0 {
            // The compensation of a changed entry no longer belongs to it.
            for (c, (a, b)) in self
                .y_compensation
                .iter_mut()
                .zip(y.iter().zip(&self.y_new))
            {
                if a.to_bits() != b.to_bits() {
                    *c = 0.0;
                }
            }
        }
        self.y = y;
        let record = self.last_event.get_or_insert_with(EventRecord::default);
        record.k = k;
        record.t_s = t;
        record.y_before.clone_from(&self.y_new);
        record.y_after.clone_from(&self.y);
        self.stats.events += 1;
        self.integrator.restart();
        self.settle_modes();
        if outcome.state_changed || kp > 0 {
            let rc = self
                .checks
                .warnings(&self.network, &self.y, &self.sensitivities.params);
            self.set_rc(rc);
        }
        let Some(j) = outcome.exit_of_piston else {
            return Ok(None);
        };
        if self.settings.stop_on_exit && !self.pending_exits() {
            self.finished = Some(Finish::Exited { t_s: self.t_s });
        }
        Ok(Some(Advance::Exit {
            piston: j,
            t_s: self.t_s,
        }))
    }

    /// Arm again every disarmed switch the state, at the end of an accepted step, has left by
    /// more than the tolerance's noise.
    pub(super) fn rearm_switches(&mut self) {
        let c = &self.settings.control;
        let i = &mut self.internal;
        for w in 0..i.disarmed.len() {
            let mut bits = i.disarmed[w];
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let k = w * 64 + b;
                let left = self.network.event_value(k, i.t_s, &i.y).is_none_or(|g| {
                    g.abs() > self.network.event_noise(k, i.t_s, &i.y, c.rtol, c.atol)
                });
                if left {
                    i.disarmed[w] &= !(1 << b);
                }
            }
        }
    }

    fn sensitivity_failure(&self, k: usize, why: &str) -> StepFailure {
        StepFailure {
            code: 0,
            last_good_t_s: self.t_s,
            message: format!(
                "sensitivities: {} at t = {} s: {why}",
                self.network.event_description(k),
                self.t_s
            ),
        }
    }

    /// The earliest event crossing (k, step size to it) in the step of size `h` from the
    /// current point whose end state is in `y_new`: g_k(old) < 0 ≤ g_k(new).
    // Always inlined: the test is three instructions, the call was ten.
    #[inline(always)]
    pub(super) fn earliest_event(
        &mut self,
        t: f64,
        h: f64,
        inc: &mut [f64],
        adaptive: bool,
    ) -> Result<Option<(usize, f64)>, StepFailure> {
        // Networks without pistons, inertance valves or valve switches have no event
        // functions that can fire: no call.
        if !self.network.has_events() {
            return Ok(None);
        }
        self.earliest_event_of_all(t, h, inc, adaptive)
    }

    fn earliest_event_of_all(
        &mut self,
        t: f64,
        h: f64,
        inc: &mut [f64],
        adaptive: bool,
    ) -> Result<Option<(usize, f64)>, StepFailure> {
        let mut event: Option<(usize, f64)> = None;
        let searched = self.network.searched_events().len();
        for j in 0..searched {
            let k = self.network.searched_events()[j] as usize;
            let y0 = if adaptive { &self.internal.y } else { &self.y };
            let (Some(g0), Some(g1)) = (
                self.network.event_value(k, t, y0),
                self.network.event_value(k, t + h, &self.y_new),
            ) else {
                continue;
            };
            // A downward crossing of an event located both ways is the upward one of −g; by
            // the adaptive methods only: a fixed step's stable oscillation about equalizing
            // pressures would cross a laminar point back and forth at every step, each
            // crossing a restart (the fixed-order BDFs' an explicit RK4 start).
            let sign = if crosses(g0, g1) {
                1.0
            } else if adaptive && crosses(-g0, -g1) && self.network.event_both_ways(k) {
                -1.0
            } else {
                continue;
            };
            if adaptive && self.internal.is_disarmed(k) {
                // A switch the integrator restarted on, not left since, crossed again by a
                // step that ends within a tenth of the tolerance's noise of it: the method's
                // own error about the switch, passed over (docs/integrators.md, "Switches").
                let c = &self.settings.control;
                let noise = self
                    .network
                    .event_noise(k, t + h, &self.y_new, c.rtol, c.atol);
                if g1.abs() <= PASSED_OVER_NOISE * noise {
                    self.internal.switch_crossed = true;
                    continue;
                }
            }
            {
                // Location leaves the state at the crossing in `y_new`: the step's end state is
                // kept for a crossing that is passed over (below).
                let n = self.y_new.len();
                self.step_end[..n].copy_from_slice(&self.y_new);
                self.step_end[n..].copy_from_slice(&self.compensation_new);
                let (g0, g1) = (sign * g0, sign * g1);
                let hk = self.locate_event(k, sign, t, h, g0, g1, inc, adaptive)?;
                // A switch within the time axis's resolution of the step's start is the one the
                // step starts on: the step taken again to the last one landed a rounding short
                // of it (its g a hair below 0), and the integrator restarted there. No step can
                // end on it (none is shorter than the resolution); past it the law is smooth.
                // So is a crossing of a laminar point, the same way, in the first step after the
                // integrator restarted on it: located again, each landing a little short, it
                // would repeat in ever shorter steps down to that resolution. Crossed back the
                // other way, it is located (docs/integrators.md, "Switches").
                let restarted_on = self.internal.restarted_on == Some((k, sign < 0.0))
                    && self.network.event_both_ways(k);
                if adaptive
                    && (hk <= time_resolution_s(t + h) || restarted_on)
                    && self.network.event_is_switch(k)
                {
                    self.y_new.copy_from_slice(&self.step_end[..n]);
                    self.compensation_new.copy_from_slice(&self.step_end[n..]);
                    continue;
                }
                if event.is_none_or(|(_, he)| hk < he) {
                    event = Some((k, hk));
                    self.internal.located_downward = sign < 0.0;
                }
            }
        }
        Ok(event)
    }
    /// Step size in (0, h] at which event `k` (its function times `sign`) crosses zero upward,
    /// by the Illinois variant of
    /// regula falsi on the method's own step or dense output (Dahlquist & Björck, *Numerical
    /// Methods*, §6.2), iterated to the resolution of the time axis (far below the 1e-12 s
    /// asked for). The state at the returned size is left in `y_new`'s role by the caller.
    #[allow(clippy::too_many_arguments)]
    fn locate_event(
        &mut self,
        k: usize,
        sign: f64,
        t: f64,
        h: f64,
        g0: f64,
        g1: f64,
        inc: &mut [f64],
        adaptive: bool,
    ) -> Result<f64, StepFailure> {
        let (mut a, mut ga, mut b, mut gb) = (0.0, g0, h, g1);
        let tol = 4.0 * f64::EPSILON * (t.abs() + h);
        let mut side = 0i8;
        for _ in 0..200 {
            if b - a <= tol || gb == 0.0 {
                break;
            }
            let mut c = (a * gb - b * ga) / (gb - ga);
            if !(c > a && c < b) {
                c = 0.5 * (a + b);
            }
            if adaptive {
                let i = &self.internal;
                integ!(self.dense(t, &i.y, c, inc)).map_err(|e| self.solver_failure(e))?;
                kahan_add(
                    &i.y,
                    &i.compensation,
                    inc,
                    &mut self.y_new,
                    &mut self.compensation_new,
                );
            } else {
                integ!(self.dense(t, &self.y, c, inc)).map_err(|e| self.solver_failure(e))?;
                self.apply_increment(inc);
            }
            let gc = sign
                * self
                    .network
                    .event_value(k, t + c, &self.y_new)
                    .unwrap_or(0.0);
            if gc >= 0.0 {
                b = c;
                gb = gc;
                if side == -1 {
                    ga *= 0.5;
                }
                side = -1;
            } else {
                a = c;
                ga = gc;
                if side == 1 {
                    gb *= 0.5;
                }
                side = 1;
            }
        }
        Ok(b)
    }
}
