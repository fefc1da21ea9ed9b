//! Model Exchange on the one simulation core: the importer's integrator owns the time and the
//! continuous states (the network's state vector), and the instance evaluates the right-hand
//! side, the event functions, the events and the run-time checks of the same [`Simulation`]
//! that Co-Simulation steps. Nothing here names an FMI version: the `fmi2` and `fmi3` layers
//! call the same functions.
//!
//! - Continuous states: the network's state vector, in its order (chamber m, U, V; piston x, v;
//!   wall swept volumes; inertance valve flows; the two accumulators). Their variables are the
//!   outputs of the same name where there is one, else locals; every state has a derivative
//!   variable `der(<state>)`.
//! - Event indicators: the network's event functions ([`crate::network::Network::event_value`])
//!   but those its structure keeps from ever firing (`Network::reported_events`), +1 while one
//!   cannot fire. An event fires as in the driver's steps, when its function
//!   crosses zero upward between the last accepted point (the end of the last event iteration
//!   or the last completed integrator step) and the point of event mode; a completed step that
//!   finds such a crossing asks for event mode itself. Time events: table breakpoints (a new
//!   segment starts there) and `max_time` while an exit is pending (check 1).
//! - Run-time checks: 4 to 9 after every completed integrator step and every event, reported
//!   as warnings (as after a step of Co-Simulation); 2 and 3 (a state no physics allows) make
//!   every evaluation at that state return a discard, and a completed step there also asks
//!   the importer to terminate: nothing is ever computed from such a state.

use crate::units::text::{approx, number};
use serde::{Deserialize, Serialize};

use super::{
    Call, CallError, Causality, Description, INTEGRATION_CODES, Instance, LogLine, Phase,
    StepReport, StepStatus, Variability, Variable, WARNING_CODES,
};
use crate::checks;
use crate::simulation::{Finish, Simulation};
use crate::variables::{derivative_unit, state_variables};

/// The interface an instance serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    CoSimulation,
    ModelExchange,
}

impl Interface {
    pub fn name(self) -> &'static str {
        match self {
            Interface::CoSimulation => "Co-Simulation",
            Interface::ModelExchange => "Model Exchange",
        }
    }

    /// The phases an instance of this interface can be in (a restored state's must be one).
    fn phases(self) -> &'static [Phase] {
        use Phase::*;
        match self {
            Interface::CoSimulation => &[
                Instantiated,
                InitializationMode,
                StepComplete,
                StepFailed,
                Terminated,
                Error,
            ],
            Interface::ModelExchange => &[
                Instantiated,
                InitializationMode,
                EventMode,
                ContinuousTimeMode,
                Terminated,
                Error,
            ],
        }
    }
}

/// The calling-sequence table of Model Exchange (FMI 2.0.4 and FMI 3.0, §3.2.3): the phases that allow
/// each call. Co-Simulation's own calls are never allowed.
#[inline(never)]
pub(super) fn allowed_in(call: Call) -> &'static [Phase] {
    use Phase::*;
    const ANY: &[Phase] = &[
        Instantiated,
        InitializationMode,
        EventMode,
        ContinuousTimeMode,
        Terminated,
        Error,
    ];
    const READ: &[Phase] = &[
        InitializationMode,
        EventMode,
        ContinuousTimeMode,
        Terminated,
        Error,
    ];
    match call {
        Call::SetDebugLogging | Call::Reset | Call::States => ANY,
        Call::SetupExperiment | Call::EnterInitializationMode => &[Instantiated],
        Call::ExitInitializationMode => &[InitializationMode],
        Call::Terminate | Call::EnterEventMode | Call::SetTime => &[EventMode, ContinuousTimeMode],
        Call::GetValues
        | Call::GetDirectionalDerivative
        | Call::GetEventIndicators
        | Call::GetContinuousStates => READ,
        Call::GetDerivatives => &[EventMode, ContinuousTimeMode, Terminated, Error],
        Call::GetNominals => &[
            Instantiated,
            EventMode,
            ContinuousTimeMode,
            Terminated,
            Error,
        ],
        Call::SetValues => &[
            Instantiated,
            InitializationMode,
            EventMode,
            ContinuousTimeMode,
        ],
        Call::NewDiscreteStates | Call::EnterContinuousTimeMode => &[EventMode],
        Call::CompletedIntegratorStep | Call::SetContinuousStates => &[ContinuousTimeMode],
        Call::SetRealInputDerivatives
        | Call::GetRealOutputDerivatives
        | Call::DoStep
        | Call::CancelStep
        | Call::GetStatus
        | Call::EnterStepMode => &[],
    }
}

