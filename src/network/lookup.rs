//! Components, links and run-time parameters by name or index, and a restored network's
//! checks: at load time, for the FMU's calls and for messages, never in the right-hand side.

use super::{LinksState, Network};
use crate::components::keys::{Component, Key, Link, Rule};
use crate::param::ParamValue;

impl Network {
    /// The kinds of flow links, each as a list, in link order: the one place that lists them
    /// (outside the right-hand side, which is written out per kind).
    fn link_lists(&self) -> [&dyn LinkList; 6] {
        [
            &self.orifices,
            &self.valves,
            &self.mass_flows,
            &self.restrictors,
            &self.tubes,
            &self.inertance_valves,
        ]
    }

    /// The links with a `<name>.mdot` output, in link order (not for the right-hand side).
    pub fn links(&self) -> impl Iterator<Item = &dyn Link> {
        self.link_lists()
            .into_iter()
            .flat_map(|list| (0..list.len()).map(move |i| list.get(i)))
    }

    /// Named link `l` (in link order), without walking the links before it.
    pub fn link(&self, l: usize) -> Option<&dyn Link> {
        let mut l = l;
        for list in self.link_lists() {
            if l < list.len() {
                return Some(list.get(l));
            }
            l -= list.len();
        }
        None
    }

    /// Names of the links with a `<name>.mdot` output, in link order.
    pub fn named_links(&self) -> Vec<&str> {
        self.links().map(|x| x.name()).collect()
    }

    /// The current value of a parameter that may change during a run (see [`Self::set_scalar`]),
    /// by the model file's names: `component` is a component's `name`, `key` its key.
    pub fn get_scalar(&self, component: &str, key: &str, t: f64) -> Option<f64> {
        let param = self.param_ref(component, key)?;
        Some(param.value(t, self.segment_start_s))
    }

