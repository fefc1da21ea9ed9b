//! Piston: a rigid body of mass m sliding in a bore of area A between a node `behind` (whose
//! volume grows by A·x) and a node `ahead` (whose volume shrinks by A·x). BlasterSim's
//! projectile/plunger equation of motion (BlasterSim verification §3.1.4, eq. 3.3, extended):
//!   m·dv/dt = A·(p_behind − p_ahead) − k·(x − x_spring) − c·v + F_friction,   dx/dt = v
//! Friction is given as pressures on the area (BlasterSim's convention): while moving,
//! F_friction = −sign(v)·A·p_f,dynamic; at rest the piston stays put unless the driving force
//! exceeds A·p_f,static (A·p_f,dynamic where that is larger, or the only one given). With
//! friction the stuck mode (v 0, or off it by round-off) is held by the law, so is the sliding
//! direction through a step (sign(v) above is then the direction's, not the stage's v), and its
//! breakaway and sticking are events (docs/integrators.md, "Static friction").
//!
//! A piston rod (optional `rod_area` A_r, through the node ahead to `rod_vent`, a double-acting
//! cylinder's): the node ahead acts on the annulus A − A_r and shrinks by (A − A_r)·x, the
//! rod's end on A_r at the vent's pressure, so the pressure force is
//! p_behind·A − p_ahead·(A − A_r) − p_vent·A_r; the work p_vent·A_r·v it does on the vent
//! leaves the system (`energy_left`).
//!
//! End cushioning (optional, at either stop: `cushion_length`, `cushion_port_min`, …): near a
//! cushioned stop the gas it compresses leaves to its port through a needle only; the law and
//! its events are `crate::components::cushion`'s, which the piston calls with its position.
//!
//! End stops (optional `x_min`, `x_max`, `restitution` e in 0..1): reaching a stop is an event
//! (x − x_max or x_min − x crossing zero upward, located by the driver); there the velocity
//! becomes −e·v (Newton's impact law) and the kinetic energy lost, ½·m·v²·(1 − e²), is counted as
//! energy that left (`energy_left`), so `energy_total` stays closed. A rebound slower than
//! [`REST_SPEED_M_PER_S`] is taken as 0. A piston at rest on a stop (v = 0, x at or past it,
//! both to round-off: [`REST_SPEED_M_PER_S`], [`REST_DISTANCE_M`])
//! stays there while the net force pushes it into the stop: the stop's contact force cancels
//! the acceleration (it does no work, v = 0); once the net force points away, it leaves.

use serde::{Deserialize, Serialize};

use crate::ad::{Dual64, Scalar, c};
use crate::param::{Param, ParamValue};
use crate::units::{Damping, Pressure};
use crate::units::{Length, Mass, Stiffness, Velocity};

use crate::components::cushion::{self, Cushion};
use crate::components::element::{
    Boundary, Build, Element, Eval, EventAt, Handled, Output, Slots, Variable,
};
use crate::components::keys::{Component, Kind, Problem, is_zero};
use crate::components::orifice;
use crate::units::{Unit, from_si};

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
    /// Cross-section of a rod through the node ahead, m² (0: no rod). Not written back when 0.
    #[serde(skip_serializing_if = "is_zero")]
    rod_area: Number, area, Number(0.0), NonNegative;
    /// The node whose pressure acts on the rod's end (the atmosphere): needed with a rod.
    rod_vent: Node, dimensionless, None;
    /// End cushioning (`crate::components::cushion`): the cushion length, m, at each
    /// cushioned stop.
    cushion_length: Number, length, None, Positive;
    /// The port the gas behind exhausts to, through the needle alone within `cushion_length`
    /// of `x_min`.
    cushion_port_min: Node, dimensionless, None;
    /// The port the gas ahead exhausts to, cushioned near `x_max`.
    cushion_port_max: Node, dimensionless, None;
    /// The needle's area at the `x_min` end, m² (0: closed): a number, a table or an FMU
    /// input.
    cushion_needle_area_min: Param, area, None, NonNegative;
    /// The needle's area at the `x_max` end, m²: a number, a table or an FMU input.
    cushion_needle_area_max: Param, area, None, NonNegative;
    /// The main passage's area to a port (open outside the cushion, the check valve's inside),
    /// m².
    cushion_port_area: Number, area, None, Positive;
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
    if x.rod_area > 0.0 && x.rod_vent.is_none() {
        problem(
            "rod_vent",
            "a piston with a `rod_area` needs a `rod_vent`: the node whose pressure acts on the \
             rod's end"
                .to_string(),
        );
    }
    if x.rod_vent.is_some() && x.rod_area == 0.0 {
        problem(
            "rod_vent",
            "`rod_vent` is for a piston with a rod: give its `rod_area`".to_string(),
        );
    }
    if x.rod_area.is_finite() && x.area.is_finite() && x.rod_area >= x.area {
        problem(
            "rod_area",
            format!(
                "`rod_area` = {} m² must be below the bore's `area` = {} m²",
                x.rod_area, x.area
            ),
        );
    }
    if x.rod_area > 0.0 && x.x_exit.is_some() {
        problem(
            "x_exit",
            "a piston with a rod cannot leave its bore: give no `x_exit`".to_string(),
        );
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
    out.extend(cushion::problems(x));
    out
}