/// The continuous states and their derivatives as variables, after the inputs: a state that is
/// an output keeps its output (and gets its nominal value), the others (walls' swept volumes,
/// the accumulators) become locals; then one `der(<state>)` per state. Model Exchange is not
/// offered with `[sensitivities]` (their forward sensitivities are integrated with the states
/// by Plenum's own integrator, which Model Exchange hands over to the master).
pub(super) fn extend_description(d: &mut Description, sim: &Simulation) {
    if !sim.sensitivities.params.is_empty() {
        return;
    }
    let net = &sim.network;
    let n = net.layout.n_states;
    d.model_exchange = true;
    d.event_indicators = net.n_reported_events();
    let nominals = net.state_nominals(&sim.y[..n]);
    let states = state_variables(net);
    let local = |name: String, unit, description: String, derivative_of| Variable {
        name,
        value_reference: 0,
        causality: Causality::Local,
        variability: Variability::Continuous,
        unit,
        description,
        start: None,
        derivative_of,
        nominal: None,
    };
    for (i, s) in states.iter().enumerate() {
        let vr = match s.output {
            Some(k) => k,
            None => {
                let v = &s.variable;
                d.variables.push(local(
                    v.name.clone(),
                    v.unit.clone(),
                    v.description.clone(),
                    None,
                ));
                d.variables.len() - 1
            }
        };
        d.states.push(vr as u32);
        if nominals[i] != 1.0 {
            d.variables[vr].nominal = Some(nominals[i]);
        }
    }
    for (i, s) in states.iter().enumerate() {
        let v = &s.variable;
        d.variables.push(local(
            format!("der({})", v.name),
            derivative_unit(&v.unit),
            format!("time derivative of {}", v.name),
            Some(d.states[i]),
        ));
        d.derivatives.push((d.variables.len() - 1) as u32);
    }
    for (i, v) in d.variables.iter_mut().enumerate() {
        v.value_reference = i as u32;
    }
}

/// Model Exchange's own part of an instance.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The event functions at the last accepted point (`None`: could not fire there).
    before: Vec<Option<f64>>,
    /// Scratch: the event functions now, f, its tangent, a state direction.
    now: Vec<Option<f64>>,
    pub(super) dydt: Vec<f64>,
    pub(super) df: Vec<f64>,
    pub(super) direction: Vec<f64>,
}

/// Model Exchange's part of an FMU state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExchangeSnapshot {
    /// [`Exchange`]'s event functions at the last accepted point.
    before: Vec<Option<f64>>,
}

impl Exchange {
    pub(super) fn new(d: &Description, sim: &Simulation) -> Result<Exchange, String> {
        if !d.model_exchange {
            return Err(
                "Model Exchange is not offered for a model with [sensitivities]: its forward \
                 sensitivities are integrated with the states by Plenum's own integrator; \
                 instantiate it for Co-Simulation"
                    .into(),
            );
        }
        let n = sim.network.layout.n_states;
        let k = sim.network.n_events();
        let mut before = vec![None; k];
        sim.event_values_at_reported(&mut before);
        Ok(Exchange {
            now: before.clone(),
            before,
            dydt: vec![0.0; n],
            df: vec![0.0; n],
            direction: vec![0.0; n],
        })
    }

    pub(super) fn snapshot(&self) -> ExchangeSnapshot {
        ExchangeSnapshot {
            before: self.before.clone(),
        }
    }

    pub(super) fn snapshot_into(&self, s: &mut ExchangeSnapshot) {
        s.before.clone_from(&self.before);
    }

    pub(super) fn restore(&mut self, s: &ExchangeSnapshot) {
        self.before.clone_from(&s.before);
    }
}

