"""Plenum's FMUs through a real importer: FMPy (docs/fmu.md; the FMI store/restore
procedure of FMUComplianceChecker, "Testing procedure for FMI 2.0 interface and setting/getting
state support").

Run from the workspace root; this file builds nothing itself, so build first:

    bash scripts/build-fmu-libs.sh                            # the shipped libraries
    cargo build --bins                                        # plenum, fmu-build
    target/debug/fmu-build models/*.toml -o target/fmu/       # the FMUs under test
    PY=$(bash scripts/python-env.sh)                          # venv at target/venv (FMPy, pytest)
    "$PY" -m pytest compliance-tests/python -v -rP            # -rP prints every asserted figure

(with `--release` / `target/release/...` the same way; both profiles give the same numbers).

Environment (all optional):
    PLENUM_FMUS     the FMUs to test, separated by ':' (files or directories holding *.fmu);
                    default target/fmu/*.fmu. Every model of models/*.toml must have one.
    PLENUM_BIN_DIR  directory with the `plenum` CLI and `fmu-build` used for the reference CSVs
                    and the variant FMUs (other integrators, the check models); default: the newer
                    of target/release and target/debug (honouring CARGO_TARGET_DIR).

Variant FMUs (the projectile with each integrator of src/integrators/mod.rs METHODS, and one
model per run-time check, docs/checks.md) are extracted-FMU directories: the
modified model as resources/model.toml, modelDescription.xml from `fmu-build --description-only`
on that file (so the GUID is its hash), and a copy of the .so inside the projectile FMU under
test. The CLI reference of a variant is `plenum run` on that same resources/model.toml.
"""

import csv
import math
import os
import re
import shutil
import struct
import subprocess
import tomllib
import zipfile
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import (
    FMU2Slave,
    fmi2Discard,
    fmi2False,
    fmi2LastSuccessfulTime,
    fmi2OK,
    fmi2Terminated,
    fmi2Warning,
)
from fmpy.validation import validate_fmu

import fmi_master

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted((ROOT / "models").glob("*.toml"))
STATUS = ["OK", "Warning", "Discard", "Error", "Fatal", "Pending"]
REL_TOL_CLI = 1e-12
AIR_CRITICAL_PRESSURE = 3.786e6


def plenum_methods():
    """{name: description} of every method of `plenum` (src/integrators/mod.rs, `METHODS`)
    except `auto` (an alias of rk4 today)."""
    src = (ROOT / "src" / "integrators" / "mod.rs").read_text()
    block = re.search(r"(?s)pub const METHODS: &\[\(&str, &str\)\] = &\[(.*?)\n\];", src)
    assert block, "no `pub const METHODS` in src/integrators/mod.rs"
    pairs = re.findall(r'\(\s*"([A-Za-z0-9_-]+)"\s*,\s*"([^"]*)"', block.group(1))
    names = [n for n, _ in pairs]
    assert "rk4" in names and "euler" in names, names
    return {n: d for n, d in pairs if n != "auto"}


METHOD_DESCRIPTIONS = plenum_methods()
METHODS = list(METHOD_DESCRIPTIONS)
# Adaptive methods (their description does not say "fixed step"): the FMU reaches each
# communication point by the same dense output as the CLI each output time, so the CLI equality
# is asserted bit for bit for them, not only to REL_TOL_CLI.
ADAPTIVE_METHODS = {m for m, d in METHOD_DESCRIPTIONS.items() if "fixed step" not in d}

# [solver] settings of the projectile variants that keep the suite quick in a debug build (the
# shipped file has step = 1e-6 s, output_interval = 1e-4 s). Adaptive methods ignore `step`, so
# it stays in their files, harmlessly. The fixed-step BDFs (a Newton solve per step) take
# 1e-5 s steps: 865 steps to the exit instead of 8648. Backward Euler (FONSim's control, h_min =
# 1e-4·span = 2e-6 s by default, 1083 steps) starts at h_min = 2e-5 s with h_max = 1e-4 s.
METHOD_SOLVER = {
    "backward-euler": {"initial_step": "2e-5", "max_step": "1e-4"},
    **{f"bdf{k}": {"step": "1e-5"} for k in range(1, 6)},
}
# Methods whose projectile run at the settings above drifts in energy beyond the default 1e-4
# (first-order methods): check 5 fires, so their doSteps may return fmi2Warning (the log line
# names check 5), which the state procedures allow and compare like any status.
WARNS_ENERGY_DRIFT = {"backward-euler", "bdf1"}


# ---------------------------------------------------------------------------------------------
# Locating the FMUs and the tools


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


def target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def find_tool(name):
    if "PLENUM_BIN_DIR" in os.environ:
        path = Path(os.environ["PLENUM_BIN_DIR"]) / name
        assert path.is_file(), f"{path} does not exist (PLENUM_BIN_DIR)"
        return path
    candidates = [target_dir() / p / name for p in ("release", "debug")]
    existing = [c for c in candidates if c.is_file()]
    assert existing, f"no {name} in {candidates}: run `cargo build --bins` first"
    return max(existing, key=lambda c: c.stat().st_mtime)


FMUS = find_fmus()
SHIPPED = {model_name(m): m for m in MODELS}


def shipped_fmu(name):
    assert name in FMUS, (
        f"no FMU for the shipped model {name!r} among {sorted(FMUS)}: run "
        f"`target/debug/fmu-build models/*.toml -o target/fmu/` (or set PLENUM_FMUS)"
    )
    return FMUS[name]


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("plenum-fmpy")


@pytest.fixture(scope="session")
def library(workdir):
    """The shared library inside the projectile FMU (all FMUs carry the same one)."""
    fmu = shipped_fmu("projectile")
    out = workdir / "libplenum.so"
    with zipfile.ZipFile(fmu) as z:
        out.write_bytes(z.read("binaries/linux64/projectile.so"))
    return out


