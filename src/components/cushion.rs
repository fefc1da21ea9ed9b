//! End cushioning of a piston (a pneumatic cylinder's end-position cushioning: Beater,
//! *Pneumatic Drives*, the chapter on cylinders; as Simscape's actuators with cushions). Near
//! a cushioned end the cushion spear enters its bore and closes the chamber's main exhaust
//! path to its port: within the cushion length l_c of the stop, the gas the piston compresses
//! leaves only through the adjustable needle (an orifice of area A_n), while a check valve in
//! the port's passage lets gas from the port in freely (the piston starting back). Outside the
//! zone the passage (area A_p) is open both ways, the needle in parallel:
//!   outside: ṁ(chamber → port) = ṁ(A_n) + ṁ(A_p)
//!   inside:  ṁ(chamber → port) = ṁ(A_n) − max(ṁ(A_p; port → chamber), 0)
//! each ṁ(A) the isentropic orifice's law with C_d = 1 ([`orifice::signed_mass_flow_kg_per_s`]),
//! so that inside the zone it is exactly an orifice of area A_n in parallel with a one-way
//! orifice of area A_p from the port (the verification test). The zone's edge, x = x_stop ± l_c,
//! is a switch of the law in both directions (two events, entering and leaving); so are the
//! kinks of its paths as an orifice's are: inside the zone the check valve's Δp through 0, and
//! the pressure ratio between chamber and port through r* and the laminar ratio (one set of
//! [`ratio_kinks`] for both paths, which join the same two nodes with the same r*).

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, max0};
use crate::components::element::{Eval, EventAt};
use crate::components::keys::Problem;
use crate::components::orifice::{self, Poppet};
use crate::components::piston::PistonSpec;
use crate::components::ratio_kinks;
use crate::param::{Param, ParamSpec, ParamValue};
use crate::units::Area;

/// The keys of the needles' areas, at the `x_min` end and at the `x_max` end: run-time
/// parameters (a number, a table or an FMU input).
pub const NEEDLE_KEYS: [&str; 2] = ["cushion_needle_area_min", "cushion_needle_area_max"];

/// Its events per end: entering and leaving the zone, the check valve's Δp = p_port −
/// p_chamber rising and falling through 0 (inside the zone), then the ratio kinks.
const ZONE: usize = 0;
const CHECK: usize = 2;
const RATIO: usize = 4;
const PER_END: usize = RATIO + ratio_kinks::EVENTS;

/// Its events per piston: the `x_min` end's, then the `x_max` end's.
pub const EVENTS: usize = 2 * PER_END;

/// Event `e`'s cushion and its index within the end's, if that end has a cushion.
#[inline]
fn locate(cushions: &[Option<Cushion>; 2], e: usize) -> Option<(&Cushion, usize)> {
    Some((cushions.get(e / PER_END)?.as_ref()?, e % PER_END))
}

/// Event `e` (< [`EVENTS`]) of a piston's cushions at position `x` (its own state) and the
/// node pressures of `at`: the depth into the zone entering, its negative leaving; `None`
/// where that end has no cushion, and the check's outside the zone.
#[inline]
pub fn event_value(
    cushions: &[Option<Cushion>; 2],
    e: usize,
    x_m: f64,
    at: &EventAt<'_>,
) -> Option<f64> {
    let (cu, k) = locate(cushions, e)?;
    match k {
        ZONE..CHECK => Some(Poppet::pair(k, cu.depth_m(x_m))),
        CHECK..RATIO => cu.inside(x_m).then(|| {
            let dp = (at.node)(cu.port).pressure_pa - (at.node)(cu.chamber).pressure_pa;
            Poppet::pair(k, dp)
        }),
        _ => Some(ratio_kinks::event_value(
            k - RATIO,
            at.gas.critical_pressure_ratio,
            cu.chamber,
            cu.port,
            at,
        )),
    }
}

