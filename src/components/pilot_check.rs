//! Pilot-operated check valve: a check valve from `from` to `to` whose poppet a pilot piston can
//! hold open, so that the valve passes flow both ways (the usual way to hold a cylinder in
//! position and release it; ISO 1219 symbol; Beater, *Pneumatic Drives*, 2007, ch. 5.5).
//!
//! The poppet sees the control pressure (Simscape's "Pilot-Operated Check Valve (IL)" with the
//! pilot pressure as a gauge pressure at port X; k_p the pilot ratio, the pilot piston's area
//! over the poppet's)
//!   Δp_c = (p_from − p_to) + k_p·(p_pilot − p_amb),
//! and opens as an orifice's poppet does ([`Poppet`]): 0 up to the cracking pressure, linear to
//! 1 at the full-flow pressure. The open valve passes the signed ISO 6358 flow (C or Q_N, and
//! b), or its catalogue curve's (`flow_table`; `crate::components::rating`), times its opening,
//! from → to or back. With the pilot vented to ambient it is a plain
//! one-way check valve. Δp_c through the cracking and full-flow points, each both ways, are
//! events; so are its path's pressure-ratio kinks (b, where it chokes, and the laminar ratio;
//! `crate::components::ratio_kinks`), whatever its opening, as an orifice's are; a curve's
//! interior rows are located as events both ways in those slots
//! (`crate::components::rating::RatedPaths`).

use serde::{Deserialize, Serialize};

use crate::ad::Scalar;
use crate::components::NodeState;
use crate::components::element::{Build, Element, Eval, EventAt, Output, Reads, Slots, Variable};
use crate::components::keys::{Component, Kind, Link, Problem};
use crate::components::orifice::{ISO_LAMINAR_RATIO, Poppet};
use crate::components::rating::{PathRating, RatedPaths, rating_problems};
use crate::gas::IdealGas;
use crate::param::ParamValue;
use crate::units::Unit;

crate::declare_kind! {
    /// `[[pilot_check]]`: a pilot-operated check valve.
    kind PilotCheckSpec = "pilot_check", Link, gas, check = pilot_check_problems;
    name: Name;
    /// Inlet of the free direction (1).
    from: Node;
    /// Outlet of the free direction (2), the side it holds.
    to: Node;
    /// The pilot port (21): its gauge pressure, times `pilot_ratio`, helps open the poppet.
    pilot: Node;
    /// Pilot piston area over poppet area.
    pilot_ratio: Number, dimensionless, Required, Positive;
    /// The gauge pressure of the pilot is taken to this, Pa absolute.
    ambient_pressure: Number, pressure, Number(101_325.0), Positive;
    /// The poppet opens once Δp_c exceeds this, Pa.
    cracking_pressure: Number, pressure, Number(0.0), NonNegative;
    /// The poppet is fully open from this Δp_c on, Pa.
    full_flow_pressure: Number, pressure, Required, Positive;
    /// C of its flow path, m³/(s·Pa) (or `nominal_flow`, or `flow_table`).
    sonic_conductance: Number, sonic_conductance, None, Positive;
    /// Q_N of its flow path (ISO 6358), kg/s or "Nl/min".
    nominal_flow: Number, mass_rate, None, Positive;
    /// b of its flow path (with C or Q_N).
    critical_pressure_ratio: Number, dimensionless, RequiredIn("ISO form"), Below(ISO_LAMINAR_RATIO);
    ..rating_curve_keys {
        /// Its flow path as a catalogue curve instead of C (or Q_N) and b: rows
        /// `[p_down/p_up, mass flow kg/s]` at the rated inlet state, from ratio 0 to `[1, 0]`.
    }
}

/// Its path is rated by one of C, Q_N (with b) and a curve; the full-flow point is above the
/// cracking one.
fn pilot_check_problems(x: &PilotCheckSpec) -> Vec<Problem> {
    let mut out = rating_problems("valve", "300 Nl/min", &x.rating_keys());
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
pub struct PilotCheck {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub pilot: usize,
    pub pilot_ratio: f64,
    pub ambient_pressure_pa: f64,
    pub poppet: Poppet,
    /// Its path's rating: C (from `nominal_flow` when given so) and b, or a curve.
    pub rating: PathRating,
}

impl PilotCheck {
    /// Δp_c = (p_from − p_to) + k_p·(p_pilot − p_amb), Pa.
    #[inline(always)]
    pub fn control_pressure<T: Scalar>(&self, nodes: &[NodeState<T>]) -> T {
        nodes[self.from].pressure_pa - nodes[self.to].pressure_pa
            + (nodes[self.pilot].pressure_pa - self.ambient_pressure_pa) * self.pilot_ratio
    }

    /// Its flow from → to, kg/s, signed.
    #[inline(always)]
    pub fn flow<T: Scalar>(&self, nodes: &[NodeState<T>]) -> T {
        let x = self.poppet.opening(self.control_pressure(nodes));
        if x.re() == 0.0 {
            return T::zero();
        }
        x * self
            .rating
            .signed_mass_flow_kg_per_s(nodes[self.from], nodes[self.to])
    }

    /// Its rated path from → to.
    fn ratio_paths(&self) -> RatedPaths<'_, 1> {
        self.rating.paths([("flow", Some((self.from, self.to)))])
    }
}

