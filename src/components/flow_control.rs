//! One-way flow control valve: a throttle (a needle) in parallel with a check valve, the usual
//! meter-out speed control of a cylinder (ISO 1219 symbol; Beater, *Pneumatic Drives*, ch. 5.3).
//! From `from` to `to` the flow is throttled; from `to` back to `from` it passes the throttle
//! and the check valve (free flow):
//!   ṁ = x·ṁ_ISO(C, b; from → to) − x_c·ṁ_ISO(C_c, b; to → from),
//! both paths the ISO 6358 law (`crate::components::orifice`, signed; the check's one way),
//! x the needle's opening (0 … 1, an FMU input), x_c the check's poppet opening, linear in
//! Δp = p_to − p_from between its cracking and full-flow pressure differences (the orifice's
//! [`Poppet`]). It is exactly an ISO 6358 orifice (the throttle) in parallel with a one-way ISO
//! 6358 orifice with those pressures from `to` to `from` (the verification test). The check's
//! kinks are events as the orifice's are: Δp_check through its cracking and full-flow points,
//! each both ways; so are the pressure-ratio kinks of its paths (b, where they choke, and the
//! laminar ratio; `crate::components::ratio_kinks`), one set for both, as they join the same
//! two nodes with the same b.
//!
//! A catalogue rates the throttle by its curve instead of C (`flow_table`, at a rated inlet
//! state; `crate::components::flow_table`): ṁ = x·ṁ_curve(from → to) − x_c·ṁ_ISO(C_c, b; to →
//! from), the check keeping its C_c and b; it is then exactly an orifice with that curve in
//! parallel with the check orifice. The curve's interior rows are the throttle's kinks,
//! located as events both ways in slots of their own (after the check's ratio kinks, which a
//! throttle rated by C and b shares; such a throttle never fires the curve's slots).

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c, max0};
use crate::components::NodeState;
use crate::components::element::{Build, Element, Eval, EventAt, Output, Reads, Slots, Variable};
use crate::components::keys::{Component, Kind, Link, Problem};
use crate::components::orifice::{ISO_LAMINAR_RATIO, Poppet, signed_iso6358_mass_flow_kg_per_s};
use crate::components::rating::{PathRating, RatedPaths, both_message, curve_problems};
use crate::components::ratio_kinks;
use crate::gas::IdealGas;
use crate::param::{Param, ParamValue};
use crate::units::{Ratio, Unit};

crate::declare_kind! {
    /// `[[flow_control]]`: a one-way flow control valve (throttle and check in parallel).
    kind FlowControlSpec = "flow_control", Link, gas, check = flow_control_problems;
    name: Name;
    from: Node;
    to: Node;
    /// C of the fully open throttle, m³/(s·Pa) (or `flow_table`).
    sonic_conductance: Number, sonic_conductance, None, Positive;
    /// b of both paths (the check's alone with `flow_table`).
    critical_pressure_ratio: Number, dimensionless, Required, Below(ISO_LAMINAR_RATIO);
    /// The needle's opening, 0..1: a number, a table or an FMU input.
    opening: Param, dimensionless, Number(1.0), Fraction;
    /// C of the check valve's free-flow path, m³/(s·Pa).
    check_sonic_conductance: Number, sonic_conductance, Required, Positive;
    /// The check opens once p_to − p_from exceeds this, Pa.
    cracking_pressure: Number, pressure, Number(0.0), NonNegative;
    /// The check is fully open from this p_to − p_from on, Pa.
    full_flow_pressure: Number, pressure, Required, Positive;
    ..rating_curve_keys {
        /// The fully open throttle as a catalogue curve instead of its C: rows
        /// `[p_down/p_up, mass flow kg/s]` at the rated inlet state, from ratio 0 to `[1, 0]`.
    }
}

/// The throttle is rated by one of C and a curve; the check's full-flow point is above its
/// cracking one.
fn flow_control_problems(x: &FlowControlSpec) -> Vec<Problem> {
    let mut out = curve_problems("flow control", &x.rating_keys());
    match (x.sonic_conductance, &x.flow_table) {
        (Some(_), Some(_)) => out.push(Problem {
            key: Some("sonic_conductance"),
            message: both_message("sonic_conductance"),
        }),
        (None, None) => out.push(Problem {
            key: None,
            message: "missing the flow control's throttle rating: `sonic_conductance` (C) or \
                      a catalogue curve `flow_table`"
                .to_string(),
        }),
        _ => {}
    }
    if x.full_flow_pressure <= x.cracking_pressure {
        out.push(Problem {
            key: Some("full_flow_pressure"),
            message: format!(
                "`full_flow_pressure` ({} Pa) must be above `cracking_pressure` ({} Pa)",
                x.full_flow_pressure, x.cracking_pressure
            ),
        });
    }
    out
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowControl {
    pub name: String,
    pub from: usize,
    pub to: usize,
    /// The fully open throttle's rating: its C and the check's b, or a curve.
    pub throttle: PathRating,
    /// b of the check (and of a throttle rated by C).
    pub critical_pressure_ratio: f64,
    /// The needle's opening: a constant, a table or an FMU input.
    pub opening: Param<Ratio>,
    pub check_sonic_conductance_m3_per_s_pa: f64,
    pub check: Poppet,
}

impl FlowControl {
    /// (throttle flow from → to, check flow to → from), kg/s.
    #[inline(always)]
    pub fn flows<T: Scalar>(&self, x: T, from: NodeState<T>, to: NodeState<T>) -> (T, T) {
        let b = c(self.critical_pressure_ratio);
        let throttle = x * self.throttle.signed_mass_flow_kg_per_s(from, to);
        let xc = self.check.opening(to.pressure_pa - from.pressure_pa);
        let check = max0(
            xc * signed_iso6358_mass_flow_kg_per_s(
                c(self.check_sonic_conductance_m3_per_s_pa),
                b,
                to,
                from,
            ),
        );
        (throttle, check)
    }
}

impl Build for FlowControlSpec {
    type Component = FlowControl;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> FlowControl {
        FlowControl {
            name: self.name.clone(),
            from: node(&self.from),
            to: node(&self.to),
            // One rating is given (validated).
            throttle: PathRating::from_keys(&self.rating_keys()),
            critical_pressure_ratio: self.critical_pressure_ratio,
            opening: self.opening.to_param(),
            check_sonic_conductance_m3_per_s_pa: self.check_sonic_conductance,
            check: Poppet {
                cracking_pressure_pa: self.cracking_pressure,
                full_flow_pressure_pa: self.full_flow_pressure,
            },
        }
    }
}

impl Component for FlowControl {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!("opening" => opening);
}

impl Link for FlowControl {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
}

/// Events of the check's switch points (the first of [`FlowControl`]'s).
const CHECK_EVENTS: usize = 2 * Poppet::SWITCHES.len();

/// The first event of a throttle's curve rows (after the check's switches and ratio kinks).
const CURVE_EVENTS: usize = CHECK_EVENTS + ratio_kinks::EVENTS;

impl FlowControl {
    /// The throttle's curve rows as events, if it is rated by a curve.
    fn curve_paths(&self) -> Option<RatedPaths<'_, 1>> {
        matches!(self.throttle, PathRating::Table(_)).then(|| {
            self.throttle
                .paths([("throttle", Some((self.from, self.to)))])
        })
    }
}

