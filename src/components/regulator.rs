//! Pressure regulator (pressure-reducing valve): holds its outlet `to` at a gauge set point,
//! fed from `from`, and, relieving, vents the outlet to `exhaust` above it.
//!
//! A direct-acting proportional regulator (Beater, *Pneumatic Drives*, ch. 5.4; Simscape's
//! "Pressure Reducing Valve (G)" with its proportional opening): the main poppet's opening is
//! linear in how far the outlet pressure p_o is below the set point p_set = p_amb + p_set,gauge,
//! over the regulation range Δp_r (the proportional band),
//!   x = clamp((p_set − p_o)/Δp_r, 0, 1),
//! and its flow is the ISO 6358 law (C, b; `crate::components::orifice`) from `from` to `to`
//! times x. A relieving regulator's secondary seat opens the same way above the set point,
//!   x_r = clamp((p_o − p_set)/Δp_r, 0, 1),
//! through the same C and b from `to` to `exhaust`. Both openings are continuous in p_o, their
//! slopes jump at their ends of travel: p_o through p_set (the main seat closes, the relief
//! seat cracks: one point of both), p_set − Δp_r (the main seat fully open) and, relieving,
//! p_set + Δp_r (the relief seat fully open). Each is an event both ways, as a poppet's
//! cracking and full-flow points are, of the current set point (a table's or an input's; the
//! set point's a hair past it, [`SET_POINT_MARGIN`]), and only restarts the integrator (no
//! state changes there). Each path's pressure-ratio kinks (its b, where it chokes, and the
//! laminar ratio) are events as an orifice's are (`crate::components::ratio_kinks`).
//!
//! A catalogue rates the flow path by its curve instead (`flow_table`, at a rated inlet state;
//! `crate::components::flow_table`): each seat's flow is its opening times the curve's flow,
//! the relief path's through the same curve (one rating, as C and b are), and the curve's
//! interior rows are each path's kinks, located as events both ways in its ratio kinks' slots
//! (`crate::components::rating::RatedPaths`).
//!
//! Closed forms: with the main flow choked (p_o/p_from ≤ b) at a steady draw ṁ from the outlet,
//! ṁ = x·C·p_from·ρ₀·sqrt(T₀/T_from), so the held pressure droops linearly with the flow,
//!   p_o = p_set − Δp_r·ṁ/(C·p_from·ρ₀·sqrt(T₀/T_from)),
//! p_o = p_set with no draw; relieving a steady inflow ṁ into the outlet through a choked
//! exhaust, (p_o − p_set)/Δp_r·C·p_o·ρ₀·sqrt(T₀/T_o) = ṁ, a quadratic in p_o.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::components::NodeState;
use crate::components::element::{Build, Element, Eval, EventAt, Output, Reads, Slots, Variable};
use crate::components::keys::{Component, Kind, Link, Problem};
use crate::components::orifice::{ISO_LAMINAR_RATIO, Poppet};
use crate::components::rating::{PathRating, RatedPaths, rating_problems};
use crate::gas::IdealGas;
use crate::param::{Param, ParamValue};
use crate::units::{Pressure, Unit};

crate::declare_kind! {
    /// `[[regulator]]`: a pressure-reducing valve, relieving with an `exhaust`.
    kind RegulatorSpec = "regulator", Link, gas, check = regulator_problems;
    name: Name;
    from: Node;
    to: Node;
    /// Relieving: the node the outlet vents to above the set point.
    exhaust: Node, dimensionless, None;
    /// Outlet set point, Pa gauge (above `ambient_pressure`): an FMU input.
    set_pressure: Param, pressure, Required, NonNegative;
    /// The pressure the set point is gauge to, Pa absolute.
    ambient_pressure: Number, pressure, Number(101_325.0), Positive;
    /// Proportional band: fully open this far below the set point, Pa.
    regulation_range: Number, pressure, Required, Positive;
    /// C of its flow path, m³/(s·Pa) (or `nominal_flow`, or `flow_table`).
    sonic_conductance: Number, sonic_conductance, None, Positive;
    /// Q_N of its flow path (ISO 6358: 6 bar gauge inlet, 1 bar drop), kg/s or "Nl/min".
    nominal_flow: Number, mass_rate, None, Positive;
    /// b of its flow path (with C or Q_N).
    critical_pressure_ratio: Number, dimensionless, RequiredIn("ISO form"), Below(ISO_LAMINAR_RATIO);
    ..rating_curve_keys {
        /// Its flow path as a catalogue curve instead of C (or Q_N) and b: rows
        /// `[p_down/p_up, mass flow kg/s]` at the rated inlet state, from ratio 0 to `[1, 0]`.
    }
}

