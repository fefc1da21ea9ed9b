"""The Python workflows (examples/README.md): simulate.py (FMPy, parameters, a plot) and sweep.py
(Dask),
asserted against independent runs. Run from the workspace root after `cargo build --workspace`:

    PY=$(bash scripts/python-env.sh) && "$PY" -m pytest examples -q -rA
"""

import csv
import os
import subprocess
from pathlib import Path

import sys

import numpy as np
import pandas as pd
from conftest import BIN, ROOT

sys.path.insert(0, str(ROOT / "examples" / "python"))
import simulate  # noqa: E402
import sweep  # noqa: E402

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
    rows = cli_rows(ROOT / "examples" / "airgun" / "model.toml", SETS, tmp_path)
    last, cli = res[-1], rows[-1]
    print(f"FMPy: exit at t = {float(last['time'])!r} s, v = {float(last['projectile.v'])!r} m/s; "
          f"CLI with the same --set: t = {cli['time']}, v = {cli['projectile.v']} (bit for bit)")
    assert float(last["projectile.exited"]) == 1.0
    assert float(last["projectile.x"]) >= 0.4
    # The same model, parameters and step: the same bits at the exit.
    for name in ("time", "projectile.v", "projectile.x", "barrel.p", "chamber.p"):
        assert float(last[name]) == float(cli[name]), name
    e = res["energy_total"]
    drift = float(np.max(np.abs(e - e[0])) / e[0])
    print(f"energy_total drift through the FMU {drift:.1e} (limit 1e-10)")
    assert drift < 1e-10


def test_sweep_on_dask_equals_the_serial_sweep(airgun_fmu, tmp_path):
    points = sweep.grid(10, 5)
    assert len(points) == 50
    serial = sweep.sweep_serial(airgun_fmu, points)
    dask = sweep.sweep_dask(airgun_fmu, points, workers=2)
    same = (serial.values == dask.values).all(axis=1).sum()
    print(f"{len(points)} runs: Dask (LocalCluster, 2 workers) equals serial in {same}/{len(points)} rows, "
          f"bit for bit; v_exit {serial['v_exit_m_per_s'].min():.2f} … {serial['v_exit_m_per_s'].max():.2f} m/s")
    pd.testing.assert_frame_equal(serial, dask, check_exact=True)
    # Physics: every run exits, and the exit velocity rises with chamber pressure at every length.
    assert serial["exited"].all()
    for barrel, g in serial.groupby("barrel_m"):
        v = g.sort_values("chamber_pressure_pa")["v_exit_m_per_s"].to_numpy()
        assert (np.diff(v) > 0).all(), f"barrel {barrel}: {v}"
    # The table round-trips, and the heat map is drawn.
    table, png = tmp_path / "sweep.csv", tmp_path / "sweep.png"
    sweep.write_table(dask, table)
    sweep.heat_map(dask, png)
    back = pd.read_csv(table)
    pd.testing.assert_frame_equal(back, dask, check_exact=True, check_dtype=False)  # 3e5 reads back as int
    assert Path(png).stat().st_size > 10_000