impl Element for FlowControl {
    const KIND: &'static Kind = &KIND;
    const OUTPUTS: &'static [Output] = &[Output::Extra {
        variable: Variable {
            suffix: "check_mdot",
            unit: Unit::mass_rate,
            description: "free flow through the check valve of {}, from `to` to `from`, kg/s",
        },
        discrete: false,
    }];
    /// The check's switch points, then its paths' ratio kinks, then a throttle curve's rows.
    const EVENTS: usize = CURVE_EVENTS + RatedPaths::<'static, 1>::EVENTS;
    const SWITCHES: bool = true;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.from, self.to].into_iter()
    }

    fn has_events(&self) -> bool {
        true
    }

    /// The ratio kinks change no state: the driver only restarts its integrator there.
    fn event_only_restarts(&self, e: usize) -> bool {
        e >= CHECK_EVENTS
    }

    /// The laminar points of its (C, b) path are located both ways; a curve's rows are pairs
    /// h and −h already.
    fn event_both_ways(&self, e: usize) -> bool {
        (CHECK_EVENTS..CURVE_EVENTS).contains(&e) && ratio_kinks::is_both_ways(e - CHECK_EVENTS)
    }

    /// A throttle's curve rows, only where it has such rows.
    fn event_never_fires(&self, e: usize) -> bool {
        e >= CURVE_EVENTS
            && self
                .curve_paths()
                .is_none_or(|p| p.never_fires(e - CURVE_EVENTS))
    }

    /// Event 2j: Δp_check = p_to − p_from rises through the check's switch j; 2j + 1: it
    /// falls through it ([`Poppet::event_value`]); then the ratio kinks; then a curve's rows.
    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        if e >= CURVE_EVENTS {
            return self.curve_paths()?.event_value(e - CURVE_EVENTS, at);
        }
        if e >= CHECK_EVENTS {
            let (k, b) = (e - CHECK_EVENTS, self.critical_pressure_ratio);
            return Some(ratio_kinks::event_value(k, b, self.from, self.to, at));
        }
        let dp = (at.node)(self.to).pressure_pa - (at.node)(self.from).pressure_pa;
        Some(self.check.event_value(e, dp))
    }

    fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        if e >= CURVE_EVENTS {
            if let Some(p) = self.curve_paths() {
                p.event_pressure_gradient(e - CURVE_EVENTS, at, push);
            }
        } else if e >= CHECK_EVENTS {
            let (k, b) = (e - CHECK_EVENTS, self.critical_pressure_ratio);
            ratio_kinks::event_pressure_gradient(k, b, self.from, self.to, at, push);
        } else {
            Poppet::pair_gradient(e, self.to, self.from, push);
        }
    }

    fn event_description(&self, e: usize) -> String {
        if let (true, Some(p)) = (e >= CURVE_EVENTS, self.curve_paths()) {
            return format!(
                "flow control `{}`: {}",
                self.name,
                p.describe(e - CURVE_EVENTS)
            );
        }
        if e >= CHECK_EVENTS {
            let k = e - CHECK_EVENTS;
            return format!("flow control `{}`: {}", self.name, ratio_kinks::describe(k));
        }
        format!(
            "flow control `{}`: the check's Δp {} through its {} point",
            self.name,
            Poppet::way(e),
            Poppet::SWITCHES.get(e / 2).unwrap_or(&"?")
        )
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (f, out) in items.iter().zip(at.flows.iter_mut()) {
            let (nf, nt) = (e.nodes[f.from], e.nodes[f.to]);
            let (throttle, check) = f.flows(e.pv(&f.opening), nf, nt);
            let mdot = throttle - check;
            e.transfer(f.from, f.to, mdot, dy);
            *out = mdot;
        }
    }

    fn extra_output<T: Scalar>(
        &self,
        _k: usize,
        _s: &[T],
        _gas: &IdealGas,
        nodes: &[NodeState<T>],
        pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        self.flows(pv(&self.opening), nodes[self.from], nodes[self.to])
            .1
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
