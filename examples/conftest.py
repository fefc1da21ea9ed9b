"""Shared fixtures of the example workflows (examples/python, examples/libcosim): the FMUs they
use, built here from the example models with fmu-build.

Needs `cargo build --workspace` first (target/debug/fmu-build, libplenum.so and
libplenum_controller.so); PLENUM_BIN_DIR points elsewhere.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("PLENUM_BIN_DIR", ROOT / "target" / "debug"))


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def fmu_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fmu-examples")


def build_fmu(toml, out_dir):
    tool, lib = BIN / "fmu-build", BIN / "libplenum.so"
    for f in (tool, lib):
        assert f.is_file(), f"{f} missing: run `cargo build --workspace` (or set PLENUM_BIN_DIR)"
    subprocess.run([str(tool), str(toml), "-o", str(out_dir), "--lib", str(lib)], check=True,
                   stdout=subprocess.DEVNULL)
    import tomllib

    with open(toml, "rb") as f:
        name = tomllib.load(f)["model"]["name"]
    fmu = Path(out_dir) / f"{name}.fmu"
    assert fmu.is_file()
    return fmu


@pytest.fixture(scope="session")
def airgun_fmu(fmu_dir):
    return build_fmu(ROOT / "examples" / "airgun" / "model.toml", fmu_dir)


@pytest.fixture(scope="session")
def tank_fmu(fmu_dir):
    return build_fmu(ROOT / "examples" / "libcosim" / "tank.toml", fmu_dir)


@pytest.fixture(scope="session")
def controller_fmu(fmu_dir):
    pkg = load_module(ROOT / "examples" / "libcosim" / "package.py", "plenum_package_controller")
    return pkg.package(BIN / "libplenum_controller.so", fmu_dir / "controller.fmu")
