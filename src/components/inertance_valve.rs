//! Inertance valve: CircAdapt's `Valve` (CircAdapt documentation, "Verification of Valve"; the
//! benchmark of docs/circadapt_valve.md), with a dissipative leak coefficient (below).
//!
//! State: the volume flow q (m³/s), positive from `from` to `to`. With Δp = p_to − p_from,
//!   dq/dt = (α·q·|q| − Δp) / L
//!   A_eff = A_open if Δp < 0, else A_leak
//!   L     = ρ·(1.5·length/A_eff + 0.75/√A_from + 0.75/√A_to)          (Pa·s²/m³)
//!   α     = α_open = ½ρ·(1/A_from² − 1/A_eff²)   if q > 0 or Δp < 0
//!           α_leak = ½ρ·(1/A_to²   − 1/A_eff²)   otherwise             (Pa·s²/m⁶)
//! The benchmark's description (CircAdapt documentation, "Verification of Valve") writes
//! α_leak = ½ρ(1/A_eff² − 1/A_dist²), which is positive for A_eff < A_dist and makes backflow
//! grow without bound; Plenum takes the dissipative sign used here: with the effective area
//! below the side's, α < 0 opposes the flow in either direction (docs/equations.md).
//! Mass flow ṁ = ρ·q (kg/s).
//!
//! Liquid nodes: the valve connects two reservoirs whose (gauge) pressures are prescribed, as in
//! CircAdapt's benchmark. The liquid never enters a gas node, so the gas's mass and energy totals
//! do not see it: what leaves one reservoir enters the other, and the kinetic energy of the
//! liquid column (½·L·q²) is exchanged with the reservoirs only.
//!
//! At q = 0 the switch between α_open and α_leak is continuous in dq/dt (α·q·|q| vanishes there
//! with its first derivative); q crossing zero is still an event (both directions), so that
//! integrators restart on the new branch instead of stepping across the kink. Δp of step
//! tables changes only at table breakpoints, where the driver already stops and restarts.

use serde::{Deserialize, Serialize};

use crate::ad::Scalar;
use crate::param::{Param, ParamValue};
use crate::units::{Area, Length};
use crate::units::{MassDensity, VolumeRate};

use crate::components::element::{Build, Element, Eval, Output, Slots, Variable};
use crate::components::keys::{Component, Kind, Link};
use crate::units::{Unit, from_si};

crate::declare_kind! {
    /// `[[inertance_valve]]`: CircAdapt's valve with liquid inertia between two reservoirs
    /// (state q).
    kind InertanceValveSpec = "inertance_valve", LiquidLink, no_gas;
    name: Name;
    from: Node;
    to: Node;
    /// Liquid density ρ, kg/m³.
    density: Number, density, Required, Positive;
    /// Effective area when open, m².
    area_open: Param, area, Required, Positive;
    /// Effective area when closed, m².
    area_leak: Param, area, Required, Positive;
    /// Area of the `from` side, m².
    area_from: Param, area, Required, Positive;
    /// Area of the `to` side, m².
    area_to: Param, area, Required, Positive;
    /// Valve length, m.
    length: Param, length, Required, NonNegative;
    /// Initial volume flow, m³/s.
    q0: Number, volume_rate, Number(0.0), Any;
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InertanceValve {
    pub name: String,
    /// Reservoir nodes.
    pub from: usize,
    pub to: usize,
    /// Liquid density (typed, `crate::units`; read as `.value` in the right-hand side).
    pub density: MassDensity,
    pub area_open_m2: Param<Area>,
    pub area_leak_m2: Param<Area>,
    pub area_from_m2: Param<Area>,
    pub area_to_m2: Param<Area>,
    pub length_m: Param<Length>,
    /// Initial flow.
    pub q0: VolumeRate,
}

/// The valve's geometry at one instant, m² and m.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub area_open_m2: f64,
    pub area_leak_m2: f64,
    pub area_from_m2: f64,
    pub area_to_m2: f64,
    pub length_m: f64,
}

/// Right-hand side of the valve equation and the coefficients used, at one instant.
#[derive(Clone, Copy, Debug)]
pub struct Rate<T = f64> {
    pub dq_dt_m3_per_s2: T,
    pub inertance_pa_s2_per_m3: f64,
    pub alpha_pa_s2_per_m6: f64,
}

impl InertanceValve {
    pub fn geometry(&self, t: f64, seg: f64) -> Geometry {
        Geometry {
            area_open_m2: self.area_open_m2.value(t, seg),
            area_leak_m2: self.area_leak_m2.value(t, seg),
            area_from_m2: self.area_from_m2.value(t, seg),
            area_to_m2: self.area_to_m2.value(t, seg),
            length_m: self.length_m.value(t, seg),
        }
    }

    pub fn params(&self) -> [&ParamValue; 5] {
        [
            &self.area_open_m2,
            &self.area_leak_m2,
            &self.area_from_m2,
            &self.area_to_m2,
            &self.length_m,
        ]
    }

