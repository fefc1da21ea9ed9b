//! Forward parameter sensitivities along the trajectory (`[sensitivities] parameters`), as
//! CVODES's forward sensitivity analysis offers Cantera's `ReactorNet`.
//!
//! For every parameter p the sensitivity s = ∂y/∂p obeys ṡ = J·s + ∂f/∂p with s(0) = ∂y(0)/∂p
//! (Hindmarsh et al., "SUNDIALS", ACM TOMS 31 (2005), §2.2); both terms come from one dual-number
//! evaluation of the right-hand side with y + s·ε and p + ε ([`Network::sensitivity_rhs`]), so
//! no derivative is written by hand. The states and all sensitivities form one augmented system
//! integrated by the model's own method and step control (the error test covers the
//! sensitivities too, CVODES's `errconS = true`).
//!
//! Events: at a state event g(y) = 0 the event time moves with p,
//! dt_e/dp = −(∂g/∂y·s⁻ + ∂g/∂p)/ġ with ġ = ∂g/∂y·f⁻, and when the right-hand side changes
//! there (a projectile leaves the bore) s⁺ = s⁻ + (f⁻ − f⁺)·dt_e/dp (Hairer, Nørsett & Wanner,
//! *Solving ODEs I*, §II.14 on discontinuous systems; CVODES's root sensitivity). The event
//! functions' thresholds are not parameters here, so ∂g/∂p = 0. Events that change the state
//! (end-stop impacts) are refused: their jump also needs ∂h/∂y.
//!
//! Checks 6 and 7 (BlasterSim's gradient checks): d m_total/dp and d E_total/dp are constant in
//! exact arithmetic, like the totals themselves; their drift from the initial value, made
//! dimensionless as |Δ(dM/dp)|·|p|/M₀ and |Δ(dE/dp)|·|p|/|E₀|, is compared with
//! `[checks] mass_gradient_drift` and `energy_gradient_drift`.

use crate::checks::{ENERGY_GRADIENT_DRIFT, MASS_GRADIENT_DRIFT};
use crate::integrators::{
    DEFAULT_ATOL, DEFAULT_RTOL, Integrator, JacobianSource, Method, StepControl,
};
use crate::model::ModelFile;
use crate::model::build::{build_network, jacobian_source};
use crate::network::{Network, SensitivityParameter};
use crate::ode::OdeSystem;

/// The network's states followed by one sensitivity vector per parameter.
pub struct SensitivitySystem {
    pub net: Network,
    pub params: Vec<SensitivityParameter>,
}

impl SensitivitySystem {
    fn n(&self) -> usize {
        self.net.layout.n_states
    }
}

impl OdeSystem for SensitivitySystem {
    fn dimension(&self) -> usize {
        self.n() * (1 + self.params.len())
    }

    fn rhs(&mut self, t: f64, y: &[f64], dydt: &mut [f64]) {
        let n = self.n();
        let (ys, ss) = y.split_at(n);
        let (f, ds) = dydt.split_at_mut(n);
        if self.params.is_empty() {
            self.net.rhs(t, ys, f);
            return;
        }
        for (i, p) in self.params.iter().enumerate() {
            let r = i * n..(i + 1) * n;
            self.net
                .sensitivity_rhs(t, ys, &ss[r.clone()], p, f, &mut ds[r]);
        }
    }
}

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
    /// States and sensitivities at the start, the output times (t_start + k·output_interval),
    /// just after each event, and at the end.
    pub samples: Vec<Sample>,
    /// The events passed, in order.
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

