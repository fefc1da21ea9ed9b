"""Simulate a Plenum FMU with FMPy, with parameters set, and plot the outputs to a file.

    cargo build --lib --bins
    target/debug/fmu-build examples/airgun/model.toml -o target/fmu-examples --lib target/debug/libplenum.so
    PY=$(bash scripts/python-env.sh)
    "$PY" examples/python/simulate.py target/fmu-examples/airgun.fmu \
        --set chamber.pressure=9e5 --set projectile.x_exit=0.4 \
        --plot airgun.png --csv airgun.csv --columns chamber.p barrel.p projectile.v

Parameters (`<component>.<key>`) are FMU start values. Without --columns every output is plotted
(one panel per unit). Prints the final value of every output.
"""

import argparse
import csv
from pathlib import Path

import fmpy
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def parse_sets(pairs):
    out = {}
    for s in pairs or []:
        name, sep, value = s.partition("=")
        if not sep:
            raise SystemExit(f"--set {s!r}: expected NAME=VALUE")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise SystemExit(f"--set {s!r}: {value!r} is not a number") from None
    return out


def simulate(fmu, start_values=None, output_interval=None, outputs=None):
    """FMPy's simulate_fmu on a Plenum FMU: every output (or `outputs`), parameters from
    `start_values`; returns (model description, structured result array)."""
    md = fmpy.read_model_description(str(fmu))
    names = {v.name: v for v in md.modelVariables}
    for k in start_values or {}:
        if k not in names or names[k].causality not in ("parameter", "input"):
            raise ValueError(f"{k!r} is not a parameter or input of {md.modelName}")
    if outputs is None:
        outputs = [v.name for v in md.modelVariables if v.causality == "output"]
    result = fmpy.simulate_fmu(
        str(fmu),
        start_values=dict(start_values or {}),
        output_interval=output_interval,
        output=outputs,
    )
    return md, result


def plot(md, result, columns, path):
    units = {v.name: v.unit for v in md.modelVariables}
    groups = {}
    for c in columns:
        groups.setdefault(units.get(c) or "1", []).append(c)
    fig, axes = plt.subplots(len(groups), 1, figsize=(7, 2.4 * len(groups)), sharex=True, squeeze=False)
    for ax, (unit, cols) in zip(axes[:, 0], groups.items()):
        for c in cols:
            ax.plot(result["time"], result[c], label=c)
        ax.set_ylabel(unit)
        ax.legend(loc="best", fontsize="small")
    axes[-1, 0].set_xlabel("time, s")
    axes[0, 0].set_title(f"{md.modelName}: {md.description}")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fmu", type=Path)
    ap.add_argument("--set", action="append", metavar="NAME=VALUE", help="a parameter's start value")
    ap.add_argument("--output-interval", type=float, help="communication step, s (default: the FMU's)")
    ap.add_argument("--columns", nargs="+", help="outputs to plot (default: all but totals and rc)")
    ap.add_argument("--plot", type=Path, default=Path("simulate.png"))
    ap.add_argument("--csv", type=Path, help="also write every output to this CSV")
    args = ap.parse_args(argv)
    md, result = simulate(args.fmu, parse_sets(args.set), args.output_interval)
    names = [n for n in result.dtype.names if n != "time"]
    columns = args.columns or [
        n for n in names if n not in ("rc", "mass_total", "energy_total") and not n.endswith((".U", ".exited"))
    ]
    missing = [c for c in columns if c not in names]
    if missing:
        raise SystemExit(f"unknown outputs {missing}; outputs are {names}")
    plot(md, result, columns, args.plot)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(result.dtype.names)
            for row in result:
                w.writerow([repr(float(x)) for x in row])
    last = result[-1]
    print(f"{md.modelName}: {len(result)} rows to t = {float(last['time'])!r} s; plot {args.plot}")
    for n in names:
        print(f"  {n} = {float(last[n])!r}")
    return md, result


if __name__ == "__main__":
    main()
