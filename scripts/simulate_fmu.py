"""Simulate an FMU with FMPy and print a table of its outputs (used by scripts/demo.sh).

    python scripts/simulate_fmu.py target/fmu/projectile.fmu [rows]
"""
import sys

import fmpy

path = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 12
md = fmpy.read_model_description(path)
names = [v.name for v in md.modelVariables if v.causality in ("output", "independent")]
outputs = [n for n in names if n != "time"]
print(f"{md.modelName}: {md.description}")
print(f"FMI {md.fmiVersion} co-simulation, GUID {md.guid}, step {md.defaultExperiment.stepSize} s")
result = fmpy.simulate_fmu(path, output=outputs)
shown = [n for n in outputs if not n.endswith((".U", ".exited")) and n not in ("rc",)][:6]
print("  ".join(f"{c:>14}" for c in ["time"] + shown))
stride = max(1, len(result) // (rows - 1))
picked = list(range(0, len(result), stride))
if picked[-1] != len(result) - 1:
    picked.append(len(result) - 1)
for i in picked:
    print("  ".join(f"{result[c][i]:>14.6g}" for c in ["time"] + shown))
last = result[-1]
print("final:", ", ".join(f"{n} = {float(last[n])!r}" for n in outputs))