    /// dq/dt for flow `q_m3_per_s` and pressures of `from` and `to` (Pa, gauge or absolute).
    #[inline]
    pub fn rate<T: Scalar>(
        &self,
        g: &Geometry,
        q_m3_per_s: T,
        p_from_pa: T,
        p_to_pa: T,
    ) -> Rate<T> {
        let rho = self.density.value;
        let dp = p_to_pa - p_from_pa;
        let a_eff = if dp.re() < 0.0 {
            g.area_open_m2
        } else {
            g.area_leak_m2
        };
        let inertance = rho
            * (1.5 * g.length_m / a_eff
                + 0.75 / g.area_from_m2.sqrt()
                + 0.75 / g.area_to_m2.sqrt());
        let inv_eff_sq = 1.0 / (a_eff * a_eff);
        let alpha = if q_m3_per_s.re() > 0.0 || dp.re() < 0.0 {
            0.5 * rho * (1.0 / (g.area_from_m2 * g.area_from_m2) - inv_eff_sq)
        } else {
            0.5 * rho * (1.0 / (g.area_to_m2 * g.area_to_m2) - inv_eff_sq)
        };
        Rate {
            dq_dt_m3_per_s2: (q_m3_per_s * alpha * q_m3_per_s.abs() - dp) / inertance,
            inertance_pa_s2_per_m3: inertance,
            alpha_pa_s2_per_m6: alpha,
        }
    }
}

impl Build for InertanceValveSpec {
    type Component = InertanceValve;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> InertanceValve {
        InertanceValve {
            name: self.name.clone(),
            from: node(&self.from),
            to: node(&self.to),
            density: from_si(self.density),
            area_open_m2: self.area_open.to_param(),
            area_leak_m2: self.area_leak.to_param(),
            area_from_m2: self.area_from.to_param(),
            area_to_m2: self.area_to.to_param(),
            length_m: self.length.to_param(),
            q0: from_si(self.q0),
        }
    }
}

impl Component for InertanceValve {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!(
        "area_open" => area_open_m2,
        "area_leak" => area_leak_m2,
        "area_from" => area_from_m2,
        "area_to" => area_to_m2,
        "length" => length_m,
    );
}

impl Link for InertanceValve {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
    fn reads_upstream_temperature(&self) -> bool {
        false
    }
    fn reads_pressures(&self) -> bool {
        false
    }
    fn flow_is_state(&self) -> bool {
        true
    }
}

/// Its event functions, per valve: q falls through zero (−q crosses 0 upward), q rises through
/// zero.
const FLOW_REVERSES: usize = 0;

/// Liquid between two reservoirs: only q is a state, and nothing enters the gas totals (see
/// the module documentation); its flow ρ·q is its `<name>.mdot`.
impl Element for InertanceValve {
    const KIND: &'static Kind = &KIND;
    const STATES: usize = 1;
    /// α switches between α_open and α_leak where q changes sign: a kink in the right-hand side
    /// that the integrator should not step across (CircAdapt valve).
    const EVENTS: usize = 2;
    const OUTPUTS: &'static [Output] = &[Output::State(0)];
    const STATE_VARIABLES: &'static [Variable] = &[Variable {
        suffix: "q",
        unit: Unit::volume_rate,
        description: "volume flow through {} (from → to)",
    }];
    const SEED_REFUSAL: Option<&'static str> =
        Some("an inertance valve's geometry enters its rate as plain numbers");
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.from, self.to].into_iter()
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (k, (iv, out)) in items.iter().zip(at.flows.iter_mut()).enumerate() {
            let s = at.first_state + k;
            let q = e.y[s];
            let rate = iv.rate(
                &iv.geometry(e.t, e.seg),
                q,
                e.nodes[iv.from].pressure_pa,
                e.nodes[iv.to].pressure_pa,
            );
            dy[s] = rate.dq_dt_m3_per_s2;
            *out = q * iv.density.value;
        }
    }

    fn initial_state(&self, out: &mut [f64]) {
        out[0] = self.q0.value;
    }

    /// Its start value or its open area times 1 m/s.
    fn nominals(&self, out: &mut [f64], _volume0: &dyn Fn(usize) -> Option<f64>) {
        let open = self.area_open_m2.all_values();
        let area = open.iter().fold(0.0_f64, |a, &b| a.max(b.abs()));
        out[0] = self.q0.value.abs().max(area * 1.0);
    }

    fn event_value(&self, e: usize, s: &[f64], _flag: bool) -> Option<f64> {
        Some(self.event_gradient(e, s))
    }

    fn event_gradient(&self, e: usize, w: &[f64]) -> f64 {
        if e == FLOW_REVERSES { -w[0] } else { w[0] }
    }

    fn event_description(&self, e: usize) -> String {
        if e == FLOW_REVERSES {
            format!("inertance valve `{}`: forward flow stops", self.name)
        } else {
            format!("inertance valve `{}`: backward flow stops", self.name)
        }
    }
}