/// Its flow path is rated by one of C, Q_N (with b) and a curve.
fn regulator_problems(x: &RegulatorSpec) -> Vec<Problem> {
    rating_problems("regulator", "1500 Nl/min", &x.rating_keys())
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Regulator {
    pub name: String,
    pub from: usize,
    pub to: usize,
    /// A relieving regulator's exhaust.
    pub exhaust: Option<usize>,
    /// Set point, Pa gauge: a constant, a table or an FMU input.
    pub set_pressure_pa: Param<Pressure>,
    pub ambient_pressure_pa: f64,
    pub regulation_range_pa: f64,
    /// Its flow path's rating: C (from `nominal_flow` when given so) and b, or a curve; the
    /// relief path's too.
    pub rating: PathRating,
}

/// v clamped to 0 … 1, with v's derivatives between (a dual number's).
#[inline(always)]
fn unit_clamp<T: Scalar>(v: T) -> T {
    if v.re() <= 0.0 {
        T::zero()
    } else if v.re() >= 1.0 {
        c(1.0)
    } else {
        v
    }
}

impl Regulator {
    /// The main seat's opening, 0..1, at gauge set point `set_pa` and outlet pressure `p_out`.
    #[inline(always)]
    pub fn opening<T: Scalar>(&self, set_pa: T, p_out_pa: T) -> T {
        unit_clamp((set_pa + self.ambient_pressure_pa - p_out_pa) / self.regulation_range_pa)
    }

    /// The relief seat's opening, 0..1 (0 for a non-relieving regulator).
    #[inline(always)]
    pub fn relief_opening<T: Scalar>(&self, set_pa: T, p_out_pa: T) -> T {
        if self.exhaust.is_none() {
            return T::zero();
        }
        unit_clamp((p_out_pa - set_pa - self.ambient_pressure_pa) / self.regulation_range_pa)
    }

    /// The flow of its fully open path from node state `a` to `b` (its rating's), signed,
    /// kg/s.
    #[inline(always)]
    fn path_flow<T: Scalar>(&self, a: NodeState<T>, b: NodeState<T>) -> T {
        self.rating.signed_mass_flow_kg_per_s(a, b)
    }

    /// (inlet flow `from` → `to`, relief flow `to` → `exhaust`), kg/s.
    #[inline(always)]
    pub fn flows<T: Scalar>(&self, set_pa: T, nodes: &[NodeState<T>]) -> (T, T) {
        let out = nodes[self.to];
        let main = self.opening(set_pa, out.pressure_pa) * self.path_flow(nodes[self.from], out);
        let relief = match self.exhaust {
            Some(ex) => {
                self.relief_opening(set_pa, out.pressure_pa) * self.path_flow(out, nodes[ex])
            }
            None => T::zero(),
        };
        (main, relief)
    }

    /// Opening switch `j`'s outlet pressure, Pa absolute, at gauge set point `set_pa`, if the
    /// regulator has it (see [`OPENING_SWITCHES`]).
    #[inline]
    fn switch_point_pa(&self, j: usize, set_pa: f64) -> Option<f64> {
        let set_abs = set_pa + self.ambient_pressure_pa;
        match j {
            0 => Some(set_abs),
            1 => Some(set_abs - self.regulation_range_pa),
            2 if self.exhaust.is_some() => Some(set_abs + self.regulation_range_pa),
            _ => None,
        }
    }

    /// Its rated paths: the flow path `from` → `to`, and a relieving regulator's relief
    /// path `to` → `exhaust`.
    fn ratio_paths(&self) -> RatedPaths<'_, 2> {
        self.rating.paths([
            ("flow", Some((self.from, self.to))),
            ("relief", self.exhaust.map(|ex| (self.to, ex))),
        ])
    }
}

impl Build for RegulatorSpec {
    type Component = Regulator;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> Regulator {
        Regulator {
            name: self.name.clone(),
            from: node(&self.from),
            to: node(&self.to),
            exhaust: self.exhaust.as_deref().map(node),
            set_pressure_pa: self.set_pressure.to_param(),
            ambient_pressure_pa: self.ambient_pressure,
            regulation_range_pa: self.regulation_range,
            // One rating is given (validated).
            rating: PathRating::from_keys(&self.rating_keys()),
        }
    }
}

impl Component for Regulator {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!("set_pressure" => set_pressure_pa);
}

impl Link for Regulator {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
}

/// The ends of travel of its seats' openings, points of the outlet pressure p_o, each two
/// events after the paths' ratio kinks: 2j where p_o rises through point j (g = p_o − point),
/// 2j + 1 where it falls through it (−g; the set point's with [`SET_POINT_MARGIN`]). The set
/// point is where the main seat closes and the relief seat cracks: one switch of both (two
/// events of one function would fire together).
const OPENING_SWITCHES: [&str; 3] = ["set", "main seat's fully open", "relief seat's fully open"];

/// The set point's events are located this far past it (relative to the absolute set point),
/// either way. A regulator without draw converges onto the set point itself (no flow there)
/// and holds its outlet on it to round-off, where exact events fire on that round-off:
/// `examples/double_acting`'s regulator fired 143 times holding its line, each a restart of
/// the integrator. 1e-9·p is millions of ulps of the pressure, and the step that ends there
/// integrates across the kink over a change of p_o of 1e-9·p only.
const SET_POINT_MARGIN: f64 = 1e-9;

