"""Co-simulation of the Plenum tank FMU with the controller FMU in libcosim (libcosimpy), asserted
against the same loop driven step by step through FMPy, and against the controller's law.

    cargo build --workspace
    PY=$(bash scripts/python-env.sh) && "$PY" -m pytest examples/libcosim -q -rA

The coupling: tank.p → controller.p, controller.opening → tank.fill.opening, communication step
10 ms. libcosim's fixed-step algorithm steps both FMUs from the same inputs, then transfers the
outputs to the connected inputs (applied before the next step); FMPy replays exactly that, with
libcosim's communication points (an integer-nanosecond clock: t_k = k·h_ns/1e9).
"""

from ctypes import POINTER, c_char_p, c_double, c_int64, c_size_t, c_uint32

import fmpy
import numpy as np
from fmpy.fmi2 import FMU2Slave

H_NS = 10_000_000  # 10 ms
T_END_NS = 8_000_000_000
N = T_END_NS // H_NS
P_LOW, P_HIGH = 4.0e5, 5.0e5
PLANT_OUT = ["tank.p", "tank.T", "fill.mdot", "consumer.mdot"]


def law(opening, p):
    """The controller: closes at or above p_high, opens at or below p_low, holds between."""
    return 0.0 if p >= P_HIGH else 1.0 if p <= P_LOW else opening


def samples(observer, slave, vr, n):
    """cosim_observer_slave_get_real_samples called directly (libcosimpy 0.0.6's wrapper drops
    a sample, see compliance-tests/importers)."""
    from libcosimpy._internal import libcosimc, wrap_function
    from libcosimpy.CosimObserver import CosimObserver

    f = wrap_function(
        lib=libcosimc(), funcname="cosim_observer_slave_get_real_samples",
        argtypes=[POINTER(CosimObserver), c_int64, c_uint32, c_int64, c_size_t,
                  c_double * n, c_int64 * n, c_int64 * n],
        restype=c_int64,
    )
    vals, steps, times = (c_double * n)(), (c_int64 * n)(), (c_int64 * n)()
    got = f(observer.ptr(), slave, vr, 0, n, vals, steps, times)
    assert got >= 0, "cosim_observer_slave_get_real_samples failed"
    return list(times[:got]), list(vals[:got])


def run_libcosim(tank_fmu, controller_fmu):
    from libcosimpy._internal import libcosimc
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave

    log_output_level(CosimLogLevel.WARNING)
    ex = CosimExecution.from_step_size(H_NS)
    plant = ex.add_local_slave(CosimLocalSlave(fmu_path=str(tank_fmu), instance_name="tank"))
    ctrl = ex.add_local_slave(CosimLocalSlave(fmu_path=str(controller_fmu), instance_name="controller"))
    assert plant >= 0 and ctrl >= 0
    pv = {v.name.decode(): v.reference for v in ex.slave_variables(plant)}
    cv = {v.name.decode(): v.reference for v in ex.slave_variables(ctrl)}
    assert ex.real_initial_value(ctrl, cv["p_low"], P_LOW)
    assert ex.real_initial_value(ctrl, cv["p_high"], P_HIGH)
    assert ex.connect_real_variables(plant, pv["tank.p"], ctrl, cv["p"]) == 0  # C status: 0 = success
    assert ex.connect_real_variables(ctrl, cv["opening"], plant, pv["fill.opening"]) == 0
    obs = CosimObserver.create_time_series()
    ex.add_observer(obs)
    for n in PLANT_OUT:
        assert obs.start_time_series(plant, pv[n], CosimVariableType.REAL)
    assert obs.start_time_series(ctrl, cv["opening"], CosimVariableType.REAL)
    ok = ex.simulate_until(T_END_NS)
    if not ok:
        get = libcosimc().cosim_last_error_message
        get.restype = c_char_p
        raise AssertionError(f"libcosim: {(get() or b'').decode()}")
    out, times = {}, None
    for n in PLANT_OUT:
        t, out[n] = samples(obs, plant, pv[n], N + 5)
        times = times or t
        assert t == times
    t, out["opening"] = samples(obs, ctrl, cv["opening"], N + 5)
    assert t == times
    return np.array(times) / 1e9, {k: np.array(v) for k, v in out.items()}


