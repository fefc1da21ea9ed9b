//! How catalogues rate a pneumatic valve's flow path, turned into the ISO 6358 law's sonic
//! conductance C: the nominal flow Q_N (ISO 6358-1:2013, and the catalogues' "standard nominal
//! flow rate"): the flow at 6 bar gauge inlet and 1 bar pressure drop, in standard volume at
//! ISO 8778's reference atmosphere. With p₁ = 600 kPa + 100 kPa (ANR) = 700 kPa absolute,
//! p₂ = 600 kPa and T₁ = T₀, the ISO 6358 law gives
//!   ṁ_N = ρ₀·Q_N = C·p₁·ρ₀·sqrt(1 − ((p₂/p₁ − b)/(1 − b))²)     (p₂/p₁ > b),
//!   ṁ_N = C·p₁·ρ₀                                              (p₂/p₁ ≤ b: choked),
//! so C follows from Q_N and b. A model file gives Q_N as the mass flow ṁ_N (`"600 Nl/min"`
//! is converted at ρ₀, `crate::units::parse`).
//!
//! A valve may instead be rated by its catalogue curve (`flow_table`: the flow against the
//! pressure ratio at a rated inlet state, `crate::components::flow_table`), its rows' kinks
//! located as events in the slots a (C, b) path gives its choked and laminar ratios
//! ([`RatedPaths`]). [`PathRating`] is either, [`rating_problems`] the keys' checks every
//! kind so rated shares.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::components::NodeState;
use crate::components::directional_valve::DirectionalValveSpec;
use crate::components::element::EventAt;
use crate::components::flow_control::FlowControlSpec;
use crate::components::flow_table::{self, FlowTable};
use crate::components::keys::Problem;
use crate::components::orifice::{
    ISO_LAMINAR_RATIO, ISO_RHO0_KG_PER_M3, ISO_T0_K, Poppet, signed_iso6358_mass_flow_kg_per_s,
};
use crate::components::pilot_check::PilotCheckSpec;
use crate::components::quick_exhaust::QuickExhaustSpec;
use crate::components::ratio_kinks;
use crate::components::regulator::RegulatorSpec;
use crate::components::shuttle_valve::ShuttleValveSpec;

/// ISO 6358's nominal inlet pressure (6 bar gauge over the 100 kPa of ISO 8778), Pa absolute.
pub const NOMINAL_INLET_PA: f64 = 700e3;
/// ISO 6358's nominal outlet pressure (1 bar below the inlet), Pa absolute.
pub const NOMINAL_OUTLET_PA: f64 = 600e3;

/// The sonic conductance C, m³/(s·Pa), of a flow path of critical pressure ratio `b`
/// (0 ≤ b < the laminar ratio, validated) that passes the nominal mass flow `nominal_kg_per_s`
/// (ρ₀·Q_N) at ISO 6358's nominal conditions.
pub fn sonic_conductance_from_nominal_flow(nominal_kg_per_s: f64, b: f64) -> f64 {
    debug_assert!((0.0..ISO_LAMINAR_RATIO).contains(&b));
    let r = NOMINAL_OUTLET_PA / NOMINAL_INLET_PA;
    let shape = if r <= b {
        1.0
    } else {
        let s = (r - b) / (1.0 - b);
        (1.0 - s * s).sqrt()
    };
    nominal_kg_per_s / (NOMINAL_INLET_PA * ISO_RHO0_KG_PER_M3 * shape)
}

/// How a valve's flow path is rated: the ISO 6358 law of (C, b), or a catalogue curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PathRating {
    /// C, m³/(s·Pa) (from Q_N when given so), and b.
    Iso6358 {
        sonic_conductance_m3_per_s_pa: f64,
        critical_pressure_ratio: f64,
    },
    /// The flow against p_down/p_up at a rated inlet state.
    Table(FlowTable),
}

/// A kind's rating keys, as its spec holds them (validated by [`rating_problems`]; an orifice's
/// curve keys alone by [`curve_problems`], the others `None`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RatingKeys<'a> {
    pub sonic_conductance: Option<f64>,
    pub nominal_flow: Option<f64>,
    pub critical_pressure_ratio: Option<f64>,
    pub flow_table: Option<&'a [[f64; 2]]>,
    pub flow_table_inlet_pressure: Option<f64>,
    pub flow_table_inlet_temperature: Option<f64>,
}

