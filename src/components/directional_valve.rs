//! Directional control valve (ISO 1219 symbols; ISO 5599 port numbers): one component for the
//! 2/2, 3/2, 5/2 and 5/3 valves, told apart by the ports given. Port `p` (1) is the supply,
//! `a` (2) and `b` (4) the working ports, `ea` (3) and `eb` (5) their exhausts:
//!
//! | ports given | valve | paths open at spool position s (0 … 1) |
//! |---|---|---|
//! | p, a | 2/2 | p–a: s (normally open: 1 − s) |
//! | p, a, ea | 3/2 | p–a: s, a–ea: 1 − s (normally open: swapped) |
//! | p, a, b, ea, eb | 5/2 | p–a and b–eb: s; p–b and a–ea: 1 − s |
//! | same, `three_position` | 5/3 | s in −1 … 1: p–a, b–eb: max(s, 0); p–b, a–ea: max(−s, 0); centre paths: 1 − \|s\| |
//!
//! The 5/3's centre is closed, exhausted (a–ea and b–eb open) or pressurized (p–a and p–b
//! open). Each path is the ISO 6358 law of the valve's rated flow path (C or Q_N, and b;
//! `crate::components::orifice`, signed) times its opening, as a valve's spool uncovers its
//! ports in proportion to its travel (Beater, *Pneumatic Drives*, ch. 5.2; Simscape's
//! directional valves with a linear opening). The spool position is a parameter: a number, a
//! table (a ramp between the switching instants is the catalogue's response time, ISO 12238),
//! or an FMU input; s outside its range is taken at its end. An `opening_table` maps each
//! path's travel to its opening, piecewise linear (an overlapped or underlapped spool); a linear
//! time table of s gets a knot wherever it crosses a row's travel, so that each kink of the
//! opening in time is a time-table breakpoint. Each path's pressure-ratio kinks
//! (b, where it chokes, and the laminar ratio) are events as an orifice's are, whatever its
//! opening (`crate::components::ratio_kinks`). A catalogue curve (`flow_table`, the rated path's
//! flow against the pressure ratio at a rated inlet state; `crate::components::flow_table`)
//! rates the paths instead of C and b: each open path passes its opening times the curve's
//! flow, and the curve's interior rows are each path's kinks, located as events both ways in
//! its ratio kinks' slots (`crate::components::rating::RatedPaths`).

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::components::NodeState;
use crate::components::element::{Build, Element, Eval, EventAt, Output, Reads, Slots, Variable};
use crate::components::keys::{Component, Kind, Link, Problem};
use crate::components::orifice::ISO_LAMINAR_RATIO;
use crate::components::rating::{PathRating, RatedPaths, rating_problems};
use crate::gas::IdealGas;
use crate::param::{Interpolation, Param, ParamSpec, ParamValue};
use crate::units::{Ratio, Unit};

crate::declare_kind! {
    /// `[[directional_valve]]`: a 2/2, 3/2, 5/2 or 5/3 directional control valve.
    kind DirectionalValveSpec = "directional_valve", Link, gas, check = valve_problems;
    name: Name;
    /// Supply port (1).
    p: Node;
    /// Working port (2).
    a: Node;
    /// Second working port (4): a 5/2 or 5/3.
    b: Node, dimensionless, None;
    /// Exhaust of `a` (3): a 3/2, 5/2 or 5/3.
    ea: Node, dimensionless, None;
    /// Exhaust of `b` (5): a 5/2 or 5/3.
    eb: Node, dimensionless, None, MayShare("ea");
    /// Spool position: 0 … 1 (−1 … 1 for a 5/3): a number, a table or an FMU input.
    position: Param, dimensionless, Number(0.0), Any;
    /// C of each flow path, m³/(s·Pa) (or `nominal_flow`, or `flow_table`).
    sonic_conductance: Number, sonic_conductance, None, Positive;
    /// Q_N of each flow path (ISO 6358), kg/s or "Nl/min".
    nominal_flow: Number, mass_rate, None, Positive;
    /// b of each flow path (with C or Q_N).
    critical_pressure_ratio: Number, dimensionless, RequiredIn("ISO form"), Below(ISO_LAMINAR_RATIO);
    /// A 2/2 or 3/2 that is open (p–a) at rest.
    normally_open: Flag, dimensionless, Flag(false);
    /// A 5/3: three positions, s in −1 … 1.
    three_position: Flag, dimensionless, Flag(false);
    /// A 5/3 whose centre connects a–ea and b–eb.
    centre_exhausted: Flag, dimensionless, Flag(false);
    /// A 5/3 whose centre connects p–a and p–b.
    centre_pressurized: Flag, dimensionless, Flag(false);
    /// A path's opening against the spool's travel towards it: rows `[travel, opening]`, from
    /// `[0, 0]` to travel 1, openings 0 … 1 not decreasing (linear when absent).
    opening_table: Curve(dimensionless), dimensionless, None, Fraction;
    /// The spool's first-order lag τ, s: it follows `position` as ds/dt = (position − s)/τ
    /// (`crate::components::lagged_valve`); absent: the spool is at `position`.
    response_time: Number, time, None, Positive;
    ..rating_curve_keys {
        /// Each flow path as a catalogue curve instead of C (or Q_N) and b: rows
        /// `[p_down/p_up, mass flow kg/s]` at the rated inlet state, from ratio 0 to `[1, 0]`.
    }
}

