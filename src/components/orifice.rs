//! Orifice: isentropic compressible flow through a restriction, choked or not, either direction.
//!
//! With upstream stagnation state (p_u, T_u), downstream pressure p_d and r = p_d/p_u
//! (Anderson, *Modern Compressible Flow*, eqs. 5.20–5.21; ISO 5167 nozzle form):
//!   r > r* : ṁ = C_d·A·p_u·sqrt( 2γ/((γ−1)·R·T_u) · (r^(2/γ) − r^((γ+1)/γ)) )
//!   r ≤ r* : ṁ = C_d·A·p_u·sqrt(γ/(R·T_u)) · (2/(γ+1))^((γ+1)/(2(γ−1)))   (choked)
//! with r* = (2/(γ+1))^(γ/(γ−1)). Both branches agree at r = r*. The flow carries the upstream
//! specific enthalpy c_p·T_u.
//!   r > β_lam = 0.999 : ṁ = ṁ(β_lam)·(p_u − p_d)/(p_u·(1 − β_lam))            (laminar)
//! The inviscid formula has an infinite slope dṁ/dΔp at Δp → 0, which no real orifice has (the
//! flow turns viscous) and on which Newton's method in the implicit integrators fails near
//! pressure equalization; the same linear laminar region as the ISO 6358 form below (Sanville,
//! ratio 0.999) keeps the flow continuous and Lipschitz through Δp = 0. At r = 0.999 the flow is
//! about 6.5 % of its choked value (air).
//!
//! ISO 6358 form (sonic conductance C in m³/(s·Pa), critical pressure ratio b; ISO 6358-1:2013,
//! reference atmosphere of ISO 8778: ρ0 = 1.185 kg/m³, T0 = 293.15 K):
//!   r ≤ b          : ṁ = C·p_u·ρ0·sqrt(T0/T_u)                                 (choked)
//!   b < r ≤ β_lam  : ṁ = C·p_u·ρ0·sqrt(T0/T_u)·sqrt(1 − ((r − b)/(1 − b))²)    (subsonic)
//!   r > β_lam      : ṁ = k1·p_u·(1 − r)·sqrt(T0/T_u),
//!                    k1 = C·ρ0/(1 − β_lam)·sqrt(1 − ((β_lam − b)/(1 − b))²)     (laminar)
//! with β_lam = 0.999: Sanville's linear laminar region, as Simscape's "Constant Area Pneumatic
//! Orifice (ISO 6358)" block writes it (ISO 6358-3:2014 gives 0.999 as the laminar ratio). The
//! subsonic branch has an infinite slope at r = 1; the laminar one is linear in Δp = p_u − p_d
//! (k1·Δp·sqrt(T0/T_u)), so the flow is continuous at b and at β_lam, and Lipschitz through
//! Δp = 0 in either direction.
//!
//! Catalogue curve (`flow_table`): the flow against the pressure ratio at a rated inlet state,
//! interpolated and carried to other inlet states as the ISO 6358 law is
//! (`crate::components::flow_table`); its interior rows are kinks, located as events in the
//! slots of the ratio kinks, which a curve does not have.
//!
//! Closing, cracking and relieving: every form's flow is proportional to its area (or its
//! sonic conductance), so a valve's opening x scales it, ṁ = x·ṁ_open: x = 0 is exactly no flow,
//! with finite derivatives. x is the product of the `opening` (0..1, a number, a table, the
//! cubic schedule of [`crate::param::Cubic`] or an FMU input) and, when the orifice has a
//! `cracking_pressure` Δp_c and a `full_flow_pressure` Δp_f (a check or relief valve), the
//! pressure-actuated opening of the poppet, linear in Δp = p_from − p_to between them:
//!   x_p = 0 for Δp ≤ Δp_c,  (Δp − Δp_c)/(Δp_f − Δp_c) between,  1 for Δp ≥ Δp_f
//! (the static characteristic of a spring-loaded poppet valve whose flow area grows with its
//! lift, and its lift linearly with the pressure force above the spring's preload). x_p is
//! continuous in Δp but its slope jumps at Δp_c and Δp_f; it has no hysteresis. A
//! `poppet_table` gives x_p as a catalogue curve instead, interpolated between its rows
//! (`crate::components::poppet_table`); its rows are kinks, located as events in the cracking
//! and full-flow slots (two event functions of Δp, each changing sign at every other row).
//! `one_way` keeps only flow from `from` to `to`: ṁ = max(ṁ, 0), a kink at Δp = 0.
//!
//! Each kink is an event (`SWITCHES`), in both directions: Δp through Δp_c and through Δp_f,
//! and a one-way orifice's Δp through 0 (a valve's closed region already covers it). An
//! integrator's step then ends on the kink instead of straddling it, where its error estimate
//! would not see the switch (a 1 Pa band is crossed inside one step). The pressure ratio
//! r = p_low/p_high through the critical ratio (r* or b), where the flow chokes (C¹: the
//! second derivative jumps), and through the laminar ratio 0.999 (the slope jumps) are events
//! too (`crate::components::ratio_kinks`: one event function per point and side), located by
//! the driver in the direction pressures that equalize take (r rising: a blowdown unchoking,
//! then turning laminar), the laminar points by the adaptive methods in both, and event
//! indicators of Model Exchange in both (the discrete output `choked` flips only at an event
//! there): see docs/integrators.md, "Switches", for why. Not an event: flow reversal
//! (Δp through 0) of a two-way orifice, where ṁ is 0 from both sides and its slope jumps only
//! by √(T_to/T_from), while pressures that equalize approach it without end.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c, max0};
use crate::components::NodeState;
use crate::gas::IdealGas;
use crate::param::{Param, ParamValue};
use crate::units::{Area, Ratio, SonicConductance};

