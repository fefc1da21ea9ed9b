//! Forward parameter sensitivities along the trajectory (`[sensitivities] parameters`), as
//! CVODES's forward sensitivity analysis offers Cantera's `ReactorNet`.
//!
//! For every parameter p the sensitivity s = ∂y/∂p obeys ṡ = J·s + ∂f/∂p with s(0) = ∂y(0)/∂p
//! (Hindmarsh et al., "SUNDIALS", ACM TOMS 31 (2005), §2.2); both terms come from one dual-number
//! evaluation of the right-hand side with y + s·ε and p + ε ([`Network::sensitivity_rhs`]), so
//! no derivative is written by hand. The states and all sensitivities form one augmented system
//! ([`crate::simulation::System`]) that [`Simulation`] integrates like any model: the model's
//! own method and step control (the error test covers the sensitivities too, CVODES's
//! `errconS = true`), events, table breakpoints, run-time checks, Kahan summation, `max_time`,
//! and co-simulation (the FMU's `d(<output>)/d(<parameter>)` outputs). This module only runs a
//! model that way and collects samples for callers and tests.
//!
//! Events: at a state event g(y) = 0 the event time moves with p,
//! dt_e/dp = −(∂g/∂y·s⁻ + ∂g/∂p)/ġ with ġ = ∂g/∂y·f⁻; the event functions' thresholds are not
//! parameters here, so ∂g/∂p = 0. With the state jump y⁺ = h(y⁻, p) (the identity except at
//! end-stop impacts) and H = ∂h/∂y, s⁺ = H·s⁻ + ∂h/∂p + (H·f⁻ − f⁺)·dt_e/dp (Hairer, Nørsett &
//! Wanner, *Solving ODEs I*, §II.14 on discontinuous systems; CVODES's root sensitivity); H·w
//! and ∂h/∂p come from one dual-number evaluation of the impact map
//! ([`Network::event_jump_tangent`]). [`Simulation`]'s event handling applies the jump.
//!
//! Checks 6 and 7 (BlasterSim's gradient checks): d m_total/dp and d E_total/dp are constant in
//! exact arithmetic, like the totals themselves; their drift from the initial value, made
//! dimensionless as |Δ(dM/dp)|·|p|/M₀ and |Δ(dE/dp)|·|p|/|E₀|, is compared with
//! `[checks] mass_gradient_drift` and `energy_gradient_drift` ([`crate::checks::Checks`], after
//! every step like checks 4 and 5).

use crate::checks::{ENERGY_GRADIENT_DRIFT, MASS_GRADIENT_DRIFT};
use crate::model::ModelFile;
use crate::model::build::{build_network, build_simulation_of};
use crate::network::Network;
use crate::output_grid::OutputGrid;
use crate::simulation::{Advance, Simulation};

/// One event a sensitivity run went through.
#[derive(Clone, Debug, PartialEq)]
pub struct SensitivityEvent {
    /// Event number (see [`Network::n_events`]) and its time, s.
    pub k: usize,
    pub t_s: f64,
    /// dt_e/dp per parameter.
    pub dt_dp: Vec<f64>,
    /// The state and the sensitivities just after the event (after the jump).
    pub y: Vec<f64>,
    pub s: Vec<Vec<f64>>,
}

/// A sampled point of a sensitivity run.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub t_s: f64,
    pub y: Vec<f64>,
    /// s[i] = ∂y/∂p_i.
    pub s: Vec<Vec<f64>>,
    /// The pistons' exit flags there.
    pub exited: Vec<bool>,
}

/// What a sensitivity run gives.
#[derive(Clone, Debug)]
pub struct SensitivityRun {
    /// The parameters as named in the model file, and their values.
    pub names: Vec<String>,
    pub values: Vec<f64>,
    /// States and sensitivities at the start, the output times (`OutputGrid`: t_start +
    /// k·output_interval below t_end, then t_end),
    /// just after each event, and at the end.
    pub samples: Vec<Sample>,
    /// The piston exits passed, in order (the events `Simulation` reports).
    pub events: Vec<SensitivityEvent>,
    /// The network at the end (exit flags set).
    pub network: Network,
    /// Checks 6 and 7: the largest dimensionless drifts seen and the first code that fired
    /// with its time (0: none).
    pub max_mass_gradient_drift: f64,
    pub max_energy_gradient_drift: f64,
    pub rc: u8,
    pub rc_time_s: Option<f64>,
    pub steps: u64,
}

impl SensitivityRun {
    /// The last sample.
    pub fn last(&self) -> &Sample {
        self.samples
            .last()
            .expect("a run has at least its initial sample")
    }
}

/// Run the model with its `[sensitivities] parameters` (or `params` when given).
pub fn run(spec: &ModelFile, params: Option<&[String]>) -> Result<SensitivityRun, String> {
    run_network(build_network(spec), spec, params)
}

/// [`run`] on a given network (built from `spec`, possibly changed by the caller): a
/// [`Simulation`] with the sensitivities, sampled at the output times as the CLI samples it.
pub fn run_network(
    net: Network,
    spec: &ModelFile,
    params: Option<&[String]>,
) -> Result<SensitivityRun, String> {
    let mut spec = spec.clone();
    if let Some(p) = params {
        spec.sensitivities.parameters = p.to_vec();
    }
    let mut sim = build_simulation_of(net, &spec, None)?;
    let s = &spec.solver;
    let n = sim.network.layout.n_states;
    let k = sim.sensitivities.params.len();
    let sample = |sim: &Simulation| Sample {
        t_s: sim.t_s,
        exited: sim.network.exited.clone(),
        y: sim.y[..n].to_vec(),
        s: (0..k)
            .map(|i| sim.y[(i + 1) * n..(i + 2) * n].to_vec())
            .collect(),
    };
    let values: Vec<f64> = sim
        .sensitivities
        .params
        .iter()
        .map(|p| sim.network.sensitivity_parameter_value(p, s.t_start))
        .collect();
    let mut samples = vec![sample(&sim)];
    let mut events = Vec::new();
    // The CLI's output times (`OutputGrid`), from their index (never accumulated).
    let grid = OutputGrid::new(s.t_start, s.t_end, s.output_interval)?;
    let mut j = 1usize;
    while j <= grid.len() {
        let t_j = grid.time(j);
        match sim.advance_to(t_j).map_err(|e| e.to_string())? {
            Advance::Reached => {
                samples.push(sample(&sim));
                j += 1;
            }
            Advance::Exit { .. } => {
                let x = sample(&sim);
                let record = sim.last_event.as_ref().expect("an exit is an event");
                events.push(SensitivityEvent {
                    k: record.k,
                    t_s: record.t_s,
                    dt_dp: record.dt_dp.clone(),
                    y: x.y.clone(),
                    s: x.s.clone(),
                });
                samples.push(x);
            }
            Advance::Finished(_) => break,
        }
    }
    // The gradient check that fired first (checks 6 and 7 only).
    let (rc, rc_time_s) = [MASS_GRADIENT_DRIFT, ENERGY_GRADIENT_DRIFT]
        .into_iter()
        .filter_map(|c| sim.first_fired_s[c as usize].map(|t| (c, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or((0, None), |(c, t)| (c, Some(t)));
    Ok(SensitivityRun {
        names: sim.sensitivities.names.clone(),
        values,
        samples,
        events,
        max_mass_gradient_drift: sim.checks.max_gradient_drift[0],
        max_energy_gradient_drift: sim.checks.max_gradient_drift[1],
        rc,
        rc_time_s,
        steps: sim.stats.steps,
        network: sim.network,
    })
}
