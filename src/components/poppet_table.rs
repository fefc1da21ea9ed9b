//! A check or relief valve's opening as a catalogue curve: rows [Δp_i, x_i] of the
//! pressure-actuated opening x against Δp = p_from − p_to, interpolated piecewise linearly:
//!   x = 0 for Δp ≤ Δp_0,  x_k + (x_{k+1} − x_k)·(Δp − Δp_k)/(Δp_{k+1} − Δp_k) between rows,
//!   1 for Δp ≥ Δp_{n−1}
//! (x_0 = 0 and x_{n−1} = 1, validated). Two rows [Δp_c, 0], [Δp_f, 1] are the linear poppet
//! of `crate::components::orifice::Poppet`, to the bit: on its one piece the interpolation is
//! 0 + 1·(Δp − Δp_c)/(Δp_f − Δp_c).
//!
//! Every row is a kink (the slope jumps). The kind's events are a fixed number per component,
//! so the rows are two event functions of Δp in the linear poppet's two slots, not one per
//! row: h_q (q = 0, 1) is 0 exactly at the rows of index parity q, continuous, and changes sign
//! at each of them (with m of its zeros at or below Δp, the last z_m and the next z_{m+1}, it
//! is (−1)^(m+1)·min(Δp − z_m, z_{m+1} − Δp), taking the one that exists at the ends). With a
//! single zero it is Δp − z, the linear poppet's own event function. With h_q and −h_q every
//! single crossing of a row, either way, fires one event; a step that crosses two rows of one
//! parity (three rows in a row) sees neither of them, as a flow table's breakpoints.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};

/// A poppet's opening curve against Δp (validated: at least two rows, Δp strictly
/// increasing, openings non-decreasing from 0 to 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoppetTable {
    /// Δp = p_from − p_to of each row, Pa.
    pub points_pa: Vec<f64>,
    /// The opening at each row, 0..1.
    pub openings: Vec<f64>,
}

/// What is wrong with a table's rows `[Δp Pa, opening]`, naming the row (1-based): `None` if
/// it is a valid curve. Cells' own rules (finite Δp, openings 0..1) are the key's.
pub fn table_problem(rows: &[[f64; 2]]) -> Option<String> {
    if rows.len() < 2 {
        return Some(format!(
            "a poppet table needs at least two rows [Δp, opening], from opening 0 to opening 1; \
             it has {}",
            rows.len()
        ));
    }
    for (i, w) in rows.windows(2).enumerate() {
        let ([p0, x0], [p1, x1]) = (w[0], w[1]);
        if p1 <= p0 {
            return Some(format!(
                "row {}: the pressure difference must increase row by row ({p1} Pa after {p0} \
                 Pa)",
                i + 2
            ));
        }
        if x1 < x0 {
            return Some(format!(
                "row {}: the opening must not decrease as the pressure difference rises ({x1} \
                 after {x0})",
                i + 2
            ));
        }
    }
    if rows[0][1] != 0.0 {
        return Some(format!(
            "row 1: the table must start at opening 0 (the cracking pressure, closed at and \
             below it); it starts at {}",
            rows[0][1]
        ));
    }
    let n = rows.len();
    if rows[n - 1][1] != 1.0 {
        return Some(format!(
            "row {n}: the table must end at opening 1 (fully open from there on); it ends at {}",
            rows[n - 1][1]
        ));
    }
    None
}

impl PoppetTable {
    /// From validated rows `[Δp Pa, opening]`.
    pub fn new(rows: &[[f64; 2]]) -> Self {
        debug_assert!(table_problem(rows).is_none());
        PoppetTable {
            points_pa: rows.iter().map(|r| r[0]).collect(),
            openings: rows.iter().map(|r| r[1]).collect(),
        }
    }

