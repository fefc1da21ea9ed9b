//! The pressure-ratio kinks of a compressible flow path (the ISO 6358 or isentropic law of
//! `crate::components::orifice`) between two nodes, as events: r = p_low/p_high through the
//! path's critical ratio (b or r*), where the flow chokes (the law is C¹ there: its second
//! derivative jumps), and through the laminar ratio, where its slope jumps. Each is two events,
//! g = ratio·p_high − p_low (≥ 0 below the ratio: choked, or not laminar) and −g, as an event
//! fires where its function crosses zero upward; g is continuous and linear in each pressure on
//! either side of p_i = p_j, where it is (ratio − 1)·p < 0.
//!
//! The driver locates them with r rising only (event 2k + 1: a blowdown unchoking, then turning
//! laminar), Model Exchange sees both directions (event 2k, r falling, is an indicator only);
//! both only restart the integrator (docs/integrators.md, "Switches"). Every kind with such a
//! path declares its events through these functions, so a part equals the orifices it is built
//! of, event for event.

use crate::components::element::EventAt;
use crate::components::orifice::{ISO_LAMINAR_RATIO, Poppet};

/// A path's ratio switches, in order: k = 0 at the critical ratio, k = 1 at the laminar one.
pub const SWITCHES: [&str; 2] = ["choked", "laminar"];

/// Events per path: each switch rising and falling.
pub const EVENTS: usize = 2 * SWITCHES.len();

/// Switch `k`'s pressure ratio p_low/p_high for a path of critical ratio `critical`.
#[inline]
pub fn switch_ratio(k: usize, critical: f64) -> f64 {
    if k == 0 { critical } else { ISO_LAMINAR_RATIO }
}

/// Whether p_i ≥ p_j at the event's instant (the high side is `i`), and switch `k`'s
/// g = ratio·p_high − p_low with its ratio.
#[inline]
fn at_point(k: usize, critical: f64, i: usize, j: usize, at: &EventAt<'_>) -> (bool, f64, f64) {
    let ratio = switch_ratio(k, critical);
    let (pi, pj) = ((at.node)(i).pressure_pa, (at.node)(j).pressure_pa);
    let i_high = pi >= pj;
    let (high, low) = if i_high { (pi, pj) } else { (pj, pi) };
    (i_high, ratio, ratio * high - low)
}

/// Event `e` (< [`EVENTS`]) of the path between nodes `i` and `j` of critical ratio `critical`:
/// 2k is switch k's g (r falls through its ratio), 2k + 1 is −g (r rises through it).
#[inline]
pub fn event_value(e: usize, critical: f64, i: usize, j: usize, at: &EventAt<'_>) -> f64 {
    let (_, _, g) = at_point(e / 2, critical, i, j, at);
    Poppet::pair(e, g)
}

/// ∂g_e/∂p of [`event_value`] as `(node, ∂g/∂p)`.
pub fn event_pressure_gradient(
    e: usize,
    critical: f64,
    i: usize,
    j: usize,
    at: &EventAt<'_>,
    push: &mut dyn FnMut(usize, f64),
) {
    let (i_high, ratio, _) = at_point(e / 2, critical, i, j, at);
    let (high, low) = if i_high { (i, j) } else { (j, i) };
    // g = ratio·p_high − p_low.
    let sign = Poppet::pair(e, 1.0);
    push(high, sign * ratio);
    push(low, -sign);
}

/// Whether event `e` is Model Exchange's only (r falling: choking, leaving the laminar band).
#[inline]
pub fn is_indicator_only(e: usize) -> bool {
    e % 2 == 0
}

/// Event `e` in words, after the path's name: "p_low/p_high falls through its choked ratio".
pub fn describe(e: usize) -> String {
    let way = if e % 2 == 0 { "falls" } else { "rises" };
    format!(
        "p_low/p_high {way} through its {} ratio",
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

    /// Whether event `e` is Model Exchange's only.
    #[inline]
    pub fn is_indicator_only(e: usize) -> bool {
        is_indicator_only(e % EVENTS)
    }

    /// Event `e` in words: "its relief path's p_low/p_high rises through its laminar ratio".
    pub fn describe(&self, e: usize) -> String {
        let path = self.paths.get(e / EVENTS).map_or("?", |p| p.0);
        format!("its {path} path's {}", describe(e % EVENTS))
    }
}
