//! Valve: Cantera's linear `Valve`, ṁ = K·opening(t)·(p_from − p_to) (Cantera, "Flow devices"),
//! optionally one-way (no flow from `to` back to `from`). The flow carries the upstream enthalpy.
//! The opening may follow a schedule: a table, or BlasterSim's cubic opening curve
//! `opening = { cubic = { t_open = …, duration = … } }` (0 before t_open, 3s² − 2s³ with
//! s = (t − t_open)/duration during the opening, 1 after; see [`crate::param::Cubic`]).

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c, max0};
use crate::components::NodeState;
use crate::components::element::{
    Build, CacheContext, Compact, CompactState, Element, Eval, Output, Reads, Slots, Variable,
    param_value,
};
use crate::components::keys::{Component, Kind, Link};
use crate::gas::IdealGas;
use crate::param::{Param, ParamValue};
use crate::units::{FlowCoefficient, Ratio, Unit};

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

impl Build for ValveSpec {
    type Component = Valve;
    fn build(&self, node: &dyn Fn(&str) -> usize) -> Valve {
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

/// One valve as the right-hand side reads it: its nodes, the offsets of its ends in dy and its
/// constant K·opening, 32 bytes against a [`Valve`]'s 96: per valve and evaluation the generic
/// loop paid two parameter matches, the upstream index tests and six bounds checks, as much as
/// the flow's arithmetic (the 20-tank chain's right-hand side). The kind's cache ([`Compact`]):
/// built with the network and again after a parameter write.
#[derive(Clone, Copy, Debug)]
pub struct ValveLink {
    pub from: u32,
    pub to: u32,
    /// Index in dy of each end's (mass, energy) pair: its chamber's, or the accumulators'.
    pub dy_from: u32,
    pub dy_to: u32,
    /// K·opening, kg/(s·Pa), when both are constants (the product
    /// [`Valve::mass_flow_kg_per_s`] forms first, so the same bits).
    pub k_open: f64,
    /// The valve's index (the loop carries no counter of its own).
    pub index: u32,
    /// K or the opening varies (a table, a ramp): both read from the valve at t.
    pub varying: bool,
    pub one_way: bool,
}

/// K·opening of valve `v` from its parameters (one of them not a constant) at (t, segment
/// start `seg`), or their seeds'. Out of line, and given the evaluation's parts rather than
/// the evaluation (which would then have to be built in memory on the constant path too).
#[inline(never)]
fn varying_k_open<T: Scalar>(v: &Valve, seeds: &[(&ParamValue, T)], t: f64, seg: f64) -> T {
    let pv = |p: &ParamValue| param_value(p, seeds, t, seg);
    pv(&v.coefficient_kg_per_s_pa) * pv(&v.opening)
}

impl Element for Valve {
    const KIND: &'static Kind = &KIND;
    /// Vents and chains of one-way valves are its networks.
    const LEAN: bool = true;
    const OUTPUTS: &'static [Output] = &[Output::Extra {
        variable: Variable {
            suffix: "open_fraction",
            unit: Unit::dimensionless,
            description: "fraction open of {}, 0..1 (its opening, times a poppet's)",
        },
        discrete: false,
    }];
    type Cache = Compact<ValveLink>;

    fn nodes(&self) -> impl Iterator<Item = usize> {
        [self.from, self.to].into_iter()
    }

    fn as_link(&self) -> Option<&dyn Link> {
        Some(self)
    }

    /// From the links when they are usable and no seed replaces a parameter.
    #[inline(always)]
    fn terms<T: Scalar>(
        items: &[Self],
        cache: &Compact<ValveLink>,
        e: &Eval<'_, T>,
        dy: &mut [T],
        at: Slots<'_, T>,
    ) {
        if cache.state == CompactState::Usable && e.seeds.is_empty() {
            for (l, out) in cache.links.iter().zip(at.flows.iter_mut()) {
                let (nf, nt) = (e.nodes[l.from as usize], e.nodes[l.to as usize]);
                let k_open = if l.varying {
                    // Off the constant path: the valve's own parameters at t.
                    varying_k_open(&items[l.index as usize], e.seeds, e.t, e.seg)
                } else {
                    c(l.k_open)
                };
                let mdot =
                    signed_mass_flow_kg_per_s(k_open, l.one_way, nf.pressure_pa, nt.pressure_pa);
                debug_assert_eq!(mdot.re().to_bits(), {
                    let v = &items[l.index as usize];
                    let (a, b) = (e.pv(&v.coefficient_kg_per_s_pa), e.pv(&v.opening));
                    v.mass_flow_kg_per_s(a, b, nf.pressure_pa, nt.pressure_pa)
                        .re()
                        .to_bits()
                });
                e.transfer_at(nf, nt, l.dy_from as usize, l.dy_to as usize, mdot, dy);
                *out = mdot;
            }
            return;
        }
        for (v, out) in items.iter().zip(at.flows.iter_mut()) {
            let mdot = v.mass_flow_kg_per_s(
                e.pv(&v.coefficient_kg_per_s_pa),
                e.pv(&v.opening),
                e.nodes[v.from].pressure_pa,
                e.nodes[v.to].pressure_pa,
            );
            e.transfer(v.from, v.to, mdot, dy);
            *out = mdot;
        }
    }

    /// The links (in place: no allocation once built).
    #[cold]
    fn refresh_cache(items: &[Self], cache: &mut Compact<ValveLink>, at: &CacheContext) {
        cache.links.clear();
        cache.state = CompactState::Unusable;
        if !at.fits_u32() || items.len() > u32::MAX as usize {
            return;
        }
        for (index, v) in items.iter().enumerate() {
            let (k, open) = (&*v.coefficient_kg_per_s_pa, &*v.opening);
            let (k_open, varying) = match (k, open) {
                (ParamValue::Const(k), ParamValue::Const(o)) => (k * o, false),
                _ => (0.0, true),
            };
            cache.links.push(ValveLink {
                from: v.from as u32,
                to: v.to as u32,
                dy_from: at.dy_pair(v.from) as u32,
                dy_to: at.dy_pair(v.to) as u32,
                k_open,
                index: index as u32,
                varying,
                one_way: v.one_way,
            });
        }
        cache.state = CompactState::Usable;
    }

    /// Its opening.
    fn extra_output<T: Scalar>(
        &self,
        _k: usize,
        _s: &[T],
        _gas: &IdealGas,
        _nodes: &[NodeState<T>],
        pv: &impl Fn(&ParamValue) -> T,
    ) -> T {
        pv(&self.opening)
    }

    fn extra_output_reads(&self, _k: usize) -> Reads {
        Reads {
            keys: &["opening"],
            states: &[],
            pressures: false,
            temperatures: false,
        }
    }
}
