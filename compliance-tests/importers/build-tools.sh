#!/usr/bin/env bash
# Builds the two importers that are not packages, from the vendored source archives, into
# target/tools/ (or $CARGO_TARGET_DIR/tools/), each once: skipped when its executable is there
# and was built from the same archives by the same recipe.
#
#   target/tools/OMSimulator/bin/OMSimulator              OpenModelica's FMI simulator (FMI 2.0
#                                                         and 3.0, Co-Simulation and Model Exchange)
#   target/tools/FMUComplianceChecker/fmuCheck.linux64    the FMI 2.0 compliance checker
#
#   bash compliance-tests/importers/build-tools.sh [--find-vendor]
#
# --find-vendor prints the vendor folder it would build from (or what is missing) and exits.
#
# The archives are the `git archive` tarballs of ../shared/vendor/ (its README.md lists them
# with their commits): looked for in $PLENUM_VENDOR_DIR, then beside the repository
# (<repository>/../shared/vendor), beside the main checkout of a git worktree, and beside the
# local repository a clone was made from. Nothing is fetched from the network.
#
# OMSimulator main needs SUNDIALS 7, which its 3rdParty snapshot lacks (it carries 5.4.0): Debian's
# SUNDIALS 7.1.1 source is built first (static, position-independent, CVODE and KINSOL only) and
# 3rdParty/CMakeLists.txt is edited, in the extracted copy only, to use it instead (sed, below).
# FMUComplianceChecker's CMakeLists fetches the FMI Library by git: the extracted copy is edited to
# take the vendored tarball instead. Everything is built Release, the GUI, test suite and pip
# package of OMSimulator off. Needs CMake 3.24 or newer (`find_package(... GLOBAL)`), a C and C++
# compiler and make (scripts/prerequisites.sh test installs Debian's); with an older CMake on PATH
# it installs CMake from PyPI into target/tools/cmake-venv.
#
# Prints each build's wall and CPU time; the build logs are kept in target/tools/logs/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tools="${CARGO_TARGET_DIR:-$root/target}/tools"
work="$tools/build"
logs="$tools/logs"
jobs="${PLENUM_TOOLS_JOBS:-$(nproc)}"
# Bumped whenever a flag or an edit below changes, so that a changed recipe rebuilds.
RECIPE=1

OMS_ARCHIVE=OpenModelica+OMSimulator.tar.xz
OMS_3RD_ARCHIVE=OpenModelica+OMSimulator-3rdParty.tar.xz
SUNDIALS_ARCHIVE=sundials_7.1.1+dfsg1.orig.tar.xz
CHECKER_ARCHIVE=modelica-tools+FMUComplianceChecker.tar.xz
FMIL_ARCHIVE=modelon-community+fmi-library-2.0.3.tar.xz
ARCHIVES=("$OMS_ARCHIVE" "$OMS_3RD_ARCHIVE" "$SUNDIALS_ARCHIVE" "$CHECKER_ARCHIVE" "$FMIL_ARCHIVE")

OMS_EXE="$tools/OMSimulator/bin/OMSimulator"
CHECKER_EXE="$tools/FMUComplianceChecker/fmuCheck.linux64"

die() {
    echo "build-tools.sh: $*" >&2
    exit 2
}

