"""`Model.run` against the command line: the same rows, bit for bit, for every shipped model
(models/, the peer networks, the gallery), through the wheel's own `plenum` command and the
repository's build of the CLI."""

import numpy as np
import pytest

import plenum
from conftest import EXAMPLES, MODELS, PEER_MODELS, ROOT, cli_run, plenum_command

ALL = MODELS + PEER_MODELS + EXAMPLES


def python_run(path, **kw):
    """(result, stopped) of Model.run: a run stopped by a check or the solver still has rows."""
    try:
        return plenum.Model.from_file(path).run(**kw), None
    except (plenum.CheckFailed, plenum.SolverError) as e:
        return e.result, e


def same_bits(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(a.view(np.uint64) == b.view(np.uint64)))


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(ROOT)))
def test_run_equals_the_cli_bit_for_bit(path, tmp_path, repo_cli):
    result, stopped = python_run(path)
    commands = [("wheel's plenum", plenum_command())]
    if repo_cli:
        commands.append(("repository CLI", repo_cli))
    for label, command in commands:
        names, rows, p = cli_run(command, path, tmp_path)
        assert p.returncode == (3 if stopped else 0), (label, p.stderr)
        assert names == result.names, label
        assert same_bits(rows, result.values), f"{label}: rows differ"
        print(f"{path.name}: {len(rows)} rows × {len(names)} columns equal to the {label}'s CSV "
              f"bit for bit (rc {result.rc}, exit status {p.returncode})")


def test_run_overrides_equal_the_cli_set(tmp_path):
    """Values with units and a method through Model.set / run(method=) as `--set`, `--method`."""
    path = ROOT / "models" / "two_tanks.toml"
    model = plenum.Model.from_file(path).set("a.pressure", "6 bar").set("valve.coefficient", 2e-8)
    result = model.run(method="bdf")
    names, rows, p = cli_run(plenum_command(), path, tmp_path,
                             sets=["a.pressure=6bar", "valve.coefficient=2e-8"], method="bdf")
    assert p.returncode == 0, p.stderr
    assert names == result.names and same_bits(rows, result.values)
    assert result["a.p"][0] == 6e5
    assert result.stats["method"] == "bdf"
    print(f"two_tanks with a.pressure = 6 bar, bdf: {len(rows)} rows equal to `--set`'s bit for bit")


def test_two_tanks_conserves_mass_and_reads_into_pandas():
    """The two tanks: their total mass is conserved (a closed network); the table reads into pandas."""
    model = plenum.Model.from_file(ROOT / "models" / "two_tanks.toml")
    r = model.run()
    print(r, r.messages)
    # The run's own mass is conserved; the pressures meet.
    m = r["a.m"] + r["b.m"]
    drift = float(np.max(np.abs(m - m[0])) / m[0])
    print(f"two_tanks: mass drift {drift:.1e} over {len(r)} rows (limit 1e-12)")
    assert drift < 1e-12
    df = r.to_pandas()
    assert list(df.columns) == r.names[1:] and df.index.name == "time"
    assert df["a.p"].iloc[-1] == r["a.p"][-1]


def test_result_and_model_api():
    model = plenum.Model.from_file(ROOT / "models" / "projectile.toml")
    assert model.name == "projectile"
    assert model.check() == []
    names = {v.name: v for v in model.variables}
    assert names["barrel.p"].unit == "Pa" and names["barrel.p"].causality == "output"
    assert names["barrel.pressure"].causality == "parameter"
    assert names["barrel.pressure"].start == 701325.0
    r = model.run()
    assert r.exit_time is not None and r.time[-1] == r.exit_time
    assert r["projectile.exited"][-1] == 1.0
    print(f"projectile: exit at {r.exit_time!r} s, v = {r['projectile.v'][-1]!r} m/s")
    # Pickled models carry their overrides.
    import pickle

    m2 = pickle.loads(pickle.dumps(model.set("barrel.pressure", "8 bar")))
    assert m2.overrides == model.overrides and m2.source == model.source
    # help() reads the docstrings.
    assert "model file" in plenum.Model.__doc__ and "bit" in plenum.Model.run.__doc__


def test_from_toml_and_from_dict_equal_from_file():
    path = ROOT / "models" / "two_tanks.toml"
    import tomllib

    with open(path, "rb") as f:
        d = tomllib.load(f)
    a = plenum.Model.from_file(path).run()
    b = plenum.Model.from_toml(path.read_text()).run()
    c = plenum.Model.from_dict(d).run()
    assert same_bits(a.values, b.values) and same_bits(a.values, c.values)


def test_sensitivities_columns():
    """A model with [sensitivities]: d(v)/d(mass) of the projectile at t = 1 ms, against the
    central difference of two runs."""
    text = (ROOT / "models" / "projectile.toml").read_text()
    text += '\n[sensitivities]\nparameters = ["projectile.mass"]\n'
    r = plenum.Model.from_toml(text, "projectile+sens").run()
    k = 10
    assert r.time[k] == 1e-3
    dv = r.sensitivity("projectile.v", "projectile.mass")[k]
    h = 1e-6
    vp = plenum.Model.from_file(ROOT / "models" / "projectile.toml").set("projectile.mass", 0.002 + h).run()
    vm = plenum.Model.from_file(ROOT / "models" / "projectile.toml").set("projectile.mass", 0.002 - h).run()
    fd = (vp["projectile.v"][k] - vm["projectile.v"][k]) / (2 * h)
    print(f"dv/dm at t = 1 ms: {dv!r} (sensitivity) against {fd!r} (central difference)")
    assert abs(dv - fd) <= 1e-4 * abs(fd)
