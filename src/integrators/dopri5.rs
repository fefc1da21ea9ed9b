//! Dormand–Prince 5(4) with error control, a PI step-size controller and dense output of order
//! 4: Hairer, Nørsett & Wanner, *Solving Ordinary Differential Equations I* (2nd ed.), §II.4
//! (Table 5.2, the DOPRI5 pair), §II.4 "Automatic step size control" (eq. 4.11, the RMS error
//! norm), §IV.2 / Gustafsson's PI controller as coded in HNW's `dopri5.f` (β = 0.04,
//! safety 0.9, step ratio in [0.2, 10]), §II.4 "Starting step size" (`HINIT`), and §II.6 (the
//! continuous extension, `CONTD5` with the `D` coefficients of `dopri5.f`).
//!
//! FSAL: the last stage f(t+h, y₁) is the first stage of the next step, so an accepted step
//! costs six right-hand-side evaluations. Rejected steps are retried inside
//! [`Integrator::attempt`], which returns the size of the accepted step (at most `h_max`: the
//! driver passes the distance to the next breakpoint and the user's `max_step`).
//!
//! History kept as serde data: the proposed next step, the controller's previous error, the
//! FSAL derivative, and the dense-output coefficients of the last accepted step (so that after
//! a restore the state at a time inside that step is reproduced bit for bit).

use serde::{Deserialize, Serialize};

use super::{Integrator, SolverError, StepControl, ensure_len, fast_pow, small_n};
use crate::ode::OdeSystem;

// Butcher tableau (HNW I, Table 5.2).
const C2: f64 = 1.0 / 5.0;
const C3: f64 = 3.0 / 10.0;
const C4: f64 = 4.0 / 5.0;
const C5: f64 = 8.0 / 9.0;
const A21: f64 = 1.0 / 5.0;
const A31: f64 = 3.0 / 40.0;
const A32: f64 = 9.0 / 40.0;
const A41: f64 = 44.0 / 45.0;
const A42: f64 = -56.0 / 15.0;
const A43: f64 = 32.0 / 9.0;
const A51: f64 = 19372.0 / 6561.0;
const A52: f64 = -25360.0 / 2187.0;
const A53: f64 = 64448.0 / 6561.0;
const A54: f64 = -212.0 / 729.0;
const A61: f64 = 9017.0 / 3168.0;
const A62: f64 = -355.0 / 33.0;
const A63: f64 = 46732.0 / 5247.0;
const A64: f64 = 49.0 / 176.0;
const A65: f64 = -5103.0 / 18656.0;
const A71: f64 = 35.0 / 384.0;
const A73: f64 = 500.0 / 1113.0;
const A74: f64 = 125.0 / 192.0;
const A75: f64 = -2187.0 / 6784.0;
const A76: f64 = 11.0 / 84.0;
// Error coefficients: b − b̂ (fifth- minus fourth-order weights).
const E1: f64 = 71.0 / 57600.0;
const E3: f64 = -71.0 / 16695.0;
const E4: f64 = 71.0 / 1920.0;
const E5: f64 = -17253.0 / 339200.0;
const E6: f64 = 22.0 / 525.0;
const E7: f64 = -1.0 / 40.0;
// Dense output (dopri5.f, D1..D7; Shampine's continuous extension of order 4).
const D1: f64 = -12715105075.0 / 11282082432.0;
const D3: f64 = 87487479700.0 / 32700410799.0;
const D4: f64 = -10690763975.0 / 1880347072.0;
const D5: f64 = 701980252875.0 / 199316789632.0;
const D6: f64 = -1453857185.0 / 822651844.0;
const D7: f64 = 69997945.0 / 29380423.0;