/// What a completed integrator step reports.
#[derive(Clone, Debug, PartialEq)]
pub struct CompletedStep {
    /// An event function crossed zero, or a time event passed: the master must enter event
    /// mode.
    pub enter_event_mode: bool,
    pub terminate_simulation: bool,
    pub report: StepReport,
}

/// What one event iteration (FMI 2.0's new discrete states, FMI 3.0's update) reports.
#[derive(Clone, Debug, PartialEq)]
pub struct DiscreteUpdate {
    /// Always false: one iteration handles every event of the instant.
    pub discrete_states_need_update: bool,
    pub terminate_simulation: bool,
    /// Always false: the nominal values are the model's.
    pub nominals_changed: bool,
    /// An event changed a continuous state (an end-stop impact).
    pub values_changed: bool,
    /// The next time event (table breakpoint, `max_time`), if any.
    pub next_event_time: Option<f64>,
    pub report: StepReport,
}

pub(super) fn ok_report() -> StepReport {
    StepReport {
        status: StepStatus::Ok,
        log: Vec::new(),
    }
}

impl Instance {
    /// The interface this instance serves.
    pub fn interface(&self) -> Interface {
        if self.exchange.is_some() {
            Interface::ModelExchange
        } else {
            Interface::CoSimulation
        }
    }

    pub fn is_model_exchange(&self) -> bool {
        self.exchange.is_some()
    }

    /// Number of continuous states (Model Exchange).
    pub fn n_states(&self) -> usize {
        self.description.states.len()
    }

    /// Number of event indicators (Model Exchange).
    pub fn n_event_indicators(&self) -> usize {
        self.description.event_indicators
    }

    pub(super) fn exchange_mut(&mut self) -> Result<&mut Exchange, CallError> {
        self.exchange
            .as_deref_mut()
            .ok_or_else(|| CallError("internal: not a Model Exchange instance".into()))
    }

    /// After initialization: Model Exchange is in Event Mode, with the event
    /// functions of the initial point as the last accepted ones.
    pub(super) fn exchange_exit_initialization(&mut self) {
        if let Some(x) = self.exchange.as_deref_mut() {
            self.phase = Phase::EventMode;
            self.sim.event_values_at_reported(&mut x.before);
        }
    }

    /// The values of local variables (`vr` ≥ the first local) into their places in `out`:
    /// states from the state vector, derivatives from one right-hand side at the current point
    /// (not counted: an output evaluation), into Model Exchange's scratch (a Co-Simulation
    /// instance, whose step loop reads no derivatives, allocates its own).
    #[cold]
    #[inline(never)]
    pub(super) fn fill_locals(&mut self, vrs: &[u32], out: &mut [f64]) {
        let n = self.sim.network.layout.n_states;
        let mut f = match self.exchange.as_deref_mut() {
            Some(x) => std::mem::take(&mut x.dydt),
            None => Vec::new(),
        };
        let mut evaluated = false;
        for (o, &vr) in out.iter_mut().zip(vrs) {
            if (vr as usize) < self.first_local {
                continue;
            }
            let d = &self.description;
            if let Some(i) = d.states.iter().position(|&s| s == vr) {
                *o = self.sim.y[i];
            } else if let Some(i) = d.derivatives.iter().position(|&s| s == vr) {
                if !evaluated {
                    f.resize(n, 0.0);
                    let count = self.sim.network.rhs_evaluations;
                    self.sim.derivatives_at_reported(&mut f);
                    self.sim.network.rhs_evaluations = count;
                    self.sim.stats.rhs_evaluations = count;
                    evaluated = true;
                }
                *o = f[i];
            }
        }
        if let Some(x) = self.exchange.as_deref_mut() {
            x.dydt = f;
        }
    }

