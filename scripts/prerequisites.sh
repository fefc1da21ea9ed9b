#!/usr/bin/env bash
# What the README's two commands need besides the Rust toolchain and Python 3, installed when
# missing (both commands run this first; so does .ci/run, which installs nothing else):
#
#   bash scripts/prerequisites.sh demo   Debian packages libclang-dev (fmi-sys runs bindgen),
#                                        python3-venv, gcc-mingw-w64-x86-64 (the win64 library);
#                                        rustup's x86_64-pc-windows-gnu target
#   bash scripts/prerequisites.sh test   the same, and valgrind (leak procedure), libtbb12
#                                        (Ecos), wine and wine64 (the win64 library's tests),
#                                        cmake (3.24 or newer), g++ and make (OMSimulator and
#                                        FMUComplianceChecker, built from source by
#                                        compliance-tests/importers/build-tools.sh)
#
# As root, missing packages are installed with apt-get. Otherwise nothing is installed: the
# script names the exact command to run and exits 2. On a system without dpkg and apt-get it
# only lists what it could not check.
set -euo pipefail
mode=${1:-}
packages=(libclang-dev python3-venv gcc-mingw-w64-x86-64)
case $mode in
    demo) ;;
    test) packages+=(valgrind libtbb12 wine wine64 cmake g++ make) ;;
    *)
        echo "usage: bash scripts/prerequisites.sh demo|test" >&2
        exit 2
        ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "prerequisites: no dpkg/apt-get here, so nothing was checked; install the equivalents" \
        "of these Debian packages: ${packages[*]}" >&2
else
    missing=()
    for p in "${packages[@]}"; do
        if [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) != "install ok installed" ]]; then
            missing+=("$p")
        fi
    done
    if ((${#missing[@]})); then
        if [[ $(id -u) != 0 ]]; then
            echo "prerequisites: missing Debian packages: ${missing[*]}" >&2
            echo "  run as root:  apt-get update && apt-get install -y ${missing[*]}" >&2
            echo "  then run this command again." >&2
            exit 2
        fi
        echo "== installing ${missing[*]} (apt-get)" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
fi

# The Rust standard library for the win64 cross build (rustup's own download).
target=x86_64-pc-windows-gnu
if command -v rustup >/dev/null 2>&1; then
    if ! rustup target list --installed | grep -qx "$target"; then
        echo "== rustup target add $target" >&2
        rustup target add "$target" >&2
    fi
else
    echo "prerequisites: no rustup, so Rust's $target target cannot be added: FMUs will carry" \
        "linux64 only" >&2
fi