def build_variant(workdir, library, label, toml_text):
    """A modified model as an extracted FMU (a directory, which FMPy loads like an .fmu):
    resources/model.toml holds the new text, modelDescription.xml comes from
    `fmu-build --description-only` on that very file (so its GUID is the new file's hash), and
    binaries/linux64/<model>.so is a copy of the library of the FMU under test. (Zipping the
    library again would take seconds per variant with a debug fmu-build.)"""
    d = workdir / label
    description = d / "modelDescription.xml"
    if description.exists():
        return d
    (d / "resources").mkdir(parents=True)
    model = d / "resources" / "model.toml"
    model.write_bytes(toml_text.encode())
    name = tomllib.loads(toml_text)["model"]["name"]
    cmd = [find_tool("fmu-build"), model, "--description-only", "-o", "-"]
    r = subprocess.run(cmd, capture_output=True)
    assert r.returncode == 0, f"{cmd} failed:\n{r.stderr.decode()}"
    (d / "binaries" / "linux64").mkdir(parents=True)
    shutil.copyfile(library, d / "binaries" / "linux64" / f"{name}.so")
    description.write_bytes(r.stdout)
    return d


def with_method(text, method):
    new, n = re.subn(r'(?m)^method\s*=\s*"[^"]*"', f'method = "{method}"', text)
    assert n == 1, "no `method = ...` line in the model"
    return new


def with_solver(text, settings):
    """Set `key = value` lines of [solver] (replaced where present, else added after `method`)."""
    for key, value in settings.items():
        text, n = re.subn(rf"(?m)^{key}\s*=.*$", f"{key} = {value}", text)
        if n == 0:
            text, n = re.subn(r'(?m)^(method\s*=\s*"[^"]*")$', rf"\1\n{key} = {value}", text)
        assert n == 1, f"cannot set solver.{key}"
    return text


def with_checks(text, settings):
    """Append a [checks] section (the shipped models have none)."""
    assert "[checks]" not in text
    lines = "".join(f"{k} = {v}\n" for k, v in settings.items())
    return f"{text.rstrip()}\n\n[checks]\n{lines}"


def renamed(text, old, new):
    """The model's name (in [model]) changed, so a variant's .so and identifier differ."""
    out, n = re.subn(rf'(?m)^(\[model\]\s*\nname = )"{old}"$', rf'\1"{new}"', text)
    assert n == 1
    return out


# (id, model name, method or None for the shipped file) for the state procedures.
CASES = [(n, n, None) for n in sorted(SHIPPED) if n != "projectile"] + [
    (f"projectile-{m}", "projectile", m) for m in METHODS
]


def case_model(workdir, library, name, method, solver=None):
    """(FMU, model file) of a case: the shipped pair, or a variant with `method` and the
    [solver] settings `solver` (default: those of METHOD_SOLVER)."""
    shipped = shipped_fmu(name)
    text = SHIPPED[name].read_text()
    if solver is None:
        solver = METHOD_SOLVER.get(method, {})
    if method is None or (re.search(rf'(?m)^method\s*=\s*"{method}"', text) and not solver):
        return shipped, SHIPPED[name]
    text = with_solver(with_method(text, method), solver)
    label = f"{name}-{method}" + "".join(f"-{k}={v}" for k, v in solver.items())
    d = build_variant(workdir, library, label, text)
    return d, d / "resources" / "model.toml"


def case_fmu(workdir, library, name, method):
    return case_model(workdir, library, name, method)[0]


def allowed_statuses(method):
    return (fmi2OK, fmi2Warning) if method in WARNS_ENERGY_DRIFT else (fmi2OK,)


def assert_step_statuses(s, rows, method, what):
    """Every status in `rows` is fmi2OK (or, for WARNS_ENERGY_DRIFT methods, fmi2Warning whose
    log lines all name check 5)."""
    statuses = [r[1] for r in rows]
    counts = {STATUS[st]: statuses.count(st) for st in sorted(set(statuses))}
    print(f"{what}: statuses {counts}")
    assert set(statuses) <= set(allowed_statuses(method)), counts
    warn = [m[2] for m in s.logs if m[0] == fmi2Warning]
    assert all("run-time check 5:" in w for w in warn), warn


# ---------------------------------------------------------------------------------------------
# A co-simulation master on FMPy's FMU2Slave


class Slave:
    """One FMU instance driven step by step, with its log lines collected."""

    def __init__(self, fmu_path, unzipdir, name="plenum"):
        self.md = read_model_description(fmu_path)
        self.logs = []
        cb = fmi_master.logging_callbacks(self.logs)
        self.callbacks = cb
        self.fmu = FMU2Slave(
            guid=self.md.guid,
            unzipDirectory=unzipdir,
            modelIdentifier=self.md.coSimulation.modelIdentifier,
            instanceName=name,
        )
        self.fmu.instantiate(callbacks=cb, loggingOn=True)
        self.outputs = [v for v in self.md.modelVariables if v.causality == "output"]
        self.vrs = [v.valueReference for v in self.outputs]
        self.names = [v.name for v in self.outputs]
        de = self.md.defaultExperiment
        self.t0 = float(de.startTime)
        self.t_end = float(de.stopTime)
        self.h = float(de.stepSize)
        self.n_total = round((self.t_end - self.t0) / self.h)
        self.freed = False

    def initialize(self):
        self.fmu.setupExperiment(startTime=self.t0, stopTime=self.t_end)
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()

    def t(self, k):
        return self.t0 + k * self.h

    def do_step(self, t, h):
        """fmi2DoStep's status (FMPy raises on Discard and worse; the status is the point here)."""
        try:
            return self.fmu.fmi2DoStep(self.fmu.component, t, h, fmi2False)
        except FMICallException as e:
            return e.status

    def values(self):
        return tuple(self.fmu.getReal(self.vrs))

    def run(self, k_from, k_to):
        """doStep from t(k_from) to t(k_to); rows (k, status, values) after each step. Stops at
        the first status other than OK/Warning (the row then holds the kept state)."""
        rows = []
        for k in range(k_from, k_to):
            status = self.do_step(self.t(k), self.t(k + 1) - self.t(k))
            rows.append((k + 1, status, self.values()))
            if status not in (fmi2OK, fmi2Warning):
                break
        return rows

    def notable_logs(self):
        """Log lines other than the per-call trace (category logCalls)."""
        return [m for m in self.logs if m[1] != "logCalls"]

    def free(self):
        if not self.freed:
            self.fmu.freeInstance()
            self.freed = True


