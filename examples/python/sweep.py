"""A parameter sweep of the air gun through the Python package `plenum`: exit velocity over barrel
length × chamber pressure (40 × 25 = 1,000 runs by default).

    pip install target/wheels/plenum-*.whl "dask[distributed]" pandas matplotlib
    python examples/python/sweep.py                              # Dask LocalCluster
    python examples/python/sweep.py --scheduler tcp://host:8786  # a Dask cluster
    python examples/python/sweep.py --threads 2                  # concurrent.futures threads
    python examples/python/sweep.py --serial                     # one after another

Every task copies the model (`examples/airgun/model.toml`), sets `projectile.x_exit` and
`chamber.pressure` and runs it with `Model.run` (the run ends at the exit) for the exit time and
velocity. Models pickle as their text and overrides, so Dask's workers (and process pools) need
the package only, no file. Runs release the GIL: threads run them in parallel. Results go to a
CSV table (`--csv`, or Parquet when the name ends in .parquet and pyarrow is installed) and a
heat map (`--plot`).
"""

import argparse
import copy
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

import plenum

BARREL = "projectile.x_exit"
PRESSURE = "chamber.pressure"
AIRGUN = Path(__file__).resolve().parents[1] / "airgun" / "model.toml"


def grid(n_length, n_pressure, lengths=(0.05, 0.6), pressures=(3e5, 1.2e6)):
    """The sweep points, barrel length (m) outer, chamber pressure (Pa, absolute) inner."""
    ls = np.linspace(*lengths, n_length)
    ps = np.linspace(*pressures, n_pressure)
    return [(float(x), float(p)) for x in ls for p in ps]


def run_point(model, barrel_m, pressure_pa):
    """One run: the exit (or last) time, the velocity there, and whether the projectile left."""
    result = copy.copy(model).set(BARREL, barrel_m).set(PRESSURE, pressure_pa).run()
    return {
        "barrel_m": barrel_m,
        "chamber_pressure_pa": pressure_pa,
        "t_exit_s": float(result.time[-1]),
        "v_exit_m_per_s": float(result["projectile.v"][-1]),
        "exited": result.exit_time is not None,
    }


def _run_args(args):
    return run_point(*args)


def sweep_serial(model, points):
    return pd.DataFrame([run_point(model, x, p) for x, p in points])


def sweep_futures(model, points, workers=2, processes=False):
    """The same tasks on a concurrent.futures pool of threads (the GIL is released during a
    run) or processes."""
    pool = ProcessPoolExecutor if processes else ThreadPoolExecutor
    with pool(workers) as ex:
        rows = list(ex.map(_run_args, [(model, x, p) for x, p in points], chunksize=25))
    return pd.DataFrame(rows)


def sweep_dask(model, points, scheduler=None, workers=2):
    """The same tasks on a Dask cluster: a LocalCluster of `workers` single-threaded processes,
    or the scheduler at `scheduler` (its workers need the `plenum` package)."""
    from dask.distributed import Client, LocalCluster

    cluster = None
    if scheduler is None:
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
        futures = client.map(run_point, [model] * len(points), [x for x, _ in points],
                             [p for _, p in points], pure=False)
        rows = client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
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
    ap.add_argument("--model", type=Path, default=AIRGUN, help="the air gun's model file")
    ap.add_argument("--lengths", type=int, default=40, help="barrel lengths (default 40)")
    ap.add_argument("--pressures", type=int, default=25, help="chamber pressures (default 25)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler (default: LocalCluster)")
    ap.add_argument("--threads", type=int, help="run on this many threads (concurrent.futures), without Dask")
    ap.add_argument("--serial", action="store_true", help="run in this process, without Dask")
    ap.add_argument("--csv", type=Path, default=Path("sweep.csv"), help="table (.csv or .parquet)")
    ap.add_argument("--plot", type=Path, default=Path("sweep.png"))
    args = ap.parse_args(argv)
    model = plenum.Model.from_file(args.model)
    points = grid(args.lengths, args.pressures)
    start = time.perf_counter()
    if args.serial:
        how, df = "serial", sweep_serial(model, points)
    elif args.threads:
        how, df = f"{args.threads} threads", sweep_futures(model, points, args.threads)
    else:
        how, df = "Dask", sweep_dask(model, points, args.scheduler, args.workers)
    elapsed = time.perf_counter() - start
    write_table(df, args.csv)
    heat_map(df, args.plot)
    best = df.loc[df["v_exit_m_per_s"].idxmax()]
    print(f"{len(df)} runs in {elapsed:.1f} s ({how}); "
          f"{int(df['exited'].sum())} exited; fastest {best['v_exit_m_per_s']:.2f} m/s at "
          f"barrel {best['barrel_m']:.3f} m, {best['chamber_pressure_pa'] / 1e5:.2f} bar; "
          f"table {args.csv}, heat map {args.plot}")
    return df


if __name__ == "__main__":
    main()
