"""Running the `plenum` CLI from the peer-agreement tests (docs/verification.md).

The tests build nothing themselves: `cargo build --bin plenum` (or `--release`) first. The binary
is `$PLENUM_BIN_DIR/plenum` when that is set, else the newer of target/release/plenum and
target/debug/plenum (under `$CARGO_TARGET_DIR` when set).
"""

import csv
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = Path(__file__).resolve().parent
MODELS = PEERS / "models"


def plenum_bin():
    env = os.environ.get("PLENUM_BIN_DIR")
    if env:
        p = Path(env) / "plenum"
        if not p.is_file():
            pytest.fail(f"PLENUM_BIN_DIR={env} holds no `plenum`")
        return p
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    found = [target / prof / "plenum" for prof in ("release", "debug")]
    found = [p for p in found if p.is_file()]
    if not found:
        pytest.fail("no target/{release,debug}/plenum: run `cargo build --bin plenum` first")
    return max(found, key=lambda p: p.stat().st_mtime)


def load_model(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


class UnknownMethod(Exception):
    pass


def run_csv(model, out_csv, method=None, sets=()):
    """`plenum run model --csv out_csv [--method M] [--set k=v]...`; returns the columns as a
    dict name -> list of floats. Raises UnknownMethod when this build lacks `method`."""
    cmd = [str(plenum_bin()), "run", str(model), "--csv", str(out_csv)]
    if method:
        cmd += ["--method", method]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        if "unknown method" in r.stderr:
            raise UnknownMethod(r.stderr.strip())
        pytest.fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    with open(out_csv, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    cols = {name: [float(row[i]) for row in body] for i, name in enumerate(header)}
    return cols, " ".join(cmd)
