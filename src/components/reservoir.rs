//! Reservoir: an infinite boundary node with prescribed pressure and temperature (constant or a
//! time table), like Cantera's `Reservoir`. It has no state; what flows into it is counted by the
//! network's boundary accumulators so that mass and energy totals stay closed.

use serde::{Deserialize, Serialize};

use crate::param::Param;
use crate::units::{Pressure, ThermodynamicTemperature};

use crate::ad::Scalar;
use crate::components::element::{Build, Element, Eval, Slots};
use crate::components::keys::{Component, Kind};

crate::declare_kind! {
    /// `[[reservoir]]`: a boundary of prescribed state.
    kind ReservoirSpec = "reservoir", Node, no_gas;
    name: Name;
    /// Pa (absolute; gauge for a reservoir that feeds only inertance valves).
    pressure: Param, pressure, Required, AbsoluteUnlessLiquid;
    /// K.
    temperature: Param, temperature, Required, Positive;
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reservoir {
    pub name: String,
    pub pressure_pa: Param<Pressure>,
    pub temperature_k: Param<ThermodynamicTemperature>,
}

impl Build for ReservoirSpec {
    type Component = Reservoir;
    fn build(&self, _node: &dyn Fn(&str) -> usize) -> Reservoir {
        Reservoir {
            name: self.name.clone(),
            pressure_pa: self.pressure.to_param(),
            temperature_k: self.temperature.to_param(),
        }
    }
}

impl Component for Reservoir {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.name
    }
    crate::run_params!("pressure" => pressure_pa, "temperature" => temperature_k);
}

/// A reservoir is a node of prescribed state (the network reads its pressure and temperature
/// before every kind's terms); it has no states or terms of its own.
impl Element for Reservoir {
    const KIND: &'static Kind = &KIND;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        std::iter::empty()
    }

    fn terms<T: Scalar>(_: &[Self], _: &(), _: &Eval<'_, T>, _: &mut [T], _: Slots<'_, T>) {}
}
