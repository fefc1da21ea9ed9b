//! The progress bar of `plenum run`: simulated time over the run's span, on stderr.
//!
//! Shown only when stderr is a terminal, without `--quiet`, and once the run has lasted
//! [`SHOW_AFTER_S`]: a short run prints nothing. Updated from the output points only (at most
//! every [`UPDATE_EVERY_S`]), so the step loop neither allocates nor slows down because of it.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A run shorter than this shows no bar, s.
const SHOW_AFTER_S: f64 = 1.0;
/// Bar updates are at least this far apart, s.
const UPDATE_EVERY_S: f64 = 0.1;
/// Resolution of the bar: permille of the simulated span.
const TICKS: u64 = 1000;

pub struct Progress {
    enabled: bool,
    started: Instant,
    last_update: Instant,
    show_after: Duration,
    t_start_s: f64,
    span_s: f64,
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(t_start_s: f64, t_end_s: f64, quiet: bool) -> Self {
        // `PLENUM_PROGRESS_AFTER_S` shortens the delay, for the test that runs under a terminal.
        let show_after_s = std::env::var("PLENUM_PROGRESS_AFTER_S")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(SHOW_AFTER_S);
        let now = Instant::now();
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            started: now,
            last_update: now,
            show_after: Duration::from_secs_f64(show_after_s),
            t_start_s,
            span_s: t_end_s - t_start_s,
            bar: None,
        }
    }

    /// The simulation has reached `t_s`.
    pub fn update(&mut self, t_s: f64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if self.bar.is_none() {
            if now.duration_since(self.started) < self.show_after {
                return;
            }
            let bar = ProgressBar::with_draw_target(Some(TICKS), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "simulating {bar:40} {percent:>3}% of the time span, {elapsed} elapsed, ~{eta} left",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            self.bar = Some(bar);
        } else if now.duration_since(self.last_update).as_secs_f64() < UPDATE_EVERY_S {
            return;
        }
        self.last_update = now;
        if let Some(bar) = &self.bar {
            let fraction = if self.span_s > 0.0 {
                ((t_s - self.t_start_s) / self.span_s).clamp(0.0, 1.0)
            } else {
                1.0
            };
            bar.set_position((fraction * TICKS as f64).round() as u64);
        }
    }

    /// Remove the bar (the summary follows on stdout).
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
