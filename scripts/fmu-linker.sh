#!/usr/bin/env bash
# The linker of the libraries shipped in FMUs (scripts/build-fmu-libs.sh): exports the FMI
# functions and nothing else.
#
# rustc exports every #[no_mangle] function of every crate linked into a cdylib (fmi-sys'
# `callback_log` among them) by a list it hands the linker: a version script on ELF
# (`-Wl,--version-script=FILE`), a module-definition file on PE (`-Wl,FILE.def`). This wrapper
# keeps in that list only the names matching PLENUM_FMU_EXPORTS (shell globs, space-separated;
# default "fmi2* fmi3*": one library serves FMI 2.0 and 3.0 FMUs), then runs the real linker, the command line
# in PLENUM_FMU_LINKER (default `cc`).
set -euo pipefail
read -r -a patterns <<<"${PLENUM_FMU_EXPORTS:-fmi2* fmi3*}"
read -r -a linker <<<"${PLENUM_FMU_LINKER:-cc}"

exported() {
    local p
    for p in "${patterns[@]}"; do
        # shellcheck disable=SC2053 # $p is a glob on purpose
        [[ $1 == $p ]] && return 0
    done
    return 1
}

# ELF version script: `{ global: a; b; local: *; };`, one name a line.
filter_version_script() {
    local file=$1 line name section="" out=()
    while IFS= read -r line || [[ -n $line ]]; do
        case $line in
            *global:*) section=global ;;
            *local:*) section=local ;;
        esac
        name=${line//[[:space:]]/}
        name=${name%;}
        if [[ $section == global && $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && ! exported "$name"; then
            continue
        fi
        out+=("$line")
    done <"$file"
    printf '%s\n' "${out[@]}" >"$file"
}

# PE module-definition file: `EXPORTS` then one name a line, in double quotes.
filter_def() {
    local file=$1 line name section="" out=()
    while IFS= read -r line || [[ -n $line ]]; do
        name=${line//[[:space:]\"]/}
        if [[ $name == EXPORTS ]]; then
            section=exports
        elif [[ $section == exports && -n $name ]] && ! exported "$name"; then
            continue
        fi
        out+=("$line")
    done <"$file"
    printf '%s\n' "${out[@]}" >"$file"
}

for arg in "$@"; do
    case $arg in
        -Wl,--version-script=*) filter_version_script "${arg#-Wl,--version-script=}" ;;
        *.def) filter_def "${arg#-Wl,}" ;;
    esac
done
exec "${linker[@]}" "$@"
