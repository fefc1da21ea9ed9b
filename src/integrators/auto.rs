//! `auto`, the default method: Dormand–Prince 5(4) while the problem is not stiff, the
//! variable-order BDF while it is, switching both ways as LSODA does (Petzold, "Automatic
//! selection of methods for solving stiff and nonstiff systems of ODEs", SIAM J. Sci. Stat.
//! Comput. 4 (1983)).
//!
//! - **To BDF**: Hairer's stiffness detection (HNW II, §IV.2, as in `dopri5.f`): after every
//!   accepted DP5 step, h·|λ| ≈ h·‖f(y₁) − f(ŷ₆)‖/‖y₁ − ŷ₆‖. A value above 3.25 (DP5's
//!   stability boundary on the negative real axis is at 3.3) means the step is held by
//!   stability, not accuracy; 15 such steps (6 non-stiff ones in between reset the count) switch
//!   to BDF, which starts at order 1 with DP5's last step.
//! - **Back to DP5**: DP5 would be stable with h_e = 3.3/ρ(J) (ρ bounded from the BDF's saved
//!   Jacobian, see [`Bdf::jacobian_radius_bound`]), and it did take the step h_s it had when it
//!   switched, so h_e = max(3.3/ρ, h_s), at 6 right-hand sides per step; the BDF costs c per
//!   step of size h: the right-hand sides of its Newton iterations and Jacobians since the
//!   switch, plus 4 for its linear solves and bookkeeping (what makes a BDF step on a small
//!   network cost about as much as a DP5 step with 2–3 times fewer evaluations, measured on
//!   the 20-tank chain). Switch back when 1.2·6/h_e < c/h, after at least 20 BDF steps since
//!   the switch or the BDF's last restart (an event or a table breakpoint), with c counted over
//!   those steps: a restarted BDF is back at order 1 with a short step, which says nothing of
//!   what it costs once it has grown the step again.
//! - Each switch back doubles those BDF steps for the next one (20, 40, 80, … up to 20·2¹⁰),
//!   so a problem on the border cannot make `auto` thrash. The backoff is on the BDF's side,
//!   not on Hairer's 15 steps: a wrong switch back costs DP5 steps held by stability (a
//!   switched circuit's stiff network stays stiff between its events), a wrong stay only BDF
//!   steps a few times dearer than DP5's.
//!
//! A switch is decided at `commit` and made at the next `attempt`, so that `dense` keeps
//! interpolating the committed step of the method that took it. Both methods' histories and the
//! counters are serde data.

use serde::{Deserialize, Serialize};

use super::stability::{Dp5Fought, Dp5Stiffness};
use super::{Bdf, Dopri5, Integrator, SolverError, StepControl};
use crate::ode::OdeSystem;

/// DP5's stability boundary on the negative real axis (h·|λ| with |R(z)| = 1), HNW II §IV.2.
const DP5_STABILITY: f64 = 3.3;
/// Right-hand sides per DP5 step (FSAL).
const DP5_RHS_PER_STEP: f64 = 6.0;
/// DP5 must be this much cheaper before the switch back.
const SWITCH_BACK_MARGIN: f64 = 1.2;
/// A BDF step's linear solves and Nordsieck updates, in right-hand-side equivalents.
const BDF_OVERHEAD_RHS: f64 = 4.0;
/// Largest doubling of `MIN_BDF_STEPS` after switches back.
const MAX_BACKOFF: u32 = 10;
/// BDF steps since its start or last restart before the switch back is considered.
const MIN_BDF_STEPS: u64 = 20;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Auto {
    n: usize,
    /// Whether the BDF takes the steps (else DP5).
    stiff: bool,
    /// Switch at the next attempt.
    switch_pending: bool,
    dp5: Dopri5,
    bdf: Bdf,
    /// The user's initial step (the BDF's own is set to DP5's last step while it starts).
    initial_step: Option<f64>,
    /// Hairer's stiffness detection over DP5's steps.
    stiffness: Dp5Stiffness,
    /// BDF steps since its start or last restart needed before the switch back is considered
    /// (doubles after each switch back).
    bdf_needed: u64,
    /// DP5's step when it switched to BDF, s.
    h_dp5: f64,
    /// BDF counters when it took over or last restarted: steps, Newton iterations, Jacobian
    /// right-hand sides.
    bdf_base: [u64; 3],
    /// ρ(J) bound of the BDF's saved Jacobian and that Jacobian's number (recomputed only when
    /// the BDF computes a new one).
    rho: (u64, f64),
    pub switches_to_bdf: u64,
    pub switches_to_dp5: u64,
    /// DP5's steps accepted only after a rejection (see [`Auto::watch_dp5`]).
    fought: Dp5Fought,
}

