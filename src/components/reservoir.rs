//! Reservoir: an infinite boundary node with prescribed pressure and temperature (constant or a
//! time table), like Cantera's `Reservoir`. It has no state; what flows into it is counted by the
//! network's boundary accumulators so that mass and energy totals stay closed.

use serde::{Deserialize, Serialize};

use crate::param::Param;
use crate::units::{Pressure, ThermodynamicTemperature};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reservoir {
    pub name: String,
    pub pressure_pa: Param<Pressure>,
    pub temperature_k: Param<ThermodynamicTemperature>,
}
