"""Plenum's FMUs in five independent importers, numbers compared with FMPy's.

Run from the workspace root after building the FMUs (this file builds nothing itself):

    bash scripts/build-fmu-libs.sh
    cargo build --bins
    target/debug/fmu-build models/*.toml -o target/fmu/
    bash compliance-tests/importers/install-fmi-sim.sh         # optional, long (see README.md)
    PY=$(bash scripts/python-env.sh)                           # venv at target/venv
    "$PY" -m pytest compliance-tests/importers -v -rA          # -rA prints every asserted figure

For every shipped model (models/*.toml -> <model>.fmu) the reference is fmpy.simulate_fmu at the
model's default step (DefaultExperiment stepSize), all outputs, computed in this run. Each
importer reads the FMU with its own code; it must run the whole default experiment, from its
startTime to its stopTime, its results must equal the reference to 1e-12 relative at every
common time, and be bit-identical to a replay, through FMPy's FMU2Slave, of the exact
(currentCommunicationPoint, communicationStepSize) sequence the importer uses; in that replay,
which makes the importer's very calls, every fmi2DoStep returns fmi2OK and the FMU logs nothing
above info (no line of status Warning or worse), and so it does in the FMPy reference. That sequence is identified here by trying the
candidates of SEQUENCES in turn: the importers differ in how they form the communication points
(see README.md), and Plenum's results depend on the last bit of the step size it is given.

Environment (all optional):
    PLENUM_FMUS     the FMUs to test, ':'-separated files or directories of *.fmu
                    (default target/fmu/*.fmu); every model of models/*.toml must have one.
    PLENUM_FMI_SIM  the fmi-sim executable (default target/tools/bin/fmi-sim, made by
                    install-fmi-sim.sh); when absent the fmi-sim tests are skipped, or fail if
                    PLENUM_IMPORTERS_REQUIRE_ALL=1.
"""

import csv
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tomllib
import zipfile
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint32
from functools import lru_cache
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import (
    FMU2Slave,
    fmi2CallbackAllocateMemoryTYPE,
    fmi2CallbackFreeMemoryTYPE,
    fmi2CallbackFunctions,
    fmi2CallbackLoggerTYPE,
    fmi2False,
    fmi2OK,
)

# FMPy's own C allocator (libc's calloc and free), as its default callbacks use.
from fmpy import calloc as allocateMemory
from fmpy import free as freeMemory

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted((ROOT / "models").glob("*.toml"))
REL_TOL = 1e-12
STATUS = ["OK", "Warning", "Discard", "Error", "Fatal", "Pending"]
VENV_BIN = Path(sys.executable).parent


def model_name(toml_path):
    with open(toml_path, "rb") as f:
        return tomllib.load(f)["model"]["name"]


def find_fmus():
    spec = os.environ.get("PLENUM_FMUS")
    entries = spec.split(os.pathsep) if spec else [str(ROOT / "target" / "fmu")]
    fmus = {}
    for e in entries:
        p = Path(e)
        for f in sorted(p.glob("*.fmu")) if p.is_dir() else [p]:
            fmus[f.stem] = f
    return fmus


FMUS = find_fmus()
SHIPPED = sorted(model_name(m) for m in MODELS)


def shipped_fmu(name):
    assert name in FMUS, (
        f"no FMU for the shipped model {name!r} among {sorted(FMUS)}: run "
        f"`target/debug/fmu-build models/*.toml -o target/fmu/` (or set PLENUM_FMUS)"
    )
    return FMUS[name]


def bits(x):
    return struct.pack("<d", float(x)).hex()


class Experiment:
    """The model's DefaultExperiment and its outputs, read from modelDescription.xml."""

    def __init__(self, fmu):
        md = read_model_description(str(fmu))
        self.md = md
        de = md.defaultExperiment
        self.t0 = float(de.startTime)
        self.t_end = float(de.stopTime)
        self.h = float(de.stepSize)
        self.n = round((self.t_end - self.t0) / self.h)
        self.outputs = [v.name for v in md.modelVariables if v.causality == "output"]
        self.vrs = [v.valueReference for v in md.modelVariables if v.causality == "output"]


