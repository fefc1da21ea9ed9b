//! The table of output variables (CLI columns and FMI names alike; docs/fmu.md, "Variables").

use crate::network::{ComponentOutput, Network};
use crate::simulation::Simulation;
use crate::units::Unit;

#[derive(Clone, Debug, PartialEq)]
pub struct OutputVariable {
    pub name: String,
    /// The unit, from the quantity type (`crate::units`).
    pub unit: Unit,
    pub description: String,
}

fn var(name: String, unit: Unit, description: String) -> OutputVariable {
    OutputVariable {
        name,
        unit,
        description,
    }
}

/// The unit of d(a)/d(b): its symbol by [`quotient_unit`], its SI exponents a's less b's.
fn quotient(a: &Unit, b: &Unit) -> Unit {
    let (x, y) = (a.si, b.si);
    Unit {
        symbol: quotient_unit(&a.symbol, &b.symbol),
        si: crate::units::SiExponents {
            kg: x.kg - y.kg,
            m: x.m - y.m,
            s: x.s - y.s,
            a: x.a - y.a,
            k: x.k - y.k,
            mol: x.mol - y.mol,
            cd: x.cd - y.cd,
        },
    }
}

/// The unit of d(a)/d(b) from the units of a and b in Modelica/FMI notation (one numerator,
/// one optionally parenthesized denominator): `kg/s` over `Pa` gives `kg/(s.Pa)`. Units are not
/// cancelled (`Pa/Pa`); importers reduce them to base units.
pub fn quotient_unit(a: &str, b: &str) -> String {
    fn split(u: &str) -> (Vec<&str>, Vec<&str>) {
        let (num, den) = u.split_once('/').unwrap_or((u, ""));
        let den = den.trim_start_matches('(').trim_end_matches(')');
        (factors(num), factors(den))
    }
    fn factors(g: &str) -> Vec<&str> {
        g.split('.')
            .filter(|f| !f.is_empty() && *f != "1")
            .collect()
    }
    let ((an, ad), (bn, bd)) = (split(a), split(b));
    let num: Vec<&str> = an.into_iter().chain(bd).collect();
    let den: Vec<&str> = ad.into_iter().chain(bn).collect();
    let num = if num.is_empty() {
        "1".to_string()
    } else {
        num.join(".")
    };
    match den.len() {
        0 => num,
        1 => format!("{num}/{}", den[0]),
        _ => format!("{num}/({})", den.join(".")),
    }
}

/// Every output, in the order [`write_outputs`] fills them: the network's outputs, then (with
/// `[sensitivities]`) `d(<output>)/d(<parameter>)` ([`sensitivity_variables`]).
pub fn output_variables(sim: &Simulation) -> Vec<OutputVariable> {
    let mut v = output_variables_of(&sim.network);
    v.extend(sensitivity_variables(
        &sim.network,
        &sim.sensitivities.names,
    ));
    v
}

/// [`output_variables`] of a network.
pub fn output_variables_of(net: &Network) -> Vec<OutputVariable> {
    let mut v = vec![var("time".into(), Unit::time(), "simulation time".into())];
    for c in net.chambers() {
        let n = &c.name;
        v.push(var(
            format!("{n}.p"),
            Unit::pressure(),
            format!("pressure of {n}"),
        ));
        v.push(var(
            format!("{n}.T"),
            Unit::temperature(),
            format!("temperature of {n}"),
        ));
        v.push(var(
            format!("{n}.m"),
            Unit::mass(),
            format!("gas mass in {n}"),
        ));
        v.push(var(
            format!("{n}.V"),
            Unit::volume(),
            format!("volume of {n}"),
        ));
        v.push(var(
            format!("{n}.U"),
            Unit::energy(),
            format!("internal energy of {n}"),
        ));
    }
    // The links' flows, kind by kind (orifices, valves, mass flows, restrictors, tubes,
    // inertance valves: link order).
    for name in net.named_links() {
        v.push(var(
            format!("{name}.mdot"),
            Unit::mass_rate(),
            format!("mass flow through {name} (from → to)"),
        ));
    }
    // The components' states and flags as their kinds declare them (an inertance valve's q,
    // a piston's x, v and exit flag).
    for o in net.state_outputs() {
        v.push(component_variable(net, o));
    }
    v.push(var(
        "mass_total".into(),
        Unit::mass(),
        "gas mass plus the net mass that left into reservoirs".into(),
    ));
    v.push(var(
        "energy_total".into(),
        Unit::energy(),
        "internal, kinetic and spring energy plus all that left through reservoirs, friction and walls".into(),
    ));
    v.push(var(
        "rc".into(),
        Unit::dimensionless(),
        "run-time check code of the last step (0 = fine)".into(),
    ));
    // The components' extra outputs as their kinds declare them (openings, choked flags,
    // heat flows).
    for o in net.extra_outputs() {
        v.push(component_variable(net, o));
    }
    v
}