use crate::components::element::{
    Build, CacheContext, Compact, CompactState, Element, Eval, EventAt, Output, Reads, Slots,
    Variable,
};
use crate::components::flow_table::FlowTable;
use crate::components::keys::{Component, Kind, Link};
use crate::components::orifice_checks::orifice_problems;
use crate::components::orifice_link::link_flows;
pub use crate::components::orifice_link::{ConstLaw, OrificeLink, const_orifice_flow};
use crate::components::poppet_table::PoppetTable;
use crate::components::rating::sonic_conductance_from_nominal_flow;
use crate::components::ratio_kinks;
use crate::param::ParamSpec;
use crate::units::Unit;

crate::declare_kind! {
    /// `[[orifice]]`: isentropic compressible flow (`area`, `discharge_coefficient`), the
    /// ISO 6358 form (`sonic_conductance`, `critical_pressure_ratio`), or a catalogue curve
    /// (`flow_table`).
    kind OrificeSpec = "orifice", Link, gas, check = orifice_problems;
    name: Name;
    from: Node;
    to: Node;
    /// Geometric area, m² (isentropic form); 0 is a closed orifice.
    area: Param, area, RequiredIn("isentropic form"), NonNegative;
    /// C_d (isentropic form): 1 when absent.
    discharge_coefficient: Param, dimensionless, Implied(1.0), PositiveFraction;
    /// C, m³/(s·Pa) (ISO 6358 form, instead of `area`); 0 is a closed orifice.
    sonic_conductance: Param, sonic_conductance, RequiredIn("ISO form"), NonNegative;
    /// Q_N, kg/s (ISO 6358 form, instead of `sonic_conductance`): the flow at 6 bar gauge inlet
    /// and 1 bar drop, as catalogues rate valves; C follows from it and a constant b.
    nominal_flow: Number, mass_rate, None, Positive;
    /// b (ISO 6358 form): below the laminar ratio.
    critical_pressure_ratio: Param, dimensionless, RequiredIn("ISO form"), Below(ISO_LAMINAR_RATIO);
    /// Fraction open, 0..1 (0: no flow): a number, a table or `{ cubic = { t_open, duration } }`.
    opening: Opening, dimensionless, Number(1.0), Fraction;
    /// No flow from `to` back to `from`.
    one_way: Flag, dimensionless, Flag(false);
    /// Check or relief valve: closed while p_from − p_to is at most this, Pa.
    cracking_pressure: Number, pressure, None, NonNegative;
    /// Check or relief valve: fully open from this p_from − p_to on, Pa (above the cracking one).
    full_flow_pressure: Number, pressure, None, Positive;
    /// Check or relief valve, instead of the two pressures: rows `[p_from − p_to, opening]`,
    /// from opening 0 (the cracking pressure) to opening 1, Δp increasing.
    poppet_table: Curve(pressure), dimensionless, None, Fraction;
    ..rating_curve_keys {
        /// A catalogue curve instead of `area` or C: rows `[p_down/p_up, mass flow kg/s]` at the
        /// rated inlet state, from ratio 0 to `[1, 0]`, flows not increasing.
    }
}

/// ISO 8778 reference atmosphere: density, kg/m³, and temperature, K.
pub const ISO_RHO0_KG_PER_M3: f64 = 1.185;
pub const ISO_T0_K: f64 = 293.15;
/// Pressure ratio above which the ISO 6358 flow is taken as laminar (linear in Δp).
pub const ISO_LAMINAR_RATIO: f64 = 0.999;

