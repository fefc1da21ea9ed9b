//! Valve: Cantera's linear `Valve`, ṁ = K·opening(t)·(p_from − p_to) (Cantera, "Flow devices"),
//! optionally one-way (no flow from `to` back to `from`). The flow carries the upstream enthalpy.
//! The opening may follow a schedule: a table, or BlasterSim's cubic opening curve
//! `opening = { cubic = { t_open = …, duration = … } }` (0 before t_open, 3s² − 2s³ with
//! s = (t − t_open)/duration during the opening, 1 after; see [`crate::param::Cubic`]).

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, max0};
use crate::param::Param;
use crate::units::{FlowCoefficient, Ratio};

use crate::components::keys::{Component, Kind, Link};

crate::declare_kind! {
    /// `[[valve]]`: Cantera's linear valve.
    kind ValveSpec = "valve", Link, no_gas;
    name: Name;
    from: Node;
    to: Node;
    /// K, kg/(s·Pa).
    coefficient: Param, flow_coefficient, Required, NonNegative;
    /// No flow from `to` back to `from`.
    one_way: Flag, dimensionless, Flag(false);
    /// Fraction open, 0..1: a number, a table or `{ cubic = { t_open, duration } }`.
    opening: Opening, dimensionless, Number(1.0), Fraction;
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Valve {
    pub name: String,
    pub from: usize,
    pub to: usize,
    /// K, kg/(s·Pa).
    pub coefficient_kg_per_s_pa: Param<FlowCoefficient>,
    pub one_way: bool,
    /// Fraction open, 0..1: a constant, a table, or BlasterSim's cubic opening curve.
    pub opening: Param<Ratio>,
}

impl Valve {
    /// Signed mass flow from `from` to `to`, kg/s.
    #[inline]
    pub fn mass_flow_kg_per_s<T: Scalar>(
        &self,
        coefficient_kg_per_s_pa: T,
        opening: T,
        p_from_pa: T,
        p_to_pa: T,
    ) -> T {
        signed_mass_flow_kg_per_s(
            coefficient_kg_per_s_pa * opening,
            self.one_way,
            p_from_pa,
            p_to_pa,
        )
    }
}

/// Signed mass flow, kg/s, of a valve whose K·opening (kg/(s·Pa)) is `k_open`: the law of
/// [`Valve::mass_flow_kg_per_s`], shared with the network's compact valve links (which form
/// K·opening once while both are constants: the same product, so the same bits).
#[inline(always)]
pub fn signed_mass_flow_kg_per_s<T: Scalar>(
    k_open: T,
    one_way: bool,
    p_from_pa: T,
    p_to_pa: T,
) -> T {
    let mdot = k_open * (p_from_pa - p_to_pa);
    if one_way { max0(mdot) } else { mdot }
}

impl ValveSpec {
    /// The valve of a validated spec (`node`: a node's index by name).
    pub fn build(&self, node: &dyn Fn(&str) -> usize) -> Valve {
        Valve {
            name: self.name.clone(),
            from: node(&self.from),
            to: node(&self.to),
            coefficient_kg_per_s_pa: self.coefficient.to_param(),
            one_way: self.one_way,
            opening: self.opening.to_param(),
        }
    }
}

impl Component for Valve {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!("coefficient" => coefficient_kg_per_s_pa, "opening" => opening);
}

impl Link for Valve {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
    fn reads_upstream_temperature(&self) -> bool {
        false
    }
}
