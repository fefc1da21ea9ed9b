"""Plenum against its peers at equal accuracy, in one run (issue 7, "Against the peers").

Networks: the Cantera networks of compliance-tests/peers/models (vent, two tanks, wall, piston,
and the 20-tank chain of one-way valves), each also built in Cantera (CVODES BDF, from PyPI) by
compliance-tests/peers/test_cantera.py's CanteraNetwork; and FONSim's three networks of
tests/fonsim (FONSim from PyPI, its fixed-step backward Euler, built by tests/fonsim/compare.py).

Accuracy: every run is compared at the model's output times with a tight-tolerance reference of
the same equations: for Cantera and Plenum, their own run at rtol 1e-12 (Plenum: `bdf`); for
FONSim, Plenum's reference (FONSim's own order-1 convergence to it is checked by
tests/fonsim). Error = the largest relative difference of any chamber pressure over the output
times (FONSim networks: the largest pressure difference divided by the pressure change over
the run, as tests/fonsim). Equal error: each side runs at the largest tolerance on a ladder
(half decades) whose error is at most the target error (Cantera networks) or at most FONSim's
error at its step (FONSim networks); the errors are printed next to the times.

Time: the solve only (Cantera: the `ReactorNet.advance` calls over the output times, without
reading the pressures, which only the untimed run that measures the error does; FONSim:
`Simulation.run`; Plenum: `plenum run --repeat N`'s `solve_s`, the `advance_to` calls only,
without recording outputs), best of N repeats (FONSim: of at most 3), on one core (this process
and its children pinned to `--cpu`, default CPU 0, one thread). Cantera and Plenum's three
methods are timed interleaved (rounds of cantera, auto, dopri5, bdf in turn, best of all rounds
each), so that a change of load during the run affects all of them alike: the ratios, and
auto / best (what the "Automatic method" table checks).

From Python (when the package `plenum` is installed in this venv: `pip install
target/wheels/plenum-*.whl`; `--no-python` leaves it out): the same networks through
`plenum.Simulation.advance`, a Python loop over the same output times as Cantera's
`ReactorNet.advance` loop, at the rtol the command line's method picked (the package's runs
are the command line's bit for bit, so the error is the same; checked on one untimed run),
timed the same way as Cantera (the loop only, Python's call overhead included on both sides,
building the network outside), in the same interleaved rounds. The "From Python" table
compares that ratio with the command line's.

`--instructions` adds the load-free figure: callgrind's count of instructions inside
`Simulation::advance_to` (one solve at each method's picked rtol; needs valgrind), and auto /
best by that count.

Usage (shared venv with cantera and fonsim; release binary built):
    cargo build --release --bin plenum
    taskset -c 0 $PY benches/peers.py            # full: prints the tables
    $PY benches/peers.py --cpu 1 --instructions --only source_tube_container
    $PY benches/peers.py --quick                   # CI: one repeat, coarse ladder, no timing claims
"""

import argparse
import contextlib
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[var] = "1"

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "compliance-tests" / "peers"
FONSIM_DIR = ROOT / "tests" / "fonsim"
sys.path.insert(0, str(PEERS))
sys.path.insert(0, str(FONSIM_DIR))

import numpy as np  # noqa: E402

PLENUM_METHODS = ["auto", "dopri5", "bdf"]
# Timed from Python as well: the default, and the BDF against CVODES's.
PY_METHODS = ["auto", "bdf"]
CANTERA_CASES = ["cantera_vent", "cantera_two_tanks", "cantera_wall", "cantera_piston", "cantera_chain20"]
REF_RTOL = 1e-12
ATOL = 1e-15


def plenum_bin():
    env = os.environ.get("PLENUM_BIN")
    if env:
        return env
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for prof in ("release", "debug"):
        p = target / prof / "plenum"
        if p.is_file():
            return str(p)
    sys.exit("no target/{release,debug}/plenum: cargo build --release --bin plenum")


def run_plenum(model, method, rtol, atol, repeat, sets=()):
    """(columns dict, solve_s) of `plenum run` with an adaptive method."""
    with tempfile.TemporaryDirectory() as d:
        csv = Path(d) / "out.csv"
        cmd = [plenum_bin(), "run", str(model), "--method", method, "--csv", str(csv),
               "--repeat", str(repeat), "--set", f"solver.rtol={rtol!r}",
               "--set", f"solver.atol={atol!r}"]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, math.inf
        solve_s = float([ln for ln in r.stdout.splitlines() if ln.startswith("solve_s")][0].split()[1])
        header = csv.read_text().splitlines()[0].split(",")
        data = np.loadtxt(csv, delimiter=",", skiprows=1, ndmin=2)
    return {h: data[:, i] for i, h in enumerate(header)}, solve_s


