"""`Model.build_fmu` with nothing but the wheel: FMI 2.0 and 3.0 FMUs of both platforms from
the libraries the package ships, with overrides applied; FMPy's Co-Simulation equals
`Model.run` bit for bit."""

import zipfile

import numpy as np
import pytest

import plenum
from conftest import ROOT

fmpy = pytest.importorskip("fmpy")


@pytest.mark.parametrize("version", [2, 3])
def test_build_fmu_and_fmpy_equals_the_run(tmp_path, version):
    model = plenum.Model.from_file(ROOT / "models" / "blowdown.toml").set("tank.pressure", "8 bar")
    path = model.build_fmu(tmp_path, fmi_version=version)
    assert path == str(tmp_path / "blowdown.fmu")
    names = zipfile.ZipFile(path).namelist()
    folders = {2: ("linux64", "win64"), 3: ("x86_64-linux", "x86_64-windows")}[version]
    assert all(any(n.startswith(f"binaries/{f}/") for n in names) for f in folders), names
    md = fmpy.read_model_description(path)
    assert md.fmiVersion == f"{version}.0"
    result = model.run()
    res = fmpy.simulate_fmu(path, output=["tank.p", "tank.T"])
    print(f"FMI {version}.0 FMU ({len(names)} entries): FMPy {len(res)} rows, tank.p "
          f"{res['tank.p'][0]!r} … {res['tank.p'][-1]!r} Pa; Model.run {len(result)} rows")
    assert res["tank.p"][0] == 8e5
    assert np.array_equal(res["time"], result.time)
    assert np.array_equal(res["tank.p"], result["tank.p"]) and np.array_equal(res["tank.T"], result["tank.T"])


def test_build_fmu_one_platform_and_errors(tmp_path):
    model = plenum.Model.from_file(ROOT / "models" / "two_tanks.toml")
    path = model.build_fmu(tmp_path / "only-linux.fmu", platforms=["linux64"])
    names = zipfile.ZipFile(path).namelist()
    assert any(n.startswith("binaries/linux64/") for n in names)
    assert not any(n.startswith("binaries/win64/") for n in names)
    with pytest.raises(ValueError):
        model.build_fmu(tmp_path / "x.fmu", platforms=["darwin64"])
