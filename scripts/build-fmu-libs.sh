#!/usr/bin/env bash
# Builds the Plenum library that FMUs ship, once per platform, in the `fmu` profile (release
# code, stripped, exporting only the fmi2 and fmi3 functions: scripts/fmu-linker.sh), library crate only
# (`--no-default-features`: none of the command line's dependencies):
#
#   linux64  target/x86_64-unknown-linux-gnu/fmu/libplenum.so   linked by zig against glibc 2.17
#            (cargo-zigbuild and ziglang from PyPI, installed here into target/tools/zig-venv;
#            built in target/zig, a target directory of its own, and copied there)
#   win64    target/x86_64-pc-windows-gnu/fmu/plenum.dll        cross-compiled with MinGW-w64
#            (rustup's x86_64-pc-windows-gnu target, Debian's gcc-mingw-w64-x86-64)
#
#   bash scripts/build-fmu-libs.sh [--platforms linux64,win64] [--windows-tests]
#
# Without --platforms: every platform this machine can build; one it cannot is skipped with
# the reason and the command that adds it. A platform named in --platforms that cannot be built
# is an error (exit 2). --windows-tests also cross-builds, in the same profile, the compliance
# runner and the compliance test binaries for win64 (run under Wine by scripts/test.sh); a target
# directory that has had that build keeps it (the library is the same either way).
# `fmu-build` finds these libraries by itself. The platforms build at the same time (each ends in
# a one-codegen-unit compile of the library that uses one core): linux64 in its own target
# directory, since cargo holds a target directory's lock for the whole of a build.
set -euo pipefail
# root, CARGO_TARGET_DIR, LINUX_TARGET, GLIBC, WIN_TARGET, pinned_venv, zig_bindgen_args
source "$(dirname "${BASH_SOURCE[0]}")/platforms.sh"
ZIG_VENV="$CARGO_TARGET_DIR/tools/zig-venv"
ZIG_REQUIREMENTS="$root/scripts/requirements-zig.txt"
ZIG_TARGET_DIR="$CARGO_TARGET_DIR/zig"

requested=""
windows_tests=0
while (($#)); do
    case $1 in
        --platforms) requested=${2:?--platforms needs a list, e.g. linux64,win64}; shift 2 ;;
        --platforms=*) requested=${1#--platforms=}; shift ;;
        --windows-tests) windows_tests=1; shift ;;
        *) echo "build-fmu-libs.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# Why this machine cannot build a platform (nothing printed: it can).