# The vendor directory: the first candidate that holds every archive.
find_vendor() {
    local candidates=() common origin
    [[ -n ${PLENUM_VENDOR_DIR:-} ]] && candidates+=("$PLENUM_VENDOR_DIR")
    candidates+=("$root/../shared/vendor")
    # A git worktree: beside the main checkout.
    if common=$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
        candidates+=("$(dirname "$common")/../shared/vendor")
    fi
    # A clone of a local repository: beside that repository.
    origin=$(git -C "$root" config --get remote.origin.url 2>/dev/null || true)
    origin=${origin#file://}
    if [[ -n $origin && -d $origin ]]; then
        candidates+=("$origin/../shared/vendor" "$(dirname "$origin")/../shared/vendor")
    fi
    # Each once (a main checkout is its own worktree and may be its own origin).
    local c a ok unique=() seen=" "
    for c in "${candidates[@]}"; do
        a=$(realpath -m "$c")
        [[ $seen == *" $a "* ]] && continue
        seen+="$a "
        unique+=("$a")
    done
    candidates=("${unique[@]}")
    for c in "${candidates[@]}"; do
        ok=1
        for a in "${ARCHIVES[@]}"; do
            [[ -f $c/$a ]] || ok=0
        done
        if ((ok)); then
            (cd "$c" && pwd)
            return 0
        fi
    done
    {
        echo "build-tools.sh: the vendored sources of OMSimulator and FMUComplianceChecker are"
        echo "  missing. Needed, in one directory: ${ARCHIVES[*]}"
        echo "  Looked in (set PLENUM_VENDOR_DIR to name another):"
        for c in "${candidates[@]}"; do
            if [[ -d $c ]]; then
                local missing=()
                for a in "${ARCHIVES[@]}"; do [[ -f $c/$a ]] || missing+=("$a"); done
                echo "    $c (lacks ${missing[*]})"
            else
                echo "    $c (no such directory)"
            fi
        done
    } >&2
    exit 2
}

# CMake 3.24 or newer: the one on PATH, else CMake from PyPI in target/tools/cmake-venv.
find_cmake() {
    local v
    if command -v cmake >/dev/null 2>&1; then
        v=$(cmake --version | awk 'NR == 1 { print $3 }')
        if printf '3.24\n%s\n' "$v" | sort -V -C; then
            echo cmake
            return
        fi
        echo "== cmake $v on PATH is older than 3.24" >&2
    fi
    local venv="$tools/cmake-venv"
    if [[ ! -x $venv/bin/cmake ]]; then
        echo "== installing CMake 3.31 from PyPI into $venv" >&2
        python3 -m venv "$venv" >&2
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'cmake==3.31.6' >&2
    fi
    echo "$venv/bin/cmake"
}

# Extract an archive into a fresh directory; a single top-level folder (as in Debian's orig
# tarball) is stripped, so the directory is the source tree either way.
extract() {
    local archive=$1 dest=$2 tops
    rm -rf "$dest"
    mkdir -p "$dest"
    tar -xf "$archive" -C "$dest"
    tops=$(find "$dest" -mindepth 1 -maxdepth 1)
    if [[ $(wc -l <<<"$tops") == 1 && -d $tops && ! -f $dest/CMakeLists.txt ]]; then
        mv "$tops" "$dest.tmp" && rmdir "$dest" && mv "$dest.tmp" "$dest"
    fi
}

# What a build was made from: the archives' checksums and the recipe.
stamp_of() {
    echo "recipe $RECIPE"
    local a
    for a in "$@"; do
        echo "$(sha256sum "$vendor/$a" | cut -d' ' -f1)  $a"
    done
}

# `timed NAME LOG COMMAND...`: runs the command with its output in LOG; prints the wall and CPU
# time, or the log's tail and exits on failure.
timed() {
    local name=$1 log=$2 start=$SECONDS t0
    shift 2
    cpu_snapshot
    t0=$cpu
    if ! "$@" >>"$log" 2>&1; then
        echo "build-tools.sh: $name failed; the end of $log:" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
    cpu_snapshot
    echo "-- $name: wall $((SECONDS - start)) s, CPU $((cpu - t0)) s" >&2
}

# cpu=CPU seconds (user + system) of this shell's finished children. `times` must run in this
# shell (in $(...) it would count a subshell's children, none).
cpu_snapshot() {
    times >"$work/.times"
    cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/);
        n += a[1] * 60 + a[2] } printf "%.0f", n }' "$work/.times")
}

