//! Components, links and run-time parameters by name or index, and a restored network's
//! checks: at load time, for the FMU's calls and for messages, never in the right-hand side.

use super::Network;
use super::kinds::{Registered, each_kind, is_link};
use crate::components::element::Element;
use crate::components::keys::{Component, Key, Link, Role, Rule};
use crate::param::ParamValue;

impl Network {
    /// The links with a `<name>.mdot` output, in link order (not for the right-hand side).
    pub fn links(&self) -> impl Iterator<Item = &dyn Link> {
        (0..self.n_named_links()).filter_map(|l| self.link(l))
    }

    /// Named link `l` (in link order), without walking the links before it.
    pub fn link(&self, l: usize) -> Option<&dyn Link> {
        self.link_at(l).map(|(link, _)| link)
    }

    /// Named link `l` and its first state (for a link whose flow is a state of its own).
    fn link_at(&self, l: usize) -> Option<(&dyn Link, usize)> {
        each_kind!(K => {
            if const { is_link(K::KIND.role) } {
                let first = self.layout.first.flow[K::INDEX];
                let list = K::list(&self.kinds);
                if l >= first && l < first + list.len() * K::FLOWS {
                    let i = (l - first) / divisor(K::FLOWS);
                    let state = self.layout.first::<K>() + i * K::STATES;
                    return list[i].as_link().map(|link| (link, state));
                }
            }
        });
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
        each_kind!(K => {
            if let Some(c) = K::list(&self.kinds).iter().find(|c| c.name() == name) {
                return Some(c);
            }
        });
        None
    }

    /// [`Self::component`], to change it (private: every writer goes through `param_mut`).
    fn component_mut(&mut self, name: &str) -> Option<&mut dyn Component> {
        each_kind!(K => {
            if let Some(i) = K::list(&self.kinds).iter().position(|c| c.name() == name) {
                return Some(&mut K::list_mut(&mut self.kinds)[i]);
            }
        });
        None
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
        // The caller may change the parameter, and with it the breakpoints, the kinds' caches
        // and the reservoir nodes the right-hand side keeps.
        self.forget_breakpoints();
        self.mark_caches_stale();
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
        match self.kinds.chamber.iter().position(|c| c.name == name) {
            Some(i) => Some(self.node_of_chamber(i)),
            None => self
                .kinds
                .reservoir
                .iter()
                .position(|r| r.name == name)
                .map(|j| self.node_of_reservoir(j)),
        }
    }

    /// Whether only liquid links (the kinds of role `LiquidLink`) touch node `node`, and at
    /// least one does.
    fn liquid_only(&self, node: usize) -> bool {
        let (mut liquid, mut gas) = (false, false);
        each_kind!(K => {
            if const { !matches!(K::KIND.role, Role::Node) } {
                for x in K::list(&self.kinds) {
                    if x.nodes().any(|n| n == node) {
                        if K::KIND.role == Role::LiquidLink {
                            liquid = true;
                        } else {
                            gas = true;
                        }
                    }
                }
            }
        });
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
            _ => match self
                .component(component)
                .and_then(|c| c.value_problem(key, value))
            {
                Some(why) => Err(format!("`{component}.{key}` {why}")),
                None => Ok(()),
            },
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

    /// Whether reservoir node `node` is the component named `component`.
    pub(super) fn is_reservoir(&self, node: usize, component: &str) -> bool {
        let nc = self.kinds.chamber.len();
        node >= nc && self.kinds.reservoir[node - nc].name == component
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
        let joins = self.is_reservoir(from, component) || self.is_reservoir(to, component);
        match key {
            "pressure" => joins && link.reads_pressures(),
            "temperature" => joins && link.reads_upstream_temperature(),
            _ => false,
        }
    }

    /// The states the flow of named link `l` (a `<name>.mdot` output) reads directly,
    /// increasing: the mass, energy and volume of each chamber it joins where the flow uses the
    /// pressure and the upstream temperature (orifices, restrictors, tubes), energy and volume
    /// where it uses the pressures alone (valves), none for a prescribed mass flow, and its own
    /// first state for a link whose flow is a state (an inertance valve's q, ṁ = ρ·q).
    pub fn link_state_dependencies(&self, l: usize) -> Vec<usize> {
        use crate::components::chamber;
        let Some((link, state)) = self.link_at(l) else {
            return Vec::new();
        };
        if link.flow_is_state() {
            return vec![state];
        }
        let (from, to) = link.ends();
        let nc = self.kinds.chamber.len();
        let reads: &[usize] = if link.reads_upstream_temperature() {
            &[chamber::MASS, chamber::ENERGY, chamber::VOLUME]
        } else if link.reads_pressures() {
            &[chamber::ENERGY, chamber::VOLUME]
        } else {
            &[]
        };
        let mut states: Vec<usize> = [from, to]
            .into_iter()
            .filter(|&node| node < nc)
            .flat_map(|node| reads.iter().map(move |&s| node * chamber::STATES + s))
            .collect();
        states.sort_unstable();
        states.dedup();
        states
    }
}

/// `n`, or 1 for 0 (a link kind's flow slots per component, as a divisor in code that a kind
/// without flows compiles too).
const fn divisor(n: usize) -> usize {
    if n == 0 { 1 } else { n }
}

/// Checks of a restored (deserialized) network against the one its model builds.
impl Network {
    /// Whether the static parts equal `other`'s exactly: the gas, every component with its
    /// parameters and node indices, the isothermal switch, the moving boundaries and the state
    /// layout. The dynamic parts (exit flags, segment start, counters) are not compared.
    /// `None` when equal, else the first part that differs (for messages: the kind's name).
    pub fn same_structure(&self, other: &Network) -> Option<&'static str> {
        if self.gas != other.gas {
            return Some("gas");
        }
        each_kind!(K => {
            if K::list(&self.kinds) != K::list(&other.kinds) {
                return Some(K::KIND.name);
            }
        });
        let parts = [
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