/// PI controller (dopri5.f defaults): β, safety factor, and the limits of h_new/h.
const BETA: f64 = 0.04;
// Read by the test of LOG2_SAFE only: the controller uses its logarithm.
#[cfg_attr(not(test), allow(dead_code))]
const SAFE: f64 = 0.9;
/// h_new/h ≥ FAC1 = 0.2 (FACC1 = 1/FAC1 in the code's division form).
const FAC1: f64 = 0.2;
/// h_new/h ≤ FAC2 = 10.
const FAC2: f64 = 10.0;
/// Exponent of the error in the PI controller: 1/5 − 0.75·β.
const EXPO1: f64 = 0.2 - BETA * 0.75;
/// log₂ SAFE (the controller's powers are formed as one 2ʸ).
const LOG2_SAFE: f64 = -0.152_003_093_445_049_95;
/// Rejections in a row before the step is declared impossible.
const MAX_REJECTIONS: u32 = 100;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dopri5 {
    n: usize,
    rtol: f64,
    atol: f64,
    /// The user's initial step (HNW's `HINIT` when `None`).
    initial_step: Option<f64>,
    /// Proposed size of the next step; 0 = choose one by `HINIT`.
    h_next: f64,
    /// The controller's previous (accepted) error norm, ≥ 1e-4.
    facold: f64,
    /// The last trial was rejected (the next accepted step may not grow).
    last_rejected: bool,
    /// f(t, y) at the current point (FSAL), valid when `have_f0`.
    f0: Vec<f64>,
    have_f0: bool,
    /// Dense output of the last accepted step from (t, y): Δy, h·k1 − Δy, Δy − h·k7 − (h·k1 − Δy),
    /// h·Σ dᵢkᵢ (HNW's RCONT2..RCONT5), 4n values, and that step's size.
    dense: Vec<f64>,
    h_dense: f64,
    pub accepted: u64,
    pub rejected: u64,
    /// Hairer's stiffness estimate h·|λ| of the last accepted step (`auto`'s switch test;
    /// scratch, read right after `attempt`).
    #[serde(skip)]
    h_lambda: f64,
    #[serde(skip)]
    k: Box<Stages>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Stages {
    k2: Vec<f64>,
    k3: Vec<f64>,
    k4: Vec<f64>,
    k5: Vec<f64>,
    k6: Vec<f64>,
    k7: Vec<f64>,
    ytmp: Vec<f64>,
    /// The argument of the sixth stage (dopri5.f's YSTI, for the stiffness estimate).
    ysti: Vec<f64>,
    /// The length the vectors above have (0: not sized yet, as after a restore).
    n: usize,
    /// ‖k7 − k6‖² and ‖ytmp − ysti‖² of the last trial (the stiffness estimate's sums,
    /// gathered in the error loop's pass over the same vectors).
    stiff_num: f64,
    stiff_den: f64,
    /// EXPO1·½·log₂ n_err: the error norm's 1/n_err in the controller's power.
    expo1_half_log2_n: f64,
    /// 1 for a state in the error norm, 0 for a pure quadrature (`OdeSystem::quadratures`, the
    /// network's accumulators and walls' swept volumes), as the BDF and CVODES (`errconQ = false`) keep them out: they
    /// feed nothing back, and one that starts at 0 (mass_left) with atol ≪ its scale had a
    /// weight 1/(rtol·|y| + atol) that set `HINIT`'s first step ~10⁻⁹ s on the one-tank vent
    /// and the next steps by the ×10 growth limit: 25 steps where 13–16 carry the chambers'
    /// accuracy (docs/performance.md, "The default method's first step"). Built from the system
    /// on the first attempt; every state counts when all are quadratures.
    in_norm: Vec<f64>,
    /// The quadrature ranges `in_norm` was built for, and the number of states it counts.
    quad: [std::ops::Range<usize>; 2],
    n_err: usize,
}

impl Dopri5 {
    /// `self = o` without allocating once the vectors have their sizes (fmi2SetFMUstate into
    /// a running instance). The stages are scratch: kept.
    pub(crate) fn assign(&mut self, o: &Self) {
        let Dopri5 {
            n,
            rtol,
            atol,
            initial_step,
            h_next,
            facold,
            last_rejected,
            f0,
            have_f0,
            dense,
            h_dense,
            accepted,
            rejected,
            h_lambda,
            k: _,
        } = self;
        *n = o.n;
        *rtol = o.rtol;
        *atol = o.atol;
        *initial_step = o.initial_step;
        *h_next = o.h_next;
        *facold = o.facold;
        *last_rejected = o.last_rejected;
        f0.clone_from(&o.f0);
        *have_f0 = o.have_f0;
        dense.clone_from(&o.dense);
        *h_dense = o.h_dense;
        *accepted = o.accepted;
        *rejected = o.rejected;
        *h_lambda = o.h_lambda;
    }

    pub fn new(n: usize) -> Self {
        let c = StepControl::default();
        let mut m = Dopri5 {
            n,
            rtol: c.rtol,
            atol: c.atol,
            initial_step: c.initial_step,
            h_next: 0.0,
            facold: 1e-4,
            last_rejected: false,
            f0: vec![0.0; n],
            have_f0: false,
            dense: vec![0.0; 4 * n],
            h_dense: 0.0,
            accepted: 0,
            rejected: 0,
            h_lambda: 0.0,
            k: Box::default(),
        };
        // The stages sized with the method, not in the first step (a restored method sizes
        // them there: they are not serialized).
        m.size_vectors();
        m
    }

    /// Size the history and the stages for n states (once: every attempt calls it).
    #[inline]
    fn ensure(&mut self) {
        let n = self.n;
        if self.k.n == n && self.f0.len() == n && self.dense.len() == 4 * n {
            return;
        }
        self.size_vectors();
    }

    #[cold]
    fn size_vectors(&mut self) {
        let n = self.n;
        ensure_len(&mut self.f0, n);
        if self.dense.len() != 4 * n {
            self.dense.resize(4 * n, 0.0);
        }
        let k = &mut self.k;
        for v in [
            &mut k.k2,
            &mut k.k3,
            &mut k.k4,
            &mut k.k5,
            &mut k.k6,
            &mut k.k7,
            &mut k.ytmp,
            &mut k.ysti,
        ] {
            ensure_len(v, n);
        }
        k.n = n;
        // Rebuilt from the system by the next attempt.
        k.in_norm.clear();
    }

    /// The error norm's states for `quad` (see `Stages::in_norm`).
    #[cold]
    fn set_norm_states(&mut self, quad: [std::ops::Range<usize>; 2]) {
        let n = self.n;
        let k = &mut self.k;
        let is_quad = |i: usize| quad.iter().any(|r| r.contains(&i));
        let all = (0..n).all(is_quad);
        k.in_norm.clear();
        k.in_norm
            .extend((0..n).map(|i| if !all && is_quad(i) { 0.0 } else { 1.0 }));
        k.n_err = k.in_norm.iter().filter(|&&w| w != 0.0).count();
        k.expo1_half_log2_n = EXPO1 * 0.5 * (k.n_err.max(1) as f64).log2();
        k.quad = quad;
    }

    #[inline]
    fn weight(&self, a: f64, b: f64) -> f64 {
        self.atol + self.rtol * a.abs().max(b.abs())
    }

    /// HNW's `HINIT`: an explicit Euler step probes the second derivative; h is chosen so that
    /// h⁵·max(‖f′‖, ‖f‖) ≈ 0.01 (order 5), within 100× the first guess and `h_max`. Where
    /// HNW's sums of squares overflow (an atol near 0, states or rates near 1e±300) the norms
    /// are formed scaled instead ([`super::scaled_norm`]), and a first guess that is still not
    /// a finite positive step is HNW's default for degenerate norms, 1e-6 s: the controller
    /// takes it from there.
    fn initial_step<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h_max: f64,
    ) -> Result<f64, SolverError> {
        let n = self.n;
        let (mut dnf, mut dny) = (0.0, 0.0);
        for i in 0..n {
            let (sk, w) = (self.weight(y[i], 0.0), self.k.in_norm[i]);
            // A state out of the norm adds nothing (0·∞ would be NaN).
            if w == 0.0 {
                continue;
            }
            dnf += w * (self.f0[i] / sk).powi(2);
            dny += w * (y[i] / sk).powi(2);
        }
        let plain = dnf.is_finite() && dny.is_finite();
        let norm_of = |v: &[f64]| {
            super::scaled_norm(
                n,
                |i| v[i],
                |i| self.weight(y[i], 0.0),
                |i| self.k.in_norm[i],
            )
        };
        // ‖f‖ (HNW's √dnf).
        let d1 = if plain { dnf.sqrt() } else { norm_of(&self.f0) };
        let mut h = if plain {
            if dnf <= 1e-10 || dny <= 1e-10 {
                1e-6
            } else {
                (dny / dnf).sqrt() * 0.01
            }
        } else {
            let d0 = norm_of(y);
            if d0 <= 1e-5 || d1 <= 1e-5 || !(d0 / d1).is_finite() {
                1e-6
            } else {
                0.01 * (d0 / d1)
            }
        };
        if !(h > 0.0 && h.is_finite()) {
            h = 1e-6;
        }
        h = h.min(h_max);
        for i in 0..n {
            self.k.ytmp[i] = y[i] + h * self.f0[i];
        }
        sys.rhs(t + h, &self.k.ytmp, &mut self.k.k2);
        if !self.k.k2.iter().all(|v| v.is_finite()) {
            // The probe left the domain: start small and let the controller grow.
            return Ok((h * 1e-3).min(h_max));
        }
        let mut der2 = 0.0;
        for i in 0..n {
            let w = self.k.in_norm[i];
            if w == 0.0 {
                continue;
            }
            let sk = self.weight(y[i], 0.0);
            der2 += w * ((self.k.k2[i] - self.f0[i]) / sk).powi(2);
        }
        let der2 = if der2.is_finite() {
            der2.sqrt()
        } else {
            let (k2, f0) = (&self.k.k2, &self.f0);
            super::scaled_norm(
                n,
                |i| k2[i] - f0[i],
                |i| self.weight(y[i], 0.0),
                |i| self.k.in_norm[i],
            )
        } / h;
        let der12 = der2.abs().max(d1);
        let h1 = if der12 <= 1e-15 {
            (h.abs() * 1e-3).max(1e-6)
        } else {
            (0.01 / der12).powf(1.0 / 5.0)
        };
        // CVODE's lower bound on the first step (cvHin: 100·uround·max(|t0|, |tout|)): right
        // after an event located where a state crosses zero, ‖y‖ ≈ 0 makes HNW's first guess
        // 0.01·‖y‖/‖f‖ collapse below the smallest step the time axis can resolve.
        let t_far = if h_max.is_finite() {
            (t + h_max).abs()
        } else {
            0.0
        };
        let h_floor = 100.0 * f64::EPSILON * t.abs().max(t_far);
        let h0 = (100.0 * h).min(h1).min(h_max).max(h_floor.min(h_max));
        Ok(if h0 > 0.0 && h0.is_finite() {
            h0
        } else {
            1e-6f64.min(h_max)
        })
    }

    /// The six new stages and the increment of a step of size h; returns the RMS error norm
    /// (HNW I, eq. 4.11, over the `n_err` states in the norm) and n_err times its square (the
    /// sum it is the root of), or `None` if a stage was not finite.
    fn trial<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Option<(f64, f64)> {
        let n = self.n;
        let (atol, rtol) = (self.atol, self.rtol);
        let Stages {
            k2,
            k3,
            k4,
            k5,
            k6,
            k7,
            ytmp,
            ysti,
            stiff_num,
            stiff_den,
            in_norm,
            n_err,
            ..
        } = &mut *self.k;
        // Every vector cut to n once, here, not per stage: no bounds checks in the loops and
        // no reloads of the vectors after each right-hand side; n a constant on small networks
        // (`small_n`). Arithmetic unchanged.
        let f0 = &self.f0;
        let (err, num, den, finite) = small_n!(n, N => stages::<S, false>(
            sys,
            t,
            h,
            atol,
            rtol,
            &y[..N],
            &f0[..N],
            &mut inc[..N],
            &in_norm[..N],
            [k2, k3, k4, k5, k6, k7, ytmp, ysti].map(|v| &mut v[..N]),
        ), _ => stages::<S, true>(
            sys,
            t,
            h,
            atol,
            rtol,
            &y[..n],
            &f0[..n],
            &mut inc[..n],
            &in_norm[..n],
            [k2, k3, k4, k5, k6, k7, ytmp, ysti].map(|v| &mut v[..n]),
        ));
        (*stiff_num, *stiff_den) = (num, den);
        let sum = err;
        let err = (err / (*n_err).max(1) as f64).sqrt();
        (finite && err.is_finite()).then_some((err, sum))
    }

    /// Hairer's stiffness estimate of the step just computed (HNW II, §IV.2 "Stiffness
    /// detection", as `dopri5.f`): h·‖f(y₁) − f(ŷ₆)‖/‖y₁ − ŷ₆‖ approximates h·|λ| of the dominant
    /// eigenvalue, y₁ and ŷ₆ being the arguments of the last two stages (both at t + h); 0 when
    /// they coincide.
    /// The sums come from the trial's error loop.
    fn stiffness_estimate(&self, h: f64) -> f64 {
        let (num, den) = (self.k.stiff_num, self.k.stiff_den);
        if den > 0.0 {
            h * (num / den).sqrt()
        } else {
            0.0
        }
    }

    /// h·|λ| estimated on the last accepted step (valid between `attempt` and the next one).
    pub(crate) fn last_stiffness(&self) -> f64 {
        self.h_lambda
    }

    /// Restart at a new point with a given first step (`auto`'s switch from BDF).
    pub(crate) fn restart_with_step(&mut self, h: f64) {
        self.restart();
        self.h_next = h;
    }

    /// The step the next attempt will try.
    pub(crate) fn next_step(&self) -> f64 {
        self.h_next
    }

    /// HNW's RCONT2..RCONT5 for the accepted step of size h with increment `inc`.
    #[inline(always)]
    fn store_dense(&mut self, h: f64, inc: &[f64]) {
        let n = self.n;
        let k = &self.k;
        small_n!(n, N => store_dense_n::<N>(h, inc, &self.f0, k, &mut self.dense),
            _ => store_dense_n::<0>(h, inc, &self.f0, k, &mut self.dense));
        self.h_dense = h;
    }
}

