//! `[[cylinder]]`: a pneumatic cylinder, single- or double-acting: its chambers and its piston.
//!
//! Expanded into a chamber `<name>_cap` (the cap port that valves connect to: its dead volume
//! plus A·x, A = π·bore²/4) and a piston `<name>` (so its states read `<name>.x`, `<name>.v`)
//! with end stops at x = 0 (retracted) and x = `stroke`, friction, spring and damping passed
//! through. Single-acting (no `rod_diameter`), the rod side is open to `vent` (the
//! atmosphere), which pushes on the whole bore area: (p_cap − p_vent)·A + spring − friction.
//! Double-acting (`rod_diameter` d_r), a second chamber `<name>_rod` is the rod port: its dead
//! volume plus the annulus (A − A_r)·(stroke − x), A_r = π·d_r²/4; the piston's rod passes
//! through it to `vent`, so the force is p_cap·A − p_rod·(A − A_r) − p_vent·A_r.
//!
//! End cushioning (`cushion_length` l_c; `crate::components::cushion`): each cushioned end's
//! port is then a chamber of its own (`<name>_cap`, `<name>_rod`: the passage behind the
//! cushion, `port_volume`), and the gas in the bore is `<name>_cap_bore` (`<name>_rod_bore`),
//! which the piston joins to the port through the passage (`port_diameter`) and the needle;
//! within l_c of an end the spear closes the passage: the needle alone lets gas out, a check
//! valve lets it in. Both ends of a double-acting cylinder are cushioned, the cap end of a
//! single-acting one.

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
    /// Rod diameter, m: a double-acting cylinder with a rod chamber `<name>_rod`.
    rod_diameter: Number, length, None, Positive;
    /// The rod chamber's volume at x = `stroke`, m³ (default: `dead_volume`).
    rod_dead_volume: Number, volume, None, Positive;
    /// Initial pressure in the rod chamber, Pa (absolute; default: `pressure`).
    rod_pressure: Number, pressure, None, Absolute;
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
    /// End cushioning: the cushion length at each end, m.
    cushion_length: Number, length, None, Positive;
    /// The cap end's cushion needle, its area, m² (0: closed): a number, a table or an FMU
    /// input (the piston's `cushion_needle_area_min`).
    cushion_needle_area: Param, area, None, NonNegative;
    /// The rod end's cushion needle, m² (default: `cushion_needle_area`; the piston's
    /// `cushion_needle_area_max`).
    rod_cushion_needle_area: Param, area, None, NonNegative;
    /// The diameter of a cushioned port's passage (open outside the cushion), m.
    port_diameter: Number, length, None, Positive;
    /// The volume of a cushioned port (the passage behind the cushion), m³.
    port_volume: Number, volume, None, Positive;
    /// The rod port's volume, m³ (default: `port_volume`).
    rod_port_volume: Number, volume, None, Positive;
}

fn cylinder_problems(x: &CylinderSpec) -> Vec<Problem> {
    let mut out = Vec::new();
    if let Some(d) = x.rod_diameter
        && d.is_finite()
        && x.bore.is_finite()
        && d >= x.bore
    {
        out.push(Problem {
            key: Some("rod_diameter"),
            message: format!(
                "`rod_diameter` = {d} m must be below the `bore` = {} m",
                x.bore
            ),
        });
    }
    if x.rod_diameter.is_none() && (x.rod_dead_volume.is_some() || x.rod_pressure.is_some()) {
        out.push(Problem {
            key: Some("rod_diameter"),
            message: "`rod_dead_volume` and `rod_pressure` are for a double-acting cylinder: \
                      give its `rod_diameter`"
                .to_string(),
        });
    }
    out.extend(cushion_problems(x));
    if x.x0.is_finite() && x.stroke.is_finite() && x.x0 > x.stroke {
        out.push(Problem {
            key: Some("x0"),
            message: format!("`x0` = {} m is beyond the `stroke` = {} m", x.x0, x.stroke),
        });
    }
    out
}