/// The curve keys of a kind rated by a catalogue curve (`flow_table` and its rated inlet
/// state), a key group of [`crate::declare_kind!`] (`..rating_curve_keys { /// its doc }`, last
/// in a kind's keys): appends them to the kind's keys, the attributes given to `flow_table`.
#[macro_export]
#[doc(hidden)]
macro_rules! rating_curve_keys {
    ([$(#[$flow_table_attr:meta])*] $($kind:tt)*) => {
        $crate::declare_kind! {
            $($kind)*
            $(#[$flow_table_attr])*
            flow_table: Curve(dimensionless), mass_rate, None, NonNegative;
            /// The curve's rated inlet pressure, Pa absolute (with `flow_table`).
            flow_table_inlet_pressure: Number, pressure, None, Positive;
            /// The curve's rated inlet temperature, K (with `flow_table`; ISO 8778's 293.15 K
            /// when absent).
            flow_table_inlet_temperature: Number, temperature, None, Positive;
        }
    };
}

/// `rating_keys()` of the spec types listed, the kinds rated by these keys: their
/// [`RatingKeys`] (a quick exhaust's are its path p–a's, and a–r's unless that has its own C or
/// Q_N). A kind `without nominal_flow` (the flow control's throttle) is rated by C or a curve
/// alone; a `critical_pressure_ratio` that is required (the flow control's, its check's b too)
/// is always given.
macro_rules! impl_rating_keys {
    (@nominal_flow $x:ident) => {
        $x.nominal_flow
    };
    (@nominal_flow $x:ident without nominal_flow) => {
        None
    };
    ($($Spec:ident $(without $missing:ident)?),+ $(,)?) => {$(
        impl $Spec {
            /// Its rating keys.
            pub(crate) fn rating_keys(&self) -> RatingKeys<'_> {
                let x = self;
                RatingKeys {
                    sonic_conductance: x.sonic_conductance,
                    nominal_flow: impl_rating_keys!(@nominal_flow x $(without $missing)?),
                    critical_pressure_ratio: Option::from(x.critical_pressure_ratio),
                    flow_table: x.flow_table.as_deref(),
                    flow_table_inlet_pressure: x.flow_table_inlet_pressure,
                    flow_table_inlet_temperature: x.flow_table_inlet_temperature,
                }
            }
        }
    )+};
}

impl_rating_keys!(
    RegulatorSpec,
    DirectionalValveSpec,
    ShuttleValveSpec,
    QuickExhaustSpec,
    PilotCheckSpec,
    FlowControlSpec without nominal_flow,
);

impl PathRating {
    /// The rating its keys give (validated: exactly one of C, Q_N and a curve, b with C or Q_N,
    /// p_ref with the curve; T_ref is ISO 8778's T₀ when absent).
    pub fn from_keys(k: &RatingKeys<'_>) -> Self {
        if let Some(rows) = k.flow_table {
            return PathRating::Table(FlowTable::new(
                rows,
                k.flow_table_inlet_pressure.unwrap_or(f64::NAN),
                k.flow_table_inlet_temperature.unwrap_or(ISO_T0_K),
            ));
        }
        let b = k.critical_pressure_ratio.unwrap_or(0.0);
        let cond = match (k.sonic_conductance, k.nominal_flow) {
            (Some(cond), _) => cond,
            (None, Some(q)) => sonic_conductance_from_nominal_flow(q, b),
            (None, None) => 0.0,
        };
        PathRating::Iso6358 {
            sonic_conductance_m3_per_s_pa: cond,
            critical_pressure_ratio: b,
        }
    }

    /// The fully open path's flow from node state `from` to `to`, signed (negative when it
    /// runs the other way), kg/s.
    #[inline(always)]
    pub fn signed_mass_flow_kg_per_s<T: Scalar>(&self, from: NodeState<T>, to: NodeState<T>) -> T {
        match self {
            PathRating::Iso6358 {
                sonic_conductance_m3_per_s_pa,
                critical_pressure_ratio,
            } => signed_iso6358_mass_flow_kg_per_s(
                c(*sonic_conductance_m3_per_s_pa),
                c(*critical_pressure_ratio),
                from,
                to,
            ),
            PathRating::Table(table) => table.signed_mass_flow_kg_per_s(from, to),
        }
    }

    /// Its paths' events, each path named and `(i, j)` between its nodes (`None` where the
    /// part lacks it).
    #[inline]
    pub fn paths<const N: usize>(
        &self,
        paths: [(&'static str, Option<(usize, usize)>); N],
    ) -> RatedPaths<'_, N> {
        RatedPaths {
            rating: self,
            paths,
        }
    }
}

/// A part's flow paths of one rating and their kinks as events, [`ratio_kinks::EVENTS`] per
/// path (path `p`'s are p·4 … p·4 + 3): a (C, b) path's choked and laminar ratios
/// ([`ratio_kinks::Paths`]); a curve's interior rows, in the same slots, as the orifice's are
/// (`crate::components::flow_table`: h_0, −h_0, h_1, −h_1, each h_q changing sign at every
/// other row, located both ways).
pub struct RatedPaths<'a, const N: usize> {
    pub rating: &'a PathRating,
    pub paths: [(&'static str, Option<(usize, usize)>); N],
}

impl<const N: usize> RatedPaths<'_, N> {
    /// The events of its paths.
    pub const EVENTS: usize = N * ratio_kinks::EVENTS;

    /// The (C, b) paths' kinks.
    #[inline]
    fn iso(&self, b: f64) -> ratio_kinks::Paths<N> {
        ratio_kinks::Paths {
            critical: b,
            paths: self.paths,
        }
    }

    /// A curve's event `e`: h_q of [`FlowTable::breakpoint_event`] with its gradient
    /// (∂/∂p_high, ∂/∂p_low) and the (high, low) nodes, if the path and such a row exist.
    #[inline]
    fn table_event(
        &self,
        table: &FlowTable,
        e: usize,
        at: &EventAt<'_>,
    ) -> Option<([f64; 3], usize, usize)> {
        let (i, j) = self.paths.get(e / ratio_kinks::EVENTS)?.1?;
        let (pi, pj) = ((at.node)(i).pressure_pa, (at.node)(j).pressure_pa);
        let (high, low, p_high, p_low) = if pi >= pj {
            (i, j, pi, pj)
        } else {
            (j, i, pj, pi)
        };
        let q = (e % ratio_kinks::EVENTS) / 2;
        Some((table.breakpoint_event(q, p_high, p_low)?, high, low))
    }

    /// Event `e`'s value: `None` on a path the part lacks (or a curve without rows of the
    /// event's parity).
    #[inline]
    pub fn event_value(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        match self.rating {
            PathRating::Iso6358 {
                critical_pressure_ratio,
                ..
            } => self.iso(*critical_pressure_ratio).event_value(e, at),
            PathRating::Table(table) => {
                let (h, _, _) = self.table_event(table, e, at)?;
                Some(Poppet::pair(e, h[0]))
            }
        }
    }

    /// ∂g_e/∂p of [`Self::event_value`] as `(node, ∂g/∂p)`.
    pub fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        match self.rating {
            PathRating::Iso6358 {
                critical_pressure_ratio,
                ..
            } => self
                .iso(*critical_pressure_ratio)
                .event_pressure_gradient(e, at, push),
            PathRating::Table(table) => {
                if let Some((h, high, low)) = self.table_event(table, e, at) {
                    let sign = Poppet::pair(e, 1.0);
                    push(high, sign * h[1]);
                    push(low, sign * h[2]);
                }
            }
        }
    }

    /// Whether the driver locates event `e` both ways: a (C, b) path's laminar points
    /// ([`ratio_kinks::is_both_ways`]); a curve's rows are pairs h_q and −h_q already (the two
    /// directions of one h_q are not one row's).
    #[inline]
    pub fn is_both_ways(&self, e: usize) -> bool {
        matches!(self.rating, PathRating::Iso6358 { .. })
            && ratio_kinks::Paths::<N>::is_both_ways(e)
    }

    /// Whether event `e` can never fire, by the structure: one on a path the part lacks, or a
    /// curve's of a parity of which it has no interior row (Model Exchange leaves it out of its
    /// indicators).
    pub fn never_fires(&self, e: usize) -> bool {
        let lacking = self
            .paths
            .get(e / ratio_kinks::EVENTS)
            .is_none_or(|p| p.1.is_none());
        match self.rating {
            PathRating::Iso6358 { .. } => lacking,
            PathRating::Table(table) => {
                lacking || table.breakpoints_of_parity((e % ratio_kinks::EVENTS) / 2) == 0
            }
        }
    }

    /// Event `e` in words: "its relief path's p_low/p_high rises through its laminar ratio",
    /// "its p–a path's p_low/p_high through one of its flow table's rows 2, 4, … (h rising)".
    pub fn describe(&self, e: usize) -> String {
        match self.rating {
            PathRating::Iso6358 {
                critical_pressure_ratio,
                ..
            } => self.iso(*critical_pressure_ratio).describe(e),
            PathRating::Table(_) => {
                let path = self.paths.get(e / ratio_kinks::EVENTS).map_or("?", |p| p.0);
                let q = (e % ratio_kinks::EVENTS) / 2;
                let parity = ["3, 5, …", "2, 4, …"][q];
                let way = ["h", "−h"][e % 2];
                format!(
                    "its {path} path's p_low/p_high through one of its flow table's rows \
                     {parity} ({way} rising)"
                )
            }
        }
    }
}

/// The rating keys' problems of a `kind` (its name in messages, "regulator"), whose Q_N is
/// exemplified by `example` ("1500 Nl/min"): exactly one of `sonic_conductance`,
/// `nominal_flow` and `flow_table`; `critical_pressure_ratio` with the first two only; and the
/// curve's own keys' ([`curve_problems`]).
pub fn rating_problems(kind: &str, example: &str, k: &RatingKeys<'_>) -> Vec<Problem> {
    let mut out = curve_problems(kind, k);
    let mut problem =
        |key: Option<&'static str>, message: String| out.push(Problem { key, message });
    if k.flow_table.is_some() {
        for (given, key) in [
            (k.sonic_conductance.is_some(), "sonic_conductance"),
            (k.nominal_flow.is_some(), "nominal_flow"),
            (
                k.critical_pressure_ratio.is_some(),
                "critical_pressure_ratio",
            ),
        ] {
            if given {
                problem(Some(key), both_message(key));
            }
        }
        return out;
    }
    match (k.sonic_conductance, k.nominal_flow) {
        (Some(_), Some(_)) => problem(
            None,
            "give either `sonic_conductance` (C) or `nominal_flow` (Q_N), not both".into(),
        ),
        (None, None) => problem(
            None,
            format!(
                "missing the {kind}'s flow rating: `sonic_conductance` (C) or `nominal_flow` \
                 (Q_N, e.g. \"{example}\"), with `critical_pressure_ratio`; or a catalogue \
                 curve `flow_table`"
            ),
        ),
        (c, _) => {
            if k.critical_pressure_ratio.is_none() {
                let by = if c.is_some() {
                    "sonic_conductance"
                } else {
                    "nominal_flow"
                };
                let a = article(kind);
                problem(
                    None,
                    format!("{a} {kind} rated by `{by}` needs `critical_pressure_ratio` (b) too"),
                );
            }
        }
    }
    out
}

/// The message for a curve given with `key` of the ISO 6358 rating.
pub fn both_message(key: &str) -> String {
    format!(
        "give either `flow_table` (a catalogue curve) or `{key}` (the ISO 6358 rating), not both"
    )
}

/// "a" or "an" before the name of a `kind` ("a valve", "an orifice").
fn article(kind: &str) -> &'static str {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// A `kind`'s curve keys' own problems, whatever else rates it (the orifice's and the valves'):
/// the curve's rated inlet state given with a curve only, its inlet pressure required with it,
/// and the curve's shape, naming its row (`flow_table::table_problem`).
pub fn curve_problems(kind: &str, k: &RatingKeys<'_>) -> Vec<Problem> {
    let mut out = Vec::new();
    let Some(rows) = k.flow_table else {
        for (given, key) in [
            (
                k.flow_table_inlet_pressure.is_some(),
                "flow_table_inlet_pressure",
            ),
            (
                k.flow_table_inlet_temperature.is_some(),
                "flow_table_inlet_temperature",
            ),
        ] {
            if given {
                out.push(Problem {
                    key: Some(key),
                    message: format!(
                        "`{key}` rates a `flow_table`, which this {kind} does not have"
                    ),
                });
            }
        }
        return out;
    };
    out.extend(curve_shape_problem("flow_table", rows));
    if k.flow_table_inlet_pressure.is_none() {
        let a = article(kind);
        out.push(Problem {
            key: None,
            message: format!(
                "{a} {kind} with `flow_table` needs `flow_table_inlet_pressure` too: the inlet \
                 pressure (absolute) its curve was measured at"
            ),
        });
    }
    out
}

/// The shape of the curve under `key` (`flow_table::table_problem`, naming its row), judged on
/// valid cells only: a cell that breaks the key's own rule (not finite, a negative flow) is
/// reported at the cell by validation.
pub fn curve_shape_problem(key: &'static str, rows: &[[f64; 2]]) -> Option<Problem> {
    let cells_ok = rows
        .iter()
        .all(|[r, f]| r.is_finite() && f.is_finite() && *f >= 0.0);
    let message = flow_table::table_problem(rows).filter(|_| cells_ok)?;
    Some(Problem {
        key: Some(key),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::orifice::{ISO_T0_K, iso6358_mass_flow_kg_per_s};

    /// The conductance a nominal flow gives passes that flow through the ISO 6358 law at the
    /// nominal pressures, subsonic (b below 6/7) or choked (b above), to round-off.
    #[test]
    fn nominal_flow_through_its_conductance_is_the_nominal_flow() {
        // 600 Nl/min of air at ρ₀.
        let mdot_n = 600e-3 / 60.0 * ISO_RHO0_KG_PER_M3;
        for b in [0.0, 0.2, 0.3, 0.5, 0.85, 0.9] {
            let c = sonic_conductance_from_nominal_flow(mdot_n, b);
            let back =
                iso6358_mass_flow_kg_per_s(c, b, NOMINAL_INLET_PA, ISO_T0_K, NOMINAL_OUTLET_PA);
            println!("b = {b}: C = {c:.6e} m^3/(s Pa), flow back {back:.15e} of {mdot_n:.15e}");
            assert!(((back - mdot_n) / mdot_n).abs() < 1e-14, "b = {b}");
        }
    }
}
