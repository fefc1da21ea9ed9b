#!/usr/bin/env bash
# Builds the wheels of the Python package `plenum` (python/: a PyO3 extension, abi3 for CPython
# ≥ 3.9, and the Python package around it; docs/python.md) into target/wheels/:
#
#   linux64  plenum-<v>-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#            linked by zig against glibc 2.17, as the linux64 FMU library is
#            (maturin, ziglang and auditwheel from PyPI, installed here into target/tools/wheel-venv)
#   win64    plenum-<v>-cp39-abi3-win_amd64.whl (--platforms linux64,win64)
#            cross-compiled with MinGW-w64; pyo3 writes the import library of python3.dll
#
# Each wheel carries the extension (the command line `plenum` compiled in, a console entry
# point) and the shipped FMU libraries of both platforms (scripts/build-fmu-libs.sh; see
# below), so that `Model.build_fmu` needs nothing but the wheel.
# The linux64 wheel is checked: `auditwheel show` must find it manylinux2014-compliant, and no
# symbol of its extension may need a glibc newer than 2.17.
#
#   bash scripts/build-wheel.sh [--platforms linux64[,win64]]
#
# The extension builds in target/wheel (a target directory of its own: its own workspace and
# lockfile, python/Cargo.lock); prints the wheels' paths on stdout.
set -euo pipefail
# root, CARGO_TARGET_DIR, LINUX_TARGET, GLIBC, WIN_TARGET, pinned_venv, zig_bindgen_args
source "$(dirname "${BASH_SOURCE[0]}")/platforms.sh"
TOOLS="$CARGO_TARGET_DIR/tools/wheel-venv"
REQUIREMENTS="$root/scripts/requirements-wheel.txt"
WHEEL_TARGET_DIR="$CARGO_TARGET_DIR/wheel"
OUT="$CARGO_TARGET_DIR/wheels"
LIB_DIR="$root/python/plenum/_lib"

platforms=linux64
while (($#)); do
    case $1 in
        --platforms) platforms=${2:?--platforms needs a list, e.g. linux64,win64}; shift 2 ;;
        --platforms=*) platforms=${1#--platforms=}; shift ;;
        *) echo "build-wheel.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
IFS=, read -r -a wanted <<<"$platforms"
for p in "${wanted[@]}"; do
    [[ $p == linux64 || $p == win64 ]] || { echo "build-wheel.sh: unknown platform $p" >&2; exit 2; }
done

# maturin, zig and auditwheel, pinned, from PyPI (reinstalled when the pins change).
pinned_venv "$TOOLS" "$REQUIREMENTS" maturin "maturin, zig and auditwheel"

# The FMU libraries every wheel ships, both platforms. linux64 is brought up to date (a no-op
# when built); win64 is built only when missing: scripts/test.sh builds it with its Windows
# tests (`--windows-tests`, another cargo unit), which a plain build would compile again.
bash scripts/build-fmu-libs.sh --platforms linux64 >&2
[[ -f $CARGO_TARGET_DIR/$WIN_TARGET/fmu/plenum.dll ]] || bash scripts/build-fmu-libs.sh --platforms win64 >&2
rm -rf "$LIB_DIR"
mkdir -p "$LIB_DIR/linux64" "$LIB_DIR/win64"
cp "$CARGO_TARGET_DIR/$LINUX_TARGET/fmu/libplenum.so" "$LIB_DIR/linux64/libplenum.so"
cp "$CARGO_TARGET_DIR/$WIN_TARGET/fmu/plenum.dll" "$LIB_DIR/win64/plenum.dll"
trap 'rm -rf "$LIB_DIR"' EXIT

include=$(bash scripts/clang-include.sh) || {
    echo "build-wheel.sh: clang's resource headers not found; install libclang-dev" >&2
    exit 2
}
mkdir -p "$OUT"
built=()

build_linux64() {
    local start=$SECONDS bindgen_args wheel
    # bindgen (fmi-sys) with clang's and zig's glibc headers, as scripts/build-fmu-libs.sh.
    bindgen_args=$(zig_bindgen_args "$TOOLS/bin/python" "$include")
    rm -f "$OUT"/plenum-*-manylinux*.whl
    echo "== wheel linux64: manylinux2014 (zig, glibc $GLIBC)" >&2
    env PATH="$TOOLS/bin:$PATH" CARGO_TARGET_DIR="$WHEEL_TARGET_DIR" \
        "BINDGEN_EXTRA_CLANG_ARGS_$LINUX_TARGET=$bindgen_args" \
        maturin build --quiet --release --zig --target "$LINUX_TARGET" \
        --compatibility manylinux2014 --manifest-path python/Cargo.toml --out "$OUT" >&2
    wheel=$(ls "$OUT"/plenum-*-manylinux*.whl)
    # The check of the result: manylinux2014 by auditwheel, and glibc ≤ 2.17 by the symbol
    # versions the extension needs.
    "$TOOLS/bin/auditwheel" show "$wheel" >&2
    "$TOOLS/bin/python" "$root/python/tools/glibc_versions.py" "$wheel" "$GLIBC" >&2
    echo "== wheel linux64: $wheel in $((SECONDS - start)) s" >&2
    built+=("$wheel")
}

build_win64() {
    local start=$SECONDS wheel
    rm -f "$OUT"/plenum-*-win_amd64.whl
    echo "== wheel win64: $WIN_TARGET (MinGW-w64)" >&2
    env PATH="$TOOLS/bin:$PATH" CARGO_TARGET_DIR="$WHEEL_TARGET_DIR" \
        "BINDGEN_EXTRA_CLANG_ARGS_x86_64_pc_windows_gnu=-isystem $include" \
        CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
        maturin build --quiet --release --target "$WIN_TARGET" --features windows \
        --manifest-path python/Cargo.toml --out "$OUT" >&2
    wheel=$(ls "$OUT"/plenum-*-win_amd64.whl)
    # No Windows CPython here to import it: check the extension's PE headers instead. It must
    # export PyInit__plenum and import nothing but python3.dll (the stable ABI) and DLLs every
    # Windows 10 has.
    local scratch imports
    scratch=$(mktemp -d)
    "$TOOLS/bin/python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("plenum/_plenum.pyd", sys.argv[2])' \
        "$wheel" "$scratch"
    x86_64-w64-mingw32-objdump -p "$scratch/plenum/_plenum.pyd" >"$scratch/headers"
    grep -q "PyInit__plenum" "$scratch/headers" || {
        echo "build-wheel.sh: $wheel: the extension exports no PyInit__plenum" >&2
        exit 1
    }
    imports=$(sed -n 's/^\tDLL Name: //p' "$scratch/headers" | tr 'A-Z' 'a-z' | sort -u | tr '\n' ' ')
    rm -rf "$scratch"
    echo "== wheel win64: the extension exports PyInit__plenum and imports: $imports" >&2
    for dll in $imports; do
        case $dll in
            python3.dll | kernel32.dll | ntdll.dll | msvcrt.dll | ws2_32.dll | bcryptprimitives.dll | \
                advapi32.dll | userenv.dll | bcrypt.dll | shell32.dll | ole32.dll | api-ms-win-*.dll) ;;
            *) echo "build-wheel.sh: $wheel: the extension imports $dll" >&2; exit 1 ;;
        esac
    done
    echo "== wheel win64: $wheel in $((SECONDS - start)) s" >&2
    built+=("$wheel")
}

for p in "${wanted[@]}"; do
    "build_$p"
done
printf '%s\n' "${built[@]}"