/// ∂g_e/∂x·w_x of its own state: the depth grows with x at the `x_max` end, falls at the
/// `x_min` end; the pressures' events do not read x.
#[inline]
pub fn event_gradient(e: usize, w_x: f64) -> f64 {
    let k = e % PER_END;
    if k >= CHECK {
        return 0.0;
    }
    let at_max = e / PER_END == 1;
    if at_max {
        Poppet::pair(k, w_x)
    } else {
        -Poppet::pair(k, w_x)
    }
}

/// ∂g_e/∂p of the pressures' events as `(node, ∂g/∂p)`.
pub fn event_pressure_gradient(
    cushions: &[Option<Cushion>; 2],
    e: usize,
    at: &EventAt<'_>,
    push: &mut dyn FnMut(usize, f64),
) {
    let Some((cu, k)) = locate(cushions, e) else {
        return;
    };
    match k {
        ZONE..CHECK => {}
        CHECK..RATIO => {
            let sign = Poppet::pair(k, 1.0);
            push(cu.port, sign);
            push(cu.chamber, -sign);
        }
        _ => ratio_kinks::event_pressure_gradient(
            k - RATIO,
            at.gas.critical_pressure_ratio,
            cu.chamber,
            cu.port,
            at,
            push,
        ),
    }
}

/// Whether event `e` belongs to an end without a cushion (it never fires).
#[inline]
pub fn never_fires(cushions: &[Option<Cushion>; 2], e: usize) -> bool {
    locate(cushions, e).is_none()
}

/// The laminar points of the cushion's paths are located both ways (as an orifice's).
#[inline]
pub fn event_both_ways(e: usize) -> bool {
    let k = e % PER_END;
    k >= RATIO && ratio_kinks::is_both_ways(k - RATIO)
}

/// The ratio kinks change no state and no mode: the driver only restarts there.
#[inline]
pub fn event_only_restarts(e: usize) -> bool {
    e % PER_END >= RATIO
}

pub fn event_description(piston: &str, e: usize) -> String {
    let end = if e / PER_END == 0 { "x_min" } else { "x_max" };
    let k = e % PER_END;
    let what = match k {
        ZONE..CHECK => {
            let way = if k % 2 == 0 { "enters" } else { "leaves" };
            return format!("piston `{piston}` {way} its cushion at {end}");
        }
        CHECK..RATIO => {
            let way = if k % 2 == 0 { "opens" } else { "closes" };
            format!("check valve {way}")
        }
        _ => ratio_kinks::describe(k - RATIO),
    };
    format!("piston `{piston}`'s cushion at {end}: {what}")
}

/// Its cushions from a piston's keys, ports as node indices (validated: [`problems`]).
pub fn of_spec(x: &PistonSpec, node: &dyn Fn(&str) -> usize) -> [Option<Cushion>; 2] {
    let end =
        |port: &Option<String>, stop: Option<f64>, needle: &Option<ParamSpec>, at_max: bool| {
            let (port, stop, length) = (port.as_deref()?, stop?, x.cushion_length?);
            Some(Cushion {
                chamber: node(if at_max { &x.ahead } else { &x.behind }),
                port: node(port),
                edge_m: if at_max { stop - length } else { stop + length },
                at_max,
                needle_area_m2: needle
                    .as_ref()
                    .map_or_else(|| Param::from(0.0), ParamSpec::to_param),
                port_area_m2: x.cushion_port_area.unwrap_or(0.0),
            })
        };
    [
        end(
            &x.cushion_port_min,
            x.x_min,
            &x.cushion_needle_area_min,
            false,
        ),
        end(
            &x.cushion_port_max,
            x.x_max,
            &x.cushion_needle_area_max,
            true,
        ),
    ]
}

/// The needle of key `key` ([`NEEDLE_KEYS`]) as a run-time parameter, if that end has a
/// cushion.
pub fn needle<'a>(cushions: &'a [Option<Cushion>; 2], key: &str) -> Option<&'a ParamValue> {
    let end = NEEDLE_KEYS.iter().position(|k| *k == key)?;
    cushions[end].as_ref().map(|c| &*c.needle_area_m2)
}

