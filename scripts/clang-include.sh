#!/usr/bin/env bash
# Prints the folder of clang's own resource headers (stddef.h, mm_malloc.h, ...) for bindgen's
# cross builds (scripts/cargo-win64.sh, scripts/build-fmu-libs.sh): libclang finds them by itself
# for the host only. Looked up on every run: asked from clang when there is one, else found
# beside libclang (Debian: /usr/lib/llvm-<N>/lib/clang/<version>/include). Exit 1: none found.
set -euo pipefail
find_include() {
    local dir lib libs=() candidates=()
    if command -v clang >/dev/null 2>&1; then
        candidates+=("$(clang -print-resource-dir)/include")
    fi
    if command -v llvm-config >/dev/null 2>&1; then
        candidates+=("$(llvm-config --libdir)"/clang/*/include)
    fi
    [[ -n ${LIBCLANG_PATH:-} ]] && libs+=("$LIBCLANG_PATH"/libclang*.so*)
    while read -r lib; do libs+=("$lib"); done < <(ldconfig -p 2>/dev/null |
        awk '/libclang(-[0-9.]+)?\.so/ {print $NF}' | sort -rV)
    for lib in "${libs[@]}"; do
        [[ -e $lib ]] || continue
        for dir in "$(dirname "$lib")" "$(dirname "$(readlink -f "$lib")")"; do
            candidates+=("$dir"/clang/*/include "$dir"/../lib/clang/*/include)
        done
        if [[ $(basename "$lib") =~ ^libclang-([0-9]+) ]]; then
            candidates+=(/usr/lib/llvm-"${BASH_REMATCH[1]}"/lib/clang/*/include)
        fi
    done
    candidates+=(/usr/lib/clang/*/include /usr/lib64/clang/*/include)
    for dir in "${candidates[@]}"; do
        if [[ -f $dir/mm_malloc.h ]]; then
            readlink -f "$dir"
            return 0
        fi
    done
    return 1
}

find_include
