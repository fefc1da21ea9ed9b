//! Wall: Cantera's massless `Wall` between two nodes (Cantera, "Walls"):
//!   v_wall = K·(p_left − p_right) + v(t),  dV_left/dt = A·v_wall = −dV_right/dt,
//!   Q̇ (left → right) = U·A·(T_left − T_right).
//! The work (p_left − p_right)·A·v_wall that a massless wall cannot store is dissipated; the
//! network counts it as energy that left the gas, so the energy total stays closed.

use serde::{Deserialize, Serialize};

use crate::ad::Scalar;
use crate::components::NodeState;
use crate::components::element::{Boundary, Build, Element, Eval, Output, Reads, Slots, Variable};
use crate::components::keys::{Component, Kind};
use crate::gas::IdealGas;
use crate::param::{Param, ParamValue};
use crate::units::{Area, ExpansionCoefficient, HeatTransfer, Unit, Velocity};

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

impl Build for WallSpec {
    type Component = Wall;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> Wall {
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

impl Wall {
    /// The area its desync threshold is scaled by: its largest area, m².
    fn area_scale_m2(&self) -> f64 {
        self.area_m2
            .all_values()
            .iter()
            .fold(0.0_f64, |a, &b| a.max(b.abs()))
    }
}

/// A wall's state is the volume it has swept (for check 9 only: a quadrature); it moves the
/// volumes of the nodes on either side and carries heat between them.
impl Element for Wall {
    const KIND: &'static Kind = &KIND;
    const STATES: usize = 1;
    const QUADRATURES: bool = true;
    const OUTPUTS: &'static [Output] = &[Output::Extra {
        variable: Variable {
            suffix: "Q",
            unit: Unit::power,
            description: "heat flow through {} (left → right)",
        },
        discrete: false,
    }];
    const STATE_VARIABLES: &'static [Variable] = &[Variable {
        suffix: "swept_volume",
        unit: Unit::volume,
        description: "volume swept by {} (grows its left chamber)",
    }];
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.left, self.right].into_iter()
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (k, w) in items.iter().enumerate() {
            let (l, r) = (w.left, w.right);
            let (nl, nr) = (e.nodes[l], e.nodes[r]);
            let area = e.pv(&w.area_m2);
            let vel = w.velocity(
                e.pv(&w.expansion_coefficient_m_per_s_pa),
                e.pv(&w.velocity_m_per_s),
                nl.pressure_pa,
                nr.pressure_pa,
            );
            let dvdt = area * vel;
            let q = w.heat_flow_w(
                e.pv(&w.heat_transfer_coefficient_w_per_m2_k),
                area,
                nl.temperature_k,
                nr.temperature_k,
            );
            dy[at.first_state + k] = dvdt;
            e.boundary_work(l, dvdt, dy);
            e.boundary_work(r, -dvdt, dy);
            e.heat_out(l, q, dy);
            e.heat_out(r, -q, dy);
            // A massless wall stores nothing: (p_l − p_r)·dV/dt is dissipated.
            e.dissipate((nl.pressure_pa - nr.pressure_pa) * dvdt, dy);
        }
    }

    /// The larger initial volume of its chambers.
    fn nominals(&self, out: &mut [f64], volume0: &dyn Fn(usize) -> Option<f64>) {
        out[0] = [volume0(self.left), volume0(self.right)]
            .into_iter()
            .flatten()
            .fold(0.0_f64, f64::max);
    }

    /// Left grows by the swept volume, right shrinks by it.
    fn boundaries(&self, first: usize, push: &mut dyn FnMut(Boundary)) {
        let area_m2 = self.area_scale_m2();
        for (chamber, factor) in [(self.left, 1.0), (self.right, -1.0)] {
            push(Boundary {
                chamber,
                state: first,
                factor,
                area_m2,
            });
        }
    }

    /// Its heat flow from left to right.
    fn extra_output<T: Scalar>(
        &self,
        _k: usize,
        _s: &[T],
        _gas: &IdealGas,
        nodes: &[NodeState<T>],
        pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        self.heat_flow_w(
            pv(&self.heat_transfer_coefficient_w_per_m2_k),
            pv(&self.area_m2),
            nodes[self.left].temperature_k,
            nodes[self.right].temperature_k,
        )
    }

    fn extra_output_reads(&self, _k: usize) -> Reads {
        Reads {
            keys: &["heat_transfer_coefficient", "area"],
            states: &[],
            pressures: false,
            temperatures: true,
        }
    }
}