/// The range of a spool's lag τ, s: below it 1/τ nears the doubles' end and no step resolves
/// it; above it the spool never moves within a run (a slow command is a ramp table).
pub const RESPONSE_TIME_RANGE_S: (f64, f64) = (1e-9, 1e3);

fn valve_problems(x: &DirectionalValveSpec) -> Vec<Problem> {
    let mut out = rating_problems("valve", "800 Nl/min", &x.rating_keys());
    let mut problem = |message: &str| {
        out.push(Problem {
            key: None,
            message: message.to_string(),
        })
    };
    let ports = (x.b.is_some(), x.ea.is_some(), x.eb.is_some());
    let five = ports == (true, true, true);
    if !matches!(ports, (false, false, false) | (false, true, false)) && !five {
        problem(
            "a directional valve has ports `p`, `a` (2/2), and `ea` (3/2), or `p`, `a`, `b`, \
             `ea`, `eb` (5/2, 5/3)",
        );
    }
    if x.three_position && !five {
        problem("`three_position` (a 5/3) needs the five ports `p`, `a`, `b`, `ea`, `eb`");
    }
    if (x.centre_exhausted || x.centre_pressurized) && !x.three_position {
        problem("a centre (`centre_exhausted`, `centre_pressurized`) needs `three_position`");
    }
    if x.centre_exhausted && x.centre_pressurized {
        problem("give one centre: `centre_exhausted` or `centre_pressurized`, not both");
    }
    if x.normally_open && five {
        problem("`normally_open` is for a 2/2 or 3/2; a 5/2's rest position is p–b, a–ea");
    }
    let (lo, hi) = RESPONSE_TIME_RANGE_S;
    if let Some(tau) = x.response_time
        && tau.is_finite()
        && tau > 0.0
        && !(lo..=hi).contains(&tau)
    {
        out.push(Problem {
            key: Some("response_time"),
            message: format!(
                "the spool's response time must be within {lo:e} s … {hi:e} s (it is {tau:e} \
                 s){}",
                if tau > hi {
                    "; a slower switching is a ramp of `position` as a time table"
                } else {
                    ""
                }
            ),
        });
    }
    // Cells that break the key's rule are reported at the cell; the shape on valid cells.
    if let Some(rows) = &x.opening_table
        && rows
            .iter()
            .all(|[s, o]| s.is_finite() && (0.0..=1.0).contains(o))
        && let Some(message) = opening_table_problem(rows)
    {
        out.push(Problem {
            key: Some("opening_table"),
            message,
        });
    }
    out
}

/// What is wrong with an opening table's rows `[travel, opening]` (rows named 1-based), if
/// anything.
fn opening_table_problem(rows: &[[f64; 2]]) -> Option<String> {
    if rows.len() < 2 {
        return Some(format!(
            "an opening table needs at least two rows [travel, opening], from [0, 0] to travel \
             1; it has {}",
            rows.len()
        ));
    }
    for (i, w) in rows.windows(2).enumerate() {
        let ([s0, o0], [s1, o1]) = (w[0], w[1]);
        if s1 <= s0 {
            return Some(format!(
                "row {}: the spool travel must increase row by row ({s1} after {s0})",
                i + 2
            ));
        }
        if o1 < o0 {
            return Some(format!(
                "row {}: the opening must not decrease as the spool travels towards the path \
                 ({o1} after {o0})",
                i + 2
            ));
        }
    }
    if rows[0] != [0.0, 0.0] {
        return Some(format!(
            "row 1: the table must start at [0, 0] (a path is closed with the spool away from \
             it); it starts at [{}, {}]",
            rows[0][0], rows[0][1]
        ));
    }
    let last = rows[rows.len() - 1][0];
    if last != 1.0 {
        return Some(format!(
            "row {}: the table must end at travel 1 (it ends at {last})",
            rows.len()
        ));
    }
    None
}

