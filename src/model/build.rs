//! From a validated model file to a network and a simulation.

use std::collections::HashMap;

use crate::components::{
    Chamber, InertanceValve, MassFlow, Orifice, OrificeForm, Piston, Reservoir, Restrictor, Tube,
    Valve, Wall,
};
use crate::gas::{IdealGas, species};
use crate::integrators::bdf::LinearSolver;
use crate::integrators::{
    DEFAULT_ATOL, DEFAULT_RTOL, Integrator, JacobianSource, Method, StepControl,
};
use crate::model::spec::{GasSection, ModelFile};
use crate::network::{Extras, Network};
use crate::param::Param;
use crate::simulation::{Sensitivities, Settings, Simulation};
use crate::units::from_si;

/// The gas of a `[gas]` section (validation guarantees it is complete).
pub fn gas_of(section: Option<&GasSection>) -> IdealGas {
    match section {
        Some(GasSection {
            species: Some(name),
            ..
        }) => IdealGas::from_species(species(name).expect("validated species")),
        Some(g) => IdealGas::new(
            from_si(g.r.expect("validated R")),
            from_si(g.cp.expect("validated cp")),
            g.p_critical.map(from_si),
            g.t_critical.map(from_si),
        ),
        // Liquid-only networks have no gas; the default never enters an equation then.
        None => IdealGas::from_species(species("air").expect("air is built in")),
    }
}

/// Node name → node index (chambers first, then reservoirs).
pub fn node_indices(spec: &ModelFile) -> HashMap<&str, usize> {
    let mut map = HashMap::new();
    for (i, c) in spec.chamber.iter().enumerate() {
        map.insert(c.name.as_str(), i);
    }
    let nc = spec.chamber.len();
    for (j, r) in spec.reservoir.iter().enumerate() {
        map.insert(r.name.as_str(), nc + j);
    }
    map
}

/// An optional parameter of the model file, or its default (SI units of `Q`).
fn param<Q>(p: &Option<crate::model::spec::ParamSpec>, default: f64) -> Param<Q> {
    p.as_ref().map_or(Param::from(default), |p| p.to_param())
}

/// Build the network of a validated model.
pub fn build_network(spec: &ModelFile) -> Network {
    let nodes = node_indices(spec);
    let node = |n: &str| *nodes.get(n).expect("validated node reference");
    Network::with_extras(
        gas_of(spec.gas.as_ref()),
        spec.chamber
            .iter()
            .map(|c| Chamber {
                name: c.name.clone(),
                dead_volume: from_si(c.volume),
                initial_pressure: from_si(c.pressure),
                initial_temperature: from_si(c.temperature),
            })
            .collect(),
        spec.reservoir
            .iter()
            .map(|r| Reservoir {
                name: r.name.clone(),
                pressure_pa: r.pressure.to_param(),
                temperature_k: r.temperature.to_param(),
            })
            .collect(),
        spec.orifice
            .iter()
            .map(|o| Orifice {
                name: o.name.clone(),
                from: node(&o.from),
                to: node(&o.to),
                form: match &o.sonic_conductance {
                    Some(c) => OrificeForm::Iso6358 {
                        sonic_conductance_m3_per_s_pa: c.to_param(),
                        critical_pressure_ratio: param(&o.critical_pressure_ratio, 0.0),
                    },
                    None => OrificeForm::Isentropic {
                        area_m2: param(&o.area, 0.0),
                        discharge_coefficient: param(&o.discharge_coefficient, 1.0),
                    },
                },
            })
            .collect(),
        spec.valve
            .iter()
            .map(|v| Valve {
                name: v.name.clone(),
                from: node(&v.from),
                to: node(&v.to),
                coefficient_kg_per_s_pa: v.coefficient.to_param(),
                one_way: v.one_way,
                opening: v.opening.to_param(),
            })
            .collect(),
        spec.piston
            .iter()
            .map(|p| Piston {
                name: p.name.clone(),
                behind: node(&p.behind),
                ahead: node(&p.ahead),
                area: from_si(p.area),
                mass: from_si(p.mass),
                x0: from_si(p.x0),
                v0: from_si(p.v0),
                x_exit: p.x_exit.map(from_si),
                friction_static_pa: p.friction_static.to_param(),
                friction_dynamic_pa: p.friction_dynamic.to_param(),
                spring_stiffness: from_si(p.spring_stiffness),
                spring_x0: from_si(p.spring_x0),
                damping_n_s_per_m: p.damping.to_param(),
                x_min: p.x_min.map(from_si),
                x_max: p.x_max.map(from_si),
                restitution: p.restitution,
            })
            .collect(),
        spec.wall
            .iter()
            .map(|w| Wall {
                name: w.name.clone(),
                left: node(&w.left),
                right: node(&w.right),
                area_m2: w.area.to_param(),
                heat_transfer_coefficient_w_per_m2_k: w.heat_transfer_coefficient.to_param(),
                expansion_coefficient_m_per_s_pa: w.expansion_coefficient.to_param(),
                velocity_m_per_s: w.velocity.to_param(),
            })
            .collect(),
        Extras {
            mass_flows: spec
                .mass_flow
                .iter()
                .map(|m| MassFlow {
                    name: m.name.clone(),
                    from: node(&m.from),
                    to: node(&m.to),
                    rate_kg_per_s: m.rate.to_param(),
                })
                .collect(),
            restrictors: spec
                .restrictor
                .iter()
                .map(|r| Restrictor {
                    name: r.name.clone(),
                    from: node(&r.from),
                    to: node(&r.to),
                    diameter_m: r.diameter.to_param(),
                    k: r.k.to_param(),
                })
                .collect(),
            tubes: spec
                .tube
                .iter()
                .map(|x| Tube {
                    name: x.name.clone(),
                    from: node(&x.from),
                    to: node(&x.to),
                    length_m: x.length.to_param(),
                    diameter_m: x.diameter.to_param(),
                    roughness_m: x.roughness.to_param(),
                    viscosity_pa_s: x.viscosity.to_param(),
                })
                .collect(),
            inertance_valves: spec
                .inertance_valve
                .iter()
                .map(|x| InertanceValve {
                    name: x.name.clone(),
                    from: node(&x.from),
                    to: node(&x.to),
                    density: from_si(x.density),
                    area_open_m2: x.area_open.to_param(),
                    area_leak_m2: x.area_leak.to_param(),
                    area_from_m2: x.area_from.to_param(),
                    area_to_m2: x.area_to.to_param(),
                    length_m: x.length.to_param(),
                    q0: from_si(x.q0),
                })
                .collect(),
            isothermal: spec.gas.as_ref().is_some_and(|g| g.isothermal),
        },
    )
}

