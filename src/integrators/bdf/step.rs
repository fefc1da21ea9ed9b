//! One step of CVODE's algorithm (`cvStep`, cvode.c): the predictor, the Newton iteration
//! (`cvNls`, `cvNewtonIteration`), the local error test and the choice of the next order and
//! step (`cvPrepareNextStep`), over the working copy of the history.

use super::MAX_ORDER;
use super::history::{History, Stats, Tolerances};
use super::newton_passes::{
    FULL, FUSED, LIVE, kernel_blocks, newton_residual, newton_residual_live, newton_update,
    newton_update_live, residual_groups, residual_rest, update_groups, update_rest,
};
use super::nordsieck::{
    NORDSIECK_BLOCK, column_pair, correct_blocked, predict_blocked, restore_small,
};
use super::workspace::Workspace;
pub(super) use crate::integrators::finite_values;
use crate::integrators::{SolverError, check_finite};
use crate::ode::{BlockLayout, OdeSystem};

// CVODE's constants (cvode.c).
const ETAMX1: f64 = 10000.0;
const ETAMX2: f64 = 10.0;
const ETAMX3: f64 = 10.0;
const ETAMXF: f64 = 0.2;
const ETAMIN: f64 = 0.1;
const ETACF: f64 = 0.25;
const THRESH: f64 = 1.5;
const ADDON: f64 = 1e-6;
const BIAS1: f64 = 6.0;
const BIAS2: f64 = 6.0;
const BIAS3: f64 = 10.0;
const SMALL_NST: u64 = 10;
const MXNEF: u32 = 7;
const MXNEF1: u32 = 3;
const SMALL_NEF: u32 = 2;
const MXNCF: u32 = 10;
const LONG_WAIT: usize = 10;
const CRDOWN: f64 = 0.3;
pub(super) const DGMAX: f64 = 0.3;
const RDIV: f64 = 2.0;
const MSBP: u64 = 20;
pub(super) const MSBJ: u64 = 50;
const MAXCOR: u32 = 3;
pub(super) const NLSCOEF: f64 = 0.1;
// Fixed-order variants: the Newton iteration is converged far below the truncation error.
const FIXED_MAXCOR: u32 = 8;
pub(super) const FIXED_RTOL: f64 = 1e-13;
pub(super) const FIXED_ATOL: f64 = 1e-300;

/// `ETA_SCREEN[L]` = 1.001·(2/3)^L: when x = bias·‖·‖ exceeds it, the step ratio
/// η = 1/(x^(1/L) + ADDON) is below THRESH = 1.5 by a margin of at least 1.6·10⁻⁴ relative
/// (x^(1/L) > 1.001^(1/6)·2/3), far beyond the rounding of `powf`.
const ETA_SCREEN: [f64; MAX_ORDER + 2] = {
    let mut t = [0.0; MAX_ORDER + 2];
    let mut p = 1.001;
    let mut i = 0;
    while i < t.len() {
        t[i] = p;
        p *= 2.0 / 3.0;
        i += 1;
    }
    t
};

