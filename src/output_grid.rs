//! The output times of a run (`[solver] output_interval`), shared by the command line and the
//! sensitivity driver: t_start + k·interval for every k ≥ 1 below t_end, then t_end itself.

use crate::time_axis::time_resolution_s;
use crate::units::text::{approx, number};

/// Most output rows one run may write (the start included). The command line keeps no row (each
/// goes to the CSV and the plot as it is produced), so this bounds the run's length and its
/// CSV (10⁶ rows of a network of 300 chambers are about 40 GB of text), not its memory.
pub const MAX_OUTPUT_ROWS: usize = 1_000_000;

/// Relative slack within which t_end/interval counts as a whole number: an interval that
/// divides the span up to round-off (0.01 into 3 s: 300.00000000000006) gives no extra time
/// a few ulp before t_end.
const DIVIDES_SLACK: f64 = 1e-9;

/// The output times after the start, computed from their index (never accumulated).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutputGrid {
    t_start: f64,
    t_end: f64,
    interval: f64,
    /// Output times after the start; the last is t_end.
    n: usize,
}

impl OutputGrid {
    /// The grid of `[solver]` times: `interval` (default: the span / 100) from `t_start` to
    /// `t_end`. An interval that does not divide the span gives every multiple below t_end
    /// and then t_end; one longer than the span gives t_end only. Refused: an empty or
    /// non-finite span, an interval that is not finite and > 0 or that the time axis cannot
    /// resolve, and more than [`MAX_OUTPUT_ROWS`] rows.
    pub fn new(t_start: f64, t_end: f64, interval: Option<f64>) -> Result<OutputGrid, String> {
        let span = t_end - t_start;
        if !(span > 0.0 && span.is_finite()) {
            return Err(format!(
                "the run from t_start = {t_start:?} s to t_end = {t_end:?} s is empty or not finite"
            ));
        }
        let interval = interval.unwrap_or(span / 100.0);
        if !(interval > 0.0 && interval.is_finite()) {
            return Err(format!(
                "[solver] output_interval = {interval:?} s must be finite and > 0"
            ));
        }
        let resolution = time_resolution_s(t_start.abs().max(t_end.abs()));
        if interval < resolution {
            return Err(format!(
                "[solver] output_interval = {} s is below the time axis's resolution {} s \
                 between t = {} s and {} s: output times would repeat",
                number(interval),
                approx(resolution),
                number(t_start),
                number(t_end)
            ));
        }
        let m = span / interval;
        // Compared as floats first: m may exceed any count.
        if m.is_nan() || m >= MAX_OUTPUT_ROWS as f64 {
            return Err(too_many(m, interval));
        }
        let whole = m.round();
        let n = if (m - whole).abs() <= DIVIDES_SLACK * m.max(1.0) {
            whole as usize
        } else {
            // Every multiple below t_end, then t_end.
            m.floor() as usize + 1
        }
        .max(1);
        if n + 1 > MAX_OUTPUT_ROWS {
            return Err(too_many(m, interval));
        }
        Ok(OutputGrid {
            t_start,
            t_end,
            interval,
            n,
        })
    }

    /// Output times after the start (rows are one more, with the start).
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are none (never: a grid has at least t_end).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Output time k, 1 ≤ k ≤ [`Self::len`]; the last is exactly t_end.
    pub fn time(&self, k: usize) -> f64 {
        if k >= self.n {
            self.t_end
        } else {
            self.t_start + k as f64 * self.interval
        }
    }
}