/// [`needle`], to change it.
pub fn needle_mut<'a>(
    cushions: &'a mut [Option<Cushion>; 2],
    key: &str,
) -> Option<&'a mut ParamValue> {
    let end = NEEDLE_KEYS.iter().position(|k| *k == key)?;
    cushions[end].as_mut().map(|c| &mut *c.needle_area_m2)
}

/// What is wrong with a needle's area `value` (key `key`, m²) for a bore of area
/// `bore_area_m2`: the needle is a hole in the piston's end, narrower than its bore.
pub fn needle_value_problem(key: &str, value: f64, bore_area_m2: f64) -> Option<String> {
    (NEEDLE_KEYS.contains(&key) && value > bore_area_m2).then(|| {
        format!(
            "must be at most the bore's area {bore_area_m2:e} m^2 (a needle narrower than the \
             bore), got {value:e} m^2"
        )
    })
}

/// The needles' areas against the bore's `bore_area_m2`, as problems of their keys (each of a
/// table's values): `keys` are the keys as the model file names them (a cylinder's or a
/// piston's) with their values.
pub fn needle_problems(
    keys: [(&'static str, &Option<ParamSpec>); 2],
    bore_area_m2: f64,
) -> Vec<Problem> {
    let mut out = Vec::new();
    if !(bore_area_m2.is_finite() && bore_area_m2 > 0.0) {
        return out;
    }
    for (key, spec) in keys {
        let Some(spec) = spec else { continue };
        let widest = spec.values().into_iter().fold(f64::NEG_INFINITY, f64::max);
        if widest > bore_area_m2 {
            out.push(Problem {
                key: Some(key),
                message: format!(
                    "`{key}` = {widest:e} m^2 is wider than the bore ({bore_area_m2:e} m^2): \
                     the needle must be at most the bore's area"
                ),
            });
        }
    }
    out
}

/// A cushioned end needs its stop, its needle, the cushion length and the passage's area; the
/// zones fit between the stops; a needle is narrower than the bore; a piston that may leave
/// its bore has none.
pub fn problems(x: &PistonSpec) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut problem = |key, message: String| {
        out.push(Problem {
            key: Some(key),
            message,
        })
    };
    let ends = [
        (
            "cushion_port_min",
            &x.cushion_port_min,
            "cushion_needle_area_min",
            &x.cushion_needle_area_min,
            "x_min",
            x.x_min,
        ),
        (
            "cushion_port_max",
            &x.cushion_port_max,
            "cushion_needle_area_max",
            &x.cushion_needle_area_max,
            "x_max",
            x.x_max,
        ),
    ];
    let mut cushioned = 0;
    for (port_key, port, needle_key, needle, stop_key, stop) in ends {
        match (port, needle) {
            (Some(_), None) => problem(
                needle_key,
                format!("a cushion at `{stop_key}` (`{port_key}`) needs its `{needle_key}`"),
            ),
            (None, Some(_)) => problem(
                port_key,
                format!("`{needle_key}` is for a cushion at `{stop_key}`: give its `{port_key}`"),
            ),
            _ => {}
        }
        if port.is_some() {
            cushioned += 1;
            if stop.is_none() {
                problem(
                    port_key,
                    format!("a cushion at `{stop_key}` needs that end stop: give `{stop_key}`"),
                );
            }
        }
    }
    let any_key = x.cushion_length.is_some() || x.cushion_port_area.is_some();
    if cushioned > 0 {
        for (key, v) in [
            ("cushion_length", x.cushion_length),
            ("cushion_port_area", x.cushion_port_area),
        ] {
            if v.is_none() {
                problem(key, format!("a cushioned piston needs its `{key}`"));
            }
        }
        if x.x_exit.is_some() {
            problem(
                "x_exit",
                "a cushioned piston cannot leave its bore: give no `x_exit`".to_string(),
            );
        }
    } else if any_key {
        problem(
            "cushion_length",
            "`cushion_length` and `cushion_port_area` are for a cushioned end: give its \
             `cushion_port_min` or `cushion_port_max`"
                .to_string(),
        );
    }
    if let (Some(l), Some(lo), Some(hi)) = (x.cushion_length, x.x_min, x.x_max)
        && cushioned > 0
        && l.is_finite()
        && lo.is_finite()
        && hi.is_finite()
        && f64::from(cushioned) * l > hi - lo
    {
        problem(
            "cushion_length",
            format!(
                "`cushion_length` = {l} m at {cushioned} end(s) does not fit between the stops \
                 ({} m apart)",
                hi - lo
            ),
        );
    }
    out.extend(needle_problems(
        [
            (NEEDLE_KEYS[0], &x.cushion_needle_area_min),
            (NEEDLE_KEYS[1], &x.cushion_needle_area_max),
        ],
        x.area,
    ));
    out
}

/// One cushioned end of a piston.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cushion {
    /// The node whose gas it cushions (the piston's `behind` at `x_min`, `ahead` at `x_max`).
    pub chamber: usize,
    /// The node the cushioned chamber exhausts to (the cylinder's port).
    pub port: usize,
    /// The piston's position where the spear enters its bore (the zone's edge), m.
    pub edge_m: f64,
    /// The zone lies above the edge (the `x_max` end, the gas ahead), else below it (`x_min`,
    /// the gas behind).
    pub at_max: bool,
    /// The needle's area, m² (0: closed): a constant, a table or an FMU input.
    pub needle_area_m2: Param<Area>,
    /// The main passage's area (open outside the zone; the check valve's inside it), m².
    pub port_area_m2: f64,
}