/// A component's output as its kind declares it (`Element::OUTPUTS`).
fn component_variable(net: &Network, o: ComponentOutput) -> OutputVariable {
    let out = net.output_name(o);
    let (name, description) = out.variable.of(out.component);
    var(name, (out.variable.unit)(), description)
}

/// The number of extra outputs (the last outputs of the network, after `rc`).
fn n_extra(net: &Network) -> usize {
    net.extra_outputs().len()
}

/// Whether output `name` is discrete (time, the continuous outputs and their sensitivities
/// aside): `rc`, and the outputs the kinds declare discrete (a piston's exit flag, an
/// orifice's choked flag), by their suffix. [`discrete_outputs`] says it by index for a
/// network.
pub fn is_discrete_output(name: &str) -> bool {
    use crate::components::element::Output;
    if name == "rc" {
        return true;
    }
    let Some((_, suffix)) = name.rsplit_once('.') else {
        return false;
    };
    macro_rules! discrete_suffix {
        ($($kind:ident => $Spec:ident),* $(,)?) => {
            [$(
                <<crate::components::$kind::$Spec as crate::components::element::Build>::Component
                    as crate::components::element::Element>::OUTPUTS
            ),*]
        };
    }
    crate::with_kinds!(discrete_suffix)
        .iter()
        .flat_map(|outputs| outputs.iter())
        .any(|o| match o {
            Output::Flag(v)
            | Output::Extra {
                variable: v,
                discrete: true,
            } => v.suffix == suffix,
            _ => false,
        })
}

/// Per output of [`output_variables_of`], whether it is discrete: `rc` and the outputs the
/// kinds declare discrete.
pub fn discrete_outputs(net: &Network) -> Vec<bool> {
    let n_states = net.state_outputs();
    let n_extra = net.extra_outputs();
    let mut d = vec![false; first_link_output(net) + net.n_named_links()];
    d.extend(n_states.iter().map(|&o| net.output_name(o).discrete));
    d.extend([false, false, true]);
    d.extend(n_extra.iter().map(|&o| net.output_name(o).discrete));
    d
}

/// Index in the output table of the first `<link>.mdot` output (after `time` and the five
/// outputs per chamber); the named links follow in link order.
pub fn first_link_output(net: &Network) -> usize {
    1 + 5 * net.chambers().len()
}

/// Whether output `k` (in [`output_variables`] order) depends directly, at the current instant
/// with the state held fixed, on the run-time parameter `<component>.<key>`: only link flows
/// and their sensitivities do (see [`Network::link_depends_on`]); every other
/// output is time, a state or a function of the state (and its sensitivities) alone.
pub fn output_depends_on(net: &Network, k: usize, component: &str, key: &str) -> bool {
    let first = first_link_output(net);
    let n_links = net.n_named_links();
    if k >= first && k < first + n_links {
        return net.link_depends_on(k - first, component, key);
    }
    // `d(<link>.mdot)/d(<parameter>)` (after the network's outputs, one block per parameter)
    // = ∂ṁ/∂y·s + ∂ṁ/∂p depends on an input exactly where the flow itself does.
    let n_plain = output_variables_of(net).len();
    let extra = n_extra(net);
    if k >= n_plain - extra && k < n_plain {
        let x = net.extra_outputs().get(k - (n_plain - extra)).copied();
        return x.is_some_and(|x| net.output_depends_on(x, component, key));
    }
    if k < n_plain {
        return false;
    }
    // A block is the plain outputs without time, rc, the flags and the extra outputs: the
    // chambers' five, then the links, as in `write_sensitivities`.
    let flags = net
        .state_outputs()
        .iter()
        .filter(|&&o| net.output_name(o).discrete)
        .count();
    let block = n_plain - 2 - flags - extra;
    let j = (k - n_plain) % block;
    let first = 5 * net.chambers().len();
    j >= first && j < first + n_links && net.link_depends_on(j - first, component, key)
}

