//! From a validated model file to a network and a simulation.

use std::collections::HashMap;

use crate::checks::Thresholds;
use crate::components::element::Build;
use crate::gas::{IdealGas, species};
use crate::integrators::bdf::LinearSolver;
use crate::integrators::{
    DEFAULT_ATOL, DEFAULT_RTOL, Integrator, JacobianSource, Method, StepControl,
};
use crate::model::spec::{GasSection, ModelFile};
use crate::network::{Kinds, Network};
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

/// Build the network of a validated model: each component by its kind's `build`
/// ([`Build`]), kind by kind of the registry.
pub fn build_network(spec: &ModelFile) -> Network {
    let nodes = node_indices(spec);
    let node = |n: &str| *nodes.get(n).expect("validated node reference");
    macro_rules! build_kinds {
        ($($kind:ident => $Spec:ident),* $(,)?) => {
            Kinds {
                $($kind: spec.$kind.iter().map(|x| x.build(&node)).collect(),)*
            }
        };
    }
    Network::new(
        gas_of(spec.gas.as_ref()),
        crate::with_kinds!(build_kinds),
        spec.gas.as_ref().is_some_and(|g| g.isothermal),
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
    let mut integrator = Method::by_name(name, dimension).ok_or_else(|| {
        let known: Vec<&str> = crate::integrators::METHODS.iter().map(|m| m.0).collect();
        format!(
            "unknown method `{name}` (known: {}){}",
            known.join(", "),
            super::locate::did_you_mean(name, known.iter().copied())
        )
    })?;
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
        // The command line's default; the FMU sets its own (`build_at` in cosim/mod.rs).
        stop_on_exit: s.stop_on_exit.unwrap_or(true),
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
    if let Some(e) = unrepresentable_start(&network) {
        return Err(e);
    }
    let sim = Simulation::with_sensitivities(
        network,
        integrator,
        settings,
        thresholds(&spec.checks),
        spec.solver.t_start,
        Sensitivities { names, params },
    );
    sim.check_start(spec.solver.t_end)?;
    Ok(sim)
}

/// A chamber whose initial mass p·V/(R·T) or internal energy no double holds, or whose mass
/// is 0, named with the key that breaks it: each key obeys its rule, but a subnormal
/// temperature (1e-320 K) makes the mass infinite and a subnormal pressure makes it 0 (the
/// run-time checks would then say "state 0 is inf" or "m = 0"). The key named is the one
/// farthest from a usual value (1 bar, 1 L, 300 K) in the direction that breaks the state.
fn unrepresentable_start(network: &Network) -> Option<String> {
    use crate::components::chamber::{ENERGY, MASS, STATES, VOLUME};
    use crate::units::text::number;
    let y = network.initial_state();
    network.chambers().iter().enumerate().find_map(|(i, c)| {
        let (m, u, v) = (
            y[i * STATES + MASS],
            y[i * STATES + ENERGY],
            y[i * STATES + VOLUME],
        );
        if m.is_finite() && u.is_finite() && m > 0.0 {
            return None;
        }
        let (p, t) = (c.initial_pressure.value, c.initial_temperature.value);
        // +1: too much mass or energy (a large p or V, a small T); −1: none.
        let way = if m.is_finite() && u.is_finite() {
            -1.0
        } else {
            1.0
        };
        let score = |x: f64, usual: f64, sign: f64| way * sign * (x.abs() / usual).log10();
        let (key, _) = [
            ("pressure", score(p, 1e5, 1.0)),
            ("volume", score(v, 1e-3, 1.0)),
            ("temperature", score(t, 300.0, -1.0)),
        ]
        .into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
        let (what, why) = if m == 0.0 {
            (
                format!("mass p·V/(R·T) = {} kg", number(m)),
                "leaves no gas",
            )
        } else if !m.is_finite() {
            (
                format!("mass p·V/(R·T) = {} kg", number(m)),
                "is not a finite number",
            )
        } else {
            (
                format!("internal energy = {} J", number(u)),
                "is not a finite number",
            )
        };
        let how = if (way > 0.0) == (key == "temperature") {
            "small"
        } else {
            "large"
        };
        Some(format!(
            "the initial state is impossible: with p = {} Pa, V = {} m^3 and T = {} K the \
             initial {what} of chamber `{}` {why}: its `{key}` is too {how}",
            number(p),
            number(v),
            number(t),
            c.name
        ))
    })
}

/// The run-time checks' thresholds of a `[checks]` section.
pub fn thresholds(c: &crate::model::spec::ChecksSection) -> Thresholds {
    Thresholds {
        mass_drift: c.mass_drift,
        energy_drift: c.energy_drift,
        piston_desync: c.piston_desync,
        mass_gradient_drift: c.mass_gradient_drift,
        energy_gradient_drift: c.energy_gradient_drift,
    }
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