class Run:
    """An importer's results: times (m,), values (m, n_outputs) in the reference's output order;
    row 0 is the initial point, row k the point after the k-th communication step. Where the run
    was made through FMPy: `statuses` of every fmi2DoStep and the FMU's `logs` (status,
    category) above info."""

    def __init__(self, label, times, values, note="", statuses=None, logs=None):
        self.label = label
        self.times = np.asarray(times, dtype=float)
        self.values = np.asarray(values, dtype=float).reshape(len(self.times), -1)
        self.note = note
        self.statuses = statuses
        self.logs = logs

    def __len__(self):
        return len(self.times)


# ---------------------------------------------------------------------------------------------
# The FMPy reference and step-sequence replays


class LogRecorder:
    """An FMI 2.0 logger for FMPy that keeps the (status, category) of every line above info
    (the FMU passes "%s" and its text, which ctypes cannot format; status and category are what
    is checked)."""

    def __init__(self):
        self.above_info = []

    def __call__(self, env, instance, status, category, message):
        if status != fmi2OK:
            text = (message or b"").decode(errors="replace")
            self.above_info.append((STATUS[status], (category or b"").decode(), text))


# fmu-manipulation-toolbox's container logs its own banner (its version, its solver setup, its
# threading mode) at Warning and Error status: those lines are the container's, not the FMU's
# (whose lines pass "%s" and their text as an argument).
CONTAINER_BANNER = re.compile(r"^(FMUContainer '|Solver configure|Container use )")


def reaches_stop_time(importer, name, run, ex, rel=1e-12):
    """The run covers the default experiment: its first row at startTime, its last at stopTime
    (`rel`: Ecos accumulates t += h), one row per communication step."""
    print(f"{importer} {name}: {len(run)} rows, t {float(run.times[0])!r} .. "
          f"{float(run.times[-1])!r}; default experiment {ex.t0!r} .. {ex.t_end!r}, {ex.n} steps")
    assert math.isclose(run.times[0], ex.t0, rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(run.times[-1], ex.t_end, rel_tol=rel), "the run stopped early"
    assert len(run) == ex.n + 1


@lru_cache(maxsize=None)
def reference(name):
    """fmpy.simulate_fmu at the default step, all outputs, the FMU's log lines recorded."""
    fmu = shipped_fmu(name)
    ex = Experiment(fmu)
    logger = LogRecorder()
    res = fmpy.simulate_fmu(str(fmu), output_interval=ex.h, output=ex.outputs, logger=logger)
    values = np.column_stack([res[c] for c in ex.outputs])
    return Run("FMPy simulate_fmu", res["time"], values, logs=logger.above_info)


def seq_points(kind, t0, h, n):
    """The (currentCommunicationPoint, communicationStepSize) of n steps, as each importer forms
    them."""
    out = []
    if kind == "fmpy":  # FMPy simulateCS: t_k = t0 + k*h, step = t_(k+1) - t_k
        for k in range(n):
            t, nxt = t0 + k * h, t0 + (k + 1) * h
            out.append((t, nxt - t))
    elif kind == "fixed":  # t_k = t0 + k*h, step = h exactly
        out = [(t0 + k * h, h) for k in range(n)]
    elif kind == "accumulated":  # t_(k+1) = t_k + h, step = h exactly
        t = t0
        for _ in range(n):
            out.append((t, h))
            t = t + h
    elif kind == "nanoseconds":  # integer ns clock: t_k = (k*h_ns)/1e9, step = t_(k+1) - t_k
        hn, tn = round(h * 1e9), round(t0 * 1e9)
        for k in range(n):
            t, nxt = (tn + k * hn) / 1e9, (tn + (k + 1) * hn) / 1e9
            out.append((t, nxt - t))
    else:
        raise ValueError(kind)
    return out


SEQUENCES = {
    "fmpy": "t_k = t0 + k·h, step t_(k+1) − t_k",
    "fixed": "t_k = t0 + k·h, step h",
    "accumulated": "t_(k+1) = t_k + h, step h",
    "nanoseconds": "t_k = (k·h_ns)/1e9 from an integer ns clock, step t_(k+1) − t_k",
}


class Slave:
    """One FMU instance driven step by step through FMPy's FMU2Slave."""

    def __init__(self, fmu, name="replay"):
        self.ex = Experiment(fmu)
        self.unzipdir = fmpy.extract(str(fmu))
        md = self.ex.md
        self.fmu = FMU2Slave(
            guid=md.guid,
            unzipDirectory=self.unzipdir,
            modelIdentifier=md.coSimulation.modelIdentifier,
            instanceName=name,
        )
        self.logger = LogRecorder()
        self.callbacks = fmi2CallbackFunctions()
        self.callbacks.logger = fmi2CallbackLoggerTYPE(self.logger)
        self.callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(allocateMemory)
        self.callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(freeMemory)
        self.fmu.instantiate(callbacks=self.callbacks)
        self.vrs = [
            v.valueReference for n in self.ex.outputs for v in md.modelVariables if v.name == n
        ]

    def initialize(self):
        self.fmu.setupExperiment(startTime=self.ex.t0, stopTime=self.ex.t_end)
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()

    def values(self):
        return list(self.fmu.getReal(self.vrs))

    def step(self, t, h):
        try:
            return self.fmu.fmi2DoStep(self.fmu.component, t, h, fmi2False)
        except FMICallException as e:
            return e.status

    def free(self):
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.unzipdir, ignore_errors=True)


