#!/usr/bin/env bash
# Creates (if missing) the Python virtual environment for the importer tests at
# target/importers-venv, installs compliance-tests/importers/requirements.txt into it (only when
# that file changed since the last install), and prints the venv's python path on stdout.
# The same approach as scripts/python-env.sh, with its own venv and requirements.
#
#   PY=$(bash compliance-tests/importers/env.sh) && "$PY" -m pytest compliance-tests/importers -q
#
# Quiet unless something fails (then pip's log is printed to stderr). Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${PLENUM_IMPORTERS_VENV:-$root/target/importers-venv}"
req="$root/compliance-tests/importers/requirements.txt"
py="$venv/bin/python"
stamp="$venv/.requirements.sha256"
log="$venv/.pip.log"

if [[ ! -x "$py" ]]; then
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" >&2
fi
want="$(sha256sum "$req" | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [[ "$want" != "$have" ]]; then
    if ! "$py" -m pip install --quiet --disable-pip-version-check -r "$req" >"$log" 2>&1; then
        echo "env.sh: pip install -r $req failed:" >&2
        cat "$log" >&2
        exit 1
    fi
    echo "$want" >"$stamp"
fi
echo "$py"
