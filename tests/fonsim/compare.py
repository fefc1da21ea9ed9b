"""Plenum against FONSim (installed from PyPI) on three FONSim networks, run in the same process.

For each case, FONSim's own model (its PressureSource, FlowRestrictor, CircularTube, Container and
its `air` fluid) is simulated with FONSim's fixed-step backward-Euler Newton solver at the step H
(and at 2H, to measure the order), and the equivalent Plenum model file under models/ is run
through the CLI (`plenum run <model> --csv`) with RK4 at the same step H and, as the reference,
at H_REF = H/100 (the same equations solved far more accurately than either). The container
pressures are compared at every Plenum output time (every 1 ms), as the largest difference
divided by the pressure change over the run.

Run directly (`python compare.py`) to print the figures; test_fonsim.py asserts them.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
H = 1e-4  # FONSim's finest fixed step used here, s
H_REF = 1e-6  # Plenum's reference step, s


def plenum_bin():
    exe = os.environ.get("PLENUM_BIN")
    if exe:
        return exe
    # Build (or confirm up to date) the CLI of this checkout.
    subprocess.run(["cargo", "build", "-q", "--bin", "plenum"], cwd=REPO, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str(target / "debug" / "plenum")


def run_plenum(model, step, column):
    """(times, values of `column`) of a Plenum run with RK4 at `step`."""
    with tempfile.TemporaryDirectory() as d:
        csv = Path(d) / "out.csv"
        subprocess.run(
            [
                plenum_bin(),
                "run",
                str(HERE / "models" / model),
                "--method",
                "rk4",
                "--set",
                f"solver.step={step!r}",
                "--csv",
                str(csv),
            ],
            check=True,
            capture_output=True,
        )
        header = csv.read_text().splitlines()[0].split(",")
        data = np.loadtxt(csv, delimiter=",", skiprows=1, ndmin=2)
    return data[:, 0], data[:, header.index(column)]


def fonsim_case(name, h, duration, timing=None):
    """(times, container pressure) of FONSim's own simulation of case `name` at step h. With a
    `timing` dict, `timing["run_s"]` is the time of `Simulation.run` alone (benches/peers.py)."""
    import time

    import fonsim as fs

    air = fs.air
    s = fs.System()
    if name == "source_restrictor_container":
        parts = [
            fs.PressureSource("source", pressure=2e5),
            fs.FlowRestrictor("restrictor", fluid=air, diameter=1e-3, k=0.6),
            fs.Container("container", fluid=air, volume=1e-4),
        ]
        s.add(*parts)
        s.connect("source", ("restrictor", "a"))
        s.connect(("restrictor", "b"), "container")
        watched = parts[2]
    elif name == "two_containers_restrictor":
        a = fs.Container("a", fluid=air, volume=1e-4)
        b = fs.Container("b", fluid=air, volume=2e-4)
        # FONSim starts a container at its terminal's initial pressure (p_atm); container a
        # starts at 3 bar: its mass m = V·ρ_stp·p/p_atm and the pressure guess.
        a.states[0].initial_value = 1e-4 * air.rho_stp * 3e5 / fs.pressure_atmospheric
        a.get_terminal("a")("pressure").initial_value = 3e5
        r = fs.FlowRestrictor("restrictor", fluid=air, diameter=1e-3, k=0.6)
        s.add(a, r, b)
        s.connect("a", ("restrictor", "a"))
        s.connect(("restrictor", "b"), "b")
        watched = b
    elif name == "source_tube_container":
        parts = [
            fs.PressureSource("source", pressure=2e5),
            fs.CircularTube(
                "tube", fluid=air, length=0.6, diameter=2e-3, roughness=1.5e-6
            ),
            fs.Container("container", fluid=air, volume=1e-4),
        ]
        s.add(*parts)
        s.connect("source", ("tube", "a"))
        s.connect(("tube", "b"), "container")
        watched = parts[2]
    else:
        raise ValueError(name)
    sim = fs.Simulation(s, duration=duration, step=h, verbose=-1)
    start = time.perf_counter()
    sim.run()
    if timing is not None:
        timing["run_s"] = time.perf_counter() - start
    t = np.asarray(sim.times)
    p = np.asarray(watched.get("pressure"))
    n = min(len(t), len(p))
    return t[:n], p[:n]


CASES = [
    # (name = model file stem, compared Plenum column, duration in s)
    ("source_restrictor_container", "container.p", 0.3),
    ("two_containers_restrictor", "b.p", 0.2),
    ("source_tube_container", "container.p", 0.1),
]


def compare(name, column, duration):
    model = f"{name}.toml"
    t_ref, p_ref = run_plenum(model, H_REF, column)
    t_pl, p_pl = run_plenum(model, H, column)
    assert np.allclose(t_pl, t_ref)
    span = p_ref.max() - p_ref.min()
    out = {"name": name, "span_pa": span}
    fonsim = {}
    for label, h in (("fonsim_h", H), ("fonsim_2h", 2 * H)):
        t_f, p_f = fonsim_case(name, h, duration)
        fonsim[label] = np.interp(t_ref, t_f, p_f)
        out[label] = np.max(np.abs(fonsim[label] - p_ref)) / span
    out["plenum_vs_fonsim"] = np.max(np.abs(fonsim["fonsim_h"] - p_pl)) / span
    # Richardson: for a first-order method, FONSim(2h) − FONSim(h) estimates FONSim's own error
    # at h, without reference to Plenum.
    out["fonsim_own_error_estimate"] = (
        np.max(np.abs(fonsim["fonsim_2h"] - fonsim["fonsim_h"])) / span
    )
    out["plenum_h"] = np.max(np.abs(p_pl - p_ref)) / span
    out["order"] = np.log2(out["fonsim_2h"] / out["fonsim_h"])
    return out


def main():
    results = []
    for name, column, duration in CASES:
        r = compare(name, column, duration)
        results.append(r)
        print(
            f"{name}: pressure change {r['span_pa']:.1f} Pa; max error / change: "
            f"FONSim (backward Euler) h={H:g} s: {r['fonsim_h']:.3e}, 2h: {r['fonsim_2h']:.3e} "
            f"(observed order {r['order']:.2f}); Plenum RK4 h={H:g} s: {r['plenum_h']:.3e}; "
            f"Plenum vs FONSim at h: {r['plenum_vs_fonsim']:.3e} (FONSim's own error estimate "
            f"FONSim(2h) - FONSim(h): {r['fonsim_own_error_estimate']:.3e})"
        )
    return results


if __name__ == "__main__":
    main()
    sys.exit(0)
