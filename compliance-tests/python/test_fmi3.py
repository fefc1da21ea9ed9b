"""FMI 3.0 Co-Simulation and Model Exchange of the shipped models through FMPy: the FMI 3.0
FMUs (`fmu-build --fmi-version 3`, in target/fmu3/ or $PLENUM_FMUS3) carry the same library
and model as the FMI 2.0 ones of test_fmpy.py (docs/fmu.md, "FMI 3.0").

The truths: the FMI 2.0 Co-Simulation run of the same model (FMPy, the FMI 2.0 FMU), which
FMI 3.0 Co-Simulation must reproduce to 1e-12 relative (it is the same instance code: bit for
bit in practice) and FMI 3.0 Model Exchange under CVODE (rtol 1e-10) to 1e-7 of each
variable's scale; the store/restore, multiple-state and serialization procedures of
test_fmpy.py, bit-exact, on fmi3GetFMUState / fmi3SetFMUState / fmi3SerializeFMUState.
"""

import os
import shutil
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Slave, fmi3Discard, fmi3OK, fmi3Warning
from fmpy.validation import validate_fmu

import test_fmpy as base
import test_model_exchange as me
from test_fmpy import slaves  # noqa: F401 (pytest fixture)

REL_TOL_CS = 1e-12
ME_RTOL = 1e-10
REL_TOL_ME = 1e-7


def find_fmus3():
    spec = os.environ.get("PLENUM_FMUS3")
    d = Path(spec) if spec else base.ROOT / "target" / "fmu3"
    return {f.stem: f for f in sorted(d.glob("*.fmu"))}


FMUS3 = find_fmus3()


def fmu3(name):
    assert name in FMUS3, (
        f"no FMI 3.0 FMU for {name!r} among {sorted(FMUS3)}: run `target/debug/fmu-build "
        f"models/*.toml -o target/fmu3 --fmi-version 3` (or set PLENUM_FMUS3)"
    )
    return FMUS3[name]


@pytest.mark.parametrize("name", sorted(base.SHIPPED))
def test_fmi3_validate_fmu(name):
    """fmpy.validation.validate_fmu finds no problem; the FMU is FMI 3.0 with both interfaces,
    its event indicators and the FMI 3.0 platform folders."""
    fmu = fmu3(name)
    problems = validate_fmu(str(fmu))
    md = read_model_description(fmu)
    names = set(__import__("zipfile").ZipFile(fmu).namelist())
    bins = sorted(n for n in names if n.startswith("binaries/"))
    print(
        f"{name}: fmiVersion {md.fmiVersion}, {len(md.modelVariables)} variables, "
        f"{len(md.derivatives)} state derivatives, {len(md.eventIndicators)} event indicators, "
        f"binaries {bins}; problems {problems}"
    )
    assert problems == []
    assert md.fmiVersion == "3.0"
    assert md.modelExchange is not None and md.coSimulation is not None
    assert f"binaries/x86_64-linux/{name}.so" in names
    assert not any(n.startswith(("binaries/linux64", "binaries/win64")) for n in names)


def worst_rel(r2, r3):
    worst, where = 0.0, None
    for n in r2.dtype.names:
        a, b = np.asarray(r2[n], float), np.asarray(r3[n], float)
        assert a.shape == b.shape, (n, a.shape, b.shape)
        rel = np.abs(a - b) / np.maximum(np.abs(a), np.finfo(float).tiny)
        rel[(a == b)] = 0.0
        k = int(np.argmax(rel))
        if rel[k] > worst:
            worst, where = float(rel[k]), f"{n}[{k}]"
    return worst, where


@pytest.mark.parametrize("name", sorted(base.SHIPPED))
def test_fmi3_co_simulation_matches_fmi2(name):
    """FMPy's simulate_fmu, default experiment: FMI 3.0 CS against FMI 2.0 CS, every output at
    every time within 1e-12 relative."""
    r2 = fmpy.simulate_fmu(str(base.shipped_fmu(name)), fmi_type="CoSimulation")
    r3 = fmpy.simulate_fmu(str(fmu3(name)), fmi_type="CoSimulation")
    worst, where = worst_rel(r2, r3)
    print(
        f"{name}: FMI 3.0 CS vs FMI 2.0 CS, {len(r2)} rows x {len(r2.dtype.names)} columns: "
        f"worst relative difference {worst:.3g} ({where}); limit {REL_TOL_CS:g}"
    )
    assert worst <= REL_TOL_CS