/// A rebound speed below this, m/s, ends the bouncing: the piston rests on the stop.
pub const REST_SPEED_M_PER_S: f64 = 1e-6;
/// A piston slower than [`REST_SPEED_M_PER_S`] this close to a stop, m, that the drive pushes
/// into it is held by its contact: an implicit method's Newton corrections move a resting
/// piston's x off the stop (4e-18 to 5e-17 m on a 5–7 mm stroke at rtol 1e-11, 2e-14 m in the
/// iterates of a failing step), which must not release the contact. 1 nm is far above those and
/// far below any real stroke.
pub const REST_DISTANCE_M: f64 = 1e-9;

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
    /// The rod's cross-section, m² (0: none), and the node at its end (`NO_ROD` without).
    pub rod_area_m2: f64,
    pub rod_vent: usize,
    /// Its cushioned ends, at `x_min` and at `x_max`.
    pub cushions: [Option<Cushion>; 2],
}

/// `rod_vent` of a piston without a rod (never read then).
pub const NO_ROD: usize = usize::MAX;

pub const POSITION: usize = 0;
pub const VELOCITY: usize = 1;
pub const STATES: usize = 2;

/// The forces on a piston at one instant, N.
#[derive(Clone, Copy, Debug)]
pub struct Forces<T = f64> {
    pub acceleration_m_per_s2: T,
    /// dx/dt: v, or 0 while the contact of a stop holds the piston (v is then round-off).
    pub velocity_m_per_s: T,
    /// Friction force (opposes motion); its power −F·v is dissipated.
    pub friction_n: T,
}

impl Piston {
    /// Whether x is at (or past) its `x_max` and its `x_min` stop, to within `band_m`.
    #[inline]
    fn at_stops(&self, x_m: f64, band_m: f64) -> (bool, bool) {
        (
            self.x_max.is_some_and(|m| x_m >= m.value - band_m),
            self.x_min.is_some_and(|m| x_m <= m.value + band_m),
        )
    }

    /// The pressures' force forward, N: p_behind·A − p_ahead·(A − A_r) − p_vent·A_r, written
    /// (p_behind − p_ahead)·A + (p_ahead − p_vent)·A_r so that a piston without a rod
    /// evaluates A·(p_behind − p_ahead) alone, as before rods existed.
    #[inline]
    pub fn pressure_force_n<T: Scalar>(&self, p_behind_pa: T, p_ahead_pa: T, p_vent_pa: T) -> T {
        let f = (p_behind_pa - p_ahead_pa) * self.area.value;
        if self.rod_area_m2 == 0.0 {
            f
        } else {
            f + (p_ahead_pa - p_vent_pa) * self.rod_area_m2
        }
    }

    /// The area over which the node ahead's volume changes, m²: the annulus A − A_r.
    #[inline]
    pub fn ahead_area_m2(&self) -> f64 {
        self.area.value - self.rod_area_m2
    }

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