    /// The component named `name` (a lookup by name: at load time and for fmi2SetReal, never
    /// in the right-hand side; no allocation).
    pub fn component(&self, name: &str) -> Option<&dyn Component> {
        fn by_name<'a, C: Component>(v: &'a [C], name: &str) -> Option<&'a dyn Component> {
            v.iter()
                .find(|c| c.name() == name)
                .map(|c| c as &dyn Component)
        }
        by_name(&self.chambers, name)
            .or_else(|| by_name(&self.reservoirs, name))
            .or_else(|| by_name(&self.orifices, name))
            .or_else(|| by_name(&self.valves, name))
            .or_else(|| by_name(&self.pistons, name))
            .or_else(|| by_name(&self.walls, name))
            .or_else(|| by_name(&self.mass_flows, name))
            .or_else(|| by_name(&self.restrictors, name))
            .or_else(|| by_name(&self.tubes, name))
            .or_else(|| by_name(&self.inertance_valves, name))
    }

    /// [`Self::component`], to change it (private: every writer goes through `param_mut`).
    fn component_mut(&mut self, name: &str) -> Option<&mut dyn Component> {
        fn by_name<'a, C: Component>(v: &'a mut [C], name: &str) -> Option<&'a mut dyn Component> {
            v.iter_mut()
                .find(|c| c.name() == name)
                .map(|c| c as &mut dyn Component)
        }
        if let Some(c) = by_name(&mut self.chambers, name) {
            return Some(c);
        }
        if let Some(c) = by_name(&mut self.reservoirs, name) {
            return Some(c);
        }
        if let Some(c) = by_name(&mut self.orifices, name) {
            return Some(c);
        }
        if let Some(c) = by_name(&mut self.valves, name) {
            return Some(c);
        }
        if let Some(c) = by_name(&mut self.pistons, name) {
            return Some(c);
        }
        if let Some(c) = by_name(&mut self.walls, name) {
            return Some(c);
        }
        if let Some(c) = by_name(&mut self.mass_flows, name) {
            return Some(c);
        }
        if let Some(c) = by_name(&mut self.restrictors, name) {
            return Some(c);
        }
        if let Some(c) = by_name(&mut self.tubes, name) {
            return Some(c);
        }
        by_name(&mut self.inertance_valves, name)
    }

    /// The declaration of key `<component>.<key>` (`name`), if the component and the key exist.
    pub fn key_of(&self, name: &str) -> Option<&'static Key> {
        let (component, key) = name.rsplit_once('.')?;
        self.component(component)?.kind().key(key)
    }

    /// The parameter `<component>.<key>` that may change during a run, if there is one.
    pub(super) fn param_ref(&self, component: &str, key: &str) -> Option<&ParamValue> {
        self.component(component)?.param(key)
    }

    /// The parameter `<component>.<key>` that may change during a run (by the model file's
    /// names), if there is one.
    pub(super) fn param_mut(&mut self, component: &str, key: &str) -> Option<&mut ParamValue> {
        // The caller may change the parameter, and with it the breakpoints and the reservoir
        // nodes the right-hand side keeps.
        self.forget_breakpoints();
        self.orifice_links.state = LinksState::Stale;
        self.valve_links.state = LinksState::Stale;
        let sc = self.scratch.get_mut();
        sc.reservoirs_fresh = false;
        sc.lean = false;
        self.component_mut(component)?.param_mut(key)
    }

    /// The rule a value of `<component>.<key>` obeys in this network: the key's declared rule
    /// (`crate::components::keys`), where a pressure that may be gauge for a node of liquid
    /// ([`Rule::AbsoluteUnlessLiquid`]) may be any finite value on a reservoir that only liquid
    /// links (inertance valves) touch, as at load time. No allocation.
    pub fn rule_of(&self, component: &str, key: &str) -> Option<Rule> {
        let rule = self.component(component)?.kind().key(key)?.rule;
        if rule != Rule::AbsoluteUnlessLiquid {
            return Some(rule);
        }
        let liquid = self
            .node_index(component)
            .is_some_and(|node| self.liquid_only(node));
        Some(if liquid { Rule::Any } else { Rule::Absolute })
    }

    /// The node index of the chamber or reservoir named `name`.
    fn node_index(&self, name: &str) -> Option<usize> {
        match self.chambers.iter().position(|c| c.name == name) {
            Some(i) => Some(self.node_of_chamber(i)),
            None => self
                .reservoirs
                .iter()
                .position(|r| r.name == name)
                .map(|j| self.node_of_reservoir(j)),
        }
    }

    /// Whether only liquid links (inertance valves) touch node `node`, and at least one does.
    fn liquid_only(&self, node: usize) -> bool {
        let touches = |(a, b): (usize, usize)| a == node || b == node;
        let (mut liquid, mut gas) = (false, false);
        for x in self.links().filter(|x| touches(x.ends())) {
            if x.flow_is_state() {
                liquid = true;
            } else {
                gas = true;
            }
        }
        gas |= self.pistons.iter().any(|x| touches((x.behind, x.ahead)))
            || self.walls.iter().any(|x| touches((x.left, x.right)));
        liquid && !gas
    }

    /// Whether `value` may be set to `<component>.<key>` during a run ([`Self::set_scalar`]):
    /// the key may change during a run, and the value obeys its rule ([`Self::rule_of`]) as a
    /// value in the model file must. The error names the parameter and the rule. No allocation
    /// unless refused.
    pub fn check_scalar(&self, component: &str, key: &str, value: f64) -> Result<(), String> {
        if self.param_ref(component, key).is_none() {
            return Err(format!(
                "`{component}.{key}` cannot change during a run (settable during a run: {})",
                crate::components::settable_during_run()
            ));
        }
        match self.rule_of(component, key) {
            Some(rule) if !rule.holds(value) => {
                let unit = self
                    .component(component)
                    .and_then(|c| c.kind().key(key))
                    .map_or_else(crate::units::Unit::dimensionless, |k| k.unit());
                Err(format!(
                    "`{component}.{key}` must be {}, got {}",
                    rule.text(&unit),
                    crate::units::text::number(value)
                ))
            }
            _ => Ok(()),
        }
    }

    /// Change a parameter during a run (a co-simulation input). Only parameters that set a flow
    /// or a boundary condition can change; the ones that fix initial conditions or geometry
    /// (and so the stored mass and energy) cannot, and the value must obey the key's rule
    /// ([`Self::check_scalar`]: the same as in the model file). A table becomes the constant
    /// `value`. Returns whether the value changed; on an error nothing changes.
    pub fn set_scalar(&mut self, component: &str, key: &str, value: f64) -> Result<bool, String> {
        self.check_scalar(component, key, value)?;
        match self.param_mut(component, key) {
            Some(slot) => {
                let changed = *slot != ParamValue::Const(value);
                *slot = ParamValue::Const(value);
                Ok(changed)
            }
            None => Err(format!("`{component}.{key}` cannot change during a run")),
        }
    }

    /// Whether the flow of named link `l` depends directly (at the current instant, the state
    /// held fixed) on the run-time parameter `<component>.<key>`: its own parameters, and the
    /// pressure (and, where the flow uses the upstream state, the temperature) of a reservoir
    /// it joins. An inertance valve's flow ρ·q is a state. The structure behind the FMU's
    /// ModelStructure dependencies.
    pub fn link_depends_on(&self, l: usize, component: &str, key: &str) -> bool {
        let Some(link) = self.link(l) else {
            return false;
        };
        if self.param_ref(component, key).is_none() || link.flow_is_state() {
            return false;
        }
        if link.name() == component {
            return true;
        }
        let (from, to) = link.ends();
        let reservoir_end = |node: usize| {
            node >= self.chambers.len()
                && self.reservoirs[node - self.chambers.len()].name == component
        };
        let joins = reservoir_end(from) || reservoir_end(to);
        match key {
            "pressure" => joins && link.reads_pressures(),
            "temperature" => joins && link.reads_upstream_temperature(),
            _ => false,
        }
    }
}

