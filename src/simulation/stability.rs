//! Run-time check 11: an explicit fixed-step method's step against its stability bound (h·ρ(J)),
//! and, for a forced `dopri5`, Hairer's stiffness detection (see
//! [`crate::integrators::stability`]).

use super::Simulation;
use crate::checks;
use crate::integrators::Integrator;
use crate::integrators::stability::{
    Dp5Fought, Dp5Stiffness, SpectralRadius, StepRun, explicit_bound,
};

/// Run-time check 11 (see [`crate::integrators::stability`]): when the next estimate of ρ(J)
/// is due for an explicit fixed-step method, and the counts of DP5's stiffness detection for
/// a forced `dopri5`. Observation only (not part of a stored state: a restored run estimates
/// afresh at its first step).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StabilityWatch {
    /// Estimate when `stats.steps` reaches this (0: at the next step; `u64::MAX`: never).
    pub(super) next_step: u64,
    radius: SpectralRadius,
    /// The method's bound on h·ρ, once known (`None`: not an explicit fixed-step method).
    bound: Option<f64>,
    /// A forced `dopri5`'s steps as `auto` watches its DP5's.
    dp5_stiffness: Dp5Stiffness,
    dp5_fought: Dp5Fought,
    /// The last estimate: ρ(J), s⁻¹, and the step it was tested with, s.
    pub last_radius_per_s: f64,
    pub last_step_s: f64,
    /// Adaptive steps ended on a law's switch (see [`Simulation::watch_chatter`]).
    switches: StepRun,
}

/// Steps ended on a switch, with fewer than `QUIET_STEPS` others in between, that count as
/// chattering.
pub const CHATTER_EVENTS: u32 = 32;
const QUIET_STEPS: u32 = 8;

/// Steps between two estimates of ρ(J) at most, and after one that fired.
const STABILITY_MAX_INTERVAL: u64 = 1024;
const STABILITY_FIRED_INTERVAL: u64 = 16;

impl Simulation {
    /// After an adaptive step (`switch`: it ended on a law's switch): chattering is a run of
    /// `CHATTER_EVENTS` such steps, the valve hovering inside a band narrower than the
    /// method's stable step: a stiffness Hairer's test cannot see (every step ends on an
    /// event, short). `auto` then takes its BDF, which holds the band without chattering;
    /// another method keeps locating every switch (its answer stays within its tolerance,
    /// at the cost of its steps).
    pub(super) fn watch_chatter(&mut self, switch: bool) {
        if self
            .stability
            .switches
            .note(switch, CHATTER_EVENTS, QUIET_STEPS)
            && let crate::integrators::Method::Auto(a) = &mut self.integrator
        {
            a.prefer_stiff();
        }
    }

    /// Run-time check 11 for a forced `dopri5`: the stiffness and the fought steps `auto`
    /// watches its DP5 for ([`Dp5Stiffness`], [`Dp5Fought`]), each a warning instead of a
    /// switch to the BDF. `rejected`: the method's rejected steps so far.
    #[inline]
    pub(super) fn watch_dp5(&mut self, h_lambda: f64, rejected: u64, t_s: f64) {
        let w = &mut self.stability;
        let fought = w.dp5_fought.note(rejected);
        if w.dp5_stiffness.note(h_lambda) || fought {
            self.note_fired(checks::BEYOND_STABILITY, t_s);
        }
    }

    /// Run-time check 11 for an explicit fixed-step method about to step with `h`: h·ρ(J) at
    /// the current state against the method's stability bound. Runs when `stability.next_step`
    /// is due; the next estimate follows after as many steps as the margin bound/(h·ρ) (1 to
    /// 1,024), so a Jacobian that grows towards the bound is watched more closely.
    #[cold]
    #[inline(never)]
    pub(super) fn check_stability(&mut self, h: f64) {
        let bound = match self.stability.bound {
            Some(b) => b,
            None => match explicit_bound(self.integrator.name()) {
                Some(b) => {
                    self.stability.bound = Some(b);
                    b
                }
                None => {
                    self.stability.next_step = u64::MAX;
                    return;
                }
            },
        };
        let n = self.network.layout.n_states;
        let count = self.network.rhs_evaluations;
        let rho = self.stability.radius.estimate(
            &mut self.network,
            self.t_s,
            &self.y[..n],
            h,
            self.settings.control.atol,
        );
        self.network.rhs_evaluations = count;
        let steps = self.stats.steps;
        let interval = match rho {
            None => STABILITY_MAX_INTERVAL,
            Some(r) => {
                self.stability.last_radius_per_s = r;
                self.stability.last_step_s = h;
                let margin = bound / (h * r);
                if margin < 1.0 {
                    self.note_fired(checks::BEYOND_STABILITY, self.t_s);
                    // Fired: look again later, not at every step of a run that is off anyway.
                    STABILITY_FIRED_INTERVAL
                } else if margin.is_nan() {
                    STABILITY_MAX_INTERVAL
                } else {
                    (margin.floor().min(STABILITY_MAX_INTERVAL as f64) as u64).max(1)
                }
            }
        };
        self.stability.next_step = steps.saturating_add(interval);
    }
}