    /// The forces with each parameter's value given by `param`, the pressures' force
    /// ([`Self::pressure_force_n`]) and the sliding direction its mode holds (`held`: +1
    /// forward, −1 backward, 0 none; [`Element::held_mode`]).
    #[inline]
    pub fn forces_with<T: Scalar>(
        &self,
        param: impl Fn(&ParamValue) -> T,
        x_m: T,
        v_m_per_s: T,
        pressure_force_n: T,
        held: i8,
    ) -> Forces<T> {
        let damping = param(&self.damping_n_s_per_m);
        let area_m2 = self.area.value;
        let drive = pressure_force_n + self.spring_force_n(x_m) - v_m_per_s * damping;
        let v_re = v_m_per_s.re();
        // Sliding in a held direction, dynamic friction opposes that direction whatever v's
        // sign within the step: the law stays smooth up to the stick event, which ends the
        // step where v crosses 0. The direction is held only while there is static friction
        // (only then is the stick an event).
        // Dynamic friction alone holds a piston at rest too (Coulomb's law with equal static
        // and dynamic friction, whose Filippov solution sticks while |drive| ≤ F_dyn): the
        // modes and their events serve it as they serve static friction.
        let has_static = param(&self.friction_static_pa).re() > 0.0
            || param(&self.friction_dynamic_pa).re() > 0.0;
        let way = if has_static && held != 0 {
            f64::from(held)
        } else if has_static && v_re.abs() < REST_SPEED_M_PER_S {
            // Stuck (or resting on a stop), held so: an implicit method's Newton iterate a hair
            // off v = 0 must not slide it.
            0.0
        } else if v_re > 0.0 {
            1.0
        } else if v_re < 0.0 {
            -1.0
        } else {
            0.0
        };
        let friction = if way > 0.0 {
            -(param(&self.friction_dynamic_pa) * area_m2)
        } else if way < 0.0 {
            param(&self.friction_dynamic_pa) * area_m2
        } else if has_static {
            // Stuck: friction balances the drive exactly. The mode is held whatever the drive:
            // its breakaway is an event that sets the piston sliding
            // ([`Piston::breakaway_velocity`]), so no step integrates across it.
            -drive
        } else {
            // Frictionless.
            T::zero()
        };
        let mut acceleration = (drive + friction) / self.mass.value;
        // Resting on a stop and pushed into it: the contact force holds the piston. Resting
        // means v below the rest speed, of either sign: an implicit method's Newton iterate
        // may leave v off 0 by round-off there, into the stop (whose event, its function then
        // 0, would not fire again to stop it) or away from it (the contact released for that
        // iterate only: v then settled off 0 and grew, and BDF at rtol 1e-11 failed), and at
        // the stop means to round-off too ([`REST_DISTANCE_M`]: a Newton correction moved a
        // resting piston 4e-18 m off its stop, the contact let go, the drive pushed it back,
        // and BDF at rtol 1e-11 failed on that discontinuity). Held, the piston is at rest:
        // dx/dt is 0, not v's round-off.
        let (x_re, a_re) = (x_m.re(), acceleration.re());
        let resting = v_re.abs() < REST_SPEED_M_PER_S;
        let (at_max, at_min) = self.at_stops(x_re, REST_DISTANCE_M);
        let on_max = resting && at_max && a_re > 0.0;
        let on_min = resting && at_min && a_re < 0.0;
        let mut velocity = v_m_per_s;
        if on_max || on_min {
            acceleration = T::zero();
            velocity = T::zero();
        }
        Forces {
            acceleration_m_per_s2: acceleration,
            velocity_m_per_s: velocity,
            friction_n: friction,
        }
    }
}

