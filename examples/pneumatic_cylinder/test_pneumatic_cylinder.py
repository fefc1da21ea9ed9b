"""The pneumatic cylinder gallery example: the co-simulation controller (controller.py, FMPy)
drives the FMU's 3/2 valve inputs; the run is checked against the CLI run of the same model with
the controller's switches written as step tables (a peer run), against the relief valve's
opening law and against conservation of mass and energy. Run from the workspace root after
`cargo build --workspace`:

    PY=$(bash scripts/python-env.sh) && "$PY" -m pytest examples -q -rA
"""

import csv
import os
import re
import subprocess
import sys

from conftest import BIN, ROOT, build_fmu

HERE = ROOT / "examples" / "pneumatic_cylinder"
sys.path.insert(0, str(HERE))
import controller  # noqa: E402


def cli_with_tables(switches, tmp_path):
    """The model with the inputs replaced by step tables of the controller's switches, run by
    the CLI; returns {name: column}."""
    text = (HERE / "model.toml").read_text()
    text = re.sub(r"\n\[inputs\]\nnames = \[[^\]]*\]\n", "\n", text)
    for port, k in (("inlet", 1), ("exhaust", 2)):
        table = ", ".join(f"[{s[0]!r}, {s[k]!r}]" for s in switches)
        text, n = re.subn(
            rf'(name = "{port}".*?\n)opening = [0-9.]+\n',
            rf'\g<1>opening = {{ table = [{table}], interpolation = "step" }}\n',
            text, count=1, flags=re.S)
        assert n == 1, port
    model = tmp_path / "tables.toml"
    model.write_text(text)
    out = tmp_path / "cli.csv"
    plenum = os.environ.get("PLENUM_BIN", str(BIN / "plenum"))
    subprocess.run([plenum, "run", str(model), "--csv", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}


def test_controller_cycles_the_cylinder_as_the_cli_does_with_its_switches(fmu_dir, tmp_path):
    fmu = build_fmu(HERE / "model.toml", fmu_dir)
    names, rows, switches = controller.run(str(fmu))
    col = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    t = col["time"]
    print(f"{len(switches) - 1} switches at " + ", ".join(f"{s[0]:.3f}" for s in switches[1:]))
    # At least two full cycles: out to the stop and back, each ended by the controller.
    assert len(switches) >= 5
    x_max = 0.1
    assert max(col["rod.x"]) == x_max and min(col["rod.x"][len(t) // 2:]) == 0.0

    # The rod rests (x = v = 0 exactly) until the supply port opens.
    first = next(i for i, ti in enumerate(t) if ti > controller.START + 1e-9)
    assert all(x == 0.0 for x in col["rod.x"][:first]) and all(v == 0.0 for v in col["rod.v"][:first])

    # Peer run: the CLI with the same switches as step tables, at every output time.
    cli = cli_with_tables(switches, tmp_path)
    assert len(cli["time"]) == len(t) and max(abs(a - b) for a, b in zip(cli["time"], t)) < 1e-12
    worst = 0.0
    for name in ("receiver.p", "cap.p", "cap.T", "rod.x", "rod.v", "relief.mdot", "inlet.mdot"):
        scale = max(abs(v) for v in cli[name])
        err = max(abs(a - b) for a, b in zip(col[name], cli[name])) / scale
        print(f"{name}: worst |FMU - CLI| / max|CLI| = {err:.2e}")
        worst = max(worst, err)
    # Both are adaptive solutions at rtol 1e-9 that restart at a switch each in its own way (an
    # input changed at a communication point, a table's breakpoint), so they agree to the
    # tolerance, not to the bit: the flows, the most sensitive outputs, within 100·rtol.
    assert worst <= 1e-7

    # The relief valve: closed up to its cracking Δp (6.5 bar), linear to full flow (7.5 bar).
    p_atm, crack, full = 101325.0, 6.5e5, 7.5e5
    law_err, opened = 0.0, 0
    for p, f, m in zip(col["receiver.p"], col["relief.open_fraction"], col["relief.mdot"]):
        law = min(max((p - p_atm - crack) / (full - crack), 0.0), 1.0)
        law_err = max(law_err, abs(f - law))
        if law == 0.0:
            assert f == 0.0 and m == 0.0
        else:
            opened += 1
    print(f"relief open at {opened} of {len(t)} output times; worst |opening - law| {law_err:.1e}")
    assert opened > 100 and law_err <= 1e-12

    # Mass and energy totals (the pump's inflow, the vented gas and the piston's work are
    # accounted for): constant up to the rounding of thousands of steps' sums.
    for name, bound in (("mass_total", 1e-14), ("energy_total", 1e-11)):
        drift = (max(col[name]) - min(col[name])) / abs(col[name][0])
        print(f"{name}: relative drift {drift:.1e} (bound {bound:.0e})")
        assert drift <= bound
