//! Shuttle valve (OR) and two-pressure valve (AND), ISO 1219 logic valves: two inlets `x` and
//! `y` (ports 1), one outlet `out` (port 2), a free disc between the inlets' seats.
//!
//! The disc is pushed by the inlets' pressure difference Δp = p_x − p_y and travels across a
//! switching band Δp_s: its position σ = clamp((Δp + Δp_s/2)/Δp_s, 0, 1) is 1 with x well above
//! y. A shuttle valve passes the higher inlet to the outlet: the path x–out is open σ, y–out
//! 1 − σ. A two-pressure valve passes the lower one (the higher inlet's pressure closes its
//! own seat): x–out 1 − σ, y–out σ, so its outlet is pressurized only when both inlets are.
//! Each path is the ISO 6358 law (C, b or Q_N; `crate::components::orifice`, signed), or a
//! catalogue curve (`flow_table`; `crate::components::rating`), times its opening (Beater,
//! *Pneumatic Drives*, 2007, ch. 5.5; Simscape's "Shuttle Valve (G)" has a transition band in
//! the pressure difference the same way).
//!
//! The disc's ends of travel are kinks of the law: Δp through ±Δp_s/2, each both ways, are
//! events. [`Disc`] is that band; the quick-exhaust valve's disc is the same. So are each
//! path's pressure-ratio kinks (b, where it chokes, and the laminar ratio;
//! `crate::components::ratio_kinks`), whatever its opening, as an orifice's are; a curve's
//! interior rows are located as events both ways in those slots
//! (`crate::components::rating::RatedPaths`).

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::components::NodeState;
use crate::components::element::{Build, Element, Eval, EventAt, Output, Reads, Slots, Variable};
use crate::components::keys::{Component, Kind, Link, Problem};
use crate::components::orifice::ISO_LAMINAR_RATIO;
use crate::components::rating::{PathRating, RatedPaths, rating_problems};
use crate::gas::IdealGas;
use crate::param::ParamValue;
use crate::units::Unit;

crate::declare_kind! {
    /// `[[shuttle_valve]]`: a shuttle valve (OR), or with `two_pressure` a two-pressure
    /// valve (AND).
    kind ShuttleValveSpec = "shuttle_valve", Link, gas, check = shuttle_problems;
    name: Name;
    /// First inlet (1).
    x: Node;
    /// Second inlet (1).
    y: Node;
    /// Outlet (2).
    out: Node;
    /// The disc crosses from seat to seat as p_x − p_y goes from −band/2 to +band/2, Pa.
    switching_band: Number, pressure, Number(5000.0), Positive;
    /// C of each path, m³/(s·Pa) (or `nominal_flow`, or `flow_table`).
    sonic_conductance: Number, sonic_conductance, None, Positive;
    /// Q_N of each path (ISO 6358), kg/s or "Nl/min".
    nominal_flow: Number, mass_rate, None, Positive;
    /// b of each path (with C or Q_N).
    critical_pressure_ratio: Number, dimensionless, RequiredIn("ISO form"), Below(ISO_LAMINAR_RATIO);
    /// A two-pressure valve (AND): the lower inlet reaches the outlet.
    two_pressure: Flag, dimensionless, Flag(false);
    ..rating_curve_keys {
        /// Each path as a catalogue curve instead of C (or Q_N) and b: rows
        /// `[p_down/p_up, mass flow kg/s]` at the rated inlet state, from ratio 0 to `[1, 0]`.
    }
}

/// Its paths are rated by one of C, Q_N (with b) and a curve.
fn shuttle_problems(x: &ShuttleValveSpec) -> Vec<Problem> {
    rating_problems("valve", "300 Nl/min", &x.rating_keys())
}

/// A disc moved across a band of pressure difference: its position 0 … 1 and the events at
/// its ends of travel.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Disc {
    /// Positive (validated).
    pub band_pa: f64,
}

/// The disc's ends of travel, in Δp; each is two events (rising g = Δp − point, falling −g).
const ENDS_OF_TRAVEL: [&str; 2] = ["lower end", "upper end"];

impl Disc {
    /// Its position at Δp: 0 at or below −band/2, 1 at or above +band/2, linear between.
    #[inline(always)]
    pub fn position<T: Scalar>(&self, dp_pa: T) -> T {
        let half = 0.5 * self.band_pa;
        if dp_pa.re() <= -half {
            T::zero()
        } else if dp_pa.re() >= half {
            c(1.0)
        } else {
            (dp_pa + half) / self.band_pa
        }
    }

    /// Event e (< 4) at Δp: 2j and 2j + 1 are Δp rising and falling through end j.
    pub fn event_value(&self, e: usize, dp_pa: f64) -> f64 {
        let point = if e / 2 == 0 { -0.5 } else { 0.5 } * self.band_pa;
        let g = dp_pa - point;
        if e % 2 == 0 { g } else { -g }
    }

    /// ∂g_e/∂Δp.
    pub fn event_sign(e: usize) -> f64 {
        if e % 2 == 0 { 1.0 } else { -1.0 }
    }

    /// What event e is, for messages.
    pub fn event_text(e: usize) -> String {
        let way = if e % 2 == 0 { "rises" } else { "falls" };
        format!(
            "{way} through the disc's {}",
            ENDS_OF_TRAVEL.get(e / 2).unwrap_or(&"?")
        )
    }