def drive(fmu, points, label):
    """Initialize, then doStep through `points`, every status and every log line above info
    recorded; stops after the first status other than OK. Returns the Run."""
    s = Slave(fmu, label)
    try:
        s.initialize()
        times, rows, statuses = [points[0][0] if points else s.ex.t0], [s.values()], []
        for t, h in points:
            status = s.step(t, h)
            statuses.append(status)
            if status != fmi2OK:
                break
            times.append(t + h)
            rows.append(s.values())
        return Run(label, times, rows, statuses=statuses, logs=s.logger.above_info)
    finally:
        s.free()


@lru_cache(maxsize=None)
def replay(name, kind):
    fmu = shipped_fmu(name)
    ex = Experiment(fmu)
    return drive(fmu, seq_points(kind, ex.t0, ex.h, ex.n), f"replay-{kind}")


def identify_sequence(name, run, k_max):
    """The candidate sequences whose replay equals rows 0..k_max of `run` bit for bit (more than
    one when the model's results happen not to depend on the difference)."""
    found, n_rows = [], 0
    for kind in SEQUENCES:
        rep = replay(name, kind)
        k = min(k_max, len(rep) - 1, len(run) - 1)
        if k < 1:
            continue
        same = all(
            bits(a) == bits(b)
            for ra, rb in zip(run.values[: k + 1], rep.values[: k + 1])
            for a, b in zip(ra, rb)
        )
        if same:
            found.append(kind)
            n_rows = k + 1
    return found, n_rows


# ---------------------------------------------------------------------------------------------
# Comparison with the reference


def compare(name, run, table, importer, sequence):
    """run vs the FMPy reference: every row of `run` has a reference row at the same time
    (1e-12·max(1,|t|)) and every reference row has a `run` row; all values equal to REL_TOL
    relative to max(|a|, |b|).

    `sequence` is the step sequence identified for the importer (already shown bit-identical to
    a replay of it). When it is not FMPy's, Plenum is given communication step sizes a few ulps
    apart from FMPy's and an output computed by cancellation (e.g. the orifice's mass flow,
    ∝ sqrt(p − p_atm) once p ≈ p_atm) can differ by more than 1e-12 of its own size; those
    values are then held to 1e-12 of the column's largest magnitude over the run, and the
    pointwise figure is printed and put in the table."""
    ref = reference(name)
    ex = Experiment(shipped_fmu(name))
    ref_idx = list(range(len(ref)))
    run_idx = list(range(len(run)))
    scale = np.max(np.abs(ref.values[ref_idx]), axis=0)
    matched, unmatched, worst, worst_scaled, identical, n_values, worst_at = 0, [], 0.0, 0.0, 0, 0, None
    over = 0
    covered = set()
    for i in run_idx:
        t = run.times[i]
        j = int(np.argmin(np.abs(ref.times - t)))
        if abs(ref.times[j] - t) > 1e-12 * max(1.0, abs(t)):
            unmatched.append(float(t))
            continue
        matched += 1
        covered.add(j)
        for c, (a, b) in enumerate(zip(run.values[i], ref.values[j])):
            n_values += 1
            if bits(a) == bits(b):
                identical += 1
                continue
            rel = abs(a - b) / max(abs(a), abs(b)) if a != b else 0.0
            worst_scaled = max(worst_scaled, abs(a - b) / scale[c] if scale[c] else rel)
            if rel > REL_TOL:
                over += 1
            if not rel <= worst:
                worst, worst_at = rel, (float(t), ex.outputs[c], float(a), float(b))
    missing = [float(ref.times[j]) for j in ref_idx if j not in covered]
    msg = (
        f"{importer} {name}: {len(run)} rows (t {float(run.times[0])!r} .. "
        f"{float(run.times[-1])!r}), {matched} at reference "
        f"times; {n_values} values compared, {identical} bit-identical, max relative difference "
        f"{worst:.3e}" + (f" ({worst_at[1]} at t={worst_at[0]!r}: {worst_at[2]!r} vs FMPy "
                          f"{worst_at[3]!r})" if worst_at else "")
        + f"; {over} values above {REL_TOL:.0e} relative; max difference / column max "
        f"{worst_scaled:.3e}"
    )
    print(msg)
    pointwise = worst <= REL_TOL
    scaled = sequence != "fmpy" and worst_scaled <= REL_TOL
    ok = not unmatched and not missing and matched > 2 and (pointwise or scaled)
    if ok and pointwise:
        cell = (f"pass: {matched} times × {len(ex.outputs)}, max rel {worst:.1e}, "
                f"{identical}/{n_values} bit-identical")
    elif ok:
        cell = (f"pass (column scale): max diff/col max {worst_scaled:.1e}; pointwise max rel "
                f"{worst:.1e} ({worst_at[1]}, t={worst_at[0]:.4g}), {over} values > 1e-12 rel; "
                f"{identical}/{n_values} bit-identical")
    else:
        cell = (f"FAIL: max rel {worst:.1e}, scaled {worst_scaled:.1e}, {len(unmatched)} rows "
                f"off the reference times, {len(missing)} reference rows missing")
    table(importer, name, "= FMPy (1e-12 rel)", cell)
    assert not unmatched, f"{importer} rows at times FMPy never reached: {unmatched[:5]}"
    assert not missing, f"reference times missing from {importer}: {missing[:5]} ({len(missing)})"
    assert matched > 2
    assert pointwise or scaled, msg


