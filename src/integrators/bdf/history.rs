//! The BDF's serialized state: the Nordsieck history (committed and working copies), the last
//! attempted step, the tolerances and the work counters, with the checks a restored copy must
//! pass. Their serde layout is the FMU state's: field order, names and types stay as they are.

use serde::{Deserialize, Serialize};

use super::MAX_ORDER;
use crate::integrators::{JacobianSource, MAX_RESTORED_COUNT, StepControl, all_finite, check_len};

/// Tolerances of the adaptive method (scalars, as in the model file's `[solver]`), set by
/// [`Integrator::configure`] from the driver's [`StepControl`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerances {
    pub rtol: f64,
    pub atol: f64,
    pub max_step: Option<f64>,
    pub initial_step: Option<f64>,
    /// Where the Newton Jacobian comes from (`[solver] jacobian`).
    #[serde(default)]
    pub jacobian: JacobianSource,
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances::from(&StepControl::default())
    }
}

impl From<&StepControl> for Tolerances {
    fn from(c: &StepControl) -> Self {
        Tolerances {
            rtol: c.rtol,
            atol: c.atol,
            max_step: c.max_step,
            initial_step: c.initial_step,
            jacobian: c.jacobian,
        }
    }
}

/// Work counters (CVODE's nst, netf, ncfn, nje, nsetups, nni, nfeDQ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub steps: u64,
    pub error_test_failures: u64,
    pub convergence_failures: u64,
    pub jacobian_evaluations: u64,
    pub jacobian_rhs_evaluations: u64,
    pub factorizations: u64,
    pub newton_iterations: u64,
    /// Steps taken at each order (index = order).
    pub steps_at_order: [u64; MAX_ORDER + 1],
}

/// Everything a step changes: the committed copy is serialized, the working copy is scratch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct History {
    pub(super) started: bool,
    pub(super) tn: f64,
    pub(super) q: usize,
    pub(super) qprime: usize,
    pub(super) qwait: usize,
    pub(super) h: f64,
    pub(super) hprime: f64,
    pub(super) hscale: f64,
    pub(super) eta: f64,
    pub(super) etamax: f64,
    pub(super) tau: [f64; MAX_ORDER + 2],
    pub(super) l: [f64; MAX_ORDER + 1],
    pub(super) tq: [f64; 6],
    pub(super) rl1: f64,
    pub(super) gamma: f64,
    pub(super) gammap: f64,
    pub(super) gamrat: f64,
    pub(super) crate_: f64,
    pub(super) acnrm: f64,
    pub(super) saved_tq5: f64,
    pub(super) nst: u64,
    pub(super) nstlp: u64,
    pub(super) nstlj: u64,
    /// Nordsieck array: column j at `zn[j*n..(j+1)*n]`, j = 0..=MAX_ORDER (the last one also
    /// keeps Δ of the step before a possible order increase, as CVODE's zn[qmax]).
    pub(super) zn: Vec<f64>,
    /// Saved Jacobian: its values over the pattern of M = I − γJ (the system's sparsity
    /// pattern with the diagonal added), compressed sparse columns; empty before the first
    /// step. `jac_count`: how many have been computed (identifies it).
    pub(super) jac: Vec<f64>,
    pub(super) jac_count: u64,
    /// Fixed-order start: the points so far (times and states, oldest first).
    pub(super) start_t: [f64; MAX_ORDER + 1],
    pub(super) start_y: Vec<f64>,
    pub(super) start_len: usize,
    /// The inputs of the ℓ_j and error constants held here (`set_coefficients`).
    #[serde(skip)]
    pub(super) coef_key: CoefKey,
}

/// The step (q, h) of the ℓ_j and error constants held here when they were computed on a
/// uniform history (τ_1..τ_q all equal to h; q = 0: none), and whether tq₁ and tq₃ (computed
/// only when qwait = 1) were. The same inputs give the same outputs, so on a run of equal steps
/// (about half the steps of a solve on the small networks) the computation is skipped. Not
/// serialized: a restored history recomputes on its first step (same bits). Always equal to
/// another key, so that histories compare by their data only.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CoefKey {
    pub(super) q: usize,
    pub(super) h: f64,
    pub(super) with_tq13: bool,
}