/// [`run`] on a given network (built from `spec`, possibly changed by the caller).
pub fn run_network(
    net: Network,
    spec: &ModelFile,
    params: Option<&[String]>,
) -> Result<SensitivityRun, String> {
    let names: Vec<String> = params
        .map(|p| p.to_vec())
        .unwrap_or_else(|| spec.sensitivities.parameters.clone());
    let params = names
        .iter()
        .map(|name| net.sensitivity_parameter(name))
        .collect::<Result<Vec<_>, _>>()?;
    let s = &spec.solver;
    let n = net.layout.n_states;
    let k = params.len();
    let dim = n * (1 + k);
    let mut integ =
        Method::by_name(&s.method, dim).ok_or_else(|| format!("unknown method `{}`", s.method))?;
    if integ.fixed_step() && s.step.is_none() {
        return Err(format!("method `{}` needs solver.step", s.method));
    }
    integ.configure(&StepControl {
        rtol: s.rtol.unwrap_or(DEFAULT_RTOL),
        atol: s.atol.unwrap_or(DEFAULT_ATOL),
        max_step: s.max_step,
        initial_step: s.initial_step,
        span_s: s.t_end - s.t_start,
        jacobian: match &s.jacobian {
            Some(j) => jacobian_source(j).ok_or_else(|| format!("unknown jacobian `{j}`"))?,
            None => JacobianSource::default(),
        },
    });

    let mut t = s.t_start;
    let mut sys = SensitivitySystem { net, params };
    sys.net.segment_start_s = t;
    let mut y = vec![0.0; dim];
    y[..n].copy_from_slice(&sys.net.initial_state());
    for (i, p) in sys.params.iter().enumerate() {
        sys.net
            .initial_sensitivity(p, &mut y[(i + 1) * n..(i + 2) * n]);
    }
    let values: Vec<f64> = sys
        .params
        .iter()
        .map(|p| sys.net.sensitivity_parameter_value(p, t))
        .collect();
    let split = |y: &[f64], exited: &[bool]| Sample {
        t_s: 0.0,
        exited: exited.to_vec(),
        y: y[..n].to_vec(),
        s: (0..k)
            .map(|i| y[(i + 1) * n..(i + 2) * n].to_vec())
            .collect(),
    };
    let m0 = sys.net.mass_total_kg(&y[..n]);
    let e0 = sys.net.energy_total_j(&y[..n]);
    let d0: Vec<(f64, f64)> = (0..k)
        .map(|i| {
            sys.net
                .totals_sensitivity(&y[..n], &y[(i + 1) * n..(i + 2) * n], &sys.params[i])
        })
        .collect();

    let mut run = SensitivityRun {
        names: names.clone(),
        values: values.clone(),
        samples: vec![Sample {
            t_s: t,
            ..split(&y, &sys.net.exited)
        }],
        events: Vec::new(),
        network: sys.net.clone(),
        max_mass_gradient_drift: 0.0,
        max_energy_gradient_drift: 0.0,
        rc: 0,
        rc_time_s: None,
        steps: 0,
    };
    let interval = s.output_interval.unwrap_or((s.t_end - s.t_start) / 100.0);
    // Output times from their index (never accumulated), as the CLI computes them.
    let n_out = ((t_end_of(spec) - t) / interval).round() as usize;
    let t0 = t;
    let output_time = |k: usize| {
        if k >= n_out {
            f64::INFINITY
        } else {
            t0 + k as f64 * interval
        }
    };
    let mut k_out = 1usize;
    let mut next_output = output_time(k_out);
    let mut inc = vec![0.0; dim];
    let mut y_new = vec![0.0; dim];
    // Dense-output buffers for the samples.
    let (mut out, mut di) = (vec![0.0; dim], vec![0.0; dim]);
    let (mut f_before, mut f_after) = (vec![0.0; n], vec![0.0; n]);
    let t_end = s.t_end;
    let fixed = integ.fixed_step();
    while t < t_end {
        let mut limit = t_end;
        if let Some(b) = sys.net.next_breakpoint_after(t) {
            limit = limit.min(b);
        }
        let h_allowed = if fixed {
            s.step.unwrap_or(f64::INFINITY).min(limit - t)
        } else {
            let h = limit - t;
            s.max_step.map_or(h, |m| h.min(m))
        };
        let h = integ
            .attempt(&mut sys, t, &y, h_allowed, &mut inc)
            .map_err(|e| e.to_string())?;
        add(&y, &inc, &mut y_new);
        // Earliest event inside the step.
        let mut event: Option<(usize, f64)> = None;
        for ek in 0..sys.net.n_events() {
            let (Some(g0), Some(g1)) = (
                sys.net.event_value(ek, t, &y[..n]),
                sys.net.event_value(ek, t + h, &y_new[..n]),
            ) else {
                continue;
            };
            if g0 < 0.0 && g1 >= 0.0 {
                let he = locate(
                    &mut integ, &mut sys, ek, t, h, g0, g1, &y, &mut inc, &mut y_new,
                )?;
                if event.is_none_or(|(_, e)| he < e) {
                    event = Some((ek, he));
                }
            }
        }
        let h_end = match event {
            Some((_, he)) => {
                integ
                    .dense(&mut sys, t, &y, he, &mut inc)
                    .map_err(|e| e.to_string())?;
                add(&y, &inc, &mut y_new);
                he
            }
            None => h,
        };
        let t_new = if event.is_none() && t + h_end >= limit - 1e-15 * limit.abs() {
            limit
        } else {
            t + h_end
        };
        // Output samples inside the step, by the method's dense output.
        while next_output <= t_new * (1.0 + 1e-14) && next_output < t_end {
            if next_output >= t_new {
                out.copy_from_slice(&y_new);
            } else {
                integ
                    .dense(&mut sys, t, &y, next_output - t, &mut di)
                    .map_err(|e| e.to_string())?;
                add(&y, &di, &mut out);
            }
            run.samples.push(Sample {
                t_s: next_output,
                ..split(&out, &sys.net.exited)
            });
            k_out += 1;
            next_output = output_time(k_out);
        }
        integ.commit(&mut sys, t_new, &y_new);
        std::mem::swap(&mut y, &mut y_new);
        t = t_new;
        run.steps += 1;

        // Checks 6 and 7.
        for i in 0..k {
            let (dm, de) =
                sys.net
                    .totals_sensitivity(&y[..n], &y[(i + 1) * n..(i + 2) * n], &sys.params[i]);
            let p = values[i].abs();
            let rm = if m0 > 0.0 {
                (dm - d0[i].0).abs() * p / m0
            } else {
                0.0
            };
            let re = if e0 != 0.0 {
                (de - d0[i].1).abs() * p / e0.abs()
            } else {
                0.0
            };
            run.max_mass_gradient_drift = run.max_mass_gradient_drift.max(rm);
            run.max_energy_gradient_drift = run.max_energy_gradient_drift.max(re);
            let code = if rm > spec.checks.mass_gradient_drift {
                MASS_GRADIENT_DRIFT
            } else if re > spec.checks.energy_gradient_drift {
                ENERGY_GRADIENT_DRIFT
            } else {
                0
            };
            if code != 0 && run.rc == 0 {
                run.rc = code;
                run.rc_time_s = Some(t);
            }
        }

        if let Some((ek, _)) = event {
            // f⁻, the event-time sensitivities, the event, f⁺ and the jump.
            sys.net.rhs(t, &y[..n], &mut f_before);
            let gdot = sys.net.event_gradient_dot(ek, &f_before);
            if gdot == 0.0 {
                return Err(format!(
                    "{} at t = {t} s: the event function does not cross (ġ = 0), so its time \
                     has no derivative",
                    sys.net.event_description(ek)
                ));
            }
            let dt_dp: Vec<f64> = (0..k)
                .map(|i| -sys.net.event_gradient_dot(ek, &y[(i + 1) * n..(i + 2) * n]) / gdot)
                .collect();
            let outcome = sys.net.handle_event(ek, t, &mut y[..n]);
            if outcome.state_changed {
                return Err(format!(
                    "{} at t = {t} s changes the state; sensitivities through such events are \
                     not supported yet",
                    sys.net.event_description(ek)
                ));
            }
            sys.net.rhs(t, &y[..n], &mut f_after);
            for i in 0..k {
                let si = &mut y[(i + 1) * n..(i + 2) * n];
                for j in 0..n {
                    si[j] += (f_before[j] - f_after[j]) * dt_dp[i];
                }
            }
            integ.restart();
            let sample = Sample {
                t_s: t,
                ..split(&y, &sys.net.exited)
            };
            run.events.push(SensitivityEvent {
                k: ek,
                t_s: t,
                dt_dp,
                y: sample.y.clone(),
                s: sample.s.clone(),
            });
            run.samples.push(sample);
            let exits_left =
                (0..sys.net.pistons.len()).any(|j| sys.net.exit_event_value(j, &y[..n]).is_some());
            if outcome.exit_of_piston.is_some() && s.stop_on_exit && !exits_left {
                break;
            }
        } else if t == limit && limit < t_end {
            // A time-table breakpoint: a new segment, and the integrator restarts.
            sys.net.segment_start_s = t;
            integ.restart();
        }
    }
    if run.samples.last().is_none_or(|x| x.t_s != t) {
        run.samples.push(Sample {
            t_s: t,
            ..split(&y, &sys.net.exited)
        });
    }
    run.network = sys.net;
    Ok(run)
}