/// Whether output `k` is a sensitivity output `d(<output>)/d(<parameter>)` (they follow the
/// network's outputs).
pub fn is_sensitivity_output(net: &Network, k: usize) -> bool {
    k >= output_variables_of(net).len()
}

/// Fill `out` (length = `output_variables(sim).len()`) with the current values.
pub fn write_outputs(sim: &mut Simulation, out: &mut [f64]) {
    sim.refresh_flows();
    let mut k = 0;
    let mut put = |x: f64| {
        out[k] = x;
        k += 1;
    };
    put(sim.t_s);
    for i in 0..sim.network.chambers().len() {
        for x in sim.chamber_state(i) {
            put(x);
        }
    }
    for l in 0..sim.network.n_named_links() {
        put(sim.network.link_mass_flow(l));
    }
    sim.network.write_state_outputs(&sim.y, &mut put);
    put(sim.network.mass_total_kg(&sim.y));
    put(sim.network.energy_total_j(&sim.y));
    put(sim.rc as f64);
    sim.network.write_extra_outputs(sim.t_s, &sim.y, &mut put);
    if !sim.sensitivities.params.is_empty() {
        let n = sim.network.layout.n_states;
        let (ys, ss) = sim.y.split_at(n);
        write_sensitivities(
            &mut sim.network,
            sim.t_s,
            ys,
            |i| &ss[i * n..(i + 1) * n],
            &sim.sensitivities.params,
            &mut out[k..],
        );
    }
}

/// Whether output `k` of `outputs` (with `discrete` from [`discrete_outputs`]) has a
/// sensitivity column (time, `rc`, the flags and the extra outputs after `rc` do not).
fn has_sensitivity(
    outputs: &[OutputVariable],
    discrete: &[bool],
    k: usize,
    n_extra: usize,
) -> bool {
    k < outputs.len() - n_extra && outputs[k].name != "time" && !discrete[k]
}

/// The sensitivity outputs `d(<output>)/d(<parameter>)`, parameter by parameter, in the order
/// [`write_output_sensitivities`] fills them.
pub fn sensitivity_variables(net: &Network, parameters: &[String]) -> Vec<OutputVariable> {
    let outputs = output_variables_of(net);
    let discrete = discrete_outputs(net);
    let mut v = Vec::new();
    for p in parameters {
        // The parameter's unit, as its kind declares the key.
        let unit = net.key_of(p).map_or_else(Unit::dimensionless, |k| k.unit());
        let extra = n_extra(net);
        let with = (0..outputs.len()).filter(|&k| has_sensitivity(&outputs, &discrete, k, extra));
        for o in with.map(|k| &outputs[k]) {
            v.push(var(
                format!("d({})/d({p})", o.name),
                quotient(&o.unit, &unit),
                format!("derivative of {} with respect to {p} (SI units)", o.name),
            ));
        }
    }
    v
}

/// Fill `out` (length = `sensitivity_variables(net, ..).len()`) with d(output)/dp at (t, y)
/// for sensitivities `s[i]` = ∂y/∂p_i: states directly, pressures, temperatures and link flows
/// by one dual-number evaluation per parameter, the totals by their derivatives.
pub fn write_output_sensitivities(
    net: &mut Network,
    t: f64,
    y: &[f64],
    s: &[Vec<f64>],
    params: &[crate::network::SensitivityParameter],
    out: &mut [f64],
) {
    write_sensitivities(net, t, y, |i| &s[i], params, out);
}