/// The rows an interval that divides the span `m` times gives (the start, every multiple
/// below the end, the end), as a count, or about as many when it is beyond counting exactly.
fn too_many(m: f64, interval: f64) -> String {
    let rows = if m < 1e15 {
        let whole = m.round();
        let times = if (m - whole).abs() <= DIVIDES_SLACK * m.max(1.0) {
            whole
        } else {
            m.floor() + 1.0
        };
        format!("{} output rows", times as u64 + 1)
    } else {
        format!("about {} output rows", approx(m))
    };
    format!(
        "[solver] output_interval = {} s gives {rows}, more than the limit of {MAX_OUTPUT_ROWS}: \
         choose an interval of at least {} s",
        number(interval),
        // Rounded to six digits from above: the interval given is never one row too short.
        approx(m * interval / (MAX_OUTPUT_ROWS - 1) as f64 * (1.0 + 1e-5))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(t0: f64, t1: f64, dt: f64) -> Vec<f64> {
        let g = OutputGrid::new(t0, t1, Some(dt)).unwrap();
        (1..=g.len()).map(|k| g.time(k)).collect()
    }

    /// Against the definition, written out: multiples of the interval strictly below t_end,
    /// then t_end.
    #[test]
    fn the_grid_is_every_multiple_below_the_end_and_the_end() {
        for (t0, t1, dt) in [
            (0.0, 3.0, 0.7),
            (0.0, 0.1, 0.03),
            (0.0, 3.0, 7.0),
            (1.0, 2.0, 0.3),
            (0.0, 3.0, 0.01),
            (0.0, 0.02, 1e-4),
        ] {
            let got = times(t0, t1, dt);
            let mut want: Vec<f64> = (1..)
                .map(|k| t0 + k as f64 * dt)
                .take_while(|&t| t1 - t > DIVIDES_SLACK * dt)
                .collect();
            want.push(t1);
            let last = &got[got.len().saturating_sub(3)..];
            println!(
                "[{t0}, {t1}] by {dt}: {} times, last three {last:?}",
                got.len()
            );
            assert_eq!(got, want, "[{t0}, {t1}] by {dt}");
        }
        assert_eq!(
            times(0.0, 3.0, 0.7),
            [0.7, 1.4, 2.0999999999999996, 2.8, 3.0]
        );
        assert_eq!(times(0.0, 3.0, 7.0), [3.0]);
        assert_eq!(times(0.0, 3.0, 0.01).len(), 300);
    }

    #[test]
    fn too_many_rows_and_unresolvable_intervals_are_refused() {
        for (t0, t1, dt) in [
            (0.0, 3.0, 1e-300),
            (0.0, 3.0, 1e-6),
            (1e15, 1e15 + 3.0, 1e-2),
        ] {
            let e = OutputGrid::new(t0, t1, Some(dt)).unwrap_err();
            println!("[{t0}, {t1}] by {dt}: {e}");
            assert!(e.contains("1000000") || e.contains("resolution"), "{e}");
        }
        assert_eq!(
            OutputGrid::new(0.0, 3.0, Some(4e-6)).unwrap().len(),
            750_000
        );
    }

    /// The refusal counts the rows as the grid would (the start, the multiples, the end), and
    /// the interval it proposes gives at most the limit.
    #[test]
    fn the_refusal_counts_the_rows_and_proposes_an_interval_that_fits() {
        for (t_end, dt, rows) in [
            (1.0, 1e-6, "1000001 output rows"),
            (0.01, 1e-8, "1000001 output rows"),
            (3.0, 1e-6, "3000001 output rows"),
            (1.0, 7e-7, "1428573 output rows"),
        ] {
            let e = OutputGrid::new(0.0, t_end, Some(dt)).unwrap_err();
            println!("[0, {t_end:?}] by {dt:?}: {e}");
            assert!(e.contains(rows) && e.contains("limit of 1000000"), "{e}");
            let proposed: f64 = e
                .rsplit("at least ")
                .next()
                .and_then(|x| x.strip_suffix(" s"))
                .and_then(|x| x.parse().ok())
                .unwrap_or_else(|| panic!("{e}"));
            let grid = OutputGrid::new(0.0, t_end, Some(proposed)).unwrap();
            println!("  {proposed:?} s: {} rows", grid.len() + 1);
            assert!(grid.len() < MAX_OUTPUT_ROWS && grid.len() + 10 >= MAX_OUTPUT_ROWS);
        }
    }
}
