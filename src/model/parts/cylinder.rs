//! `[[cylinder]]`: a single-acting pneumatic cylinder, its cap-side chamber and its piston.
//!
//! Expanded into a chamber `<name>_cap` (the cap port that valves connect to: its dead volume
//! plus A·x, A = π·bore²/4) and a piston `<name>` (so its states read `<name>.x`, `<name>.v`)
//! whose `behind` is the cap chamber and whose `ahead` is the node the rod side is open to
//! (`vent`, the atmosphere): end stops at x = 0 (retracted) and x = `stroke`, friction,
//! spring and damping passed through. The rod side open to `vent` pushes on the whole bore
//! area (the annulus and the rod's cross-section alike see the vent's pressure), so one piston
//! area states the force balance exactly: (p_cap − p_vent)·A + spring − friction.
//!
//! A double-acting cylinder's rod side (its own chamber acting on the annulus A − A_rod while
//! the rod sees ambient pressure) needs a piston with a second area, which the piston kind has
//! not: it is not a part yet.

use super::Part;
use crate::components::chamber::ChamberSpec;
use crate::components::keys::Problem;
use crate::components::piston::PistonSpec;
use crate::model::spec::{ModelFile, ParamSpec};

crate::declare_kind! {
    /// `[[cylinder]]`: a single-acting cylinder (a chamber and a piston).
    kind CylinderSpec = "cylinder", Boundary, gas, check = cylinder_problems;
    name: Name;
    /// The node the rod side is open to (the atmosphere).
    vent: Node;
    /// Bore (piston diameter), m.
    bore: Number, length, Required, Positive;
    /// Stroke, m: the piston moves between 0 and it.
    stroke: Number, length, Required, Positive;
    /// The cap chamber's volume at x = 0 (ports, cushion), m³.
    dead_volume: Number, volume, Required, Positive;
    /// Moving mass (piston, rod and load), kg.
    mass: Number, mass, Required, Positive;
    /// Initial position, m (0 … stroke).
    x0: Number, length, Number(0.0), NonNegative;
    /// Initial pressure in the cap chamber, Pa (absolute).
    pressure: Number, pressure, Required, Absolute;
    /// Initial temperature in the cap chamber, K.
    temperature: Number, temperature, Required, Positive;
    /// Static friction, as a pressure on the bore area, Pa (the piston's).
    friction_static: Number, pressure, Number(0.0), NonNegative;
    /// Dynamic friction, as a pressure on the bore area, Pa (the piston's).
    friction_dynamic: Number, pressure, Number(0.0), NonNegative;
    /// Return spring, N/m.
    spring_stiffness: Number, stiffness, Number(0.0), NonNegative;
    /// Where the spring force is zero, m (below 0: a preloaded spring).
    spring_x0: Number, length, Number(0.0), Any;
    /// Linear damping, N·s/m.
    damping: Number, damping, Number(0.0), NonNegative;
    /// Coefficient of restitution at the end stops.
    restitution: Number, dimensionless, Number(0.0), Fraction;
}

fn cylinder_problems(x: &CylinderSpec) -> Vec<Problem> {
    let mut out = Vec::new();
    if x.x0.is_finite() && x.stroke.is_finite() && x.x0 > x.stroke {
        out.push(Problem {
            key: Some("x0"),
            message: format!("`x0` = {} m is beyond the `stroke` = {} m", x.x0, x.stroke),
        });
    }
    out
}

impl CylinderSpec {
    fn cap(&self) -> String {
        format!("{}_cap", self.name)
    }
}

impl Part for CylinderSpec {
    fn as_spec(&self) -> &dyn crate::components::keys::Spec {
        self
    }

    fn generated(&self) -> Vec<(&'static str, String)> {
        // The piston takes the cylinder's own name.
        vec![("chamber", self.cap()), ("piston", self.name.clone())]
    }

    fn nodes(&self) -> Vec<(&'static str, &str)> {
        vec![("vent", &self.vent)]
    }

    fn expand(&self, model: &mut ModelFile) {
        model.chamber.push(ChamberSpec {
            name: self.cap(),
            volume: self.dead_volume,
            pressure: self.pressure,
            temperature: self.temperature,
        });
        model.piston.push(PistonSpec {
            name: self.name.clone(),
            behind: self.cap(),
            ahead: self.vent.clone(),
            area: std::f64::consts::PI / 4.0 * self.bore * self.bore,
            mass: self.mass,
            x0: self.x0,
            v0: 0.0,
            x_exit: None,
            friction_static: ParamSpec::Const(self.friction_static),
            friction_dynamic: ParamSpec::Const(self.friction_dynamic),
            spring_stiffness: self.spring_stiffness,
            spring_x0: self.spring_x0,
            damping: ParamSpec::Const(self.damping),
            x_min: Some(0.0),
            x_max: Some(self.stroke),
            restitution: self.restitution,
        });
    }
}
