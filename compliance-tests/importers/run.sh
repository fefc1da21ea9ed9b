#!/usr/bin/env bash
# One command for the importer tests (after the FMUs are built, see README.md):
#   bash compliance-tests/importers/run.sh [test files...] [pytest args...]
# Makes/updates the venv (scripts/python-env.sh), then runs pytest with every figure printed (-rA).
# fmi-sim is used when target/tools/bin/fmi-sim exists (install-fmi-sim.sh), else skipped.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
py="$(bash "$root/scripts/python-env.sh")"
cd "$root"
# Test files given as arguments replace the default, the whole folder.
files=()
for a in "$@"; do
    if [[ $a == *.py && -f $a ]]; then files+=("$a"); fi
done
((${#files[@]})) || set -- compliance-tests/importers "$@"
exec "$py" -m pytest -v -rA "$@"
