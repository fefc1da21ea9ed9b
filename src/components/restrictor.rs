//! Flow restrictor: FONSim's `FlowRestrictor` for a compressible fluid (fonsim 0.6.0,
//! `fonsim/components/restrictors.py`, `flowrestrictor_compressible.evaluate`): a minor loss with
//! K-factor k at diameter d, the density taken at the mean pressure of the two ends,
//!   Δp = p_from − p_to = (8/π²)·k/(ρ̄·d⁴)·ṁ·|ṁ|,
//!   ρ̄ = max((p_from + p_to)/2, p_atm/10) / (R·T_up),
//! with p_atm = 1.013e5 Pa (`fonsim/constants/norm.py`). FONSim writes ρ̄ = ρ_stp·p̄/p_atm for its
//! isothermal ideal gas, i.e. R·T = p_atm/ρ_stp; here R is the gas's and T the temperature of the
//! upstream node, which is the same thing when the network is isothermal at that temperature.
//! Solved for the flow: ṁ = sign(Δp)·sqrt(|Δp|·ρ̄·π²·d⁴/(8k)). The flow carries the upstream
//! enthalpy.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, copysign, max_const};
use crate::components::NodeState;
use crate::components::element::{Build, Element, Eval, Slots};
use crate::components::keys::{Component, Kind, Link};
use crate::gas::IdealGas;
use crate::param::{Param, ParamValue};
use crate::units::{Length, Ratio};

crate::declare_kind! {
    /// `[[restrictor]]`: FONSim's FlowRestrictor (a minor loss).
    kind RestrictorSpec = "restrictor", Link, gas;
    name: Name;
    from: Node;
    to: Node;
    /// Diameter d, m.
    diameter: Param, length, Required, Positive;
    /// K-factor (minor loss coefficient).
    k: Param, dimensionless, Required, Positive;
}

/// FONSim's atmospheric pressure, Pa (`fonsim.constants.norm.pressure_atmospheric`).
pub const FONSIM_P_ATM_PA: f64 = 1.013e5;

/// FONSim's mean-density pressure of a restrictor or tube, Pa: the mean of both ends, but not
/// below p_atm/10.
#[inline]
pub fn mean_pressure_pa<T: Scalar>(p_a_pa: T, p_b_pa: T) -> T {
    max_const((p_a_pa + p_b_pa) * 0.5, FONSIM_P_ATM_PA / 10.0)
}

/// FONSim's mean density of a restrictor or tube between two nodes, kg/m³: the mean pressure
/// (not below p_atm/10) over R·T of the upstream node.
#[inline]
pub fn mean_density_kg_per_m3<T: Scalar>(gas: &IdealGas, a: NodeState<T>, b: NodeState<T>) -> T {
    let t_up = if a.pressure_pa.re() >= b.pressure_pa.re() {
        a.temperature_k
    } else {
        b.temperature_k
    };
    mean_pressure_pa(a.pressure_pa, b.pressure_pa) / (t_up * gas.r_j_per_kg_k)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Restrictor {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub diameter_m: Param<Length>,
    /// K-factor (minor loss coefficient), 1.
    pub k: Param<Ratio>,
}

impl Restrictor {
    pub fn params(&self) -> [&ParamValue; 2] {
        [&self.diameter_m, &self.k]
    }

    /// Signed mass flow from `from` to `to`, kg/s, for mean density `rho_mean` (kg/m³).
    #[inline]
    pub fn mass_flow_kg_per_s<T: Scalar>(
        diameter_m: T,
        k: T,
        rho_mean_kg_per_m3: T,
        p_from_pa: T,
        p_to_pa: T,
    ) -> T {
        let dp = p_from_pa - p_to_pa;
        let d2 = diameter_m * diameter_m;
        let pi = std::f64::consts::PI;
        let mag = (dp.abs() * rho_mean_kg_per_m3 * pi * pi * d2 * d2 / (k * 8.0)).sqrt();
        copysign(mag, dp)
    }
}

impl Build for RestrictorSpec {
    type Component = Restrictor;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> Restrictor {
        Restrictor {
            name: self.name.clone(),
            from: node(&self.from),
            to: node(&self.to),
            diameter_m: self.diameter.to_param(),
            k: self.k.to_param(),
        }
    }
}

impl Component for Restrictor {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!("diameter" => diameter_m, "k" => k);
}

impl Link for Restrictor {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
}

impl Element for Restrictor {
    const KIND: &'static Kind = &KIND;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.from, self.to].into_iter()
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (r, out) in items.iter().zip(at.flows.iter_mut()) {
            let (nf, nt) = (e.nodes[r.from], e.nodes[r.to]);
            let rho = mean_density_kg_per_m3(e.gas, nf, nt);
            let mdot = Restrictor::mass_flow_kg_per_s(
                e.pv(&r.diameter_m),
                e.pv(&r.k),
                rho,
                nf.pressure_pa,
                nt.pressure_pa,
            );
            e.transfer(r.from, r.to, mdot, dy);
            *out = mdot;
        }
    }
}
