#!/usr/bin/env bash
# The Python package's tests (scripts/test.sh's stage "Python package"): builds the linux64
# wheel (scripts/build-wheel.sh), installs it into a FRESH venv (target/wheel-venv, made anew
# each time) with no Rust toolchain on PATH, and runs python/tests there, against the installed
# package (never python/plenum of the source tree). Extra arguments go to pytest.
#
#   bash python/tests/run.sh [-k NAME] [-x]
#   PLENUM_WHEEL=target/wheels/plenum-…whl bash python/tests/run.sh   # an existing wheel
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"

start=$SECONDS
wheel="${PLENUM_WHEEL:-$(bash scripts/build-wheel.sh --platforms linux64 | tail -n 1)}"
echo "== wheel $wheel ($((SECONDS - start)) s)" >&2

# PATH without the Rust toolchain: what a user of the wheel has.
clean_path=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    [[ -x $d/cargo || -x $d/rustc || -z $d ]] && continue
    clean_path+="${clean_path:+:}$d"
done
venv="$CARGO_TARGET_DIR/wheel-venv"
rm -rf "$venv"
python3 -m venv "$venv"
start=$SECONDS
env PATH="$venv/bin:$clean_path" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "$wheel" -r python/tests/requirements.txt
echo "== installed into a fresh venv $venv ($((SECONDS - start)) s)" >&2
# The repository's own CLI, when built, is a second command line to compare with.
export PLENUM_BIN="${PLENUM_BIN:-$CARGO_TARGET_DIR/debug/plenum}"
cd "$root/python/tests"
env PATH="$venv/bin:$clean_path" PLENUM_FRESH_VENV=1 "$venv/bin/python" -m pytest . -q -rA "$@"

# The peer benchmark's Python path, quick (no timing claims): the wheel beside Cantera in the
# shared venv of scripts/python-env.sh, the vent network only.
if [[ -z ${PLENUM_NO_PEERS:-} ]]; then
    cd "$root"
    PY=$(bash scripts/python-env.sh)
    "$PY" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$wheel"
    "$PY" benches/peers.py --quick --only cantera_vent
fi
