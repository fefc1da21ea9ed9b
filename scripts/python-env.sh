#!/usr/bin/env bash
# Creates (if missing) the one Python virtual environment of every Python test at target/venv
# (or $PLENUM_VENV), installs the requirements of every suite into it (again only when one of
# those files changed since the last install), and prints the venv's python path on stdout:
#
#   PY=$(bash scripts/python-env.sh) && "$PY" -m pytest compliance-tests/python -q
#
# Suites: compliance-tests/python (FMPy), compliance-tests/peers (Cantera),
# compliance-tests/importers (fmu-manipulation-toolbox, libcosim, Ecos), tests/fonsim (FONSim),
# examples (FMPy, matplotlib, Dask, pandas, libcosim).
# Quiet unless something fails (then pip's log is printed to stderr). Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${PLENUM_VENV:-${CARGO_TARGET_DIR:-$root/target}/venv}"
reqs=(
    "$root/compliance-tests/python/requirements.txt"
    "$root/compliance-tests/peers/requirements.txt"
    "$root/compliance-tests/importers/requirements.txt"
    "$root/tests/fonsim/requirements.txt"
    "$root/examples/python/requirements.txt"
)
py="$venv/bin/python"
stamp="$venv/.requirements.sha256"
log="$venv/.pip.log"

if [[ ! -x "$py" ]]; then
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" >&2
fi
want="$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [[ "$want" != "$have" ]]; then
    args=()
    for r in "${reqs[@]}"; do args+=(-r "$r"); done
    if ! "$py" -m pip install --quiet --disable-pip-version-check "${args[@]}" >"$log" 2>&1; then
        echo "python-env.sh: pip install ${args[*]} failed:" >&2
        cat "$log" >&2
        exit 1
    fi
    echo "$want" >"$stamp"
fi
echo "$py"