impl Build for PistonSpec {
    type Component = Piston;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> Piston {
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
            rod_area_m2: self.rod_area,
            rod_vent: self.rod_vent.as_deref().map_or(NO_ROD, node),
            cushions: cushion::of_spec(self, node),
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
    fn param(&self, key: &str) -> Option<&ParamValue> {
        match key {
            "friction_static" => Some(&*self.friction_static_pa),
            "friction_dynamic" => Some(&*self.friction_dynamic_pa),
            "damping" => Some(&*self.damping_n_s_per_m),
            _ => cushion::needle(&self.cushions, key),
        }
    }
    fn param_mut(&mut self, key: &str) -> Option<&mut ParamValue> {
        match key {
            "friction_static" => Some(&mut *self.friction_static_pa),
            "friction_dynamic" => Some(&mut *self.friction_dynamic_pa),
            "damping" => Some(&mut *self.damping_n_s_per_m),
            _ => cushion::needle_mut(&mut self.cushions, key),
        }
    }
    fn value_problem(&self, key: &str, value: f64) -> Option<String> {
        cushion::needle_value_problem(key, value, self.area.value)
    }
}

/// Its event functions, per piston: its exit, its `x_max` stop, its `x_min` stop; with static
/// friction its breakaway and its sticking while sliding forward or backward; then its
/// cushions' (`cushion::EVENTS`).
const EXIT: usize = 0;
const STOP_MAX: usize = 1;
const STOP_MIN: usize = 2;
const BREAKAWAY: usize = 3;
const STICK_FORWARD: usize = 4;
const STICK_BACKWARD: usize = 5;
/// Its cushions' events follow (`cushion::EVENTS` of them).
const CUSHION: usize = 6;

/// The velocity a piston with static friction is given when it breaks away, m/s, signed by the
/// direction it slides: its next mode is the sign of v where the integrator stands
/// ([`Element::held_mode`]; this speed exactly, unlike a stuck piston's round-off, ends the
/// stuck mode), so sliding is a velocity off 0 by the least normal number, which no force or
/// energy can see.
pub const BREAKAWAY_SPEED_M_PER_S: f64 = f64::MIN_POSITIVE;

impl Piston {
    /// Its static friction at the point, N, while it holds a stuck mode: dynamic friction's
    /// where only that is given (`None`: frictionless, or out of its bore; its law then has no
    /// stuck mode and no events of friction).
    fn static_friction_n(&self, at: &EventAt<'_>) -> Option<f64> {
        if at.flag {
            return None;
        }
        let stat = (at.pv)(&self.friction_static_pa).max((at.pv)(&self.friction_dynamic_pa))
            * self.area.value;
        (stat > 0.0).then_some(stat)
    }

    /// The force that breaks it free, N: the larger of static and dynamic friction (a dynamic
    /// friction above the static one would stop a piston set sliding at once, again and again
    /// at one instant: it breaks away only where it can slide).
    fn breakaway_force_n(&self, at: &EventAt<'_>, stat_n: f64) -> f64 {
        stat_n.max((at.pv)(&self.friction_dynamic_pa) * self.area.value)
    }

    /// The drive at rest, N (pressures, spring; damping is 0 at v = 0), and the direction it
    /// may move in: +1 or −1 by the drive's sign, only away from a stop it rests on.
    fn drive_at_rest(&self, at: &EventAt<'_>) -> (f64, f64) {
        let x = at.s[POSITION];
        let p = |n: usize| {
            if n == NO_ROD {
                0.0
            } else {
                (at.node)(n).pressure_pa
            }
        };
        let drive = self.pressure_force_n(p(self.behind), p(self.ahead), p(self.rod_vent))
            + self.spring_force_n(x);
        let on_max = self.x_max.is_some_and(|m| x >= m.value);
        let on_min = self.x_min.is_some_and(|m| x <= m.value);
        let way = if on_min || (!on_max && drive >= 0.0) {
            1.0
        } else {
            -1.0
        };
        (drive, way)
    }

    /// Breakaway's event function at rest: the drive in the way it may move less the force
    /// that breaks it free.
    fn breakaway_value(&self, at: &EventAt<'_>) -> Option<f64> {
        let stat = self.static_friction_n(at)?;
        if !self.stuck(at) {
            return None;
        }
        let (drive, way) = self.drive_at_rest(at);
        Some(way * drive - self.breakaway_force_n(at, stat))
    }

    /// Whether it is stuck: v is 0 (where an impact or its sticking left it), or the mode it
    /// holds says so (its v, which an implicit method's Newton iterations may leave off 0 by
    /// round-off while it is stuck, is no test of it).
    fn stuck(&self, at: &EventAt<'_>) -> bool {
        let v = at.s[VELOCITY];
        v == 0.0 || (at.mode == Some(0) && v.abs() < REST_SPEED_M_PER_S)
    }