    pub const EVENTS: usize = 2 * ENDS_OF_TRAVEL.len();
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShuttleValve {
    pub name: String,
    pub x: usize,
    pub y: usize,
    pub out: usize,
    pub disc: Disc,
    /// Each path's rating: C (from `nominal_flow` when given so) and b, or a curve.
    pub rating: PathRating,
    pub two_pressure: bool,
}

impl ShuttleValve {
    /// The openings of the paths x–out and y–out.
    #[inline(always)]
    pub fn openings<T: Scalar>(&self, p_x: T, p_y: T) -> (T, T) {
        let s = self.disc.position(p_x - p_y);
        let rest = c::<T>(1.0) - s;
        if self.two_pressure {
            (rest, s)
        } else {
            (s, rest)
        }
    }

    /// The flows x → out and y → out, kg/s, signed.
    #[inline(always)]
    pub fn flows<T: Scalar>(&self, nodes: &[NodeState<T>]) -> (T, T) {
        let (nx, ny, no) = (nodes[self.x], nodes[self.y], nodes[self.out]);
        let (ox, oy) = self.openings(nx.pressure_pa, ny.pressure_pa);
        (
            ox * self.rating.signed_mass_flow_kg_per_s(nx, no),
            oy * self.rating.signed_mass_flow_kg_per_s(ny, no),
        )
    }

    /// Its rated paths x–out and y–out (one rating).
    fn ratio_paths(&self) -> RatedPaths<'_, 2> {
        self.rating.paths([
            ("x–out", Some((self.x, self.out))),
            ("y–out", Some((self.y, self.out))),
        ])
    }
}

impl Build for ShuttleValveSpec {
    type Component = ShuttleValve;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> ShuttleValve {
        ShuttleValve {
            name: self.name.clone(),
            x: node(&self.x),
            y: node(&self.y),
            out: node(&self.out),
            disc: Disc {
                band_pa: self.switching_band,
            },
            // One rating is given (validated).
            rating: PathRating::from_keys(&self.rating_keys()),
            two_pressure: self.two_pressure,
        }
    }
}

impl Component for ShuttleValve {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!();
}

impl Link for ShuttleValve {
    fn ends(&self) -> (usize, usize) {
        (self.x, self.out)
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
}

impl Element for ShuttleValve {
    const KIND: &'static Kind = &KIND;
    const OUTPUTS: &'static [Output] = &[
        Output::Extra {
            variable: Variable {
                suffix: "y_mdot",
                unit: Unit::mass_rate,
                description: "mass flow from the inlet y of {} to its outlet, kg/s",
            },
            discrete: false,
        },
        Output::Extra {
            variable: Variable {
                suffix: "disc",
                unit: Unit::dimensionless,
                description: "position of the disc of {}: 1 with p_x above p_y by half its \
                              switching band or more, 0 the other way",
            },
            discrete: false,
        },
    ];
    /// The disc's ends of travel, then its paths' ratio kinks (or curve rows).
    const EVENTS: usize = Disc::EVENTS + RatedPaths::<'static, 2>::EVENTS;
    const SWITCHES: bool = true;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.x, self.y, self.out].into_iter()
    }

    /// The ratio kinks change no state: the driver only restarts its integrator there.
    fn event_only_restarts(&self, e: usize) -> bool {
        e >= Disc::EVENTS
    }

    fn event_both_ways(&self, e: usize) -> bool {
        e >= Disc::EVENTS && self.ratio_paths().is_both_ways(e - Disc::EVENTS)
    }

    /// A curve's row events of a parity without rows.
    fn event_never_fires(&self, e: usize) -> bool {
        e >= Disc::EVENTS && self.ratio_paths().never_fires(e - Disc::EVENTS)
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        if e >= Disc::EVENTS {
            return self.ratio_paths().event_value(e - Disc::EVENTS, at);
        }
        let dp = (at.node)(self.x).pressure_pa - (at.node)(self.y).pressure_pa;
        Some(self.disc.event_value(e, dp))
    }

    fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        if e >= Disc::EVENTS {
            return self
                .ratio_paths()
                .event_pressure_gradient(e - Disc::EVENTS, at, push);
        }
        let sign = Disc::event_sign(e);
        push(self.x, sign);
        push(self.y, -sign);
    }

    fn event_description(&self, e: usize) -> String {
        if e >= Disc::EVENTS {
            let what = self.ratio_paths().describe(e - Disc::EVENTS);
            return format!("shuttle valve `{}`: {what}", self.name);
        }
        format!(
            "shuttle valve `{}`: p_x − p_y {}",
            self.name,
            Disc::event_text(e)
        )
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (v, out) in items.iter().zip(at.flows.iter_mut()) {
            let (fx, fy) = v.flows(e.nodes);
            e.transfer(v.x, v.out, fx, dy);
            e.transfer(v.y, v.out, fy, dy);
            *out = fx;
        }
    }

    fn extra_output<T: Scalar>(
        &self,
        k: usize,
        _s: &[T],
        _gas: &IdealGas,
        nodes: &[NodeState<T>],
        _pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        match k {
            0 => self.flows(nodes).1,
            _ => self
                .disc
                .position(nodes[self.x].pressure_pa - nodes[self.y].pressure_pa),
        }
    }

    fn extra_output_reads(&self, k: usize) -> Reads {
        Reads {
            keys: &[],
            states: &[],
            pressures: true,
            temperatures: k == 0,
        }
    }
}