@pytest.mark.parametrize("name", sorted(base.SHIPPED))
def test_fmi3_model_exchange_matches_fmi2_co_simulation(name):
    """FMPy's FMI 3.0 Model Exchange with CVODE (rtol 1e-10) against FMI 2.0 CS at every
    output time: every variable within 1e-7 of its scale, discrete outputs exactly."""
    r2 = fmpy.simulate_fmu(str(base.shipped_fmu(name)), fmi_type="CoSimulation")
    header = list(r2.dtype.names)
    cs = np.column_stack([np.asarray(r2[c], float) for c in header])
    res = me.simulate_me(fmu3(name), relative_tolerance=ME_RTOL, record_events=False)
    worst, where, common = me.compare(header, cs, res, name, REL_TOL_ME)
    print(
        f"{name}: FMI 3.0 ME (CVODE rtol {ME_RTOL:g}) vs FMI 2.0 CS at {common} of {len(cs)} "
        f"output times, {len(header) - 1} variables: worst {worst:.2e} of scale ({where}); "
        f"limit {REL_TOL_ME:g}"
    )
    assert common >= len(cs) - 1


class Slave3:
    """One FMI 3.0 Co-Simulation instance driven step by step, like test_fmpy.Slave."""

    def __init__(self, fmu_path, unzipdir, name="plenum3"):
        self.md = read_model_description(fmu_path)
        self.logs = []

        def log_message(env, status, category, message):
            self.logs.append((status, (category or b"").decode(), (message or b"").decode()))

        self.fmu = FMU3Slave(
            guid=self.md.guid,
            unzipDirectory=unzipdir,
            modelIdentifier=self.md.coSimulation.modelIdentifier,
            instanceName=name,
        )
        self.fmu.instantiate(loggingOn=True, logMessage=log_message)
        self.outputs = [v for v in self.md.modelVariables if v.causality == "output"]
        self.vrs = [v.valueReference for v in self.outputs]
        self.names = [v.name for v in self.outputs]
        de = self.md.defaultExperiment
        self.t0, self.t_end, self.h = float(de.startTime), float(de.stopTime), float(de.stepSize)
        self.n_total = round((self.t_end - self.t0) / self.h)
        self.freed = False

    def initialize(self):
        self.fmu.enterInitializationMode(startTime=self.t0, stopTime=self.t_end)
        self.fmu.exitInitializationMode()

    def t(self, k):
        return self.t0 + k * self.h

    def do_step(self, t, h):
        try:
            self.fmu.doStep(t, h)
            return fmi3OK
        except FMICallException as e:
            return e.status

    def values(self):
        return tuple(self.fmu.getFloat64(self.vrs))

    def run(self, k_from, k_to):
        rows = []
        for k in range(k_from, k_to):
            status = self.do_step(self.t(k), self.t(k + 1) - self.t(k))
            rows.append((k + 1, status, self.values()))
            if status not in (fmi3OK, fmi3Warning):
                break
        return rows

    def free(self):
        if not self.freed:
            self.fmu.freeInstance()
            self.freed = True