/// Events of the poppet's switch points (the first of [`PilotCheck`]'s).
const POPPET_EVENTS: usize = 2 * Poppet::SWITCHES.len();

impl Build for PilotCheckSpec {
    type Component = PilotCheck;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> PilotCheck {
        PilotCheck {
            name: self.name.clone(),
            from: node(&self.from),
            to: node(&self.to),
            pilot: node(&self.pilot),
            pilot_ratio: self.pilot_ratio,
            ambient_pressure_pa: self.ambient_pressure,
            poppet: Poppet {
                cracking_pressure_pa: self.cracking_pressure,
                full_flow_pressure_pa: self.full_flow_pressure,
            },
            // One rating is given (validated).
            rating: PathRating::from_keys(&self.rating_keys()),
        }
    }
}

impl Component for PilotCheck {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!();
}

impl Link for PilotCheck {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
}

impl Element for PilotCheck {
    const KIND: &'static Kind = &KIND;
    const OUTPUTS: &'static [Output] = &[Output::Extra {
        variable: Variable {
            suffix: "open_fraction",
            unit: Unit::dimensionless,
            description: "fraction open of the poppet of {}, 0..1",
        },
        discrete: false,
    }];
    /// The poppet's switches ([`Poppet::SWITCHES`]) in Δp_c, each both ways, then its path's
    /// ratio kinks (or curve rows).
    const EVENTS: usize = POPPET_EVENTS + RatedPaths::<'static, 1>::EVENTS;
    const SWITCHES: bool = true;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.from, self.to, self.pilot].into_iter()
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    /// The ratio kinks change no state: the driver only restarts its integrator there.
    fn event_only_restarts(&self, e: usize) -> bool {
        e >= POPPET_EVENTS
    }

    fn event_both_ways(&self, e: usize) -> bool {
        e >= POPPET_EVENTS && self.ratio_paths().is_both_ways(e - POPPET_EVENTS)
    }

    /// A curve's row events of a parity without rows.
    fn event_never_fires(&self, e: usize) -> bool {
        e >= POPPET_EVENTS && self.ratio_paths().never_fires(e - POPPET_EVENTS)
    }

    /// Event 2j: Δp_c rises through switch j's point; 2j + 1: it falls through it; then the
    /// ratio kinks.
    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        if e >= POPPET_EVENTS {
            return self.ratio_paths().event_value(e - POPPET_EVENTS, at);
        }
        let p = |n: usize| (at.node)(n).pressure_pa;
        let dp = p(self.from) - p(self.to)
            + (p(self.pilot) - self.ambient_pressure_pa) * self.pilot_ratio;
        Some(self.poppet.event_value(e, dp))
    }

    fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        if e >= POPPET_EVENTS {
            return self
                .ratio_paths()
                .event_pressure_gradient(e - POPPET_EVENTS, at, push);
        }
        Poppet::pair_gradient(e, self.from, self.to, push);
        push(self.pilot, Poppet::pair(e, self.pilot_ratio));
    }

    fn event_description(&self, e: usize) -> String {
        if e >= POPPET_EVENTS {
            let what = self.ratio_paths().describe(e - POPPET_EVENTS);
            return format!("pilot-operated check valve `{}`: {what}", self.name);
        }
        format!(
            "pilot-operated check valve `{}`: the control pressure {} through its {} point",
            self.name,
            Poppet::way(e),
            Poppet::SWITCHES.get(e / 2).unwrap_or(&"?")
        )
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (v, out) in items.iter().zip(at.flows.iter_mut()) {
            let mdot = v.flow(e.nodes);
            e.transfer(v.from, v.to, mdot, dy);
            *out = mdot;
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
        self.poppet.opening(self.control_pressure(nodes))
    }

    fn extra_output_reads(&self, _k: usize) -> Reads {
        Reads {
            keys: &[],
            states: &[],
            pressures: true,
            temperatures: false,
        }
    }
}