@pytest.fixture
def slaves():
    """Factory of Slave objects, freed and with their unzip directories removed at the end."""
    with fmi_master.instances(Slave) as make:
        yield make


def bits(x):
    return struct.pack("<d", x).hex()


def assert_rows_identical(first, again, names, what):
    """Exact (bit for bit) equality of rows (k, status, values), with the first mismatch shown."""
    assert len(first) == len(again), f"{what}: {len(first)} rows vs {len(again)}"
    for (k1, s1, v1), (k2, s2, v2) in zip(first, again):
        assert (k1, s1) == (k2, s2), f"{what}: step {k1} status {s1} vs step {k2} status {s2}"
        for n, a, b in zip(names, v1, v2):
            assert bits(a) == bits(b), f"{what}: step {k1} {n}: {a!r} vs {b!r}"
    n_values = sum(len(r[2]) for r in first)
    print(f"{what}: {len(first)} rows, {n_values} values, all bit-identical")


# ---------------------------------------------------------------------------------------------
# Validation and plain simulation of every shipped model


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_validate_fmu(name):
    """fmpy.validation.validate_fmu finds no problem in the shipped FMU."""
    fmu = shipped_fmu(name)
    problems = validate_fmu(str(fmu))
    print(f"{fmu}: validate_fmu problems: {len(problems)}")
    for p in problems:
        print("  ", p)
    assert problems == []
    with zipfile.ZipFile(fmu) as z:
        names = sorted(z.namelist())
        toml = z.read("resources/model.toml")
    print(f"{fmu}: {names}")
    # The linux64 library is always there (this suite runs on Linux); the win64 DLL is there
    # when the build machine could cross-compile it (fmu-build's default: every platform it can
    # build). Nothing else may be in the archive.
    linux, win = f"binaries/linux64/{name}.so", f"binaries/win64/{name}.dll"
    assert linux in names
    assert set(names) <= {"modelDescription.xml", linux, win, "resources/model.toml"}
    assert "modelDescription.xml" in names and "resources/model.toml" in names
    with zipfile.ZipFile(fmu) as z:
        assert z.read(linux)[:4] == b"\x7fELF"
        if win in names:
            assert z.read(win)[:2] == b"MZ"
    assert toml == SHIPPED[name].read_bytes()


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_simulate_fmu_runs(name):
    """fmpy.simulate_fmu runs the shipped FMU to its stop time (the projectile too: its FMU ends
    the run at the exit only when the model file says stop_on_exit = true)."""
    fmu = shipped_fmu(name)
    md = read_model_description(fmu)
    h = float(md.defaultExperiment.stepSize)
    res = fmpy.simulate_fmu(str(fmu), output_interval=h)
    print(f"{name}: {len(res)} rows, t = {float(res['time'][0])!r} .. {float(res['time'][-1])!r}")
    for col in res.dtype.names[1:]:
        print(f"  {col:>20} final {float(res[col][-1])!r}")
        assert np.all(np.isfinite(res[col])), col
    assert len(res) > 2
    stop = float(md.defaultExperiment.stopTime)
    assert math.isclose(res["time"][-1], stop, rel_tol=1e-12)
    if name == "projectile":
        assert res["projectile.exited"][-1] == 1.0
    assert np.all(res["rc"] == 0.0)


# ---------------------------------------------------------------------------------------------
# Same numbers as the CLI


