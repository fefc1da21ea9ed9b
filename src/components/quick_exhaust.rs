//! Quick-exhaust valve (ISO 1219): supply `p` (port 1), working port `a` (2, at the cylinder),
//! exhaust `r` (3). Its disc is pushed by Δp = p_p − p_a across a switching band Δp_s, as the
//! shuttle valve's ([`Disc`]): at position σ the path p–a is open σ and a–r is open 1 − σ, so
//! the cylinder fills from the supply while p_p is above p_a and vents straight to `r`, past
//! the supply line and the directional valve, once the supply falls below it (Beater,
//! *Pneumatic Drives*, 2007, ch. 5.5). Each path is the ISO 6358 law (C, b or Q_N, the exhaust
//! path with a rating of its own as catalogues give it), signed, times its opening; or catalogue
//! curves (`crate::components::rating`): `flow_table` for both paths, or for p–a with
//! `exhaust_flow_table` for a–r, both measured at one rated inlet state. The disc's
//! ends of travel are events, each both ways; so are each path's pressure-ratio kinks (b,
//! where it chokes, and the laminar ratio; `crate::components::ratio_kinks`), whatever its
//! opening, as an orifice's are, or in those slots a curve's interior rows, located both ways
//! (`crate::components::rating::RatedPaths`).

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::components::NodeState;
use crate::components::element::{Build, Element, Eval, EventAt, Output, Reads, Slots, Variable};
use crate::components::keys::{Component, Kind, Link, Problem};
use crate::components::orifice::ISO_LAMINAR_RATIO;
use crate::components::rating::{
    PathRating, RatedPaths, RatingKeys, curve_shape_problem, rating_problems,
};
use crate::components::shuttle_valve::Disc;
use crate::gas::IdealGas;
use crate::param::ParamValue;
use crate::units::Unit;

crate::declare_kind! {
    /// `[[quick_exhaust]]`: a quick-exhaust valve.
    kind QuickExhaustSpec = "quick_exhaust", Link, gas, check = quick_exhaust_problems;
    name: Name;
    /// Supply (1).
    p: Node;
    /// Working port (2).
    a: Node;
    /// Exhaust (3).
    r: Node;
    /// The disc crosses from seat to seat as p_p − p_a goes from −band/2 to +band/2, Pa.
    switching_band: Number, pressure, Number(5000.0), Positive;
    /// C of the path p–a, m³/(s·Pa) (or `nominal_flow`, or `flow_table`).
    sonic_conductance: Number, sonic_conductance, None, Positive;
    /// Q_N of the path p–a (ISO 6358), kg/s or "Nl/min".
    nominal_flow: Number, mass_rate, None, Positive;
    /// C of the path a–r (default: the path p–a's), m³/(s·Pa).
    exhaust_sonic_conductance: Number, sonic_conductance, None, Positive;
    /// Q_N of the path a–r, kg/s or "Nl/min".
    exhaust_nominal_flow: Number, mass_rate, None, Positive;
    /// b of both paths (with C or Q_N).
    critical_pressure_ratio: Number, dimensionless, RequiredIn("ISO form"), Below(ISO_LAMINAR_RATIO);
    /// The path a–r's own catalogue curve (with `flow_table`, at its rated inlet state): rows
    /// `[p_down/p_up, mass flow kg/s]` as `flow_table`'s.
    exhaust_flow_table: Curve(dimensionless), mass_rate, None, NonNegative;
    ..rating_curve_keys {
        /// Both paths as one catalogue curve instead of C (or Q_N) and b: rows
        /// `[p_down/p_up, mass flow kg/s]` at the rated inlet state, from ratio 0 to `[1, 0]`.
    }
}