def check_sequence(name, run, table, importer, k_max=None):
    """Identify the step sequence that reproduces `run` bit for bit (rows up to k_max); in its
    replay (the importer's very calls) every fmi2DoStep returned fmi2OK and the FMU logged
    nothing above info."""
    if k_max is None:
        k_max = len(run) - 1
    kinds, rows = identify_sequence(name, run, k_max)
    kind = " = ".join(kinds) if kinds else None
    for k in kinds:
        rep = replay(name, k)
        bad = [STATUS[x] for x in rep.statuses if x != fmi2OK]
        print(f"{importer} {name}: replay of `{k}`: {len(rep.statuses)} fmi2DoStep calls, "
              f"{len(bad)} not fmi2OK {sorted(set(bad))}; log lines above info: {rep.logs}")
        table(importer, name, "statuses",
              f"pass: {len(rep.statuses)} steps all fmi2OK, nothing logged above info"
              if not bad and not rep.logs else f"FAIL: {sorted(set(bad))} {rep.logs[:3]}")
        assert not bad and not rep.logs
    if kind is None:
        table(importer, name, "step sequence", "FAIL: no candidate replays it bit for bit")
        print(f"{importer} {name}: no candidate sequence among {list(SEQUENCES)} reproduces it")
    else:
        table(importer, name, "step sequence", f"pass: {kind} ({rows} rows bit-identical)")
        print(
            f"{importer} {name}: step sequence `{kind}` ("
            f"{'; '.join(SEQUENCES[k] for k in kinds)}): replay through "
            f"FMU2Slave bit-identical in all {rows} rows"
        )
    assert kind is not None
    return kind


# ---------------------------------------------------------------------------------------------
# FMPy itself