/// [`Dopri5::store_dense`] for `N` states (0: any number, `inc`'s length).
#[inline(always)]
fn store_dense_n<const N: usize>(h: f64, inc: &[f64], f0: &[f64], k: &Stages, dense: &mut [f64]) {
    let n = if N == 0 { inc.len() } else { N };
    {
        let (d2, rest) = dense.split_at_mut(n);
        let (d3, rest) = rest.split_at_mut(n);
        let (d4, d5) = rest.split_at_mut(n);
        let (d2, d3, d4, d5) = (&mut d2[..n], &mut d3[..n], &mut d4[..n], &mut d5[..n]);
        let (inc, f0) = (&inc[..n], &f0[..n]);
        let (k3, k4, k5, k6, k7) = (&k.k3[..n], &k.k4[..n], &k.k5[..n], &k.k6[..n], &k.k7[..n]);
        for i in 0..n {
            let ydiff = inc[i];
            let bspl = h * f0[i] - ydiff;
            d2[i] = ydiff;
            d3[i] = bspl;
            d4[i] = ydiff - h * k7[i] - bspl;
            d5[i] =
                h * (D1 * f0[i] + D3 * k3[i] + D4 * k4[i] + D5 * k5[i] + D6 * k6[i] + D7 * k7[i]);
        }
    }
}