def run_cli(toml, method, csv_path):
    cmd = [find_tool("plenum"), "run", toml, "--csv", csv_path]
    if method is not None:
        cmd += ["--method", method]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, f"{cmd} failed:\n{r.stdout}\n{r.stderr}"
    with open(csv_path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    data = np.array([[float(x) for x in r] for r in rows[1:]])
    return header, data


def close_rel(a, b, rel):
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


@pytest.mark.parametrize("case,name,method", CASES, ids=[c[0] for c in CASES])
def test_simulate_fmu_matches_cli(case, name, method, workdir, library, tmp_path):
    """simulate_fmu with output_interval = the model's step gives the CLI's CSV (`plenum run` on
    the FMU's own model file) to 1e-12 relative in every column at every common time (bit for
    bit for the adaptive methods); every CLI row has an FMU row."""
    fmu, toml = case_model(workdir, library, name, method)
    compare_with_cli(case, fmu, toml, method, tmp_path)


def test_backward_euler_default_control_matches_cli(workdir, library, tmp_path):
    """The CLI comparison once for backward Euler with FONSim's default step range (h_min =
    1e-4·span, h_max = 1e-2·span; 1083 steps to the exit, ~2.7 s per run in a debug build), which
    the other procedures replace by METHOD_SOLVER's quicker settings."""
    fmu, toml = case_model(workdir, library, "projectile", "backward-euler", solver={})
    assert "initial_step" not in toml.read_text() and "max_step" not in toml.read_text()
    compare_with_cli("projectile-backward-euler-default", fmu, toml, "backward-euler", tmp_path)


def compare_with_cli(case, fmu, toml, method, tmp_path):
    header, cli = run_cli(toml, method, tmp_path / "cli.csv")
    md = read_model_description(fmu)
    h = float(md.defaultExperiment.stepSize)
    res = fmpy.simulate_fmu(str(fmu), output_interval=h)
    fmu_t = np.asarray(res["time"])
    assert header[0] == "time"
    missing = [c for c in header[1:] if c not in res.dtype.names]
    assert not missing, f"CLI columns not recorded from the FMU: {missing}"

    common, exit_rows = 0, 0
    worst = {c: 0.0 for c in header[1:]}
    exited = [i for i, c in enumerate(header) if c.endswith(".exited")]
    for k, row in enumerate(cli):
        t = row[0]
        j = int(np.argmin(np.abs(fmu_t - t)))
        if abs(fmu_t[j] - t) > 1e-12 * max(1.0, abs(t)):
            # The CLI's last row at a projectile's exit (it stops there by default), between two
            # communication points of an FMU that runs on.
            if k == len(cli) - 1 and any(row[i] == 1.0 for i in exited) and fmu_t[-1] > t:
                exit_rows += 1
            continue
        common += 1
        for i, col in enumerate(header[1:], start=1):
            a, b = row[i], float(res[col][j])
            if a != b:
                worst[col] = max(worst[col], abs(a - b) / max(abs(a), abs(b)))
            assert close_rel(a, b, REL_TOL_CLI), (
                f"t={t!r} {col}: CLI {a!r} vs FMU {b!r}"
            )
    print(
        f"{case}: CLI rows {len(cli)}, FMU rows {len(res)}, common times {common}, "
        f"last CLI t {float(cli[-1][0])!r}, last FMU t {float(fmu_t[-1])!r}"
    )
    differing = {c: w for c, w in worst.items() if w > 0.0}
    n_values = common * (len(header) - 1)
    if differing:
        for col, w in differing.items():
            print(f"  {col:>20}: max relative difference {w:.3e} (tolerance {REL_TOL_CLI:.0e})")
    else:
        print(f"  all {n_values} compared values equal exactly (tolerance {REL_TOL_CLI:.0e})")
    assert common + exit_rows == len(cli), f"only {common} of {len(cli)} CLI rows have an FMU row"
    if method in ADAPTIVE_METHODS:
        assert not differing, f"adaptive method {method}: the FMU is not bit for bit the CLI"


# ---------------------------------------------------------------------------------------------
# The FMI state procedures (docs/fmu.md): store/restore, multiple states, serialization into a
# fresh instance


@pytest.mark.parametrize("case,name,method", CASES, ids=[c[0] for c in CASES])
def test_store_restore_after_initialization(case, name, method, workdir, library, slaves):
    """getFMUstate right after exitInitializationMode, N doSteps logged, setFMUstate, the same
    N doSteps again: bit-identical results."""
    s = slaves(case_fmu(workdir, library, name, method))
    s.initialize()
    initial = s.values()
    state = s.fmu.getFMUstate()
    n = max(1, s.n_total // 10)
    first = s.run(0, n)
    s.fmu.setFMUstate(state)
    assert [bits(x) for x in s.values()] == [bits(x) for x in initial]
    again = s.run(0, n)
    s.fmu.freeFMUstate(state)
    print(f"{case}: N = {n} steps of h = {s.h!r} s")
    assert_step_statuses(s, first, method, f"{case} first {n} steps")
    assert_rows_identical(first, again, s.names, f"{case} restore to t0")


@pytest.mark.parametrize("case,name,method", CASES, ids=[c[0] for c in CASES])
def test_multiple_states(case, name, method, workdir, library, slaves):
    """States at 10 % and 20 %, run to 30 %; restore the 20 % state and rerun to 30 %, then the
    10 % state and rerun to 30 %: bit-identical to the first run in 20-30 % (and 10-30 %)."""
    s = slaves(case_fmu(workdir, library, name, method))
    s.initialize()
    k1, k2, k3 = s.n_total // 10, s.n_total // 5, 3 * s.n_total // 10
    s.run(0, k1)
    s1 = s.fmu.getFMUstate()
    first_12 = s.run(k1, k2)
    s2 = s.fmu.getFMUstate()
    first_23 = s.run(k2, k3)
    print(f"{case}: k = {k1}, {k2}, {k3} of {s.n_total} (t = {s.t(k1)!r}, {s.t(k2)!r}, {s.t(k3)!r})")
    assert_step_statuses(s, first_12 + first_23, method, f"{case} 10-30 %")

    s.fmu.setFMUstate(s2)
    assert_rows_identical(first_23, s.run(k2, k3), s.names, f"{case} state 2 (20-30 %)")
    s.fmu.setFMUstate(s1)
    again_13 = s.run(k1, k3)
    assert_rows_identical(first_12 + first_23, again_13, s.names, f"{case} state 1 (10-30 %)")
    s.fmu.freeFMUstate(s1)
    s.fmu.freeFMUstate(s2)


@pytest.mark.parametrize("case,name,method", CASES, ids=[c[0] for c in CASES])
def test_serialize_into_fresh_instance(case, name, method, workdir, library, slaves, tmp_path):
    """Full run once; a second instance runs to 10 %, serializes its state to a file and is
    freed; a third, instantiated from scratch, deserializes the file, sets the state and runs
    to the end: bit-identical to the full run."""
    fmu = case_fmu(workdir, library, name, method)
    full = slaves(fmu, "full")
    full.initialize()
    full_rows = full.run(0, full.n_total)
    full.free()

    a = slaves(fmu, "before")
    a.initialize()
    k1 = a.n_total // 10
    a.run(0, k1)
    at_k1 = a.values()
    state = a.fmu.getFMUstate()
    blob = a.fmu.serializeFMUstate(state)
    a.fmu.freeFMUstate(state)
    a.free()
    path = tmp_path / "state.bin"
    path.write_bytes(blob)

    b = slaves(fmu, "after")
    b.initialize()
    restored = b.fmu.deSerializeFMUstate(path.read_bytes())
    b.fmu.setFMUstate(restored)
    b.fmu.freeFMUstate(restored)
    assert [bits(x) for x in b.values()] == [bits(x) for x in at_k1], "values right after restore"
    rest = b.run(k1, b.n_total)
    last = full_rows[-1]
    print(
        f"{case}: serialized at k = {k1} (t = {a.t(k1)!r}), {len(blob)} bytes; full run "
        f"{len(full_rows)} steps ending with status {STATUS[last[1]]} at step {last[0]}"
    )
    assert_rows_identical(full_rows[k1:], rest, b.names, f"{case} deserialized in a fresh instance")


# ---------------------------------------------------------------------------------------------
# Run-time checks as the master sees them (docs/checks.md)


@pytest.mark.parametrize("method", METHODS)
def test_projectile_exit_discards_and_terminates(method, workdir, library, slaves, tmp_path):
    """With `stop_on_exit = true` in the model file, the doStep that crosses the exit returns
    fmi2Discard, fmi2Terminated is true and fmi2LastSuccessfulTime is the CLI's exit time
    (1e-12 relative)."""
    solver = {**METHOD_SOLVER.get(method, {}), "stop_on_exit": "true"}
    fmu, toml = case_model(workdir, library, "projectile", method, solver=solver)
    header, cli = run_cli(toml, method, tmp_path / "cli.csv")
    exited = cli[:, header.index("projectile.exited")]
    cli_exit = float(cli[int(np.argmax(exited == 1.0)), 0])
    assert exited[-1] == 1.0, "the CLI run never exited"

    s = slaves(fmu)
    s.initialize()
    rows = s.run(0, s.n_total)
    assert_step_statuses(s, rows[:-1], method, f"projectile-{method} before the exit")
    k, status, values = rows[-1]
    terminated = s.fmu.getBooleanStatus(fmi2Terminated)
    last_t = s.fmu.getRealStatus(fmi2LastSuccessfulTime)
    x = values[s.names.index("projectile.x")]
    logs = [m for m in s.notable_logs() if m[0] != fmi2Warning]
    n_warn = len(s.notable_logs()) - len(logs)
    print(
        f"projectile-{method}: step {k} (t {s.t(k - 1)!r} -> {s.t(k)!r}) returned "
        f"{STATUS[status]}; terminated {terminated}; LastSuccessfulTime {last_t!r}; CLI exit "
        f"{cli_exit!r} (difference {last_t - cli_exit:.3e}); x {x!r}; logs {logs} and "
        f"{n_warn} warning lines"
    )
    assert status == fmi2Discard
    assert terminated is True
    assert s.t(k - 1) < last_t < s.t(k)
    assert close_rel(last_t, cli_exit, REL_TOL_CLI)
    assert values[s.names.index("projectile.exited")] == 1.0


def check_lines(s, code, status):
    """The master's log lines of `status` that name run-time check `code`."""
    return [m[2] for m in s.logs if m[0] == status and f"run-time check {code}:" in m[2]]


def assert_discard_at_previous_point(s, code, label, watched):
    """Codes 2 and 3 (docs/checks.md): run doSteps until one is refused. It returns fmi2Discard,
    fmi2LastSuccessfulTime is the previous communication point, every output but `rc` is that
    of the previous point bit for bit, `rc` reads `code`, the run is not terminated, and the
    logger got a Discard line naming the code. `watched` outputs are printed."""
    s.initialize()
    rows = s.run(0, s.n_total)
    k, status, values = rows[-1]
    assert len(rows) > 1, "the very first step already failed: no previous point to check"
    before = rows[-2][2]
    last_t = s.fmu.getRealStatus(fmi2LastSuccessfulTime)
    terminated = s.fmu.getBooleanStatus(fmi2Terminated)
    irc = s.names.index("rc")
    lines = check_lines(s, code, fmi2Discard)
    figures = ", ".join(f"{n} {values[s.names.index(n)]!r}" for n in watched)
    print(
        f"{label} (check {code}): step {k} (t {s.t(k - 1)!r} -> {s.t(k)!r}) returned "
        f"{STATUS[status]} after {len(rows) - 1} OK steps; LastSuccessfulTime {last_t!r}; "
        f"terminated {terminated}; rc before {before[irc]!r}, after {values[irc]!r}; kept "
        f"{figures}; log {lines}"
    )
    assert status == fmi2Discard
    assert all(r[1] == fmi2OK for r in rows[:-1])
    assert abs(last_t - s.t(k - 1)) <= 1e-12 * max(1.0, abs(last_t))
    assert terminated is False
    assert values[irc] == float(code)
    kept = [bits(x) for i, x in enumerate(values) if i != irc]
    assert kept == [bits(x) for i, x in enumerate(before) if i != irc], "state moved on a Discard"
    assert lines, f"no Discard log line naming check {code}: {s.notable_logs()}"
    return values


def run_with_warnings(s, code, label):
    """Codes 4, 5, 8, 9 (docs/checks.md): fmi2Warning, a log line naming the code once per episode
    (the first doStep of a run of Warning steps), and the run goes on. Runs every doStep to the
    stop time (or to the projectile's exit, fmi2Discard with fmi2Terminated); returns (statuses,
    rows, the outputs after initialization)."""
    s.fmu.setupExperiment(startTime=s.t0, stopTime=s.t_end)
    s.fmu.enterInitializationMode()
    status_init = s.fmu.fmi2ExitInitializationMode(s.fmu.component)
    initial = s.values()
    rows = s.run(0, s.n_total)
    statuses = [r[1] for r in rows]
    warned = [r[0] for r in rows if r[1] == fmi2Warning]
    lines = check_lines(s, code, fmi2Warning)
    other = [m[2] for m in s.logs if m[0] != fmi2OK and f"run-time check {code}:" not in m[2]]
    k_last, st_last, _ = rows[-1]
    print(
        f"{label} (check {code}): exitInitializationMode {STATUS[status_init]} (rc then "
        f"{initial[s.names.index('rc')]!r}); {len(rows)} "
        f"doSteps of h = {s.h!r} s: {statuses.count(fmi2OK)} OK, {len(warned)} Warning "
        f"(first at step {warned[0] if warned else None}, last {warned[-1] if warned else None}), "
        f"last step {k_last} (t = {s.t(k_last)!r}) {STATUS[st_last]}; "
        f"{len(lines)} warning lines naming check {code}, the first: {lines[:1]}"
    )
    assert status_init in (fmi2OK, fmi2Warning)
    assert warned, f"no doStep returned fmi2Warning; log {s.notable_logs()}"
    assert all(st in (fmi2OK, fmi2Warning) for st in statuses[:-1])
    # Episodes: runs of consecutive Warning steps. Each starts with one line, not one per step.
    episodes = sum(1 for i, k in enumerate(warned) if i == 0 or warned[i - 1] != k - 1)
    print(f"{episodes} episode(s) of Warning steps, {len(lines)} line(s)")
    assert len(lines) == episodes, "not one log line per episode of Warning steps"
    assert not [m for m in other if "run-time check" in m], f"other checks fired: {other}"
    assert warned[0] < k_last, "the run did not go on after the first warning"
    return statuses, rows, initial


PROJECTILE_A = 1.1309733552923255e-4  # models/projectile.toml piston area, m^2


def test_check_1_never_exited_terminates_at_max_time(workdir, library, slaves):
    """Check 1: the projectile with max_time = 2.05 ms (it exits at 8.65 ms): the doStep over
    max_time returns fmi2Discard, fmi2Terminated is true, fmi2LastSuccessfulTime is max_time,
    `rc` reads 1, the projectile has not exited, and the logger got a line naming check 1."""
    max_time = 0.00205
    text = SHIPPED["projectile"].read_text()
    text, n = re.subn(r"(?m)^max_time = .*$", f"max_time = {max_time}", text)
    assert n == 1
    s = slaves(build_variant(workdir, library, "never_exited", text))
    s.initialize()
    rows = s.run(0, s.n_total)
    k, status, values = rows[-1]
    last_t = s.fmu.getRealStatus(fmi2LastSuccessfulTime)
    terminated = s.fmu.getBooleanStatus(fmi2Terminated)
    lines = check_lines(s, 1, fmi2Discard)
    get = lambda n: values[s.names.index(n)]  # noqa: E731
    print(
        f"never_exited (check 1): max_time {max_time!r}; step {k} (t {s.t(k - 1)!r} -> "
        f"{s.t(k)!r}) returned {STATUS[status]} after {len(rows) - 1} OK steps; terminated "
        f"{terminated}; LastSuccessfulTime {last_t!r}; rc {get('rc')!r}; x {get('projectile.x')!r} "
        f"(exit at 0.6); exited {get('projectile.exited')!r}; log {lines}"
    )
    assert status == fmi2Discard
    assert all(r[1] == fmi2OK for r in rows[:-1])
    assert s.t(k - 1) < max_time <= s.t(k)
    assert terminated is True
    assert close_rel(last_t, max_time, REL_TOL_CLI)
    assert get("rc") == 1.0
    assert get("projectile.exited") == 0.0 and get("projectile.x") < 0.6
    assert lines, f"no Discard log line naming check 1: {s.notable_logs()}"


NEGATIVE_MASS_MODEL = """
# A 1 cm3 chamber at 10 bar behind a linear valve that opens fully at 1 ms, K = 1e-3 kg/(s Pa),
# Euler with a 0.1 ms step: the first step after the opening takes ~0.09 kg from a chamber that
# holds 1.2e-5 kg (run-time check 2). Before it the valve is shut and nothing moves.
[model]
name = "negative_mass"
description = "Tiny chamber, huge valve opened at 1 ms: Euler goes negative in mass"

[gas]
species = "air"

[solver]
method = "euler"
step = 1e-4
t_end = 0.01
output_interval = 1e-4

[[chamber]]
name = "tank"
volume = 1e-6
pressure = 1e6
temperature = 300.0

[[reservoir]]
name = "atm"
pressure = 101325.0
temperature = 300.0

[[valve]]
name = "vent"
from = "tank"
to = "atm"
coefficient = 1e-3
opening = { table = [[0.0, 0.0], [0.001, 1.0]], interpolation = "step" }
"""


def test_check_2_negative_mass_discards_at_previous_point(workdir, library, slaves):
    """Check 2: the doStep that would make a mass negative returns fmi2Discard, the state stays
    at the previous communication point (outputs bit-identical, `rc` = 2), and
    fmi2LastSuccessfulTime says so."""
    s = slaves(build_variant(workdir, library, "negative_mass", NEGATIVE_MASS_MODEL))
    values = assert_discard_at_previous_point(s, 2, "negative_mass", ["tank.m", "tank.p"])
    assert values[s.names.index("tank.m")] > 0.0


NEGATIVE_TEMPERATURE_MODEL = """
# A 1 cm3 chamber of air at 1 bar whose lid (a wall of 1 cm2) is pulled outward at 1000 m/s
# from 1 ms on. Euler with a 0.1 ms step: the first step after 1 ms does -p·A·v·h = -1 J of
# work on gas holding U = 0.25 J, while its mass stays (run-time check 3, not 2).
[model]
name = "negative_temperature"
description = "A lid pulled outward at 1000 m/s from 1 ms: Euler goes negative in energy"

[gas]
species = "air"

[solver]
method = "euler"
step = 1e-4
t_end = 0.01
output_interval = 1e-4

[[chamber]]
name = "gas"
volume = 1e-6
pressure = 1e5
temperature = 300.0

[[reservoir]]
name = "outside"
pressure = 1e5
temperature = 300.0

[[wall]]
name = "lid"
left = "gas"
right = "outside"
area = 1e-4
velocity = { table = [[0.0, 0.0], [0.001, 1000.0]], interpolation = "step" }
"""


def test_check_3_negative_temperature_discards_at_previous_point(workdir, library, slaves):
    """Check 3: the doStep that would make an internal energy (temperature) negative returns
    fmi2Discard with the state kept at the previous communication point, as check 2."""
    s = slaves(build_variant(workdir, library, "negative_temperature", NEGATIVE_TEMPERATURE_MODEL))
    values = assert_discard_at_previous_point(
        s, 3, "negative_temperature", ["gas.T", "gas.U", "gas.V", "gas.m"]
    )
    assert values[s.names.index("gas.T")] > 0.0


def test_check_4_mass_drift_warns(workdir, library, slaves):
    """Check 4: the blowdown with [checks] mass_drift = 1e-18, below the round-off of its mass
    balance: fmi2Warning from the doSteps where the drift exceeds it, a log line naming check 4
    each time, and the run reaches its stop time."""
    text = with_checks(renamed(SHIPPED["blowdown"].read_text(), "blowdown", "blowdown_md"),
                       {"mass_drift": "1e-18"})
    s = slaves(build_variant(workdir, library, "mass_drift", text))
    statuses, rows, initial = run_with_warnings(s, 4, "blowdown, mass_drift = 1e-18")
    im = s.names.index("mass_total")
    first = next(i for i, st in enumerate(statuses) if st == fmi2Warning)
    drifts = [abs(r[2][im] / initial[im] - 1.0) for r in rows]
    print(
        f"  |mass_total / mass_total(t0) - 1| at the doStep ends: at the first warning (step "
        f"{rows[first][0]}) {drifts[first]:.3e}, largest {max(drifts):.3e}, at the end "
        f"{drifts[-1]:.3e} (threshold 1e-18; the check sees every internal step)"
    )
    assert math.isclose(s.t(rows[-1][0]), s.t_end, rel_tol=1e-12)
    assert statuses[-1] in (fmi2OK, fmi2Warning)


def test_check_5_energy_drift_warns(workdir, library, slaves):
    """Check 5: the projectile with Euler (h = 1e-6 s) and [checks] energy_drift = 1e-6: Euler's
    energy drift exceeds it from the first doStep on; each doStep returns fmi2Warning with a log
    line naming check 5, and the run goes on to the exit (fmi2Discard, fmi2Terminated)."""
    # stop_on_exit: the run ends at the exit (the FMU's default is to run on: docs/fmu.md).
    text = with_checks(
        renamed(with_solver(with_method(SHIPPED["projectile"].read_text(), "euler"),
                            {"stop_on_exit": "true"}), "projectile", "projectile_ed"),
        {"energy_drift": "1e-6"},
    )
    s = slaves(build_variant(workdir, library, "energy_drift", text))
    statuses, rows, initial = run_with_warnings(s, 5, "projectile euler, energy_drift = 1e-6")
    ie = s.names.index("energy_total")
    drifts = [abs(r[2][ie] / initial[ie] - 1.0) for r in rows]
    print(
        f"  |energy_total / energy_total(t0) - 1|: after step 1 {drifts[0]:.3e}, at the exit "
        f"(step {rows[-1][0]}) {drifts[-1]:.3e}, largest {max(drifts):.3e} (threshold 1e-6)"
    )
    assert drifts[0] > 1e-6
    assert statuses[-1] == fmi2Discard and s.fmu.getBooleanStatus(fmi2Terminated) is True
    assert rows[-1][2][s.names.index("projectile.exited")] == 1.0


def test_check_8_critical_pressure_warns(workdir, library, slaves):
    """Check 8: the blowdown tank at 5 MPa (> 3.786 MPa, air's critical pressure): fmi2Warning
    from every doStep while the pressure is above it (exitInitializationMode may say OK or
    Warning; it is printed), each with a log line naming check 8; the run goes on to its stop
    time, and the warnings stop once the pressure has fallen below p_c."""
    text = SHIPPED["blowdown"].read_text()
    text, n = re.subn(r"(?m)^pressure = 1e6$", "pressure = 5e6", text)
    assert n == 1
    text = renamed(text, "blowdown", "blowdown_supercritical")
    s = slaves(build_variant(workdir, library, "supercritical", text))
    statuses, rows, initial = run_with_warnings(s, 8, "blowdown at 5 MPa")
    ip = s.names.index("tank.p")
    last_warn = max(i for i, st in enumerate(statuses) if st == fmi2Warning)
    p_last_warn = rows[last_warn][2][ip]
    p_next = rows[last_warn + 1][2][ip]
    print(
        f"  tank.p at the last warning step {rows[last_warn][0]}: {p_last_warn!r} Pa, at the "
        f"next {p_next!r} Pa (p_c = {AIR_CRITICAL_PRESSURE} Pa); rc at the end "
        f"{rows[-1][2][s.names.index('rc')]!r}"
    )
    assert initial[ip] > AIR_CRITICAL_PRESSURE
    assert statuses[0] == fmi2Warning
    # The check is on the states accepted inside the step (the step's end may already be
    # below p_c), so the step before the last warning ended above p_c.
    if last_warn > 0:
        assert rows[last_warn - 1][2][ip] > AIR_CRITICAL_PRESSURE
    assert p_next < AIR_CRITICAL_PRESSURE
    assert all(st == fmi2OK for st in statuses[last_warn + 1:])
    assert math.isclose(s.t(rows[-1][0]), s.t_end, rel_tol=1e-12)


def test_check_9_piston_desync_warns(workdir, library, slaves):
    """Check 9: the projectile (rk4) with [checks] piston_desync = 1e-30 m, below the round-off
    between the volume state and A·x: fmi2Warning with a log line naming check 9, and the run
    goes on to the exit (fmi2Discard, fmi2Terminated)."""
    text = with_checks(renamed(with_solver(SHIPPED["projectile"].read_text(),
                                           {"stop_on_exit": "true"}), "projectile", "projectile_ds"),
                       {"piston_desync": "1e-30"})
    s = slaves(build_variant(workdir, library, "piston_desync", text))
    statuses, rows, _ = run_with_warnings(s, 9, "projectile rk4, piston_desync = 1e-30")
    iv, ix = s.names.index("barrel.V"), s.names.index("projectile.x")
    gaps = [abs(r[2][iv] - PROJECTILE_A * r[2][ix]) / PROJECTILE_A for r in rows]
    print(
        f"  |barrel.V − A·x| / A over the doSteps (outputs, recomputed here): largest "
        f"{max(gaps):.3e} m, at the exit {gaps[-1]:.3e} m (threshold 1e-30 m; default 1e-12 m)"
    )
    assert statuses[-1] == fmi2Discard and s.fmu.getBooleanStatus(fmi2Terminated) is True
    assert rows[-1][2][s.names.index("projectile.exited")] == 1.0


# ---------------------------------------------------------------------------------------------
# fmi2GetDirectionalDerivative (docs/derivatives.md): exact partial derivatives of the outputs
# with respect to the inputs at the current instant, against central differences through fmi2SetReal /
# fmi2GetReal, and the ModelStructure dependencies that say which are structurally nonzero.

DD_INPUTS = [
    "atm.pressure",
    "atm.temperature",
    "nozzle.area",
    "nozzle.discharge_coefficient",
    "feed.coefficient",
    "feed.opening",
    "membrane.heat_transfer_coefficient",
    "slug.damping",
]


def directional_variant(workdir, library):
    text = (ROOT / "tests" / "fixtures" / "models" / "all_kinds.toml").read_text()
    names = ", ".join(f'"{n}"' for n in DD_INPUTS)
    text, n = re.subn(r'(?m)^names = \["atm.pressure"\]$', f"names = [{names}]", text)
    assert n == 1
    # The supply above the tank, so the one-way feed valve flows and its derivatives are not 0.
    text = text.replace("[[0.0, 2e5], [0.005, 3e5]]", "[[0.0, 6e5], [0.005, 7e5]]")
    # Inputs are constants the master sets: the feed's opening table becomes a number.
    text, n = re.subn(r"(?m)^opening = \{ table = .*$", "opening = 0.5", text)
    assert n == 1
    return build_variant(workdir, library, "directional", text)


def test_directional_derivatives_match_central_differences(workdir, library, slaves):
    d = directional_variant(workdir, library)
    s = slaves(d, "directional")
    md = s.md
    assert md.coSimulation.providesDirectionalDerivative
    by_name = {v.name: v for v in md.modelVariables}
    index_of = {v.name: i + 1 for i, v in enumerate(md.modelVariables)}
    inputs = [by_name[n] for n in DD_INPUTS]
    outputs = [v for v in s.outputs if v.name not in ("rc",) and not v.name.endswith(".exited")]
    # The outputs' dependencies on inputs (ModelStructure lists the continuous states too, the
    # knowns of Model Exchange).
    deps = {
        u.variable.name: {index_of[x.name] for x in u.dependencies if x.causality == "input"}
        for u in md.outputs
    }
    s.initialize()
    rows = s.run(0, 30)
    assert all(st in (fmi2OK, fmi2Warning) for _, st, _ in rows)
    o_vrs = [v.valueReference for v in outputs]
    nonzero, worst, pairs = 0, 0.0, set()
    for inp in inputs:
        vr = inp.valueReference
        exact = s.fmu.getDirectionalDerivative(o_vrs, [vr], [1.0])
        x = s.fmu.getReal([vr])[0]
        h = 1e-6 * abs(x) if x != 0.0 else 1e-9
        s.fmu.setReal([vr], [x + h])
        up = s.fmu.getReal(o_vrs)
        # At 0 (the slug's damping, whose rule is >= 0: x - h is refused), a forward difference.
        lo = x - h if x != 0.0 else x
        s.fmu.setReal([vr], [lo])
        down = s.fmu.getReal(o_vrs)
        s.fmu.setReal([vr], [x])
        for v, e, a, b in zip(outputs, exact, up, down):
            fd = (a - b) / (x + h - lo)
            listed = index_of[inp.name] in deps[v.name]
            if e != 0.0 or fd != 0.0:
                rel = abs(e - fd) / max(abs(e), abs(fd))
                print(f"d {v.name} / d {inp.name}: exact {e:.12e}  central {fd:.12e}  rel {rel:.1e}")
                assert listed, f"{v.name} depends on {inp.name} but ModelStructure omits it"
                assert rel <= 1e-6, (v.name, inp.name, e, fd)
                worst = max(worst, rel)
                nonzero += 1
                pairs.add((v.name, inp.name))
    # A combined direction is the sum of the single ones (linearity of the derivative).
    dirs = [1.0 + k for k in range(len(inputs))]
    combined = s.fmu.getDirectionalDerivative(o_vrs, [v.valueReference for v in inputs], dirs)
    singles = [s.fmu.getDirectionalDerivative(o_vrs, [v.valueReference], [1.0]) for v in inputs]
    for j, v in enumerate(outputs):
        total = sum(dirs[k] * singles[k][j] for k in range(len(inputs)))
        assert abs(combined[j] - total) <= 1e-12 * max(abs(total), 1e-300), v.name
    print(f"{nonzero} nonzero partial derivatives, worst relative difference {worst:.1e} (limit 1e-6)")
    # The flows of the nozzle and of the feed valve, each against its two parameters; the feed's
    # opening fraction against its opening; the membrane's heat flow Q = h·A·(T_atm - T_tank)
    # against h and the atmosphere's temperature. Nothing else.
    assert pairs == {
        ("nozzle.mdot", "nozzle.area"),
        ("nozzle.mdot", "nozzle.discharge_coefficient"),
        ("feed.mdot", "feed.coefficient"),
        ("feed.mdot", "feed.opening"),
        ("feed.open_fraction", "feed.opening"),
        ("membrane.Q", "membrane.heat_transfer_coefficient"),
        ("membrane.Q", "atm.temperature"),
    }, pairs
    # No output depends on every input; state outputs on none.
    assert all(len(deps[v.name]) < len(inputs) for v in outputs)
    assert deps["tank.p"] == set() and deps["slug.v"] == set()


def test_directional_derivative_through_a_reservoir_input(slaves):
    """The shipped blowdown: the nozzle's flow against the atmosphere's pressure (an input), 0
    while choked, then as subsonic flow. Central differences at h = 1e-6·p. (Once the tank has
    equalized, about 1.5 s, its pressure is within h of the atmosphere's: the flow reverses
    inside the difference, and the upstream temperature switches, a branch point.)"""
    s = slaves(shipped_fmu("blowdown"), "blowdown-dd")
    by_name = {v.name: v for v in s.md.modelVariables}
    mdot, p_atm = by_name["nozzle.mdot"].valueReference, by_name["atm.pressure"].valueReference
    s.initialize()
    subsonic = 0
    k = 0
    for k_to in (20, 60, 100):
        rows = s.run(k, k_to)
        k = k_to
        assert all(st in (fmi2OK, fmi2Warning) for _, st, _ in rows)
        (e,) = s.fmu.getDirectionalDerivative([mdot], [p_atm], [1.0])
        x = s.fmu.getReal([p_atm])[0]
        h = 1e-6 * x
        s.fmu.setReal([p_atm], [x + h])
        (a,) = s.fmu.getReal([mdot])
        s.fmu.setReal([p_atm], [x - h])
        (b,) = s.fmu.getReal([mdot])
        s.fmu.setReal([p_atm], [x])
        fd = (a - b) / (2 * h)
        scale = max(abs(e), abs(fd))
        rel = abs(e - fd) / scale if scale > 0 else 0.0
        print(f"t = {s.t(k):.2f} s: d nozzle.mdot / d atm.pressure exact {e:.12e} central {fd:.12e} rel {rel:.1e}")
        assert rel <= 1e-6
        subsonic += e != 0.0
    assert subsonic >= 1, "the flow never became subsonic"
