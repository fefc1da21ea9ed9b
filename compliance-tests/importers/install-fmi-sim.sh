#!/usr/bin/env bash
# Installs the Rust `fmi` crate family's simulator, fmi-sim (crates.io), into target/tools/bin
# (skipped when that exact version is already there). Its bindgen build needs Debian's
# libclang-dev. Long on a small machine: see README.md for the measured time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
version="${FMI_SIM_VERSION:-0.7.0}"
tools="$root/target/tools"
if [[ -x "$tools/bin/fmi-sim" ]] && grep -q "fmi-sim $version" "$tools/.crates.toml" 2>/dev/null; then
    echo "fmi-sim $version already in $tools/bin" >&2
    exit 0
fi
# An unoptimized build (about 4 CPU-minutes instead of 12): it only drives a small FMU.
cargo install --debug fmi-sim --version "=$version" --locked --root "$tools"
