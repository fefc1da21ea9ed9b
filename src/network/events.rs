//! Events of the network: piston exits and end stops, an inertance valve's flow reversing.

use num_dual::Dual64;

use super::{Network, SensitivityParameter};
use crate::components::piston;

impl Network {
    // ---- Events -------------------------------------------------------------------------
    //
    // An event is a scalar function g_k(t, y) of the state; it fires when g_k crosses 0
    // upward within a step (g_old < 0 ≤ g_new). The driver (`Simulation`) locates the crossing
    // by root finding on the integrator's dense output, stops the step there, calls
    // `handle_event`, and restarts the integrator (a discontinuity). Events are numbered
    // kind by kind; `None` marks an event that cannot fire now (a piston already out).
    //
    // Kinds, in this numbering: piston exits, piston `x_max` stops, piston `x_min` stops (one
    // each per piston). Adding a kind (an inertance valve's q crossing zero: see the note in
    // `components::inertance_valve`): append its count in `n_events`,
    // its range in `event_kind`, its function in `event_value` and its action in
    // `handle_event`. Earlier kinds keep their numbers.

    /// Number of event functions (active or not): per piston its exit, its `x_max` and its
    /// `x_min` stop.
    #[inline]
    pub fn n_events(&self) -> usize {
        3 * self.pistons.len() + 2 * self.inertance_valves.len()
    }

    /// Which kind event `k` is, and its index within the kind.
    fn event_kind(&self, k: usize) -> Option<EventKind> {
        let np = self.pistons.len();
        if k < 3 * np {
            let i = k % np;
            return Some(match k / np {
                0 => EventKind::Exit(i),
                1 => EventKind::StopMax(i),
                _ => EventKind::StopMin(i),
            });
        }
        let nv = self.inertance_valves.len();
        let k = k - 3 * np;
        if k < 2 * nv {
            let i = k % nv;
            return Some(if k / nv == 0 {
                EventKind::FlowReverses(i)
            } else {
                EventKind::FlowResumes(i)
            });
        }
        None
    }

    /// A short description of event `k` (for logs and tests).
    pub fn event_description(&self, k: usize) -> String {
        match self.event_kind(k) {
            Some(EventKind::Exit(j)) => format!("piston `{}` exit", self.pistons[j].name),
            Some(EventKind::StopMax(j)) => {
                format!("piston `{}` at its stop x_max", self.pistons[j].name)
            }
            Some(EventKind::StopMin(j)) => {
                format!("piston `{}` at its stop x_min", self.pistons[j].name)
            }
            Some(EventKind::FlowReverses(i)) => format!(
                "inertance valve `{}`: forward flow stops",
                self.inertance_valves[i].name
            ),
            Some(EventKind::FlowResumes(i)) => format!(
                "inertance valve `{}`: backward flow stops",
                self.inertance_valves[i].name
            ),
            None => format!("event {k} (none)"),
        }
    }

    /// Value of event function `k` at (t, y); `None` while it cannot fire.
    pub fn event_value(&self, k: usize, _t: f64, y: &[f64]) -> Option<f64> {
        match self.event_kind(k)? {
            EventKind::Exit(j) => self.exit_event_value(j, y),
            EventKind::StopMax(j) => {
                let x = self.piston_position(j, y)?;
                self.pistons[j].x_max.map(|xm| x - xm.value)
            }
            EventKind::StopMin(j) => {
                let x = self.piston_position(j, y)?;
                self.pistons[j].x_min.map(|xm| xm.value - x)
            }
            // α switches between α_open and α_leak where q changes sign: a kink in the
            // right-hand side that the integrator should not step across (CircAdapt valve).
            EventKind::FlowReverses(i) => Some(-y[self.layout.inertance_offset + i]),
            EventKind::FlowResumes(i) => Some(y[self.layout.inertance_offset + i]),
        }
    }

    /// Piston j's position while it is in its bore.
    fn piston_position(&self, j: usize, y: &[f64]) -> Option<f64> {
        if self.exited[j] {
            return None;
        }
        Some(y[self.layout.piston_offset + j * piston::STATES + piston::POSITION])
    }

    /// Act on event `k`, which the driver located at (t, y): may change the discrete state of
    /// the network and the continuous state `y` (e.g. reverse a velocity at an end stop).
    pub fn handle_event(&mut self, k: usize, _t: f64, y: &mut [f64]) -> EventOutcome {
        match self.event_kind(k) {
            Some(EventKind::Exit(j)) => {
                // The projectile leaves the bore: from now on the bore is an open orifice.
                self.exited[j] = true;
                EventOutcome {
                    exit_of_piston: Some(j),
                    state_changed: false,
                }
            }
            Some(EventKind::StopMax(j)) => self.impact(j, true, y),
            Some(EventKind::StopMin(j)) => self.impact(j, false, y),
            // Nothing changes but the branch of α: the driver's restart is all it takes.
            Some(EventKind::FlowReverses(_) | EventKind::FlowResumes(_)) | None => {
                EventOutcome::default()
            }
        }
    }

