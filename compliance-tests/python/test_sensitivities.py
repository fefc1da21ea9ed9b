"""Forward parameter sensitivities through the FMU (docs/derivatives.md): a model with
`[sensitivities] parameters = [...]` has a `d(<output>)/d(<parameter>)` Real output for every
output, read with fmi2GetReal at every communication point, carried by FMU states, and checks 6
and 7 report like the other warnings. Run as compliance-tests/python/test_fmpy.py says (its
helpers and fixtures are reused; the variant FMU is built the same way).

The truth for the projectile is BlasterSim's closed form of the exit velocity (BlasterSim
verification §3.1.4, eq. 3.8), differentiated here by hand, independently of the Rust code:
adiabatic expansion p = p0·(x0/x)^γ of the gas behind the projectile (no dead volume), against
the atmosphere and a constant friction pressure p_f = F_f/A,

    v² = v0² + (2A/m)·W,  W = p0·w(x) − (p_atm + p_f)·(x − x0),
    w(x) = (x0^γ·x^(1−γ) − x0)/(1 − γ),

so ∂v/∂m = −(v² − v0²)/(2·m·v) and ∂v/∂p0 = (A/m)·w(x)/v at x = x_exit.
"""

import math
import tomllib

import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.fmi2 import fmi2Discard, fmi2LastSuccessfulTime, fmi2OK, fmi2Terminated, fmi2Warning

import test_fmpy as base
from test_fmpy import library, slaves, workdir  # noqa: F401 (pytest fixtures)

PARAMS = ["projectile.mass", "barrel.pressure"]
# Air as the model file's `species = "air"` documents it (docs/model-file.md): R = 287.05
# J/(kg·K), cp = 1004.675 J/(kg·K), so γ = cp/(cp − R) = 1.4.
AIR_GAMMA = 1004.675 / (1004.675 - 287.05)
REL_TOL_EXACT = 1e-6


def with_sensitivities(text, checks=None):
    listed = ", ".join(f'"{p}"' for p in PARAMS)
    text = f"{text.rstrip()}\n\n[sensitivities]\nparameters = [{listed}]\n"
    return base.with_checks(text, checks) if checks else text


def variant(workdir, library, label="projectile-sensitivities", checks=None):  # noqa: F811
    # The run ends at the exit (the FMU's default is to run on: docs/fmu.md).
    text = with_sensitivities(base.SHIPPED["projectile"].read_text(), checks)
    text = text.replace("[solver]\n", "[solver]\nstop_on_exit = true\n", 1)
    d = base.build_variant(workdir, library, label, text)
    return d, d / "resources" / "model.toml"


def exact_exit(toml):
    """(v, ∂v/∂m, ∂v/∂p0) at x_exit from eq. 3.8 on the model file's numbers."""
    spec = tomllib.loads(toml.read_text())
    (p,) = spec["piston"]
    (c,) = spec["chamber"]
    (atm,) = spec["reservoir"]
    assert c["volume"] == 0.0 and p["friction_static"] == p["friction_dynamic"]
    g = AIR_GAMMA
    a, m, x0, x = p["area"], p["mass"], p["x0"], p["x_exit"]
    v0 = p.get("v0", 0.0)
    p_f = p["friction_dynamic"]
    w = (x0**g * x ** (1.0 - g) - x0) / (1.0 - g)
    work = c["pressure"] * w - (atm["pressure"] + p_f) * (x - x0)
    v = math.sqrt(v0 * v0 + 2.0 * a / m * work)
    return v, -(v * v - v0 * v0) / (2.0 * m * v), a / m * w / v


def rel(a, b):
    return abs(a - b) / abs(b)


def test_model_description_lists_the_sensitivity_outputs(workdir, library):  # noqa: F811
    d, _ = variant(workdir, library)
    md = read_model_description(d)
    by_name = {v.name: v for v in md.modelVariables}
    plain = [
        v.name
        for v in md.modelVariables
        if v.causality == "output"
        and not v.name.startswith("d(")
        and v.name != "rc"
        and not v.name.endswith((".exited", ".open_fraction", ".choked", ".Q"))
    ]
    sens = [v for v in md.modelVariables if v.name.startswith("d(")]
    print(f"{len(plain)} outputs with a derivative, {len(sens)} sensitivity outputs, e.g.")
    for v in sens[:2]:
        print(f"  {v.name}: {v.causality}, {v.variability}, {v.type}, {v.description!r}")
    assert len(sens) == len(plain) * len(PARAMS)
    for prm in PARAMS:
        for o in plain:
            v = by_name[f"d({o})/d({prm})"]
            assert (v.causality, v.variability, v.type) == ("output", "continuous", "Real")
            assert o in v.description and prm in v.description