cannot_build() {
    case $1 in
        linux64)
            if [[ $(uname -sm) != "Linux x86_64" ]]; then
                echo "linux64 is built on Linux x86_64 only (this is $(uname -sm))"
            elif ! bash "$root/scripts/clang-include.sh" >/dev/null; then
                echo "linux64 needs clang's resource headers (apt-get install libclang-dev)"
            fi
            ;;
        win64)
            local missing=()
            if ! rustup target list --installed 2>/dev/null | grep -qx "$WIN_TARGET"; then
                if command -v rustup >/dev/null 2>&1; then
                    rustup target add "$WIN_TARGET" >&2 ||
                        missing+=("Rust's $WIN_TARGET target (rustup target add $WIN_TARGET failed)")
                else
                    missing+=("Rust's $WIN_TARGET target (no rustup to add it)")
                fi
            fi
            command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 ||
                missing+=("x86_64-w64-mingw32-gcc (apt-get install gcc-mingw-w64-x86-64)")
            bash "$root/scripts/clang-include.sh" >/dev/null ||
                missing+=("clang's resource headers (mm_malloc.h; apt-get install libclang-dev)")
            ((${#missing[@]} == 0)) || echo "win64 needs ${missing[*]}"
            ;;
        *) echo "unknown platform $1 (known: linux64, win64)" ;;
    esac
}

# cargo-zigbuild and zig, pinned, from PyPI (wheels; reinstalled when the pins change).
zig_tools() {
    pinned_venv "$ZIG_VENV" "$ZIG_REQUIREMENTS" cargo-zigbuild "cargo-zigbuild and zig"
}

build_linux64() {
    local start=$SECONDS include
    include=$(bash "$root/scripts/clang-include.sh") || {
        echo "build-fmu-libs.sh: clang's resource headers not found; install libclang-dev" >&2
        exit 2
    }
    echo "== linux64: $LINUX_TARGET.$GLIBC (zig), profile fmu" >&2
    # bindgen (fmi-sys) reads the headers with clang's own and zig's glibc headers, named here:
    # libclang finds neither for an explicit target from what cargo-zigbuild passes. (The
    # variable's name keeps the target's hyphens: the form cargo-zigbuild extends.)
    local bindgen_args
    bindgen_args=$(zig_bindgen_args "$ZIG_VENV/bin/python" "$include")
    env PATH="$ZIG_VENV/bin:$PATH" CARGO_TARGET_DIR="$ZIG_TARGET_DIR" \
        "BINDGEN_EXTRA_CLANG_ARGS_$LINUX_TARGET=$bindgen_args" \
        CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$root/scripts/fmu-linker.sh" \
        PLENUM_FMU_LINKER="cargo-zigbuild zig cc -- -g -fno-sanitize=all -target x86_64-linux-gnu.$GLIBC" \
        cargo zigbuild -q --profile fmu -p plenum --lib --no-default-features \
        --target "$LINUX_TARGET.$GLIBC"
    mkdir -p "$CARGO_TARGET_DIR/$LINUX_TARGET/fmu"
    cp -p "$ZIG_TARGET_DIR/$LINUX_TARGET/fmu/libplenum.so" "$CARGO_TARGET_DIR/$LINUX_TARGET/fmu/libplenum.so"
    echo "== linux64: $CARGO_TARGET_DIR/$LINUX_TARGET/fmu/libplenum.so in $((SECONDS - start)) s" >&2
}

build_win64() {
    local start=$SECONDS
    echo "== win64: $WIN_TARGET (MinGW-w64), profile fmu" >&2
    local out="$CARGO_TARGET_DIR/$WIN_TARGET/fmu"
    # The two ways of building the DLL are different cargo units that overwrite each other's
    # deps/plenum.dll: once this target directory has the tests' build, it is kept (cargo finds
    # it fresh), so that the demo run after the tests compiles nothing.
    if ((!windows_tests)) && [[ -f $out/.windows-tests ]]; then
        echo "== win64: building as --windows-tests did before in $out" >&2
        windows_tests=1
    fi
    if ((windows_tests)); then
        # The runner and the test binaries depend on the library; cargo builds it for them with
        # both its crate types, the DLL in deps/. That one build is the one shipped (a build of
        # `-p plenum --lib` alone would be a second, equal compile: cargo's unit for a root
        # package differs from the dependency's).
        bash "$root/scripts/cargo-win64.sh" build -q --profile fmu -p compliance-tests --bins --tests
        cp -p "$out/deps/plenum.dll" "$out/plenum.dll"
        touch "$out/.windows-tests"
    else
        bash "$root/scripts/cargo-win64.sh" build -q --profile fmu -p plenum --lib --no-default-features
    fi
    echo "== win64: $CARGO_TARGET_DIR/$WIN_TARGET/fmu/plenum.dll in $((SECONDS - start)) s" >&2
}

IFS=, read -r -a platforms <<<"${requested:-linux64,win64}"
built=()
pids=()
for p in "${platforms[@]}"; do
    why=$(cannot_build "$p")
    if [[ -n $why ]]; then
        if [[ -n $requested ]]; then
            echo "build-fmu-libs.sh: cannot build $p: $why" >&2
            exit 2
        fi
        echo "== skipping $p: $why" >&2
        continue
    fi
    # Installed before the builds start, so that nothing installs while another builds.
    [[ $p == linux64 ]] && zig_tools
    "build_$p" &
    pids+=($!)
    built+=("$p")
done
failed=()
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed+=("${built[$i]}")
done
if ((${#failed[@]})); then
    echo "build-fmu-libs.sh: the build of ${failed[*]} failed" >&2
    exit 1
fi
echo "== FMU libraries built: ${built[*]:-none}" >&2