build_sundials() {
    local src="$work/sundials-src" bld="$work/sundials" prefix="$work/sundials-install"
    extract "$vendor/$SUNDIALS_ARCHIVE" "$src"
    rm -rf "$bld" "$prefix"
    timed "SUNDIALS 7.1.1: configure" "$logs/sundials.log" "$CMAKE" -S "$src" -B "$bld" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
        -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DBUILD_CVODE=ON -DBUILD_KINSOL=ON -DBUILD_ARKODE=OFF -DBUILD_CVODES=OFF \
        -DBUILD_IDA=OFF -DBUILD_IDAS=OFF -DEXAMPLES_ENABLE_C=OFF -DEXAMPLES_ENABLE_CXX=OFF \
        -DEXAMPLES_INSTALL=OFF
    timed "SUNDIALS 7.1.1: build and install" "$logs/sundials.log" \
        "$CMAKE" --build "$bld" --target install -j "$jobs"
}

# OMSimulator's 3rdParty/CMakeLists.txt: the block that builds its bundled sundials-5.4.0 (from
# "## Sundials" to the alias of the KINSOL library) becomes SUNDIALS 7 found as a package, its
# static CVODE and KINSOL under the four names OMSimulator main links.
patch_oms_3rdparty() {
    local file=$1
    grep -q '^[[:space:]]*add_subdirectory(sundials-5.4.0' "$file" ||
        die "$file no longer builds sundials-5.4.0: the SUNDIALS edit does not apply"
    grep -q '^add_library(oms::3rd::kinsol ALIAS sundials_kinsol_static)' "$file" ||
        die "$file has no oms::3rd::kinsol alias: the SUNDIALS edit does not apply"
    sed -i '/^## Sundials$/,/^add_library(oms::3rd::kinsol ALIAS sundials_kinsol_static)$/c\
## Sundials: SUNDIALS 7 (compliance-tests/importers/build-tools.sh builds it)\
find_package(SUNDIALS 7 REQUIRED CONFIG COMPONENTS cvode kinsol GLOBAL)\
add_library(oms_sundials_cvode INTERFACE)\
target_link_libraries(oms_sundials_cvode INTERFACE SUNDIALS::cvode_static)\
add_library(oms_sundials_kinsol INTERFACE)\
target_link_libraries(oms_sundials_kinsol INTERFACE SUNDIALS::kinsol_static)\
add_library(oms::3rd::sundials::cvode ALIAS oms_sundials_cvode)\
add_library(oms::3rd::sundials::kinsol ALIAS oms_sundials_kinsol)\
add_library(oms::3rd::cvode ALIAS oms_sundials_cvode)\
add_library(oms::3rd::kinsol ALIAS oms_sundials_kinsol)' "$file"
    ! grep -q 'sundials-5.4.0' "$file" || die "the SUNDIALS edit of $file failed"
}

build_omsimulator() {
    local src="$work/OMSimulator-src" bld="$work/OMSimulator" commit
    build_sundials
    extract "$vendor/$OMS_ARCHIVE" "$src"
    rm -rf "$src/3rdParty"
    extract "$vendor/$OMS_3RD_ARCHIVE" "$src/3rdParty"
    patch_oms_3rdparty "$src/3rdParty/CMakeLists.txt"
    # The version OMSimulator prints (an archive has no git history for it to describe).
    commit=$(xz -dc "$vendor/$OMS_ARCHIVE" | git get-tar-commit-id 2>/dev/null || true)
    echo "main-${commit:0:8}" >"$src/version.txt"
    rm -rf "$bld"
    timed "OMSimulator: configure" "$logs/OMSimulator.log" "$CMAKE" -S "$src" -B "$bld" \
        -DCMAKE_BUILD_TYPE=Release \
        -DSUNDIALS_DIR="$work/sundials-install/lib/cmake/sundials" \
        -DOMS_ENABLE_OMSimulatorGui=OFF -DOMS_ENABLE_TESTSUITE=OFF -DOMS_ENABLE_PIP=OFF \
        -DCMAKE_INSTALL_PREFIX="$bld/install"
    # The command-line executable only (it links the static library; the shared library, the
    # Python package and the docs are not needed).
    timed "OMSimulator: build" "$logs/OMSimulator.log" \
        "$CMAKE" --build "$bld" --target OMSimulator -j "$jobs"
    rm -rf "$tools/OMSimulator"
    mkdir -p "$tools/OMSimulator/bin"
    cp -p "$bld/src/OMSimulator/OMSimulator" "$OMS_EXE"
    "$OMS_EXE" --version >/dev/null || die "$OMS_EXE does not run"
}

