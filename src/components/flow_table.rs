//! An orifice's flow as a catalogue curve: the mass flow F_i at pressure ratios
//! r_i = p_down/p_up, measured at one rated inlet state (p_ref, T_ref), interpolated piecewise
//! linearly in r and carried to any other inlet state as the ISO 6358 law carries its own:
//!   ṁ(p_u, T_u, p_d) = F(p_d/p_u) · (p_u/p_ref) · sqrt(T_ref/T_u)
//! ISO 6358-1:2013 writes a component's flow as ṁ = C·p_u·ρ₀·sqrt(T₀/T_u)·φ(r): at a given
//! ratio it is proportional to the inlet pressure and to sqrt(1/T_u), with a shape φ of the
//! ratio alone. A curve measured at one inlet state is C·ρ₀·p_ref·sqrt(T₀/T_ref)·φ(r), so the
//! same similarity gives the flow at every other one. A curve against Δp at one inlet pressure
//! (as some catalogues print it) is that curve with r = 1 − Δp/p_ref.
//!
//! The table starts at r = 0 and ends at (1, 0); its flows do not increase with r. On its last
//! piece the flow is F_{n−2}·(p_u − p_d)/(p_ref·(1 − r_{n−2}))·sqrt(T_ref/T_u), linear in Δp
//! and exactly 0 at equal pressures: Lipschitz through Δp = 0 in either direction, as the ISO
//! law's laminar region. Each piece's p_u·F(r) is written linear in the two pressures, so its
//! derivatives are exact on the piece.
//!
//! Every interior row is a kink (the slope jumps). The kinds' events are a fixed number per
//! component, so a table's breakpoints are two event functions of the pressures, not one per
//! row: h_q (q = 0, 1) is 0 exactly at the interior breakpoints of index parity q, continuous,
//! and changes sign at each of them (on the piece between two of its zeros z_m ≤ r ≤ z_{m+1}
//! it is (−1)^m·min(p_low − z_m·p_high, z_{m+1}·p_high − p_low)). With h_q and −h_q every
//! single crossing of a breakpoint, either way, fires one event; a step that crosses two
//! breakpoints of one parity (four in a row) sees none of them.

use serde::{Deserialize, Serialize};

use crate::ad::{Scalar, c};
use crate::components::NodeState;

/// A flow curve against the pressure ratio at a rated inlet state (validated: at least two
/// rows, ratios increasing from 0 to 1, flows finite, ≥ 0, non-increasing, 0 at ratio 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowTable {
    /// p_down/p_up of each row.
    pub ratios: Vec<f64>,
    /// The mass flow at the rated inlet state at each ratio, kg/s.
    pub flows_kg_per_s: Vec<f64>,
    /// The rated inlet pressure p_ref, Pa absolute.
    pub inlet_pressure_pa: f64,
    /// The rated inlet temperature T_ref, K.
    pub inlet_temperature_k: f64,
}

/// What is wrong with a table's rows `[ratio, flow]`, naming the row (1-based, as a reader
/// counts them): `None` if it is a valid curve. Flows' own rule (finite, ≥ 0) is the key's.
pub fn table_problem(rows: &[[f64; 2]]) -> Option<String> {
    if rows.len() < 2 {
        return Some(format!(
            "a flow table needs at least two rows [ratio, flow], from ratio 0 to (1, 0); it has \
             {}",
            rows.len()
        ));
    }
    for (i, row) in rows.iter().enumerate() {
        let [r, f] = *row;
        let n = i + 1;
        if !r.is_finite() || !f.is_finite() {
            return Some(format!("row {n}: ratio and flow must be finite numbers"));
        }
        if !(0.0..=1.0).contains(&r) {
            return Some(format!(
                "row {n}: the ratio p_down/p_up must be between 0 and 1 ({r})"
            ));
        }
        if i > 0 {
            let [r0, f0] = rows[i - 1];
            if r <= r0 {
                return Some(format!(
                    "row {n}: ratios must increase row by row ({r} after {r0})"
                ));
            }
            if f > f0 {
                // To ten digits: a flow converted from "Nl/min" shows no conversion's ulps.
                let short = |x: f64| format!("{x:.9e}").parse::<f64>().unwrap_or(x);
                return Some(format!(
                    "row {n}: the flow must not increase with the ratio ({} kg/s after {} \
                     kg/s): it falls as the outlet pressure nears the inlet's",
                    short(f),
                    short(f0)
                ));
            }
        }
    }
    if rows[0][0] != 0.0 {
        return Some(format!(
            "row 1: the table must start at ratio 0 (it starts at {}): give the choked flow \
             there",
            rows[0][0]
        ));
    }
    let [r, f] = rows[rows.len() - 1];
    if r != 1.0 || f != 0.0 {
        return Some(format!(
            "row {}: the table must end at ratio 1 with flow 0 (no flow at equal pressures); \
             it ends at [{r}, {f}]",
            rows.len()
        ));
    }
    None
}