/// The dense output at θ = h/h_dense into `inc` (its length n) from the 4n coefficients.
#[inline(always)]
fn dense_n(theta: f64, dense: &[f64], inc: &mut [f64]) {
    let n = inc.len();
    let theta1 = 1.0 - theta;
    // The four coefficient blocks as slices of n: no bounds checks in the loop (the
    // arithmetic is unchanged, term for term).
    let (d2, rest) = dense[..4 * n].split_at(n);
    let (d3, rest) = rest.split_at(n);
    let (d4, d5) = rest.split_at(n);
    for i in 0..n {
        inc[i] = theta * (d2[i] + theta1 * (d3[i] + theta * (d4[i] + theta1 * d5[i])));
    }
}

/// The stages of [`Dopri5::trial`]: (Σ (e_i/sk_i)², ‖k7 − k6‖², ‖ytmp − ysti‖², every stage
/// finite). `SPLIT`: the sums' terms formed in a loop of their own (see there), k2, ytmp and
/// ysti left holding them; else in the sums' loop (the small networks' unrolled code, which
/// LLVM vectorizes as it is and the extra pass made dearer: the vent's solve +2 %).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn stages<S: OdeSystem, const SPLIT: bool>(
    sys: &mut S,
    t: f64,
    h: f64,
    atol: f64,
    rtol: f64,
    y: &[f64],
    k1: &[f64],
    inc: &mut [f64],
    in_norm: &[f64],
    [k2, k3, k4, k5, k6, k7, ytmp, ysti]: [&mut [f64]; 8],
) -> (f64, f64, f64, bool) {
    let n = y.len();
    let (k1, inc, in_norm) = (&k1[..n], &mut inc[..n], &in_norm[..n]);
    let (k2, k3, k4, k5) = (&mut k2[..n], &mut k3[..n], &mut k4[..n], &mut k5[..n]);
    let (k6, k7, ytmp, ysti) = (&mut k6[..n], &mut k7[..n], &mut ytmp[..n], &mut ysti[..n]);
    // The newest stage enters each sum last, as one product (h·a, formed once) and one sum:
    // the chain from a right-hand side to the next one's argument is a multiply and an add,
    // the older stages' part being ready by then (a step runs at that chain's latency).
    let (h32, h43, h54, h65, h76, he7) = (h * A32, h * A43, h * A54, h * A65, h * A76, h * E7);
    for i in 0..n {
        ytmp[i] = y[i] + h * A21 * k1[i];
    }
    sys.rhs(t + C2 * h, ytmp, k2);
    for i in 0..n {
        ytmp[i] = (y[i] + h * (A31 * k1[i])) + h32 * k2[i];
    }
    sys.rhs(t + C3 * h, ytmp, k3);
    for i in 0..n {
        ytmp[i] = (y[i] + h * (A41 * k1[i] + A42 * k2[i])) + h43 * k3[i];
    }
    sys.rhs(t + C4 * h, ytmp, k4);
    for i in 0..n {
        ytmp[i] = (y[i] + h * (A51 * k1[i] + A52 * k2[i] + A53 * k3[i])) + h54 * k4[i];
    }
    sys.rhs(t + C5 * h, ytmp, k5);
    for i in 0..n {
        ysti[i] =
            (y[i] + h * (A61 * k1[i] + A62 * k2[i] + A63 * k3[i] + A64 * k4[i])) + h65 * k5[i];
    }
    sys.rhs(t + h, ysti, k6);
    for i in 0..n {
        inc[i] = h * (A71 * k1[i] + A73 * k3[i] + A74 * k4[i] + A75 * k5[i]) + h76 * k6[i];
        ytmp[i] = y[i] + inc[i];
    }
    sys.rhs(t + h, ytmp, k7);
    if !SPLIT {
        let mut err = 0.0;
        let (mut num, mut den) = (0.0, 0.0);
        for i in 0..n {
            let e =
                h * (E1 * k1[i] + E3 * k3[i] + E4 * k4[i] + E5 * k5[i] + E6 * k6[i]) + he7 * k7[i];
            let sk = atol + rtol * y[i].abs().max(ytmp[i].abs());
            // A quadrature's term is 0·(e/sk)²: a non-finite stage still makes err NaN.
            err += in_norm[i] * (e / sk).powi(2);
            num += (k7[i] - k6[i]).powi(2);
            den += (ytmp[i] - ysti[i]).powi(2);
        }
        // Every stage finite, tested through the error: each of k1, k3..k7 enters every e_i
        // with a nonzero weight (h > 0), so a non-finite entry makes its e_i, and err, ±inf or
        // NaN (sk ignores a NaN ytmp, `max`; an infinite one gives inf/inf = NaN). Only k2
        // (E2 = 0) needs its own test. Same verdict as testing all six, fewer passes.
        let finite = k2.iter().all(|x| x.is_finite());
        return (err, num, den, finite);
    }
    // The terms of the three sums first, in a loop without a sum, which LLVM vectorizes (the
    // sums' order pinned every operation of the one loop to scalar code, ~47 instructions per
    // state, and the test of k2 took 8 more), each into a vector the step reads no more (k2,
    // ytmp, ysti, read at i before written there); then the sums, in the same order: the
    // same bits.
    for i in 0..n {
        let e = h * (E1 * k1[i] + E3 * k3[i] + E4 * k4[i] + E5 * k5[i] + E6 * k6[i]) + he7 * k7[i];
        let sk = atol + rtol * y[i].abs().max(ytmp[i].abs());
        // k2 (E2 = 0, the one stage not in e) enters as k2 − k2: +0 when finite (the term,
        // ≥ +0, unchanged), NaN otherwise, so that a non-finite stage makes err NaN or ±inf
        // as in the test above.
        #[allow(clippy::eq_op)] // Not 0 for a non-finite k2: the point.
        let k2_zero = k2[i] - k2[i];
        k2[i] = in_norm[i] * (e / sk).powi(2) + k2_zero;
        let (dk, dz) = (k7[i] - k6[i], ytmp[i] - ysti[i]);
        ytmp[i] = dk.powi(2);
        ysti[i] = dz.powi(2);
    }
    let (mut err, mut num, mut den) = (0.0, 0.0, 0.0);
    for i in 0..n {
        err += k2[i];
        num += ytmp[i];
        den += ysti[i];
    }
    (err, num, den, true)
}