/// The valve's function, from its ports and flags.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Function {
    TwoTwo,
    ThreeTwo,
    FiveTwo,
    /// A 5/3 and its centre.
    FiveThree(Centre),
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Centre {
    Closed,
    Exhausted,
    Pressurized,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DirectionalValve {
    pub name: String,
    pub p: usize,
    pub a: usize,
    /// b, ea, eb: `usize::MAX` where the valve has no such port (never read then).
    pub b: usize,
    pub ea: usize,
    pub eb: usize,
    pub function: Function,
    pub normally_open: bool,
    /// Spool position: a constant, a table or an FMU input.
    pub position: Param<Ratio>,
    /// Each path's rating: C (from `nominal_flow` when given so) and b, or a curve.
    pub rating: PathRating,
    /// A path's opening against the spool's travel towards it, rows `[travel, opening]`
    /// (validated); `None`: the opening is the travel.
    pub opening_table: Option<Vec<[f64; 2]>>,
}

/// The openings of the paths p–a, p–b, a–ea, b–eb at spool position s.
#[derive(Clone, Copy, Debug)]
pub struct Openings<T> {
    pub pa: T,
    pub pb: T,
    pub aea: T,
    pub beb: T,
}

#[inline(always)]
fn clamp<T: Scalar>(v: T, lo: f64, hi: f64) -> T {
    if v.re() <= lo {
        c(lo)
    } else if v.re() >= hi {
        c(hi)
    } else {
        v
    }
}

impl DirectionalValve {
    /// The paths' openings at spool position `s` (taken at its end outside its range): each
    /// path's travel, through the opening table if the valve has one.
    #[inline(always)]
    pub fn openings<T: Scalar>(&self, s: T) -> Openings<T> {
        let x = self.travels(s);
        match &self.opening_table {
            None => x,
            Some(rows) => Openings {
                pa: table_opening(rows, x.pa),
                pb: table_opening(rows, x.pb),
                aea: table_opening(rows, x.aea),
                beb: table_opening(rows, x.beb),
            },
        }
    }

    /// Each path's travel towards it, 0 … 1, at spool position `s`: its opening under the
    /// linear law.
    #[inline(always)]
    fn travels<T: Scalar>(&self, s: T) -> Openings<T> {
        let z = T::zero();
        let one = c::<T>(1.0);
        match self.function {
            Function::TwoTwo | Function::ThreeTwo => {
                let s = clamp(s, 0.0, 1.0);
                let (on, rest) = if self.normally_open {
                    (one - s, s)
                } else {
                    (s, one - s)
                };
                let aea = if self.function == Function::ThreeTwo {
                    rest
                } else {
                    z
                };
                Openings {
                    pa: on,
                    pb: z,
                    aea,
                    beb: z,
                }
            }
            Function::FiveTwo => {
                let s = clamp(s, 0.0, 1.0);
                Openings {
                    pa: s,
                    pb: one - s,
                    aea: one - s,
                    beb: s,
                }
            }
            Function::FiveThree(centre) => {
                let s = clamp(s, -1.0, 1.0);
                let (fwd, back) = if s.re() >= 0.0 { (s, z) } else { (z, -s) };
                let mid = one - fwd - back;
                let (pc, ec) = match centre {
                    Centre::Closed => (z, z),
                    Centre::Exhausted => (z, mid),
                    Centre::Pressurized => (mid, z),
                };
                Openings {
                    pa: fwd + pc,
                    pb: back + pc,
                    aea: back + ec,
                    beb: fwd + ec,
                }
            }
        }
    }

    /// The flow of a path of opening `x` from port node `from` to `to`, signed, kg/s: 0 on a
    /// port the valve does not have.
    #[inline(always)]
    fn path<T: Scalar>(&self, x: T, from: usize, to: usize, nodes: &[NodeState<T>]) -> T {
        if from == NO_PORT || to == NO_PORT {
            return T::zero();
        }
        x * self
            .rating
            .signed_mass_flow_kg_per_s(nodes[from], nodes[to])
    }

    /// The paths' flows (p→a, p→b, a→ea, b→eb), kg/s, signed.
    #[inline(always)]
    pub fn flows<T: Scalar>(&self, s: T, nodes: &[NodeState<T>]) -> [T; 4] {
        let x = self.openings(s);
        let [pa, pb, aea, beb] = self.ports();
        [
            self.path(x.pa, pa.0, pa.1, nodes),
            self.path(x.pb, pb.0, pb.1, nodes),
            self.path(x.aea, aea.0, aea.1, nodes),
            self.path(x.beb, beb.0, beb.1, nodes),
        ]
    }

    /// The flows out of the valve through a, through b and through its exhausts, kg/s, at spool
    /// position `s` (the outputs [`PORT_FLOW_OUTPUTS`]).
    #[inline]
    pub fn port_flows<T: Scalar>(&self, s: T, nodes: &[NodeState<T>]) -> [T; 3] {
        let [pa, pb, aea, beb] = self.flows(s, nodes);
        [pa - aea, pb - beb, aea + beb]
    }

    /// The valve's terms at spool position `s`: each path's flow moved between its ports in
    /// `dy`; its flows (p→a, p→b, a→ea, b→eb), kg/s, signed.
    #[inline(always)]
    pub fn transfer_at<T: Scalar>(&self, s: T, e: &Eval<'_, T>, dy: &mut [T]) -> [T; 4] {
        let flows = self.flows(s, e.nodes);
        for (&(from, to), &mdot) in self.ports().iter().zip(&flows) {
            if from != NO_PORT && to != NO_PORT {
                e.transfer(from, to, mdot, dy);
            }
        }
        flows
    }

    /// The (from, to) ports of the paths p–a, p–b, a–ea, b–eb.
    pub fn ports(&self) -> [(usize, usize); 4] {
        [
            (self.p, self.a),
            (self.p, self.b),
            (self.a, self.ea),
            (self.b, self.eb),
        ]
    }

    /// Its rated paths p–a, p–b, a–ea, b–eb (in the order of [`DirectionalValve::ports`]),
    /// those it has.
    fn ratio_paths(&self) -> RatedPaths<'_, 4> {
        let [pa, pb, aea, beb] = self
            .ports()
            .map(|(from, to)| (from != NO_PORT && to != NO_PORT).then_some((from, to)));
        self.rating
            .paths([("p–a", pa), ("p–b", pb), ("a–ea", aea), ("b–eb", beb)])
    }
}