/// Its path p–a is rated by one of C, Q_N (with b) and a curve; its path a–r by at most one of
/// its own C and Q_N (at the same b) without a curve, or by its own curve with one (at the same
/// rated inlet state), else by the path p–a's rating.
fn quick_exhaust_problems(x: &QuickExhaustSpec) -> Vec<Problem> {
    let mut out = rating_problems("valve", "300 Nl/min", &x.rating_keys());
    if let Some(rows) = &x.exhaust_flow_table {
        if x.flow_table.is_none() {
            out.push(Problem {
                key: Some("exhaust_flow_table"),
                message: "`exhaust_flow_table` needs `flow_table` too (the path p–a's curve, \
                          whose rated inlet state it shares)"
                    .to_string(),
            });
        }
        out.extend(curve_shape_problem("exhaust_flow_table", rows));
    }
    if x.flow_table.is_some() {
        for (given, key) in [
            (
                x.exhaust_sonic_conductance.is_some(),
                "exhaust_sonic_conductance",
            ),
            (x.exhaust_nominal_flow.is_some(), "exhaust_nominal_flow"),
        ] {
            if given {
                out.push(Problem {
                    key: Some(key),
                    message: format!(
                        "give either `flow_table` (a catalogue curve of both paths, or with \
                         `exhaust_flow_table` of the path p–a) or `{key}` (the ISO 6358 rating \
                         of the path a–r), not both"
                    ),
                });
            }
        }
    } else if x.exhaust_sonic_conductance.is_some() && x.exhaust_nominal_flow.is_some() {
        out.push(Problem {
            key: None,
            message: "give either `exhaust_sonic_conductance` or `exhaust_nominal_flow`, not both"
                .to_string(),
        });
    }
    out
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuickExhaust {
    pub name: String,
    pub p: usize,
    pub a: usize,
    pub r: usize,
    pub disc: Disc,
    /// The path p–a's rating: C (from `nominal_flow` when given so) and b, or a curve.
    pub rating: PathRating,
    /// The path a–r's: its own C (or Q_N) at the same b, or the path p–a's.
    pub exhaust_rating: PathRating,
}

impl QuickExhaust {
    /// The flows p → a and a → r, kg/s, signed.
    #[inline(always)]
    pub fn flows<T: Scalar>(&self, nodes: &[NodeState<T>]) -> (T, T) {
        let (np, na, nr) = (nodes[self.p], nodes[self.a], nodes[self.r]);
        let s = self.disc.position(np.pressure_pa - na.pressure_pa);
        (
            s * self.rating.signed_mass_flow_kg_per_s(np, na),
            (c::<T>(1.0) - s) * self.exhaust_rating.signed_mass_flow_kg_per_s(na, nr),
        )
    }

    /// Its rated path p–a: events 0 … 3 of its paths' (after the disc's).
    fn supply_path(&self) -> RatedPaths<'_, 1> {
        self.rating.paths([("p–a", Some((self.p, self.a)))])
    }

    /// Its rated path a–r: events 4 … 7 of its paths'.
    fn exhaust_path(&self) -> RatedPaths<'_, 1> {
        self.exhaust_rating.paths([("a–r", Some((self.a, self.r)))])
    }

    /// The rated path of its paths' event `e` (counted from its first, after the disc's), and
    /// the event's index in that path.
    fn path_of(&self, e: usize) -> (RatedPaths<'_, 1>, usize) {
        if e < PATH_EVENTS {
            (self.supply_path(), e)
        } else {
            (self.exhaust_path(), e - PATH_EVENTS)
        }
    }
}

/// Events of one path's ratio kinks (or curve rows).
const PATH_EVENTS: usize = RatedPaths::<'static, 1>::EVENTS;

