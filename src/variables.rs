//! The table of output variables (CLI columns and FMI names alike, DESIGN.md "Variables").

use crate::components::piston;
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

/// Every output, in the order [`write_outputs`] fills them.
pub fn output_variables(sim: &Simulation) -> Vec<OutputVariable> {
    output_variables_of(&sim.network)
}

/// [`output_variables`] of a network.
pub fn output_variables_of(net: &crate::network::Network) -> Vec<OutputVariable> {
    let mut v = vec![var("time".into(), Unit::time(), "simulation time".into())];
    for c in &net.chambers {
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
    // Orifices, valves, mass flows, restrictors, tubes, inertance valves (link order).
    for name in net.named_links() {
        v.push(var(
            format!("{name}.mdot"),
            Unit::mass_rate(),
            format!("mass flow through {name} (from → to)"),
        ));
    }
    for x in &net.inertance_valves {
        v.push(var(
            format!("{}.q", x.name),
            Unit::volume_rate(),
            format!("volume flow through {} (from → to)", x.name),
        ));
    }
    for p in &net.pistons {
        let n = &p.name;
        v.push(var(
            format!("{n}.x"),
            Unit::length(),
            format!("position of {n}"),
        ));
        v.push(var(
            format!("{n}.v"),
            Unit::velocity(),
            format!("velocity of {n}"),
        ));
        v.push(var(
            format!("{n}.exited"),
            Unit::dimensionless(),
            format!("1 once {n} has passed its exit"),
        ));
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
    v
}

/// Index in the output table of the first `<link>.mdot` output (after `time` and the five
/// outputs per chamber); the named links follow in link order.
pub fn first_link_output(net: &crate::network::Network) -> usize {
    1 + 5 * net.chambers.len()
}

/// Whether output `k` (in [`output_variables`] order) depends directly, at the current instant
/// with the state held fixed, on the run-time parameter `<component>.<key>`: only link flows
/// do (see [`crate::network::Network::link_depends_on`]); every other output is time, a state
/// or a function of the state alone.
pub fn output_depends_on(
    net: &crate::network::Network,
    k: usize,
    component: &str,
    key: &str,
) -> bool {
    let first = first_link_output(net);
    k >= first && k < first + net.n_named_links() && net.link_depends_on(k - first, component, key)
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
    for i in 0..sim.network.chambers.len() {
        for x in sim.chamber_state(i) {
            put(x);
        }
    }
    for l in 0..sim.network.n_named_links() {
        put(sim.network.link_mass_flow(l));
    }
    for k in 0..sim.network.inertance_valves.len() {
        put(sim.network.inertance_flow_m3_per_s(k, &sim.y));
    }
    for j in 0..sim.network.pistons.len() {
        let o = sim.network.layout.piston_offset + j * piston::STATES;
        put(sim.y[o + piston::POSITION]);
        put(sim.y[o + piston::VELOCITY]);
        put(if sim.network.exited[j] { 1.0 } else { 0.0 });
    }
    put(sim.network.mass_total_kg(&sim.y));
    put(sim.network.energy_total_j(&sim.y));
    put(sim.rc as f64);
}

/// Whether output `name` has a sensitivity column (time, `rc` and the exit flags do not).
fn has_sensitivity(name: &str) -> bool {
    name != "time" && name != "rc" && !name.ends_with(".exited")
}

/// The sensitivity outputs `d(<output>)/d(<parameter>)`, parameter by parameter, in the order
/// [`write_output_sensitivities`] fills them.
pub fn sensitivity_variables(
    net: &crate::network::Network,
    parameters: &[String],
) -> Vec<OutputVariable> {
    let outputs = output_variables_of(net);
    let mut v = Vec::new();
    for p in parameters {
        for o in outputs.iter().filter(|o| has_sensitivity(&o.name)) {
            v.push(var(
                format!("d({})/d({p})", o.name),
                // Unnamed, as before: a derivative's unit is a quotient the CSV header omits.
                Unit {
                    symbol: String::new(),
                    si: Default::default(),
                },
                format!(
                    "derivative of {} ({}) with respect to {p} (SI)",
                    o.name, o.unit
                ),
            ));
        }
    }
    v
}

/// Fill `out` (length = `sensitivity_variables(net, ..).len()`) with d(output)/dp at (t, y)
/// for sensitivities `s[i]` = ∂y/∂p_i: states directly, pressures, temperatures and link flows
/// by one dual-number evaluation per parameter, the totals by their derivatives.
pub fn write_output_sensitivities(
    net: &mut crate::network::Network,
    t: f64,
    y: &[f64],
    s: &[Vec<f64>],
    params: &[crate::network::SensitivityParameter],
    out: &mut [f64],
) {
    use crate::components::chamber;
    let n = net.layout.n_states;
    let mut f = vec![0.0; n];
    let mut ds = vec![0.0; n];
    let mut dflow = vec![0.0; net.n_named_links()];
    let mut k = 0;
    let mut put = |x: f64| {
        out[k] = x;
        k += 1;
    };
    for (si, p) in s.iter().zip(params) {
        net.sensitivity_rhs(t, y, si, p, &mut f, &mut ds);
        net.last_dual_link_flow_derivatives(&mut dflow);
        for i in 0..net.chambers.len() {
            let o = i * chamber::STATES;
            let d = |j: usize| num_dual::Dual64::new(y[o + j], si[o + j]);
            let (m, u, v) = (d(chamber::MASS), d(chamber::ENERGY), d(chamber::VOLUME));
            put(net.gas.pressure_pa(u, v).eps);
            put(net.gas.temperature_k(m, u).eps);
            put(m.eps);
            put(v.eps);
            put(u.eps);
        }
        for x in &dflow {
            put(*x);
        }
        for k in 0..net.inertance_valves.len() {
            put(si[net.layout.inertance_offset + k]);
        }
        for j in 0..net.pistons.len() {
            let o = net.layout.piston_offset + j * piston::STATES;
            put(si[o + piston::POSITION]);
            put(si[o + piston::VELOCITY]);
        }
        let (dm, de) = net.totals_sensitivity(y, si, p);
        put(dm);
        put(de);
    }
}