build_checker() {
    local src="$work/FMUComplianceChecker-src" bld="$work/FMUComplianceChecker"
    extract "$vendor/$CHECKER_ARCHIVE" "$src"
    # The FMI Library from the vendored tarball instead of its git repository. The file has CRLF
    # line endings: the substitution keeps each line's \r, the deleted line takes its own.
    local cml="$src/CMakeLists.txt"
    grep -q 'GIT_REPOSITORY "https://github.com/modelon-community/fmi-library.git"' "$cml" ||
        die "$cml no longer fetches the FMI Library by git: the edit does not apply"
    sed -i -e "s|GIT_REPOSITORY \"https://github.com/modelon-community/fmi-library.git\"|URL \"$vendor/$FMIL_ARCHIVE\"|" \
        -e '/^[[:space:]]*GIT_TAG 2\.0\.3[[:space:]]*$/d' "$cml"
    ! grep -q 'GIT_' "$cml" || die "the FMI Library edit of $cml failed"
    rm -rf "$bld"
    timed "FMUComplianceChecker: configure" "$logs/FMUComplianceChecker.log" "$CMAKE" \
        -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Release \
        -DFMUCHK_INSTALL_PREFIX="$tools/FMUComplianceChecker"
    rm -rf "$tools/FMUComplianceChecker"
    timed "FMUComplianceChecker and the FMI Library: build and install" \
        "$logs/FMUComplianceChecker.log" "$CMAKE" --build "$bld" --target install -j "$jobs"
    [[ -x $CHECKER_EXE ]] || die "the build made no $CHECKER_EXE"
}

# `fresh EXE STAMP`: EXE exists and was built from what STAMP describes.
fresh() {
    [[ -x $1 ]] && [[ $(cat "$1.built-from" 2>/dev/null) == "$2" ]]
}

vendor=$(find_vendor)
if [[ ${1:-} == --find-vendor ]]; then
    echo "$vendor"
    exit 0
elif (($#)); then
    die "unknown argument $1 (usage: build-tools.sh [--find-vendor])"
fi
mkdir -p "$tools"
oms_stamp=$(stamp_of "$OMS_ARCHIVE" "$OMS_3RD_ARCHIVE" "$SUNDIALS_ARCHIVE")
checker_stamp=$(stamp_of "$CHECKER_ARCHIVE" "$FMIL_ARCHIVE")
need=()
fresh "$OMS_EXE" "$oms_stamp" || need+=(omsimulator)
fresh "$CHECKER_EXE" "$checker_stamp" || need+=(checker)
if ((${#need[@]} == 0)); then
    echo "== OMSimulator and FMUComplianceChecker already built in $tools" >&2
    exit 0
fi
CMAKE=$(find_cmake)
echo "== building ${need[*]} from $vendor into $tools ($("$CMAKE" --version | head -n 1), -j $jobs)" >&2
start=$SECONDS
rm -rf "$work" "$logs"
mkdir -p "$work" "$logs"
for t in "${need[@]}"; do
    "build_$t"
    case $t in
        omsimulator) echo "$oms_stamp" >"$OMS_EXE.built-from" ;;
        checker) echo "$checker_stamp" >"$CHECKER_EXE.built-from" ;;
    esac
done
rm -rf "$work"
echo "== built ${need[*]} in $((SECONDS - start)) s: $OMS_EXE, $CHECKER_EXE" >&2
