//! The pressure-ratio kinks of a compressible flow path (the ISO 6358 or isentropic law of
//! `crate::components::orifice`) between two nodes, as events: r = p_low/p_high through the
//! path's critical ratio (b or r*), where the flow chokes (the law is C¹ there: its second
//! derivative jumps), and through the laminar ratio, where its slope jumps. Along the ratio
//! ρ = p_j/p_i a path has four such points, b, β, 1/β and 1/b (β = 0.999), and each is one
//! event function, linear in the pressures and monotone in ρ: on the side where `i` is high,
//! f = p_j − ratio·p_i, on the side where `j` is, f = p_i − ratio·p_j. f rises through 0 where r
//! rises through the ratio on its side (a blowdown unchoking, then turning laminar), which is
//! where an event fires (`crate::simulation::events::crosses`). A single function of both sides
//! (ratio·p_high − p_low) would be V-shaped in ρ: pressures driven across each other within one
//! step (a piston compressing a chamber vented to the atmosphere) would cross the laminar band
//! with that function positive at both ends of the step, and neither kink would be seen.
//!
//! The driver locates each point with r rising. With r falling f falls through 0: leaving the
//! laminar band, a slope jump, the adaptive methods locate too ([`is_both_ways`]); choking (C¹)
//! the driver steps over, and Model Exchange's importer sees either as a sign change of the
//! indicator (docs/integrators.md, "Switches"). All only restart the integrator. Every kind with such a path declares its events through these functions, so
//! a part equals the orifices it is built of, event for event.

use crate::components::element::EventAt;
use crate::components::orifice::ISO_LAMINAR_RATIO;

/// A path's ratio switches, in order: k = 0 at the critical ratio, k = 1 at the laminar one.
pub const SWITCHES: [&str; 2] = ["choked", "laminar"];

/// Events per path: each switch on either side (`i` high, `j` high).
pub const EVENTS: usize = 2 * SWITCHES.len();

/// Switch `k`'s pressure ratio p_low/p_high for a path of critical ratio `critical`.
#[inline]
pub fn switch_ratio(k: usize, critical: f64) -> f64 {
    if k == 0 { critical } else { ISO_LAMINAR_RATIO }
}

/// Event `e` (< [`EVENTS`]): its switch `e / 2`'s ratio, and whether it is the side where `j`
/// is high (`e` odd).
#[inline]
fn point(e: usize, critical: f64) -> (f64, bool) {
    (switch_ratio(e / 2, critical), e % 2 == 1)
}

/// Event `e` (< [`EVENTS`]) of the path between nodes `i` and `j` of critical ratio `critical`:
/// 2k is switch k on the side where `i` is high, f = p_j − ratio·p_i; 2k + 1 on the side where
/// `j` is, f = p_i − ratio·p_j. Each rises through 0 where r rises through the ratio.
#[inline]
pub fn event_value(e: usize, critical: f64, i: usize, j: usize, at: &EventAt<'_>) -> f64 {
    let (ratio, j_high) = point(e, critical);
    let (pi, pj) = ((at.node)(i).pressure_pa, (at.node)(j).pressure_pa);
    if j_high {
        pi - ratio * pj
    } else {
        pj - ratio * pi
    }
}

/// ∂f_e/∂p of [`event_value`] as `(node, ∂f/∂p)`.
pub fn event_pressure_gradient(
    e: usize,
    critical: f64,
    i: usize,
    j: usize,
    _at: &EventAt<'_>,
    push: &mut dyn FnMut(usize, f64),
) {
    let (ratio, j_high) = point(e, critical);
    let (high, low) = if j_high { (j, i) } else { (i, j) };
    push(low, 1.0);
    push(high, -ratio);
}

/// Whether the driver locates event `e` both ways: the laminar points, where the slope jumps
/// (twofold: the subsonic law's slope at r = 0.999 is half the linear band's), met from either
/// side, as pressures driven across each other enter the band and leave it. The choked points
/// (C¹) are located with r rising only (see the module's notes).
#[inline]
pub fn is_both_ways(e: usize) -> bool {
    e / 2 == 1
}

/// Event `e` in words, after the path's name: "p_low/p_high rises through its choked ratio
/// (its first node high)", the first node being an orifice's `from`.
pub fn describe(e: usize) -> String {
    let high = if e % 2 == 1 { "second" } else { "first" };
    format!(
        "p_low/p_high rises through its {} ratio (its {high} node high)",
        SWITCHES.get(e / 2).unwrap_or(&"?")
    )
}

/// A part's ISO 6358 paths of one critical ratio, each named and `(i, j)` between its nodes
/// (`None` where the part lacks it): path `p`'s events are p·[`EVENTS`] … (p + 1)·[`EVENTS`] − 1,
/// so a kind lists its paths once and declares their events through these methods.
pub struct Paths<const N: usize> {
    /// b of every path.
    pub critical: f64,
    pub paths: [(&'static str, Option<(usize, usize)>); N],
}

impl<const N: usize> Paths<N> {
    /// The events of its paths.
    pub const EVENTS: usize = N * EVENTS;

    /// Path `e`'s nodes and its event's index within the path, if the part has it.
    #[inline]
    fn locate(&self, e: usize) -> Option<((usize, usize), usize)> {
        let ends = self.paths.get(e / EVENTS)?.1?;
        Some((ends, e % EVENTS))
    }

    /// [`event_value`] of event `e`: `None` on a path the part lacks.
    #[inline]
    pub fn event_value(&self, e: usize, at: &EventAt<'_>) -> Option<f64> {
        let ((i, j), k) = self.locate(e)?;
        Some(event_value(k, self.critical, i, j, at))
    }

    /// [`event_pressure_gradient`] of event `e` (nothing on a path the part lacks).
    pub fn event_pressure_gradient(
        &self,
        e: usize,
        at: &EventAt<'_>,
        push: &mut dyn FnMut(usize, f64),
    ) {
        if let Some(((i, j), k)) = self.locate(e) {
            event_pressure_gradient(k, self.critical, i, j, at, push);
        }
    }

    /// Whether the driver locates event `e` both ways ([`is_both_ways`]).
    #[inline]
    pub fn is_both_ways(e: usize) -> bool {
        is_both_ways(e % EVENTS)
    }

    /// Event `e` in words: "its relief path's p_low/p_high rises through its laminar ratio".
    pub fn describe(&self, e: usize) -> String {
        let path = self.paths.get(e / EVENTS).map_or("?", |p| p.0);
        format!("its {path} path's {}", describe(e % EVENTS))
    }
}
