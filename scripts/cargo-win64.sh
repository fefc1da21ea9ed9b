#!/usr/bin/env bash
# `cargo ARGS... --target x86_64-pc-windows-gnu` for the win64 builds (scripts/build-fmu-libs.sh,
# scripts/test.sh), with what the cross build needs:
#   - bindgen (fmi-sys) gets clang's own resource headers (mm_malloc.h, which the MinGW headers
#     include and libclang does not find for that target; scripts/clang-include.sh finds them);
#   - the linker is scripts/fmu-linker.sh over MinGW-w64's gcc (the DLL exports the fmi2 and
#     fmi3 functions only).
# CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER, when set, runs the test binaries (scripts/wine-run.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

include=$(bash "$root/scripts/clang-include.sh") || {
    echo "cargo-win64.sh: clang's resource headers (mm_malloc.h) not found; install libclang-dev" >&2
    exit 2
}
export BINDGEN_EXTRA_CLANG_ARGS_x86_64_pc_windows_gnu="-isystem $include"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER="$root/scripts/fmu-linker.sh"
export PLENUM_FMU_LINKER=x86_64-w64-mingw32-gcc
exec cargo "$@" --target x86_64-pc-windows-gnu
