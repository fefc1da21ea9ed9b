#!/usr/bin/env bash
# Builds the FMUs of all shipped models (release) and simulates the air gun through its FMU with
# FMPy (installed into target/venv on first use), printing the trajectory and the exit velocity.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --workspace -q
mkdir -p target/fmu
for model in models/*.toml; do
    target/release/fmu-build "$model" -o target/fmu --release
done
PY=$(bash scripts/python-env.sh)
"$PY" scripts/simulate_fmu.py target/fmu/projectile.fmu
echo
echo "The same model through the command line:"
target/release/plenum run models/projectile.toml | grep -E "^(time|projectile\.v|exit_time|rc) "