def test_exit_velocity_sensitivities_match_closed_form_and_cli(
    workdir, library, slaves, tmp_path  # noqa: F811
):
    """The doStep over the exit (fmi2Discard, terminated): d(v)/dm and d(v)/dp0 there equal the
    closed form to 1e-6 relative and the CLI's columns to 1e-12 relative."""
    d, toml = variant(workdir, library)
    s = slaves(d)
    s.initialize()
    rows = s.run(0, s.n_total)
    k, status, values = rows[-1]
    assert status == fmi2Discard and s.fmu.getBooleanStatus(fmi2Terminated) is True
    assert all(r[1] == fmi2OK for r in rows[:-1])
    get = dict(zip(s.names, values))
    t_exit = s.fmu.getRealStatus(fmi2LastSuccessfulTime)
    v, dv_dm, dv_dp0 = exact_exit(toml)
    fmu_v = get["projectile.v"]
    fmu_dm = get["d(projectile.v)/d(projectile.mass)"]
    fmu_dp = get["d(projectile.v)/d(barrel.pressure)"]
    header, cli = base.run_cli(toml, None, tmp_path / "cli.csv")
    last = cli[-1]
    cli_dm = float(last[header.index("d(projectile.v)/d(projectile.mass)")])
    cli_dp = float(last[header.index("d(projectile.v)/d(barrel.pressure)")])
    print(
        f"exit at t = {t_exit!r} s (step {k}): v {fmu_v!r} (exact {v!r}, rel "
        f"{rel(fmu_v, v):.2e})\n"
        f"  dv/dm  FMU {fmu_dm!r}, exact {dv_dm!r} (rel {rel(fmu_dm, dv_dm):.2e}), CLI {cli_dm!r} "
        f"(rel {rel(fmu_dm, cli_dm):.2e})\n"
        f"  dv/dp0 FMU {fmu_dp!r}, exact {dv_dp0!r} (rel {rel(fmu_dp, dv_dp0):.2e}), CLI "
        f"{cli_dp!r} (rel {rel(fmu_dp, cli_dp):.2e}); limits {REL_TOL_EXACT:.0e} (exact), "
        f"{base.REL_TOL_CLI:.0e} (CLI)"
    )
    assert rel(fmu_dm, dv_dm) < REL_TOL_EXACT
    assert rel(fmu_dp, dv_dp0) < REL_TOL_EXACT
    assert last[0] == pytest.approx(t_exit, rel=1e-12)
    assert base.close_rel(fmu_dm, cli_dm, base.REL_TOL_CLI)
    assert base.close_rel(fmu_dp, cli_dp, base.REL_TOL_CLI)
    # Every output, sensitivities included, against the CLI at every common time.
    base.compare_with_cli("projectile-sensitivities", d, toml, None, tmp_path)


def test_sensitivities_are_part_of_the_fmu_state(workdir, library, slaves):  # noqa: F811
    """getFMUstate at step 20, 30 more steps, setFMUstate, the same 30 steps: every output,
    sensitivities included, bit for bit; the serialized state in a fresh instance: the same."""
    d, _ = variant(workdir, library)
    s = slaves(d)
    s.initialize()
    s.run(0, 20)
    state = s.fmu.getFMUstate()
    first = s.run(20, 50)
    s.fmu.setFMUstate(state)
    again = s.run(20, 50)
    blob = s.fmu.serializeFMUstate(state)
    s.fmu.freeFMUstate(state)
    fresh = slaves(d, "fresh")
    fresh.initialize()
    st = fresh.fmu.deSerializeFMUstate(blob)
    fresh.fmu.setFMUstate(st)
    fresh.fmu.freeFMUstate(st)
    restored = fresh.run(20, 50)
    isens = [i for i, n in enumerate(s.names) if n.startswith("d(")]
    print(
        f"{len(isens)} sensitivity outputs over 30 steps from t = {s.t(20)!r} s; state blob "
        f"{len(blob)} bytes; e.g. d(projectile.v)/d(projectile.mass) at step 50 = "
        f"{first[-1][2][s.names.index('d(projectile.v)/d(projectile.mass)')]!r}"
    )
    base.assert_rows_identical(first, again, s.names, "setFMUstate")
    base.assert_rows_identical(first, restored, s.names, "deserialized state")
    assert first[-1][2][s.names.index("d(projectile.v)/d(projectile.mass)")] != 0.0


def test_check_7_warns(workdir, library, slaves):  # noqa: F811
    """Check 7 reports like checks 4, 5, 8, 9: with a threshold below the round-off drift of
    the projectile's d E_total/dp (1e-30 instead of the default 1e-4), doSteps return
    fmi2Warning with a log line naming the check, and the run goes on."""
    d, _ = variant(workdir, library, "projectile-sensitivities-check7", {"energy_gradient_drift": "1e-30"})
    s = slaves(d)
    statuses, rows, _ = base.run_with_warnings(s, 7, "projectile-sensitivities")
    rc = sorted({r[2][s.names.index("rc")] for r in rows})
    print(f"rc values seen: {rc}")
    assert 7.0 in rc


def test_check_6_warns(workdir, library, slaves):  # noqa: F811
    """Check 6 the same way (threshold 1e-30 instead of 1e-5). d m_total/dp stays exactly its
    initial value along the bore (the chamber's mass is constant), so the check fires only at
    the exit, where the jump s⁺ = s⁻ + (f⁻ − f⁺)·dt_e/dp rounds: the exit step logs a warning
    naming check 6 beside the Discard that ends the run."""
    d, _ = variant(workdir, library, "projectile-sensitivities-check6", {"mass_gradient_drift": "1e-30"})
    s = slaves(d)
    s.initialize()
    rows = s.run(0, s.n_total)
    lines = base.check_lines(s, 6, fmi2Warning)
    other = [m[2] for m in s.logs if "run-time check" in m[2] and "run-time check 6:" not in m[2]]
    print(f"{len(rows)} doSteps, last {base.STATUS[rows[-1][1]]}; check 6 lines {lines}")
    assert all(r[1] == fmi2OK for r in rows[:-1]) and rows[-1][1] == fmi2Discard
    assert lines and not other
    assert rows[-1][2][s.names.index("rc")] == 6.0
