//! Absolute stability of the explicit methods (run-time check 11).
//!
//! An explicit method applied to y′ = λy is stable while z = h·λ lies in its stability region.
//! For the dissipative networks here the dominant eigenvalues of J = ∂f/∂y lie on or near the
//! negative real axis, so the test is h·ρ(J) against the length of the region's interval on
//! that axis (Hairer & Wanner, *Solving ODEs II*, §IV.2, Fig. 2.1 and Table 2.1; Hairer,
//! Nørsett & Wanner, *Solving ODEs I*, §III.3, Fig. 3.1 for Adams–Bashforth): forward Euler 2,
//! classical RK4 2.785, Adams–Bashforth 2..5: 1, 6/11, 3/10, 90/551. Past it, errors grow by a
//! factor |R(z)| > 1 per step although mass and energy stay conserved (checks 4 and 5 cannot
//! see it). The fixed-order BDFs are A(α)-stable and have no such bound.
//!
//! ρ(J) is estimated by power iteration with the exact directional derivative
//! ([`OdeSystem::jvp`]), on D⁻¹JD with D = diag(|yᵢ| + atol) (a similarity, so the same
//! eigenvalues, with the states' different units scaled out) restricted to the states that are
//! no pure quadratures ([`OdeSystem::quadratures`]: they feed nothing back, so they add only
//! zero eigenvalues, and their scale, often atol at a start from 0, would make the scaled
//! matrix far from normal and the iteration's ratios erratic), warm-started from the last
//! estimate's vector so that a few iterations follow a slowly changing Jacobian; and, since J
//! at one state does not see a step that jumps over a region where J is large (an orifice's
//! laminar band around Δp = 0, where an explicit step overshoots into a spurious oscillation),
//! by the secant over the step ahead, ‖f(y + h·f(y)) − f(y)‖/‖h·f(y)‖ in the same norm (as
//! Hairer's stiffness detection takes h·|λ| from two stage values, HNW II, §IV.2). The larger
//! of the two is the estimate. The vectors are sized once; an estimate allocates nothing.

use serde::{Deserialize, Serialize};

use crate::ode::OdeSystem;

/// The length of the method's stability interval on the negative real axis (h·ρ above it is
/// unstable), for the explicit fixed-step methods; `None` for the others.
pub fn explicit_bound(name: &str) -> Option<f64> {
    Some(match name {
        "euler" => 2.0,
        "rk4" => 2.785_293_563_405_282,
        "ab2" => 1.0,
        "ab3" => 6.0 / 11.0,
        "ab4" => 3.0 / 10.0,
        "ab5" => 90.0 / 551.0,
        _ => return None,
    })
}

/// Power iterations of the first estimate, and of each warm-started one after it.
const COLD_ITERATIONS: usize = 12;
const WARM_ITERATIONS: usize = 3;

/// Power iteration for ρ(J), with its vectors kept between estimates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpectralRadius {
    /// The current iterate w (unit 2-norm, in the scaled variables); empty: not started.
    w: Vec<f64>,
    v: Vec<f64>,
    jv: Vec<f64>,
    f: Vec<f64>,
    scale: Vec<f64>,
    /// The Euler predictor y + h·f(y) and f there (the secant).
    z: Vec<f64>,
    fz: Vec<f64>,
    /// 1 for a state in the iteration, 0 for a quadrature.
    mask: Vec<f64>,
}