fn write_sensitivities<'a>(
    net: &mut Network,
    t: f64,
    y: &[f64],
    s: impl Fn(usize) -> &'a [f64],
    params: &[crate::network::SensitivityParameter],
    out: &mut [f64],
) {
    let n = net.layout.n_states;
    let mut f = vec![0.0; n];
    let mut ds = vec![0.0; n];
    let mut dflow = vec![0.0; net.n_named_links()];
    let mut k = 0;
    let mut put = |x: f64| {
        out[k] = x;
        k += 1;
    };
    for (i, p) in params.iter().enumerate() {
        let si = s(i);
        net.sensitivity_rhs(t, y, si, p, &mut f, &mut ds);
        net.last_dual_link_flow_derivatives(&mut dflow);
        let totals = net.totals_sensitivity(y, si, p);
        put_tangents(net, y, si, &dflow, totals, false, &mut put);
    }
}

/// The tangents of the network's outputs at state `y` in the direction `s` of the states, with
/// the named links' flow tangents `dflow` and the totals' `(d mass_total, d energy_total)`:
/// states directly, pressures and temperatures by dual numbers of their chamber's states.
/// `full`: every output in [`output_variables_of`] order (0 for `time`, the flags and `rc`);
/// else the block of a sensitivity parameter, which leaves those three out.
fn put_tangents(
    net: &Network,
    y: &[f64],
    s: &[f64],
    dflow: &[f64],
    (dm, de): (f64, f64),
    full: bool,
    put: &mut impl FnMut(f64),
) {
    use crate::components::chamber;
    if full {
        put(0.0);
    }
    for i in 0..net.chambers().len() {
        let o = i * chamber::STATES;
        let d = |j: usize| num_dual::Dual64::new(y[o + j], s[o + j]);
        let (m, u, v) = (d(chamber::MASS), d(chamber::ENERGY), d(chamber::VOLUME));
        put(net.gas.pressure_pa(u, v).eps);
        put(net.gas.temperature_k(m, u).eps);
        put(m.eps);
        put(v.eps);
        put(u.eps);
    }
    for x in dflow {
        put(*x);
    }
    net.write_state_output_tangents(s, full, put);
    put(dm);
    put(de);
    if full {
        put(0.0);
    }
}

/// Fill `out` (length = `output_variables_of(net).len()`) with the directional derivative of
/// every output of the network at (t, y) in the direction `v` of the states and `seeds` =
/// [(component, key, direction)] of run-time parameters, exact (one dual-number evaluation,
/// [`Network::tangent`]); f and its directional derivative go to `dydt` and
/// `df`. Outputs that are discrete (the exit and choked flags, `rc`) or the time have 0.
#[allow(clippy::too_many_arguments)]
pub fn write_output_tangents(
    net: &mut Network,
    t: f64,
    y: &[f64],
    v: &[f64],
    seeds: &[(&str, &str, f64)],
    dydt: &mut [f64],
    df: &mut [f64],
    out: &mut [f64],
) -> Result<(), String> {
    net.tangent(t, y, v, seeds, dydt, df)?;
    let mut dflow = vec![0.0; net.n_named_links()];
    net.last_dual_link_flow_derivatives(&mut dflow);
    let totals = net.totals_tangent(y, v);
    let mut k = 0;
    let mut put = |x: f64| {
        out[k] = x;
        k += 1;
    };
    put_tangents(net, y, v, &dflow, totals, true, &mut put);
    net.write_extra_output_tangents(t, seeds, &mut put)
}

/// A continuous state as a variable: its name, unit and description, and its index in the
/// output table when an output is that state (a chamber's `m`, `U`, `V`, a piston's `x`, `v`,
/// an inertance valve's `q`); the walls' swept volumes and the two accumulators are no output.
#[derive(Clone, Debug, PartialEq)]
pub struct StateVariable {
    pub variable: OutputVariable,
    pub output: Option<usize>,
}

