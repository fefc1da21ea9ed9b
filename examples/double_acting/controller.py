"""A co-simulation master for the double-acting cylinder circuit: a controller (FMPy) that
switches the 5/2 valve (the FMU input `valve.position`) on the cylinder's end-position outputs,
as a PLC reading two reed switches would.

    cargo build --lib --bins
    PY=$(bash scripts/python-env.sh)
    "$PY" examples/double_acting/controller.py --plot examples/double_acting/double_acting.png

The model file's spool follows a schedule (a table); `fmu_model` turns it into an FMU input
(position 0 at rest), `schedule_model` writes the switches a controller chose back as a step
table, for the CLI. The cycle: the valve rests (cylinder retracted) until `START`; it extends
the rod, and once the reed switch at the outer end (`SENSOR` before the stop) has seen the
piston for `DWELL` it retracts it; `DWELL` after the inner switch sees it, it extends again.
"""

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
STEP = 1e-3
START = 0.05
DWELL = 0.15
SENSOR = 1e-3  # m: the reed switches close this far before each stop
POSITION = re.compile(r"\nposition = \{ table = \[.*?\] \}\n", re.S)


def fmu_model(text):
    """The model file with the spool position an FMU input (0 at rest) instead of a table."""
    text, n = POSITION.subn("\nposition = 0.0\n", text, count=1)
    assert n == 1, "no position table in the model"
    return text.replace("\n[solver]\n", '\n[inputs]\nnames = ["valve.position"]\n\n[solver]\n', 1)


def schedule_model(text, switches):
    """The model file with the spool position the step table of `switches` [(t, position)]."""
    table = ", ".join(f"[{t!r}, {s!r}]" for t, s in switches)
    text, n = POSITION.subn(
        f'\nposition = {{ table = [{table}], interpolation = "step" }}\n', text, count=1)
    assert n == 1, "no position table in the model"
    return text


def run(fmu, t_end=None):
    """Run the cycle to `t_end` (the FMU's default stop time); return the output names, the rows
    (time first) and the switches [(time, spool position)]."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(fmu)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    outputs = [v.name for v in md.modelVariables if v.causality == "output"]
    t_end = float(md.defaultExperiment.stopTime) if t_end is None else t_end
    stroke = next(float(v.start) for v in md.modelVariables if v.name == "cyl.x_max")
    unzipdir = extract(fmu)
    slave = FMU2Slave(guid=md.guid, unzipDirectory=unzipdir,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="circuit")
    try:
        slave.instantiate()
        slave.setupExperiment(startTime=0.0, stopTime=t_end)
        slave.enterInitializationMode()
        slave.exitInitializationMode()
        position = 0.0
        switches = [(0.0, position)]
        phase, since = "rest", None
        rows = [(0.0, *slave.getReal([vr[n] for n in outputs]))]
        n = round(t_end / STEP)
        for k in range(n):
            t = k * STEP
            (x,) = slave.getReal([vr["cyl.x"]])
            want = phase
            if phase == "rest" and t >= START - 1e-12:
                want = "extend"
            elif phase in ("extend", "retract"):
                seen = x >= stroke - SENSOR if phase == "extend" else x <= SENSOR
                since = (since if since is not None else t) if seen else None
                if since is not None and t - since >= DWELL - 1e-12:
                    want = "retract" if phase == "extend" else "extend"
            if want != phase:
                phase, since = want, None
                position = 1.0 if phase == "extend" else 0.0
                slave.setReal([vr["valve.position"]], [position])
                switches.append((t, position))
                # The row at a switch shows the outputs after it, as a table's breakpoint does
                # in the command line's run (the valve's flows change with its input at once).
                rows[-1] = (t, *slave.getReal([vr[n] for n in outputs]))
            slave.doStep(currentCommunicationPoint=t, communicationStepSize=STEP)
            rows.append(((k + 1) * STEP, *slave.getReal([vr[n] for n in outputs])))
        slave.terminate()
    finally:
        slave.freeInstance()
        shutil.rmtree(unzipdir, ignore_errors=True)
    return ["time", *outputs], rows, switches


def plot(names, rows, switches, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    col = {n: i for i, n in enumerate(names)}
    t = [r[0] for r in rows]
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    for name, label, style in (("cyl_cap_bore.p", "cap bore", "-C0"),
                               ("cyl_rod_bore.p", "rod bore", "-C1"),
                               ("cyl_cap.p", "cap port (behind the cushion)", ":C0"),
                               ("cyl_rod.p", "rod port", ":C1"),
                               ("frl_out.p", "regulator outlet", "-C2")):
        ax1.plot(t, [r[col[name]] * 1e-5 for r in rows], style, label=label)
    ax1.set_ylabel("pressure, bar abs")
    ax1.legend(loc="lower right", fontsize="small")
    ax2.plot(t, [r[col["cyl.x"]] * 1e3 for r in rows], color="C3", label="stroke")
    for s in switches[1:]:
        for ax in (ax1, ax2):
            ax.axvline(s[0], color="grey", lw=0.8)
    ax2.set_ylabel("stroke, mm")
    ax2.set_xlabel("time, s (the controller switches the valve at the grey lines)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def build_fmu(text, out_dir, bin_dir):
    """Pack the model text as an FMU in `out_dir` with fmu-build and the debug library."""
    toml = Path(out_dir) / "double_acting.toml"
    toml.write_text(text)
    subprocess.run([str(Path(bin_dir) / "fmu-build"), str(toml), "-o", str(out_dir),
                    "--lib", str(Path(bin_dir) / "libplenum.so")], check=True,
                   stdout=subprocess.DEVNULL)
    return Path(out_dir) / "double_acting.fmu"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin-dir", default=str(ROOT / "target" / "debug"))
    ap.add_argument("--plot")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        fmu = build_fmu(fmu_model((HERE / "model.toml").read_text()), d, a.bin_dir)
        names, rows, switches = run(str(fmu))
    print(f"{len(switches) - 1} valve switches at " + ", ".join(f"{s[0]:.3f} s" for s in switches[1:]))
    if a.plot:
        plot(names, rows, switches, a.plot)
    return names, rows, switches


if __name__ == "__main__":
    sys.exit(main() and 0)