/// A list of links of one kind, as [`Network::link_lists`] sees it.
trait LinkList {
    fn len(&self) -> usize;
    fn get(&self, i: usize) -> &dyn Link;
}

impl<C: Link> LinkList for Vec<C> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    fn get(&self, i: usize) -> &dyn Link {
        &self[i]
    }
}

/// Checks of a restored (deserialized) network against the one its model builds.
impl Network {
    /// Whether the static parts equal `other`'s exactly: the gas, every component with its
    /// parameters and node indices, the isothermal switch, the moving boundaries and the state
    /// layout. The dynamic parts (exit flags, segment start, counters) are not compared.
    /// `None` when equal, else the first part that differs (for messages).
    pub fn same_structure(&self, other: &Network) -> Option<&'static str> {
        let parts = [
            ("gas", self.gas == other.gas),
            ("chambers", self.chambers == other.chambers),
            ("reservoirs", self.reservoirs == other.reservoirs),
            ("orifices", self.orifices == other.orifices),
            ("valves", self.valves == other.valves),
            ("pistons", self.pistons == other.pistons),
            ("walls", self.walls == other.walls),
            ("mass flows", self.mass_flows == other.mass_flows),
            ("restrictors", self.restrictors == other.restrictors),
            ("tubes", self.tubes == other.tubes),
            (
                "inertance valves",
                self.inertance_valves == other.inertance_valves,
            ),
            ("isothermal switch", self.isothermal == other.isothermal),
            ("moving boundaries", self.boundaries == other.boundaries),
            (
                "boundary index",
                self.boundary_start == other.boundary_start,
            ),
            ("state layout", self.layout == other.layout),
        ];
        parts
            .into_iter()
            .find(|(_, same)| !same)
            .map(|(what, _)| what)
    }

    /// Take over the run-time parameter `<component>.<key>` from `other` (a restored state
    /// whose input was set during the run) where `set_scalar` can have put it there: `other`
    /// holds the same value as `self` or a finite constant. False otherwise (or when there is
    /// no such parameter).
    pub fn adopt_input(&mut self, other: &Network, component: &str, key: &str) -> bool {
        let Some(theirs) = other.param_ref(component, key) else {
            return false;
        };
        let ok = match theirs {
            ParamValue::Const(v) => v.is_finite(),
            p => self.param_ref(component, key) == Some(p),
        };
        if !ok {
            return false;
        }
        let theirs = theirs.clone();
        match self.param_mut(component, key) {
            Some(slot) => {
                *slot = theirs;
                true
            }
            None => false,
        }
    }
}
