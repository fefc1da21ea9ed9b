//! Circular tube: FONSim's `CircularTube` for a compressible fluid (fonsim 0.6.0,
//! `fonsim/components/restrictors.py`, `circulartube_compressible.evaluate`): major losses only,
//! no inertia of the gas in the tube, density at the mean pressure of both ends (as for the
//! restrictor, see [`crate::components::restrictor`]). With Re = 4|ṁ|/(π·d·μ):
//!   laminar   Δp_lam  = (128/π)·(L/d⁴)·μ/ρ̄·ṁ
//!   turbulent Δp_turb = f·(8/π²)·(L/d⁵)/ρ̄·ṁ·|ṁ|,  Haaland: f = 1.8⁻²·log10(β)⁻²,
//!             β = (ε/d/3.7)^1.11 + 6.9/Re
//!   Δp = a·Δp_turb + (1 − a)·Δp_lam,  a = clamp((Re − 2300)/(4000 − 2300), 0, 1).
//! FONSim solves this relation for the flow inside its Newton iteration; here it is solved for
//! |ṁ| at each right-hand-side evaluation (Δp is monotone in |ṁ|: the turbulent loss exceeds the
//! laminar one above Re = 2300, so the laminar flow brackets the root), by Newton's method
//! safeguarded with bisection, to round-off.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c, max0};
use crate::param::{Param, ParamValue};
use crate::units::{DynamicViscosity, Length};

pub const RE_LAMINAR: f64 = 2300.0;
pub const RE_TURBULENT: f64 = 4000.0;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tube {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub length_m: Param<Length>,
    pub diameter_m: Param<Length>,
    pub roughness_m: Param<Length>,
    /// Dynamic viscosity μ, Pa·s.
    pub viscosity_pa_s: Param<DynamicViscosity>,
}

/// The tube's coefficients at one instant (`T`: f64, or dual numbers when a coefficient is
/// differentiated).
#[derive(Clone, Copy, Debug)]
pub struct TubeAt<T = f64> {
    pub length_m: T,
    pub diameter_m: T,
    pub roughness_m: T,
    pub viscosity_pa_s: T,
}

impl<T: Scalar> TubeAt<T> {
    /// The real parts.
    pub fn re(&self) -> TubeAt {
        TubeAt {
            length_m: self.length_m.re(),
            diameter_m: self.diameter_m.re(),
            roughness_m: self.roughness_m.re(),
            viscosity_pa_s: self.viscosity_pa_s.re(),
        }
    }

    /// Pressure drop (Pa) at flow magnitude `mdot` ≥ 0 (kg/s) and mean density `rho`, and its
    /// derivative with respect to `mdot`: FONSim's relation above.
    pub fn pressure_drop_pa(&self, mdot: T, rho: T) -> (T, T) {
        let pi = std::f64::consts::PI;
        let (l, d, mu) = (self.length_m, self.diameter_m, self.viscosity_pa_s);
        let d4 = d * d * d * d;
        let r_lam = c::<T>(128.0 / pi) * l / d4 * mu / rho;
        let lam = r_lam * mdot;
        let re = mdot * 4.0 / (d * pi * mu);
        let a_re = ((re.re() - RE_LAMINAR) / (RE_TURBULENT - RE_LAMINAR)).clamp(0.0, 1.0);
        if a_re == 0.0 {
            return (lam, r_lam);
        }
        let a = if a_re < 1.0 {
            (re - RE_LAMINAR) / (RE_TURBULENT - RE_LAMINAR)
        } else {
            c(1.0)
        };
        let dre = c::<T>(4.0) / (d * pi * mu);
        let beta = c::<T>(6.9) / re + (self.roughness_m / d / 3.7).powf(1.11);
        let lg = beta.log10();
        let f = c::<T>(1.0 / (1.8 * 1.8)) / (lg * lg);
        // df/dRe = −2·f/lg · (1/(β·ln10))·(−6.9/Re²)
        let df = f * 2.0 / lg / (beta * std::f64::consts::LN_10) * 6.9 / (re * re);
        let r_turb = c::<T>(8.0 / (pi * pi)) * l / (d4 * d) / rho;
        let turb = f * r_turb * mdot * mdot;
        let dturb = r_turb * (f * 2.0 * mdot + df * dre * mdot * mdot);
        let da = if a_re < 1.0 {
            dre / (RE_TURBULENT - RE_LAMINAR)
        } else {
            T::zero()
        };
        (
            a * turb + (c::<T>(1.0) - a) * lam,
            a * dturb + (c::<T>(1.0) - a) * r_lam + (turb - lam) * da,
        )
    }

