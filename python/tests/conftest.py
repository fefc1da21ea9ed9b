"""Shared fixtures of the Python package's tests (python/tests), run by python/tests/run.sh
against the wheel installed into a fresh venv, never the source tree."""

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted((ROOT / "models").glob("*.toml"))
PEER_MODELS = sorted((ROOT / "compliance-tests" / "peers" / "models").glob("*.toml"))
EXAMPLES = sorted((ROOT / "examples").glob("*/model.toml"))


def pytest_configure(config):
    import plenum

    where = Path(plenum.__file__).resolve()
    # The package under test is the installed wheel, not python/plenum of the source tree.
    assert ROOT / "python" not in where.parents, f"plenum imported from the source tree: {where}"
    print(f"plenum {plenum.__version__} from {where.parent}", file=sys.stderr)


def plenum_command():
    """The wheel's console entry point `plenum` in this venv."""
    exe = Path(sys.executable).parent / "plenum"
    assert exe.is_file(), f"{exe}: the wheel's `plenum` command is missing"
    return str(exe)


def read_csv(path):
    """A CSV of `plenum run --csv` as (names, rows of floats)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(x) for x in r] for r in rows[1:]]


def cli_run(command, model, tmp_path, sets=(), method=None):
    """`plenum run MODEL --csv` with a command line: (names, rows, completed process)."""
    out = tmp_path / f"cli-{Path(model).stem}-{os.getpid()}.csv"
    args = [command, "run", str(model), "--csv", str(out), "--quiet"]
    for s in sets:
        args += ["--set", s]
    if method:
        args += ["--method", method]
    p = subprocess.run(args, capture_output=True, text=True)
    names, rows = read_csv(out) if out.is_file() else ([], [])
    return names, rows, p


@pytest.fixture(scope="session")
def repo_cli():
    """The repository's own build of the command line (PLENUM_BIN), if there is one."""
    p = os.environ.get("PLENUM_BIN")
    if p and Path(p).is_file():
        return p
    for prof in ("debug", "release"):
        c = ROOT / "target" / prof / "plenum"
        if c.is_file():
            return str(c)
    return None


@pytest.fixture(scope="session")
def have_rust():
    return shutil.which("cargo") is not None
