"""FMI 2.0 Model Exchange through a real importer: FMPy integrates the FMU's continuous states
with its own solvers (CVODE's BDF, or its fixed-step forward Euler), locates the state events
on the event indicators and handles the time events the FMU announces; the same .fmu carries
Co-Simulation (docs/fmu.md, "Model Exchange"). Run as compliance-tests/python/test_fmpy.py
says (its helpers and fixtures are reused; the Cantera networks of compliance-tests/peers are
packaged the way its variants are).

The truths: the Co-Simulation results of the same model (the CLI's CSV, which FMPy's
Co-Simulation reproduces bit for bit: test_fmpy.py), BlasterSim's closed form of the
projectile's exit velocity (test_sensitivities.py's `exact_exit`), and, for Euler, its order 1.
"""

import math
import tomllib
from ctypes import POINTER, c_double
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import (
    FMU2Model,
    fmi2CallbackFunctions,
    fmi2CallbackLoggerTYPE,
)
import fmi_master
import test_fmpy as base
import test_sensitivities as sens
from test_fmpy import library, slaves, workdir  # noqa: F401 (pytest fixtures)

ME_RTOL = 1e-10  # CVODE's relative tolerance (FMPy: absolute = relative · nominal)
REL_TOL_ME = 1e-7  # ME against CS, relative to each variable's scale
PEER_MODELS = sorted((base.ROOT / "compliance-tests" / "peers" / "models").glob("cantera_*.toml"))
# The events the shipped models lack: CircAdapt's valve (examples/: an inertance valve's flow
# reversals, a step table), and a piston bouncing on its end stop (the impact map v → −e·v with
# x on the stop, twice in 40 ms: on this undamped oscillator CVODE's global error grows with
# each period, 9e-8 of scale after three impacts at rtol 1e-10).
BOUNCER_MODEL = """
[model]
name = "bouncer"
description = "A gas-driven piston on a spring, bouncing on its end stop"

[gas]
species = "air"

[solver]
method = "rk4"
step = 1e-6
t_end = 0.04
output_interval = 1e-3

[[chamber]]
name = "cap"
volume = 1e-5
pressure = 3e5
temperature = 300.0

[[reservoir]]
name = "atm"
pressure = 1e5
temperature = 300.0

[[piston]]
name = "plunger"
behind = "cap"
ahead = "atm"
area = 1e-4
mass = 0.05
x0 = 0.0
friction_static = 0.0
friction_dynamic = 0.0
spring_stiffness = 2000.0
spring_x0 = 0.0
x_max = 0.012
restitution = 0.6
"""
CASES = (
    [("shipped", n) for n in sorted(base.SHIPPED)]
    + [("peer", p.stem) for p in PEER_MODELS]
    + [("example", "circadapt_valve"), ("text", "bouncer")]
)


def case_fmu(kind, name, workdir, library):  # noqa: F811
    """(FMU, model file) of a shipped model or of a Cantera comparison network."""
    if kind == "shipped":
        return base.shipped_fmu(name), base.SHIPPED[name]
    if kind == "text":
        text = BOUNCER_MODEL
    elif kind == "example":
        text = (base.ROOT / "examples" / name / "model.toml").read_text()
    else:
        text = next(p for p in PEER_MODELS if p.stem == name).read_text()
    d = base.build_variant(workdir, library, f"me-{name}", text)
    return d, d / "resources" / "model.toml"


def quiet(*args):
    pass


def simulate_me(fmu, **kw):
    md = read_model_description(fmu)
    h = float(md.defaultExperiment.stepSize)
    kw.setdefault("output_interval", h)
    return fmpy.simulate_fmu(str(fmu), fmi_type="ModelExchange", **kw)


