//! Heat to ambient: a chamber's convective heat exchange with surroundings at a prescribed
//! temperature, Q̇ = h·A·(T_amb − T) into the gas (Newton's law of cooling; Incropera, *Fundamentals
//! of Heat and Mass Transfer*, eq. 1.3a). Between the adiabatic chamber (h = 0) and the
//! isothermal one (h·A → ∞) it makes the polytropic behaviour of a real cylinder or vessel. The
//! heat comes from outside the system: it is counted in the energy accumulator (`energy_left`),
//! so `energy_total` stays constant.
//!
//! Closed form (the verification test): a closed rigid chamber of mass m, c_v constant,
//! m·c_v·dT/dt = h·A·(T_amb − T), so T(t) = T_amb + (T₀ − T_amb)·exp(−h·A·t/(m·c_v)).

use serde::{Deserialize, Serialize};

use crate::ad::Scalar;
use crate::components::NodeState;
use crate::components::element::{
    Accumulators, Build, Clique, Element, Eval, Output, Reads, Slots, Variable,
};
use crate::components::keys::{Component, Kind};
use crate::gas::IdealGas;
use crate::param::{Param, ParamValue};
use crate::units::{Area, HeatTransfer, ThermodynamicTemperature, Unit};

crate::declare_kind! {
    /// `[[ambient_heat]]`: a chamber's heat exchange with its surroundings.
    kind AmbientHeatSpec = "ambient_heat", Boundary, gas;
    name: Name;
    /// The chamber that exchanges heat.
    chamber: Node;
    /// h, W/(m²·K).
    heat_transfer_coefficient: Param, heat_transfer_coefficient, Required, NonNegative;
    /// Wetted area A, m².
    area: Param, area, Required, Positive;
    /// T_amb, K.
    ambient_temperature: Param, temperature, Required, Positive;
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AmbientHeat {
    pub name: String,
    pub chamber: usize,
    pub heat_transfer_coefficient_w_per_m2_k: Param<HeatTransfer>,
    pub area_m2: Param<Area>,
    pub ambient_temperature_k: Param<ThermodynamicTemperature>,
}

impl AmbientHeat {
    /// Heat flow into the gas, W: h·A·(T_amb − T).
    #[inline(always)]
    pub fn heat_in_w<T: Scalar>(&self, h: T, area: T, t_amb: T, t_gas: T) -> T {
        h * area * (t_amb - t_gas)
    }
}

impl Build for AmbientHeatSpec {
    type Component = AmbientHeat;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> AmbientHeat {
        AmbientHeat {
            name: self.name.clone(),
            chamber: node(&self.chamber),
            heat_transfer_coefficient_w_per_m2_k: self.heat_transfer_coefficient.to_param(),
            area_m2: self.area.to_param(),
            ambient_temperature_k: self.ambient_temperature.to_param(),
        }
    }
}

impl Component for AmbientHeat {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!(
        "heat_transfer_coefficient" => heat_transfer_coefficient_w_per_m2_k,
        "area" => area_m2,
        "ambient_temperature" => ambient_temperature_k,
    );
}

impl Element for AmbientHeat {
    const KIND: &'static Kind = &KIND;
    const OUTPUTS: &'static [Output] = &[Output::Extra {
        variable: Variable {
            suffix: "Q",
            unit: Unit::power,
            description: "heat flow from the surroundings into {}'s chamber, h·A·(T_amb − T), W",
        },
        discrete: false,
    }];
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        std::iter::once(self.chamber)
    }

    /// Its chamber's states and the energy accumulator; it moves no volume.
    fn cliques(&self, first: usize, add: &mut dyn FnMut(Clique<'_>)) {
        add(Clique {
            states: first..first,
            nodes: &[self.chamber],
            accumulators: Accumulators::of(KIND.role),
            moves_volumes: false,
        });
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], _: Slots<'_, T>) {
        for x in items {
            let q = x.heat_in_w(
                e.pv(&x.heat_transfer_coefficient_w_per_m2_k),
                e.pv(&x.area_m2),
                e.pv(&x.ambient_temperature_k),
                e.nodes[x.chamber].temperature_k,
            );
            e.heat_out(x.chamber, -q, dy);
            // From outside the system: energy_left falls by what the gas gains.
            e.dissipate(-q, dy);
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
        self.heat_in_w(
            pv(&self.heat_transfer_coefficient_w_per_m2_k),
            pv(&self.area_m2),
            pv(&self.ambient_temperature_k),
            nodes[self.chamber].temperature_k,
        )
    }

    fn extra_output_reads(&self, _k: usize) -> Reads {
        Reads {
            keys: &["heat_transfer_coefficient", "area", "ambient_temperature"],
            states: &[],
            pressures: false,
            temperatures: true,
        }
    }
}