    /// A restored state must come from an instance of the same interface, in one of its
    /// phases, and Model Exchange's part must fit the model (one value per event function,
    /// finite).
    pub(super) fn check_snapshot_interface(&self, s: &super::Snapshot) -> Result<(), CallError> {
        let interface = self.interface();
        match (&s.exchange, interface) {
            (Some(_), Interface::CoSimulation) => {
                return Err(CallError(
                    "state was taken by a Model Exchange instance; this instance is \
                     Co-Simulation"
                        .into(),
                ));
            }
            (None, Interface::ModelExchange) => {
                return Err(CallError(
                    "state was taken by a Co-Simulation instance; this instance is Model \
                     Exchange"
                        .into(),
                ));
            }
            _ => {}
        }
        if !interface.phases().contains(&s.phase) {
            return Err(CallError(format!(
                "state does not fit: its phase {} is not a {} phase (corrupted state)",
                s.phase.name(),
                interface.name()
            )));
        }
        if let Some(x) = &s.exchange {
            let k = self.sim.network.n_events();
            if x.before.len() != k {
                return Err(CallError(format!(
                    "state does not fit this model: {} event function values for {k} event \
                     functions",
                    x.before.len()
                )));
            }
            if x.before.iter().flatten().any(|g| !g.is_finite()) {
                return Err(CallError(
                    "state does not fit this model: an event function value is not finite".into(),
                ));
            }
        }
        Ok(())
    }

    /// The part of a state body after the Co-Simulation state (which took `used` bytes):
    /// Model Exchange's part for a Model Exchange instance, nothing for a Co-Simulation one.
    pub(super) fn decode_exchange_part(
        &self,
        body: &[u8],
        used: usize,
    ) -> Result<Option<ExchangeSnapshot>, CallError> {
        let rest = &body[used..];
        if rest.is_empty() && !self.is_model_exchange() {
            return Ok(None);
        }
        let config =
            bincode::config::standard().with_limit::<{ super::snapshot::MAX_STATE_BODY }>();
        let decoded: Result<(ExchangeSnapshot, usize), _> =
            bincode::serde::decode_from_slice(rest, config);
        let trailing = |took: usize| {
            CallError(format!(
                "state body has {} bytes, the state takes {took}",
                body.len()
            ))
        };
        match (self.is_model_exchange(), decoded) {
            (false, Ok((_, n))) if n == rest.len() => Err(CallError(
                "state was taken by a Model Exchange instance; this instance is Co-Simulation"
                    .into(),
            )),
            (false, _) => Err(trailing(used)),
            (true, _) if rest.is_empty() => Err(CallError(
                "state was taken by a Co-Simulation instance; this instance is Model Exchange"
                    .into(),
            )),
            (true, Ok((x, n))) if n == rest.len() => Ok(Some(x)),
            (true, Ok((_, n))) => Err(trailing(used + n)),
            (true, Err(e)) => Err(CallError(format!(
                "state body's Model Exchange part does not decode: {e}"
            ))),
        }
    }

    /// A discard when the current state is one no physics allows (check 2, 3 or 10): nothing
    /// is evaluated there.
    pub(super) fn outside_domain(&self) -> Option<StepReport> {
        let code = self.sim.domain_failure_at_reported()?;
        Some(StepReport {
            status: StepStatus::Discard,
            log: vec![LogLine {
                status: StepStatus::Discard,
                category: "logStatusDiscard",
                text: format!(
                    "run-time check {code}: {} at t = {} s: the state is outside the model's \
                     domain and nothing is evaluated there (a discard: the integrator should take \
                     a smaller step)",
                    checks::describe(code),
                    approx(self.sim.t_s)
                ),
            }],
        })
    }

    fn check_length(&self, what: &str, got: usize, want: usize) -> Result<(), CallError> {
        if got != want {
            return Err(CallError(format!(
                "{what}: {got} values, this model has {want}"
            )));
        }
        Ok(())
    }

    /// Get values with Model Exchange's domain check: outputs and locals are computed from
    /// the state the importer set, so at a state no physics allows they are refused (discard).
    pub fn get_real_checked(
        &mut self,
        vrs: &[u32],
        out: &mut [f64],
    ) -> Result<StepReport, CallError> {
        if self.is_model_exchange() {
            self.require(Call::GetValues)?;
            // `time` (value reference 0) is the one output not computed from the state.
            let computed = vrs.iter().any(|&vr| {
                (vr > 0 && (vr as usize) < self.n_outputs) || (vr as usize) >= self.first_local
            });
            if computed && let Some(r) = self.outside_domain() {
                return Ok(r);
            }
        }
        self.get_real(vrs, out)?;
        Ok(ok_report())
    }

