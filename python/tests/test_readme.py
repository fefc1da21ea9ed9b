"""The README's Python section as a user runs it: the wheel installed into a fresh venv with no
Rust toolchain on PATH, the example run as written; the FMU it builds simulated by FMPy, equal
to the run bit for bit (Co-Simulation equals the command line)."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np

from conftest import ROOT


def readme_python():
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the README's Python section has one Python example"
    return blocks[0]


def test_no_rust_toolchain_on_path():
    if os.environ.get("PLENUM_FRESH_VENV") != "1":
        import pytest

        pytest.skip("not run by python/tests/run.sh")
    found = {t: shutil.which(t) for t in ("cargo", "rustc", "rustup")}
    print(f"toolchain on PATH: {found}; python {sys.executable}")
    assert not any(found.values())


def test_the_readme_example_runs_and_fmpy_simulates_its_fmu(tmp_path):
    code = readme_python()
    lines = [ln for ln in code.splitlines() if ln.strip() and not ln.startswith("#")]
    print(f"README example: {len(lines)} lines of Python")
    assert len(lines) <= 6
    (tmp_path / "models").mkdir()
    shutil.copy(ROOT / "models" / "two_tanks.toml", tmp_path / "models")
    script = tmp_path / "example.py"
    # The example, then its FMU through FMPy, compared with its own run.
    script.write_text(code + """
import numpy as np
from fmpy import simulate_fmu
fmu = simulate_fmu("tanks.fmu", output=["a.p", "b.p"])
assert np.array_equal(fmu["a.p"], result["a.p"]) and np.array_equal(fmu["b.p"], result["b.p"])
print(f"FMPy: {len(fmu)} rows, a.p = {fmu['a.p'][-1]!r} Pa at t = {fmu['time'][-1]!r} s, "
      f"equal to Model.run bit for bit")
""")
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    print(p.stdout, p.stderr)
    assert p.returncode == 0
    png, fmu = tmp_path / "tanks.png", tmp_path / "tanks.fmu"
    assert png.stat().st_size > 10_000 and fmu.stat().st_size > 100_000
    import zipfile

    names = zipfile.ZipFile(fmu).namelist()
    assert "binaries/linux64/two_tanks.so" in names and "binaries/win64/two_tanks.dll" in names