impl SpectralRadius {
    /// Estimate ρ(J(t, y)) of `sys` (whose dimension is `y.len()`) for a step of size `h`
    /// (the secant; h = 0: power iteration only); `atol` keeps the scaling of states at 0
    /// positive. `None` when the system has no exact J·v or a product is not finite (the
    /// iterate then starts afresh next time).
    pub fn estimate<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        atol: f64,
    ) -> Option<f64> {
        let n = y.len();
        let cold = self.w.len() != n;
        if cold {
            for v in [
                &mut self.w,
                &mut self.v,
                &mut self.jv,
                &mut self.f,
                &mut self.scale,
                &mut self.z,
                &mut self.fz,
                &mut self.mask,
            ] {
                v.clear();
                v.resize(n, 0.0);
            }
            let quad = sys.quadratures();
            let mut counted = 0usize;
            for i in 0..n {
                let q = quad.iter().any(|r| r.contains(&i));
                self.mask[i] = if q { 0.0 } else { 1.0 };
                counted += usize::from(!q);
            }
            if counted == 0 {
                self.mask.fill(1.0);
                counted = n;
            }
            let w0 = 1.0 / (counted.max(1) as f64).sqrt();
            for i in 0..n {
                self.w[i] = w0 * self.mask[i];
            }
        }
        let floor = if atol > 0.0 { atol } else { f64::MIN_POSITIVE };
        for i in 0..n {
            self.scale[i] = y[i].abs() + floor;
        }
        let iterations = if cold {
            COLD_ITERATIONS
        } else {
            WARM_ITERATIONS
        };
        let mut last = [0.0f64; 2];
        for k in 0..iterations {
            for i in 0..n {
                self.v[i] = self.scale[i] * self.w[i];
            }
            if !sys.jvp(t, y, &self.v, &mut self.f, &mut self.jv) {
                self.w.clear();
                return None;
            }
            let mut norm2 = 0.0;
            for i in 0..n {
                let x = self.mask[i] * self.jv[i] / self.scale[i];
                self.jv[i] = x;
                norm2 += x * x;
            }
            let norm = norm2.sqrt();
            if !norm.is_finite() {
                self.w.clear();
                return None;
            }
            // ‖D⁻¹JD·w‖ with ‖w‖ = 1.
            last = [last[1], norm];
            if norm == 0.0 {
                return Some(0.0);
            }
            for i in 0..n {
                self.w[i] = self.jv[i] / norm;
            }
            if k + 1 == iterations {
                break;
            }
        }
        // ‖B²w‖/‖w‖ over the last two iterations: |λ|² for a dominant real eigenvalue and for
        // a dominant pair ±λ or a complex pair alike, where a single ratio alternates (a far
        // from normal B, as the scaling of states at rest makes it, swings it by orders).
        let power = (last[0] * last[1]).sqrt();
        Some(power.max(self.secant(sys, t, y, h)))
    }

    /// ‖D⁻¹(f(y + h·f) − f)‖/‖D⁻¹h·f‖ with f = f(t, y) in `self.f` (from the last J·v); 0 when
    /// it cannot be formed (h = 0, f = 0, or f not finite at the predictor).
    fn secant<S: OdeSystem>(&mut self, sys: &mut S, t: f64, y: &[f64], h: f64) -> f64 {
        let n = y.len();
        if h.is_nan() || h <= 0.0 {
            return 0.0;
        }
        for i in 0..n {
            self.z[i] = y[i] + h * self.f[i];
        }
        sys.rhs(t + h, &self.z, &mut self.fz);
        let (mut num, mut den) = (0.0, 0.0);
        for i in 0..n {
            if self.mask[i] == 0.0 {
                continue;
            }
            let d = (self.fz[i] - self.f[i]) / self.scale[i];
            let s = h * self.f[i] / self.scale[i];
            num += d * d;
            den += s * s;
        }
        let r = (num / den).sqrt();
        if r.is_finite() { r } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// y′ = A·y with A block diagonal: eigenvalues −1, −50 (real) and −3 ± 40i (|λ| = 40.1);
    /// states scaled by 1e-6 .. 1e3 to stress the scaling.
    struct Linear {
        d: [f64; 4],
    }

    impl Linear {
        fn apply(&self, v: &[f64], out: &mut [f64]) {
            // A in the unscaled variables u = D⁻¹y: A_u; here y = D·u, so J = D·A_u·D⁻¹.
            let d = self.d;
            let u: Vec<f64> = (0..4).map(|i| v[i] / d[i]).collect();
            let au = [
                -u[0],
                -50.0 * u[1],
                -3.0 * u[2] - 40.0 * u[3],
                40.0 * u[2] - 3.0 * u[3],
            ];
            for i in 0..4 {
                out[i] = d[i] * au[i];
            }
        }
    }

    impl OdeSystem for Linear {
        fn dimension(&self) -> usize {
            4
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dydt: &mut [f64]) {
            self.apply(y, dydt);
        }
        fn jvp(&mut self, _t: f64, y: &[f64], v: &[f64], dydt: &mut [f64], jv: &mut [f64]) -> bool {
            self.apply(y, dydt);
            self.apply(v, jv);
            true
        }
    }

    /// ρ(J) = 50 (the real eigenvalue dominates |−3 ± 40i| = 40.1): the cold estimate within
    /// 5 %, and warm ones stay there.
    #[test]
    fn power_iteration_finds_the_dominant_eigenvalue() {
        let mut sys = Linear {
            d: [1e-6, 1e3, 2.0, 0.5],
        };
        let y = [1e-6, 1e3, 2.0, 0.5];
        let mut sr = SpectralRadius::default();
        let first = sr.estimate(&mut sys, 0.0, &y, 0.0, 1e-12).unwrap();
        let mut warm = Vec::new();
        for _ in 0..5 {
            warm.push(sr.estimate(&mut sys, 0.0, &y, 0.0, 1e-12).unwrap());
        }
        println!("rho = 50: cold {first}, warm {warm:?}");
        assert!((first - 50.0).abs() < 2.5, "{first}");
        assert!(warm.iter().all(|r| (r - 50.0).abs() < 0.5), "{warm:?}");
    }

    /// The bounds are the roots of |R(−x)| = 1 on the negative axis: R(z) = 1 + z for Euler,
    /// the degree-4 Taylor polynomial for RK4 (|R(−2.785…)| = 1).
    #[test]
    fn bounds_are_where_the_amplification_reaches_one() {
        let rk4 = |z: f64| 1.0 + z + z * z / 2.0 + z.powi(3) / 6.0 + z.powi(4) / 24.0;
        let b = explicit_bound("rk4").unwrap();
        println!("RK4: R(-{b}) = {}", rk4(-b));
        assert!((rk4(-b) - 1.0).abs() < 1e-12);
        assert!((1.0 - explicit_bound("euler").unwrap()).abs() - 1.0 == 0.0);
        // Adams–Bashforth k: ζᵏ − ζᵏ⁻¹ − z·Σ βⱼζᵏ⁻¹⁻ʲ has the root ζ = −1 at z = −bound
        // (the end of the real interval), β from HNW I, Table III.1.1.
        let betas: [(&str, &[f64]); 4] = [
            ("ab2", &[3.0 / 2.0, -1.0 / 2.0]),
            ("ab3", &[23.0 / 12.0, -16.0 / 12.0, 5.0 / 12.0]),
            (
                "ab4",
                &[55.0 / 24.0, -59.0 / 24.0, 37.0 / 24.0, -9.0 / 24.0],
            ),
            (
                "ab5",
                &[
                    1901.0 / 720.0,
                    -2774.0 / 720.0,
                    2616.0 / 720.0,
                    -1274.0 / 720.0,
                    251.0 / 720.0,
                ],
            ),
        ];
        for (name, beta) in betas {
            let k = beta.len() as i32;
            let z = -explicit_bound(name).unwrap();
            let zeta = -1.0f64;
            let sigma: f64 = beta
                .iter()
                .enumerate()
                .map(|(j, b)| b * zeta.powi(k - 1 - j as i32))
                .sum();
            let p = zeta.powi(k) - zeta.powi(k - 1) - z * sigma;
            println!("{name} at z = {z}: characteristic polynomial at -1 = {p:e}");
            assert!(p.abs() < 1e-14, "{name}: {p}");
        }
        assert_eq!(explicit_bound("bdf2"), None);
        assert_eq!(explicit_bound("dopri5"), None);
    }
}

