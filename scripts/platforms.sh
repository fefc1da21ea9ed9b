# Sourced by scripts/build-fmu-libs.sh and scripts/build-wheel.sh: the repository root ($root,
# made the current directory), the Cargo target directory ($CARGO_TARGET_DIR, exported), the
# Rust targets of the two platforms and the oldest glibc the linux64 builds link against, and
# the installation of pinned build tools from PyPI and the bindgen arguments of a zig build.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"

LINUX_TARGET=x86_64-unknown-linux-gnu
GLIBC=2.17
WIN_TARGET=x86_64-pc-windows-gnu

# `zig_bindgen_args PYTHON INCLUDE`: the arguments with which bindgen (fmi-sys) reads the
# headers for a linux64 build linked by zig: clang's resource headers (INCLUDE) and zig's glibc
# headers, from the ziglang package of PYTHON. libclang finds neither for an explicit target.
zig_bindgen_args() {
    local zig_libc args="-isystem $2"
    zig_libc=$("$1" -c \
        'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "lib/libc/include"))')
    for d in x86-linux-gnu generic-glibc x86-linux-any any-linux-any; do
        args+=" -isystem $zig_libc/$d"
    done
    echo "$args"
}

# `pinned_venv VENV REQUIREMENTS PROGRAM WHAT`: the tools pinned in REQUIREMENTS installed from
# PyPI (wheels) into the venv VENV, once, and again when the pins change (their hash is kept
# in VENV); PROGRAM is VENV's bin/ program whose absence also means "install"; WHAT names the
# tools in the message.
pinned_venv() {
    local want have
    want=$(sha256sum "$2" | cut -d' ' -f1)
    have=$(cat "$1/.requirements.sha256" 2>/dev/null || true)
    if [[ ! -x $1/bin/$3 || $want != "$have" ]]; then
        echo "== installing $4 into $1 (PyPI)" >&2
        python3 -m venv "$1" >&2
        "$1/bin/python" -m pip install --quiet --disable-pip-version-check -r "$2" >&2
        echo "$want" >"$1/.requirements.sha256"
    fi
}
