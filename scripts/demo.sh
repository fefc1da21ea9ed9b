#!/usr/bin/env bash
# Builds the FMUs of all shipped models, with the library of every platform this machine can
# build (linux64 for glibc 2.17 and, with the MinGW-w64 cross compiler, win64;
# scripts/build-fmu-libs.sh), and simulates the air gun through its FMU with FMPy (installed into
# target/venv on first use), printing the trajectory and the exit velocity. Installs what it
# needs first (scripts/prerequisites.sh: Debian packages as root, else it names them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/prerequisites.sh demo
bash scripts/build-fmu-libs.sh
cargo build --release -q --bin plenum --bin fmu-build
target/release/fmu-build models/*.toml -o target/fmu
PY=$(bash scripts/python-env.sh)
"$PY" scripts/simulate_fmu.py target/fmu/projectile.fmu
echo
echo "The same model through the command line:"
target/release/plenum run models/projectile.toml | grep -E "^(time|projectile\.v|exit_time|rc) "
