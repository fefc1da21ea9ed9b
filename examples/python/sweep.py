"""A parameter sweep of the air gun FMU on Dask: exit velocity over barrel length × chamber
pressure (40 × 25 = 1,000 runs by default).

    PY=$(bash scripts/python-env.sh)
    "$PY" examples/python/sweep.py target/fmu-examples/airgun.fmu                # LocalCluster
    "$PY" examples/python/sweep.py airgun.fmu --scheduler tcp://host:8786        # a cluster
    "$PY" examples/python/sweep.py airgun.fmu --serial                           # no Dask

Every task loads the FMU with FMPy (each worker process extracts it once), sets
`projectile.x_exit` and `chamber.pressure`, simulates to the exit and returns the exit time and
velocity. Results go to a CSV table (`--csv`, or Parquet when the name ends in .parquet and
pyarrow is installed) and a heat map (`--plot`). On a cluster the FMU path must exist on every
worker (a shared file system); each worker extracts it once into its temp dir.
"""

import argparse
import atexit
import os
import shutil
import tempfile
import time
from pathlib import Path

import fmpy
import numpy as np
import pandas as pd

BARREL = "projectile.x_exit"
PRESSURE = "chamber.pressure"


def grid(n_length, n_pressure, lengths=(0.05, 0.6), pressures=(3e5, 1.2e6)):
    """The sweep points, barrel length (m) outer, chamber pressure (Pa, absolute) inner."""
    ls = np.linspace(*lengths, n_length)
    ps = np.linspace(*pressures, n_pressure)
    return [(float(x), float(p)) for x in ls for p in ps]


def _unzipped(fmu, scratch=None):
    """The FMU extracted once per process (a Dask worker runs many tasks), under `scratch` (which
    the caller removes) or the temp dir (removed at a normal exit of the process)."""
    base = Path(scratch) if scratch else Path(tempfile.gettempdir())
    d = base / f"plenum-sweep-{os.getpid()}-{Path(fmu).stem}-{os.stat(fmu).st_mtime_ns}"
    if not (d / "modelDescription.xml").exists():
        fmpy.extract(str(fmu), unzipdir=str(d))
        if not scratch:
            atexit.register(shutil.rmtree, d, True)
    return str(d)


def run_point(fmu, barrel_m, pressure_pa, scratch=None, output_interval=1e-3):
    """One run: the exit (or last) time, the velocity there, and whether the projectile left."""
    # FMPy simulates an extracted FMU given its directory.
    res = fmpy.simulate_fmu(
        _unzipped(fmu, scratch),
        start_values={BARREL: barrel_m, PRESSURE: pressure_pa},
        output_interval=output_interval,
        output=["projectile.v", "projectile.exited"],
    )
    last = res[-1]
    return {
        "barrel_m": barrel_m,
        "chamber_pressure_pa": pressure_pa,
        "t_exit_s": float(last["time"]),
        "v_exit_m_per_s": float(last["projectile.v"]),
        "exited": bool(last["projectile.exited"] == 1.0),
    }


def sweep_serial(fmu, points):
    with tempfile.TemporaryDirectory() as scratch:
        return pd.DataFrame([run_point(fmu, x, p, scratch) for x, p in points])


def sweep_dask(fmu, points, scheduler=None, workers=2):
    """The same tasks on a Dask cluster: a LocalCluster of `workers` single-threaded processes,
    or the scheduler at `scheduler`."""
    from dask.distributed import Client, LocalCluster

    cluster, scratch = None, None
    if scheduler is None:
        # Local workers share this machine's disk: extract into a directory removed at the end.
        scratch = tempfile.mkdtemp(prefix="plenum-sweep-")
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        if __name__ != "__main__":
            # Imported as the module `sweep` (the tests), the tasks refer to it by name: the
            # workers need the file (run as a script, Dask sends the functions by value).
            client.upload_file(__file__)
        futures = client.map(run_point, [fmu] * len(points), [x for x, _ in points],
                             [p for _, p in points], [scratch] * len(points), pure=False)
        rows = client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
            shutil.rmtree(scratch, ignore_errors=True)
    return pd.DataFrame(rows)


def heat_map(df, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = df.pivot(index="chamber_pressure_pa", columns="barrel_m", values="v_exit_m_per_s")
    fig, ax = plt.subplots(figsize=(7, 4.2))
    mesh = ax.pcolormesh(table.columns, table.index / 1e5, table.values, shading="nearest")
    fig.colorbar(mesh, ax=ax, label="exit velocity, m/s")
    ax.set_xlabel("barrel length, m")
    ax.set_ylabel("chamber pressure, bar (absolute)")
    ax.set_title(f"air gun: {len(df)} runs")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_table(df, path):
    path = Path(path)
    if path.suffix == ".parquet":
        df.to_parquet(path)
    else:
        df.to_csv(path, index=False, float_format="%.17g")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fmu", type=Path)
    ap.add_argument("--lengths", type=int, default=40, help="barrel lengths (default 40)")
    ap.add_argument("--pressures", type=int, default=25, help="chamber pressures (default 25)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler (default: LocalCluster)")
    ap.add_argument("--serial", action="store_true", help="run in this process, without Dask")
    ap.add_argument("--csv", type=Path, default=Path("sweep.csv"), help="table (.csv or .parquet)")
    ap.add_argument("--plot", type=Path, default=Path("sweep.png"))
    args = ap.parse_args(argv)
    if not args.fmu.is_file():
        raise SystemExit(f"{args.fmu}: no such FMU (build it with fmu-build)")
    points = grid(args.lengths, args.pressures)
    start = time.perf_counter()
    if args.serial:
        df = sweep_serial(args.fmu, points)
    else:
        df = sweep_dask(args.fmu.resolve(), points, args.scheduler, args.workers)
    elapsed = time.perf_counter() - start
    write_table(df, args.csv)
    heat_map(df, args.plot)
    best = df.loc[df["v_exit_m_per_s"].idxmax()]
    print(f"{len(df)} runs in {elapsed:.1f} s ({'serial' if args.serial else 'Dask'}); "
          f"{int(df['exited'].sum())} exited; fastest {best['v_exit_m_per_s']:.2f} m/s at "
          f"barrel {best['barrel_m']:.3f} m, {best['chamber_pressure_pa'] / 1e5:.2f} bar; "
          f"table {args.csv}, heat map {args.plot}")
    return df


if __name__ == "__main__":
    main()