@pytest.mark.parametrize("name", SHIPPED)
def test_fmpy(name, table):
    """The reference: validate_fmu finds nothing, simulate_fmu runs the default experiment to its
    stop time with nothing logged above info, its rows equal an FMU2Slave replay of simulateCS's
    step sequence bit for bit (all fmi2OK), and
    getFMUstate/setFMUstate and serialize/deserialize at 10 % rerun 10-20 % bit-identically."""
    from fmpy.validation import validate_fmu

    fmu = shipped_fmu(name)
    problems = validate_fmu(str(fmu))
    print(f"FMPy {name}: validate_fmu problems: {problems}")
    table("FMPy", name, "check", "pass: validate_fmu, 0 problems" if not problems else "FAIL")
    assert problems == []

    ref = reference(name)
    ex = Experiment(fmu)
    print(f"FMPy {name}: simulate_fmu {len(ref)} rows, t {ref.times[0]!r} .. {ref.times[-1]!r}; "
          f"log lines above info: {ref.logs}")
    table("FMPy", name, "simulate", f"pass: {len(ref)} rows to t={float(ref.times[-1]):.6g}")
    table("FMPy", name, "= FMPy (1e-12 rel)", "(reference)")
    assert np.all(np.isfinite(ref.values))
    reaches_stop_time("FMPy", name, ref, ex)
    assert ref.logs == []
    assert check_sequence(name, ref, table, "FMPy").startswith("fmpy")

    # get/set state and serialization at 10 %, rerun to 20 %.
    s = Slave(fmu, "state")
    try:
        s.initialize()
        k1, k2 = ex.n // 10, ex.n // 5
        pts = seq_points("fmpy", ex.t0, ex.h, ex.n)
        for t, h in pts[:k1]:
            assert s.step(t, h) == fmi2OK
        state = s.fmu.getFMUstate()
        blob = s.fmu.serializeFMUstate(state)
        first = []
        for t, h in pts[k1:k2]:
            assert s.step(t, h) == fmi2OK
            first.append(s.values())
        again = []
        s.fmu.setFMUstate(state)
        for t, h in pts[k1:k2]:
            s.step(t, h)
            again.append(s.values())
        restored = s.fmu.deSerializeFMUstate(blob)
        s.fmu.setFMUstate(restored)
        thrice = []
        for t, h in pts[k1:k2]:
            s.step(t, h)
            thrice.append(s.values())
        s.fmu.freeFMUstate(state)
        s.fmu.freeFMUstate(restored)
    finally:
        s.free()
    same = [bits(x) for r in first for x in r] == [bits(x) for r in again for x in r]
    same2 = [bits(x) for r in first for x in r] == [bits(x) for r in thrice for x in r]
    n_vals = sum(len(r) for r in first)
    print(
        f"FMPy {name}: state at step {k1}, rerun {k2 - k1} steps: setFMUstate bit-identical "
        f"{same}, deSerializeFMUstate ({len(blob)} bytes) bit-identical {same2} ({n_vals} values)"
    )
    table("FMPy", name, "get/set state",
          f"pass: get/set + serialize at 10 %, {k2 - k1} steps bit-identical"
          if same and same2 else "FAIL")
    assert same and same2


# ---------------------------------------------------------------------------------------------
# fmu-manipulation-toolbox: fmutool -check and fmucontainer


def tool(name):
    p = VENV_BIN / name
    assert p.is_file(), f"{p} missing: install compliance-tests/importers/requirements.txt"
    return p


@pytest.mark.parametrize("name", SHIPPED)
def test_fmutool_check(name, table):
    """`fmutool -input X.fmu -check`: exit code 0, no ERROR/WARNING line, both checkers pass."""
    fmu = shipped_fmu(name)
    r = subprocess.run([tool("fmutool"), "-input", str(fmu), "-check"],
                       capture_output=True, text=True)
    out = r.stdout + r.stderr
    print(out)
    bad = [l for l in out.splitlines() if l.split("|")[0].strip() in ("ERROR", "WARNING", "CRITICAL")]
    ok = (r.returncode == 0 and not bad and "compliant with FMI-2.0" in out
          and "No semantic error" in out)
    table("fmu-manipulation-toolbox", name, "check",
          "pass: fmutool -check: compliant, no semantic error" if ok else f"FAIL: {bad}")
    assert r.returncode == 0, out
    assert not bad, bad
    assert "compliant with FMI-2.0" in out and "No semantic error" in out


def build_container(name, tmp_path):
    """fmucontainer wraps the FMU in cont_<model>.fmu (auto inputs/outputs, the model's step)."""
    fmu = shipped_fmu(name)
    ex = Experiment(fmu)
    shutil.copyfile(fmu, tmp_path / f"{name}.fmu")
    desc = tmp_path / f"cont_{name}.csv"
    desc.write_text(f"rule;from_fmu;from_port;to_fmu;to_port\nFMU;{name}.fmu;;;\n")
    cmd = [tool("fmucontainer"), "-container", f"{desc.name}:{ex.h!r}", "-fmu-directory", str(tmp_path)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout + r.stderr)
    container = tmp_path / f"cont_{name}.fmu"
    assert r.returncode == 0 and container.is_file(), f"{cmd} failed:\n{r.stdout}{r.stderr}"
    with zipfile.ZipFile(container) as z:
        names = z.namelist()
    print(f"{container.name}: {sorted(names)}")
    assert f"binaries/linux64/cont_{name}.so" in names
    assert f"resources/00/binaries/linux64/{name}.so" in names
    return container