/// Build the simulation of a validated model, optionally with another method.
/// With the model's `[sensitivities] parameters`, the simulation integrates their forward
/// sensitivities with the states (see [`crate::sensitivity`]).
pub fn build_simulation(spec: &ModelFile, method: Option<&str>) -> Result<Simulation, String> {
    build_simulation_of(build_network(spec), spec, method)
}

/// [`build_simulation`] on a given network (built from `spec`, possibly changed by the caller).
pub fn build_simulation_of(
    network: Network,
    spec: &ModelFile,
    method: Option<&str>,
) -> Result<Simulation, String> {
    let names = spec.sensitivities.parameters.clone();
    let params = names
        .iter()
        .map(|name| network.sensitivity_parameter(name))
        .collect::<Result<Vec<_>, _>>()?;
    let dimension = network.layout.n_states * (1 + params.len());
    let name = method.unwrap_or(&spec.solver.method);
    let mut integrator =
        Method::by_name(name, dimension).ok_or_else(|| format!("unknown method `{name}`"))?;
    let s = &spec.solver;
    if let Some(l) = &s.linear_solver {
        let l = linear_solver(l).ok_or_else(|| format!("unknown linear_solver `{l}`"))?;
        integrator.set_linear_solver(l);
    }
    if integrator.fixed_step() && s.step.is_none() {
        return Err(format!("method `{name}` needs solver.step"));
    }
    let settings = Settings {
        step_s: s.step,
        max_time_s: s.max_time,
        max_steps: s.max_steps,
        stop_on_exit: s.stop_on_exit,
        control: StepControl {
            rtol: s.rtol.unwrap_or(DEFAULT_RTOL),
            atol: s.atol.unwrap_or(DEFAULT_ATOL),
            max_step: s.max_step,
            initial_step: s.initial_step,
            span_s: s.t_end - s.t_start,
            jacobian: match &s.jacobian {
                Some(j) => jacobian_source(j).ok_or_else(|| format!("unknown jacobian `{j}`"))?,
                None => JacobianSource::default(),
            },
        },
    };
    let sim = Simulation::with_sensitivities(
        network,
        integrator,
        settings,
        spec.checks.clone(),
        spec.solver.t_start,
        Sensitivities { names, params },
    );
    sim.check_start(spec.solver.t_end)?;
    Ok(sim)
}

/// The `[solver] linear_solver` setting by name.
pub fn linear_solver(name: &str) -> Option<LinearSolver> {
    match name {
        "auto" => Some(LinearSolver::Auto),
        "dense" => Some(LinearSolver::Dense),
        "band" => Some(LinearSolver::Banded),
        "sparse" => Some(LinearSolver::Sparse),
        "krylov" => Some(LinearSolver::Krylov),
        _ => None,
    }
}

/// The `[solver] jacobian` setting by name.
pub fn jacobian_source(name: &str) -> Option<JacobianSource> {
    match name {
        "exact" => Some(JacobianSource::Exact),
        "finite-difference" => Some(JacobianSource::FiniteDifference),
        _ => None,
    }
}