/// Its first opening event (the paths' ratio events come first).
const FIRST_OPENING_EVENT: usize = RatedPaths::<'static, 2>::EVENTS;

/// Which of [`Regulator`]'s outputs.
const OPEN_FRACTION: usize = 0;
const RELIEF_OPEN_FRACTION: usize = 1;

impl Element for Regulator {
    const KIND: &'static Kind = &KIND;
    const OUTPUTS: &'static [Output] = &[
        Output::Extra {
            variable: Variable {
                suffix: "open_fraction",
                unit: Unit::dimensionless,
                description: "fraction open of the main seat of {}, 0..1",
            },
            discrete: false,
        },
        Output::Extra {
            variable: Variable {
                suffix: "relief_open_fraction",
                unit: Unit::dimensionless,
                description: "fraction open of the relief seat of {}, 0..1 (0: not relieving)",
            },
            discrete: false,
        },
        Output::Extra {
            variable: Variable {
                suffix: "relief_mdot",
                unit: Unit::mass_rate,
                description: "mass flow vented by {} from its outlet to its exhaust, kg/s",
            },
            discrete: false,
        },
    ];
    /// Its two paths' ratio kinks (or curve rows): events 0 … 3 of the flow path, 4 … 7 of the
    /// relief path;
    /// then its openings' ends of travel, 8 … 13 ([`OPENING_SWITCHES`]).
    const EVENTS: usize = FIRST_OPENING_EVENT + 2 * OPENING_SWITCHES.len();
    const SWITCHES: bool = true;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [Some(self.from), Some(self.to), self.exhaust]
            .into_iter()
            .flatten()
    }

    fn has_events(&self) -> bool {
        true
    }

    /// Ratio kinks and ends of travel alike are kinks of a continuous law: no state changes.
    fn event_only_restarts(&self, _e: usize) -> bool {
        true
    }

    /// The laminar points of its (C, b) paths are located both ways (`ratio_kinks`); a
    /// curve's rows are pairs h and −h already.
    fn event_both_ways(&self, e: usize) -> bool {
        e < FIRST_OPENING_EVENT && self.ratio_paths().is_both_ways(e)
    }

    /// A curve's row events on a path it lacks or of a parity without rows.
    fn event_never_fires(&self, e: usize) -> bool {
        e < FIRST_OPENING_EVENT && self.ratio_paths().never_fires(e)
    }

    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        if e < FIRST_OPENING_EVENT {
            return self.ratio_paths().event_value(e, at);
        }
        let k = e - FIRST_OPENING_EVENT;
        let set_pa = (at.pv)(&self.set_pressure_pa);
        let point = self.switch_point_pa(k / 2, set_pa)?;
        // Past the set point by its margin, rising (g ≥ 0 above it) and falling alike.
        let margin = if k / 2 == 0 {
            SET_POINT_MARGIN * (set_pa + self.ambient_pressure_pa)
        } else {
            0.0
        };
        let p_out = (at.node)(self.to).pressure_pa;
        Some(Poppet::pair(k, p_out - point - Poppet::pair(k, margin)))
    }

    fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        if e < FIRST_OPENING_EVENT {
            self.ratio_paths().event_pressure_gradient(e, at, push);
            return;
        }
        let k = e - FIRST_OPENING_EVENT;
        if self.switch_point_pa(k / 2, 0.0).is_some() {
            // g = p_o − point (the set point reads no pressure).
            push(self.to, Poppet::pair(k, 1.0));
        }
    }

    fn event_description(&self, e: usize) -> String {
        if e < FIRST_OPENING_EVENT {
            let what = self.ratio_paths().describe(e);
            return format!("regulator `{}`: {what}", self.name);
        }
        let k = e - FIRST_OPENING_EVENT;
        format!(
            "regulator `{}`: its outlet pressure {} through its {} point",
            self.name,
            Poppet::way(k),
            OPENING_SWITCHES.get(k / 2).unwrap_or(&"?")
        )
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (r, out) in items.iter().zip(at.flows.iter_mut()) {
            let (main, relief) = r.flows(e.pv(&r.set_pressure_pa), e.nodes);
            e.transfer(r.from, r.to, main, dy);
            if let Some(ex) = r.exhaust {
                e.transfer(r.to, ex, relief, dy);
            }
            *out = main;
        }
    }

    fn extra_output<T: Scalar>(
        &self,
        k: usize,
        _s: &[T],
        _gas: &IdealGas,
        nodes: &[NodeState<T>],
        pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        let set = pv(&self.set_pressure_pa);
        let p_out = nodes[self.to].pressure_pa;
        match k {
            OPEN_FRACTION => self.opening(set, p_out),
            RELIEF_OPEN_FRACTION => self.relief_opening(set, p_out),
            _ => self.flows(set, nodes).1,
        }
    }

    fn extra_output_reads(&self, k: usize) -> Reads {
        Reads {
            keys: &["set_pressure"],
            states: &[],
            pressures: true,
            temperatures: k > RELIEF_OPEN_FRACTION,
        }
    }
}