impl Auto {
    /// `self = o` without allocating once the histories have their sizes (fmi2SetFMUstate
    /// into a running instance).
    pub(crate) fn assign(&mut self, o: &Self) {
        let Auto {
            n,
            stiff,
            switch_pending,
            dp5,
            bdf,
            initial_step,
            stiffness,
            bdf_needed,
            h_dp5,
            bdf_base,
            rho,
            switches_to_bdf,
            switches_to_dp5,
            fought,
        } = self;
        *n = o.n;
        *stiff = o.stiff;
        *switch_pending = o.switch_pending;
        dp5.assign(&o.dp5);
        bdf.assign(&o.bdf);
        *initial_step = o.initial_step;
        *stiffness = o.stiffness;
        *bdf_needed = o.bdf_needed;
        *h_dp5 = o.h_dp5;
        *bdf_base = o.bdf_base;
        *rho = o.rho;
        *switches_to_bdf = o.switches_to_bdf;
        *switches_to_dp5 = o.switches_to_dp5;
        *fought = o.fought;
    }

    pub fn new(n: usize) -> Self {
        Auto {
            n,
            stiff: false,
            switch_pending: false,
            dp5: Dopri5::new(n),
            bdf: Bdf::adaptive(n),
            initial_step: None,
            stiffness: Dp5Stiffness::default(),
            bdf_needed: MIN_BDF_STEPS,
            h_dp5: 0.0,
            bdf_base: [0; 3],
            rho: (0, 0.0),
            switches_to_bdf: 0,
            switches_to_dp5: 0,
            fought: Dp5Fought::default(),
        }
    }

    /// Whether the BDF is the active method.
    /// The BDF it switches to (its saved Jacobian is checked against the model on restore).
    pub fn bdf(&self) -> &Bdf {
        &self.bdf
    }

    /// The BDF, to set how it solves its Newton systems.
    pub fn bdf_mut(&mut self) -> &mut Bdf {
        &mut self.bdf
    }

    pub fn is_stiff(&self) -> bool {
        self.stiff
    }

    /// Accepted steps of each method so far: (DP5, BDF).
    pub fn steps(&self) -> (u64, u64) {
        (self.dp5.accepted, self.bdf.stats.steps)
    }

    fn bdf_counts(&self) -> [u64; 3] {
        let s = &self.bdf.stats;
        [s.steps, s.newton_iterations, s.jacobian_rhs_evaluations]
    }

    /// After an accepted DP5 step: Hairer's test, and the steps its error test fights
    /// ([`Dp5Fought`]). Either takes the BDF from the next step.
    fn watch_dp5(&mut self) {
        let fought = self.fought.note(self.dp5.rejected_steps());
        if self.stiffness.note(self.dp5.last_stiffness()) || fought {
            self.switch_pending = true;
        }
    }

    /// After an accepted BDF step: would DP5 be cheaper?
    fn watch_bdf(&mut self) {
        let now = self.bdf_counts();
        let steps = now[0].saturating_sub(self.bdf_base[0]);
        if steps < self.bdf_needed {
            return;
        }
        let id = self.bdf.jacobian_count();
        if id != self.rho.0 {
            match self.bdf.jacobian_radius_bound() {
                Some(r) => self.rho = (id, r),
                None => return,
            }
        }
        let rho = self.rho.1;
        if self.rho.0 == 0 || !rho.is_finite() {
            return;
        }
        let h = self.bdf.step_size().abs();
        let rhs = (now[1] - self.bdf_base[1]) + (now[2] - self.bdf_base[2]);
        let bdf_cost = rhs as f64 / steps as f64 + BDF_OVERHEAD_RHS;
        let h_e = (DP5_STABILITY / rho).max(self.h_dp5);
        // DP5's cost per unit time 6/h_e against the BDF's c/h.
        if SWITCH_BACK_MARGIN * DP5_RHS_PER_STEP * h < bdf_cost * h_e {
            self.switch_pending = true;
        }
    }

