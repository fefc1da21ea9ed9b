//! Whether a restored FMU state fits the instance's model (`Instance::deserialize`).

use super::Snapshot;
use crate::integrators::{Integrator, Method};
use crate::simulation::{Finish, Simulation};

/// Largest counter a restored state may hold (far beyond any run; keeps `+= 1` from
/// overflowing).
const MAX_RESTORED_COUNT: u64 = 1 << 53;

/// Whether the dynamic part of a state `a` fits `expected`, the simulation its model builds
/// (with the state's overrides and start time); `Err` says what does not: the integrator's
/// method and settings and its history (`Integrator::validate_state`), every state vector of
/// the model's length with finite values, finite times with t_prev ≤ t ≤ t_internal for
/// adaptive methods, one exit flag per piston, a pending event that exists, a run-time check
/// code 0..=9, counters below 2^53, one finite value or `None` per input, a saved BDF Jacobian
/// of exactly this model's number of entries (or none). Allocates nothing when the state fits,
/// except for a saved BDF Jacobian (the model's pattern is computed to count its entries).
pub(super) fn check_fits(
    a: &Snapshot,
    expected: &Simulation,
    n_inputs: usize,
) -> Result<(), String> {
    // The network's states and, with `[sensitivities]`, one sensitivity vector per parameter.
    let n = expected.y.len();
    a.integrator
        .validate_state(n)
        .map_err(|e| format!("its integrator history: {e}"))?;
    let same_method = match (&a.integrator, &expected.integrator) {
        (Method::Bdf(x), Method::Bdf(e)) => x.tolerances == e.tolerances,
        (Method::Dopri5(x), Method::Dopri5(_)) => {
            let mut c = x.clone();
            c.configure(&expected.settings.control);
            c == *x
        }
        (Method::BackwardEuler(x), Method::BackwardEuler(e)) => x.step_range() == e.step_range(),
        _ => true,
    } && a.integrator.name() == expected.integrator.name();
    if !same_method {
        return Err(format!(
            "its integrator is {} with other settings or another method than the model's {}",
            a.integrator.name(),
            expected.integrator.name()
        ));
    }
    // A saved BDF Jacobian is its values over this model's pattern of M = I − γJ (dense with
    // sensitivities): any other length is not this model's J (none: saved before the first
    // step).
    if let Some(bdf) = a.integrator.bdf() {
        let lens = bdf.saved_jacobian_lens();
        if lens.iter().any(|&l| l != 0) {
            let nnz = expected.bdf_jacobian_len();
            if let Some(&l) = lens.iter().find(|&&l| l != 0 && l != nnz) {
                return Err(format!(
                    "its BDF Jacobian has {l} values, this model's has {nnz} (the entries of \
                     the pattern of I − γJ)"
                ));
            }
        }
    }
    let network = &expected.network;
    if a.exited.len() != network.pistons().len() {
        return Err(format!(
            "{} exit flags for {} pistons",
            a.exited.len(),
            network.pistons().len()
        ));
    }
    let slots = network.n_events();
    if !(a.modes.is_empty() || a.modes.len() == slots) {
        return Err(format!(
            "{} held modes for {slots} event slots",
            a.modes.len()
        ));
    }
    if let Some(m) = a.modes.iter().find(|m| !(-1..=1).contains(*m)) {
        return Err(format!("held mode {m} is not -1, 0 or 1"));
    }
    if !a.segment_start_s.is_finite() {
        return Err(format!(
            "segment start {:?} s is not finite",
            a.segment_start_s
        ));
    }
    if a.inputs.len() != n_inputs {
        return Err(format!(
            "{} input values for {n_inputs} inputs",
            a.inputs.len()
        ));
    }
    if let Some(v) = a.inputs.iter().flatten().find(|v| !v.is_finite()) {
        return Err(format!(
            "an input holds {v}, which no importer can have set"
        ));
    }
    let i = &a.internal;
    for (what, v) in [
        ("y", &a.y),
        ("the compensation of y", &a.y_compensation),
        ("the integrator's y", &i.y),
        ("the integrator's compensation", &i.compensation),
        ("the integrator's previous y", &i.y_prev),
        (
            "the integrator's previous compensation",
            &i.compensation_prev,
        ),
    ] {
        if v.len() != n {
            return Err(format!("{what} has {} values, the model {n}", v.len()));
        }
        if let Some(k) = v.iter().position(|x| !x.is_finite()) {
            return Err(format!("{what}[{k}] = {} is not finite", v[k]));
        }
    }
    if !(i.t_s.is_finite() && i.t_prev_s.is_finite()) {
        return Err("the integrator's time is not finite".into());
    }
    let inside_last_step = i.t_prev_s <= a.t_s && a.t_s <= i.t_s;
    if !(a.integrator.fixed_step() || inside_last_step) {
        return Err(format!(
            "the reported time {:?} s is outside the integrator's last step [{:?}, {:?}] s",
            a.t_s, i.t_prev_s, i.t_s
        ));
    }
    let events = [i.pending_event, i.restarted_on.map(|(k, _)| k)];
    if let Some(k) = events
        .into_iter()
        .flatten()
        .find(|&k| k >= network.n_events())
    {
        return Err(format!(
            "pending event {k} (the model has {})",
            network.n_events()
        ));
    }
    if i.disarmed.len() > network.n_events().div_ceil(64) {
        return Err(format!(
            "{} words of disarmed switches (the model has {} events)",
            i.disarmed.len(),
            network.n_events()
        ));
    }
    if a.rc as usize >= a.first_fired_s.len() {
        return Err(format!("run-time check code {}", a.rc));
    }
    let finish_t = a.finished.map(|f| match f {
        Finish::Exited { t_s } | Finish::NeverExited { t_s } => t_s,
    });
    if a.first_fired_s
        .iter()
        .chain([&finish_t])
        .flatten()
        .any(|t| !t.is_finite())
    {
        return Err("a recorded time is not finite".into());
    }
    let st = &a.stats;
    if [
        st.steps,
        st.rejected_steps,
        st.rhs_evaluations,
        st.events,
        a.rhs_evaluations,
    ]
    .iter()
    .any(|&c| c >= MAX_RESTORED_COUNT)
    {
        return Err("its counters are out of range".into());
    }
    Ok(())
}
