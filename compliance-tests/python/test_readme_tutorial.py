"""The README tutorial's FMPy step, run as written (the rest of the section, and the FMU
loaded without FMPy, is compliance-tests/tests/readme_tutorial.rs).

The model and the Python script are read from README.md's section "Your first model in ten
minutes"; the FMU is built from that model with the section's `fmu-build` command, whose
`target/release/...` programs are this build's (PLENUM_BIN_DIR, else the newer of
target/release and target/debug); the script runs in FMPy in a scratch directory that stands
for the repository root. Its output must be the line the section quotes, and that line's
pressures the closed form of two isothermal tanks joined by a linear valve:
Δp(t) = Δp₀·exp(−t/τ), τ = 1/(K·R·T·(1/V_a + 1/V_b)), around the volume-weighted mean pressure,
with air's R = 287.05 J/(kg·K).
"""

import math
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Your first model in ten minutes"
R_AIR = 287.05


def target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def built(name):
    if "PLENUM_BIN_DIR" in os.environ:
        path = Path(os.environ["PLENUM_BIN_DIR"]) / name
        assert path.is_file(), f"{path} does not exist (PLENUM_BIN_DIR)"
        return path
    candidates = [target_dir() / p / name for p in ("release", "debug")]
    existing = [c for c in candidates if c.is_file()]
    assert existing, f"no {name} in {candidates}: run `cargo build --lib --bins` first"
    return max(existing, key=lambda c: c.stat().st_mtime)


def tutorial_blocks():
    """(language, text, prose before it) of every fenced block of the section."""
    text = (ROOT / "README.md").read_text()
    start = text.index(SECTION) + len(SECTION)
    end = text.find("\n## ", start)
    section = text[start : end if end >= 0 else len(text)]
    blocks = []
    for m in re.finditer(r"(?ms)^```(\w*)\n(.*?)^```", section):
        prose = section[: m.start()].rsplit("```", 1)[-1]
        blocks.append((m.group(1), m.group(2), prose))
    return blocks


def named_path(prose, ext):
    paths = [p for p in re.findall(r"`([^`]+)`", prose) if p.endswith(ext)]
    assert paths, f"no `…{ext}` path in {prose!r}"
    return paths[-1]


def closed_form(model, t):
    a, b = model["chamber"]
    assert a["temperature"] == b["temperature"]
    assert model["gas"] == {"species": "air", "isothermal": True}
    k = model["valve"][0]["coefficient"]
    rate = k * R_AIR * a["temperature"] * (1 / a["volume"] + 1 / b["volume"])
    total = a["volume"] + b["volume"]
    mean = (a["pressure"] * a["volume"] + b["pressure"] * b["volume"]) / total
    dp = (a["pressure"] - b["pressure"]) * math.exp(-rate * t)
    return mean + dp * b["volume"] / total, mean - dp * a["volume"] / total


def test_readme_fmpy_step_prints_the_quoted_line_and_the_closed_form(tmp_path):
    blocks = tutorial_blocks()
    (model_text, model_prose) = next((t, p) for lang, t, p in blocks if lang == "toml")
    (script, script_prose) = next((t, p) for lang, t, p in blocks if lang == "python")
    quoted = [t.strip() for lang, t, _ in blocks if lang == "text"][-1]
    model_path = tmp_path / named_path(model_prose, ".toml")
    script_path = tmp_path / named_path(script_prose, ".py")
    model_path.parent.mkdir(parents=True, exist_ok=True)
    model_path.write_text(model_text)
    script_path.parent.mkdir(parents=True, exist_ok=True)
    script_path.write_text(script)

    shell = "\n".join(t for lang, t, _ in blocks if lang == "sh")
    build = [
        line.split(" #")[0].strip()
        for line in shell.splitlines()
        if line.strip().startswith("target/release/fmu-build")
    ]
    assert len(build) == 1, build
    args = [
        str(built(Path(w).name)) if w.startswith("target/release/") else w
        for w in shlex.split(build[0])
    ]
    print("$", " ".join(args))
    subprocess.run(args, cwd=tmp_path, check=True)
    run = [line for line in shell.splitlines() if line.strip().startswith('"$PY"')]
    assert [shlex.split(r)[1:] for r in run] == [[named_path(script_prose, ".py")]], run

    out = subprocess.run(
        [sys.executable, str(script_path.relative_to(tmp_path))],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    model = tomllib.loads(model_text)
    t_end = model["solver"]["t_end"]
    pa, pb = closed_form(model, t_end)
    print(f"FMPy printed: {out}")
    print(f"README quotes: {quoted}")
    print(f"closed form at {t_end} s: a.p = {pa:.6f} Pa, b.p = {pb:.6f} Pa")
    assert out == quoted
    t, a_p, b_p = (float(x) for x in re.findall(r"= ([-+0-9.e]+)", out))
    assert t == t_end
    for got, exact in ((a_p, pa), (b_p, pb)):
        print(f"  {got} against {exact}: {abs(got - exact) / exact:.1e} relative")
        assert abs(got - exact) / exact < 1e-5