class Slave:
    def __init__(self, fmu, name, workdir):
        self.md = fmpy.read_model_description(str(fmu))
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        unzipdir = fmpy.extract(str(fmu), unzipdir=str(workdir / name))
        self.fmu = FMU2Slave(guid=self.md.guid, unzipDirectory=unzipdir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier, instanceName=name)
        self.fmu.instantiate()
        self.fmu.setupExperiment(startTime=0.0)
        self.fmu.enterInitializationMode()

    def get(self, names):
        return self.fmu.getReal([self.vr[n] for n in names])

    def set(self, name, value):
        self.fmu.setReal([self.vr[name]], [value])


def run_fmpy(tank_fmu, controller_fmu, workdir):
    """The same coupling driven step by step: both FMUs step from the inputs of the last
    transfer, then outputs go to inputs."""
    plant = Slave(tank_fmu, "tank", workdir)
    ctrl = Slave(controller_fmu, "controller", workdir)
    ctrl.set("p_low", P_LOW)
    ctrl.set("p_high", P_HIGH)

    def transfer():
        p = plant.get(["tank.p"])[0]
        opening = ctrl.get(["opening"])[0]
        ctrl.set("p", p)
        plant.set("fill.opening", opening)

    transfer()
    plant.fmu.exitInitializationMode()
    ctrl.fmu.exitInitializationMode()
    transfer()
    rows = [plant.get(PLANT_OUT) + ctrl.get(["opening"])]
    for k in range(N):
        t, nxt = k * H_NS / 1e9, (k + 1) * H_NS / 1e9
        for s in (plant, ctrl):
            s.fmu.doStep(currentCommunicationPoint=t, communicationStepSize=nxt - t)  # raises unless OK
        rows.append(plant.get(PLANT_OUT) + ctrl.get(["opening"]))
        transfer()
    for s in (plant, ctrl):
        s.fmu.terminate()
        s.fmu.freeInstance()
    a = np.array(rows)
    return {n: a[:, i] for i, n in enumerate(PLANT_OUT + ["opening"])}


def test_libcosim_controller_loop(tank_fmu, controller_fmu, tmp_path):
    t, cosim = run_libcosim(tank_fmu, controller_fmu)
    ref = run_fmpy(tank_fmu, controller_fmu, tmp_path)
    assert len(t) == N + 1 and t[-1] == T_END_NS / 1e9
    same = {n: int((cosim[n] == ref[n]).sum()) for n in cosim}
    print(f"libcosim: {len(t)} samples to t = {t[-1]} s; bit-identical to the FMPy loop: {same}")
    for n in cosim:
        assert np.array_equal(cosim[n], ref[n]), n

    p, opening, fill = cosim["tank.p"], cosim["opening"], cosim["fill.mdot"]
    # The controller's law: the opening after step k follows from the opening before and the
    # pressure it was given for the step (the plant's pressure after step k − 1).
    for k in range(1, len(t)):
        assert opening[k] == law(opening[k - 1], p[k - 1]), f"step {k}"
    switches = np.flatnonzero(np.diff(opening) != 0) + 1
    closes = [k for k in switches if opening[k] == 0.0]
    opens = [k for k in switches if opening[k] == 1.0]
    # The valve passes nothing during a step whose input was 0 (applied one transfer later).
    closed_steps = [k for k in range(1, len(t)) if opening[k - 1] == 0.0]
    assert all(fill[k] == 0.0 for k in closed_steps)
    assert all(fill[k] > 0.0 for k in range(1, len(t)) if opening[k - 1] == 1.0)
    # After the first fill the pressure stays in the hysteresis band, up to the lag of the loop
    # (the controller sees p one step late and its command acts one step later): two steps of the
    # largest pressure change per step.
    first = closes[0]
    dp_step = float(np.max(np.abs(np.diff(p))))
    lo, hi = float(p[first:].min()), float(p[first:].max())
    print(f"switches: close at t = {[round(float(t[k]), 2) for k in closes]} s, open at "
          f"{[round(float(t[k]), 2) for k in opens]} s; after the first fill p in [{lo:.0f}, {hi:.0f}] Pa, "
          f"band [{P_LOW:.0f}, {P_HIGH:.0f}] ± 2·{dp_step:.0f} Pa")
    assert len(closes) >= 2 and len(opens) >= 2
    assert P_LOW - 2 * dp_step <= lo < P_LOW and P_HIGH < hi <= P_HIGH + 2 * dp_step
    for k in closes:
        assert p[k - 1] >= P_HIGH and p[k - 2] < P_HIGH
    for k in opens:
        assert p[k - 1] <= P_LOW and p[k - 2] > P_LOW