/// How the orifice's flow is given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum OrificeForm {
    /// Geometric area (m²) and discharge coefficient: isentropic nozzle flow.
    Isentropic {
        area_m2: Param<Area>,
        discharge_coefficient: Param<Ratio>,
    },
    /// ISO 6358: sonic conductance C (m³/(s·Pa)) and critical pressure ratio b.
    Iso6358 {
        sonic_conductance_m3_per_s_pa: Param<SonicConductance>,
        critical_pressure_ratio: Param<Ratio>,
    },
    /// A catalogue curve: flow against the pressure ratio at a rated inlet state.
    Table(FlowTable),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Orifice {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub form: OrificeForm,
    /// Fraction open, 0..1: a constant, a table, the cubic schedule or an FMU input.
    pub opening: Param<Ratio>,
    pub one_way: bool,
    /// A check or relief valve's pressure-actuated opening, if it is one (linear).
    pub poppet: Option<Poppet>,
    /// A check or relief valve's opening as a catalogue curve, if it is one so given.
    pub poppet_table: Option<PoppetTable>,
}

/// The pressure-actuated opening of a check or relief valve: closed up to the cracking
/// pressure difference, fully open from the full-flow one, linear between.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Poppet {
    pub cracking_pressure_pa: f64,
    /// Above `cracking_pressure_pa` (validated).
    pub full_flow_pressure_pa: f64,
}

impl Poppet {
    /// The opening at Δp = p_from − p_to, 0..1: exactly 0 up to the cracking pressure.
    #[inline]
    pub fn opening<T: Scalar>(&self, dp_pa: T) -> T {
        let (crack, full) = (self.cracking_pressure_pa, self.full_flow_pressure_pa);
        if dp_pa.re() <= crack {
            T::zero()
        } else if dp_pa.re() >= full {
            c(1.0)
        } else {
            // crack < Δp < full here, so the span is positive.
            (dp_pa - crack) / (full - crack)
        }
    }

    /// Its switch points, each two events: 2j where Δp rises through point j (g = Δp − point),
    /// 2j + 1 where it falls through it (−g), as an event fires where its function crosses
    /// zero upward.
    pub const SWITCHES: [&'static str; 2] = ["cracking", "full-flow"];

    /// Switch `j`'s point in Δp, Pa (`j` < 2).
    #[inline]
    pub fn switch_point_pa(&self, j: usize) -> f64 {
        if j == 0 {
            self.cracking_pressure_pa
        } else {
            self.full_flow_pressure_pa
        }
    }

    /// Event function `e` (< 4) at Δp = p_high − p_low, Pa.
    #[inline]
    pub fn event_value(&self, e: usize, dp_pa: f64) -> f64 {
        Self::pair(e, dp_pa - self.switch_point_pa(e / 2))
    }

    /// A switch's pair of event functions from its g (≥ 0 past the switch): event 2j is g
    /// (rising through it), 2j + 1 is −g (falling through it).
    #[inline]
    pub fn pair(e: usize, g: f64) -> f64 {
        if e % 2 == 0 { g } else { -g }
    }

    /// ∂g_e/∂p of [`Self::pair`] for g = p(`high`) − p(`low`) − point, as `(node, ∂g/∂p)`.
    pub fn pair_gradient(e: usize, high: usize, low: usize, push: &mut dyn FnMut(usize, f64)) {
        let sign = Self::pair(e, 1.0);
        push(high, sign);
        push(low, -sign);
    }

    /// Event `e`'s direction in words: "rises" or "falls".
    pub fn way(e: usize) -> &'static str {
        if e % 2 == 0 { "rises" } else { "falls" }
    }
}

/// ISO 6358 mass flow from an upstream state to a downstream pressure p_d ≤ p_u, kg/s (≥ 0).
#[inline]
pub fn iso6358_mass_flow_kg_per_s<T: Scalar>(
    sonic_conductance_m3_per_s_pa: T,
    critical_pressure_ratio: T,
    p_up_pa: T,
    t_up_k: T,
    p_down_pa: T,
) -> T {
    let (cond, b) = (sonic_conductance_m3_per_s_pa, critical_pressure_ratio);
    let r = p_down_pa / p_up_pa;
    let root_t = (c::<T>(ISO_T0_K) / t_up_k).sqrt();
    let choked = cond * p_up_pa * ISO_RHO0_KG_PER_M3 * root_t;
    if r.re() <= b.re() {
        choked
    } else if r.re() <= ISO_LAMINAR_RATIO {
        let s = (r - b) / (c::<T>(1.0) - b);
        choked * max0(c::<T>(1.0) - s * s).sqrt()
    } else {
        let s = (c::<T>(ISO_LAMINAR_RATIO) - b) / (c::<T>(1.0) - b);
        let k1 =
            cond * ISO_RHO0_KG_PER_M3 / (1.0 - ISO_LAMINAR_RATIO) * (c::<T>(1.0) - s * s).sqrt();
        // p_u·(1 − r) = p_u − p_d, written so that it is exactly 0 at equal pressures.
        k1 * (p_up_pa - p_down_pa) * root_t
    }
}