def compare(cli_header, cli, res, what, tol):
    """Every CLI row against the ME row of the same time: per variable the largest difference
    relative to the variable's scale (its largest magnitude in the CLI's run; discrete outputs
    equal exactly). Returns (worst relative difference, variable, rows compared)."""
    t_me = np.asarray(res["time"])
    worst, worst_var, common = 0.0, None, 0
    scales = {c: float(np.max(np.abs(cli[:, i]))) for i, c in enumerate(cli_header)}
    for row in cli:
        t = row[0]
        j = int(np.argmin(np.abs(t_me - t)))
        if abs(t_me[j] - t) > 1e-9 * max(1.0, abs(t)):
            continue
        common += 1
        for i, col in enumerate(cli_header[1:], start=1):
            a, b = row[i], float(res[col][j])
            if col == "rc" or col.endswith((".exited", ".choked")):
                assert a == b, f"{what} t={t!r} {col}: CS {a!r} vs ME {b!r}"
                continue
            scale = scales[col]
            rel = abs(a - b) / scale if scale > 0 else abs(a - b)
            if rel > worst:
                worst, worst_var = rel, f"{col} at t={t!r}"
            assert rel <= tol, f"{what} t={t!r} {col}: CS {a!r} vs ME {b!r} (scale {scale!r})"
    return worst, worst_var, common


@pytest.mark.parametrize("kind,name", CASES, ids=[c[1] for c in CASES])
def test_cvode_model_exchange_matches_co_simulation(kind, name, workdir, library, tmp_path):  # noqa: F811
    """FMPy's Model Exchange with CVODE (rtol 1e-10) against the CLI's run of the same model
    file (its [solver] settings: what Co-Simulation gives), at every output time: every variable
    within 1e-7 of its scale (its largest magnitude), discrete outputs exactly."""
    fmu, toml = case_fmu(kind, name, workdir, library)
    header, cli = base.run_cli(toml, None, tmp_path / "cli.csv")
    logs = []
    res = simulate_me(fmu, relative_tolerance=ME_RTOL, record_events=False, debug_logging=True,
                      logger=lambda env, inst, status, cat, msg: logs.append(msg.decode()))
    missing = [c for c in header if c not in res.dtype.names]
    assert not missing, missing
    worst, where, common = compare(header, cli, res, name, REL_TOL_ME)
    events = [m for m in logs if "event at" in m]
    print(
        f"{name}: ME (CVODE rtol {ME_RTOL:g}) vs CS at {common} of {len(cli)} output times, "
        f"{len(header) - 1} variables: worst {worst:.2e} of scale ({where}); limit {REL_TOL_ME:g}; "
        f"{len(events)} events{': ' + events[0] if events else ''}"
    )
    if name == "bouncer":
        assert sum("at its stop x_max" in m for m in events) == 2, events
    if name == "circadapt_valve":
        assert any("flow stops" in m for m in events), events
    if name == "cantera_piston":
        assert any("time event" in m for m in events), events
    # The CLI ends at a projectile's exit unless `stop_on_exit = false`, with a row there between
    # output times; the FMU runs on unless `stop_on_exit = true`. With the key absent, that row
    # has no Model Exchange row to meet.
    solver = tomllib.loads(Path(toml).read_text())["solver"]
    assert common >= len(cli) - (0 if "stop_on_exit" in solver else 1)


def test_projectile_exit_is_a_state_event_at_the_closed_form_velocity(workdir, library):  # noqa: F811
    """The projectile through Model Exchange (CVODE, rtol 1e-10): the exit is located by CVODE's
    root finding on the exit's event indicator (x − x_exit), the row FMPy records at that event
    has x within the solver's tolerance of x_exit, and the velocity there is BlasterSim's closed
    form (eq. 3.8) to 1e-7; the FMU then runs on to the stop time (no `stop_on_exit = true`)."""
    fmu = base.shipped_fmu("projectile")
    toml = base.SHIPPED["projectile"]
    spec = tomllib.loads(toml.read_text())
    x_exit = spec["piston"][0]["x_exit"]
    res = simulate_me(fmu, relative_tolerance=ME_RTOL, record_events=True)
    stop_time = float(read_model_description(fmu).defaultExperiment.stopTime)
    assert math.isclose(float(res[-1]["time"]), stop_time), "the run goes on to the stop time"
    # The row FMPy records at the exit event: the first at or past x_exit (to the tolerance).
    last = next(r for r in res if float(r["projectile.x"]) >= x_exit * (1 - ME_RTOL))
    v_exact, _, _ = sens.exact_exit(toml)
    x, v, t = float(last["projectile.x"]), float(last["projectile.v"]), float(last["time"])
    h = float(read_model_description(fmu).defaultExperiment.stepSize)
    rel_v = abs(v - v_exact) / v_exact
    print(
        f"ME exit event at t = {t!r} s (between output times {h * math.floor(t / h):.4g} and "
        f"{h * math.ceil(t / h):.4g} s): x = {x!r} (x_exit {x_exit}, |Δx| {abs(x - x_exit):.1e} m), "
        f"v = {v!r} m/s, closed form {v_exact!r} m/s, relative error {rel_v:.2e} (limit 1e-7)"
    )
    assert abs(x - x_exit) <= ME_RTOL * x_exit
    assert rel_v <= 1e-7
    assert not math.isclose(t / h, round(t / h), abs_tol=1e-6), "the exit is no output time"
    assert t < stop_time


