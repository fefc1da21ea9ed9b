"""Every error reaches Python as an exception with its facts, never as a crash: ModelError
(file, line, column, key), SolverError, CheckFailed (the check code), StateError, KeyError,
TypeError."""

import pickle

import pytest

import plenum
from conftest import ROOT

TANK = """[model]
name = "vent"

[gas]
species = "air"

[solver]
t_end = 1.0
output_interval = 0.1

[[chamber]]
name = "tank"
volume = -1e-3
pressure = 5e5
temperature = 300.0

[[reservoir]]
name = "atm"
pressure = 101325.0
temperature = 300.0

[[valve]]
name = "v"
from = "tank"
to = "atm"
coefficient = 1e-8
"""


def test_model_error_names_file_line_column_and_key():
    with pytest.raises(plenum.ModelError) as e:
        plenum.Model.from_toml(TANK, "vent.toml")
    err = e.value
    line = TANK.splitlines().index("volume = -1e-3") + 1
    print(f"ModelError: {err}  (file {err.file!r}, line {err.line}, column {err.column}, key {err.key!r})")
    assert (err.file, err.line, err.column, err.key) == ("vent.toml", line, 1, "chamber.tank.volume")
    assert isinstance(err, ValueError) and isinstance(err, plenum.PlenumError)
    assert len(err.errors) == 1 and str(err.errors[0]) == str(err)


def test_every_problem_is_listed_and_a_bad_override_changes_nothing():
    text = TANK.replace("volume = -1e-3", "volume = 1e-3").replace("coefficient = 1e-8", "coefficient = -2")
    text = text.replace('species = "air"', 'species = "unobtainium"')
    with pytest.raises(plenum.ModelError) as e:
        plenum.Model.from_toml(text)
    keys = [d.key for d in e.value.errors]
    print(f"{len(keys)} problems: {keys}")
    assert "gas.species" in keys and "valve.v.coefficient" in keys
    model = plenum.Model.from_toml(TANK.replace("volume = -1e-3", "volume = 1e-3"))
    with pytest.raises(plenum.ModelError) as e:
        model.set("tank.pressure", "6 m")
    assert e.value.file == "--set" and e.value.key.startswith("tank.pressure=")
    print(f"bad override: {e.value}")
    assert model.overrides == [] and model.run()["tank.p"][0] == 5e5
    with pytest.raises(plenum.ModelError):
        model.set("tank.no_such_key", 1.0)
    with pytest.raises(TypeError):
        model.set("tank.pressure", object())
    with pytest.raises(plenum.ModelError) as e:
        plenum.Model.from_file(ROOT / "no" / "such.toml")
    assert "cannot read" in str(e.value)


def test_solver_error():
    model = plenum.Model.from_file(ROOT / "compliance-tests" / "peers" / "models" / "cantera_chain20.toml")
    model.set("solver.max_steps", 3).set("solver.method", "dopri5")
    with pytest.raises(plenum.SolverError) as e:
        model.run()
    print(f"SolverError at t = {e.value.time!r} s: {e.value}; {len(e.value.result)} rows kept")
    assert len(e.value.result) >= 1 and e.value.time == e.value.result.time[-1]
    sim = model.simulation()
    with pytest.raises(plenum.SolverError):
        sim.advance(20.0)


def test_check_failed_codes_1_and_2():
    # Code 1: the projectile cannot reach an exit 100 m away by max_time.
    model = plenum.Model.from_file(ROOT / "models" / "projectile.toml").set("projectile.x_exit", 100.0).set("solver.t_end", 0.1)
    with pytest.raises(plenum.CheckFailed) as e:
        model.run()
    print(f"CheckFailed code {e.value.code} at t = {e.value.time!r} s: {e.value}")
    assert e.value.code == 1 and e.value.result.rc == 1
    sim = model.simulation()
    with pytest.raises(plenum.CheckFailed) as e1:
        sim.advance(1.0)
    assert e1.value.code == 1 and sim.finished == "never_exited"
    # Code 2: a mass flow controller drains a closed tank below zero mass.
    drain = TANK.replace("volume = -1e-3", "volume = 1e-3").replace(
        '[[valve]]\nname = "v"\nfrom = "tank"\nto = "atm"\ncoefficient = 1e-8',
        '[[mass_flow]]\nname = "pump"\nfrom = "tank"\nto = "atm"\nrate = 0.01')
    with pytest.raises(plenum.CheckFailed) as e:
        plenum.Model.from_toml(drain, "drain.toml").run()
    m0 = 5e5 * 1e-3 / (287.05 * 300.0)
    print(f"CheckFailed code {e.value.code} at t = {e.value.time!r} s (the tank's {m0:.5f} kg "
          f"last {m0 / 0.01:.4f} s at 0.01 kg/s)")
    assert e.value.code == 2 and e.value.time <= m0 / 0.01 + 1e-9
    sim = plenum.Model.from_toml(drain, "drain.toml").simulation()
    with pytest.raises(plenum.CheckFailed) as e2:
        sim.advance(1.0)
    assert e2.value.code == 2 and sim.time == e2.value.time <= m0 / 0.01


def test_state_errors_and_bad_calls():
    model = plenum.Model.from_file(ROOT / "models" / "blowdown.toml")
    sim = model.simulation()
    sim.advance(0.5)
    blob = sim.state()
    damaged = bytearray(blob)
    damaged[-3] ^= 0x40
    other = plenum.Model.from_file(ROOT / "models" / "two_tanks.toml").simulation().state()
    for label, bad in [("damaged", bytes(damaged)), ("truncated", blob[:40]), ("empty", b""),
                       ("another model", other), ("not a state", b"x" * 100)]:
        with pytest.raises(plenum.StateError) as e:
            sim.restore(bad)
        print(f"{label}: StateError: {e.value}")
        assert sim.time == 0.5
    with pytest.raises(KeyError):
        sim["tank.nope"]
    with pytest.raises(ValueError):
        sim.advance(0.25)  # backwards
    with pytest.raises(ValueError):
        sim.advance(float("nan"))
    with pytest.raises(TypeError):
        sim[3]
    with pytest.raises(ValueError):
        model.build_fmu("x.fmu", fmi_version=4)
    with pytest.raises(plenum.StateError):
        pickle.loads(pickle.dumps(sim).replace(b"PLNMSTAT", b"PLNMSTAX"))