@pytest.fixture
def slaves3():
    made, dirs = [], {}

    def make(fmu_path, name="plenum3"):
        key = str(fmu_path)
        if key not in dirs:
            dirs[key] = fmpy.extract(fmu_path)
        s = Slave3(fmu_path, dirs[key], name)
        made.append(s)
        return s

    yield make
    for s in made:
        s.free()
    for d in dirs.values():
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("name", sorted(base.SHIPPED))
def test_fmi3_store_restore_after_initialization(name, slaves3, slaves):  # noqa: F811
    """fmi3GetFMUState right after initialization, N steps, fmi3SetFMUState, the same N steps
    again: bit-identical; and the first run bit-identical to FMI 2.0's Slave."""
    s = slaves3(fmu3(name))
    s.initialize()
    initial = s.values()
    state = s.fmu.getFMUState()
    n = max(1, s.n_total // 10)
    first = s.run(0, n)
    s.fmu.setFMUState(state)
    assert [base.bits(x) for x in s.values()] == [base.bits(x) for x in initial]
    again = s.run(0, n)
    s.fmu.freeFMUState(state)
    print(f"{name}: N = {n} steps of h = {s.h!r} s")
    base.assert_rows_identical(first, again, s.names, f"{name} FMI 3.0 restore to t0")
    s2 = slaves(base.shipped_fmu(name), "fmi2")
    s2.initialize()
    base.assert_rows_identical(first, s2.run(0, n), s.names, f"{name} FMI 3.0 vs FMI 2.0 rows")


@pytest.mark.parametrize("name", sorted(base.SHIPPED))
def test_fmi3_multiple_states(name, slaves3):
    """States at 10 % and 20 %, run to 30 %; restore 20 % and rerun, then 10 % and rerun:
    bit-identical to the first run."""
    s = slaves3(fmu3(name))
    s.initialize()
    k1, k2, k3 = s.n_total // 10, s.n_total // 5, 3 * s.n_total // 10
    s.run(0, k1)
    s1 = s.fmu.getFMUState()
    first_12 = s.run(k1, k2)
    s2 = s.fmu.getFMUState()
    first_23 = s.run(k2, k3)
    print(f"{name}: k = {k1}, {k2}, {k3} of {s.n_total}")
    s.fmu.setFMUState(s2)
    base.assert_rows_identical(first_23, s.run(k2, k3), s.names, f"{name} state 2 (20-30 %)")
    s.fmu.setFMUState(s1)
    base.assert_rows_identical(first_12 + first_23, s.run(k1, k3), s.names,
                               f"{name} state 1 (10-30 %)")
    s.fmu.freeFMUState(s1)
    s.fmu.freeFMUState(s2)


@pytest.mark.parametrize("name", sorted(base.SHIPPED))
def test_fmi3_serialize_into_fresh_instance(name, slaves3, slaves, tmp_path):  # noqa: F811
    """A full run; a second instance serializes its state at 10 % to a file and is freed; a
    third deserializes it and runs to the end: bit-identical to the full run. The FMI 3.0 blob
    is the FMI 2.0 one (same header and body): an FMI 2.0 instance's blob of the same state is
    byte-identical."""
    fmu = fmu3(name)
    full = slaves3(fmu, "full")
    full.initialize()
    full_rows = full.run(0, full.n_total)
    full.free()

    a = slaves3(fmu, "before")
    a.initialize()
    k1 = a.n_total // 10
    a.run(0, k1)
    at_k1 = a.values()
    state = a.fmu.getFMUState()
    blob = a.fmu.serializeFMUState(state)
    a.fmu.freeFMUState(state)
    a.free()
    path = tmp_path / "state.bin"
    path.write_bytes(blob)

    s2 = slaves(base.shipped_fmu(name), "fmi2")
    s2.initialize()
    s2.run(0, k1)
    st2 = s2.fmu.getFMUstate()
    blob2 = s2.fmu.serializeFMUstate(st2)
    s2.fmu.freeFMUstate(st2)
    assert bytes(blob) == bytes(blob2), f"FMI 3.0 blob {len(blob)} B vs FMI 2.0 {len(blob2)} B"

    b = slaves3(fmu, "after")
    b.initialize()
    restored = b.fmu.deserializeFMUState(path.read_bytes())
    b.fmu.setFMUState(restored)
    b.fmu.freeFMUState(restored)
    assert [base.bits(x) for x in b.values()] == [base.bits(x) for x in at_k1]
    rest = b.run(k1, b.n_total)
    print(f"{name}: serialized at k = {k1}, {len(blob)} bytes (= the FMI 2.0 blob); "
          f"full run {len(full_rows)} steps")
    base.assert_rows_identical(full_rows[k1:], rest, b.names, f"{name} FMI 3.0 deserialized")
    assert all(r[1] in (fmi3OK, fmi3Warning, fmi3Discard) for r in full_rows)