@pytest.mark.parametrize("name", sorted(base.SHIPPED))
def test_default_experiment_tolerance_runs_clean_in_model_exchange(name, workdir, library):  # noqa: F811
    """FMPy's CVODE at the tolerance the FMU declares (DefaultExperiment `tolerance`, the
    model's own rtol; FMPy takes it when none is given) integrates every shipped model through
    Model Exchange without tripping a run-time check: `rc` is 0 in every row, no status above
    OK and no note of check 4, 5 or 9 reaches the log (docs/checks.md)."""
    fmu = base.shipped_fmu(name)
    md = read_model_description(fmu)
    rtol = {v.name: float(v.start) for v in md.modelVariables if v.name == "solver.rtol"}
    tolerance = float(md.defaultExperiment.tolerance)
    assert tolerance == rtol["solver.rtol"]
    logs = []

    def logger(env, instance, status, category, message):
        logs.append((status, category.decode(), message.decode()))

    res = simulate_me(fmu, solver="CVode", logger=logger, debug_logging=True)
    rc = np.asarray(res["rc"])
    notes = [m for m in logs if m[1] == "logChecks" or m[0] != 0]
    print(f"{name}: CVODE at the declared tolerance {tolerance:g}, {len(res)} rows, "
          f"largest rc {rc.max():g}, {len(notes)} notes or warnings")
    assert rc.max() == 0.0, notes[:3]
    assert not notes, notes[:3]


def euler_error(fmu, h, reference, columns, stop_time):
    res = simulate_me(fmu, solver="Euler", step_size=h, output_interval=h, stop_time=stop_time,
                      record_events=False, logger=quiet)
    t_me = np.asarray(res["time"])
    j = int(np.argmin(np.abs(t_me - stop_time)))
    assert math.isclose(t_me[j], stop_time, rel_tol=1e-9)
    return max(abs(float(res[c][j]) - reference[c]) / abs(reference[c]) for c in columns)


def test_euler_model_exchange_converges_at_order_one(workdir, library, tmp_path):  # noqa: F811
    """FMPy's forward Euler through Model Exchange on the blowdown at h and h/2: the error at
    t = 1 s against the CLI's run (rk4 at 1e-4 s, error far below Euler's) falls by 2: the
    measured order is 1 to within 0.05."""
    fmu, toml = base.shipped_fmu("blowdown"), base.SHIPPED["blowdown"]
    header, cli = base.run_cli(toml, None, tmp_path / "cli.csv")
    stop = 1.0
    row = cli[int(np.argmin(np.abs(cli[:, 0] - stop)))]
    assert math.isclose(row[0], stop, rel_tol=1e-12)
    columns = ["tank.p", "tank.T", "tank.m"]
    reference = {c: row[header.index(c)] for c in columns}
    h = 2e-3
    e1 = euler_error(fmu, h, reference, columns, stop)
    e2 = euler_error(fmu, h / 2, reference, columns, stop)
    order = math.log2(e1 / e2)
    print(
        f"blowdown, FMPy Euler through ME to t = {stop} s: error {e1:.3e} at h = {h}, {e2:.3e} "
        f"at h = {h / 2}: order {order:.3f}"
    )
    assert abs(order - 1.0) <= 0.05