impl PartialEq for CoefKey {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl History {
    /// The second or third step after a restart (not the first start: a Jacobian was
    /// evaluated before this start's). A restart stands where an event stopped the steps, on a
    /// switch of a law within round-off, where the first step's J may have the branch the state
    /// leaves (a relief valve's band at its closing point; the plain and the dual-number
    /// evaluations may even round to different sides). Modified Newton with that J, kept while
    /// the state moves off the switch, damps the corrections across it and passes its test on
    /// their size with the residual large. The second step's J stands one first step (about
    /// 1e-6 s) off the switch, where a state hovering on it (a cushion's check valve at Δp = 0
    /// beside a regulator at its set point, the gallery's `double_acting` at rest on its stop)
    /// may still be within round-off of it: kept for the ramp of steps that follows, it let the
    /// rod side drift 0.046 Pa (66 × rtol) above the set point it rests at. The third step's,
    /// ten times as far on, is off it.
    #[inline]
    pub(super) fn early_step_of_restart(&self) -> bool {
        (1..=2).contains(&self.nst) && self.jac_count > 1
    }

    /// `self = other` without allocating once the vectors have their sizes.
    pub(super) fn assign(&mut self, o: &History) {
        self.assign_copy(o, None, true);
    }

    /// `assign` between the committed and the working copy of one run (`fixed`: the
    /// integrator's), of what such a run can have written since the last full copy (see
    /// `assign_copy`).
    #[inline(always)]
    pub(super) fn assign_live(&mut self, o: &History, fixed: Option<usize>) {
        self.assign_copy(o, fixed, false);
    }

    /// `assign` (`full`), or between the committed and the working copy of one run of the fixed
    /// order k (`fixed = Some(k)`) or of the adaptive method (`None`): only what such a run can
    /// have written since the last full copy. A fixed order's Nordsieck columns
    /// k + 1..=MAX_ORDER are never written (predict, correct, rescale and the start all stop
    /// at column q = k), and the start points are never written once the start is over
    /// (start_len > k in both; a restart sets start_len to 0 first): bdf2 copies 3n values
    /// where the full copy moves 9n. The adaptive method never
    /// writes the start points (times, states, count) at all: both copies keep those of the
    /// last full copy.
    // Inlined into `commit` (itself inlined into the driver's dispatch), as `nls` into the
    // step: on small networks a call's entry and exit are a visible share of a step.
    #[inline(always)]
    fn assign_copy(&mut self, o: &History, fixed: Option<usize>, full: bool) {
        let History {
            started,
            tn,
            q,
            qprime,
            qwait,
            h,
            hprime,
            hscale,
            eta,
            etamax,
            tau,
            l,
            tq,
            rl1,
            gamma,
            gammap,
            gamrat,
            crate_,
            acnrm,
            saved_tq5,
            nst,
            nstlp,
            nstlj,
            zn,
            jac,
            jac_count,
            start_t,
            start_y,
            start_len,
            coef_key,
        } = self;
        *started = o.started;
        *tn = o.tn;
        *q = o.q;
        *qprime = o.qprime;
        *qwait = o.qwait;
        *h = o.h;
        *hprime = o.hprime;
        *hscale = o.hscale;
        *eta = o.eta;
        *etamax = o.etamax;
        *tau = o.tau;
        *l = o.l;
        *tq = o.tq;
        *rl1 = o.rl1;
        *gamma = o.gamma;
        *gammap = o.gammap;
        *gamrat = o.gamrat;
        *crate_ = o.crate_;
        *acnrm = o.acnrm;
        *saved_tq5 = o.saved_tq5;
        *nst = o.nst;
        *nstlp = o.nstlp;
        *nstlj = o.nstlj;
        match fixed {
            Some(k) if !full && zn.len() == o.zn.len() => {
                let live = (k + 1) * (o.zn.len() / (MAX_ORDER + 1));
                zn[..live].copy_from_slice(&o.zn[..live]);
            }
            None if zn.len() == o.zn.len() => zn.copy_from_slice(&o.zn),
            _ => zn.clone_from(&o.zn),
        }
        // The Jacobian is copied only when it is another one: `jac_count` names its contents
        // (every evaluation, even a failed one, takes a new number before writing a column).
        if *jac_count != o.jac_count || jac.len() != o.jac.len() {
            jac.clone_from(&o.jac);
        }
        *jac_count = o.jac_count;
        *coef_key = o.coef_key;
        if !full && fixed.is_none() {
            return;
        }
        *start_t = o.start_t;
        // bdf1 starts from its one point (`initialize`) and never writes a start point; the
        // others stop writing them once the start is over.
        let start_over = !full
            && fixed.is_some_and(|k| k == 1 || (*start_len == o.start_len && o.start_len > k));
        if !start_over || start_y.len() != o.start_y.len() {
            start_y.clone_from(&o.start_y);
        }
        *start_len = o.start_len;
    }
}

/// The last attempted step (serde data: dense output over it survives a restore).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct LastStep {
    /// Whether `trial` holds a step from (t, ·) of size h that `dense` can interpolate.
    pub(super) valid: bool,
    /// Whether it was attempted and not yet committed.
    pub(super) pending: bool,
    pub(super) t: f64,
    pub(super) h: f64,
    /// An RK4 start step (dense output recomputes a shorter RK4 step).
    pub(super) starter: bool,
    /// Its increment.
    pub(super) inc: Vec<f64>,
}

