"""Switches of a law as Model Exchange event indicators, through FMPy's CVODE: a 1 L tank at
10 bar vents to 1 atm through a relief valve cracking at 5 bar with a band of 1 Pa to full flow.
Closed, the valve holds Δp ≤ 5e5 Pa, so the tank can never end below 601325 Pa; inside the
band the flow is proportional to Δp − Δp_c, so it settles there exponentially. Without the
valve's cracking and full-flow points as event indicators CVODE steps across the kink and the
tank ends below it. Run as compliance-tests/python/test_fmpy.py says (its fixtures are reused).
"""

import fmpy
import numpy as np
from fmpy import read_model_description

import test_fmpy as base
from test_fmpy import library, workdir  # noqa: F401 (pytest fixtures)

P_ATM = 101325.0
CRACKING = 5e5
RELIEF_VENT_MODEL = f"""
[model]
name = "relief_vent"
description = "A 1 L tank vented through a relief valve with a 1 Pa band"

[gas]
R = 287.0
cp = 1004.5

[solver]
method = "auto"
t_end = 2.0
step = 1e-4
output_interval = 0.01

[[chamber]]
name = "tank"
volume = 1e-3
pressure = 10e5
temperature = 300.0

[[reservoir]]
name = "atm"
pressure = {P_ATM}
temperature = 293.15

[[orifice]]
name = "relief"
from = "tank"
to = "atm"
area = 1e-5
cracking_pressure = {CRACKING}
full_flow_pressure = {CRACKING + 1.0}
"""


def test_relief_valve_vent_ends_at_its_closing_pressure_in_cvode(workdir, library):  # noqa: F811
    """CVODE at the tolerance the FMU declares (rtol 1e-6: 0.6 Pa here): the tank ends at
    601325 Pa within it and never falls below it by more; CVODE's root finding locates the
    valve's switches (event indicators), which the FMU's log names."""
    fmu = base.build_variant(workdir, library, "me-relief-vent", RELIEF_VENT_MODEL)
    md = read_model_description(fmu)
    rtol = float(md.defaultExperiment.tolerance)
    p_closed = P_ATM + CRACKING
    tol_pa = rtol * p_closed
    logs = []
    res = fmpy.simulate_fmu(
        str(fmu),
        fmi_type="ModelExchange",
        solver="CVode",
        relative_tolerance=rtol,
        output_interval=0.01,
        debug_logging=True,
        logger=lambda env, inst, status, cat, msg: logs.append(msg.decode()),
    )
    p = np.asarray(res["tank.p"])
    events = [m for m in logs if "event at" in m]
    err_end, err_low = float(p[-1]) - p_closed, float(p.min()) - p_closed
    print(
        f"FMPy ME (CVode, rtol {rtol:g}): {md.numberOfEventIndicators} event indicators, "
        f"tank.p at {float(res['time'][-1]):g} s = {float(p[-1]):.6f} Pa, error {err_end:+.3e} Pa, "
        f"lowest {err_low:+.3e} Pa (tolerance {tol_pa:.2f} Pa); {len(events)} events"
        f"{': ' + events[0] if events else ''}"
    )
    assert md.numberOfEventIndicators >= 4, "cracking and full-flow points, both ways"
    assert abs(err_end) <= tol_pa
    assert err_low >= -tol_pa
    assert any("relief" in m for m in events), events


def test_cylinder_breaks_away_and_returns_in_cvode(workdir, library, tmp_path):  # noqa: F811
    """The gallery's pneumatic cylinder: its rod is held by static friction until the breakaway
    event indicator fires, slides to its far stop, rests there and breaks away back. FMPy's CVODE
    at the declared tolerance (rtol 1e-6) follows the CLI's run (rk4, h = 1e-5 s) within 100 ×
    that tolerance of each output's scale at every output time."""
    text = (base.ROOT / "examples" / "cylinder" / "model.toml").read_text()
    fmu = base.build_variant(workdir, library, "me-cylinder", text)
    md = read_model_description(fmu)
    rtol = float(md.defaultExperiment.tolerance)
    header, cli = base.run_cli(fmu / "resources" / "model.toml", None, tmp_path / "cli.csv")
    logs = []
    res = fmpy.simulate_fmu(
        str(fmu),
        fmi_type="ModelExchange",
        solver="CVode",
        relative_tolerance=rtol,
        output_interval=1e-3,
        debug_logging=True,
        logger=lambda env, inst, status, cat, msg: logs.append(msg.decode()),
    )
    t_me = np.asarray(res["time"])
    worst, where = 0.0, None
    for col in ("cap.p", "rod.x", "rod.v"):
        i = header.index(col)
        scale = float(np.max(np.abs(cli[:, i])))
        for row in cli:
            j = int(np.argmin(np.abs(t_me - row[0])))
            if abs(t_me[j] - row[0]) > 1e-9:
                continue
            rel = abs(float(res[col][j]) - row[i]) / scale
            if rel > worst:
                worst, where = rel, f"{col} at t = {row[0]:g} s"
    breakaways = [m for m in logs if "breaks away" in m]
    print(
        f"FMPy ME (CVode, rtol {rtol:g}) vs CLI: worst {worst:.2e} of scale ({where}), limit "
        f"{100 * rtol:g}; {len(breakaways)} breakaways: {breakaways}"
    )
    assert len(breakaways) == 2, "off the start stop, and back off the far stop"
    assert worst <= 100 * rtol