@pytest.mark.parametrize("name", SHIPPED)
def test_fmucontainer(name, table, tmp_path):
    """FMPy runs the container (whose native loader imports our FMU): equal to the direct run."""
    container = build_container(name, tmp_path)
    ex = Experiment(shipped_fmu(name))
    cex = Experiment(container)
    md = cex.md
    print(f"{container.name}: canGetAndSetFMUstate={md.coSimulation.canGetAndSetFMUstate}, "
          f"outputs {cex.outputs}")
    assert cex.outputs == ex.outputs
    imp = "fmu-manipulation-toolbox"
    table(imp, name, "get/set state",
          "n/a: container declares canGetAndSetFMUstate=false"
          if not md.coSimulation.canGetAndSetFMUstate else "not tested")
    # Extracted here and removed below: simulate_fmu leaves its own extraction behind when it
    # raises.
    unzipped = fmpy.extract(str(container))
    logger = LogRecorder()
    try:
        res = fmpy.simulate_fmu(unzipped, output_interval=ex.h, output=ex.outputs, logger=logger)
        run = Run("container", res["time"], np.column_stack([res[c] for c in ex.outputs]))
    finally:
        shutil.rmtree(unzipped, ignore_errors=True)
    print(f"container {name}: log lines above info: {logger.above_info}")
    table(imp, name, "simulate", f"pass: FMPy ran the container, {len(run)} rows")
    reaches_stop_time(imp, name, run, ex)
    assert [line for line in logger.above_info if not CONTAINER_BANNER.match(line[2])] == []
    compare(name, run, table, imp, check_sequence(name, run, table, imp))


# ---------------------------------------------------------------------------------------------
# libcosim (libcosimpy)


def libcosim_samples(observer, slave, vr, n):
    """cosim_observer_slave_get_real_samples called directly: libcosimpy 0.0.6's wrapper trims
    its result by counting step numbers equal to 0, which drops a real sample (step 0 is one)."""
    from libcosimpy._internal import libcosimc, wrap_function
    from libcosimpy.CosimObserver import CosimObserver

    f = wrap_function(
        lib=libcosimc(), funcname="cosim_observer_slave_get_real_samples",
        argtypes=[POINTER(CosimObserver), c_int, c_uint32, c_int64, c_size_t,
                  c_double * n, c_int64 * n, c_int64 * n],
        restype=c_int64,
    )
    vals, steps, times = (c_double * n)(), (c_int64 * n)(), (c_int64 * n)()
    got = f(observer.ptr(), slave, vr, 0, n, vals, steps, times)
    assert got >= 0, "cosim_observer_slave_get_real_samples failed"
    return list(times[:got]), list(steps[:got]), list(vals[:got])


@pytest.mark.parametrize("name", SHIPPED)
def test_libcosim(name, table):
    """libcosim imports the FMU, fixed-step execution at the default step, outputs from a time
    series observer."""
    from libcosimpy._internal import libcosimc
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave

    imp = "libcosim"
    fmu = shipped_fmu(name)
    ex = Experiment(fmu)
    log_output_level(CosimLogLevel.WARNING)
    h_ns = round(ex.h * 1e9)
    assert abs(h_ns / 1e9 - ex.h) <= 1e-15 * ex.h, "step not a whole number of nanoseconds"
    execution = CosimExecution.from_step_size(h_ns)
    slave = execution.add_local_slave(CosimLocalSlave(fmu_path=str(fmu), instance_name=name))
    assert slave >= 0, "add_local_slave failed"
    variables = {v.name.decode(): v.reference for v in execution.slave_variables(slave)}
    observer = CosimObserver.create_time_series()
    execution.add_observer(observer)
    for n in ex.outputs:
        assert observer.start_time_series(slave, variables[n], CosimVariableType.REAL)
    ok = execution.simulate_until(round(ex.t_end * 1e9))
    err = ""
    if not ok:
        get = libcosimc().cosim_last_error_message
        get.restype = c_char_p
        err = (get() or b"").decode()
    status = execution.status()
    print(f"libcosim {name}: simulate_until returned {ok}; status {status}; last error {err!r}")
    cols, times, steps = [], None, None
    for n in ex.outputs:
        t, st, v = libcosim_samples(observer, slave, variables[n], ex.n + 5)
        if times is None:
            times, steps = t, st
        assert t == times
        cols.append(v)
    assert steps == list(range(len(steps))), "samples are not steps 0, 1, 2, ..."
    run = Run("libcosim", [x / 1e9 for x in times], np.column_stack(cols))
    assert ok, err
    reaches_stop_time(imp, name, run, ex)
    table(imp, name, "simulate", f"pass: {len(run)} samples (steps 0..{steps[-1]})")
    table(imp, name, "check", "– (FMI Library logs one spurious error, see README)")
    table(imp, name, "get/set state", "n/a: not exposed by libcosimpy 0.0.6")
    compare(name, run, table, imp, check_sequence(name, run, table, imp))


