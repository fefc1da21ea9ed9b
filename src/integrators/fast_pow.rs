//! log₂ and 2ˣ for the DP5 step-size controller's powers (err^−α·err_old^β), inline and
//! without libm: the controller's result h feeds every stage of the next step, so the two
//! calls of `ln` and `exp` sat on the solve's dependent chain. A controller needs no
//! correctly rounded power: both functions are accurate to about 1e-14 (the unit tests print
//! the errors against `f64::log2`, `f64::exp2` and `f64::powf`), far below the step-size
//! noise the controller itself tolerates.
//!
//! Both are the textbook reductions (Muller, *Elementary Functions*, §11): log₂ x = k + log₂ m
//! with m ∈ [√½, √2) and ln m = 2·atanh((m − 1)/(m + 1)) by its Taylor series; 2ʸ = 2ᵏ·2ʳ with
//! |r| ≤ ½ by the Taylor series of e^(r·ln 2). Polynomials in Estrin's scheme: shallower
//! dependencies than Horner's, which is what the controller's latency needs.

use std::f64::consts::{LN_2, LOG2_E};

/// log₂ x for finite x > 0 (absolute error below 3e-14, relative to 1 near x = 1 where the
/// value is 0); for x = 0 or subnormal x a value ≤ −1022 (the controller clamps such
/// powers; no caller needs more). Not for negative, infinite or NaN x.
#[inline(always)]
pub fn log2(x: f64) -> f64 {
    // x = 2ᵏ·m with m ∈ [√½, √2): subtracting √½'s bits makes the exponent field count k.
    const SQRT_HALF_BITS: u64 = 0x3FE6_A09E_667F_3BCD;
    let bits = x.to_bits();
    let k = (bits.wrapping_sub(SQRT_HALF_BITS) as i64) >> 52;
    let m = f64::from_bits(bits.wrapping_sub((k as u64) << 52));
    // Exact: m − 1 by Sterbenz's lemma (m ∈ [½, 2]).
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    // atanh s = s·(1 + z/3 + z²/5 + … + z⁷/15); |s| ≤ 0.1716, z ≤ 0.0295: the next term is
    // z⁸/17 ≈ 3e-14 of the sum.
    const P: [f64; 7] = [
        1.0 / 3.0,
        1.0 / 5.0,
        1.0 / 7.0,
        1.0 / 9.0,
        1.0 / 11.0,
        1.0 / 13.0,
        1.0 / 15.0,
    ];
    let z2 = z * z;
    let z4 = z2 * z2;
    let p = (P[0] + P[1] * z + (P[2] + P[3] * z) * z2) + (P[4] + P[5] * z + P[6] * z2) * z4;
    // log₂ m = (2/ln 2)·atanh s.
    let t = s * (2.0 * LOG2_E);
    k as f64 + (t + t * (z * p))
}

/// 2ʸ for y ∈ [−64, 64] (relative error below 1e-14); outside, y is first clamped to that
/// range (NaN to −64): the controller's factor is bounded far inside it.
#[inline(always)]
pub fn exp2(y: f64) -> f64 {
    // 1.5·2⁵²: adding it rounds to an integer (ties to even) in the low bits.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    // Not `clamp`: NaN must map into the range too (max picks the number).
    #[allow(clippy::manual_clamp)]
    let y = y.max(-64.0).min(64.0);
    let shifted = y + ROUND;
    let kf = shifted - ROUND;
    let r = y - kf;
    let k = shifted.to_bits().wrapping_sub(ROUND.to_bits()) as i64;
    let scale = f64::from_bits((k.wrapping_add(1023) as u64) << 52);
    // 2ʳ = Σ (r·ln 2)ⁱ/i!, i ≤ 12; |r·ln 2| ≤ 0.347: the next term is 3e-16.
    const C: [f64; 13] = {
        let mut c = [0.0; 13];
        let (mut i, mut t) = (0, 1.0);
        while i < 13 {
            c[i] = t;
            t = t * LN_2 / (i + 1) as f64;
            i += 1;
        }
        c
    };
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let lo = (C[0] + C[1] * r + (C[2] + C[3] * r) * r2)
        + (C[4] + C[5] * r + (C[6] + C[7] * r) * r2) * r4;
    let hi = (C[8] + C[9] * r + (C[10] + C[11] * r) * r2) + C[12] * r4;
    scale * (lo + hi * r8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Log-spaced points over [2^lo, 2^hi], with the interval's ends.
    fn points(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
        (0..=n).map(move |i| (lo + (hi - lo) * i as f64 / n as f64).exp2())
    }

    #[test]
    fn log2_against_libm() {
        let mut worst: f64 = 0.0;
        // Every binade of the normal range, and dense points around 1 (where log₂ x → 0).
        for x in points(-1022.0, 1023.0, 400_000).chain(points(-0.6, 0.6, 100_000)) {
            let err = (log2(x) - x.log2()).abs() / x.log2().abs().max(1.0);
            worst = worst.max(err);
        }
        println!("log2: largest error {worst:e} (absolute, relative where |log2 x| > 1)");
        assert!(worst < 3e-14);
        assert_eq!(log2(1.0), 0.0);
        assert!(log2(0.0) <= -1022.0 && log2(f64::MIN_POSITIVE / 4.0) <= -1022.0);
    }

    #[test]
    fn exp2_against_libm() {
        let mut worst: f64 = 0.0;
        for i in 0..=400_000 {
            let y = -64.0 + 128.0 * i as f64 / 400_000.0;
            worst = worst.max((exp2(y) - y.exp2()).abs() / y.exp2());
        }
        println!("exp2: largest relative error {worst:e} on [-64, 64]");
        assert!(worst < 1e-14);
        assert_eq!(exp2(0.0), 1.0);
        assert_eq!(
            (exp2(100.0), exp2(-1e300), exp2(f64::NAN)),
            (2f64.powi(64), 2f64.powi(-64), 2f64.powi(-64))
        );
    }

    /// The DP5 controller's power SAFE·err^−α·err_old^β as `dopri5` forms it (from the error
    /// norm's sum of squares Σ = n·err²) against `f64::powf`, over every err the controller
    /// sees unclamped and beyond: err ∈ [1e-30, 1e30], err_old ∈ [1e-4, 1], n ∈ {1, 5, 100}.
    #[test]
    fn controller_power_against_powf() {
        const ALPHA: f64 = 0.2 - 0.04 * 0.75;
        const BETA: f64 = 0.04;
        const SAFE: f64 = 0.9;
        let mut worst: f64 = 0.0;
        for n in [1usize, 5, 100] {
            let half_log2_n = 0.5 * (n as f64).log2();
            for err in points(-99.7, 99.7, 20_000) {
                let sum = n as f64 * err * err;
                for err_old in points(-13.3, 0.0, 40) {
                    let c = ALPHA * half_log2_n + BETA * log2(err_old) + SAFE.log2();
                    let fast = exp2(-0.5 * ALPHA * log2(sum) + c);
                    let libm = SAFE * err.powf(-ALPHA) * err_old.powf(BETA);
                    if libm > 2f64.powi(-60) && libm < 2f64.powi(60) {
                        worst = worst.max((fast - libm).abs() / libm);
                    }
                }
            }
        }
        println!("controller power: largest relative error {worst:e} against powf");
        assert!(worst < 1e-12);
    }
}
