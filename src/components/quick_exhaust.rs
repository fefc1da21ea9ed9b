//! Quick-exhaust valve (ISO 1219): supply `p` (port 1), working port `a` (2, at the cylinder),
//! exhaust `r` (3). Its disc is pushed by Δp = p_p − p_a across a switching band Δp_s, as the
//! shuttle valve's ([`Disc`]): at position σ the path p–a is open σ and a–r is open 1 − σ, so
//! the cylinder fills from the supply while p_p is above p_a and vents straight to `r`, past
//! the supply line and the directional valve, once the supply falls below it (Beater,
//! *Pneumatic Drives*, 2007, ch. 5.5). Each path is the ISO 6358 law (C, b or Q_N, the exhaust
//! path with a rating of its own as catalogues give it), signed, times its opening. The disc's
//! ends of travel are events, each both ways; so are each path's pressure-ratio kinks (b,
//! where it chokes, and the laminar ratio; `crate::components::ratio_kinks`), whatever its
//! opening, as an orifice's are.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::components::NodeState;
use crate::components::element::{Build, Element, Eval, EventAt, Output, Reads, Slots, Variable};
use crate::components::keys::{Component, Kind, Link, Problem};
use crate::components::orifice::{ISO_LAMINAR_RATIO, signed_iso6358_mass_flow_kg_per_s};
use crate::components::ratio_kinks;
use crate::components::shuttle_valve::{Disc, rated_conductance, rating_problems};
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
    /// C of the path p–a, m³/(s·Pa) (or `nominal_flow`).
    sonic_conductance: Number, sonic_conductance, None, Positive;
    /// Q_N of the path p–a (ISO 6358), kg/s or "Nl/min".
    nominal_flow: Number, mass_rate, None, Positive;
    /// C of the path a–r (default: the path p–a's), m³/(s·Pa).
    exhaust_sonic_conductance: Number, sonic_conductance, None, Positive;
    /// Q_N of the path a–r, kg/s or "Nl/min".
    exhaust_nominal_flow: Number, mass_rate, None, Positive;
    /// b of both paths.
    critical_pressure_ratio: Number, dimensionless, Required, Below(ISO_LAMINAR_RATIO);
}

fn quick_exhaust_problems(x: &QuickExhaustSpec) -> Vec<Problem> {
    let mut out = rating_problems(x.sonic_conductance, x.nominal_flow);
    if x.exhaust_sonic_conductance.is_some() && x.exhaust_nominal_flow.is_some() {
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
    pub sonic_conductance_m3_per_s_pa: f64,
    pub exhaust_sonic_conductance_m3_per_s_pa: f64,
    pub critical_pressure_ratio: f64,
}

impl QuickExhaust {
    /// The flows p → a and a → r, kg/s, signed.
    #[inline(always)]
    pub fn flows<T: Scalar>(&self, nodes: &[NodeState<T>]) -> (T, T) {
        let (np, na, nr) = (nodes[self.p], nodes[self.a], nodes[self.r]);
        let s = self.disc.position(np.pressure_pa - na.pressure_pa);
        let b = c(self.critical_pressure_ratio);
        (
            s * signed_iso6358_mass_flow_kg_per_s(c(self.sonic_conductance_m3_per_s_pa), b, np, na),
            (c::<T>(1.0) - s)
                * signed_iso6358_mass_flow_kg_per_s(
                    c(self.exhaust_sonic_conductance_m3_per_s_pa),
                    b,
                    na,
                    nr,
                ),
        )
    }

    /// Its ISO 6358 paths p–a and a–r (one b).
    fn ratio_paths(&self) -> ratio_kinks::Paths<2> {
        ratio_kinks::Paths {
            critical: self.critical_pressure_ratio,
            paths: [
                ("p–a", Some((self.p, self.a))),
                ("a–r", Some((self.a, self.r))),
            ],
        }
    }
}

impl Build for QuickExhaustSpec {
    type Component = QuickExhaust;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> QuickExhaust {
        let b = self.critical_pressure_ratio;
        let inlet = rated_conductance(self.sonic_conductance, self.nominal_flow, b);
        let exhaust = match (self.exhaust_sonic_conductance, self.exhaust_nominal_flow) {
            (None, None) => inlet,
            (cond, q) => rated_conductance(cond, q, b),
        };
        QuickExhaust {
            name: self.name.clone(),
            p: node(&self.p),
            a: node(&self.a),
            r: node(&self.r),
            disc: Disc {
                band_pa: self.switching_band,
            },
            sonic_conductance_m3_per_s_pa: inlet,
            exhaust_sonic_conductance_m3_per_s_pa: exhaust,
            critical_pressure_ratio: b,
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
    /// The disc's ends of travel, then its paths' ratio kinks.
    const EVENTS: usize = Disc::EVENTS + ratio_kinks::Paths::<2>::EVENTS;
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
        e >= Disc::EVENTS && ratio_kinks::Paths::<2>::is_both_ways(e - Disc::EVENTS)
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        if e >= Disc::EVENTS {
            return self.ratio_paths().event_value(e - Disc::EVENTS, at);
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
            return self
                .ratio_paths()
                .event_pressure_gradient(e - Disc::EVENTS, at, push);
        }
        let sign = Disc::event_sign(e);
        push(self.p, sign);
        push(self.a, -sign);
    }

    fn event_description(&self, e: usize) -> String {
        if e >= Disc::EVENTS {
            let what = self.ratio_paths().describe(e - Disc::EVENTS);
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