/// A run of marked steps with fewer than a gap of unmarked ones between them: `auto`'s DP5
/// steps accepted only after a rejection, the driver's adaptive steps ended on a law's switch.
/// Either run, long enough, is a problem DP5 cannot resolve, which the BDF holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepRun {
    marked: u32,
    unmarked: u32,
}

impl StepRun {
    /// After a step: whether the run reached `len` marked steps (it then starts again); a gap
    /// of `gap` unmarked ones ends it.
    pub fn note(&mut self, marked: bool, len: u32, gap: u32) -> bool {
        if !marked {
            self.unmarked = self.unmarked.saturating_add(1);
            if self.unmarked >= gap {
                self.marked = 0;
            }
            return false;
        }
        self.unmarked = 0;
        self.marked += 1;
        if self.marked >= len {
            self.marked = 0;
            return true;
        }
        false
    }

    /// The marked steps of the run so far.
    pub fn marked(&self) -> u32 {
        self.marked
    }
}

/// Hairer's threshold on h·|λ| for a stability-limited DP5 step (`dopri5.f`).
pub const STIFF_H_LAMBDA: f64 = 3.25;
/// Stability-limited DP5 steps that mean stiffness, and non-stiff ones that reset the count.
pub const STIFF_STEPS: u32 = 15;
pub const NONSTIFF_STEPS: u32 = 6;
/// DP5 steps each accepted only after a rejection, with fewer than `CLEAN_STEPS` others in
/// between, that mean DP5 cannot resolve the problem (as the driver's rule on chattering
/// events counts).
pub const FOUGHT_STEPS: u32 = 32;
pub const CLEAN_STEPS: u32 = 8;

