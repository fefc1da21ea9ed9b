//! Mass flow controller: a prescribed mass flow ṁ(t) ≥ 0 from `from` to `to`, like Cantera's
//! `MassFlowController` (Cantera, "Flow devices": ṁ = max(0, ṁ₀·g(t))), independent of the
//! pressures. It carries the specific enthalpy of `from` (c_p·T_from). A chamber that it empties
//! goes on losing mass: run-time check 2 (negative mass) then stops the run.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, max0};
use crate::param::Param;
use crate::units::MassRate;

use crate::components::element::{Build, Element, Eval, Slots};
use crate::components::keys::{Component, Kind, Link};

crate::declare_kind! {
    /// `[[mass_flow]]`: a prescribed mass flow (Cantera's MassFlowController).
    kind MassFlowSpec = "mass_flow", Link, gas;
    name: Name;
    from: Node;
    to: Node;
    /// kg/s (from `from` to `to`).
    rate: Param, mass_rate, Required, NonNegative;
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MassFlow {
    pub name: String,
    pub from: usize,
    pub to: usize,
    /// kg/s, constant or a table.
    pub rate_kg_per_s: Param<MassRate>,
}

impl MassFlow {
    #[inline]
    pub fn mass_flow_kg_per_s(&self, t: f64, seg: f64) -> f64 {
        self.rate_kg_per_s.value(t, seg).max(0.0)
    }
}

impl Build for MassFlowSpec {
    type Component = MassFlow;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> MassFlow {
        MassFlow {
            name: self.name.clone(),
            from: node(&self.from),
            to: node(&self.to),
            rate_kg_per_s: self.rate.to_param(),
        }
    }
}

impl Component for MassFlow {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!("rate" => rate_kg_per_s);
}

impl Link for MassFlow {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
    fn reads_upstream_temperature(&self) -> bool {
        false
    }
    fn reads_pressures(&self) -> bool {
        false
    }
}

impl Element for MassFlow {
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
        for (m, out) in items.iter().zip(at.flows.iter_mut()) {
            let mdot = max0(e.pv(&m.rate_kg_per_s));
            e.transfer(m.from, m.to, mdot, dy);
            *out = mdot;
        }
    }
}
