#!/usr/bin/env bash
# Every test: the Rust workspace (unit, verification, CLI, model-file, FMU ABI and compliance
# tests), then the FMUs of all shipped models through FMPy. Needs only the Rust toolchain and
# Python 3 (FMPy is installed into target/venv by scripts/python-env.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Debug profile: debug_assert! invariants are on in every test.
cargo build --workspace --all-targets -q
cargo test --workspace

echo "== FMUs of the shipped models (target/fmu/)"
mkdir -p target/fmu
for model in models/*.toml; do
    target/debug/fmu-build "$model" -o target/fmu
done

echo "== FMPy"
PY=$(bash scripts/python-env.sh)
"$PY" -m pytest compliance-tests/python -q