/// Hairer's stiffness detection (HNW II, §IV.2, as in `dopri5.f`), counted over accepted DP5
/// steps: `auto` switches to its BDF on it, a forced `dopri5` fires check 11.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Dp5Stiffness {
    /// Stability-limited steps in a row, and non-stiff ones since.
    stiff: u32,
    nonstiff: u32,
}

impl Dp5Stiffness {
    /// After an accepted DP5 step with its estimate h·|λ|: whether `STIFF_STEPS`
    /// stability-limited steps came with fewer than `NONSTIFF_STEPS` others between them (the
    /// count then starts again).
    pub fn note(&mut self, h_lambda: f64) -> bool {
        if h_lambda > STIFF_H_LAMBDA {
            self.nonstiff = 0;
            self.stiff += 1;
            if self.stiff >= STIFF_STEPS {
                self.stiff = 0;
                return true;
            }
        } else {
            self.nonstiff = self.nonstiff.saturating_add(1);
            if self.nonstiff >= NONSTIFF_STEPS {
                self.stiff = 0;
            }
        }
        false
    }

    /// Whether the counts are ones `note` can leave (a restored state).
    pub fn is_valid(&self) -> bool {
        self.stiff <= STIFF_STEPS
    }
}

/// DP5's fought steps: a run of `FOUGHT_STEPS` steps each accepted only after a rejection is a
/// problem DP5 cannot resolve at any step it tries: a stability limit Hairer's test misses, or
/// a law's switch that the step's inner stages cross while both its ends stay on one side (a
/// relief valve's 1 Pa band entered by the stages of steps that start and end closed: no event
/// function changes sign at a step's end, so neither an event nor chattering is seen). The BDF
/// holds either (`tests/verification/switch_property.rs`, docs/integrators.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Dp5Fought {
    /// DP5's rejected steps at its last accepted one.
    rejected_seen: u64,
    run: StepRun,
}

impl Dp5Fought {
    /// After an accepted DP5 step, with DP5's rejected steps so far: whether the run reached
    /// `FOUGHT_STEPS` (it then starts again).
    pub fn note(&mut self, rejected: u64) -> bool {
        let fought = rejected > self.rejected_seen;
        self.rejected_seen = rejected;
        self.run.note(fought, FOUGHT_STEPS, CLEAN_STEPS)
    }

    /// A new run, keeping the rejections seen (a switch of method).
    pub fn restart(&mut self) {
        self.run = StepRun::default();
    }

    /// Whether the counts are ones `note` can leave with DP5 at `rejected` rejections.
    pub fn is_valid(&self, rejected: u64) -> bool {
        self.run.marked() < FOUGHT_STEPS && self.rejected_seen <= rejected
    }
}
