"""`Simulation`: stepping equals one run; states round-trip and pickle, bit for bit; the
state is the FMU's own blob (an FMU built from the model continues from it); inputs set
between steps as an FMU's; threads run simulations in parallel with the same results."""

import copy
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import plenum
from conftest import EXAMPLES, MODELS, PEER_MODELS, ROOT

ALL = MODELS + PEER_MODELS + EXAMPLES


def stepped(model, times, names):
    """Rows of `names` after advancing a fresh simulation to each of `times` (the run's grid)."""
    sim = model.simulation()
    rows = [sim[names]]
    for t in times[1:]:
        if sim.finished:
            break
        sim.advance(float(t))
        rows.append(sim[names])
    return sim, np.array(rows)


def grid_rows(result):
    """The run's rows at its output grid (without an exit's extra row)."""
    r = result.values
    if result.exit_time is not None:
        return r[:-1]
    return r


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(ROOT)))
def test_stepping_equals_one_run(path):
    model = plenum.Model.from_file(path)
    try:
        result = model.run()
    except (plenum.CheckFailed, plenum.SolverError) as e:
        pytest.skip(f"{path.name}: the run stops early ({e})")
    names = [n for n in result.names if not n.startswith("d(")]
    want = grid_rows(result)
    sim, got = stepped(model, want[:, 0], names)
    idx = [result.names.index(n) for n in names]
    n = min(len(got), len(want))
    same = np.all(got[:n].view(np.uint64) == want[:n][:, idx].view(np.uint64))
    print(f"{path.name}: {n} output times stepped by Simulation.advance equal Model.run bit for bit "
          f"({len(names)} variables; finished: {sim.finished})")
    assert same
    if result.exit_time is None:
        assert n == len(want)
    else:
        # The run ends at the exit, before the next output time: so does the simulation, at the
        # same time and state.
        step = want[1, 0] - want[0, 0]
        reached = sim.advance(float(want[-1, 0] + step))
        assert sim.finished == "exited" and reached == sim.time == result.exit_time
        assert sim.advance(float(want[-1, 0] + 2 * step)) == result.exit_time
        assert sim[names] == list(result.values[-1][idx])


@pytest.mark.parametrize("method", ["auto", "bdf", "dopri5", "rk4"])
def test_state_round_trip_and_pickling_continue_bit_for_bit(method):
    model = plenum.Model.from_file(ROOT / "models" / "blowdown.toml")
    names = ["tank.p", "tank.T", "nozzle.mdot", "energy_total"]
    ref = model.simulation(method=method)
    ref.advance(0.7)
    blob = ref.state()
    assert blob[:8] == b"PLNMSTAT"
    pickled = pickle.dumps(ref)
    ref.advance(2.0)
    want = ref[names]

    # restore() into the same simulation after it went on, into a fresh one, and unpickled.
    again = model.simulation(method=method)
    again.restore(blob)
    again.advance(2.0)
    back = pickle.loads(pickled)
    assert back.time == 0.7
    back.advance(2.0)
    deep = copy.deepcopy(back)
    ref.restore(blob)
    ref.advance(2.0)
    for label, got in [("restore", again[names]), ("pickle", back[names]),
                       ("restore in place", ref[names]), ("deepcopy", deep[names])]:
        assert np.array_equal(np.array(got).view(np.uint64), np.array(want).view(np.uint64)), label
    print(f"{method}: state of {len(blob)} bytes at t = 0.7 s; restored, unpickled and deep-copied "
          f"runs reach t = 2 s with {names} equal bit for bit ({want})")