/// A cushion needs its length, needle, passage and port volume; the rod end's keys need a rod;
/// the zones fit in the stroke, the passage and the needles in the bore.
fn cushion_problems(x: &CylinderSpec) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut problem = |key, message: String| {
        out.push(Problem {
            key: Some(key),
            message,
        })
    };
    let keys = [
        ("cushion_needle_area", x.cushion_needle_area.is_some()),
        ("port_diameter", x.port_diameter.is_some()),
        ("port_volume", x.port_volume.is_some()),
    ];
    let Some(length) = x.cushion_length else {
        let given = keys.iter().copied().chain([
            (
                "rod_cushion_needle_area",
                x.rod_cushion_needle_area.is_some(),
            ),
            ("rod_port_volume", x.rod_port_volume.is_some()),
        ]);
        for (key, given) in given {
            if given {
                problem(
                    key,
                    format!("`{key}` is for a cushioned cylinder: give its `cushion_length`"),
                );
            }
        }
        return out;
    };
    for (key, given) in keys {
        if !given {
            problem(key, format!("a cushioned cylinder needs its `{key}`"));
        }
    }
    if x.rod_diameter.is_none() {
        for (key, given) in [
            (
                "rod_cushion_needle_area",
                x.rod_cushion_needle_area.is_some(),
            ),
            ("rod_port_volume", x.rod_port_volume.is_some()),
        ] {
            if given {
                problem(
                    key,
                    format!(
                        "`{key}` is for the rod end of a double-acting cylinder: give its \
                         `rod_diameter`"
                    ),
                );
            }
        }
    }
    let ends = if x.rod_diameter.is_some() { 2.0 } else { 1.0 };
    if length.is_finite() && x.stroke.is_finite() && ends * length > x.stroke {
        problem(
            "cushion_length",
            format!(
                "`cushion_length` = {length} m at {ends} end(s) does not fit in the `stroke` = \
                 {} m",
                x.stroke
            ),
        );
    }
    if let Some(d) = x.port_diameter
        && d.is_finite()
        && x.bore.is_finite()
        && d >= x.bore
    {
        problem(
            "port_diameter",
            format!(
                "`port_diameter` = {d} m must be below the `bore` = {} m",
                x.bore
            ),
        );
    }
    out.extend(crate::components::cushion::needle_problems(
        [
            ("cushion_needle_area", &x.cushion_needle_area),
            ("rod_cushion_needle_area", &x.rod_cushion_needle_area),
        ],
        x.bore_area_m2(),
    ));
    out
}

impl CylinderSpec {
    fn cushioned(&self) -> bool {
        self.cushion_length.is_some()
    }

    /// The chamber of the gas in the bore on one side: the port itself without a cushion.
    fn bore_chamber(&self, port: String) -> String {
        if self.cushioned() {
            format!("{port}_bore")
        } else {
            port
        }
    }

    fn cap(&self) -> String {
        format!("{}_cap", self.name)
    }

    fn rod(&self) -> String {
        format!("{}_rod", self.name)
    }

    fn bore_area_m2(&self) -> f64 {
        std::f64::consts::PI / 4.0 * self.bore * self.bore
    }
}

impl Part for CylinderSpec {
    fn as_spec(&self) -> &dyn crate::components::keys::Spec {
        self
    }

    fn generated(&self) -> Vec<(&'static str, String)> {
        // The piston takes the cylinder's own name.
        let mut out = vec![("chamber", self.cap())];
        if self.cushioned() {
            out.push(("chamber", self.bore_chamber(self.cap())));
        }
        if self.rod_diameter.is_some() {
            out.push(("chamber", self.rod()));
            if self.cushioned() {
                out.push(("chamber", self.bore_chamber(self.rod())));
            }
        }
        out.push(("piston", self.name.clone()));
        out
    }

    fn nodes(&self) -> Vec<(&'static str, &str)> {
        vec![("vent", &self.vent)]
    }

    fn expand(&self, model: &mut ModelFile) {
        let area = self.bore_area_m2();
        let port_volume = self.port_volume.unwrap_or(self.dead_volume);
        let mut push = |name: String, volume: f64, pressure: f64| {
            model.chamber.push(ChamberSpec {
                name,
                volume,
                pressure,
                temperature: self.temperature,
            })
        };
        // A chamber's `volume` is its volume at x = 0 (the piston adds its swept volume).
        if self.cushioned() {
            push(self.cap(), port_volume, self.pressure);
        }
        push(
            self.bore_chamber(self.cap()),
            self.dead_volume,
            self.pressure,
        );
        let rod_area = self
            .rod_diameter
            .map_or(0.0, |d| std::f64::consts::PI / 4.0 * d * d);
        if self.rod_diameter.is_some() {
            let rod_pressure = self.rod_pressure.unwrap_or(self.pressure);
            if self.cushioned() {
                push(
                    self.rod(),
                    self.rod_port_volume.unwrap_or(port_volume),
                    rod_pressure,
                );
            }
            push(
                self.bore_chamber(self.rod()),
                self.rod_dead_volume.unwrap_or(self.dead_volume) + (area - rod_area) * self.stroke,
                rod_pressure,
            );
        }
        let double = self.rod_diameter.is_some();
        let cushion_port_max = (self.cushioned() && double).then(|| self.rod());
        model.piston.push(PistonSpec {
            name: self.name.clone(),
            behind: self.bore_chamber(self.cap()),
            ahead: if double {
                self.bore_chamber(self.rod())
            } else {
                self.vent.clone()
            },
            area,
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
            rod_area,
            rod_vent: self.rod_diameter.map(|_| self.vent.clone()),
            cushion_length: self.cushion_length,
            cushion_port_min: self.cushioned().then(|| self.cap()),
            cushion_needle_area_max: cushion_port_max.as_ref().and(
                self.rod_cushion_needle_area
                    .clone()
                    .or_else(|| self.cushion_needle_area.clone()),
            ),
            cushion_port_max,
            cushion_needle_area_min: self
                .cushion_needle_area
                .clone()
                .filter(|_| self.cushioned()),
            cushion_port_area: self
                .port_diameter
                .filter(|_| self.cushioned())
                .map(|d| std::f64::consts::PI / 4.0 * d * d),
        });
    }
}