    /// The velocity a stuck piston takes at the point (±[`BREAKAWAY_SPEED_M_PER_S`]) if the
    /// drive there breaks it free; `None` while it stays stuck.
    fn breakaway_velocity(&self, at: &EventAt<'_>) -> Option<f64> {
        let g = self.breakaway_value(at)?;
        (g >= 0.0).then(|| self.drive_at_rest(at).1 * BREAKAWAY_SPEED_M_PER_S)
    }
}

impl Piston {
    /// Its impact at its `x_max` (or `x_min`) stop, generic so that dual numbers give its
    /// Jacobian: from (x, v) and the mass m, the position after (the stop), the velocity after
    /// (−e·v on an approach, 0 below the rest speed) and the mechanical energy lost, which goes
    /// to the energy accumulator. `None`: no such stop.
    fn impact_map<T: Scalar>(&self, at_max: bool, x: T, v: T, m: T) -> Option<(T, T, T)> {
        let stop = if at_max { self.x_max } else { self.x_min }?.value;
        // Only an approach (v towards the stop) is an impact.
        let approaching = if at_max { v.re() > 0.0 } else { v.re() < 0.0 };
        let mut v_new = if approaching {
            v * -self.restitution
        } else {
            v
        };
        if v_new.re().abs() < REST_SPEED_M_PER_S {
            v_new = T::from(0.0);
        }
        let spring = |x: T| {
            let d = x - self.spring_x0.value;
            d * (0.5 * self.spring_stiffness.value) * d
        };
        let stop = T::from(stop);
        let before = m * 0.5 * v * v + spring(x);
        let after = m * 0.5 * v_new * v_new + spring(stop);
        Some((stop, v_new, before - after))
    }
}

/// A piston moves the volumes of the nodes behind and ahead of it; once it has passed its exit
/// (its flag), its bore is an open orifice between them (its flow slot). Its events: the exit,
/// the end stops (Newton's impact law, the energy lost to `energy_left`).
impl Element for Piston {
    const KIND: &'static Kind = &KIND;
    const STATES: usize = STATES;
    /// Its bore, once it has left it.
    const FLOWS: usize = 1;
    /// `exited`.
    const FLAGS: usize = 1;
    const EVENTS: usize = CUSHION + cushion::EVENTS;
    /// Through its bore once it has left it. Every piston counts, with an `x_exit` or without:
    /// a restored FMU state may hold any exit flags (they are checked for their count only).
    const MOVES_MASS: bool = true;
    const STORES_ENERGY: bool = true;
    const OUTPUTS: &'static [Output] = &[
        Output::State(POSITION),
        Output::State(VELOCITY),
        Output::Flag(Variable {
            suffix: "exited",
            unit: Unit::dimensionless,
            description: "1 once {} has passed its exit",
        }),
    ];
    const STATE_VARIABLES: &'static [Variable] = &[
        Variable {
            suffix: "x",
            unit: Unit::length,
            description: "position of {}",
        },
        Variable {
            suffix: "v",
            unit: Unit::velocity,
            description: "velocity of {}",
        },
    ];
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        let ports = self
            .cushions
            .each_ref()
            .map(|c| c.as_ref().map_or(NO_ROD, |c| c.port));
        [self.behind, self.ahead, self.rod_vent, ports[0], ports[1]]
            .into_iter()
            .filter(|&n| n != NO_ROD)
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        let flags = &e.flags[at.first_flag..];
        let modes = e.modes.get(at.first_mode..).unwrap_or(&[]);
        for (j, (p, out)) in items.iter().zip(at.flows.iter_mut()).enumerate() {
            let o = at.first_state + j * STATES;
            let (behind, ahead, area) = (p.behind, p.ahead, p.area.value);
            if flags[j] {
                // The projectile has left the bore: it keeps its velocity, and the bore becomes
                // an open orifice (C_d = 1) between the nodes it separated.
                let (nb, na) = (e.nodes[behind], e.nodes[ahead]);
                let mdot = orifice::signed_mass_flow_kg_per_s(e.gas, c(area), nb, na);
                e.transfer(behind, ahead, mdot, dy);
                *out = mdot;
                continue;
            }
            let x = e.y[o + POSITION];
            let pv = |q: &ParamValue| e.pv(q);
            let (pb, pa) = (e.nodes[behind].pressure_pa, e.nodes[ahead].pressure_pa);
            let p_vent = if p.rod_vent == NO_ROD {
                T::zero()
            } else {
                e.nodes[p.rod_vent].pressure_pa
            };
            let held = modes.get(j).copied().unwrap_or(0);
            let f = p.forces_with(
                pv,
                x,
                e.y[o + VELOCITY],
                p.pressure_force_n(pb, pa, p_vent),
                held,
            );
            // The piston's own motion (0 while a stop holds it): the volumes' and the powers'.
            let v = f.velocity_m_per_s;
            let damping_power = v * e.pv(&p.damping_n_s_per_m) * v;
            dy[o + POSITION] = v;
            dy[o + VELOCITY] = f.acceleration_m_per_s2;
            e.boundary_work(behind, v * area, dy);
            e.boundary_work(ahead, -(v * p.ahead_area_m2()), dy);
            // Friction and damping turn kinetic energy into heat that leaves the gas; the rod
            // pushes the vent's gas away.
            let rod_power = if p.rod_vent == NO_ROD {
                T::zero()
            } else {
                p_vent * p.rod_area_m2 * v
            };
            e.dissipate(-f.friction_n * v + damping_power + rod_power, dy);
            for cushion in p.cushions.iter().flatten() {
                cushion.terms(e, x, dy);
            }
            *out = T::zero();
        }
    }

    fn initial_state(&self, out: &mut [f64]) {
        out[POSITION] = self.x0.value;
        out[VELOCITY] = self.v0.value;
    }

    /// Its largest coordinate (its start, exit and stops), else (a free piston starting at 0)
    /// the longer of its chambers' initial gas columns V₀/A, the length over which it changes
    /// their volumes by their own size; and 1 m/s.
    fn nominals(&self, out: &mut [f64], volume0: &dyn Fn(usize) -> Option<f64>) {
        let coordinate = [Some(self.x0), self.x_exit, self.x_min, self.x_max]
            .into_iter()
            .flatten()
            .fold(0.0_f64, |a, x| a.max(x.value.abs()));
        out[POSITION] = if coordinate > 0.0 {
            coordinate
        } else {
            [
                (self.behind, self.area.value),
                (self.ahead, self.ahead_area_m2()),
            ]
            .into_iter()
            .filter(|&(_, a)| a > 0.0)
            .filter_map(|(node, a)| volume0(node).map(|v| v / a))
            .fold(0.0_f64, f64::max)
        };
    }

    /// Behind: volume grows by area·x; ahead: shrinks by the annulus (area less the rod's).
    fn boundaries(&self, first: usize, push: &mut dyn FnMut(Boundary)) {
        let state = first + POSITION;
        let (area, annulus) = (self.area.value, self.ahead_area_m2());
        for (chamber, factor, area_m2) in
            [(self.behind, area, area), (self.ahead, -annulus, annulus)]
        {
            push(Boundary {
                chamber,
                state,
                factor,
                area_m2,
            });
        }
    }

    /// Kinetic and spring energy.
    #[inline]
    fn stored_energy_j<T: Scalar>(&self, s: impl Fn(usize) -> T, mass_kg: Option<T>) -> T {
        let (x, v) = (s(POSITION), s(VELOCITY));
        let m = mass_kg.unwrap_or_else(|| c(self.mass.value));
        m * 0.5 * v * v + self.spring_energy_j(x)
    }

    fn stored_energy_states(&self) -> impl Iterator<Item = usize> {
        let spring = self.spring_stiffness.value != 0.0;
        spring.then_some(POSITION).into_iter().chain([VELOCITY])
    }

    /// Exit: x − x_exit while it has an exit not yet passed; stops: x − x_max and x_min − x
    /// while it is in its bore.
    #[inline]
    fn event_value(&self, e: usize, s: &[f64], exited: bool) -> Option<f64> {
        if exited {
            return None;
        }
        let x = s[POSITION];
        match e {
            EXIT => self.x_exit.map(|xe| x - xe.value),
            STOP_MAX => self.x_max.map(|xm| x - xm.value),
            _ => {
                debug_assert_eq!(e, STOP_MIN);
                self.x_min.map(|xm| xm.value - x)
            }
        }
    }

    #[inline]
    fn event_gradient(&self, e: usize, w: &[f64]) -> f64 {
        match e {
            EXIT | STOP_MAX => w[POSITION],
            STICK_FORWARD => -w[VELOCITY],
            STICK_BACKWARD => w[VELOCITY],
            _ if e >= CUSHION => cushion::event_gradient(e - CUSHION, w[POSITION]),
            _ => -w[POSITION],
        }
    }

    /// Static friction's switches: breakaway while stuck (v = 0), sticking while sliding (v
    /// crossing 0 in the way it slid), only while it has static friction.
    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        match e {
            BREAKAWAY => self.breakaway_value(at),
            // Only while sliding that way (or before a mode is held): a stuck piston's v off 0
            // by round-off is no sticking.
            STICK_FORWARD => self
                .static_friction_n(at)
                .filter(|_| at.mode.is_none_or(|m| m > 0))
                .map(|_| -at.s[VELOCITY]),
            STICK_BACKWARD => self
                .static_friction_n(at)
                .filter(|_| at.mode.is_none_or(|m| m < 0))
                .map(|_| at.s[VELOCITY]),
            _ if e >= CUSHION => (!at.flag)
                .then(|| cushion::event_value(&self.cushions, e - CUSHION, at.s[POSITION], at))
                .flatten(),
            _ => self.event_value(e, at.s, at.flag),
        }
    }

    /// Breakaway's drive: ∂(way·drive)/∂x = −way·k, ∂/∂v = −way·c (the damping's).
    fn event_gradient_at(&self, e: usize, at: &EventAt<'_>, w: &[f64]) -> f64 {
        if e != BREAKAWAY {
            return self.event_gradient(e, w);
        }
        let way = self.drive_at_rest(at).1;
        let c = (at.pv)(&self.damping_n_s_per_m);
        -way * (self.spring_stiffness.value * w[POSITION] + c * w[VELOCITY])
    }

    fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        if e >= CUSHION {
            return cushion::event_pressure_gradient(&self.cushions, e - CUSHION, at, push);
        }
        if e == BREAKAWAY && self.static_friction_n(at).is_some() {
            let way = self.drive_at_rest(at).1;
            // ∂(pressure force)/∂p: A behind, −(A − A_r) ahead, −A_r at the rod's vent.
            push(self.behind, way * self.area.value);
            push(self.ahead, -way * self.ahead_area_m2());
            if self.rod_vent != NO_ROD {
                push(self.rod_vent, -way * self.rod_area_m2);
            }
        }
    }

    /// Static friction's switches leave the state continuous (v to 0 where it sticks, off 0 by
    /// the least normal number where it breaks away); the others are impacts and the exit.
    fn event_is_switch(&self, e: usize) -> bool {
        e >= BREAKAWAY
    }

    fn event_only_restarts(&self, e: usize) -> bool {
        e >= CUSHION && cushion::event_only_restarts(e - CUSHION)
    }

    fn event_both_ways(&self, e: usize) -> bool {
        e >= CUSHION && cushion::event_both_ways(e - CUSHION)
    }

    /// An exit or a stop it lacks, a cushion at an end without one: by its structure only
    /// (friction's switches stay, since a parameter may give it friction).
    fn event_never_fires(&self, e: usize) -> bool {
        match e {
            EXIT => self.x_exit.is_none(),
            STOP_MAX => self.x_max.is_none(),
            STOP_MIN => self.x_min.is_none(),
            _ => e >= CUSHION && cushion::never_fires(&self.cushions, e - CUSHION),
        }
    }

    /// Breakaway: sliding in the way the drive pushes. Sticking: v = 0 exactly (it crossed 0
    /// to within the event location's round-off; that kinetic energy goes to `energy_left`),
    /// then sliding on at once where the drive breaks it free again (turning round).
    fn handle_event_at(
        &self,
        e: usize,
        at: &EventAt<'_>,
        s: &mut [f64],
        flag: &mut bool,
        energy_left: &mut f64,
    ) -> Handled {
        if e >= CUSHION {
            // A switch of the law alone: nothing jumps.
            return Handled::default();
        }
        if e < BREAKAWAY {
            return self.handle_event(e, s, flag, energy_left);
        }
        let v = s[VELOCITY];
        *energy_left += 0.5 * self.mass.value * v * v;
        s[VELOCITY] = 0.0;
        let rest = [s[POSITION], 0.0];
        let at_rest = EventAt {
            s: &rest,
            mode: Some(0),
            ..*at
        };
        let breaks = if e == BREAKAWAY {
            // Fired: it breaks free even where round-off left g a hair below 0.
            Some(self.drive_at_rest(&at_rest).1 * BREAKAWAY_SPEED_M_PER_S)
        } else {
            self.breakaway_velocity(&at_rest)
        };
        if let Some(v_new) = breaks {
            s[VELOCITY] = v_new;
        }
        Handled {
            exit: false,
            state_changed: s[VELOCITY].to_bits() != v.to_bits(),
        }
    }

    /// With static friction, the direction it slides in (v's sign where the integrator
    /// stands; 0 stuck, which a held stuck mode stays below the rest speed until its breakaway
    /// sets v to ±[`BREAKAWAY_SPEED_M_PER_S`]): held by its law until the next event (a stick, a
    /// turn-round or an impact), so that a step whose v crosses 0 integrates no reversal of the
    /// friction.
    /// Not while it rests on a stop (slower than [`REST_SPEED_M_PER_S`] there): the stop's
    /// contact holds it then ([`Piston::forces_with`]), and an implicit method's round-off
    /// in v there is no direction.
    fn held_mode(&self, at: &EventAt<'_>) -> i8 {
        if self.static_friction_n(at).is_none() {
            return 0;
        }
        let (x, v) = (at.s[POSITION], at.s[VELOCITY]);
        // On the stop exactly, not to the contact's REST_DISTANCE_M (with it here, the gallery's
        // double_acting under `dopri5` sat 0.3 nm from its stop, drifting at 5e-7 m/s, and
        // never made its in-stroke).
        let (at_max, at_min) = self.at_stops(x, 0.0);
        let on_stop = at_max || at_min;
        let broke_away = v.abs() == BREAKAWAY_SPEED_M_PER_S;
        if on_stop && v.abs() < REST_SPEED_M_PER_S && !broke_away {
            return 0;
        }
        // Stuck, it stays stuck until its breakaway moves it (to the breakaway's speed exactly):
        // a v off 0 by an implicit method's round-off is no direction (taken as one, the piston
        // slid off with the drive below its static friction).
        if at.mode == Some(0) && v.abs() < REST_SPEED_M_PER_S && !broke_away {
            return 0;
        }
        i8::from(v > 0.0) - i8::from(v < 0.0)
    }

    /// A stuck piston whose drive already breaks it free (at the start, or after an impact
    /// left it at rest so pushed) slides.
    fn settle(&self, at: &EventAt<'_>, s: &mut [f64]) -> bool {
        match self.breakaway_velocity(at) {
            Some(v) => {
                s[VELOCITY] = v;
                true
            }
            None => false,
        }
    }

    /// The exit: from now on the bore is an open orifice. A stop: Newton's impact law
    /// v → −e·v, a rebound slower than `REST_SPEED_M_PER_S` becomes rest, and the piston is put
    /// exactly on the stop (it is there to within the event location's round-off). The
    /// mechanical energy lost, ½m(v² − v'²) plus the spring energy of that round-off shift, goes
    /// to `energy_left`, so `energy_total` stays closed.
    fn handle_event(
        &self,
        e: usize,
        s: &mut [f64],
        exited: &mut bool,
        energy_left: &mut f64,
    ) -> Handled {
        if e == EXIT {
            *exited = true;
            return Handled {
                exit: true,
                state_changed: false,
            };
        }
        let (x, v) = (s[POSITION], s[VELOCITY]);
        let Some((x_new, v_new, lost)) = self.impact_map(e == STOP_MAX, x, v, self.mass.value)
        else {
            return Handled::default();
        };
        s[POSITION] = x_new;
        s[VELOCITY] = v_new;
        *energy_left += lost;
        Handled {
            exit: false,
            state_changed: true,
        }
    }

    /// One dual-number evaluation of the impact map; only the piston's own mass enters it as a
    /// parameter (energy lost ½m(v² − v⁺²)).
    fn event_jump_tangent(
        &self,
        e: usize,
        s_before: &[f64],
        w: &mut [f64],
        w_energy_left: &mut f64,
        dm: f64,
    ) {
        if e == EXIT || e >= BREAKAWAY {
            return;
        }
        let Some((x, v, lost)) = self.impact_map(
            e == STOP_MAX,
            Dual64::new(s_before[POSITION], w[POSITION]),
            Dual64::new(s_before[VELOCITY], w[VELOCITY]),
            Dual64::new(self.mass.value, dm),
        ) else {
            return;
        };
        w[POSITION] = x.eps;
        w[VELOCITY] = v.eps;
        *w_energy_left += lost.eps;
    }

    fn event_description(&self, e: usize) -> String {
        match e {
            EXIT => format!("piston `{}` exit", self.name),
            STOP_MAX => format!("piston `{}` at its stop x_max", self.name),
            STOP_MIN => format!("piston `{}` at its stop x_min", self.name),
            BREAKAWAY => format!("piston `{}` breaks away from static friction", self.name),
            STICK_FORWARD => format!("piston `{}` sticks, sliding forward", self.name),
            _ if e >= CUSHION => cushion::event_description(&self.name, e - CUSHION),
            _ => format!("piston `{}` sticks, sliding backward", self.name),
        }
    }
}
