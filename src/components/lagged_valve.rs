//! A directional control valve whose spool follows its commanded position with a first-order
//! lag: a `[[directional_valve]]` with `response_time` τ, which the model reader files under
//! this kind (`crate::model`), so that a valve without it keeps its own kind and states.
//!
//! The spool position s is a state: ds/dt = (s_cmd − s)/τ, s_cmd the valve's `position` (a
//! number, a table or an FMU input), s(t₀) = s_cmd(t₀) (its constant or first table value), so
//! that a step of the command opens and closes the paths continuously as
//! s = s_cmd + (s₀ − s_cmd)·exp(−t/τ) (the first-order actuator of Simscape's valve actuators;
//! τ is the time to 63 % of the travel, ln 10·τ ≈ 2.3·τ to 90 %). The flows
//! are the directional valve's at s ([`DirectionalValve::transfer_at`]), its ratio kinks its
//! events. A step of a time-table command is a breakpoint of the table, where the driver stops
//! and restarts its integrator, so the jump of ds/dt there is never stepped across.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::components::NodeState;
use crate::components::directional_valve::{
    self, DirectionalValve, DirectionalValveSpec, PORT_FLOW_OUTPUTS,
};
use crate::components::element::{Build, Element, Eval, EventAt, Output, Reads, Slots, Variable};
use crate::components::keys::{Component, Kind, Link, Problem, Role, Spec, Value};
use crate::gas::IdealGas;
use crate::param::ParamValue;
use crate::units::Unit;

/// Its keys are the directional valve's (`response_time` required).
pub const KIND: Kind = Kind {
    name: "lagged_valve",
    role: Role::Link,
    needs_gas: true,
    keys: directional_valve::KIND.keys,
};

/// `[[lagged_valve]]`: a `[[directional_valve]]` with `response_time`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LaggedValveSpec(pub DirectionalValveSpec);

impl Spec for LaggedValveSpec {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.0.name
    }
    fn value(&self, key: &str) -> Option<Value<'_>> {
        self.0.value(key)
    }
    fn to_table(&self) -> toml::Table {
        self.0.to_table()
    }
    fn problems(&self) -> Vec<Problem> {
        let mut out = self.0.problems();
        if self.0.response_time.is_none() {
            out.push(Problem {
                key: None,
                message: "missing the spool's `response_time` (s): a valve without one is a \
                          `[[directional_valve]]`"
                    .to_string(),
            });
        }
        out
    }
}

/// Its one state, the spool position s.
const SPOOL: usize = 0;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaggedValve {
    /// The valve; its `position` is the command s_cmd.
    pub valve: DirectionalValve,
    /// τ, s (validated: within [`directional_valve::RESPONSE_TIME_RANGE_S`]).
    pub response_time_s: f64,
}

impl Build for LaggedValveSpec {
    type Component = LaggedValve;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> LaggedValve {
        LaggedValve {
            valve: self.0.build(node),
            // Validated: present and within the range (`LaggedValveSpec::problems`).
            response_time_s: self.0.response_time.unwrap_or(f64::NAN),
        }
    }
}

impl Component for LaggedValve {
    fn kind(&self) -> &'static Kind {
        &KIND
    }
    fn name(&self) -> &str {
        &self.valve.name
    }
    fn param(&self, key: &str) -> Option<&ParamValue> {
        (key == "position").then_some(&*self.valve.position)
    }
    fn param_mut(&mut self, key: &str) -> Option<&mut ParamValue> {
        (key == "position").then_some(&mut *self.valve.position)
    }
}

impl Link for LaggedValve {
    fn ends(&self) -> (usize, usize) {
        self.valve.ends()
    }
    fn reads_upstream_temperature(&self) -> bool {
        true
    }
}

impl Element for LaggedValve {
    const KIND: &'static Kind = &KIND;
    const STATES: usize = 1;
    const STATE_VARIABLES: &'static [Variable] = &[Variable {
        suffix: "spool",
        unit: Unit::dimensionless,
        description: "spool position of {}, lagging its command `position`",
    }];
    /// Its spool, then the directional valve's flows through its ports at the spool.
    const OUTPUTS: &'static [Output] = &[
        Output::State(SPOOL),
        PORT_FLOW_OUTPUTS[0],
        PORT_FLOW_OUTPUTS[1],
        PORT_FLOW_OUTPUTS[2],
    ];
    const EVENTS: usize = DirectionalValve::EVENTS;
    const SWITCHES: bool = DirectionalValve::SWITCHES;
    type Cache = ();

    fn nodes(&self) -> impl Iterator<Item = usize> {
        self.valve.nodes()
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    #[inline(always)]
    fn terms<T: Scalar>(items: &[Self], _: &(), e: &Eval<'_, T>, dy: &mut [T], at: Slots<'_, T>) {
        for (k, (v, out)) in items.iter().zip(at.flows.iter_mut()).enumerate() {
            let i = at.first_state + k * Self::STATES + SPOOL;
            let s = e.y[i];
            dy[i] = (e.pv(&v.valve.position) - s) * c::<T>(1.0 / v.response_time_s);
            // Its `mdot`: the flow of its path p → a (its `Link` ends).
            *out = v.valve.transfer_at(s, e, dy)[0];
        }
    }

    /// The command's value at the start: its constant or first table value (0 for a cubic
    /// opening, closed before it opens).
    fn initial_state(&self, out: &mut [f64]) {
        out[SPOOL] = self.valve.position.raw().initial();
    }

    fn has_events(&self) -> bool {
        self.valve.has_events()
    }

    fn event_only_restarts(&self, e: usize) -> bool {
        self.valve.event_only_restarts(e)
    }

    fn event_both_ways(&self, e: usize) -> bool {
        self.valve.event_both_ways(e)
    }

    fn event_never_fires(&self, e: usize) -> bool {
        self.valve.event_never_fires(e)
    }

    fn event_value_at(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        self.valve.event_value_at(e, at)
    }

    fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        self.valve.event_pressure_gradient(e, at, push);
    }

    fn event_description(&self, e: usize) -> String {
        self.valve.event_description(e)
    }

    /// Output `k` (1 … 3: a_mdot, b_mdot, exhaust_mdot) at its spool position `s[SPOOL]`.
    fn extra_output<T: Scalar>(
        &self,
        k: usize,
        s: &[T],
        _gas: &IdealGas,
        nodes: &[NodeState<T>],
        _pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        self.valve.port_flows(s[SPOOL], nodes)[k - 1]
    }

    /// The flows read the spool and the ports' pressures and temperatures, not the command
    /// (the spool holds it back).
    fn extra_output_reads(&self, _k: usize) -> Reads {
        Reads {
            keys: &[],
            states: &[SPOOL],
            pressures: true,
            temperatures: true,
        }
    }
}
