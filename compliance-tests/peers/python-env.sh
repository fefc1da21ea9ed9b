#!/usr/bin/env bash
# Creates (if missing) the virtual environment of the peer-agreement tests at target/venv-peers
# (or $PLENUM_PEERS_VENV), installs compliance-tests/peers/requirements.txt into it from PyPI
# (only when that file changed since the last install), and prints the venv's python path.
#
#   PY=$(bash compliance-tests/peers/python-env.sh) && "$PY" -m pytest compliance-tests/peers -rP
#
# Quiet unless something fails (then pip's log is printed to stderr). Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${PLENUM_PEERS_VENV:-${CARGO_TARGET_DIR:-$root/target}/venv-peers}"
req="$here/requirements.txt"
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
        echo "python-env.sh: pip install -r $req failed:" >&2
        cat "$log" >&2
        exit 1
    fi
    echo "$want" >"$stamp"
fi
echo "$py"