    /// Piston j reaches its stop (`at_max`: x_max, else x_min): Newton's impact law v → −e·v,
    /// a rebound slower than `REST_SPEED_M_PER_S` becomes rest, and the piston is put exactly
    /// on the stop (it is there to within the event location's round-off). The mechanical
    /// energy lost, ½m(v² − v'²) plus the spring energy of that round-off shift, goes to
    /// `energy_left`, so `energy_total` stays closed.
    fn impact(&mut self, j: usize, at_max: bool, y: &mut [f64]) -> EventOutcome {
        let o = self.layout.piston_offset + j * piston::STATES;
        let (x, v) = (y[o + piston::POSITION], y[o + piston::VELOCITY]);
        let Some((x_new, v_new, lost)) =
            self.impact_map(j, at_max, x, v, self.pistons[j].mass.value)
        else {
            return EventOutcome::default();
        };
        y[o + piston::POSITION] = x_new;
        y[o + piston::VELOCITY] = v_new;
        y[self.layout.accumulator_offset + 1] += lost;
        EventOutcome {
            exit_of_piston: None,
            state_changed: true,
        }
    }

    /// Piston j's impact at its `x_max` (or `x_min`) stop, generic so that dual numbers give its
    /// Jacobian: from (x, v) and the mass m, the position after (the stop), the velocity after
    /// (−e·v on an approach, 0 below the rest speed) and the mechanical energy lost, which goes
    /// to the energy accumulator. `None`: no such stop.
    fn impact_map<T: crate::ad::Scalar>(
        &self,
        j: usize,
        at_max: bool,
        x: T,
        v: T,
        m: T,
    ) -> Option<(T, T, T)> {
        let p = &self.pistons[j];
        let stop = if at_max { p.x_max } else { p.x_min }?.value;
        // Only an approach (v towards the stop) is an impact.
        let approaching = if at_max { v.re() > 0.0 } else { v.re() < 0.0 };
        let mut v_new = if approaching { v * -p.restitution } else { v };
        if v_new.re().abs() < piston::REST_SPEED_M_PER_S {
            v_new = T::from(0.0);
        }
        let spring = |x: T| {
            let d = x - p.spring_x0.value;
            d * (0.5 * p.spring_stiffness.value) * d
        };
        let stop = T::from(stop);
        let before = m * 0.5 * v * v + spring(x);
        let after = m * 0.5 * v_new * v_new + spring(stop);
        Some((stop, v_new, before - after))
    }

    /// The tangent map of event `k`'s state jump y⁺ = h(y⁻, p): w ← ∂h/∂y·w + ∂h/∂p, at the
    /// state `y_before` before the event (one dual-number evaluation of the impact map; the
    /// identity for events that leave the state alone). Only a piston's own mass enters its
    /// impact map as a parameter (energy lost ½m(v² − v⁺²)).
    pub fn event_jump_tangent(
        &self,
        k: usize,
        y_before: &[f64],
        w: &mut [f64],
        p: &SensitivityParameter,
    ) {
        let (j, at_max) = match self.event_kind(k) {
            Some(EventKind::StopMax(j)) => (j, true),
            Some(EventKind::StopMin(j)) => (j, false),
            _ => return,
        };
        let o = self.layout.piston_offset + j * piston::STATES;
        let (ix, iv) = (o + piston::POSITION, o + piston::VELOCITY);
        let m0 = self.pistons[j].mass.value;
        let dm = if *p == SensitivityParameter::PistonMass(j) {
            1.0
        } else {
            0.0
        };
        let Some((x, v, lost)) = self.impact_map(
            j,
            at_max,
            Dual64::new(y_before[ix], w[ix]),
            Dual64::new(y_before[iv], w[iv]),
            Dual64::new(m0, dm),
        ) else {
            return;
        };
        w[ix] = x.eps;
        w[iv] = v.eps;
        w[self.layout.accumulator_offset + 1] += lost.eps;
    }

    /// ∂g_k/∂y·w for event function `k` (every event function is linear in y with a
    /// parameter-free threshold, so this is exact; see [`Self::event_value`]).
    pub fn event_gradient_dot(&self, k: usize, w: &[f64]) -> f64 {
        let x = |j: usize| w[self.layout.piston_offset + j * piston::STATES + piston::POSITION];
        match self.event_kind(k) {
            Some(EventKind::Exit(j) | EventKind::StopMax(j)) => x(j),
            Some(EventKind::StopMin(j)) => -x(j),
            Some(EventKind::FlowReverses(i)) => -w[self.layout.inertance_offset + i],
            Some(EventKind::FlowResumes(i)) => w[self.layout.inertance_offset + i],
            None => 0.0,
        }
    }

    /// Piston j's exit function: x − x_exit while it has an exit not yet passed.
    pub fn exit_event_value(&self, j: usize, y: &[f64]) -> Option<f64> {
        let p = &self.pistons[j];
        match p.x_exit.map(|x| x.value) {
            Some(xe) if !self.exited[j] => {
                Some(y[self.layout.piston_offset + j * piston::STATES + piston::POSITION] - xe)
            }
            _ => None,
        }
    }
}

/// The kinds of events (see `Network::n_events`); all are piston events so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EventKind {
    /// A piston reaches its `x_exit`.
    Exit(usize),
    /// A piston reaches its end stop `x_max` moving up (x − x_max crosses 0 upward).
    StopMax(usize),
    /// A piston reaches its end stop `x_min` moving down (x_min − x crosses 0 upward).
    StopMin(usize),
    /// An inertance valve's flow q falls through zero (−q crosses 0 upward).
    FlowReverses(usize),
    /// An inertance valve's flow q rises through zero (q crosses 0 upward).
    FlowResumes(usize),
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
