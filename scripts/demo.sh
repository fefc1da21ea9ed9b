#!/usr/bin/env bash
# Builds the FMUs of all shipped models, with the library of every platform this machine can
# build (linux64 for glibc 2.17 and, with the MinGW-w64 cross compiler, win64;
# scripts/build-fmu-libs.sh), and simulates the air gun through its FMU with FMPy (installed into
# target/venv on first use), printing the trajectory and the exit velocity. Installs what it
# needs first (scripts/prerequisites.sh: Debian packages as root, else it names them).
#
# The command line and fmu-build are built in the dev profile (the library is optimised in it:
# Cargo.toml), exactly as compliance-tests/tests/readme_tutorial.rs builds them, so that after
# scripts/test.sh this compiles nothing; scripts/build-fmu-libs.sh likewise finds the test
# command's libraries fresh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/prerequisites.sh demo
bash scripts/build-fmu-libs.sh
cargo build -q -p plenum --bin plenum -p fmu-build --bin fmu-build
target/debug/fmu-build models/*.toml -o target/fmu
PY=$(bash scripts/python-env.sh)
"$PY" scripts/simulate_fmu.py target/fmu/projectile.fmu
echo
echo "The same model through the command line:"
target/debug/plenum run models/projectile.toml | grep -E "^(time|projectile\.v|exit_time|rc) "
