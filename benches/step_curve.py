"""Steps against error: Plenum's adaptive method (and Cantera's CVODES) on the Cantera networks.

For each network and rtol on a ladder (atol 1e-15), the accepted steps (+ error-test failures)
and the error as benches/peers.py measures it (largest relative chamber-pressure error over the
output times against Plenum's own `bdf` at rtol 1e-12). `--fit` sweeps 8 rtols a decade from
1e-5 to 1e-9 instead and prints the steps at errors 1e-5, 1e-6 and 1e-7 of a least-squares line
log(steps) = a + b·log(error): single rtols jump with the discrete step choices (errors of two
neighbouring rtols can differ by 3×), the fit compares the curves at equal error.

Usage (release binary built; the venv of peers.py):
    PLENUM_BIN=target/release/plenum $PY benches/step_curve.py [--cantera] [--fit]
        [--method bdf] [--only cantera_wall,cantera_piston]
"""

import argparse
import math
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402
from peers import np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cantera", action="store_true", help="CVODES too (from the same spec)")
    ap.add_argument("--fit", action="store_true", help="fine sweep and steps at equal error")
    ap.add_argument("--method", default="bdf")
    ap.add_argument("--only", default=",".join(peers.CANTERA_CASES))
    a = ap.parse_args()
    from plenum_cli import load_model
    from test_cantera import CanteraNetwork

    if a.fit:
        rtols = [10 ** (-5 - k / 8) for k in range(33)]
    else:
        rtols = [1e-5, 3.2e-6, 1e-6, 3.2e-7, 1e-7, 3.2e-8, 1e-8]
    for case in a.only.split(","):
        model = peers.PEERS / "models" / f"{case}.toml"
        spec = load_model(model)
        ref, _ = peers.run_plenum(model, "bdf", peers.REF_RTOL, 1e-20, 1)
        names = [f"{c['name']}.p" for c in spec["chamber"]]
        pts = {"cantera": [], "plenum": []}
        for r in rtols:
            line = f"{case:18} rtol {r:.1e}"
            if a.cantera:
                n = CanteraNetwork(spec)
                n.net.rtol, n.net.atol = r, 1e-15
                rows = []
                for t in ref["time"][1:]:
                    n.net.advance(float(t))
                    rows.append([n.chambers[k.split(".")[0]].phase.P for k in names])
                arr = np.array(rows)
                err = max(float(np.max(np.abs(arr[:, i] - ref[k][1:]) / ref[k][1:]))
                          for i, k in enumerate(names))
                st = n.net.solver_stats
                pts["cantera"].append((st["steps"], err))
                line += f"  CVODES {st['steps']:4d} (+{st['err_test_fails']}) err {err:.2e} |"
            cols, _ = peers.run_plenum(model, a.method, r, 1e-15, 1)
            err = peers.rel_error(cols, ref, names)
            out = subprocess.run(
                [peers.plenum_bin(), "run", str(model), "--method", a.method,
                 "--set", f"solver.rtol={r!r}", "--set", "solver.atol=1e-15"],
                capture_output=True, text=True).stdout
            steps = int(re.search(r"^steps\s+(\d+)", out, re.M).group(1))
            rej = int(re.search(r"^rejected_steps\s+(\d+)", out, re.M).group(1))
            pts["plenum"].append((steps, err))
            line += f"  Plenum {a.method} {steps:4d} (+{rej}) err {err:.2e}"
            if not a.fit:
                print(line, flush=True)
        if a.fit:
            for who, p in pts.items():
                if not p:
                    continue
                b, c = np.polyfit(np.log([e for _, e in p]), np.log([s for s, _ in p]), 1)
                at = [math.exp(c + b * math.log(e)) for e in (1e-5, 1e-6, 1e-7)]
                print(f"{case:18} {who:8} slope {b:.3f}  steps at error 1e-5 {at[0]:6.1f}  "
                      f"1e-6 {at[1]:6.1f}  1e-7 {at[2]:6.1f}", flush=True)


if __name__ == "__main__":
    main()