/// The opening at travel `x` (0 … 1) of a validated table: linear between its rows.
#[inline]
fn table_opening<T: Scalar>(rows: &[[f64; 2]], x: T) -> T {
    let n = rows.len();
    // The piece k: rows[k][0] ≤ x ≤ rows[k + 1][0].
    let k = rows[1..n - 1].partition_point(|r| r[0] <= x.re());
    let ([s0, o0], [s1, o1]) = (rows[k], rows[k + 1]);
    (x - s0) * ((o1 - o0) / (s1 - s0)) + o0
}

/// The spool positions where an opening table's kinks lie: each row's travel as the travel
/// towards a path (s) and away from it (1 − s), and for a 5/3 both of them on either side.
fn kink_positions(rows: &[[f64; 2]], five_three: bool) -> Vec<f64> {
    let mut out: Vec<f64> = rows.iter().flat_map(|r| [r[0], 1.0 - r[0]]).collect();
    if five_three {
        let neg: Vec<f64> = out.iter().map(|v| -v).collect();
        out.extend(neg);
    }
    out.sort_by(f64::total_cmp);
    out.dedup();
    out
}

/// A linear time table of the spool position with a knot added wherever it crosses one of
/// `kinks` inside a piece: the same ramp, whose crossings of the opening table's kinks are
/// then time-table breakpoints, where the driver stops and restarts its integrator.
fn with_kink_knots(table: &crate::param::TableSpec, kinks: &[f64]) -> crate::param::TableSpec {
    let mut rows = Vec::with_capacity(table.table.len());
    for w in table.table.windows(2) {
        let ([t0, v0], [t1, v1]) = (w[0], w[1]);
        rows.push(w[0]);
        let (lo, hi) = (v0.min(v1), v0.max(v1));
        let mut inside: Vec<[f64; 2]> = kinks
            .iter()
            .filter(|&&k| k > lo && k < hi)
            .map(|&k| [t0 + (k - v0) / (v1 - v0) * (t1 - t0), k])
            // A crossing within the time axis's resolution of a knot is that knot's.
            .filter(|r| r[0] > t0 + 1e-9 * (t1 - t0) && r[0] < t1 - 1e-9 * (t1 - t0))
            .collect();
        inside.sort_by(|a, b| a[0].total_cmp(&b[0]));
        rows.extend(inside);
    }
    rows.extend(table.table.last().copied());
    crate::param::TableSpec {
        table: rows,
        interpolation: table.interpolation,
    }
}

