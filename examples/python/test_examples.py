"""The FMPy workflow: simulate.py (FMPy, parameters, a plot), asserted against the command line.
(sweep.py runs on the Python package `plenum`: python/tests/test_sweep.py, against the wheel.)
Run from the workspace root after `cargo build --workspace`:

    PY=$(bash scripts/python-env.sh) && "$PY" -m pytest examples -q -rA
"""

import csv
import os
import subprocess

import sys

import numpy as np
from conftest import BIN, ROOT

sys.path.insert(0, str(ROOT / "examples" / "python"))
import simulate  # noqa: E402

SETS = ["chamber.pressure=9e5", "projectile.x_exit=0.4"]


def cli_rows(model, sets, tmp_path):
    out = tmp_path / "cli.csv"
    args = [os.environ.get("PLENUM_BIN", str(BIN / "plenum")), "run", str(model), "--csv", str(out)]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def test_simulate_sets_parameters_plots_and_equals_the_cli(airgun_fmu, tmp_path):
    png = tmp_path / "airgun.png"
    md, res = simulate.main([str(airgun_fmu), "--plot", str(png), *sum([["--set", s] for s in SETS], [])])
    assert png.stat().st_size > 10_000, "no plot written"
    # The FMU runs past the exit to its stop time (the CLI stops at an exit unless told not to).
    rows = cli_rows(ROOT / "examples" / "airgun" / "model.toml",
                    SETS + ["solver.stop_on_exit=false"], tmp_path)
    last, cli = res[-1], rows[-1]
    print(f"FMPy: at t = {float(last['time'])!r} s, v = {float(last['projectile.v'])!r} m/s; "
          f"CLI with the same --set: t = {cli['time']}, v = {cli['projectile.v']} (bit for bit)")
    assert float(last["projectile.exited"]) == 1.0
    assert float(last["projectile.x"]) >= 0.4
    # The same model, parameters and step: the same bits at the end.
    for name in ("time", "projectile.v", "projectile.x", "barrel.p", "chamber.p"):
        assert float(last[name]) == float(cli[name]), name
    e = res["energy_total"]
    drift = float(np.max(np.abs(e - e[0])) / e[0])
    print(f"energy_total drift through the FMU {drift:.1e} (limit 1e-10)")
    assert drift < 1e-10