/// Mass flow from an upstream state to a lower downstream pressure, kg/s (≥ 0 for p_d ≤ p_u).
#[inline]
pub fn isentropic_mass_flow_kg_per_s<T: Scalar>(
    gas: &IdealGas,
    effective_area_m2: T,
    p_up_pa: T,
    t_up_k: T,
    p_down_pa: T,
) -> T {
    let g = gas.gamma;
    let r = p_down_pa / p_up_pa;
    let rt = t_up_k * gas.r_j_per_kg_k;
    if r.re() <= gas.critical_pressure_ratio {
        effective_area_m2 * p_up_pa * (c::<T>(g) / rt).sqrt() * gas.choked_factor
    } else if r.re() <= LAMINAR_RATIO {
        // One powf: r^(2/γ) = (r^(1/γ))², r^((γ+1)/γ) = r^(1/γ)·r.
        let q = r.powf(1.0 / g);
        let bracket = max0(q * q - q * r);
        effective_area_m2 * p_up_pa * (c::<T>(2.0 * g) / (rt * (g - 1.0)) * bracket).sqrt()
    } else {
        let q = LAMINAR_RATIO.powf(1.0 / g);
        let bracket = q * q - q * LAMINAR_RATIO;
        // p_u·(1 − r) = p_u − p_d, written so that it is exactly 0 at equal pressures.
        effective_area_m2
            * (c::<T>(2.0 * g) / (rt * (g - 1.0)) * bracket).sqrt()
            * (p_up_pa - p_down_pa)
            / (1.0 - LAMINAR_RATIO)
    }
}

/// Pressure ratio above which the isentropic orifice's flow is taken as laminar (linear in Δp).
pub const LAMINAR_RATIO: f64 = ISO_LAMINAR_RATIO;

/// Signed mass flow from `from` to `to` through an effective area C_d·A, kg/s.
#[inline]
pub fn signed_mass_flow_kg_per_s<T: Scalar>(
    gas: &IdealGas,
    effective_area_m2: T,
    from: NodeState<T>,
    to: NodeState<T>,
) -> T {
    if from.pressure_pa.re() >= to.pressure_pa.re() {
        isentropic_mass_flow_kg_per_s(
            gas,
            effective_area_m2,
            from.pressure_pa,
            from.temperature_k,
            to.pressure_pa,
        )
    } else {
        -isentropic_mass_flow_kg_per_s(
            gas,
            effective_area_m2,
            to.pressure_pa,
            to.temperature_k,
            from.pressure_pa,
        )
    }
}

impl Orifice {
    /// Signed mass flow from `from` to `to` at time `t` on the segment that began at `seg`, kg/s.
    #[inline]
    pub fn mass_flow_kg_per_s<T: Scalar>(
        &self,
        gas: &IdealGas,
        t: f64,
        seg: f64,
        from: NodeState<T>,
        to: NodeState<T>,
    ) -> T {
        self.mass_flow_with(gas, |p: &ParamValue| c(p.value(t, seg)), from, to)
    }

    /// [`Self::mass_flow_kg_per_s`] with each parameter's value given by `param`.
    #[inline]
    pub fn mass_flow_with<T: Scalar>(
        &self,
        gas: &IdealGas,
        param: impl Fn(&ParamValue) -> T,
        from: NodeState<T>,
        to: NodeState<T>,
    ) -> T {
        // Closed (x = 0): exactly no flow, as the open flow is finite; its derivatives stay
        // those of x·ṁ_open (a sensitivity to the opening is ṁ_open even when closed).
        let x = self.opening_with(&param, from, to);
        let mdot = x * self.open_flow_with(gas, &param, from, to);
        if self.one_way { max0(mdot) } else { mdot }
    }

    /// The opening, 0..1: the `opening` parameter times the poppet's pressure-actuated opening.
    #[inline]
    pub fn opening_with<T: Scalar>(
        &self,
        param: &impl Fn(&ParamValue) -> T,
        from: NodeState<T>,
        to: NodeState<T>,
    ) -> T {
        let x = param(&self.opening);
        match (&self.poppet, &self.poppet_table) {
            (Some(p), _) => x * p.opening(from.pressure_pa - to.pressure_pa),
            (None, Some(t)) => x * t.opening(from.pressure_pa - to.pressure_pa),
            (None, None) => x,
        }
    }

