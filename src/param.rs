//! Scalar parameters that are either constant or a table over time.
//!
//! A step table holds each value from its time on; a linear table interpolates between its
//! points and holds the end values outside them. Every table time is a breakpoint: the
//! simulation stops there and restarts its integrator, and the right-hand side of one segment
//! evaluates the table *as it is on that segment* (see [`Param::value`]), so the value at a step
//! instant itself never enters the solution.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interpolation {
    Step,
    Linear,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub times_s: Vec<f64>,
    pub values: Vec<f64>,
    pub interpolation: Interpolation,
}

/// BlasterSim's cubic opening curve: 0 before `t_open_s`, 3s² − 2s³ with
/// s = (t − t_open)/duration during the opening, 1 after (a C¹ smoothstep).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cubic {
    pub t_open_s: f64,
    pub duration_s: f64,
}

impl Cubic {
    #[inline]
    pub fn value(&self, t: f64) -> f64 {
        let s = ((t - self.t_open_s) / self.duration_s).clamp(0.0, 1.0);
        s * s * (3.0 - 2.0 * s)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Param {
    Const(f64),
    Table(Table),
    /// A 0 → 1 cubic ramp (valve openings); breakpoints at both of its ends.
    Cubic(Cubic),
}

impl From<f64> for Param {
    fn from(v: f64) -> Self {
        Param::Const(v)
    }
}

impl Table {
    /// Index of the segment that starts at or before `t`: the largest i with times[i] ≤ t, or
    /// `None` before the first time.
    fn segment(&self, t: f64) -> Option<usize> {
        // Tables are short; a partition point is branch-light and allocation-free.
        let n = self.times_s.partition_point(|&ti| ti <= t);
        n.checked_sub(1)
    }
}

impl Param {
    /// The value at time `t` on the integration segment that began at `segment_start_s`.
    ///
    /// For step tables the value is the one in force at the segment start, so an RK stage that
    /// lands exactly on the next step time still sees the old value. Linear tables interpolate
    /// on the piece that contains the segment start (breakpoints at every knot keep `t` inside it).
    #[inline]
    pub fn value(&self, t: f64, segment_start_s: f64) -> f64 {
        match self {
            Param::Const(v) => *v,
            Param::Table(tab) => {
                let seg = tab.segment(segment_start_s);
                match tab.interpolation {
                    Interpolation::Step => match seg {
                        Some(i) => tab.values[i],
                        None => tab.values[0],
                    },
                    Interpolation::Linear => match seg {
                        None => tab.values[0],
                        Some(i) if i + 1 >= tab.times_s.len() => tab.values[i],
                        Some(i) => {
                            let (t0, t1) = (tab.times_s[i], tab.times_s[i + 1]);
                            let (v0, v1) = (tab.values[i], tab.values[i + 1]);
                            v0 + (v1 - v0) * (t - t0) / (t1 - t0)
                        }
                    },
                }
            }
            // Breakpoints at both ends keep a segment on one piece: the segment start decides
            // which one, so a stage landing on an end still uses the piece it started on.
            Param::Cubic(c) => {
                if segment_start_s < c.t_open_s {
                    0.0
                } else if segment_start_s >= c.t_open_s + c.duration_s {
                    1.0
                } else {
                    c.value(t)
                }
            }
        }
    }

    /// The value at an instant as a user reads the table (right-continuous at steps).
    pub fn value_at(&self, t: f64) -> f64 {
        self.value(t, t)
    }

    /// The first table time strictly after `t`, if any: the next integration breakpoint.
    pub fn next_breakpoint_after(&self, t: f64) -> Option<f64> {
        match self {
            Param::Const(_) => None,
            Param::Table(tab) => {
                let i = tab.times_s.partition_point(|&ti| ti <= t);
                tab.times_s.get(i).copied()
            }
            Param::Cubic(c) => {
                let end = c.t_open_s + c.duration_s;
                if t < c.t_open_s {
                    Some(c.t_open_s)
                } else if t < end {
                    Some(end)
                } else {
                    None
                }
            }
        }
    }

    pub fn is_constant(&self) -> bool {
        matches!(self, Param::Const(_))
    }

    /// The constant value, or the first table value.
    pub fn initial(&self) -> f64 {
        match self {
            Param::Const(v) => *v,
            Param::Table(t) => t.values[0],
            Param::Cubic(_) => 0.0,
        }
    }

    /// Every value the parameter can take (for validation).
    pub fn all_values(&self) -> &[f64] {
        match self {
            Param::Const(v) => std::slice::from_ref(v),
            Param::Table(t) => &t.values,
            Param::Cubic(_) => &[0.0, 1.0],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(interp: Interpolation) -> Param {
        Param::Table(Table {
            times_s: vec![0.1, 0.4],
            values: vec![2000.0, 0.0],
            interpolation: interp,
        })
    }

    #[test]
    fn step_table_holds_segment_value_up_to_the_step_instant() {
        let p = table(Interpolation::Step);
        assert_eq!(p.value_at(0.0), 2000.0); // before the first time: first value
        assert_eq!(p.value_at(0.1), 2000.0);
        assert_eq!(p.value_at(0.4), 0.0); // right-continuous
        // On the segment [0.1, 0.4] the instant 0.4 still sees the old value.
        assert_eq!(p.value(0.4, 0.1), 2000.0);
        assert_eq!(p.next_breakpoint_after(0.0), Some(0.1));
        assert_eq!(p.next_breakpoint_after(0.1), Some(0.4));
        assert_eq!(p.next_breakpoint_after(0.4), None);
    }

    #[test]
    fn linear_table_interpolates_and_holds_ends() {
        let p = table(Interpolation::Linear);
        assert_eq!(p.value_at(0.0), 2000.0);
        assert!((p.value_at(0.25) - 1000.0).abs() < 1e-9);
        assert_eq!(p.value_at(1.0), 0.0);
    }
}