impl Cushion {
    /// How far into the zone position `x` is, m (negative outside): entering is this crossing
    /// 0 upward, leaving its negative.
    #[inline]
    pub fn depth_m(&self, x_m: f64) -> f64 {
        if self.at_max {
            x_m - self.edge_m
        } else {
            self.edge_m - x_m
        }
    }

    /// Whether the spear closes the main passage at position `x`.
    #[inline]
    pub fn inside(&self, x_m: f64) -> bool {
        self.depth_m(x_m) > 0.0
    }

    /// Its flows between `chamber` (the gas it cushions) and its port at position `x`, into
    /// `dy`: the needle's first, then the passage's (the check valve's inside the zone).
    #[inline]
    pub fn terms<T: Scalar>(&self, e: &Eval<'_, T>, x_m: T, dy: &mut [T]) {
        let (gas, chamber, port) = (e.gas, self.chamber, self.port);
        let (nc, np) = (e.nodes[chamber], e.nodes[port]);
        let needle = orifice::signed_mass_flow_kg_per_s(gas, e.pv(&self.needle_area_m2), nc, np);
        e.transfer(chamber, port, needle, dy);
        let area = crate::ad::c(self.port_area_m2);
        if self.inside(x_m.re()) {
            let check = max0(orifice::signed_mass_flow_kg_per_s(gas, area, np, nc));
            e.transfer(port, chamber, check, dy);
        } else {
            let open = orifice::signed_mass_flow_kg_per_s(gas, area, nc, np);
            e.transfer(chamber, port, open, dy);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zone_lies_towards_its_stop() {
        let low = Cushion {
            chamber: 1,
            port: 0,
            edge_m: 0.02,
            at_max: false,
            needle_area_m2: Param::from(1e-7),
            port_area_m2: 1e-5,
        };
        let high = Cushion {
            edge_m: 0.08,
            at_max: true,
            ..low.clone()
        };
        assert!(low.inside(0.01) && !low.inside(0.03) && !low.inside(0.02));
        assert!(high.inside(0.09) && !high.inside(0.07) && !high.inside(0.08));
        assert!((low.depth_m(0.015) - 0.005).abs() < 1e-15);
        assert!((high.depth_m(0.085) - 0.005).abs() < 1e-15);
    }
}