    /// The flow of the fully open orifice, kg/s.
    #[inline]
    fn open_flow_with<T: Scalar>(
        &self,
        gas: &IdealGas,
        param: &impl Fn(&ParamValue) -> T,
        from: NodeState<T>,
        to: NodeState<T>,
    ) -> T {
        match &self.form {
            OrificeForm::Isentropic {
                area_m2,
                discharge_coefficient,
            } => signed_mass_flow_kg_per_s(
                gas,
                param(discharge_coefficient) * param(area_m2),
                from,
                to,
            ),
            OrificeForm::Iso6358 {
                sonic_conductance_m3_per_s_pa,
                critical_pressure_ratio,
            } => {
                let cond = param(sonic_conductance_m3_per_s_pa);
                let b = param(critical_pressure_ratio);
                signed_iso6358_mass_flow_kg_per_s(cond, b, from, to)
            }
            OrificeForm::Table(table) => table.signed_mass_flow_kg_per_s(from, to),
        }
    }

    pub fn params(&self) -> [&ParamValue; 3] {
        match &self.form {
            OrificeForm::Isentropic {
                area_m2,
                discharge_coefficient,
            } => [area_m2, discharge_coefficient, &self.opening],
            OrificeForm::Iso6358 {
                sonic_conductance_m3_per_s_pa,
                critical_pressure_ratio,
            } => [
                sonic_conductance_m3_per_s_pa,
                critical_pressure_ratio,
                &self.opening,
            ],
            // The curve is fixed for the run: the opening is its only parameter.
            OrificeForm::Table(_) => [&self.opening, &self.opening, &self.opening],
        }
    }

    /// Whether the orifice is the plain open law (`opening` 1, two-way, no poppet): the
    /// network's compact orifice links hold only such orifices.
    pub fn is_plain(&self) -> bool {
        *self.opening == ParamValue::Const(1.0)
            && !self.one_way
            && self.poppet.is_none()
            && self.poppet_table.is_none()
    }
}

/// ISO 6358 flow from `from` to `to`, negative when it runs the other way: the upstream node
/// is the one at the higher pressure (`Orifice::mass_flow_with`, and the network's compact
/// orifice links).
pub fn signed_iso6358_mass_flow_kg_per_s<T: Scalar>(
    cond: T,
    b: T,
    from: NodeState<T>,
    to: NodeState<T>,
) -> T {
    if from.pressure_pa.re() >= to.pressure_pa.re() {
        iso6358_mass_flow_kg_per_s(
            cond,
            b,
            from.pressure_pa,
            from.temperature_k,
            to.pressure_pa,
        )
    } else {
        -iso6358_mass_flow_kg_per_s(cond, b, to.pressure_pa, to.temperature_k, from.pressure_pa)
    }
}

impl Build for OrificeSpec {
    type Component = Orifice;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> Orifice {
        // An absent key of the orifice's own form is one with an implied value (validated).
        fn param<Q>(p: &Option<ParamSpec>, key: &str) -> Param<Q> {
            p.as_ref().map_or_else(
                || Param::from(KIND.implied(key).unwrap_or(0.0)),
                ParamSpec::to_param,
            )
        }
        Orifice {
            name: self.name.clone(),
            from: node(&self.from),
            to: node(&self.to),
            form: match (&self.sonic_conductance, self.nominal_flow) {
                // A curve excludes the other forms' keys (validated).
                _ if self.flow_table.is_some() => OrificeForm::Table(FlowTable::new(
                    self.flow_table.as_deref().unwrap_or_default(),
                    self.flow_table_inlet_pressure.unwrap_or(f64::NAN),
                    self.flow_table_inlet_temperature.unwrap_or(ISO_T0_K),
                )),
                (Some(c), _) => OrificeForm::Iso6358 {
                    sonic_conductance_m3_per_s_pa: c.to_param(),
                    critical_pressure_ratio: param(
                        &self.critical_pressure_ratio,
                        "critical_pressure_ratio",
                    ),
                },
                // b is a number with Q_N (validated).
                (None, Some(q_n)) => {
                    let b = self
                        .critical_pressure_ratio
                        .as_ref()
                        .and_then(ParamSpec::as_const)
                        .unwrap_or(0.0);
                    OrificeForm::Iso6358 {
                        sonic_conductance_m3_per_s_pa: Param::from(
                            sonic_conductance_from_nominal_flow(q_n, b),
                        ),
                        critical_pressure_ratio: Param::from(b),
                    }
                }
                (None, None) => OrificeForm::Isentropic {
                    area_m2: param(&self.area, "area"),
                    discharge_coefficient: param(
                        &self.discharge_coefficient,
                        "discharge_coefficient",
                    ),
                },
            },
            opening: self.opening.to_param(),
            one_way: self.one_way,
            poppet: match (self.cracking_pressure, self.full_flow_pressure) {
                (Some(crack), Some(full)) => Some(Poppet {
                    cracking_pressure_pa: crack,
                    full_flow_pressure_pa: full,
                }),
                _ => None,
            },
            poppet_table: self.poppet_table.as_deref().map(PoppetTable::new),
        }
    }
}

