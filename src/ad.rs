//! The scalar type of the right-hand side: `f64` for plain evaluation, forward-mode dual numbers
//! (`num_dual::Dual64`) for exact directional derivatives. One implementation of every
//! component's equations serves both, so no derivative is written by hand.
//!
//! Branches (choked or not, flow direction, friction regime) are decided on the real part,
//! which is what the f64 evaluation decides: the dual evaluation differentiates the branch that
//! is active, as a one-sided finite difference would.

/// The dual number the right-hand side is differentiated in (see `network::ExtraTerm`).
pub use num_dual::Dual64;
use num_dual::DualNum;

/// A real number or a dual number over f64.
pub trait Scalar: DualNum<f64> + Copy {}
impl<T: DualNum<f64> + Copy> Scalar for T {}

/// A constant (derivative 0).
#[inline(always)]
pub fn c<T: Scalar>(x: f64) -> T {
    T::from(x)
}

/// `mag` with the sign of `sign` (as `f64::copysign`, decided on the real part of `sign`);
/// `mag`'s real part must be ≥ 0.
#[inline(always)]
pub fn copysign<T: Scalar>(mag: T, sign: T) -> T {
    if sign.re().is_sign_negative() {
        -mag
    } else {
        mag
    }
}

/// max(x, 0), decided on the real part.
#[inline(always)]
pub fn max0<T: Scalar>(x: T) -> T {
    if x.re() > 0.0 { x } else { T::zero() }
}

/// max(x, lo) for a constant lower bound, decided on the real part.
#[inline(always)]
pub fn max_const<T: Scalar>(x: T, lo: f64) -> T {
    if x.re() >= lo { x } else { c(lo) }
}