    /// Set the time of the next evaluations (any finite time: an importer's integrator
    /// evaluates before and past its output points).
    pub fn set_time(&mut self, t_s: f64) -> Result<(), CallError> {
        self.require(Call::SetTime)?;
        if !t_s.is_finite() {
            return Err(CallError(format!(
                "time must be finite, got {}",
                number(t_s)
            )));
        }
        self.sim.set_time_from_outside(t_s);
        self.outputs_valid = false;
        Ok(())
    }

    /// Set the continuous states: every value finite, as many as the model has states; on an
    /// error nothing changes.
    pub fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), CallError> {
        self.require(Call::SetContinuousStates)?;
        self.check_length("x[]", x.len(), self.n_states())?;
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(CallError(format!(
                "x[{i}] (`{}`) = {}: states must be finite",
                self.description.variables[self.description.states[i] as usize].name, x[i]
            )));
        }
        self.sim.set_states_from_outside(x);
        self.outputs_valid = false;
        Ok(())
    }

    /// The continuous states.
    pub fn continuous_states(&self, x: &mut [f64]) -> Result<(), CallError> {
        self.require(Call::GetContinuousStates)?;
        self.no_pending_parameters()?;
        self.check_length("x[]", x.len(), self.n_states())?;
        x.copy_from_slice(&self.sim.y[..x.len()]);
        Ok(())
    }

    /// The nominal values of the continuous states: each state's scale at the model's initial state
    /// ([`crate::network::Network::state_nominals`], with the parameters set so far).
    pub fn nominals(&self, out: &mut [f64]) -> Result<(), CallError> {
        self.require(Call::GetNominals)?;
        self.no_pending_parameters()?;
        self.check_length("x_nominal[]", out.len(), self.n_states())?;
        let reference = &self.reference.2;
        let n = out.len();
        out.copy_from_slice(&reference.network.state_nominals(&reference.y[..n]));
        Ok(())
    }

    /// The derivatives of the continuous states: f(t, x) at the time and states set. A discard (nothing written) at
    /// a state no physics allows, or where the right-hand side is not finite.
    pub fn derivatives(&mut self, dx: &mut [f64]) -> Result<StepReport, CallError> {
        self.require(Call::GetDerivatives)?;
        self.check_length("derivatives[]", dx.len(), self.n_states())?;
        if let Some(r) = self.outside_domain() {
            return Ok(r);
        }
        let x = self.exchange.as_deref_mut().expect("Model Exchange");
        self.sim.derivatives_at_reported(&mut x.dydt);
        if let Some(i) = x.dydt.iter().position(|v| !v.is_finite()) {
            let vr = self.description.derivatives[i] as usize;
            return Ok(StepReport {
                status: StepStatus::Discard,
                log: vec![LogLine {
                    status: StepStatus::Discard,
                    category: "logStatusDiscard",
                    text: format!(
                        "`{}` = {} at t = {} s: the right-hand side is not finite at this \
                         state (a discard: the integrator should take a smaller step)",
                        self.description.variables[vr].name,
                        x.dydt[i],
                        approx(self.sim.t_s)
                    ),
                }],
            });
        }
        dx.copy_from_slice(&x.dydt);
        Ok(ok_report())
    }

    /// The event indicators: the network's reported event functions at the time and states
    /// set; +1 for one that cannot fire now (a piston out of its bore, a stop that does not
    /// exist).
    pub fn event_indicators(&mut self, z: &mut [f64]) -> Result<(), CallError> {
        self.require(Call::GetEventIndicators)?;
        self.no_pending_parameters()?;
        self.check_length("eventIndicators[]", z.len(), self.n_event_indicators())?;
        self.fill_event_indicators(z)
    }

    /// The event indicators as FMI 3.0 declares them, variables after the variable table: read
    /// by a get of values wherever one is allowed, in either interface (a Co-Simulation
    /// instance handles its events inside its steps, and evaluates the functions only for
    /// this).
    pub fn event_indicator_values(&mut self, z: &mut [f64]) -> Result<(), CallError> {
        self.require(Call::GetValues)?;
        self.no_pending_parameters()?;
        self.check_length("eventIndicators[]", z.len(), self.n_event_indicators())?;
        self.fill_event_indicators(z)
    }

    /// The event functions at the reported point into `z`, in Model Exchange's scratch (a
    /// Co-Simulation instance, whose steps read none, allocates its own).
    fn fill_event_indicators(&mut self, z: &mut [f64]) -> Result<(), CallError> {
        let mut now = match self.exchange.as_deref_mut() {
            Some(x) => std::mem::take(&mut x.now),
            None => vec![None; self.sim.network.n_events()],
        };
        self.sim.event_values_at_reported(&mut now);
        for (z, &k) in z.iter_mut().zip(self.sim.network.reported_events()) {
            *z = now[k as usize].unwrap_or(1.0);
        }
        if let Some(x) = self.exchange.as_deref_mut() {
            x.now = now;
        }
        Ok(())
    }

    /// A completed integrator step: the importer accepted its step at the current point. The
    /// run-time checks run there as after a step of the driver (warnings 4 to 9; 2 or 3 refuse
    /// the state: discard and terminate); a crossing of an event function or a time event
    /// passed asks for event mode, else the point becomes the last accepted one.
    pub fn completed_integrator_step(&mut self) -> Result<CompletedStep, CallError> {
        self.require(Call::CompletedIntegratorStep)?;
        self.outputs_valid = false;
        if let Some(mut report) = self.outside_domain() {
            if let Some(code) = self.sim.domain_failure_at_reported() {
                self.sim.note_refusal(code);
            }
            report.log[0].text.push_str(
                "; the step must not be accepted: terminateSimulation = true (the last good \
                 state is the master's previous one)",
            );
            return Ok(CompletedStep {
                enter_event_mode: false,
                terminate_simulation: true,
                report,
            });
        }
        self.sim.window.open();
        // `rc` is a discrete output: a code that changes here is shown from the event
        // iteration this step then asks for (FMI 2.0 §3.1: discrete variables change only at
        // events), so the importer sees it at an event, never during integration.
        let rc_shown = self.sim.rc;
        let rc_changed = self.sim.accept_reported_step() != rc_shown;
        self.sim.rc = rc_shown;
        let mut report = ok_report();
        let mut fired = 0u16;
        for c in WARNING_CODES {
            if let Some(tf) = self.sim.window.first_fired_s(c) {
                self.say_check(c, &mut report, || format!("at t = {} s", approx(tf)));
                fired |= 1 << c;
            }
        }
        // An episode of a code ends at the first completed step that does not fire it.
        self.warned = fired;
        let x = self.exchange.as_deref_mut().expect("Model Exchange");
        let enter = self.sim.crossed_since(&x.before) || self.sim.time_event_due() || rc_changed;
        if !enter {
            self.sim.event_values_at_reported(&mut x.before);
        }
        Ok(CompletedStep {
            enter_event_mode: enter,
            terminate_simulation: self.sim.finished.is_some(),
            report,
        })
    }

    /// Say that check `c` fired (`at` says where), once per episode: a check of
    /// [`INTEGRATION_CODES`] measures the importer's integration, so it is a note with status
    /// OK (category `logChecks`, which follows `loggingOn`); another (code 8: a pressure above
    /// the critical one, a property of the state) is a warning, as in Co-Simulation.
    fn say_check(&self, c: u8, report: &mut StepReport, at: impl FnOnce() -> String) {
        let integration = INTEGRATION_CODES.contains(&c);
        let status = match integration {
            true => StepStatus::Ok,
            false => StepStatus::Warning,
        };
        report.status = report.status.max(status);
        if self.warned & (1 << c) != 0 {
            return;
        }
        let (category, text) = match integration {
            true => (
                "logChecks",
                format!(
                    "run-time check {c}: {} ({}): in Model Exchange this measures the \
                     importer's integration, not the model (a tighter tolerance lowers it; the \
                     default experiment's is {:e}); said once until a completed step does not \
                     fire it",
                    checks::describe(c),
                    at(),
                    self.description.tolerance
                ),
            ),
            false => (
                "logStatusWarning",
                format!(
                    "run-time check {c}: {} ({}); not logged again while the following steps \
                     fire it too",
                    checks::describe(c),
                    at()
                ),
            ),
        };
        report.log.push(LogLine {
            status,
            category,
            text,
        });
    }

    /// Enter Event Mode.
    pub fn enter_event_mode(&mut self) -> Result<(), CallError> {
        self.require(Call::EnterEventMode)?;
        self.phase = Phase::EventMode;
        Ok(())
    }

    /// Enter Continuous-Time Mode.
    pub fn enter_continuous_time_mode(&mut self) -> Result<(), CallError> {
        self.require(Call::EnterContinuousTimeMode)?;
        self.phase = Phase::ContinuousTimeMode;
        Ok(())
    }

    /// One event iteration (fmi2NewDiscreteStates, fmi3UpdateDiscreteStates) at the current
    /// point. A table breakpoint reached starts a new segment; every event function that
    /// crossed zero upward since the last accepted point fires (the driver's own handling:
    /// exits, end-stop impacts, flow reversals); check 1 fires at `max_time`; the point
    /// becomes the last accepted one. The run ends (terminateSimulation) once every exit has
    /// passed with `stop_on_exit`, or at check 1.
    pub fn update_discrete_states(&mut self) -> Result<DiscreteUpdate, CallError> {
        self.require(Call::NewDiscreteStates)?;
        self.outputs_valid = false;
        let x = self.exchange.as_deref_mut().expect("Model Exchange");
        let pass = match self.sim.handle_events_at_reported(&x.before) {
            Ok(p) => p,
            Err(fail) => {
                self.phase = Phase::Error;
                return Err(CallError(fail.to_string()));
            }
        };
        self.sim.event_values_at_reported(&mut x.before);
        if !pass.states_changed {
            // The code of the checks at this point, which a completed step may have found
            // changed (after an event that moved a state, the event's own checks set it).
            self.sim.rc = self.sim.warning_code_at_reported();
        }
        let t = self.sim.t_s;
        let mut report = ok_report();
        let mut log = |status, category, text: String| {
            report.status = report.status.max(status);
            report.log.push(LogLine {
                status,
                category,
                text,
            });
        };
        for &k in &pass.events {
            log(
                StepStatus::Ok,
                "logEvents",
                format!(
                    "event at t = {} s: {}",
                    approx(t),
                    self.sim.network.event_description(k)
                ),
            );
        }
        if pass.segment_started {
            log(
                StepStatus::Ok,
                "logEvents",
                format!(
                    "time event at t = {} s: a table breakpoint, a new segment starts",
                    approx(t)
                ),
            );
        }
        match pass.finished {
            Some(Finish::Exited { t_s }) => log(
                StepStatus::Ok,
                "logEvents",
                format!(
                    "the run ends at t = {} s: the projectile has exited and stop_on_exit \
                     is set (terminateSimulation = true)",
                    approx(t_s)
                ),
            ),
            Some(Finish::NeverExited { t_s }) => log(
                StepStatus::Warning,
                "logStatusWarning",
                format!(
                    "run-time check 1: {} by t = {} s; the run ends (terminateSimulation = \
                     true)",
                    checks::describe(checks::NEVER_EXITED),
                    approx(t_s)
                ),
            ),
            None => {}
        }
        for c in WARNING_CODES {
            if self.sim.rc == c && pass.states_changed {
                self.say_check(c, &mut report, || {
                    format!("after the event at t = {} s", approx(t))
                });
                self.warned |= 1 << c;
            }
        }
        let terminate = self.sim.finished.is_some();
        let next_event_time = if terminate {
            None
        } else {
            self.sim.next_time_event()
        };
        Ok(DiscreteUpdate {
            discrete_states_need_update: false,
            terminate_simulation: terminate,
            nominals_changed: false,
            values_changed: pass.states_changed,
            next_event_time,
            report,
        })
    }
}