/// The step ratio 1/(x^(1/L) + ADDON) that `prepare_next_step` compares with THRESH, or 0 when
/// it is surely below THRESH (`ETA_SCREEN`): every use there then makes the same choice
/// (η < THRESH keeps the step, and a ratio below THRESH is never the largest one taken), and
/// libm's `pow` is skipped on steps that keep their size.
#[inline]
fn eta_or_below_thresh(x: f64, big_l: usize) -> f64 {
    if x > ETA_SCREEN[big_l] {
        return 0.0;
    }
    1.0 / (x.powf(1.0 / big_l as f64) + ADDON)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum NFlag {
    FirstCall,
    PrevConvFail,
    PrevErrFail,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum ConvFail {
    NoFailures,
    FailBadJ,
    FailOther,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Nls {
    Success,
    /// Recoverable: Newton diverged, the matrix was singular, or f was not finite.
    ConvFail,
    /// Newton failed with a Jacobian that was not fresh: set up again with a new one.
    TryAgain,
}

/// Weighted RMS norm over `len` states (the weights of the others are 0).
#[inline]
pub(super) fn wrms(v: &[f64], w: &[f64], len: f64) -> f64 {
    let s: f64 = v.iter().zip(w).map(|(a, b)| (a * b) * (a * b)).sum();
    (s / len.max(1.0)).sqrt()
}

/// One step's machinery over the working copy.
pub(super) struct Step<'a, S: OdeSystem> {
    pub(super) sys: &'a mut S,
    pub(super) s: &'a mut History,
    pub(super) ws: &'a mut Workspace,
    pub(super) stats: &'a mut Stats,
    pub(super) tol: &'a Tolerances,
    pub(super) fixed: Option<usize>,
    pub(super) n: usize,
}

impl<S: OdeSystem> Step<'_, S> {
    pub(super) fn qmax(&self) -> usize {
        self.fixed.unwrap_or(MAX_ORDER)
    }

    // Inlined (as `complete_step` and `set_coefficients`) into the step: on small networks
    // each call's own entry and exit are a visible share of a step.
    #[inline(always)]
    pub(super) fn set_weights(&mut self) {
        let (rtol, atol) = if self.fixed.is_some() {
            (FIXED_RTOL, FIXED_ATOL.max(self.tol.atol.min(1e-14)))
        } else {
            (self.tol.rtol, self.tol.atol)
        };
        let n = self.n;
        let ws = &mut *self.ws;
        // An index loop over slices cut to n, the quadratures' weights +0 by their mask: no
        // branch, two states at a time.
        let (e, m, z) = (&mut ws.ewt[..n], &ws.weight_mask[..n], &self.s.zn[..n]);
        for i in 0..n {
            let w = 1.0 / (rtol * z[i].abs() + atol);
            e[i] = f64::from_bits(w.to_bits() & m[i]);
        }
    }

    #[inline(always)]
    fn rhs(&mut self, t: f64, which: Buf) -> bool {
        let (y, f) = match which {
            Buf::Y => (&self.ws.y[..], &mut self.ws.ftemp),
            Buf::Z0 => (&self.s.zn[..self.n], &mut self.ws.ftemp),
            Buf::Pert => (&self.ws.ypert[..], &mut self.ws.fpert),
        };
        self.sys.rhs(t, y, f);
        finite_values(f)
    }

    /// Initial step: Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.4 (order 1), in the
    /// tolerance-weighted norm; `ftemp` holds f(t, y).
    fn initial_step(&mut self, t: f64, h_cap: f64) -> Result<f64, SolverError> {
        if let Some(h0) = self.tol.initial_step {
            return Ok(h0.min(h_cap));
        }
        let n = self.n;
        // Norms that overflow (atol near 0, rates near 1e300) are formed scaled instead.
        let norm = |v: &[f64], w: &[f64], len: f64| match wrms(v, w, len) {
            r if r.is_finite() => r,
            _ => crate::integrators::wrms_scaled(v, w, len),
        };
        let d0 = norm(&self.s.zn[..n], &self.ws.ewt, self.ws.n_err);
        let d1 = norm(&self.ws.ftemp, &self.ws.ewt, self.ws.n_err);
        let h0 = if d0 < 1e-5 || d1 < 1e-5 {
            1e-6
        } else {
            0.01 * d0 / d1
        }
        .min(h_cap);
        for i in 0..n {
            self.ws.ypert[i] = self.s.zn[i] + h0 * self.ws.ftemp[i];
        }
        if !self.rhs(t + h0, Buf::Pert) {
            return Ok(h0 * 1e-3);
        }
        for i in 0..n {
            self.ws.tempv[i] = (self.ws.fpert[i] - self.ws.ftemp[i]) / h0;
        }
        let d2 = norm(&self.ws.tempv, &self.ws.ewt, self.ws.n_err);
        let dm = d1.max(d2);
        let h1 = if dm <= 1e-15 {
            (h0 * 1e-3).max(1e-6)
        } else if dm.is_finite() {
            (0.01 / dm).sqrt()
        } else {
            h0 // the probe's difference overflowed: keep the first guess
        };
        let h = (100.0 * h0).min(h1).min(h_cap);
        Ok(if h > 0.0 && h.is_finite() {
            h
        } else {
            1e-6f64.min(h_cap)
        })
    }

    /// Start afresh at (t, y) with order 1: z = (y, h·f(t, y)).
    pub(super) fn initialize(&mut self, t: f64, y: &[f64], h_cap: f64) -> Result<(), SolverError> {
        let n = self.n;
        let s = &mut *self.s;
        s.zn[..n].copy_from_slice(y);
        self.ws.y.copy_from_slice(y);
        self.sys.rhs(t, &self.ws.y, &mut self.ws.ftemp);
        check_finite(t, &self.ws.ftemp)?;
        self.set_weights();
        let h0 = if let Some(k) = self.fixed {
            debug_assert_eq!(k, 1);
            h_cap
        } else {
            self.initial_step(t, h_cap)?
        };
        let s = &mut *self.s;
        for i in 0..n {
            s.zn[n + i] = h0 * self.ws.ftemp[i];
        }
        s.started = true;
        s.tn = t;
        s.q = 1;
        s.qprime = 1;
        s.qwait = 2;
        s.h = h0;
        s.hprime = h0;
        s.hscale = h0;
        s.eta = 1.0;
        s.etamax = ETAMX1;
        s.tau = [0.0; MAX_ORDER + 2];
        s.saved_tq5 = 0.0;
        s.crate_ = 1.0;
        s.nst = 0;
        s.nstlp = 0;
        s.nstlj = 0;
        s.gammap = 0.0;
        s.gamrat = 1.0;
        Ok(())
    }

    fn restore(&mut self, saved_t: f64) {
        let (n, q) = (self.n, self.s.q);
        self.s.tn = saved_t;
        if n <= NORDSIECK_BLOCK {
            // Element by element, two states at a time, with the order a constant (as
            // `predict_small`): the same subtractions in the same order.
            let zn = &mut self.s.zn[..(q + 1) * n];
            match q {
                1 => return restore_small::<1, 2>(zn, n),
                2 => return restore_small::<2, 3>(zn, n),
                3 => return restore_small::<3, 4>(zn, n),
                4 => return restore_small::<4, 5>(zn, n),
                5 => return restore_small::<5, 6>(zn, n),
                _ => {}
            }
        }
        for k in 1..=q {
            for j in (k..=q).rev() {
                let (prev, next) = column_pair(&mut self.s.zn, n, j);
                for (a, b) in prev.iter_mut().zip(next) {
                    *a -= *b;
                }
            }
        }
    }

    pub(super) fn rescale(&mut self) {
        let (n, q, eta) = (self.n, self.s.q, self.s.eta);
        let mut factor = eta;
        for j in 1..=q {
            for v in &mut self.s.zn[j * n..(j + 1) * n] {
                *v *= factor;
            }
            factor *= eta;
        }
        self.s.h = self.s.hscale * eta;
        self.s.hscale = self.s.h;
    }

    /// f at the predicted z_0 into ws.ftemp (read in place: the Newton update writes all of
    /// ws.y before anything reads it, and the Jacobian is evaluated at z_0 too).
    #[inline(always)]
    pub(super) fn nls(&mut self, nflag: NFlag) -> Nls {
        let mut convfail = if nflag == NFlag::FirstCall || nflag == NFlag::PrevErrFail {
            ConvFail::NoFailures
        } else {
            ConvFail::FailOther
        };
        let s = &*self.s;
        let mut call_setup = nflag == NFlag::PrevConvFail
            || nflag == NFlag::PrevErrFail
            || s.nst == 0
            || s.early_step_of_restart()
            || s.nst >= s.nstlp + MSBP
            || (s.gamrat - 1.0).abs() > DGMAX
            || self.ws.new_jacobian;
        loop {
            let tn = self.s.tn;
            if !self.rhs(tn, Buf::Z0) {
                return Nls::ConvFail;
            }
            let mut jcur = false;
            if call_setup {
                match self.setup(convfail) {
                    Some(j) => jcur = j,
                    None => return Nls::ConvFail,
                }
                let s = &mut *self.s;
                s.gamrat = 1.0;
                s.crate_ = 1.0;
                s.gammap = s.gamma;
                s.nstlp = s.nst;
            } else if !self.factor_current() {
                return Nls::ConvFail;
            }
            self.ws.acor.fill(0.0);
            match self.newton(jcur) {
                Nls::TryAgain => {
                    call_setup = true;
                    convfail = ConvFail::FailBadJ;
                }
                r => return r,
            }
        }
    }

    /// CVODE's cvNewtonIteration: its residual and update passes over the live states only
    /// when they have the regular layout (`Live::groups`), fused with the direct solve's split
    /// when that allows (`Workspace::fused`), else over every state; chosen once per call.
    fn newton(&mut self, jcur: bool) -> Nls {
        let n = self.n;
        let ws = &mut *self.ws;
        if let Some(live) = ws.live.as_ref().filter(|l| l.groups > 0) {
            // The live passes never write a constant state's y, and `nls` does not copy z_0
            // into y (f and J read z_0 in place); a fixed-order start or a restore leaves y
            // unset there. So y = z_0 there first, as the full update leaves it: in the groups
            // their states past the live ones, then the constant states after them.
            let (y, z0) = (&mut ws.y[..n], &self.s.zn[..n]);
            let BlockLayout { size, live: lead } = kernel_blocks(S::BLOCKS);
            let g = size * live.groups;
            for (yg, zg) in y[..g]
                .chunks_exact_mut(size)
                .zip(z0[..g].chunks_exact(size))
            {
                yg[lead..].copy_from_slice(&zg[lead..]);
            }
            let after = ws.constant.partition_point(|&i| i < g);
            for &i in &ws.constant[after..] {
                y[i] = z0[i];
            }
        }
        if self.ws.fused {
            self.newton_passes::<FUSED>(jcur)
        } else if self.ws.live.as_ref().is_some_and(|l| l.groups > 0) {
            self.newton_passes::<LIVE>(jcur)
        } else {
            self.newton_passes::<FULL>(jcur)
        }
    }

    #[inline(always)]
    fn newton_passes<const MODE: u8>(&mut self, jcur: bool) -> Nls {
        let n = self.n;
        let maxcor = if self.fixed.is_some() {
            FIXED_MAXCOR
        } else {
            MAXCOR
        };
        let mut m = 0;
        let mut delp = 0.0;
        loop {
            {
                let s = &*self.s;
                let ws = &mut *self.ws;
                let (tv, z1, a, f) = (&mut ws.tempv, &s.zn[n..2 * n], &ws.acor, &ws.ftemp);
                let (rl1, gamma) = (s.rl1, s.gamma);
                let blocks = kernel_blocks(S::BLOCKS);
                match (ws.live.as_ref(), ws.linsolve.peel.as_deref_mut()) {
                    (Some(live), Some(peel)) if MODE == FUSED => {
                        let (tv, z1, a, f) = (&mut tv[..n], &z1[..n], &a[..n], &f[..n]);
                        let (b, stride, groups) = (&mut peel.b, blocks.live, live.groups);
                        residual_groups(b, stride, z1, a, f, rl1, gamma, groups, blocks);
                        residual_rest(tv, z1, a, f, rl1, gamma, &live.rest);
                    }
                    (Some(live), _) if MODE == LIVE => {
                        newton_residual_live(tv, z1, a, f, rl1, gamma, n, live, blocks)
                    }
                    _ => newton_residual(tv, z1, a, f, rl1, gamma, n),
                }
            }
            let solved = if MODE == FUSED {
                self.solve_fused();
                true
            } else {
                self.solve()
            };
            self.stats.newton_iterations += 1;
            if !solved {
                // CVODE (cvLsSolve, cvNewtonIteration): a linear solve that missed its
                // tolerance is a recoverable Newton failure, retried with a fresh J if it was
                // not fresh.
                return if !jcur { Nls::TryAgain } else { Nls::ConvFail };
            }
            let gamrat = self.s.gamrat;
            // The direct solvers factored M with γ_M and scale for the drift; GMRES applies M
            // with the current γ itself (CVODE scales only for matrix-based solvers).
            let scale = gamrat != 1.0 && !self.ws.linsolve.is_krylov();
            let c = if scale { 2.0 / (1.0 + gamrat) } else { 1.0 };
            // One pass: the drift scaling, the weighted norm of the correction (`wrms`'s sum,
            // in its order) and the update acor += δ, y = z_0 + acor. A non-finite δ leaves
            // acor and y spoiled, which the failure's retry overwrites (`nls`).
            let del = {
                let s = &*self.s;
                let ws = &mut *self.ws;
                let (a, y, tv, z0, w) =
                    (&mut ws.acor, &mut ws.y, &mut ws.tempv, &s.zn[..n], &ws.ewt);
                let blocks = kernel_blocks(S::BLOCKS);
                let sum = match (ws.live.as_ref(), ws.linsolve.peel.as_deref_mut()) {
                    (Some(live), Some(peel)) if MODE == FUSED => {
                        let (a, y, tv, w) = (&mut a[..n], &mut y[..n], &mut tv[..n], &w[..n]);
                        let (b, stride, groups) = (&mut peel.b, blocks.live, live.groups);
                        let sum = update_groups(a, y, b, stride, z0, w, scale, c, groups, blocks);
                        update_rest(a, y, tv, z0, w, scale, c, &live.rest, sum)
                    }
                    (Some(live), _) if MODE == LIVE => {
                        newton_update_live(a, y, tv, z0, w, scale, c, n, live, blocks)
                    }
                    _ => newton_update(a, y, tv, z0, w, scale, c, n),
                };
                (sum / ws.n_err.max(1.0)).sqrt()
            };
            if !del.is_finite() {
                // A zero pivot of the sparse LU (or an overflow): like a singular M.
                return Nls::ConvFail;
            }
            if m > 0 {
                self.s.crate_ = (CRDOWN * self.s.crate_).max(del / delp);
            }
            let dcon = del * self.s.crate_.min(1.0) / self.s.tq[4];
            if dcon <= 1.0 {
                self.s.acnrm = if m == 0 {
                    del
                } else {
                    wrms(&self.ws.acor, &self.ws.ewt, self.ws.n_err)
                };
                return Nls::Success;
            }
            m += 1;
            if m == maxcor || (m >= 2 && del > RDIV * delp) {
                return if !jcur { Nls::TryAgain } else { Nls::ConvFail };
            }
            delp = del;
            let tn = self.s.tn;
            if !self.rhs(tn, Buf::Y) {
                return Nls::ConvFail;
            }
        }
    }

    /// Increment of the predictor, Σ_{j=1..q} z_j (the Pascal sum of the prediction, kept apart
    /// from z_0 so that the driver's compensated sum sees the small increment exactly), then the
    /// prediction itself (`predict`), block by block (`NORDSIECK_BLOCK`): per element the same
    /// operations in the same order as the column passes, so the same bits.
    pub(super) fn predict_with_increment(&mut self) {
        let (n, q) = (self.n, self.s.q);
        let ws = &mut *self.ws;
        let live = ws.live.as_ref();
        predict_blocked(&mut self.s.zn[..(q + 1) * n], &mut ws.inc, n, q, live);
    }

    #[inline(always)]
    pub(super) fn complete_step(&mut self) {
        let (n, q) = (self.n, self.s.q);
        let qmax = self.qmax();
        self.stats.steps += 1;
        let s = &mut *self.s;
        s.nst += 1;
        // τ_i = τ_{i−1} for i = q down to 2: one copy of constant length per order, not a
        // loop.
        let t = s.tau;
        match q {
            2 => s.tau[2] = t[1],
            3 => s.tau[2..4].copy_from_slice(&t[1..3]),
            4 => s.tau[2..5].copy_from_slice(&t[1..4]),
            5 => s.tau[2..6].copy_from_slice(&t[1..5]),
            _ if q > 5 => s.tau[2..=q].copy_from_slice(&t[1..q]),
            _ => {}
        }
        if q == 1 && s.nst > 1 {
            s.tau[2] = s.tau[1];
        }
        s.tau[1] = s.h;
        let ws = &mut *self.ws;
        correct_blocked(
            &mut s.zn,
            &s.l,
            &ws.acor,
            &mut ws.inc,
            n,
            q,
            ws.live.as_ref(),
        );
        if self.fixed.is_some() {
            return;
        }
        s.qwait -= 1;
        if s.qwait == 1 && q != qmax {
            s.zn[qmax * n..(qmax + 1) * n].copy_from_slice(&self.ws.acor);
            s.saved_tq5 = s.tq[5];
        }
        self.stats.steps_at_order[q] += 1;
    }

    /// CVODE's cvPrepareNextStep with cvComputeEtaqm1/qp1, cvChooseEta and cvSetEta.
    fn prepare_next_step(&mut self, dsm: f64) {
        let n = self.n;
        let qmax = self.qmax();
        let hmax_inv = self.tol.max_step.map_or(0.0, |m| 1.0 / m);
        let s = &mut *self.s;
        let q = s.q;
        if s.etamax == 1.0 {
            s.qwait = s.qwait.max(2);
            s.qprime = q;
            s.hprime = s.h;
            s.eta = 1.0;
            return;
        }
        let etaq = eta_or_below_thresh(BIAS2 * dsm, q + 1);
        if s.qwait != 0 {
            s.eta = etaq;
            s.qprime = q;
        } else {
            s.qwait = 2;
            let mut etaqm1 = 0.0;
            if q > 1 {
                let ddn = wrms(&s.zn[q * n..(q + 1) * n], &self.ws.ewt, self.ws.n_err) * s.tq[1];
                etaqm1 = eta_or_below_thresh(BIAS1 * ddn, q);
            }
            let mut etaqp1 = 0.0;
            if q != qmax && s.saved_tq5 != 0.0 {
                let cquot = (s.tq[5] / s.saved_tq5) * (s.h / s.tau[2]).powi(q as i32 + 1);
                for i in 0..n {
                    self.ws.tempv[i] = self.ws.acor[i] - cquot * s.zn[qmax * n + i];
                }
                let dup = wrms(&self.ws.tempv, &self.ws.ewt, self.ws.n_err) * s.tq[3];
                etaqp1 = eta_or_below_thresh(BIAS3 * dup, q + 2);
            }
            let etam = etaqm1.max(etaq.max(etaqp1));
            if etam < THRESH {
                s.eta = 1.0;
                s.qprime = q;
            } else if etam == etaq {
                s.eta = etaq;
                s.qprime = q;
            } else if etam == etaqm1 {
                s.eta = etaqm1;
                s.qprime = q - 1;
            } else {
                s.eta = etaqp1;
                s.qprime = q + 1;
                s.zn[qmax * n..(qmax + 1) * n].copy_from_slice(&self.ws.acor);
            }
        }
        // cvSetEta
        if s.eta < THRESH {
            s.eta = 1.0;
            s.hprime = s.h;
        } else {
            s.eta = s.eta.min(s.etamax);
            s.eta /= (s.h.abs() * hmax_inv * s.eta).max(1.0);
            s.hprime = s.h * s.eta;
        }
    }

    /// One adaptive step from the committed state (z_0 = y at t), at most `h_cap` long.
    pub(super) fn step_adaptive(&mut self, t: f64, h_cap: f64) -> Result<f64, SolverError> {
        let saved_t = t;
        {
            // Apply the order and step chosen after the last step, within the cap.
            if self.s.qprime != self.s.q {
                let dq = self.s.qprime as i32 - self.s.q as i32;
                self.adjust_order(dq);
                self.s.q = self.s.qprime;
                self.s.qwait = self.s.q + 1;
            }
            let h_next = self.s.hprime.min(h_cap);
            if h_next != self.s.hscale {
                self.s.eta = h_next / self.s.hscale;
                self.rescale();
            }
        }
        self.set_weights();
        let (mut ncf, mut nef) = (0u32, 0u32);
        let mut nflag = NFlag::FirstCall;
        let dsm;
        loop {
            self.s.tn = saved_t + self.s.h;
            self.predict_with_increment();
            self.set_coefficients();
            if self.nls(nflag) != Nls::Success {
                self.after_convergence_failure(saved_t, &mut ncf)?;
                nflag = NFlag::PrevConvFail;
                continue;
            }
            let d = self.s.acnrm * self.s.tq[2];
            if d <= 1.0 {
                dsm = d;
                break;
            }
            self.after_error_test_failure(saved_t, d, &mut nef)?;
            nflag = NFlag::PrevErrFail;
        }
        let h = self.s.h;
        self.complete_step();
        self.prepare_next_step(dsm);
        self.s.etamax = if self.s.nst <= SMALL_NST {
            ETAMX2
        } else {
            ETAMX3
        };
        Ok(h)
    }

    /// `step_adaptive` after a failed Newton iteration: the prediction undone and the step
    /// cut for the retry (CVODE's cvHandleNFlag). Out of line, as `after_error_test_failure`:
    /// rare, and the step's loop keeps fewer registers.
    #[cold]
    #[inline(never)]
    fn after_convergence_failure(
        &mut self,
        saved_t: f64,
        ncf: &mut u32,
    ) -> Result<(), SolverError> {
        self.stats.convergence_failures += 1;
        self.restore(saved_t);
        *ncf += 1;
        self.s.etamax = 1.0;
        if *ncf == MXNCF || self.s.h.abs() <= f64::EPSILON * saved_t.abs() * 4.0 {
            return Err(SolverError::NewtonFailed {
                t: saved_t,
                h: self.s.h,
            });
        }
        self.s.eta = ETACF;
        self.rescale();
        Ok(())
    }

    /// `step_adaptive` after a failed error test (error norm `d` > 1): the prediction undone,
    /// then a smaller step, a lower order, or at order 1 z_1 reloaded (CVODE's cvDoErrorTest).
    #[cold]
    #[inline(never)]
    fn after_error_test_failure(
        &mut self,
        saved_t: f64,
        d: f64,
        nef: &mut u32,
    ) -> Result<(), SolverError> {
        self.stats.error_test_failures += 1;
        self.restore(saved_t);
        *nef += 1;
        self.s.etamax = 1.0;
        if *nef == MXNEF || self.s.h.abs() <= f64::EPSILON * saved_t.abs() * 4.0 {
            return Err(SolverError::StepTooSmall {
                t: saved_t,
                h: self.s.h,
            });
        }
        if *nef <= MXNEF1 {
            let big_l = (self.s.q + 1) as f64;
            let mut eta = 1.0 / ((BIAS2 * d).powf(1.0 / big_l) + ADDON);
            eta = eta.max(ETAMIN);
            if *nef >= SMALL_NEF {
                eta = eta.min(ETAMXF);
            }
            self.s.eta = eta;
            self.rescale();
            return Ok(());
        }
        if self.s.q > 1 {
            self.s.eta = ETAMIN;
            self.adjust_order(-1);
            let big_l = self.s.q;
            self.s.q -= 1;
            self.s.qwait = big_l;
            self.rescale();
            return Ok(());
        }
        // Order 1 already: reload z_1 = h·f(t, y).
        let n = self.n;
        self.s.eta = ETAMIN;
        self.s.h *= ETAMIN;
        self.s.hscale = self.s.h;
        self.s.qwait = LONG_WAIT;
        self.ws.y.copy_from_slice(&self.s.zn[..n]);
        if !self.rhs(saved_t, Buf::Y) {
            return Err(SolverError::NonFinite { t: saved_t });
        }
        for i in 0..n {
            self.s.zn[n + i] = self.s.h * self.ws.ftemp[i];
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Buf {
    Y,
    /// The Nordsieck array's z_0 (the prediction) as y.
    Z0,
    Pert,
}
