"""The double-acting cylinder circuit in OMSimulator: the plant FMU and a second FMU, the
reed-switch controller written in C (ssp/controller.c, FMI 2.0 Co-Simulation, compiled here
with gcc and packed with its ssp/modelDescription.xml), wired by an SSP
(ssp/SystemStructure.ssd) and run by OMSimulator's executable; compared with the FMPy run of
the same plant FMU driven by controller.py. Needs OMSimulator (built by
compliance-tests/importers/build-tools.sh into target/tools/, or $PLENUM_OMSIMULATOR) and gcc;
skipped without them unless PLENUM_IMPORTERS_REQUIRE_ALL=1.
"""

import csv
import os
import shutil
import subprocess
import tomllib
import zipfile

import pytest

from conftest import ROOT, build_fmu, load_module

HERE = ROOT / "examples" / "double_acting"
controller = load_module(HERE / "controller.py", "double_acting_controller")
peers = load_module(HERE / "test_double_acting.py", "double_acting_peers")
OMSIMULATOR = os.environ.get(
    "PLENUM_OMSIMULATOR", str(ROOT / "target" / "tools" / "OMSimulator" / "bin" / "OMSimulator"))


def tools():
    missing = [t for t in (OMSIMULATOR, shutil.which("gcc")) if not t or not os.path.isfile(t)]
    if missing:
        if os.environ.get("PLENUM_IMPORTERS_REQUIRE_ALL") == "1":
            pytest.fail(f"missing: {missing}")
        pytest.skip(f"OMSimulator or gcc missing ({OMSIMULATOR})")


def controller_fmu(out_dir):
    """The C controller as an FMU: compiled with gcc, packed with Python's zipfile."""
    so = out_dir / "reed_controller.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror",
                    "-Wno-unused-parameter", "-o", str(so), str(HERE / "ssp" / "controller.c"),
                    "-lm"], check=True)
    fmu = out_dir / "reed_controller.fmu"
    with zipfile.ZipFile(fmu, "w") as z:
        z.write(HERE / "ssp" / "modelDescription.xml", "modelDescription.xml")
        z.write(so, "binaries/linux64/reed_controller.so")
    return fmu


def test_omsimulator_runs_the_c_controller_and_the_circuit_as_fmpy_does(fmu_dir, tmp_path):
    tools()
    text = (HERE / "model.toml").read_text()
    t_end = tomllib.loads(text)["solver"]["t_end"]
    toml = tmp_path / "double_acting.toml"
    toml.write_text(controller.fmu_model(text))
    plant = build_fmu(toml, fmu_dir)
    ssp = tmp_path / "circuit.ssp"
    with zipfile.ZipFile(ssp, "w") as z:
        z.write(HERE / "ssp" / "SystemStructure.ssd", "SystemStructure.ssd")
        z.write(plant, "resources/double_acting.fmu")
        z.write(controller_fmu(tmp_path), "resources/reed_controller.fmu")

    run = subprocess.run([OMSIMULATOR, str(ssp), "--resultFile=oms.csv", f"--stopTime={t_end}",
                          f"--tempDir={tmp_path}", f"--workingDir={tmp_path}"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    print(run.stdout[-2000:], run.stderr[-2000:])
    assert run.returncode == 0
    assert not [ln for ln in (run.stdout + run.stderr).splitlines()
                if ln.startswith(("warning:", "error:"))]
    with open(tmp_path / "oms.csv", newline="") as f:
        rows = list(csv.reader(f))
    prefix = "double_acting_circuit.root."
    head = [h.removeprefix(prefix) for h in rows[0]]
    # OMSimulator writes a row more than once at some times (its loop solver's iterations);
    # the last one at each time is the communication point's.
    at = {}
    for r in rows[1:]:
        at[round(float(r[0]), 9)] = [float(v) for v in r]
    oms_t = sorted(at)
    oms = {h: [at[t][i] for t in oms_t] for i, h in enumerate(head)}

    names, fmpy_rows, switches = controller.run(str(plant))
    col = {n: [r[i] for r in fmpy_rows] for i, n in enumerate(names)}
    assert len(oms_t) == len(col["time"])
    assert max(abs(a - b) for a, b in zip(oms_t, col["time"])) < 1e-9

    # The C controller switches where the Python one does.
    pos = oms["controller.position"]
    oms_switches = [(oms_t[i], pos[i]) for i in range(1, len(pos)) if pos[i] != pos[i - 1]]
    print("OMSimulator switches:", ", ".join(f"{t:.3f} ({s:g})" for t, s in oms_switches))
    print("FMPy switches:       ", ", ".join(f"{t:.3f} ({s:g})" for t, s in switches[1:]))
    assert len(oms_switches) == len(switches) - 1 >= 4
    for (ta, sa), (tb, sb) in zip(oms_switches, switches[1:]):
        # OMSimulator's row at t holds the position set for the step from t.
        assert sa == sb and abs(ta - tb) < 1e-9

    # The same plant FMU at the same communication points, with the same inputs; OMSimulator
    # adds its step to the time, FMPy multiplies, so the points differ by ulps and the
    # adaptive solver's steps with them: equal to the tolerance, as the CLI run is, beyond the
    # strokes' shift in time (test_double_acting.py says why the flows magnify it and why the
    # in-strokes start apart).
    t = col["time"]
    shift = peers.stroke_shift(t, oms["plant.cyl.x"], col["cyl.x"])
    print(f"strokes through the middle: OMSimulator and FMPy at most {shift:.1e} s apart "
          f"(allowed {peers.SHIFT_S:g} s)")
    assert shift <= peers.SHIFT_S
    worst = {}
    for name in ("cyl_cap_bore.p", "cyl_rod_bore.p", "cyl_cap.p", "cyl_rod.p", "frl_out.p",
                 "cyl.x", "cyl_cap_bore.m", "cyl.v", "fc_a.mdot", "fc_b.mdot", "frl.mdot"):
        ref = col[name]
        scale = max(abs(v) for v in ref)
        plain = [abs(a - b) / scale for a, b in zip(oms["plant." + name], ref)]
        err = peers.shifted_error(t, oms["plant." + name], ref)
        i_p = max(range(len(plain)), key=plain.__getitem__)
        i = max(range(len(err)), key=err.__getitem__)
        print(f"{name}: worst |OMSimulator - FMPy| / max|FMPy| = {plain[i_p]:.2e} at "
              f"{oms_t[i_p]:.3f} s, beyond the shift {err[i]:.2e} at {oms_t[i]:.3f} s "
              f"(final time {plain[-1]:.2e})")
        kind = "flow" if name.endswith(("mdot", ".v")) else "state"
        worst[kind] = max(worst.get(kind, 0.0), err[i])
    print(f"worst beyond the shift: states {worst['state']:.2e}, flows and speed "
          f"{worst['flow']:.2e}")
    assert worst["state"] <= 1e-7
    assert worst["flow"] <= 1e-5