/// One Nordsieck history: zn of (MAX_ORDER + 1)·n, jac of none or n..=n², start_y of (k + 1)·n
/// (fixed order k) or none, start_len ≤ k + 1; q, qprime ≤ 5; nstlp, nstlj ≤ nst and
/// the counters below 2^53 (so `nst ≥ nstlp + 20` and `+= 1` cannot overflow). When it
/// is read (`values`: always the committed one, the working one while the last step is
/// valid): every real and array value finite (start times up to start_len), and once
/// started: q in 1..=qmax with |qprime − q| ≤ 1 and qprime in 1..=qmax (adaptive), or
/// q = k once the start is over (fixed; q = 1 for bdf1); qwait ≥ 1 (adaptive);
/// h, hprime, hscale > 0 where a step uses them.
pub(super) fn check_history(
    name: &str,
    which: &str,
    s: &History,
    fixed: Option<usize>,
    n: usize,
    values: bool,
) -> Result<(), String> {
    let what = |x: &str| format!("{name} {which}: {x}");
    // A copy that is not read is overwritten whole (`assign`) before any use; before
    // the first attempt the working copy is still unallocated.
    if values {
        check_len(&what("Nordsieck array"), &s.zn, (MAX_ORDER + 1) * n)?;
        // Values over the pattern of M, which has the diagonal: n..=n² of them, or
        // none before the first step (`Bdf::prepare` checks it against the pattern).
        if !s.jac.is_empty() && !(n..=n * n).contains(&s.jac.len()) {
            return Err(what(&format!(
                "Jacobian of {} values (n = {n}: n..=n²)",
                s.jac.len()
            )));
        }
        check_len(
            &what("start points"),
            &s.start_y,
            fixed.map_or(0, |k| (k + 1) * n),
        )?;
    }
    if s.q > MAX_ORDER || s.qprime > MAX_ORDER {
        return Err(what(&format!("order {} (next {})", s.q, s.qprime)));
    }
    if s.start_len > fixed.map_or(0, |k| k + 1) && fixed.is_some() {
        return Err(what(&format!("{} start points", s.start_len)));
    }
    if s.nst >= MAX_RESTORED_COUNT
        || s.jac_count >= MAX_RESTORED_COUNT
        || s.nstlp > s.nst
        || s.nstlj > s.nst
    {
        return Err(what(&format!(
            "step counters nst {}, nstlp {}, nstlj {}, jac_count {}",
            s.nst, s.nstlp, s.nstlj, s.jac_count
        )));
    }
    let scalars = [
        s.tn,
        s.h,
        s.hprime,
        s.hscale,
        s.eta,
        s.etamax,
        s.rl1,
        s.gamma,
        s.gammap,
        s.gamrat,
        s.crate_,
        s.acnrm,
        s.saved_tq5,
    ];
    if !values {
        // Not read before the next attempt overwrites it.
        return Ok(());
    }
    all_finite(&what("step data"), &scalars)?;
    all_finite(&what("step history tau"), &s.tau)?;
    all_finite(&what("coefficients l"), &s.l)?;
    all_finite(&what("error constants tq"), &s.tq)?;
    all_finite(&what("Nordsieck array"), &s.zn)?;
    all_finite(&what("Jacobian"), &s.jac)?;
    all_finite(&what("start points"), &s.start_y)?;
    all_finite(
        &what("start times"),
        &s.start_t[..s.start_len.min(MAX_ORDER + 1)],
    )?;
    if !s.started {
        return Ok(());
    }
    // A started history is stepped from: its order and step sizes are used.
    let nordsieck = match fixed {
        None | Some(1) => true,
        Some(k) => s.start_len > k,
    };
    if !nordsieck {
        return Ok(());
    }
    let qmax = fixed.unwrap_or(MAX_ORDER);
    match fixed {
        Some(k) if s.q != k => {
            return Err(what(&format!("order {} of a fixed-order-{k} method", s.q)));
        }
        None if !(1..=qmax).contains(&s.q)
            || !(1..=qmax).contains(&s.qprime)
            || s.q.abs_diff(s.qprime) > 1 =>
        {
            return Err(what(&format!("order {}, next order {}", s.q, s.qprime)));
        }
        None if s.qwait == 0 => return Err(what("qwait 0")),
        _ => {}
    }
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if !(positive(s.h) && positive(s.hscale) && positive(s.hprime) && s.tn.is_finite()) {
        return Err(what(&format!(
            "step sizes h {:?}, hscale {:?}, hprime {:?} at tn {:?}",
            s.h, s.hscale, s.hprime, s.tn
        )));
    }
    Ok(())
}