def plenum_instructions(model, method, rtol, atol, sets=()):
    """Instructions executed inside `Simulation::advance_to` for one solve (callgrind)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
               "--toggle-collect=*advance_to*", plenum_bin(), "run", str(model),
               "--method", method, "--set", f"solver.rtol={rtol!r}",
               "--set", f"solver.atol={atol!r}", "--quiet"]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not out.is_file():
            return math.nan
        # The "summary:" line of the output file: the events collected (Ir only by default).
        for ln in out.read_text().splitlines():
            if ln.startswith("summary:") or ln.startswith("totals:"):
                return float(ln.split()[1])
    return math.nan


def time_interleaved(runs, repeat, rounds):
    """Best solve time of each of `runs` (name -> callable(repeat) -> seconds), timed in
    `rounds` rounds that run each in turn (rotating the order), `repeat // rounds` repeats a
    call: load that comes and goes hits every run alike."""
    best = {name: math.inf for name in runs}
    names = list(runs)
    per_call = max(1, repeat // rounds)
    for k in range(rounds):
        for name in names[k % len(names):] + names[:k % len(names)]:
            best[name] = min(best[name], runs[name](per_call))
    return best


def rel_error(cols, ref, names):
    return max(float(np.max(np.abs(cols[n] - ref[n]) / np.abs(ref[n]))) for n in names)


def ladder(quick):
    # rtol from 1e-2 down to 1e-11: half decades (quick: whole decades).
    step = 2 if quick else 1
    return [10.0 ** (-k / 2) for k in range(4, 23, step)]


def pick(run_at, error_of, target, quick):
    """The largest rtol on the ladder with error ≤ target: (rtol, error) (else the smallest)."""
    last = None
    for rtol in ladder(quick):
        out = run_at(rtol)
        if out is None:
            continue
        err = error_of(out)
        last = (rtol, err)
        if err <= target:
            return last
    return last


# ---------------------------------------------------------------------------------------------
# Cantera


def cantera_pressures(spec, times, rtol, atol, record=True):
    """(dict name.p -> array at `times`, solve seconds) of Cantera at (rtol, atol). With
    `record=False` the chambers' pressures are not read (the dict is None): the timed repeats,
    like Plenum's, only advance through the output times. Reading `phase.P` of every chamber
    from Python at every output time was 14–24 % of the timed loop on the one-tank networks
    (docs/performance.md, "Cantera's time without Python's reads"): interpreter work, not solving."""
    from test_cantera import CanteraNetwork

    net = CanteraNetwork(spec)
    net.net.rtol = rtol
    net.net.atol = atol
    names = list(net.chambers)
    phases = [net.chambers[n].phase for n in names]
    rows = [[ph.P for ph in phases]]
    outputs = [float(t) for t in times[1:]]
    pending = sorted(b for b in net.breakpoints if times[0] < b < times[-1])
    advance = net.net.advance
    start = time.perf_counter()
    for t in outputs:
        while pending and pending[0] <= t:
            advance(pending.pop(0))
            net.net.reinitialize()
        advance(t)
        if record:
            rows.append([ph.P for ph in phases])
    solve_s = time.perf_counter() - start
    if not record:
        return None, solve_s
    arr = np.array(rows)
    return {f"{n}.p": arr[:, i] for i, n in enumerate(names)}, solve_s


def python_plenum():
    """The package `plenum` if it is installed in this venv (None: not installed)."""
    try:
        import plenum
    except ImportError:
        return None
    return plenum


def python_pressures(model, method, rtol, atol, times, names, record=True):
    """(dict name.p -> array at `times`, seconds) of `plenum.Simulation.advance` called from
    Python at every output time, as Cantera's loop: the loop only is timed, reading the
    pressures only when `record`."""
    m = model.set("solver.rtol", rtol).set("solver.atol", atol)
    sim = m.simulation(method=method)
    rows = [sim[names]]
    advance = sim.advance
    outputs = [float(t) for t in times[1:]]
    start = time.perf_counter()
    for t in outputs:
        advance(t)
        if record:
            rows.append(sim[names])
    solve_s = time.perf_counter() - start
    if not record:
        return None, solve_s
    arr = np.array(rows)
    return {n: arr[:, i] for i, n in enumerate(names)}, solve_s


def cantera_case(case, target, repeat, rounds, quick, instructions, table, auto_table,
                 py_table=None):
    from plenum_cli import load_model

    model = PEERS / "models" / f"{case}.toml"
    spec = load_model(model)
    ref_cols, _ = run_plenum(model, "bdf", REF_RTOL, 1e-20, 1)
    times = ref_cols["time"]
    names = [f"{c['name']}.p" for c in spec.get("chamber", [])]
    ct_ref, _ = cantera_pressures(spec, times, REF_RTOL, 1e-20)
    ref_gap = rel_error(ref_cols, ct_ref, names)

    ct_rtol, ct_err = pick(lambda r: cantera_pressures(spec, times, r, ATOL)[0],
                           lambda c: rel_error(c, ct_ref, names), target, quick)

    picked = {}
    for method in PLENUM_METHODS:
        picked[method] = pick(lambda r: run_plenum(model, method, r, ATOL, 1)[0],
                              lambda c: rel_error(c, ref_cols, names), target, quick)
    # Cantera is timed in the same rounds as Plenum's three methods, so that a change of load
    # during the run hits both sides of the ratio alike.
    runs = {m: (lambda k, m=m: run_plenum(model, m, picked[m][0], ATOL, k)[1]) for m in picked}
    runs["cantera"] = lambda k: min(
        cantera_pressures(spec, times, ct_rtol, ATOL, record=False)[1] for _ in range(k))
    plenum = python_plenum() if py_table is not None else None
    py_errors = {}
    if plenum is not None:
        py_model = plenum.Model.from_file(model)
        for m in PY_METHODS:
            cols, _ = python_pressures(py_model, m, picked[m][0], ATOL, times, names)
            py_errors[m] = rel_error(cols, ref_cols, names)
            runs[f"python-{m}"] = (lambda k, m=m: min(
                python_pressures(py_model, m, picked[m][0], ATOL, times, names, record=False)[1]
                for _ in range(k)))
    solve_s = time_interleaved(runs, repeat, rounds)
    ct_time = solve_s.pop("cantera")
    for m in py_errors:
        t = solve_s.pop(f"python-{m}")
        py_table.append((case, m, picked[m][0], py_errors[m], picked[m][1], ct_time, t,
                         solve_s[m]))
    results = {}
    for method, (rtol, err) in picked.items():
        t = solve_s[method]
        ir = plenum_instructions(model, method, rtol, ATOL) if instructions else math.nan
        results[method] = (rtol, err, t, ir)
        table.append((case, "Cantera", ct_rtol, ct_time, ct_err, method, rtol, t, err, ct_time / t))
    auto_table.append((case, "Cantera", results))
    print(f"  {case}: Plenum bdf and Cantera references (rtol 1e-12) differ by {ref_gap:.2e}",
          flush=True)


# ---------------------------------------------------------------------------------------------
# FONSim


def fonsim_case(name, column, duration, h, repeat, rounds, quick, instructions, table,
                auto_table):
    import compare

    model = FONSIM_DIR / "models" / f"{name}.toml"
    ref_cols, _ = run_plenum(model, "bdf", REF_RTOL, 1e-20, 1)
    t_ref, p_ref = ref_cols["time"], ref_cols[column]
    span = p_ref.max() - p_ref.min()

    def fonsim_err_time():
        # FONSim prints its progress to stdout: keep it out of the tables. Timed: its
        # `Simulation.run` only, not building the system.
        timing = {}
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            t_f, p_f = compare.fonsim_case(name, h, duration, timing)
        return float(np.max(np.abs(np.interp(t_ref, t_f, p_f) - p_ref)) / span), timing["run_s"]

    # FONSim takes seconds per run: at most 3 repeats.
    runs = [fonsim_err_time() for _ in range(min(repeat, 3))]
    fs_err = runs[0][0]
    fs_time = min(t for _, t in runs)
    picked = {}
    for method in PLENUM_METHODS:
        picked[method] = pick(
            lambda r: run_plenum(model, method, r, 1e-12, 1)[0],
            lambda c: float(np.max(np.abs(c[column] - p_ref)) / span), fs_err, quick)
    solve_s = time_interleaved(
        {m: (lambda k, m=m: run_plenum(model, m, picked[m][0], 1e-12, k)[1]) for m in picked},
        repeat, rounds)
    results = {}
    for method, (rtol, err) in picked.items():
        t = solve_s[method]
        ir = plenum_instructions(model, method, rtol, 1e-12) if instructions else math.nan
        results[method] = (rtol, err, t, ir)
        table.append((name, f"FONSim h={h:g}", h, fs_time, fs_err, method, rtol, t, err, fs_time / t))
    auto_table.append((name, "FONSim", results))


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="CI: 1 repeat, coarse ladder, short FONSim")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--target", type=float, default=1e-6, help="error target, Cantera networks")
    ap.add_argument("--only", default="", help="comma-separated network names")
    ap.add_argument("--cpu", type=int, default=0, help="the one CPU to run on (default 0)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="interleaved rounds of Plenum's three methods (repeats split among them)")
    ap.add_argument("--no-python", action="store_true",
                    help="leave out the runs through the Python package `plenum`")
    ap.add_argument("--instructions", action="store_true",
                    help="also count instructions of each Plenum solve with callgrind (valgrind)")
    args = ap.parse_args()
    try:
        os.sched_setaffinity(0, {args.cpu})
    except (AttributeError, OSError):
        pass
    if args.instructions and shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind")
    repeat = 1 if args.quick else args.repeat
    rounds = 1 if args.quick else max(1, min(args.rounds, repeat))
    only = set(filter(None, args.only.split(",")))
    table, auto_table = [], []
    py_table = None if args.no_python else []
    print(f"plenum: {plenum_bin()}; repeats {repeat} ({rounds} interleaved rounds); one core "
          f"(CPU {args.cpu}); load average {os.getloadavg()[0]:.1f}", flush=True)

    for case in CANTERA_CASES:
        if not only or case in only:
            cantera_case(case, args.target, repeat, rounds, args.quick, args.instructions, table,
                         auto_table, py_table)
    import compare

    h = 1e-3 if args.quick else compare.H
    for name, column, duration in compare.CASES:
        if not only or name in only:
            fonsim_case(name, column, duration, h, repeat, rounds, args.quick, args.instructions,
                        table, auto_table)

    print("\n## Against the peers (solve only, best of %d, one core)\n" % repeat)
    print("| network | peer | peer tol | peer time (s) | peer error | Plenum method | Plenum rtol "
          "| Plenum time (s) | Plenum error | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for net, peer, ptol, pt, pe, m, rtol, t, e, ratio in table:
        print(f"| {net} | {peer} | {ptol:.1e} | {pt:.3e} | {pe:.1e} | {m} | {rtol:.1e} | {t:.3e} "
              f"| {e:.1e} | {ratio:.0f}× |")

    if py_table:
        print("\n## From Python: `plenum.Simulation.advance` against Cantera's `ReactorNet.advance`"
              " (a Python loop over the output times on both sides)\n")
        print("| network | method | rtol | error | Cantera (s) | Plenum from Python (s) | ratio "
              "| command line's ratio | lost to Python |")
        print("|---|---|---|---|---|---|---|---|---|")
        for net, m, rtol, err, cli_err, ct, py, cli in py_table:
            print(f"| {net} | {m} | {rtol:.1e} | {err:.1e} | {ct:.3e} | {py:.3e} | {ct / py:.1f}× "
                  f"| {ct / cli:.1f}× | {py / cli:.2f}× |")
            # The package runs the command line's bits: the same error at the same rtol.
            assert err == cli_err, f"{net} {m}: error {err} from Python, {cli_err} from the CLI"
    elif py_table is not None:
        print("\n(no Python package `plenum` in this venv: the From Python table is left out; "
              "pip install target/wheels/plenum-*.whl)")

    print("\n## Automatic method (time at equal error; ratio = auto / better of dopri5 and bdf, "
          "target ≤ 1.5; the three timed interleaved)\n")
    ir_cols = args.instructions
    print("| network | auto (s) | dopri5 (s) | bdf (s) | auto / best |"
          + (" auto Ir | dopri5 Ir | bdf Ir | auto / best (Ir) |" if ir_cols else ""))
    print("|---|---|---|---|---|" + ("---|---|---|---|" if ir_cols else ""))
    worst = {}
    for net, group, res in auto_table:
        a, d, b = (res[m][2] for m in PLENUM_METHODS)
        r = a / min(d, b)
        line = f"| {net} | {a:.3e} | {d:.3e} | {b:.3e} | {r:.2f} |"
        ratios = {"time": r}
        if ir_cols:
            ia, id_, ib = (res[m][3] for m in PLENUM_METHODS)
            ri = ia / min(id_, ib)
            ratios["Ir"] = ri
            line += f" {ia:.4g} | {id_:.4g} | {ib:.4g} | {ri:.3f} |"
        print(line)
        for what, x in ratios.items():
            for key in ((what, group), (what, "all")):
                # `not x <= w`: a NaN ratio (a failed count) is the worst, never skipped.
                if key not in worst or not x <= worst[key][0]:
                    worst[key] = (x, net)
    # Every figure below is the largest ratio of the table above, per group and over all.
    print()
    for (what, group), (x, net) in sorted(worst.items()):
        label = "time" if what == "time" else "instructions"
        print(f"worst auto / best by {label}, {group} networks: {x:.2f} ({net})")
    for row in table:
        assert math.isfinite(row[7]) and math.isfinite(row[8]), f"a Plenum run failed: {row}"


if __name__ == "__main__":
    main()