    /// The driver saw the steps chatter between the switches of a law (a valve hovering in a
    /// band narrower than DP5's stable step resolves): a stiffness that Hairer's test does not
    /// see, since every step ends on an event. Take the BDF from the next step.
    pub fn prefer_stiff(&mut self) {
        if !self.stiff {
            self.switch_pending = true;
        }
    }

    fn switch(&mut self) {
        self.switch_pending = false;
        self.stiffness = Dp5Stiffness::default();
        self.fought.restart();
        if self.stiff {
            let h = self.bdf.step_size().max(self.h_dp5);
            self.dp5.restart_with_step(h);
            self.bdf_needed = MIN_BDF_STEPS << (self.switches_to_dp5 + 1).min(MAX_BACKOFF as u64);
            self.stiff = false;
            self.switches_to_dp5 += 1;
        } else {
            let h = self.dp5.next_step();
            self.h_dp5 = h;
            // 0 after a restart (an event): DP5 had not chosen its next step; the BDF then
            // chooses its own first one.
            self.bdf.tolerances.initial_step = if h > 0.0 { Some(h) } else { self.initial_step };
            self.bdf.restart();
            self.bdf_base = self.bdf_counts();
            self.stiff = true;
            self.switches_to_bdf += 1;
        }
    }
}

impl Integrator for Auto {
    fn name(&self) -> &'static str {
        "auto"
    }
    fn order(&self) -> usize {
        if self.stiff { self.bdf.order() } else { 5 }
    }
    fn fixed_step(&self) -> bool {
        false
    }
    fn configure(&mut self, control: &StepControl) {
        self.dp5.configure(control);
        self.bdf.configure(control);
        self.initial_step = control.initial_step;
    }
    fn rejected_steps(&self) -> u64 {
        self.dp5.rejected_steps() + self.bdf.rejected_steps()
    }
    fn crossed_switch(&mut self) {
        if self.stiff {
            self.bdf.crossed_switch();
        }
    }
    fn restart(&mut self) {
        // A discontinuity does not change the problem's stiffness: keep the method.
        if self.stiff {
            self.bdf.restart();
            // The BDF starts again at order 1 with a short step: what it costs from here is
            // judged once it has grown its step again, not on its start-up.
            self.bdf_base = self.bdf_counts();
        } else {
            self.dp5.restart();
        }
    }
    fn attempt<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<f64, SolverError> {
        if self.switch_pending {
            self.switch();
        }
        if self.stiff {
            let r = self.bdf.attempt(sys, t, y, h, inc);
            // DP5's step served only to start the BDF.
            self.bdf.tolerances.initial_step = self.initial_step;
            r
        } else {
            self.dp5.attempt(sys, t, y, h, inc)
        }
    }
    fn dense<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        if self.stiff {
            self.bdf.dense(sys, t, y, h, inc)
        } else {
            self.dp5.dense(sys, t, y, h, inc)
        }
    }
    fn commit<S: OdeSystem>(&mut self, sys: &mut S, t_new: f64, y_new: &[f64]) {
        if self.stiff {
            self.bdf.commit(sys, t_new, y_new);
            self.watch_bdf();
        } else {
            self.dp5.commit(sys, t_new, y_new);
            self.watch_dp5();
        }
    }
    fn validate_state(&self, n: usize) -> Result<(), String> {
        if self.n != n {
            return Err(format!("auto for {} states, the model has {n}", self.n));
        }
        self.dp5.validate_state(n)?;
        self.bdf.validate_state(n)?;
        if self
            .initial_step
            .is_some_and(|h| !(h.is_finite() && h > 0.0))
        {
            return Err(format!("auto initial step {:?}", self.initial_step));
        }
        let now = self.bdf_counts();
        if self.bdf_base.iter().zip(now).any(|(b, n)| *b > n)
            || self.switches_to_bdf >= super::MAX_RESTORED_COUNT
            || self.switches_to_dp5 >= super::MAX_RESTORED_COUNT
            || !(MIN_BDF_STEPS..=MIN_BDF_STEPS << MAX_BACKOFF).contains(&self.bdf_needed)
            || !self.stiffness.is_valid()
            || !self.fought.is_valid(self.dp5.rejected_steps())
            || !(self.h_dp5.is_finite() && self.h_dp5 >= 0.0)
        {
            return Err("auto counters out of range".into());
        }
        Ok(())
    }
}
