"""The air gun sweep (examples/python/sweep.py) on the package: a 20 × 10 grid (200 runs; the
example's default is 40 × 25) serially, on concurrent.futures threads and processes, and on a
Dask LocalCluster, equal point for point, bit for bit; one point equal to the command line's
`--set` run; physics: the exit velocity rises with the chamber pressure at every barrel length."""

import sys

import numpy as np
import pandas as pd

import plenum
from conftest import ROOT, cli_run, plenum_command

sys.path.insert(0, str(ROOT / "examples" / "python"))
import sweep  # noqa: E402

# Not sweep.AIRGUN after the Dask run: the client imports the copy it uploads to the workers.
AIRGUN = ROOT / "examples" / "airgun" / "model.toml"


def test_sweep_runs_on_futures_and_dask_equal_serial(tmp_path):
    model = plenum.Model.from_file(AIRGUN)
    points = sweep.grid(20, 10)
    assert len(points) == 200
    import time

    t0 = time.perf_counter()
    serial = sweep.sweep_serial(model, points)
    t1 = time.perf_counter()
    threads = sweep.sweep_futures(model, points, workers=2)
    t2 = time.perf_counter()
    processes = sweep.sweep_futures(model, points, workers=2, processes=True)
    t3 = time.perf_counter()
    dask = sweep.sweep_dask(model, points, workers=2)
    t4 = time.perf_counter()
    print(f"{len(points)} runs: serial {t1 - t0:.1f} s, 2 threads {t2 - t1:.1f} s, 2 processes "
          f"{t3 - t2:.1f} s, Dask LocalCluster (2 workers) {t4 - t3:.1f} s; v_exit "
          f"{serial['v_exit_m_per_s'].min():.2f} … {serial['v_exit_m_per_s'].max():.2f} m/s")
    for label, df in [("threads", threads), ("processes", processes), ("dask", dask)]:
        pd.testing.assert_frame_equal(serial, df, check_exact=True, obj=label)
    assert serial["exited"].all()
    for barrel, g in serial.groupby("barrel_m"):
        v = g.sort_values("chamber_pressure_pa")["v_exit_m_per_s"].to_numpy()
        assert (np.diff(v) > 0).all(), f"barrel {barrel}: {v}"
    # One point against the command line with the same --set, bit for bit.
    x, p = points[117]
    row = serial.iloc[117]
    names, rows, proc = cli_run(plenum_command(), AIRGUN, tmp_path,
                                sets=[f"projectile.x_exit={x!r}", f"chamber.pressure={p!r}"])
    assert proc.returncode == 0, proc.stderr
    last = dict(zip(names, rows[-1]))
    print(f"point {x!r} m, {p!r} Pa: v_exit {row['v_exit_m_per_s']!r} m/s; CLI {last['projectile.v']!r}")
    assert last["projectile.v"] == row["v_exit_m_per_s"] and last["time"] == row["t_exit_s"]
    # The table round-trips and the heat map is drawn.
    table, png = tmp_path / "sweep.csv", tmp_path / "sweep.png"
    sweep.write_table(dask, table)
    sweep.heat_map(dask, png)
    pd.testing.assert_frame_equal(pd.read_csv(table), dask, check_exact=True, check_dtype=False)
    assert png.stat().st_size > 10_000
