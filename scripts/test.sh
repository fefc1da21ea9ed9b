#!/usr/bin/env bash
# Every test: the Rust workspace (unit, verification, CLI, model-file, FMU ABI and compliance
# tests, valgrind included), the shipped libraries of both platforms (linux64 built for glibc
# 2.17, win64 cross-compiled and tested under Wine), then through Python the FMUs of all shipped
# models in FMPy, the peer simulators Cantera and FONSim run in the same test, and the real
# importers (fmu-manipulation-toolbox, libcosim, Ecos, and fmi-sim, which this script installs
# from crates.io into target/tools; OMSimulator and FMUComplianceChecker, which it builds into
# target/tools from the sources in ../shared/vendor). Needs the Rust toolchain and Python 3 with venv; what else
# it needs it installs (scripts/prerequisites.sh: Debian packages as root, else it names them);
# the Python packages go into target/venv (scripts/python-env.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
passed=0
# `stage NAME` prints the previous stage's wall and CPU time (scripts/stage-times.sh).
source scripts/stage-times.sh

stage "prerequisites (scripts/prerequisites.sh test)"
bash scripts/prerequisites.sh test

# The libraries FMUs ship, each built once (profile fmu), with the win64 compliance runner and
# test binaries; the tests below use these builds.
stage "FMU libraries: linux64 (glibc 2.17), win64 (MinGW-w64) (scripts/build-fmu-libs.sh)"
bash scripts/build-fmu-libs.sh --platforms linux64,win64 --windows-tests
export PLENUM_FMU_PLATFORMS=linux64,win64
passed=$((passed + 1))

# Debug profile: debug_assert! invariants are on in every test.
stage "cargo test --workspace"
cargo build --workspace --all-targets -q
cargo test --workspace
passed=$((passed + 1))

# The fmi2 ABI tests, bad calls, damaged state blobs, threads, memory and seed 002's procedures
# against the win64 library, cross-compiled and run under Wine.
stage "win64 under Wine: compliance tests (cross-compiled, scripts/wine-run.sh)"
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$PWD/scripts/wine-run.sh" \
    PLENUM_FMI_LIB="$PWD/target/x86_64-pc-windows-gnu/fmu/plenum.dll" \
    bash scripts/cargo-win64.sh test -q --profile fmu -p compliance-tests
passed=$((passed + 1))

# Bench binaries in quick mode (debug build, seconds; no time asserted): they build and run.
stage "benchmarks, quick mode (docs/performance.md)"
cargo test -q --bench fmi_overhead -- --quick
cargo test -q --bench scale -- --quick
passed=$((passed + 1))

stage "FMUs of the shipped models (target/fmu/, FMI 3.0: target/fmu3/) and of the gallery"
mkdir -p target/fmu
# With the shipped libraries of both platforms (fmu-build finds them).
target/debug/fmu-build models/*.toml -o target/fmu --platforms linux64,win64
# The same models as FMI 3.0 FMUs (compliance-tests/python/test_fmi3.py).
mkdir -p target/fmu3
target/debug/fmu-build models/*.toml -o target/fmu3 --platforms linux64,win64 --fmi-version 3
# Every gallery model's FMU, FMI 2.0 and 3.0, for OMSimulator and FMUComplianceChecker (Linux).
mkdir -p target/fmu-gallery target/fmu3-gallery
target/debug/fmu-build examples/*/*.toml -o target/fmu-gallery --platforms linux64
target/debug/fmu-build examples/*/*.toml -o target/fmu3-gallery --platforms linux64 --fmi-version 3

stage "Python environment (scripts/python-env.sh: target/venv)"
PY=$(bash scripts/python-env.sh)
export PLENUM_BIN_DIR="$PWD/target/debug" PLENUM_BIN="$PWD/target/debug/plenum"

stage "FMPy (compliance-tests/python)"
"$PY" -m pytest compliance-tests/python -q
passed=$((passed + 1))

stage "Cantera agreement (compliance-tests/peers)"
"$PY" -m pytest compliance-tests/peers -q
passed=$((passed + 1))

stage "FONSim agreement (tests/fonsim)"
"$PY" -m pytest -p no:cacheprovider tests/fonsim -q
passed=$((passed + 1))

stage "Peer benchmark, quick mode: runs, no time assertions (benches/peers.py --quick)"
"$PY" benches/peers.py --quick
passed=$((passed + 1))

stage "fmi-sim from crates.io (compliance-tests/importers/install-fmi-sim.sh)"
bash compliance-tests/importers/install-fmi-sim.sh

stage "OMSimulator and FMUComplianceChecker from ../shared/vendor (compliance-tests/importers/build-tools.sh)"
bash compliance-tests/importers/build-tools.sh

stage "Real importers vs FMPy (compliance-tests/importers)"
PLENUM_IMPORTERS_REQUIRE_ALL=1 bash compliance-tests/importers/run.sh -q \
    --ignore=compliance-tests/importers/test_omsimulator_fmuchecker.py
passed=$((passed + 1))

stage "Examples: FMPy, Dask sweep, libcosim co-simulation (examples/)"
"$PY" -m pytest examples -q
passed=$((passed + 1))

stage "Python package: the wheel in a fresh venv, no Rust on PATH (python/tests/run.sh)"
bash python/tests/run.sh
passed=$((passed + 1))

# Last, so that the stages above report whatever this one finds.
stage "OMSimulator and FMUComplianceChecker: every FMU, FMI 2.0 and 3.0, CS and ME, clean and = CLI"
PLENUM_IMPORTERS_REQUIRE_ALL=1 \
    bash compliance-tests/importers/run.sh compliance-tests/importers/test_omsimulator_fmuchecker.py
passed=$((passed + 1))

stage_end
echo
echo "test suites: $passed passed, 0 failed"