impl Build for QuickExhaustSpec {
    type Component = QuickExhaust;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> QuickExhaust {
        // One rating of p–a is given, a–r's own C or Q_N only without a curve, and its own
        // curve only with one (validated).
        let rating = PathRating::from_keys(&self.rating_keys());
        let exhaust_rating = match (self.exhaust_sonic_conductance, self.exhaust_nominal_flow) {
            _ if self.exhaust_flow_table.is_some() => PathRating::from_keys(&RatingKeys {
                flow_table: self.exhaust_flow_table.as_deref(),
                ..self.rating_keys()
            }),
            (None, None) => rating.clone(),
            (cond, q) => PathRating::from_keys(&RatingKeys {
                sonic_conductance: cond,
                nominal_flow: q,
                flow_table: None,
                ..self.rating_keys()
            }),
        };
        QuickExhaust {
            name: self.name.clone(),
            p: node(&self.p),
            a: node(&self.a),
            r: node(&self.r),
            disc: Disc {
                band_pa: self.switching_band,
            },
            rating,
            exhaust_rating,
        }
    }
}

impl Component for QuickExhaust {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!();
}

impl Link for QuickExhaust {
    fn ends(&self) -> (usize, usize) {
        (self.p, self.a)
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
}

impl Element for QuickExhaust {
    const KIND: &'static Kind = &KIND;
    const OUTPUTS: &'static [Output] = &[Output::Extra {
        variable: Variable {
            suffix: "exhaust_mdot",
            unit: Unit::mass_rate,
            description: "mass flow vented by {} from its port a to its exhaust r, kg/s",
        },
        discrete: false,
    }];
    /// The disc's ends of travel, then its paths' ratio kinks (or curve rows), p–a's and a–r's.
    const EVENTS: usize = Disc::EVENTS + 2 * PATH_EVENTS;
    const SWITCHES: bool = true;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.p, self.a, self.r].into_iter()
    }

    /// The ratio kinks change no state: the driver only restarts its integrator there.
    fn event_only_restarts(&self, e: usize) -> bool {
        e >= Disc::EVENTS
    }

    fn event_both_ways(&self, e: usize) -> bool {
        e >= Disc::EVENTS && {
            let (path, k) = self.path_of(e - Disc::EVENTS);
            path.is_both_ways(k)
        }
    }

    /// A curve's row events of a parity without rows.
    fn event_never_fires(&self, e: usize) -> bool {
        e >= Disc::EVENTS && {
            let (path, k) = self.path_of(e - Disc::EVENTS);
            path.never_fires(k)
        }
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        if e >= Disc::EVENTS {
            let (path, k) = self.path_of(e - Disc::EVENTS);
            return path.event_value(k, at);
        }
        let dp = (at.node)(self.p).pressure_pa - (at.node)(self.a).pressure_pa;
        Some(self.disc.event_value(e, dp))
    }

    fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        if e >= Disc::EVENTS {
            let (path, k) = self.path_of(e - Disc::EVENTS);
            return path.event_pressure_gradient(k, at, push);
        }
        let sign = Disc::event_sign(e);
        push(self.p, sign);
        push(self.a, -sign);
    }

    fn event_description(&self, e: usize) -> String {
        if e >= Disc::EVENTS {
            let (path, k) = self.path_of(e - Disc::EVENTS);
            let what = path.describe(k);
            return format!("quick-exhaust valve `{}`: {what}", self.name);
        }
        format!(
            "quick-exhaust valve `{}`: p_p − p_a {}",
            self.name,
            Disc::event_text(e)
        )
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (v, out) in items.iter().zip(at.flows.iter_mut()) {
            let (fill, vent) = v.flows(e.nodes);
            e.transfer(v.p, v.a, fill, dy);
            e.transfer(v.a, v.r, vent, dy);
            *out = fill;
        }
    }

    fn extra_output<T: Scalar>(
        &self,
        _k: usize,
        _s: &[T],
        _gas: &IdealGas,
        nodes: &[NodeState<T>],
        _pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        self.flows(nodes).1
    }

    fn extra_output_reads(&self, _k: usize) -> Reads {
        Reads {
            keys: &[],
            states: &[],
            pressures: true,
            temperatures: true,
        }
    }
}