impl Component for Orifice {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    /// The keys of its own form only.
    fn param(&self, key: &str) -> Option<&ParamValue> {
        match (&self.form, key) {
            (OrificeForm::Isentropic { area_m2, .. }, "area") => Some(area_m2),
            (
                OrificeForm::Isentropic {
                    discharge_coefficient,
                    ..
                },
                "discharge_coefficient",
            ) => Some(discharge_coefficient),
            (
                OrificeForm::Iso6358 {
                    sonic_conductance_m3_per_s_pa,
                    ..
                },
                "sonic_conductance",
            ) => Some(sonic_conductance_m3_per_s_pa),
            (
                OrificeForm::Iso6358 {
                    critical_pressure_ratio,
                    ..
                },
                "critical_pressure_ratio",
            ) => Some(critical_pressure_ratio),
            (_, "opening") => Some(&self.opening),
            _ => None,
        }
    }
    fn param_mut(&mut self, key: &str) -> Option<&mut ParamValue> {
        match (&mut self.form, key) {
            (OrificeForm::Isentropic { area_m2, .. }, "area") => Some(area_m2),
            (
                OrificeForm::Isentropic {
                    discharge_coefficient,
                    ..
                },
                "discharge_coefficient",
            ) => Some(discharge_coefficient),
            (
                OrificeForm::Iso6358 {
                    sonic_conductance_m3_per_s_pa,
                    ..
                },
                "sonic_conductance",
            ) => Some(sonic_conductance_m3_per_s_pa),
            (
                OrificeForm::Iso6358 {
                    critical_pressure_ratio,
                    ..
                },
                "critical_pressure_ratio",
            ) => Some(critical_pressure_ratio),
            (_, "opening") => Some(&mut self.opening),
            _ => None,
        }
    }
}

impl Link for Orifice {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
}

/// Which of [`Orifice`]'s outputs.
const OPEN_FRACTION: usize = 0;

/// Its switch points, in events: each is two, rising (g ≥ 0 past the point) and falling (−g),
/// as an event fires where its function crosses zero upward. The first three are points of
/// Δp = p_from − p_to (g = Δp − point), the last two of the pressure ratio r = p_low/p_high,
/// a flow path's [`ratio_kinks`] (g = ratio·p_high − p_low).
const SWITCHES: [&str; 5] = [
    "cracking",
    "full-flow",
    "one-way closing",
    ratio_kinks::SWITCHES[0],
    ratio_kinks::SWITCHES[1],
];

/// The first of [`SWITCHES`] that is a point of the pressure ratio.
const RATIO_SWITCHES: usize = 3;

impl Orifice {
    /// Switch `j`'s point in Δp = p_from − p_to, Pa, if the orifice has it.
    fn switch_point_pa(&self, j: usize) -> Option<f64> {
        match (j, &self.poppet) {
            (0, Some(p)) => Some(p.cracking_pressure_pa),
            (1, Some(p)) => Some(p.full_flow_pressure_pa),
            // Below its cracking pressure (≥ 0) a valve is closed: Δp = 0 is no kink of it.
            (2, None) if self.one_way && self.poppet_table.is_none() => Some(0.0),
            _ => None,
        }
    }

    /// The critical pressure ratio of its form (r* or b), where the flow chokes: a curve's is
    /// the end of its leading run of equal flows (0: never choked).
    fn critical_ratio(&self, gas: &IdealGas, pv: &dyn Fn(&ParamValue) -> f64) -> f64 {
        match &self.form {
            OrificeForm::Isentropic { .. } => gas.critical_pressure_ratio,
            OrificeForm::Iso6358 {
                critical_pressure_ratio,
                ..
            } => pv(critical_pressure_ratio),
            OrificeForm::Table(table) => table.choked_ratio().unwrap_or(0.0),
        }
    }

    /// A curve's breakpoint event (ratio switch `q` of [`SWITCHES`]: h_q of
    /// [`FlowTable::breakpoint_event`]) with its gradient, and the (high, low) nodes.
    fn table_event(&self, q: usize, at: &EventAt<'_>) -> Option<([f64; 3], usize, usize)> {
        let OrificeForm::Table(table) = &self.form else {
            return None;
        };
        let (pf, pt) = (
            (at.node)(self.from).pressure_pa,
            (at.node)(self.to).pressure_pa,
        );
        let (high, low, p_high, p_low) = if pf >= pt {
            (self.from, self.to, pf, pt)
        } else {
            (self.to, self.from, pt, pf)
        };
        Some((table.breakpoint_event(q, p_high, p_low)?, high, low))
    }
}