impl Integrator for Dopri5 {
    fn name(&self) -> &'static str {
        "dopri5"
    }
    fn order(&self) -> usize {
        5
    }
    fn fixed_step(&self) -> bool {
        false
    }
    fn configure(&mut self, control: &StepControl) {
        self.rtol = control.rtol;
        self.atol = control.atol;
        self.initial_step = control.initial_step;
    }
    fn rejected_steps(&self) -> u64 {
        self.rejected
    }
    fn restart(&mut self) {
        self.h_next = 0.0;
        self.facold = 1e-4;
        self.last_rejected = false;
        self.have_f0 = false;
    }
    fn attempt<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h_max: f64,
        inc: &mut [f64],
    ) -> Result<f64, SolverError> {
        self.ensure();
        let quad = sys.quadratures();
        if self.k.in_norm.len() != self.n || self.k.quad != quad {
            self.set_norm_states(quad);
        }
        if !self.have_f0 {
            sys.rhs(t, y, &mut self.f0);
            super::check_finite(t, &self.f0)?;
            self.have_f0 = true;
        }
        if self.h_next <= 0.0 {
            self.h_next = match self.initial_step {
                Some(h0) => h0,
                None => self.initial_step(sys, t, y, h_max)?,
            };
        }
        let h_min = 16.0 * f64::EPSILON * t.abs().max(1e-300);
        let mut rejections = 0;
        loop {
            // Stretch by up to 1 % to land on the driver's limit instead of leaving a sliver
            // (dopri5.f does so at XEND).
            let mut h = self.h_next;
            if 1.01 * h >= h_max {
                h = h_max;
            }
            if h <= h_min || !h.is_finite() {
                return Err(SolverError::StepTooSmall { t, h });
            }
            match self.trial(sys, t, y, h, inc) {
                Some((err, sum)) => {
                    // Lund stabilization: h_new = h / (err^expo1 / err_old^β / safe), bounded,
                    // formed as h·2^y, y = log₂ safe − expo1·log₂ err + β·log₂ err_old (the
                    // same law). Its path from the error to the next step's stages is short:
                    // log₂ err from the sum of squares (not from err's division and root),
                    // inline log₂ and 2ˣ (`fast_pow`, 1e-14) instead of libm's `ln` and `exp`,
                    // and products instead of two divisions; err_old's term, known since the
                    // last step, is off that path.
                    let log2_sum = fast_pow::log2(sum);
                    let c = LOG2_SAFE + self.k.expo1_half_log2_n;
                    if err <= 1.0 {
                        let c_old = c + BETA * fast_pow::log2(self.facold);
                        let ratio = fast_pow::exp2(c_old - 0.5 * EXPO1 * log2_sum);
                        self.facold = err.max(1e-4);
                        let mut h_new = h * ratio.clamp(FAC1, FAC2);
                        if self.last_rejected {
                            h_new = h_new.min(h);
                        }
                        self.last_rejected = false;
                        self.h_next = h_new;
                        self.accepted += 1;
                        self.h_lambda = self.stiffness_estimate(h);
                        self.store_dense(h, inc);
                        return Ok(h);
                    }
                    self.h_next = h * FAC1.max(fast_pow::exp2(c - 0.5 * EXPO1 * log2_sum));
                }
                None => {
                    // A stage left the model's domain: shrink hard and retry.
                    self.h_next = 0.25 * h;
                }
            }
            self.last_rejected = true;
            self.rejected += 1;
            rejections += 1;
            if rejections >= MAX_REJECTIONS {
                return Err(SolverError::StepTooSmall { t, h: self.h_next });
            }
        }
    }
    #[inline]
    fn dense<S: OdeSystem>(
        &mut self,
        _sys: &mut S,
        _t: f64,
        _y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        let n = self.n;
        let theta = h / self.h_dense;
        small_n!(n, N => dense_n(theta, &self.dense[..4 * N], &mut inc[..N]),
            _ => dense_n(theta, &self.dense[..4 * n], &mut inc[..n]));
        Ok(())
    }
    fn commit<S: OdeSystem>(&mut self, _sys: &mut S, _t_new: f64, _y_new: &[f64]) {
        // FSAL: k7 = f(t + h, y + Δy) is the next step's first stage. (After a step cut short
        // at an event the driver restarts the method, which drops this.)
        std::mem::swap(&mut self.f0, &mut self.k.k7);
        ensure_len(&mut self.k.k7, self.n);
    }
    /// `n` states, `f0` of n and `dense` of 4n values, all finite; rtol, atol finite ≥ 0; the
    /// user's initial step finite > 0; h_next, h_dense finite ≥ 0; facold finite > 0;
    /// counters below 2^53.
    fn validate_state(&self, n: usize) -> Result<(), String> {
        use super::{all_finite, check_len};
        if self.n != n {
            return Err(format!("dopri5 for {} states, the model has {n}", self.n));
        }
        check_len("dopri5 f0", &self.f0, n)?;
        check_len("dopri5 dense output", &self.dense, 4 * n)?;
        all_finite("dopri5 f0", &self.f0)?;
        all_finite("dopri5 dense output", &self.dense)?;
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        if !nonneg(self.rtol) || !nonneg(self.atol) {
            return Err(format!("dopri5 rtol {:?}, atol {:?}", self.rtol, self.atol));
        }
        if self
            .initial_step
            .is_some_and(|h| !(h.is_finite() && h > 0.0))
        {
            return Err(format!("dopri5 initial step {:?}", self.initial_step));
        }
        if !nonneg(self.h_next) || !nonneg(self.h_dense) {
            return Err(format!(
                "dopri5 step sizes h_next {:?}, h_dense {:?}",
                self.h_next, self.h_dense
            ));
        }
        if !(self.facold.is_finite() && self.facold > 0.0) {
            return Err(format!("dopri5 previous error {:?}", self.facold));
        }
        if self.accepted >= super::MAX_RESTORED_COUNT || self.rejected >= super::MAX_RESTORED_COUNT
        {
            return Err("dopri5 step counters out of range".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// y'' = −y as a first-order system; exact solution (cos t, −sin t).
    struct Oscillator;
    impl OdeSystem for Oscillator {
        fn dimension(&self) -> usize {
            2
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dydt: &mut [f64]) {
            dydt[0] = y[1];
            dydt[1] = -y[0];
        }
    }

    /// Integrate to t_end; (global error at t_end, accepted steps).
    fn run(rtol: f64, t_end: f64) -> (f64, u64) {
        let mut m = Dopri5::new(2);
        m.configure(&StepControl {
            rtol,
            atol: rtol,
            ..StepControl::default()
        });
        let (mut t, mut y, mut inc) = (0.0, vec![1.0, 0.0], vec![0.0; 2]);
        while t < t_end {
            let h = m
                .attempt(&mut Oscillator, t, &y, t_end - t, &mut inc)
                .unwrap();
            t = if h >= t_end - t { t_end } else { t + h };
            for i in 0..2 {
                y[i] += inc[i];
            }
            m.commit(&mut Oscillator, t, &y);
        }
        (
            ((y[0] - t.cos()).powi(2) + (y[1] + t.sin()).powi(2)).sqrt(),
            m.accepted,
        )
    }

    #[test]
    fn error_and_steps_scale_with_the_tolerance() {
        let mut pts = Vec::new();
        for k in 0..6 {
            let rtol = 1e-4 * 10f64.powi(-k);
            let (e, n) = run(rtol, 20.0);
            println!("oscillator rtol {rtol:e}: error {e:e}, {n} steps");
            pts.push((rtol.ln(), e.ln(), (n as f64).ln()));
        }
        let slope = |f: fn(&(f64, f64, f64)) -> f64| {
            let m = pts.len() as f64;
            let mx = pts.iter().map(|p| p.0).sum::<f64>() / m;
            let my = pts.iter().map(f).sum::<f64>() / m;
            let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (f(p) - my)).sum();
            let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
            sxy / sxx
        };
        let (se, sn) = (slope(|p| p.1), slope(|p| p.2));
        println!("slopes: error {se:.3} (≈1), steps {sn:.3} (≈ −1/5)");
        assert!((0.85..=1.15).contains(&se));
        assert!((-0.25..=-0.15).contains(&sn));
    }

    #[test]
    fn log2_safe_is_log2_of_the_safety_factor() {
        assert_eq!(LOG2_SAFE, SAFE.log2());
    }

    #[test]
    fn dense_output_is_of_order_4() {
        // One step of size h from t = 0; the midpoint from dense output against cos, sin.
        let mut errs = Vec::new();
        for h in [0.2, 0.1] {
            let mut m = Dopri5::new(2);
            m.configure(&StepControl {
                rtol: 1.0,
                atol: 1.0,
                initial_step: Some(h),
                ..StepControl::default()
            });
            let (y, mut inc) = (vec![1.0, 0.0], vec![0.0; 2]);
            assert_eq!(m.attempt(&mut Oscillator, 0.0, &y, h, &mut inc).unwrap(), h);
            m.dense(&mut Oscillator, 0.0, &y, 0.5 * h, &mut inc)
                .unwrap();
            let s = 0.5 * h;
            let e = ((1.0 + inc[0] - s.cos()).powi(2) + (inc[1] + s.sin()).powi(2)).sqrt();
            println!("h = {h}: dense error at h/2 = {e:e}");
            errs.push(e);
        }
        let order = (errs[0] / errs[1]).log2() - 1.0;
        println!("local order of the dense output: {order:.3} (≈ 4: error O(h⁵))");
        assert!((order - 4.0).abs() < 0.3);
    }
}