impl FlowTable {
    /// From validated rows `[ratio, flow kg/s]`.
    pub fn new(rows: &[[f64; 2]], inlet_pressure_pa: f64, inlet_temperature_k: f64) -> Self {
        debug_assert!(table_problem(rows).is_none());
        FlowTable {
            ratios: rows.iter().map(|r| r[0]).collect(),
            flows_kg_per_s: rows.iter().map(|r| r[1]).collect(),
            inlet_pressure_pa,
            inlet_temperature_k,
        }
    }

    /// Mass flow from an upstream state to a downstream pressure p_d ≤ p_u, kg/s (≥ 0).
    #[inline]
    pub fn mass_flow_kg_per_s<T: Scalar>(&self, p_up_pa: T, t_up_k: T, p_down_pa: T) -> T {
        let (rs, fs) = (&self.ratios, &self.flows_kg_per_s);
        let n = rs.len();
        debug_assert!(n >= 2 && fs.len() == n);
        let (pu, pd) = (p_up_pa.re(), p_down_pa.re());
        // The piece k (r_k ≤ r ≤ r_{k+1}): the interior breakpoints at or below r, decided in
        // the pressures' form r_k·p_u ≤ p_d, as the event functions write it.
        let k = rs[1..n - 1].partition_point(|&rk| rk * pu <= pd);
        let (r0, r1, f0, f1) = (rs[k], rs[k + 1], fs[k], fs[k + 1]);
        let pu_f = if k + 2 == n {
            // Ends at (1, 0): p_u·F(r) = F_k·(p_u − p_d)/(1 − r_k), exactly 0 at equal pressures.
            (p_up_pa - p_down_pa) * (f0 / (1.0 - r0))
        } else {
            // p_u·F(r) = [F_k·(r_{k+1}·p_u − p_d) + F_{k+1}·(p_d − r_k·p_u)]/(r_{k+1} − r_k).
            let span = r1 - r0;
            (p_up_pa * r1 - p_down_pa) * (f0 / span) + (p_down_pa - p_up_pa * r0) * (f1 / span)
        };
        pu_f / self.inlet_pressure_pa * (c::<T>(self.inlet_temperature_k) / t_up_k).sqrt()
    }

    /// Signed flow from `from` to `to` (negative when it runs the other way), kg/s: the upstream
    /// node is the one at the higher pressure.
    #[inline]
    pub fn signed_mass_flow_kg_per_s<T: Scalar>(&self, from: NodeState<T>, to: NodeState<T>) -> T {
        if from.pressure_pa.re() >= to.pressure_pa.re() {
            self.mass_flow_kg_per_s(from.pressure_pa, from.temperature_k, to.pressure_pa)
        } else {
            -self.mass_flow_kg_per_s(to.pressure_pa, to.temperature_k, from.pressure_pa)
        }
    }

    /// The ratio up to which the flow is choked: the end of the table's leading run of equal
    /// flows (`None` if the second row already flows less).
    pub fn choked_ratio(&self) -> Option<f64> {
        let f0 = self.flows_kg_per_s[0];
        let run = self.flows_kg_per_s.iter().take_while(|&&f| f == f0).count();
        // The last row's flow is 0: a table of zeros is closed, never choked.
        (run >= 2 && f0 > 0.0).then(|| self.ratios[run - 1])
    }