# ---------------------------------------------------------------------------------------------
# Ecos (ecospy)


@pytest.mark.parametrize("name", SHIPPED)
def test_ecos(name, table):
    """Ecos imports the FMU (its own FMI loader), fixed-step simulation at the default step; the
    outputs are read after every step from a listener."""
    imp = "Ecos"
    try:
        from ecospy.EcosSimulation import EcosSimulation, SimulationListener
        from ecospy.EcosSimulationStructure import EcosSimulationStructure
        from ecospy.lib import EcosLib
    except OSError as e:  # libecosc.so needs libtbb.so.12 (Debian: libtbb12)
        table(imp, name, "simulate", f"FAIL: cannot load ecospy: {e}")
        pytest.fail(f"ecospy cannot be loaded: {e} (apt-get install -y libtbb12)")
    fmu = shipped_fmu(name)
    ex = Experiment(fmu)
    print(f"Ecos {EcosLib.version()}")
    EcosLib.set_log_level("warn")
    ss = EcosSimulationStructure()
    ss.add_model(name, str(fmu))
    sim = EcosSimulation(structure=ss, step_size=ex.h)
    ids = [f"{name}::{n}" for n in ex.outputs]
    times, rows = [], []

    class Listener(SimulationListener):
        def post(self, info):
            times.append(info.time)
            rows.append([sim.get_real(i) for i in ids])

    sim.add_listener("record", Listener())
    assert sim.init(ex.t0) is not False
    times.append(sim.get_time())
    rows.append([sim.get_real(i) for i in ids])
    for _ in range(ex.n):
        sim.step()
    t_final = sim.get_time()
    sim.terminate()
    sim.free()
    run = Run("Ecos", times, rows)
    print(f"Ecos {name}: {len(run)} rows, final time {t_final!r} (vs stop {ex.t_end!r})")
    table(imp, name, "simulate", f"pass: {len(run)} rows, final t {t_final!r}")
    table(imp, name, "check", "–")
    table(imp, name, "get/set state", "n/a: not exposed by ecospy 0.7.2")
    reaches_stop_time(imp, name, run, ex, rel=1e-12 * ex.n)
    compare(name, run, table, imp, check_sequence(name, run, table, imp))


# ---------------------------------------------------------------------------------------------
# fmi-sim (the Rust `fmi` crate family)


def fmi_sim():
    p = Path(os.environ.get("PLENUM_FMI_SIM", ROOT / "target" / "tools" / "bin" / "fmi-sim"))
    if not p.is_file():
        msg = (f"fmi-sim not found at {p}: run `bash compliance-tests/importers/install-fmi-sim.sh`"
               " (or set PLENUM_FMI_SIM)")
        if os.environ.get("PLENUM_IMPORTERS_REQUIRE_ALL") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return p



@pytest.mark.parametrize("name", SHIPPED)
def test_fmi_sim(name, table, tmp_path):
    """fmi-sim simulates the FMU in co-simulation at the default step; its CSV vs FMPy."""
    imp = "fmi-sim"
    exe = fmi_sim()
    fmu = shipped_fmu(name)
    ex = Experiment(fmu)
    out = tmp_path / "out.csv"
    cmd = fmi_sim_command(exe, fmu, ex, out)
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(" ".join(map(str, cmd)))
    log = [l for l in (r.stdout + r.stderr).splitlines() if not l.startswith("Recorded outputs")]
    print(f"exit code {r.returncode}; its output without the 'Recorded outputs at time' lines:")
    print("\n".join(log[-40:]))
    run = read_fmi_sim_csv(out, ex)
    table(imp, name, "simulate", f"exit {r.returncode}, {len(run)} rows to t={run.times[-1]:.6g}")
    table(imp, name, "check", "–")
    table(imp, name, "get/set state", "n/a: state-file options unimplemented in 0.7.0")
    assert r.returncode == 0
    reaches_stop_time(imp, name, run, ex)
    compare(name, run, table, imp, check_sequence(name, run, table, imp))


