#!/usr/bin/env bash
# Every test: the Rust workspace (unit, verification, CLI, model-file, FMU ABI and compliance
# tests, valgrind included), then through Python the FMUs of all shipped models in FMPy, the peer
# simulators Cantera and FONSim run in the same test, and the real importers
# (fmu-manipulation-toolbox, libcosim, Ecos, and fmi-sim, which this script installs from
# crates.io into target/tools). Needs the Rust toolchain and Python 3 with venv; the
# Python packages are installed into target/venv by scripts/python-env.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
passed=0
suite() { echo; echo "== $1"; }

# Debug profile: debug_assert! invariants are on in every test.
suite "cargo test --workspace"
cargo build --workspace --all-targets -q
cargo test --workspace
passed=$((passed + 1))

# Bench binaries in quick mode (debug build, seconds; no time asserted): they build and run.
suite "benchmarks, quick mode (docs/performance.md)"
cargo test -q --bench fmi_overhead -- --quick
cargo test -q --bench scale -- --quick
passed=$((passed + 1))

suite "FMUs of the shipped models (target/fmu/)"
mkdir -p target/fmu
for model in models/*.toml; do
    target/debug/fmu-build "$model" -o target/fmu --lib target/debug/libplenum.so
done

PY=$(bash scripts/python-env.sh)
export PLENUM_BIN_DIR="$PWD/target/debug" PLENUM_BIN="$PWD/target/debug/plenum"

suite "FMPy (compliance-tests/python)"
"$PY" -m pytest compliance-tests/python -q
passed=$((passed + 1))

suite "Cantera agreement (compliance-tests/peers)"
"$PY" -m pytest compliance-tests/peers -q
passed=$((passed + 1))

suite "FONSim agreement (tests/fonsim)"
"$PY" -m pytest -p no:cacheprovider tests/fonsim -q
passed=$((passed + 1))

suite "Peer benchmark, quick mode: runs, no time assertions (benches/peers.py --quick)"
"$PY" benches/peers.py --quick
passed=$((passed + 1))

suite "Real importers vs FMPy (compliance-tests/importers)"
bash compliance-tests/importers/install-fmi-sim.sh
PLENUM_IMPORTERS_REQUIRE_ALL=1 bash compliance-tests/importers/run.sh -q
passed=$((passed + 1))

suite "Examples: FMPy, Dask sweep, libcosim co-simulation (examples/)"
"$PY" -m pytest examples -q
passed=$((passed + 1))

echo
echo "test suites: $passed passed, 0 failed"
