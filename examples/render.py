"""Render the gallery pictures (examples/<name>/<name>.png) from the CLI's CSV output.

    cargo build --bin plenum
    PY=$(bash scripts/python-env.sh) && "$PY" examples/render.py [target/debug/plenum]

The figures are committed; tests/verification/examples.rs asserts the physics they show.
"""

import csv
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PLENUM = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target" / "debug" / "plenum")


def run(name, *sets):
    model = ROOT / "examples" / name / "model.toml"
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out.csv"
        args = [PLENUM, "run", str(model), "--csv", str(out)]
        for s in sets:
            args += ["--set", s]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}


def save(fig, name):
    path = ROOT / "examples" / name / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(path.relative_to(ROOT))


def airgun():
    lengths = [0.05 * k for k in range(1, 13)]
    v_exit = [run("airgun", f"projectile.x_exit={x}")["projectile.v"][-1] for x in lengths]
    r = run("airgun")
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    a.plot(lengths, v_exit, "o-")
    a.set_xlabel("barrel length, m")
    a.set_ylabel("exit velocity, m/s")
    a.set_title("exit velocity against barrel length")
    t_ms = [t * 1e3 for t in r["time"]]
    a2 = b.twinx()
    b.plot(t_ms, [p / 1e5 for p in r["chamber.p"]], label="chamber")
    b.plot(t_ms, [p / 1e5 for p in r["barrel.p"]], label="barrel")
    a2.plot(t_ms, r["projectile.v"], "k--", label="projectile v")
    b.set_xlabel("time, ms")
    b.set_ylabel("pressure, bar")
    a2.set_ylabel("projectile velocity, m/s")
    b.legend(loc="center right")
    b.set_title("0.5 m barrel")
    save(fig, "airgun")


def cylinder():
    r = run("cylinder")
    fig, a = plt.subplots(figsize=(7, 3.6))
    a2 = a.twinx()
    a.plot(r["time"], [p / 1e5 for p in r["cap.p"]], label="cap pressure")
    a2.plot(r["time"], [x * 1e3 for x in r["rod.x"]], "k--", label="rod position")
    for t in (0.05, 0.35):
        a.axvline(t, color="grey", lw=0.8)
    a.set_xlabel("time, s (valve switches at the grey lines)")
    a.set_ylabel("cap pressure, bar")
    a2.set_ylabel("rod position, mm")
    a.legend(loc="upper left")
    a2.legend(loc="upper right")
    save(fig, "cylinder")


def blowdown():
    r = run("blowdown")
    g = 1.4
    r_crit = (2 / (g + 1)) ** (g / (g - 1))
    fig, a = plt.subplots(figsize=(7, 3.6))
    a2 = a.twinx()
    a.plot(r["time"], [p / 1e5 for p in r["tank.p"]], label="tank pressure")
    a2.plot(r["time"], [101325.0 / p for p in r["tank.p"]], "k--", label="p_atm / p")
    a2.axhline(r_crit, color="red", lw=0.8, label="critical ratio")
    # The isentropic choked-blowdown closed form's unchoking time (examples/blowdown/README.md).
    with open(ROOT / "examples" / "blowdown" / "model.toml", "rb") as f:
        m = tomllib.load(f)
    tank, nozzle = m["chamber"][0], m["orifice"][0]
    r_gas = 287.05  # air, J/(kg K), as src/gas.rs
    psi = g ** 0.5 * (2 / (g + 1)) ** ((g + 1) / (2 * (g - 1)))
    k = nozzle["discharge_coefficient"] * nozzle["area"] * psi * (r_gas * tank["temperature"]) ** 0.5 / tank["volume"]
    p_atm = m["reservoir"][0]["pressure"]
    t_star = ((p_atm / r_crit / tank["pressure"]) ** (-(g - 1) / (2 * g)) - 1) / (0.5 * (g - 1) * k)
    a.axvline(t_star, color="grey", lw=0.8, ls=":")
    a.text(t_star, 9, f" unchokes, closed form\n t* = {t_star:.3f} s", fontsize="small")
    a.set_xlabel("time, s")
    a.set_ylabel("tank pressure, bar")
    a2.set_ylabel("pressure ratio")
    a.legend(loc="center right")
    a2.legend(loc="lower right")
    save(fig, "blowdown")


def circadapt_valve():
    r = run("circadapt_valve")
    fig, a = plt.subplots(figsize=(7, 3.6))
    a.plot(r["time"], [q * 1e6 for q in r["valve.q"]])
    a.axhline(0, color="grey", lw=0.8)
    for t in (0.1, 0.4):
        a.axvline(t, color="grey", lw=0.8)
    a.set_xlabel("time, s (proximal pressure high between the grey lines)")
    a.set_ylabel("valve flow, ml/s")
    save(fig, "circadapt_valve")


def soft_actuator():
    r = run("soft_actuator")
    fig, a = plt.subplots(figsize=(7, 3.6))
    a2 = a.twinx()
    a.plot(r["time"], [(p - 101325.0) / 1e5 for p in r["actuator.p"]], label="actuator gauge p")
    a2.plot(r["time"], [x * 1e3 for x in r["membrane.x"]], "k--", label="stroke")
    a.set_xlabel("time, s")
    a.set_ylabel("gauge pressure, bar")
    a2.set_ylabel("stroke, mm")
    a.legend(loc="center right")
    a2.legend(loc="lower right")
    save(fig, "soft_actuator")


if __name__ == "__main__":
    for f in (airgun, cylinder, blowdown, circadapt_valve, soft_actuator):
        f()