    /// The opening at Δp = p_from − p_to, 0..1: exactly 0 up to the first row.
    #[inline]
    pub fn opening<T: Scalar>(&self, dp_pa: T) -> T {
        let (ps, xs) = (&self.points_pa, &self.openings);
        let n = ps.len();
        debug_assert!(n >= 2 && xs.len() == n);
        let dp = dp_pa.re();
        if dp <= ps[0] {
            return T::zero();
        }
        if dp >= ps[n - 1] {
            return c(1.0);
        }
        // The piece k (Δp_k < Δp < Δp_{k+1}): the interior rows at or below Δp.
        let k = ps[1..n - 1].partition_point(|&p| p <= dp);
        let (p0, p1, x0, x1) = (ps[k], ps[k + 1], xs[k], xs[k + 1]);
        // p0 < Δp < p1 here, so the span is positive.
        (dp_pa - p0) / (p1 - p0) * (x1 - x0) + x0
    }

    /// Event function h_q (q = 0, 1) at Δp, Pa: `None` if the table has no row of parity q.
    /// Its gradient in Δp is ±1 ([`Self::event_slope`]). See the module's notes.
    pub fn event_value(&self, q: usize, dp_pa: f64) -> Option<f64> {
        self.event(q, dp_pa).map(|(h, _)| h)
    }

    /// ∂h_q/∂Δp at Δp: ±1 (0 without a row of parity q).
    pub fn event_slope(&self, q: usize, dp_pa: f64) -> f64 {
        self.event(q, dp_pa).map_or(0.0, |(_, s)| s)
    }

    fn event(&self, q: usize, dp: f64) -> Option<(f64, f64)> {
        let zeros = self
            .points_pa
            .iter()
            .enumerate()
            .filter(|(k, _)| k % 2 == q % 2)
            .map(|(_, &z)| z);
        let (mut m, mut left, mut right) = (0usize, None, None);
        for z in zeros {
            if z <= dp {
                m += 1;
                left = Some(z);
            } else {
                right = Some(z);
                break;
            }
        }
        let from_left = left.map(|z| (dp - z, 1.0));
        let to_right = right.map(|z| (z - dp, -1.0));
        let near = match (from_left, to_right) {
            (Some(a), Some(b)) => {
                if a.0 <= b.0 {
                    a
                } else {
                    b
                }
            }
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return None,
        };
        let sign = if m % 2 == 1 { 1.0 } else { -1.0 };
        Some((sign * near.0, sign * near.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> PoppetTable {
        PoppetTable::new(&[[1e5, 0.0], [1.5e5, 0.2], [2e5, 0.9], [3e5, 1.0]])
    }

    /// The rows are returned, the pieces interpolated, closed at and below the first row.
    #[test]
    fn rows_are_returned_and_pieces_interpolated() {
        let t = table();
        for (dp, want) in [
            (0.0, 0.0),
            (1e5, 0.0),
            (1.25e5, 0.1),
            (1.5e5, 0.2),
            (1.75e5, 0.55),
            (2.5e5, 0.95),
            (3e5, 1.0),
            (9e5, 1.0),
        ] {
            let got: f64 = t.opening(dp);
            println!("Δp = {dp}: {got} (want {want})");
            assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        }
    }

    /// h_0 and h_1 together change sign at every row, each at its own parity's only; one zero
    /// is the linear poppet's Δp − z.
    #[test]
    fn events_flip_sign_at_their_rows() {
        let t = table();
        for (k, &z) in t.points_pa.iter().enumerate() {
            let q = k % 2;
            let h = |q, dp| t.event_value(q, dp).unwrap();
            let (below, above) = (h(q, z - 1.0), h(q, z + 1.0));
            let other = (h(1 - q, z - 1.0), h(1 - q, z + 1.0));
            println!("row {z}: h_{q} {below} -> {above}, other {other:?}");
            assert!(below < 0.0 && above > 0.0 || below > 0.0 && above < 0.0);
            assert!(other.0 * other.1 > 0.0);
        }
        let two = PoppetTable::new(&[[1e5, 0.0], [3e5, 1.0]]);
        for dp in [0.0, 0.9e5, 1.1e5, 2e5, 3.5e5] {
            assert_eq!(two.event_value(0, dp), Some(dp - 1e5));
            assert_eq!(two.event_value(1, dp), Some(dp - 3e5));
        }
    }
}
