//! Piston: a rigid body of mass m sliding in a bore of area A between a node `behind` (whose
//! volume grows by A·x) and a node `ahead` (whose volume shrinks by A·x). BlasterSim's
//! projectile/plunger equation of motion (BlasterSim verification §3.1.4, eq. 3.3, extended):
//!   m·dv/dt = A·(p_behind − p_ahead) − k·(x − x_spring) − c·v + F_friction,   dx/dt = v
//! Friction is given as pressures on the area (BlasterSim's convention): while moving,
//! F_friction = −sign(v)·A·p_f,dynamic; at rest the piston stays put unless the driving force
//! exceeds A·p_f,static, and then breaks free against the static value.
//!
//! End stops (optional `x_min`, `x_max`, `restitution` e in 0..1): reaching a stop is an event
//! (x − x_max or x_min − x crossing zero upward, located by the driver); there the velocity
//! becomes −e·v (Newton's impact law) and the kinetic energy lost, ½·m·v²·(1 − e²), is counted as
//! energy that left (`energy_left`), so `energy_total` stays closed. A rebound slower than
//! [`REST_SPEED_M_PER_S`] is taken as 0. A piston at rest on a stop (v = 0, x at or past it)
//! stays there while the net force pushes it into the stop: the stop's contact force cancels
//! the acceleration (it does no work, v = 0); once the net force points away, it leaves.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::param::{Param, ParamValue};
use crate::units::{Damping, Pressure};
use crate::units::{Length, Mass, Stiffness, Velocity};

use crate::components::keys::{Component, Kind, Problem, is_zero};
use crate::units::from_si;

crate::declare_kind! {
    /// `[[piston]]`: a rigid piston or projectile (state x, v).
    kind PistonSpec = "piston", Boundary, no_gas, check = piston_problems;
    name: Name;
    /// The node whose volume grows by area·x.
    behind: Node;
    /// The node whose volume shrinks by area·x.
    ahead: Node;
    /// Bore area, m².
    area: Number, area, Required, Positive;
    /// kg.
    mass: Number, mass, Required, Positive;
    /// Initial position, m.
    x0: Number, length, Required, Any;
    /// Initial velocity, m/s.
    v0: Number, velocity, Number(0.0), Any;
    /// Exit position, m: crossing it is an event.
    x_exit: Number, length, None, Any;
    /// Static friction, as a pressure on the area, Pa.
    friction_static: Param, pressure, Number(0.0), NonNegative;
    /// Dynamic friction, as a pressure on the area, Pa.
    friction_dynamic: Param, pressure, Number(0.0), NonNegative;
    /// N/m.
    spring_stiffness: Number, stiffness, Number(0.0), NonNegative;
    /// The position where the spring force is zero, m.
    spring_x0: Number, length, Number(0.0), Any;
    /// Linear damping, N·s/m.
    damping: Param, damping, Number(0.0), NonNegative;
    /// Lower end stop, m: reaching it is an impact (an event).
    x_min: Number, length, None, Any;
    /// Upper end stop, m.
    x_max: Number, length, None, Any;
    /// Coefficient of restitution at the stops (0: the piston stays at the stop). Not written
    /// back when 0, so that a piston without stops has no such FMU parameter.
    #[serde(skip_serializing_if = "is_zero")]
    restitution: Number, dimensionless, Number(0.0), Fraction;
}

/// The stops in order, and the start inside them and before the exit.
fn piston_problems(x: &PistonSpec) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut problem = |key, message| {
        out.push(Problem {
            key: Some(key),
            message,
        })
    };
    if let (Some(lo), Some(hi)) = (x.x_min, x.x_max)
        && lo.is_finite()
        && hi.is_finite()
        && lo >= hi
    {
        problem(
            "x_max",
            format!("`x_max` = {hi} m must be greater than `x_min` = {lo} m"),
        );
    }
    if x.x0.is_finite() {
        if let Some(lo) = x.x_min.filter(|v| v.is_finite() && x.x0 < *v) {
            problem(
                "x0",
                format!("`x0` = {} m is below the end stop `x_min` = {lo} m", x.x0),
            );
        }
        if let Some(hi) = x.x_max.filter(|v| v.is_finite() && x.x0 > *v) {
            problem(
                "x0",
                format!("`x0` = {} m is past the end stop `x_max` = {hi} m", x.x0),
            );
        }
    }
    if let Some(exit) = x.x_exit
        && exit.is_finite()
        && x.x0.is_finite()
        && x.x0 >= exit
    {
        problem(
            "x0",
            format!(
                "`x0` = {} m is at or past `x_exit` = {exit} m: the piston would start outside",
                x.x0
            ),
        );
    }
    out
}

/// A rebound speed below this, m/s, ends the bouncing: the piston rests on the stop.
pub const REST_SPEED_M_PER_S: f64 = 1e-6;

