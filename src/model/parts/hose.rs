//! `[[hose]]`: a hose or pipe with its volume, between two nodes.
//!
//! Expanded as a finite-volume line on a staggered grid (Patankar, *Numerical Heat Transfer and
//! Fluid Flow*, 1980, §6.3): the hose is cut into N segments of length L/N; each segment's gas
//! is a chamber at its centre (volume π·d²/4·L/N), and the flows are on the faces between
//! centres: N − 1 tubes of length L/N between neighbouring chambers and, at each end, a tube of
//! length L/(2N) from the end node to the first (last) centre. So the tubes' lengths add up to
//! L, the chambers' volumes to the hose's, both ends are treated alike, and one segment is a
//! chamber between two half-length tubes. A node at the end is the boundary value itself (a
//! reservoir's pressure acts at the hose's end face, not half a segment in).
//!
//! Generated names (a name may not contain `.`: it is the first part of output names):
//! chambers `<name>_1` … `<name>_N` (from `from` to `to`), tubes `<name>_t0` … `<name>_tN`
//! (`_t0` leaves `from`, `_tN` reaches `to`), heat exchanges `<name>_h1` … `<name>_hN`.

use super::Part;
use crate::components::ambient_heat::AmbientHeatSpec;
use crate::components::chamber::ChamberSpec;
use crate::components::keys::Problem;
use crate::components::tube::TubeSpec;
use crate::model::spec::{ModelFile, ParamSpec};

/// Most segments: far above what a transport delay needs, so that a mistyped count cannot
/// make a model of millions of states.
pub const MAX_SEGMENTS: f64 = 1000.0;

crate::declare_kind! {
    /// `[[hose]]`: a hose with its volume (chambers between tubes).
    kind HoseSpec = "hose", Link, gas, check = hose_problems;
    name: Name;
    from: Node;
    to: Node;
    /// Inner diameter, m.
    diameter: Number, length, Required, Positive;
    /// m.
    length: Number, length, Required, Positive;
    /// Wall roughness ε, m (the tube's default).
    roughness: Number, length, Number(0.0015e-3), NonNegative;
    /// Dynamic viscosity μ, Pa·s (the tube's default).
    viscosity: Number, viscosity, Number(1.82e-5), Positive;
    /// Number of segments N (a whole number, 1 … 1000).
    segments: Number, dimensionless, Number(1.0), Positive;
    /// Initial pressure of the gas in the hose, Pa (absolute).
    pressure: Number, pressure, Required, Absolute;
    /// Initial temperature of the gas in the hose, K.
    temperature: Number, temperature, Required, Positive;
    /// Heat transfer coefficient to the wall, W/(m²·K), on the inner surface π·d·L (absent:
    /// adiabatic, or isothermal with `[gas] isothermal`).
    heat_transfer_coefficient: Number, heat_transfer_coefficient, None, NonNegative;
    /// The wall's temperature, K (with `heat_transfer_coefficient`).
    ambient_temperature: Number, temperature, None, Positive;
}

fn hose_problems(x: &HoseSpec) -> Vec<Problem> {
    let mut out = Vec::new();
    let n = x.segments;
    if n.is_finite() && (n.fract() != 0.0 || !(1.0..=MAX_SEGMENTS).contains(&n)) {
        out.push(Problem {
            key: Some("segments"),
            message: format!("`segments` must be a whole number from 1 to {MAX_SEGMENTS}, got {n}"),
        });
    }
    match (x.heat_transfer_coefficient, x.ambient_temperature) {
        (Some(_), None) => out.push(Problem {
            key: Some("heat_transfer_coefficient"),
            message: "`heat_transfer_coefficient` needs `ambient_temperature` (the wall's)"
                .to_string(),
        }),
        (None, Some(_)) => out.push(Problem {
            key: Some("ambient_temperature"),
            message: "`ambient_temperature` needs `heat_transfer_coefficient`".to_string(),
        }),
        _ => {}
    }
    out
}

impl HoseSpec {
    /// N (valid once the checks hold).
    fn n(&self) -> usize {
        // The check bounds it to 1 … MAX_SEGMENTS, whole.
        self.segments.clamp(1.0, MAX_SEGMENTS) as usize
    }
    fn chamber(&self, k: usize) -> String {
        format!("{}_{k}", self.name)
    }
    fn tube(&self, k: usize) -> String {
        format!("{}_t{k}", self.name)
    }
    fn heat(&self, k: usize) -> String {
        format!("{}_h{k}", self.name)
    }
}

impl Part for HoseSpec {
    fn as_spec(&self) -> &dyn crate::components::keys::Spec {
        self
    }

    fn generated(&self) -> Vec<(&'static str, String)> {
        let n = self.n();
        let mut out: Vec<(&'static str, String)> =
            (1..=n).map(|k| ("chamber", self.chamber(k))).collect();
        out.extend((0..=n).map(|k| ("tube", self.tube(k))));
        if self.heat_transfer_coefficient.is_some() {
            out.extend((1..=n).map(|k| ("ambient_heat", self.heat(k))));
        }
        out
    }

    fn nodes(&self) -> Vec<(&'static str, &str)> {
        vec![("from", &self.from), ("to", &self.to)]
    }

    fn expand(&self, model: &mut ModelFile) {
        let n = self.n();
        let segment_m = self.length / n as f64;
        let area_m2 = std::f64::consts::PI / 4.0 * self.diameter * self.diameter;
        for k in 1..=n {
            model.chamber.push(ChamberSpec {
                name: self.chamber(k),
                volume: area_m2 * segment_m,
                pressure: self.pressure,
                temperature: self.temperature,
            });
        }
        for k in 0..=n {
            let (from, to) = (
                if k == 0 {
                    self.from.clone()
                } else {
                    self.chamber(k)
                },
                if k == n {
                    self.to.clone()
                } else {
                    self.chamber(k + 1)
                },
            );
            let length = if k == 0 || k == n {
                segment_m / 2.0
            } else {
                segment_m
            };
            model.tube.push(TubeSpec {
                name: self.tube(k),
                from,
                to,
                length: ParamSpec::Const(length),
                diameter: ParamSpec::Const(self.diameter),
                roughness: ParamSpec::Const(self.roughness),
                viscosity: ParamSpec::Const(self.viscosity),
            });
        }
        if let (Some(h), Some(t)) = (self.heat_transfer_coefficient, self.ambient_temperature) {
            let wall_m2 = std::f64::consts::PI * self.diameter * segment_m;
            for k in 1..=n {
                model.ambient_heat.push(AmbientHeatSpec {
                    name: self.heat(k),
                    chamber: self.chamber(k),
                    heat_transfer_coefficient: ParamSpec::Const(h),
                    area: ParamSpec::Const(wall_m2),
                    ambient_temperature: ParamSpec::Const(t),
                });
            }
        }
    }
}