def test_euler_model_exchange_exit_velocity_converges_at_order_one(workdir, library):  # noqa: F811
    """The projectile with FMPy's forward Euler (state events found at the step ends): the exit
    velocity's error against the closed form halves with the step (order 1 to within 0.1)."""
    fmu, toml = base.shipped_fmu("projectile"), base.SHIPPED["projectile"]
    v_exact, _, _ = sens.exact_exit(toml)
    errors = []
    for h in (4e-6, 2e-6):
        # Euler's energy drift passes check 5's 1e-4: a note once per episode (status OK).
        res = simulate_me(fmu, solver="Euler", step_size=h, output_interval=h, record_events=True,
                          logger=quiet)
        errors.append(abs(float(res[-1]["projectile.v"]) - v_exact) / v_exact)
    order = math.log2(errors[0] / errors[1])
    print(
        f"projectile, FMPy Euler through ME: exit velocity error {errors[0]:.3e} at h = 4e-6 s, "
        f"{errors[1]:.3e} at h = 2e-6 s: order {order:.3f}"
    )
    assert abs(order - 1.0) <= 0.1


def test_sensitivity_models_are_co_simulation_only(workdir, library):  # noqa: F811
    """A model with [sensitivities]: its description has no ModelExchange element (the
    sensitivities are integrated by Plenum's own integrator, which Model Exchange hands over),
    and fmi2Instantiate as Model Exchange returns NULL with a log line saying so."""
    d, _ = sens.variant(workdir, library, "projectile-sensitivities-me")
    md = read_model_description(d)
    print(f"with [sensitivities]: coSimulation {md.coSimulation is not None}, "
          f"modelExchange {md.modelExchange is not None}")
    assert md.coSimulation is not None and md.modelExchange is None
    logs = []

    def logger(env, instance, status, category, message):
        logs.append(message.decode())

    fmu = FMU2Model(guid=md.guid, unzipDirectory=str(d),
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="me")
    cb = fmi2CallbackFunctions()
    cb.logger = fmi2CallbackLoggerTYPE(logger)
    fmi_master.proxied(cb)
    with pytest.raises(Exception):
        fmu.instantiate(callbacks=cb)
    print("\n".join(logs))
    assert any("Model Exchange is not offered" in m for m in logs), logs


def test_check_2_in_model_exchange_discards(workdir, library):  # noqa: F811
    """Run-time check 2 through Model Exchange: the negative-mass model (test_fmpy.py) with
    FMPy's Euler at its own step: the step that empties the chamber is reported by
    fmi2CompletedIntegratorStep as fmi2Discard (FMPy raises), with a log line naming check 2;
    no row FMPy recorded holds a negative mass."""
    d = base.build_variant(workdir, library, "negative_mass", base.NEGATIVE_MASS_MODEL)
    logs = []

    def logger(env, instance, status, category, message):
        logs.append((status, message.decode()))

    rows = []

    def step_finished(time, recorder):
        rows.extend(recorder.rows[len(rows):])
        return True

    with pytest.raises(FMICallException) as e:
        fmpy.simulate_fmu(str(d), fmi_type="ModelExchange", solver="Euler", step_size=1e-4,
                          output_interval=1e-4, logger=logger, step_finished=step_finished)
    lines = [m for s, m in logs if "run-time check 2" in m]
    masses = [r[3] for r in rows]  # time, tank.p, tank.T, tank.m
    print(f"FMPy: {e.value}; {len(rows)} rows recorded, smallest tank.m {min(masses)!r}; log: {lines}")
    assert "fmi2CompletedIntegratorStep" in str(e.value)
    assert lines and all(m >= 0.0 for m in masses)


# ---------------------------------------------------------------------------------------------
# A Model Exchange master of our own, deterministic (so that store/restore can be compared bit
# for bit): forward Euler at a fixed step, events as the FMU asks for them.


def ptr(a):
    return a.ctypes.data_as(POINTER(c_double))


