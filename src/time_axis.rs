//! The time axis's resolution: the smallest step that still moves a time t. A leaf (it uses
//! nothing else of the crate), shared by the driver, the output grid, the integrators and the
//! FMU instance.

/// The smallest step the time axis resolves at time t, s: CVODE's lower bound on a step,
/// 100·u·|t| with u the unit round-off (`cvHin`: hlb = 100·uround·max(|t0|, |tout|)). A
/// smaller step from t rounds to a time off by more than 1 % of the step, or to t itself.
#[inline]
pub fn time_resolution_s(t: f64) -> f64 {
    100.0 * f64::EPSILON * t.abs()
}