/// Constant parameters are units-typed quantities (`crate::units`), read in the right-hand side
/// as `.value` (SI); the `Param`s (time tables, seedable for sensitivities) are raw SI numbers
/// named by unit. Serialized as SI values either way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Piston {
    pub name: String,
    pub behind: usize,
    pub ahead: usize,
    pub area: crate::units::Area,
    pub mass: Mass,
    pub x0: Length,
    pub v0: Velocity,
    pub x_exit: Option<Length>,
    pub friction_static_pa: Param<Pressure>,
    pub friction_dynamic_pa: Param<Pressure>,
    pub spring_stiffness: Stiffness,
    pub spring_x0: Length,
    pub damping_n_s_per_m: Param<Damping>,
    /// End stops and the coefficient of restitution at them.
    pub x_min: Option<Length>,
    pub x_max: Option<Length>,
    pub restitution: f64,
}

pub const POSITION: usize = 0;
pub const VELOCITY: usize = 1;
pub const STATES: usize = 2;

/// The forces on a piston at one instant, N.
#[derive(Clone, Copy, Debug)]
pub struct Forces<T = f64> {
    pub acceleration_m_per_s2: T,
    /// Friction force (opposes motion); its power −F·v is dissipated.
    pub friction_n: T,
}

impl Piston {
    #[inline]
    pub fn spring_force_n<T: Scalar>(&self, x_m: T) -> T {
        (x_m - self.spring_x0.value) * -self.spring_stiffness.value
    }

    #[inline]
    pub fn spring_energy_j<T: Scalar>(&self, x_m: T) -> T {
        let d = x_m - self.spring_x0.value;
        d * (0.5 * self.spring_stiffness.value) * d
    }

    pub fn params(&self) -> [&ParamValue; 3] {
        [
            &self.friction_static_pa,
            &self.friction_dynamic_pa,
            &self.damping_n_s_per_m,
        ]
    }

    /// Forces at time `t` on the segment that began at `seg`.
    #[inline]
    pub fn forces<T: Scalar>(
        &self,
        t: f64,
        seg: f64,
        x_m: T,
        v_m_per_s: T,
        p_behind_pa: T,
        p_ahead_pa: T,
    ) -> Forces<T> {
        self.forces_with(
            |p: &ParamValue| c(p.value(t, seg)),
            x_m,
            v_m_per_s,
            p_behind_pa,
            p_ahead_pa,
        )
    }

    /// [`Self::forces`] with each parameter's value given by `param`.
    #[inline]
    pub fn forces_with<T: Scalar>(
        &self,
        param: impl Fn(&ParamValue) -> T,
        x_m: T,
        v_m_per_s: T,
        p_behind_pa: T,
        p_ahead_pa: T,
    ) -> Forces<T> {
        let damping = param(&self.damping_n_s_per_m);
        let area_m2 = self.area.value;
        let drive =
            (p_behind_pa - p_ahead_pa) * area_m2 + self.spring_force_n(x_m) - v_m_per_s * damping;
        let v_re = v_m_per_s.re();
        let friction = if v_re > 0.0 {
            -(param(&self.friction_dynamic_pa) * area_m2)
        } else if v_re < 0.0 {
            param(&self.friction_dynamic_pa) * area_m2
        } else {
            let stat = param(&self.friction_static_pa) * area_m2;
            if drive.re().abs() <= stat.re() {
                -drive // stuck: static friction balances the drive exactly
            } else {
                stat * -drive.re().signum()
            }
        };
        let mut acceleration = (drive + friction) / self.mass.value;
        if v_re == 0.0 {
            // Resting on a stop and pushed into it: the contact force holds the piston.
            let (x_re, a_re) = (x_m.re(), acceleration.re());
            let on_max = self.x_max.is_some_and(|x| x_re >= x.value) && a_re > 0.0;
            let on_min = self.x_min.is_some_and(|x| x_re <= x.value) && a_re < 0.0;
            if on_max || on_min {
                acceleration = T::zero();
            }
        }
        Forces {
            acceleration_m_per_s2: acceleration,
            friction_n: friction,
        }
    }
}

impl PistonSpec {
    /// The piston of a validated spec (`node`: a node's index by name).
    pub fn build(&self, node: &dyn Fn(&str) -> usize) -> Piston {
        Piston {
            name: self.name.clone(),
            behind: node(&self.behind),
            ahead: node(&self.ahead),
            area: from_si(self.area),
            mass: from_si(self.mass),
            x0: from_si(self.x0),
            v0: from_si(self.v0),
            x_exit: self.x_exit.map(from_si),
            friction_static_pa: self.friction_static.to_param(),
            friction_dynamic_pa: self.friction_dynamic.to_param(),
            spring_stiffness: from_si(self.spring_stiffness),
            spring_x0: from_si(self.spring_x0),
            damping_n_s_per_m: self.damping.to_param(),
            x_min: self.x_min.map(from_si),
            x_max: self.x_max.map(from_si),
            restitution: self.restitution,
        }
    }
}

impl Component for Piston {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!(
        "friction_static" => friction_static_pa,
        "friction_dynamic" => friction_dynamic_pa,
        "damping" => damping_n_s_per_m,
    );
}
