//! Stepping (Co-Simulation): one communication step, and the status queries about the run.

use super::{Call, CallError, Instance, LogLine, Phase, StepReport, StepStatus, WARNING_CODES};
use crate::checks;
use crate::simulation::{Advance, Finish, StepFailure};
use crate::units::text::{approx, number};

impl Instance {
    /// One communication step from `current_s` over `h_s` (docs/fmu.md, "Behaviour";
    /// docs/checks.md).
    pub fn do_step(&mut self, current_s: f64, h_s: f64) -> Result<StepReport, CallError> {
        self.require(Call::DoStep)?;
        let t = self.sim.t_s;
        if !current_s.is_finite() {
            return Err(CallError(format!(
                "currentCommunicationPoint must be finite, got {}",
                number(current_s)
            )));
        }
        // FMI 2.0.4 §4.2.2 (and FMI 3.0 for fmi3DoStep): communicationStepSize must be > 0; an error
        // says the communication step could not be carried out at all. A step of 0 (or −0,
        // NaN, negative) is refused, so a master that does not advance its clock gets an error
        // instead of success forever.
        if !(h_s > 0.0 && h_s.is_finite()) {
            return Err(CallError(format!(
                "communicationStepSize must be finite and > 0, got {}",
                number(h_s)
            )));
        }
        let tol = 1e-12 * t.abs().max(1.0);
        if (current_s - t).abs() > tol {
            return Err(CallError(format!(
                "currentCommunicationPoint = {} s is not the FMU's time {} s (tolerance {tol:e} s)",
                number(current_s),
                number(t)
            )));
        }
        let target = current_s + h_s;
        if !target.is_finite() {
            return Err(CallError(format!(
                "the step from {} s over {} s ends at a non-finite time",
                number(current_s),
                number(h_s)
            )));
        }
        // A master that steps its clock by repeated addition ends a run with a step far below
        // the time axis's resolution (100·ε·|t|) whenever its sum falls just short of the stop
        // time: such a step still moves time and lands exactly on current + h. Only a step
        // that cannot move time at all is refused.
        if target <= current_s.max(t) {
            return Err(CallError(format!(
                "communicationStepSize = {h_s:e} s does not move the time {} s (it is below \
                 half the spacing of floating-point numbers there)",
                number(current_s)
            )));
        }
        // A fixed-step method's work is bounded per call as the adaptive methods' is: refused
        // before any step, with nothing changed.
        self.sim.fixed_step_work(target).map_err(CallError)?;
        if let Some(stop) = self.stop_time_s {
            if target > stop + 1e-12 * stop.abs().max(1.0) {
                return Err(CallError(format!(
                    "a step to t = {} s passes the stop time {} s of the experiment",
                    number(target),
                    number(stop)
                )));
            }
        }
        let mut report = StepReport {
            status: StepStatus::Ok,
            log: Vec::new(),
        };
        self.outputs_valid = false;

        // Which warning codes fire inside this step, and when first (the run's own record of
        // first firings is kept as it is).
        self.sim.window.open();
        let outcome = self.advance(target, &mut report);
        let mut warned = 0u16;
        for c in WARNING_CODES {
            if let Some(tf) = self.sim.window.first_fired_s(c) {
                report.status = report.status.max(StepStatus::Warning);
                let bit = 1u16 << c;
                warned |= bit;
                // Logged once per episode: a code that fired in the previous step too is
                // still a warning, without another line.
                if self.warned & bit == 0 {
                    report.log.push(LogLine {
                        status: StepStatus::Warning,
                        category: "logStatusWarning",
                        text: format!(
                            "run-time check {c}: {} (at t = {} s in the step from {} s; not \
                             logged again while the following steps fire it too)",
                            checks::describe(c),
                            approx(tf),
                            number(current_s)
                        ),
                    });
                }
            }
        }
        self.warned = warned;
        match outcome {
            Ok(None) => Ok(report),
            Ok(Some(finish)) => {
                let text = match finish {
                    Finish::Exited { t_s } => format!(
                        "the run ends at t = {} s: the projectile has exited and \
                         stop_on_exit is set (the simulation is terminated)",
                        approx(t_s)
                    ),
                    Finish::NeverExited { t_s } => format!(
                        "run-time check 1: {} by t = {} s; the run ends (the simulation \
                         is terminated)",
                        checks::describe(checks::NEVER_EXITED),
                        approx(t_s)
                    ),
                };
                report.status = StepStatus::Discard;
                report.log.push(LogLine {
                    status: StepStatus::Discard,
                    category: "logEvents",
                    text,
                });
                self.phase = Phase::StepFailed;
                Ok(report)
            }
            Err(fail)
                if matches!(
                    fail.code,
                    checks::NEGATIVE_MASS | checks::NEGATIVE_TEMPERATURE | checks::IMPOSSIBLE_STATE
                ) =>
            {
                report.status = StepStatus::Discard;
                report.log.push(LogLine {
                    status: StepStatus::Discard,
                    category: "logStatusDiscard",
                    text: format!(
                        "{fail}; the last successful time is {} s",
                        approx(self.sim.t_s)
                    ),
                });
                self.phase = Phase::StepFailed;
                Ok(report)
            }
            Err(fail) => {
                self.phase = Phase::Error;
                Err(CallError(fail.to_string()))
            }
        }
    }

    /// Advance to `target`, going on past piston exits; `Some(finish)` when the run ended.
    fn advance(
        &mut self,
        target: f64,
        report: &mut StepReport,
    ) -> Result<Option<Finish>, StepFailure> {
        loop {
            match self.sim.advance_to(target)? {
                Advance::Reached => return Ok(None),
                Advance::Finished(f) => return Ok(Some(f)),
                Advance::Exit { piston, t_s } => {
                    let name = self
                        .sim
                        .network
                        .pistons()
                        .get(piston)
                        .map_or("?", |p| p.name.as_str());
                    report.log.push(LogLine {
                        status: StepStatus::Ok,
                        category: "logEvents",
                        text: format!("event: `{name}` passed its exit at t = {} s", approx(t_s)),
                    });
                }
            }
        }
    }

    /// The last successful time (FMI 2.0's status, FMI 3.0's step result): the state is always
    /// kept at the last good time, so this is the current time.
    pub fn last_successful_time(&self) -> Result<f64, CallError> {
        self.require(Call::GetStatus)?;
        Ok(self.sim.t_s)
    }

    /// Whether the run has ended (exit with stop_on_exit, or check 1): FMI 2.0's terminated
    /// status, FMI 3.0's `terminateSimulation`.
    pub fn terminated(&self) -> Result<bool, CallError> {
        self.require(Call::GetStatus)?;
        Ok(self.sim.finished.is_some())
    }
}