impl Element for Orifice {
    const KIND: &'static Kind = &KIND;
    const OUTPUTS: &'static [Output] = &[
        // Not `<name>.opening`: that is the parameter (or input) of the same key.
        Output::Extra {
            variable: Variable {
                suffix: "open_fraction",
                unit: Unit::dimensionless,
                description: "fraction open of {}, 0..1 (its opening, times a poppet's)",
            },
            discrete: false,
        },
        Output::Extra {
            variable: Variable {
                suffix: "choked",
                unit: Unit::dimensionless,
                description: "1 while the flow through {} is choked, else 0",
            },
            discrete: true,
        },
    ];
    const EVENTS: usize = 2 * SWITCHES.len();
    const SWITCHES: bool = true;
    type Cache = Compact<OrificeLink>;

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.from, self.to].into_iter()
    }

    /// Every orifice has its choked and laminar ratios (and a valve its points).
    fn has_events(&self) -> bool {
        true
    }

    /// The ratio kinks change no state: the driver only restarts its integrator there.
    fn event_only_restarts(&self, e: usize) -> bool {
        e / 2 >= RATIO_SWITCHES
    }

    /// A switch the orifice lacks (a plain orifice's valve points, a valve's one-way closing,
    /// a curve's rows of a parity it has none of): the driver does not search it and Model
    /// Exchange does not report it, an indicator that would never change. By its structure
    /// only, which no parameter changes.
    fn event_never_fires(&self, e: usize) -> bool {
        let j = e / 2;
        match &self.form {
            OrificeForm::Table(table) if j >= RATIO_SWITCHES => {
                table.breakpoints_of_parity(j - RATIO_SWITCHES) == 0
            }
            _ if j >= RATIO_SWITCHES => false,
            _ if self.poppet_table.is_some() && j < 2 => false,
            _ => self.switch_point_pa(j).is_none(),
        }
    }

    /// The laminar points are located both ways (`ratio_kinks::is_both_ways`); a curve's
    /// breakpoints are pairs of h_q and −h_q already.
    fn event_both_ways(&self, e: usize) -> bool {
        e / 2 >= RATIO_SWITCHES
            && !matches!(self.form, OrificeForm::Table(_))
            && ratio_kinks::is_both_ways(e - 2 * RATIO_SWITCHES)
    }

    /// Event 2j: switch j's g rises through 0; 2j + 1: it falls through it (see [`SWITCHES`]).
    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        let j = e / 2;
        if j >= RATIO_SWITCHES && matches!(self.form, OrificeForm::Table(_)) {
            let (h, _, _) = self.table_event(j - RATIO_SWITCHES, at)?;
            return Some(Poppet::pair(e, h[0]));
        }
        if j >= RATIO_SWITCHES {
            let critical = self.critical_ratio(at.gas, at.pv);
            let k = e - 2 * RATIO_SWITCHES;
            return Some(ratio_kinks::event_value(
                k, critical, self.from, self.to, at,
            ));
        }
        let dp = (at.node)(self.from).pressure_pa - (at.node)(self.to).pressure_pa;
        if let (Some(table), 0 | 1) = (&self.poppet_table, j) {
            return Some(Poppet::pair(e, table.event_value(j, dp)?));
        }
        let point = self.switch_point_pa(j)?;
        Some(Poppet::pair(e, dp - point))
    }

    fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        let j = e / 2;
        if j >= RATIO_SWITCHES && matches!(self.form, OrificeForm::Table(_)) {
            if let Some((h, high, low)) = self.table_event(j - RATIO_SWITCHES, at) {
                let sign = Poppet::pair(e, 1.0);
                push(high, sign * h[1]);
                push(low, sign * h[2]);
            }
        } else if j >= RATIO_SWITCHES {
            let critical = self.critical_ratio(at.gas, at.pv);
            let k = e - 2 * RATIO_SWITCHES;
            ratio_kinks::event_pressure_gradient(k, critical, self.from, self.to, at, push);
        } else if let (Some(table), 0 | 1) = (&self.poppet_table, j) {
            let dp = (at.node)(self.from).pressure_pa - (at.node)(self.to).pressure_pa;
            let sign = Poppet::pair(e, table.event_slope(j, dp));
            push(self.from, sign);
            push(self.to, -sign);
        } else if self.switch_point_pa(j).is_some() {
            Poppet::pair_gradient(e, self.from, self.to, push);
        }
    }

    fn event_description(&self, e: usize) -> String {
        let j = e / 2;
        if j >= RATIO_SWITCHES && matches!(self.form, OrificeForm::Table(_)) {
            let parity = ["3, 5, …", "2, 4, …"][(j - RATIO_SWITCHES) % 2];
            let way = ["h", "−h"][e % 2];
            return format!(
                "orifice `{}`: p_low/p_high through one of its flow table's rows {parity} \
                 ({way} rising)",
                self.name
            );
        }
        if j >= RATIO_SWITCHES {
            let k = e - 2 * RATIO_SWITCHES;
            return format!("orifice `{}`: {}", self.name, ratio_kinks::describe(k));
        }
        if let (Some(_), 0 | 1) = (&self.poppet_table, j) {
            let parity = ["1, 3, …", "2, 4, …"][j];
            let way = ["h", "−h"][e % 2];
            return format!(
                "orifice `{}`: Δp through one of its poppet table's rows {parity} ({way} rising)",
                self.name
            );
        }
        format!(
            "orifice `{}`: Δp {} through its {} point",
            self.name,
            Poppet::way(e),
            SWITCHES.get(j).unwrap_or(&"?")
        )
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    #[inline(always)]
    fn terms<T: Scalar>(
        items: &[Self],
        cache: &Compact<OrificeLink>,
        e: &Eval<'_, T>,
        dy: &mut [T],
        at: Slots<'_, T>,
    ) {
        if cache.state == CompactState::Usable && e.seeds.is_empty() {
            // The compact copy (no seed can replace a parameter here).
            link_flows(items, &cache.links, e.gas, e.nodes, dy, at.flows);
            return;
        }
        for (o, out) in items.iter().zip(at.flows.iter_mut()) {
            let pv = |p: &ParamValue| e.pv(p);
            let mdot = o.mass_flow_with(e.gas, pv, e.nodes[o.from], e.nodes[o.to]);
            e.transfer(o.from, o.to, mdot, dy);
            *out = mdot;
        }
    }

    /// The compact links (in place: no allocation once built), usable when every orifice is
    /// plain with constant parameters.
    #[cold]
    fn refresh_cache(items: &[Self], cache: &mut Compact<OrificeLink>, at: &CacheContext) {
        cache.links.clear();
        cache.state = CompactState::Unusable;
        if !at.fits_u32() {
            return;
        }
        let konst = |p: &ParamValue| match p {
            ParamValue::Const(v) => Some(*v),
            _ => None,
        };
        for o in items {
            if !o.is_plain() {
                return;
            }
            let law = match &o.form {
                OrificeForm::Isentropic {
                    area_m2,
                    discharge_coefficient,
                } => match (konst(discharge_coefficient), konst(area_m2)) {
                    (Some(cd), Some(a)) => ConstLaw::Isentropic(cd * a),
                    _ => return,
                },
                OrificeForm::Iso6358 {
                    sonic_conductance_m3_per_s_pa,
                    critical_pressure_ratio,
                } => match (
                    konst(sonic_conductance_m3_per_s_pa),
                    konst(critical_pressure_ratio),
                ) {
                    (Some(cond), Some(b)) => ConstLaw::Iso6358(cond, b),
                    _ => return,
                },
                OrificeForm::Table(_) => return,
            };
            cache.links.push(OrificeLink {
                from: o.from as u32,
                to: o.to as u32,
                dy_from: at.dy_pair(o.from) as u32,
                dy_to: at.dy_pair(o.to) as u32,
                law,
            });
        }
        cache.state = CompactState::Usable;
    }

    /// Its opening (0..1), and 1 while its flow is choked (and it is open).
    fn extra_output<T: Scalar>(
        &self,
        k: usize,
        _s: &[T],
        gas: &IdealGas,
        nodes: &[NodeState<T>],
        pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        let (from, to) = (nodes[self.from], nodes[self.to]);
        if k == OPEN_FRACTION {
            return self.opening_with(pv, from, to);
        }
        let (a, b) = (from.pressure_pa.re(), to.pressure_pa.re());
        let critical = match &self.form {
            OrificeForm::Isentropic { .. } => gas.critical_pressure_ratio,
            OrificeForm::Iso6358 {
                critical_pressure_ratio,
                ..
            } => pv(critical_pressure_ratio).re(),
            OrificeForm::Table(table) => table.choked_ratio().unwrap_or(0.0),
        };
        let open = self.opening_with(pv, from, to).re() > 0.0;
        // p_low/p_high at or below critical (the law's choked branch) as the choked switch's
        // event function f = p_low − critical·p_high writes it, with FMI's domains of an event
        // indicator (f > 0 and f ≤ 0): the flag flips on the located event, not a rounding away
        // from it, and an importer's root on f = 0 is still choked.
        let choked = critical * a.max(b) - a.min(b) >= 0.0;
        T::from(if open && choked { 1.0 } else { 0.0 })
    }

    /// The opening reads its own `opening`, and a poppet the pressures of its nodes.
    fn extra_output_reads(&self, k: usize) -> Reads {
        if k != OPEN_FRACTION {
            return Reads::NOTHING;
        }
        Reads {
            keys: &["opening"],
            states: &[],
            pressures: self.poppet.is_some() || self.poppet_table.is_some(),
            temperatures: false,
        }
    }
}