/// The index of a port the valve does not have.
const NO_PORT: usize = usize::MAX;

impl Build for DirectionalValveSpec {
    type Component = DirectionalValve;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> DirectionalValve {
        let port = |p: &Option<String>| p.as_deref().map_or(NO_PORT, node);
        let function = match (self.b.is_some(), self.ea.is_some(), self.three_position) {
            (true, _, true) => Function::FiveThree(centre(self)),
            (true, _, false) => Function::FiveTwo,
            (false, true, _) => Function::ThreeTwo,
            (false, false, _) => Function::TwoTwo,
        };
        DirectionalValve {
            name: self.name.clone(),
            p: node(&self.p),
            a: node(&self.a),
            b: port(&self.b),
            ea: port(&self.ea),
            eb: port(&self.eb),
            function,
            normally_open: self.normally_open,
            position: match (&self.position, &self.opening_table) {
                (ParamSpec::Table(t), Some(rows)) if t.interpolation == Interpolation::Linear => {
                    let five_three = matches!(function, Function::FiveThree(_));
                    ParamSpec::Table(with_kink_knots(t, &kink_positions(rows, five_three)))
                        .to_param()
                }
                (p, _) => p.to_param(),
            },
            // One rating is given (validated).
            rating: PathRating::from_keys(&self.rating_keys()),
            opening_table: self.opening_table.clone(),
        }
    }
}

/// A 5/3's centre from its flags.
fn centre(x: &DirectionalValveSpec) -> Centre {
    if x.centre_exhausted {
        Centre::Exhausted
    } else if x.centre_pressurized {
        Centre::Pressurized
    } else {
        Centre::Closed
    }
}

impl Component for DirectionalValve {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!("position" => position);
}

impl Link for DirectionalValve {
    fn ends(&self) -> (usize, usize) {
        (self.p, self.a)
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
}

/// The flows through its ports as outputs (a lagged valve's too, after its spool), in the order
/// of [`DirectionalValve::port_flows`].
pub const PORT_FLOW_OUTPUTS: [Output; 3] = [
    Output::Extra {
        variable: Variable {
            suffix: "a_mdot",
            unit: Unit::mass_rate,
            description: "mass flow out of {} through its port a (2), kg/s",
        },
        discrete: false,
    },
    Output::Extra {
        variable: Variable {
            suffix: "b_mdot",
            unit: Unit::mass_rate,
            description: "mass flow out of {} through its port b (4), kg/s",
        },
        discrete: false,
    },
    Output::Extra {
        variable: Variable {
            suffix: "exhaust_mdot",
            unit: Unit::mass_rate,
            description: "mass flow out of {} through its exhausts ea (3) and eb (5), kg/s",
        },
        discrete: false,
    },
];

impl Element for DirectionalValve {
    const KIND: &'static Kind = &KIND;
    const OUTPUTS: &'static [Output] = &PORT_FLOW_OUTPUTS;
    /// Its four paths' ratio kinks (or curve rows), [`crate::components::ratio_kinks::EVENTS`]
    /// each, in the order of [`DirectionalValve::ports`].
    const EVENTS: usize = RatedPaths::<'static, 4>::EVENTS;
    const SWITCHES: bool = true;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.p, self.a, self.b, self.ea, self.eb]
            .into_iter()
            .filter(|&n| n != NO_PORT)
    }

    fn has_events(&self) -> bool {
        true
    }

    fn event_only_restarts(&self, _e: usize) -> bool {
        true
    }

    fn event_both_ways(&self, e: usize) -> bool {
        self.ratio_paths().is_both_ways(e)
    }

    /// A curve's row events on a path it lacks or of a parity without rows.
    fn event_never_fires(&self, e: usize) -> bool {
        self.ratio_paths().never_fires(e)
    }

    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        self.ratio_paths().event_value(e, at)
    }

    fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        self.ratio_paths().event_pressure_gradient(e, at, push);
    }

    fn event_description(&self, e: usize) -> String {
        let what = self.ratio_paths().describe(e);
        format!("directional valve `{}`: {what}", self.name)
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (v, out) in items.iter().zip(at.flows.iter_mut()) {
            let flows = v.transfer_at(e.pv(&v.position), e, dy);
            // Its `mdot`: the flow of its path p → a (its `Link` ends).
            *out = flows[0];
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
        self.port_flows(pv(&self.position), nodes)[k]
    }

    fn extra_output_reads(&self, _k: usize) -> Reads {
        Reads {
            keys: &["position"],
            states: &[],
            pressures: true,
            temperatures: true,
        }
    }
}
