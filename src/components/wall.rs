//! Wall: Cantera's massless `Wall` between two nodes (Cantera, "Walls"):
//!   v_wall = K·(p_left − p_right) + v(t),  dV_left/dt = A·v_wall = −dV_right/dt,
//!   Q̇ (left → right) = U·A·(T_left − T_right).
//! The work (p_left − p_right)·A·v_wall that a massless wall cannot store is dissipated; the
//! network counts it as energy that left the gas, so the energy total stays closed.

use serde::{Deserialize, Serialize};

use crate::ad::Scalar;
use crate::param::{Param, ParamValue};
use crate::units::{Area, ExpansionCoefficient, HeatTransfer, Velocity};

use crate::components::keys::{Component, Kind};

crate::declare_kind! {
    /// `[[wall]]`: Cantera's massless wall.
    kind WallSpec = "wall", Boundary, no_gas;
    name: Name;
    /// The node that grows with a positive wall velocity.
    left: Node;
    /// The node that shrinks.
    right: Node;
    /// m².
    area: Param, area, Required, Positive;
    /// U, W/(m²·K).
    heat_transfer_coefficient: Param, heat_transfer_coefficient, Number(0.0), NonNegative;
    /// K, m/(s·Pa): wall velocity K·(p_left − p_right).
    expansion_coefficient: Param, expansion_coefficient, Number(0.0), NonNegative;
    /// Prescribed velocity, m/s (positive grows `left`).
    velocity: Param, velocity, Number(0.0), Any;
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wall {
    pub name: String,
    pub left: usize,
    pub right: usize,
    pub area_m2: Param<Area>,
    pub heat_transfer_coefficient_w_per_m2_k: Param<HeatTransfer>,
    pub expansion_coefficient_m_per_s_pa: Param<ExpansionCoefficient>,
    pub velocity_m_per_s: Param<Velocity>,
}

impl Wall {
    /// Wall velocity, m/s (positive grows the left node).
    #[inline]
    pub fn velocity<T: Scalar>(
        &self,
        expansion_coefficient_m_per_s_pa: T,
        prescribed_m_per_s: T,
        p_left_pa: T,
        p_right_pa: T,
    ) -> T {
        expansion_coefficient_m_per_s_pa * (p_left_pa - p_right_pa) + prescribed_m_per_s
    }

    /// Heat flow from left to right, W.
    #[inline]
    pub fn heat_flow_w<T: Scalar>(
        &self,
        heat_transfer_coefficient_w_per_m2_k: T,
        area_m2: T,
        t_left_k: T,
        t_right_k: T,
    ) -> T {
        heat_transfer_coefficient_w_per_m2_k * area_m2 * (t_left_k - t_right_k)
    }

    pub fn params(&self) -> [&ParamValue; 4] {
        [
            &self.area_m2,
            &self.heat_transfer_coefficient_w_per_m2_k,
            &self.expansion_coefficient_m_per_s_pa,
            &self.velocity_m_per_s,
        ]
    }
}

impl WallSpec {
    /// The wall of a validated spec (`node`: a node's index by name).
    pub fn build(&self, node: &dyn Fn(&str) -> usize) -> Wall {
        Wall {
            name: self.name.clone(),
            left: node(&self.left),
            right: node(&self.right),
            area_m2: self.area.to_param(),
            heat_transfer_coefficient_w_per_m2_k: self.heat_transfer_coefficient.to_param(),
            expansion_coefficient_m_per_s_pa: self.expansion_coefficient.to_param(),
            velocity_m_per_s: self.velocity.to_param(),
        }
    }
}

impl Component for Wall {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!(
        "area" => area_m2,
        "heat_transfer_coefficient" => heat_transfer_coefficient_w_per_m2_k,
        "expansion_coefficient" => expansion_coefficient_m_per_s_pa,
        "velocity" => velocity_m_per_s,
    );
}