class Exchange:
    """One Model Exchange instance through FMPy's FMU2Model, with its log lines collected."""

    def __init__(self, path, unzipdir, name="me"):
        self.md = read_model_description(path)
        self.logs = []
        cb = fmi_master.logging_callbacks(self.logs)
        self.callbacks = cb
        self.fmu = FMU2Model(guid=self.md.guid, unzipDirectory=unzipdir,
                             modelIdentifier=self.md.modelExchange.modelIdentifier,
                             instanceName=name)
        self.fmu.instantiate(callbacks=cb, loggingOn=True)
        self.nx = self.md.numberOfContinuousStates
        self.nz = self.md.numberOfEventIndicators
        self.derivatives = [u.variable for u in self.md.derivatives]
        self.states = [v.derivative for v in self.derivatives]
        self.outputs = [v for v in self.md.modelVariables if v.causality == "output"]
        self.out_vrs = [v.valueReference for v in self.outputs]
        self.t = float(self.md.defaultExperiment.startTime or 0.0)
        self.terminated = False
        self.freed = False

    def initialize(self):
        self.fmu.setupExperiment(startTime=self.t)
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        self.event_iteration()
        self.fmu.enterContinuousTimeMode()

    def event_iteration(self):
        needed = True
        while needed and not self.terminated:
            needed, term, _, _, _, _ = self.fmu.newDiscreteStates()
            self.terminated |= term

    def x(self):
        x = np.zeros(self.nx)
        self.fmu.getContinuousStates(ptr(x), self.nx)
        return x

    def set_x(self, x):
        x = np.ascontiguousarray(x, dtype=float)
        self.fmu.setContinuousStates(ptr(x), self.nx)

    def dx(self):
        dx = np.zeros(self.nx)
        self.fmu.getDerivatives(ptr(dx), self.nx)
        return dx

    def nominals(self):
        n = np.zeros(self.nx)
        self.fmu.getNominalsOfContinuousStates(ptr(n), self.nx)
        return n

    def euler(self, h, n):
        """`n` forward Euler steps of `h` (the FMU's events handled where it asks); every output
        and state after each step, as bits."""
        rows = []
        for _ in range(n):
            if self.terminated:
                break
            x = self.x() + h * self.dx()
            self.t += h
            self.fmu.setTime(self.t)
            self.set_x(x)
            enter, term = self.fmu.completedIntegratorStep()
            self.terminated |= term
            if enter and not self.terminated:
                self.fmu.enterEventMode()
                self.event_iteration()
                if not self.terminated:
                    self.fmu.enterContinuousTimeMode()
            values = list(self.fmu.getReal(self.out_vrs)) + list(self.x())
            rows.append([base.bits(v) for v in values])
        return rows

    def free(self):
        if not self.freed:
            self.fmu.freeInstance()
            self.freed = True


@pytest.fixture
def exchanges():
    """Factory of Exchange objects, freed and with their unzip directories removed at the end."""
    with fmi_master.instances(Exchange) as make:
        yield make


# (model, Euler step, steps before the state is taken, steps after it): the projectile's state
# is taken 0.6 ms before its exit, so the steps after it cross the exit (an event, then the end).
STATE_CASES = [("blowdown", 1e-3, 200, 300), ("two_tanks", 1e-2, 100, 200),
               ("projectile", 1e-6, 8000, 1000)]


@pytest.mark.parametrize("name,h,k,n", STATE_CASES, ids=[c[0] for c in STATE_CASES])
def test_model_exchange_store_restore_and_serialize_are_bit_exact(name, h, k, n, exchanges):
    """fmi2GetFMUstate in Continuous-Time Mode, `n` Euler steps of our own master, fmi2SetFMUstate
    and the same steps again: every output and state bit for bit; the state serialized and
    deserialized into a fresh Model Exchange instance continues bit for bit too."""
    fmu = base.shipped_fmu(name)
    a = exchanges(fmu, "a")
    a.initialize()
    a.euler(h, k)
    t_state = a.t
    state = a.fmu.getFMUstate()
    first = a.euler(h, n)
    ended = a.terminated
    a.fmu.setFMUstate(state)
    a.t, a.terminated = t_state, False
    again = a.euler(h, n)
    blob = a.fmu.serializeFMUstate(state)
    a.fmu.freeFMUstate(state)
    b = exchanges(fmu, "b")
    b.initialize()
    b.fmu.setFMUstate(b.fmu.deSerializeFMUstate(blob))
    b.t = t_state
    fresh = b.euler(h, n)
    events = [m for s, c, m in a.logs if c == "logEvents" and "event at" in m]
    print(f"{name}: state at t = {t_state!r} s ({len(blob)} bytes), {len(first)} Euler steps "
          f"after it (run ended: {ended}); events in them: {events[:2]}")
    assert first == again, "restore"
    assert first == fresh, "deserialize into a fresh instance"
    assert first and all(len(r) == len(first[0]) for r in first)
    if name == "projectile":
        # The exit is an event; the run goes on past it (no `stop_on_exit = true`: docs/fmu.md).
        assert not ended and any("exit" in m for m in events)