fn t_end_of(spec: &ModelFile) -> f64 {
    spec.solver.t_end
}

fn add(y: &[f64], inc: &[f64], out: &mut [f64]) {
    for ((o, a), b) in out.iter_mut().zip(y).zip(inc) {
        *o = a + b;
    }
}

/// The step size in (0, h] at which event `k` crosses zero, by the Illinois variant of regula
/// falsi on the dense output (as `Simulation` locates events), to the time axis' resolution.
#[allow(clippy::too_many_arguments)]
fn locate(
    integ: &mut Method,
    sys: &mut SensitivitySystem,
    k: usize,
    t: f64,
    h: f64,
    g0: f64,
    g1: f64,
    y: &[f64],
    inc: &mut [f64],
    y_at: &mut [f64],
) -> Result<f64, String> {
    let n = sys.n();
    let (mut a, mut ga, mut b, mut gb) = (0.0, g0, h, g1);
    let tol = 4.0 * f64::EPSILON * (t.abs() + h);
    let mut side = 0i8;
    for _ in 0..200 {
        if b - a <= tol || gb == 0.0 {
            break;
        }
        let mut c = (a * gb - b * ga) / (gb - ga);
        if !(c > a && c < b) {
            c = 0.5 * (a + b);
        }
        integ.dense(sys, t, y, c, inc).map_err(|e| e.to_string())?;
        add(y, inc, y_at);
        let gc = sys.net.event_value(k, t + c, &y_at[..n]).unwrap_or(0.0);
        if gc >= 0.0 {
            b = c;
            gb = gc;
            if side == -1 {
                ga *= 0.5;
            }
            side = -1;
        } else {
            a = c;
            ga = gc;
            if side == 1 {
                gb *= 0.5;
            }
            side = 1;
        }
    }
    Ok(b)
}