@pytest.mark.parametrize("name", SHIPPED)
def test_fmi_sim_fmi3(name, tmp_path):
    """fmi-sim runs the FMI 3.0 FMU of the same model (target/fmu3, `fmu-build --fmi-version 3`)
    in co-simulation at the default step; every row equals its run of the FMI 2.0 FMU to 1e-12
    of each output's largest magnitude (one core behind both interfaces)."""
    exe = fmi_sim()
    fmu2 = shipped_fmu(name)
    fmu3 = ROOT / "target" / "fmu3" / fmu2.name
    assert fmu3.is_file(), f"{fmu3} missing: run `target/debug/fmu-build models/*.toml -o target/fmu3 --fmi-version 3`"
    ex = Experiment(fmu2)
    # fmi-sim 0.7 reads FMI 3.0 descriptions with fmi-schema 0.8, which refuses attributes the
    # standard gives every Float64 (`unit`, `displayUnit`, `nominal`) and spells BaseUnit's `K`
    # in lower case; FMPy validates the same file against the standard's schema
    # (python/test_fmi3.py). The FMU as built must be refused for exactly that (so this
    # workaround is dropped when fmi-sim is fixed); a copy without that metadata, which no
    # co-simulation value depends on, is what fmi-sim runs.
    r = subprocess.run(fmi_sim_command(exe, fmu3, ex, tmp_path / "refused.csv"),
                       capture_output=True, text=True, env={**os.environ, "RUST_BACKTRACE": "0"})
    refusal = (r.stdout + r.stderr).strip().splitlines()[-1:]
    print(f"fmi-sim on the FMI 3.0 FMU as built: exit code {r.returncode}, {refusal}")
    assert r.returncode != 0 and re.fullmatch(
        r'Error: unknown field "(K|unit|nominal|displayUnit)" in element "\w+"', refusal[0])
    stripped = tmp_path / fmu3.name
    with zipfile.ZipFile(fmu3) as zin, zipfile.ZipFile(stripped, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "modelDescription.xml":
                xml = re.sub(r"\s*<UnitDefinitions>.*?</UnitDefinitions>", "", data.decode(),
                             flags=re.S)
                data = re.sub(r' (unit|displayUnit|nominal)="[^"]*"', "", xml).encode()
            zout.writestr(item, data)
    runs = {}
    for tag, fmu in (("fmi2", fmu2), ("fmi3", stripped)):
        out = tmp_path / f"{tag}.csv"
        cmd = fmi_sim_command(exe, fmu, ex, out)
        r = subprocess.run(cmd, capture_output=True, text=True)
        print(" ".join(map(str, cmd)), f"-> exit code {r.returncode}")
        if r.returncode != 0:
            print("\n".join((r.stdout + r.stderr).splitlines()[-20:]))
        assert r.returncode == 0
        runs[tag] = read_fmi_sim_csv(out, ex)
    a, b = runs["fmi2"], runs["fmi3"]
    assert a.values.shape == b.values.shape and np.array_equal(a.times, b.times)
    scale = np.abs(a.values).max(axis=0)
    scale[scale == 0.0] = 1.0
    worst = float((np.abs(a.values - b.values) / scale).max())
    print(f"fmi-sim {name}: FMI 3.0 vs FMI 2.0 co-simulation, {a.values.shape[0]} rows x "
          f"{a.values.shape[1]} "
          f"outputs, worst difference {worst:.1e} of the output's largest magnitude (limit 1e-12)")
    assert worst <= 1e-12


def fmi_sim_command(exe, fmu, ex, out):
    """fmi-sim 0.7: the model and the output file are options before the interface subcommand;
    `co-simulation --output-interval h` steps with communicationStepSize h (fmi-sim's CS loop:
    t_k = start + k·h, doStep(t_k, h), the outputs recorded at t_k before each step)."""
    return [exe, "--model", fmu, "--output-file", out, "co-simulation", "--output-interval", repr(ex.h)]


def read_fmi_sim_csv(path, ex):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = [h.strip().strip('"') for h in rows[0]]
    tcol = header.index("time")
    cols = [header.index(n) for n in ex.outputs]
    data = [[float(x) for x in r] for r in rows[1:] if r]
    return Run("fmi-sim", [d[tcol] for d in data], [[d[c] for c in cols] for d in data])