def test_states_of_one_interface_are_refused_by_the_other(exchanges, slaves):  # noqa: F811
    """A Co-Simulation state blob is refused by a Model Exchange instance and a Model Exchange
    blob by a Co-Simulation one (fmi2DeSerializeFMUstate: fmi2Error with a message naming
    both), and each instance is left as it was."""
    fmu = base.shipped_fmu("blowdown")
    me = exchanges(fmu)
    me.initialize()
    cs = slaves(fmu)
    cs.initialize()
    cs.run(0, 3)
    me.euler(1e-3, 3)
    me_blob = me.fmu.serializeFMUstate(me.fmu.getFMUstate())
    cs_blob = cs.fmu.serializeFMUstate(cs.fmu.getFMUstate())
    x_before = me.x().tolist()
    with pytest.raises(FMICallException):
        me.fmu.deSerializeFMUstate(cs_blob)
    with pytest.raises(FMICallException):
        cs.fmu.deSerializeFMUstate(me_blob)
    # FMPy's native logger proxy is one per process: the last instance's logger hears both.
    logs = [m for e in (me, cs) for _, _, m in e.logs]
    me_lines = [m for m in logs if "taken by a Co-Simulation instance; this instance is Model" in m]
    cs_lines = [m for m in logs if "taken by a Model Exchange instance; this instance is Co-Sim" in m]
    print(f"ME blob {len(me_blob)} bytes, CS blob {len(cs_blob)} bytes\n  ME: {me_lines}\n"
          f"  CS: {cs_lines}")
    assert me_lines and cs_lines
    assert me.x().tolist() == x_before


def central_columns(e, knowns, set_known, get_unknowns, x0, h, forward_at_zero=False):
    """Exact columns (fmi2GetDirectionalDerivative) and central differences of the unknowns
    for each known; forward and backward differences too (for branch points). With
    `forward_at_zero`, a known at 0 takes a forward difference only (an input whose rule is
    >= 0, the slug's damping: x - h is refused)."""
    out = []
    for j, vr in enumerate(knowns):
        exact = np.array(e.fmu.getDirectionalDerivative(e.unknown_vrs, [vr], [1.0]))
        set_known(j, x0[j] + h[j])
        up = get_unknowns()
        if forward_at_zero and x0[j] == 0.0:
            set_known(j, x0[j])
            forward = (up - get_unknowns()) / h[j]
            out.append((exact, forward, forward, forward, h[j]))
            continue
        set_known(j, x0[j] - h[j])
        down = get_unknowns()
        set_known(j, x0[j])
        mid = get_unknowns()
        out.append((exact, (up - down) / (2 * h[j]), (up - mid) / h[j], (mid - down) / h[j], h[j]))
    return out


DD_MODELS = ["blowdown", "two_tanks", "projectile", "directional"]


