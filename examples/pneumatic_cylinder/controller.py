"""A co-simulation master for the pneumatic cylinder FMU: a controller that drives the 3/2 valve
(the `inlet.opening` and `exhaust.opening` inputs) from the rod's position, as a PLC would.

    cargo build --lib --bins
    target/debug/fmu-build examples/pneumatic_cylinder/model.toml -o target/fmu-examples \
        --lib target/debug/libplenum.so
    PY=$(bash scripts/python-env.sh)
    "$PY" examples/pneumatic_cylinder/controller.py target/fmu-examples/pneumatic_cylinder.fmu \
        --plot pneumatic_cylinder.png

The cycle: the valve rests in exhaust until `START`; then it extends the rod (supply port open,
exhaust closed) until the rod has rested on its outer stop for `DWELL`, retracts it (supply
closed, exhaust open) until it has rested on its inner stop for `DWELL`, and starts again.
"""

import argparse
import shutil
import tempfile

from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

STEP = 1e-3
START = 0.05
DWELL = 0.1
STOP_TOLERANCE = 1e-9  # m: on a stop means within this of it, with zero velocity


def run(fmu, t_end=None):
    """Run the cycle to `t_end` (the FMU's default stop time); return the output names, the rows
    (time first) and the switches [(time, inlet opening, exhaust opening)]."""
    md = read_model_description(fmu)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    outputs = [v.name for v in md.modelVariables if v.causality == "output"]
    t_end = float(md.defaultExperiment.stopTime) if t_end is None else t_end
    x_max = next(float(v.start) for v in md.modelVariables if v.name == "rod.x_max")
    unzipdir = extract(fmu)
    slave = FMU2Slave(guid=md.guid, unzipDirectory=unzipdir,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="cylinder")
    try:
        slave.instantiate()
        slave.setupExperiment(startTime=0.0, stopTime=t_end)
        slave.enterInitializationMode()
        slave.exitInitializationMode()
        valve = (0.0, 1.0)  # (inlet, exhaust): at rest in exhaust
        switches = [(0.0, *valve)]
        phase, since = "rest", None
        rows = [(0.0, *slave.getReal([vr[n] for n in outputs]))]
        n = round(t_end / STEP)
        for k in range(n):
            t = k * STEP
            x, v = slave.getReal([vr["rod.x"], vr["rod.v"]])
            on_outer = abs(x - x_max) <= STOP_TOLERANCE and v == 0.0
            on_inner = abs(x) <= STOP_TOLERANCE and v == 0.0
            want = phase
            if phase == "rest" and t >= START - 1e-12:
                want = "extend"
            elif phase in ("extend", "retract"):
                on_stop = on_outer if phase == "extend" else on_inner
                since = (since if since is not None else t) if on_stop else None
                if since is not None and t - since >= DWELL - 1e-12:
                    want = "retract" if phase == "extend" else "extend"
            if want != phase:
                phase, since = want, None
                valve = (1.0, 0.0) if phase == "extend" else (0.0, 1.0)
                slave.setReal([vr["inlet.opening"], vr["exhaust.opening"]], list(valve))
                switches.append((t, *valve))
                # The row at a switch shows the outputs after it, as a table's breakpoint does
                # in the command line's run (the flows change with the inputs at once).
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
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, sharex=True, figsize=(8, 7))
    for name, label in (("receiver.p", "receiver"), ("cap.p", "cylinder cap")):
        ax1.plot(t, [r[col[name]] * 1e-5 for r in rows], label=label)
    ax1.set_ylabel("pressure, bar abs")
    ax1.legend(loc="lower right")
    ax2.plot(t, [r[col["rod.x"]] * 1e3 for r in rows], color="C2")
    ax2.set_ylabel("rod position, mm")
    ax3.step([s[0] for s in switches] + [t[-1]], [s[1] for s in switches] + [switches[-1][1]],
             where="post", label="supply port (inlet)")
    ax3.plot(t, [r[col["relief.open_fraction"]] for r in rows], label="relief valve")
    ax3.set_ylabel("opening")
    ax3.set_xlabel("time, s")
    ax3.legend(loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fmu")
    ap.add_argument("--plot")
    a = ap.parse_args(argv)
    names, rows, switches = run(a.fmu)
    print(f"{len(switches) - 1} valve switches at " + ", ".join(f"{s[0]:.3f} s" for s in switches[1:]))
    for n, v in zip(names, rows[-1]):
        print(f"{n:24} {v:.9g}")
    if a.plot:
        plot(names, rows, switches, a.plot)
    return names, rows, switches


if __name__ == "__main__":
    main()