    /// Event function h_q (q = 0, 1) at the pair's higher and lower pressures, with its
    /// gradient (∂h/∂p_high, ∂h/∂p_low): `None` if the table has no interior breakpoint of
    /// parity q. See the module's notes.
    pub fn breakpoint_event(&self, q: usize, p_high: f64, p_low: f64) -> Option<[f64; 3]> {
        let n = self.ratios.len();
        let mut zeros = self.ratios[..n - 1]
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(k, _)| k % 2 == q % 2)
            .map(|(_, &z)| z);
        // m zeros at or below r, the last of them `left`, the next one `right`.
        let (mut m, mut left, mut right) = (0usize, None, None);
        for z in zeros.by_ref() {
            if z * p_high <= p_low {
                m += 1;
                left = Some(z);
            } else {
                right = Some(z);
                break;
            }
        }
        let from_left = left.map(|z| [p_low - z * p_high, -z, 1.0]);
        let to_right = right.map(|z| [z * p_high - p_low, z, -1.0]);
        let near = match (from_left, to_right) {
            (Some(a), Some(b)) => {
                if a[0] <= b[0] {
                    a
                } else {
                    b
                }
            }
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return None,
        };
        let sign = if m % 2 == 0 { 1.0 } else { -1.0 };
        Some(near.map(|x| sign * x))
    }

    /// The number of interior breakpoints of parity q (tests, descriptions).
    pub fn breakpoints_of_parity(&self, q: usize) -> usize {
        (1..self.ratios.len() - 1)
            .filter(|k| k % 2 == q % 2)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> FlowTable {
        FlowTable::new(
            &[[0.0, 2.0], [0.3, 2.0], [0.6, 1.5], [0.9, 0.8], [1.0, 0.0]],
            6e5,
            293.15,
        )
    }

    /// At the rated inlet state the law returns the rows and interpolates linearly between
    /// them; at twice the inlet pressure and the same ratio, twice the flow.
    #[test]
    fn rows_are_returned_at_the_rated_state_and_scale_with_inlet_pressure() {
        let t = table();
        for (r, want) in [
            (0.0, 2.0),
            (0.15, 2.0),
            (0.45, 1.75),
            (0.6, 1.5),
            (0.95, 0.4),
        ] {
            let got = t.mass_flow_kg_per_s(6e5, 293.15, r * 6e5);
            let twice = t.mass_flow_kg_per_s(12e5, 293.15, r * 12e5);
            println!("r = {r}: {got} (want {want}), at 2 p_ref {twice}");
            assert!((got - want).abs() < 1e-14 * want.max(1.0));
            assert!((twice - 2.0 * want).abs() < 1e-13);
        }
        assert_eq!(t.mass_flow_kg_per_s(6e5, 293.15, 6e5), 0.0);
        let hot = t.mass_flow_kg_per_s(6e5, 4.0 * 293.15, 0.0);
        assert!((hot - 1.0).abs() < 1e-14, "{hot}");
        assert_eq!(t.choked_ratio(), Some(0.3));
    }

    /// Each h_q is 0 at its breakpoints only and flips sign at each; h_0 and h_1 together
    /// change sign at every interior breakpoint.
    #[test]
    fn breakpoint_events_flip_sign_at_their_breakpoints() {
        let t = table();
        let p_high = 1e5;
        let sign = |q: usize, r: f64| t.breakpoint_event(q, p_high, r * p_high).unwrap()[0];
        for (k, &z) in t.ratios.iter().enumerate().take(4).skip(1) {
            let q = k % 2;
            let (below, above) = (sign(q, z - 1e-6), sign(q, z + 1e-6));
            let other = (sign(1 - q, z - 1e-6), sign(1 - q, z + 1e-6));
            println!("breakpoint {z}: h_{q} {below:e} -> {above:e}, other {other:?}");
            assert!(below * above < 0.0);
            assert!(other.0 * other.1 > 0.0);
            assert!(sign(q, z).abs() < 1e-9);
        }
    }
}