@pytest.mark.parametrize("name", DD_MODELS)
def test_directional_derivatives_equal_central_differences(name, workdir, library, exchanges):  # noqa: F811
    """fmi2GetDirectionalDerivative in Model Exchange, knowns the continuous states (and the
    inputs), unknowns the state derivatives and the outputs, against central differences of
    fmi2GetDerivatives / fmi2GetReal at h = 1e-7 of the known's scale, at three points of an
    Euler run: every entry at least 1e-3 of its row's largest agrees to 1e-6 relative (entries
    where the forward and backward differences disagree, branch points such as friction at rest,
    are counted, not compared). Every nonzero exact entry of a derivative is listed in
    ModelStructure/Derivatives (structure as FMPy reads it)."""
    fmu = base.directional_variant(workdir, library) if name == "directional" else base.shipped_fmu(name)
    e = exchanges(fmu)
    deps = {u.variable.name: {d.name for d in (u.dependencies or [])} for u in e.md.derivatives}
    inputs = [v for v in e.md.modelVariables if v.causality == "input"]
    keep = [v for v in e.outputs if v.name not in ("rc",) and not v.name.endswith((".exited", ".choked"))]
    e.unknown_vrs = [v.valueReference for v in e.derivatives] + [v.valueReference for v in keep]
    unknown_names = [v.name for v in e.derivatives] + [v.name for v in keep]
    e.initialize()
    h_step = {"blowdown": 1e-3, "two_tanks": 1e-2}.get(name, 1e-6)
    worst, where, compared, kinks, unlisted = 0.0, ("-", "-"), 0, 0, []
    outputs_compared, worst_output = 0, 0.0
    for _ in range(3):
        e.euler(h_step, 300)
        x0 = e.x()
        nominal = e.nominals()

        def unknowns():
            return np.concatenate([e.dx(), np.array(e.fmu.getReal([v.valueReference for v in keep]))])

        def set_state(j, value):
            x = x0.copy()
            x[j] = value
            e.set_x(x)

        cols = central_columns(e, [v.valueReference for v in e.states], set_state, unknowns, x0,
                               1e-7 * np.maximum(np.abs(x0), nominal))
        if inputs:
            u0 = np.array(e.fmu.getReal([v.valueReference for v in inputs]))

            def set_input(j, value):
                e.fmu.setReal([inputs[j].valueReference], [value])

            cols += central_columns(e, [v.valueReference for v in inputs], set_input, unknowns, u0,
                                    1e-7 * np.maximum(np.abs(u0), 1e-3), forward_at_zero=True)
        known_names = [v.name for v in e.states] + [v.name for v in inputs]
        f0 = unknowns()
        exact = np.array([c[0] for c in cols]).T  # rows: unknowns, columns: knowns
        for i, row in enumerate(exact):
            row_max = np.max(np.abs(row))
            for j, (ex, central, fwd, bwd, h) in enumerate(cols):
                c, fw, bw = central[i], fwd[i], bwd[i]
                # Round-off of the differences: some ulps of the unknown over h (an output such
                # as energy_total is large against its change); entries far below the row's
                # largest are noise.
                floor = 1e-8 * row_max + 64 * np.finfo(float).eps * abs(f0[i]) / h
                if ex[i] != 0.0 and i < len(e.derivatives) and known_names[j] not in deps[unknown_names[i]]:
                    unlisted.append((unknown_names[i], known_names[j]))
                if abs(fw - bw) > 1e-4 * max(abs(fw), abs(bw)) + floor:
                    kinks += 1
                    continue
                if not (abs(ex[i]) >= 1e-3 * row_max and row_max > 0.0):
                    continue
                size = max(abs(ex[i]), abs(c))
                plain = abs(ex[i] - c) / size
                if i < len(e.derivatives):
                    # A derivative: the plain relative difference.
                    compared += 1
                    if plain > worst:
                        worst, where = plain, (unknown_names[i], known_names[j])
                    assert plain <= 1e-6, (unknown_names[i], known_names[j], ex[i], c)
                else:
                    # An output (energy_total is large against its change): beyond the
                    # differences' round-off floor, relative to the entry.
                    excess = max(abs(ex[i] - c) - floor, 0.0) / size
                    outputs_compared += 1
                    worst_output = max(worst_output, excess)
                    assert excess <= 1e-6, (unknown_names[i], known_names[j], ex[i], c, floor)
    print(f"{name}: {len(e.states)} states, {len(inputs)} inputs, {len(unknown_names)} unknowns; "
          f"{compared} significant entries of derivatives, worst relative difference "
          f"{worst:.2e} ({where[0]} / {where[1]}); {outputs_compared} of outputs, worst beyond "
          f"round-off {worst_output:.2e} (limit 1e-6); {kinks} branch points not compared")
    assert compared > 0 and outputs_compared > 0
    assert not unlisted, f"nonzero entries missing from ModelStructure/Derivatives: {unlisted}"
