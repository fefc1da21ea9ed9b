#!/usr/bin/env bash
# Runs a Windows program under Wine for the win64 tests: `bash scripts/wine-run.sh PROGRAM.exe
# ARGS...` (also the cargo runner of the cross-compiled test binaries, see scripts/test.sh).
# A Wine prefix of its own (target/wine/prefix, made on first use), Wine's debug output off,
# and, when this Wine has no bcryptprimitives.dll (Wine 8), the test-only stand-in
# compliance-tests/wine/bcryptprimitives.c built into target/wine/dlls/ and put on WINEPATH
# (never into an FMU).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wine_dir="${CARGO_TARGET_DIR:-$root/target}/wine"
export WINEPREFIX="${WINEPREFIX:-$wine_dir/prefix}"
export WINEDEBUG="${WINEDEBUG:--all}"
# No Mono or Gecko installer when the prefix is made (nothing here needs them).
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
wine=$(command -v wine || command -v wine64 || true)
if [[ -z $wine ]]; then
    echo "wine-run.sh: no wine (apt-get install wine wine64)" >&2
    exit 2
fi
dlls="$wine_dir/dlls"
stub_src="$root/compliance-tests/wine/bcryptprimitives.c"
if ! compgen -G "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/bcryptprimitives.dll" >/dev/null &&
    ! compgen -G "/usr/lib/wine/x86_64-windows/bcryptprimitives.dll" >/dev/null &&
    ! compgen -G "/opt/wine*/lib*/wine/x86_64-windows/bcryptprimitives.dll" >/dev/null; then
    if [[ ! -f $dlls/bcryptprimitives.dll || $stub_src -nt $dlls/bcryptprimitives.dll ]]; then
        mkdir -p "$dlls"
        x86_64-w64-mingw32-gcc -O2 -shared -o "$dlls/bcryptprimitives.dll" "$stub_src" -ladvapi32
    fi
    export WINEPATH="$(winepath -w "$dlls" 2>/dev/null)${WINEPATH:+;$WINEPATH}"
fi
mkdir -p "$WINEPREFIX"
# Once in CI, Wine ended a test program with exit status 53 before it printed anything, and the
# same program passed when run again. 53 is Wine's status for a program it could not start (as
# for a missing .exe); a Rust test harness exits with 0 or 101. So wait for the previous
# program's server to go, then try once more.
status=0
"$wine" "$@" || status=$?
if ((status == 53)); then
    timeout 30 wineserver -w 2>/dev/null || true
    exec "$wine" "$@"
fi
exit "$status"