    /// [`TubeAt::mass_flow_magnitude_kg_per_s`] for any scalar: solved in f64, and for dual
    /// numbers differentiated by the implicit function theorem (one Newton correction of the
    /// derivative parts: d|ṁ| = (dΔp − dg)/(∂g/∂|ṁ|), g the pressure drop at the solution
    /// with every other argument dual), so the iteration is never differentiated.
    #[inline]
    pub fn mass_flow_magnitude(&self, dp: T, rho: T) -> T {
        let x = self.re().mass_flow_magnitude_kg_per_s(dp.re(), rho.re());
        if T::NDERIV == 0 {
            return c(x);
        }
        if x == 0.0 {
            // At rest the laminar slope holds from both sides.
            let (_, r_lam) = self.pressure_drop_pa(T::zero(), rho);
            return max0(dp) / r_lam;
        }
        let (g, dg) = self.pressure_drop_pa(c::<T>(x), rho);
        let resid = g - dp;
        c::<T>(x) - (resid - c::<T>(resid.re())) / dg.re()
    }
}

impl TubeAt {
    /// Flow magnitude (kg/s) at which the pressure drop is `dp` ≥ 0.
    pub fn mass_flow_magnitude_kg_per_s(&self, dp: f64, rho: f64) -> f64 {
        if dp <= 0.0 {
            return 0.0;
        }
        let (_, r_lam) = self.pressure_drop_pa(0.0, rho);
        let hi0 = dp / r_lam;
        let pi = std::f64::consts::PI;
        if 4.0 * hi0 / (pi * self.diameter_m * self.viscosity_pa_s) <= RE_LAMINAR {
            return hi0;
        }
        let (mut lo, mut hi) = (0.0, hi0);
        let mut x = hi0;
        for _ in 0..200 {
            let (g, dg) = self.pressure_drop_pa(x, rho);
            let r = g - dp;
            if r > 0.0 {
                hi = x;
            } else {
                lo = x;
            }
            if r == 0.0 || hi - lo <= 4.0 * f64::EPSILON * hi {
                break;
            }
            let newton = x - r / dg;
            let next = if dg > 0.0 && newton > lo && newton < hi {
                newton
            } else {
                0.5 * (lo + hi)
            };
            if (next - x).abs() <= 2.0 * f64::EPSILON * x {
                x = next;
                break;
            }
            x = next;
        }
        x
    }
}

impl Tube {
    pub fn at(&self, t: f64, seg: f64) -> TubeAt {
        self.at_with(|p| p.value(t, seg))
    }

    /// The coefficients with each parameter's value given by `param`.
    #[inline]
    pub fn at_with<T: Scalar>(&self, param: impl Fn(&ParamValue) -> T) -> TubeAt<T> {
        TubeAt {
            length_m: param(&self.length_m),
            diameter_m: param(&self.diameter_m),
            roughness_m: param(&self.roughness_m),
            viscosity_pa_s: param(&self.viscosity_pa_s),
        }
    }

    pub fn params(&self) -> [&ParamValue; 4] {
        [
            &self.length_m,
            &self.diameter_m,
            &self.roughness_m,
            &self.viscosity_pa_s,
        ]
    }
}