def test_the_state_is_the_fmus_own_blob(tmp_path):
    """A state taken in Python continues in an FMU of the same model (FMPy,
    fmi2DeSerializeFMUstate) to the same bits, and the FMU's state continues in Python."""
    fmpy = pytest.importorskip("fmpy")
    from fmpy.fmi2 import FMU2Slave

    model = plenum.Model.from_file(ROOT / "models" / "blowdown.toml")
    fmu = model.build_fmu(tmp_path / "blowdown.fmu", platforms=["linux64"])
    md = fmpy.read_model_description(fmu)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    names = ["tank.p", "tank.T", "tank.m"]
    sim = model.simulation()
    sim.advance(0.5)
    blob = sim.state()
    sim.advance(1.0)
    want = sim[names]

    unzipped = fmpy.extract(fmu, unzipdir=str(tmp_path / "x"))
    slave = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
                      instanceName="i")
    slave.instantiate()
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    state = slave.deSerializeFMUstate(blob)
    slave.setFMUstate(state)
    slave.doStep(currentCommunicationPoint=0.5, communicationStepSize=0.5)
    got = slave.getReal([vr[n] for n in names])
    # And back: the FMU's state at 1.0 s continues in Python as the FMU continues.
    fmu_blob = bytes(slave.serializeFMUstate(slave.getFMUstate()))
    slave.doStep(currentCommunicationPoint=1.0, communicationStepSize=0.25)
    fmu_later = slave.getReal([vr[n] for n in names])
    slave.terminate()
    slave.freeInstance()
    print(f"Python state ({len(blob)} bytes) continued in the FMU: {got}; in Python: {want}")
    assert np.array_equal(np.array(got).view(np.uint64), np.array(want).view(np.uint64))
    sim.restore(fmu_blob)
    sim.advance(1.25)
    assert np.array_equal(np.array(sim[names]).view(np.uint64), np.array(fmu_later).view(np.uint64))


def test_set_input_between_steps_as_the_fmu(tmp_path):
    """blowdown's input atm.pressure raised mid-run: the tank's flow falls at once; the same
    change in the FMU (FMPy) gives the same bits."""
    fmpy = pytest.importorskip("fmpy")
    model = plenum.Model.from_file(ROOT / "models" / "blowdown.toml")
    sim = model.simulation()
    sim.advance(1.0)
    before = sim["nozzle.mdot"]
    sim.set_input("atm.pressure", 3e5)
    assert sim["atm.pressure"] == 3e5
    after = sim["nozzle.mdot"]
    sim.advance(2.0)
    with pytest.raises(ValueError):
        sim.set_input("atm.pressure", -1.0)  # its rule: > 0
    with pytest.raises(ValueError):
        sim.set_input("tank.volume", 2e-3)  # a parameter, fixed once running
    print(f"nozzle.mdot {before!r} → {after!r} kg/s when atm.pressure goes to 3 bar")
    assert after < before
    fmu = model.build_fmu(tmp_path / "b.fmu", platforms=["linux64"])
    res = fmpy.simulate_fmu(fmu, stop_time=2.0, output_interval=1.0, output=["tank.p"],
                            input=np.array([(0.0, 101325.0), (1.0, 3e5)],
                                           dtype=[("time", np.float64), ("atm.pressure", np.float64)]))
    print(f"tank.p at 2 s: Python {sim['tank.p']!r}, FMU {res['tank.p'][-1]!r}")
    assert res["tank.p"][-1] == sim["tank.p"]


def test_threads_run_in_parallel_with_the_same_results():
    """Eight simulations on four threads equal the same runs one after another, bit for bit,
    and while a run goes on the main thread keeps running Python: the GIL is released."""
    model = plenum.Model.from_file(ROOT / "compliance-tests" / "peers" / "models" / "cantera_chain20.toml")
    pressures = np.linspace(2e5, 9e5, 8)

    def one(p):
        return plenum.Model.from_file(model.file).set("t01.pressure", float(p)).run()

    serial = [one(p).values for p in pressures]
    with ThreadPoolExecutor(4) as ex:
        threaded = list(ex.map(lambda p: one(p).values, pressures))
    for a, b in zip(serial, threaded):
        assert np.array_equal(a.view(np.uint64), b.view(np.uint64))
    # The GIL: count Python iterations on this thread while a long run goes on in another.
    slow = plenum.Model.from_file(ROOT / "models" / "blowdown.toml").set("solver.step", 2e-6)
    done = threading.Event()
    ticks = 0
    t = threading.Thread(target=lambda: (slow.run(), done.set()))
    start = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0)
    t.join()
    took = time.perf_counter() - start
    print(f"8 runs on 4 threads equal serial bit for bit; {ticks} Python iterations ran beside a "
          f"{took:.2f} s run")
    assert ticks > 1000