/// Every state of the network's state vector, in its order ([`crate::network::Layout`]): each
/// kind's states as it declares them (`Element::STATE_VARIABLES`), then the two accumulators.
pub fn state_variables(net: &Network) -> Vec<StateVariable> {
    let outputs = output_variables_of(net);
    let l = &net.layout;
    let mut states = Vec::with_capacity(l.n_states);
    let mut named: Vec<OutputVariable> = net
        .state_names()
        .into_iter()
        .map(|(name, unit, description)| var(name, unit, description))
        .collect();
    named.push(var(
        "mass_left".into(),
        Unit::mass(),
        "gas mass that left into reservoirs (accumulated)".into(),
    ));
    named.push(var(
        "energy_left".into(),
        Unit::energy(),
        "energy that left through reservoirs, friction, damping, impacts and walls \
         (accumulated)"
            .into(),
    ));
    debug_assert_eq!(named.len(), l.n_states);
    for variable in named {
        // A state that is an output is that output's variable.
        match outputs.iter().position(|o| o.name == variable.name) {
            Some(k) => states.push(StateVariable {
                variable: outputs[k].clone(),
                output: Some(k),
            }),
            None => states.push(StateVariable {
                variable,
                output: None,
            }),
        }
    }
    states
}

/// The unit of a state's time derivative: `kg` → `kg/s`, `m/s` → `m/s2`.
pub fn derivative_unit(u: &Unit) -> Unit {
    let mut si = u.si;
    si.s -= 1;
    let symbol = if let Some(base) = u.symbol.strip_suffix("/s") {
        format!("{base}/s2")
    } else if u.symbol == "1" {
        "1/s".to_string()
    } else {
        format!("{}/s", u.symbol)
    };
    Unit { symbol, si }
}

/// The states output `k` (in [`output_variables_of`] order) reads directly, increasing: a
/// chamber's pressure its energy and volume (p = (γ − 1)·U/V), its temperature its mass and
/// energy (T = U/(m·c_v)), a link's flow what [`Network::link_state_dependencies`]
/// says, a state itself, `mass_total` every chamber's mass and `mass_left`, `energy_total` every
/// chamber's energy, the states of the stored mechanical energy (every piston's velocity, and
/// position with a spring) and `energy_left`; `time`, the flags and `rc` none.
pub fn output_state_dependencies(net: &Network, k: usize) -> Vec<usize> {
    use crate::components::chamber;
    let nc = net.chambers().len();
    let l = &net.layout;
    if k == 0 {
        return Vec::new();
    }
    let mut k = k - 1;
    if k < 5 * nc {
        let o = (k / 5) * chamber::STATES;
        let (m, u, v) = (o + chamber::MASS, o + chamber::ENERGY, o + chamber::VOLUME);
        let mut d = match k % 5 {
            0 => vec![u, v],
            1 => vec![m, u],
            2 => vec![m],
            3 => vec![v],
            _ => vec![u],
        };
        d.sort_unstable();
        return d;
    }
    k -= 5 * nc;
    if k < net.n_named_links() {
        return net.link_state_dependencies(k);
    }
    k -= net.n_named_links();
    let state_outputs = net.state_outputs();
    if k < state_outputs.len() {
        return net.output_state_dependencies(state_outputs[k]);
    }
    k -= state_outputs.len();
    match k {
        0 => (0..nc)
            .map(|i| i * chamber::STATES + chamber::MASS)
            .chain([l.accumulator_offset])
            .collect(),
        2 => Vec::new(),
        1 => {
            let mut d: Vec<usize> = (0..nc)
                .map(|i| i * chamber::STATES + chamber::ENERGY)
                .collect();
            d.extend(net.stored_energy_state_dependencies());
            d.push(l.accumulator_offset + 1);
            d
        }
        _ => net
            .extra_outputs()
            .get(k - 3)
            .map_or_else(Vec::new, |&x| net.output_state_dependencies(x)),
    }
}

#[cfg(test)]
mod tests {
    use super::quotient_unit;

    /// Each result parses to the base-unit exponents of a/b (checked by hand here; fmu-build's
    /// parser checks every generated unit).
    #[test]
    fn quotient_units() {
        for (a, b, q) in [
            ("m/s", "kg", "m/(s.kg)"),
            ("m/s", "Pa", "m/(s.Pa)"),
            ("kg/s", "kg/(s.Pa)", "kg.s.Pa/(s.kg)"),
            ("Pa", "Pa", "Pa/Pa"),
            ("1", "kg", "1/kg"),
            ("J", "1", "J"),
            ("m3", "m3/(s.Pa)", "m3.s.Pa/m3"),
        ] {
            println!("d({a})/d({b}): {}", quotient_unit(a, b));
            assert_eq!(quotient_unit(a, b), q);
        }
    }
}
