#!/usr/bin/env bash
# Coverage-guided fuzzing of the model-file parser, of FMU state deserialization and of
# co-simulation call sequences (fmi2SetReal, fmi2DoStep, the life cycle, states: fmi_calls)
# (fuzz/, libFuzzer through libfuzzer-sys), on the stable toolchain and without cargo-fuzz.
#
#   bash scripts/fuzz.sh [SECONDS]     build the targets, run each for SECONDS (default 60)
#                                      over a copy of its seed corpus fuzz/corpus/<target>/;
#                                      exit non-zero on any crash, printing the input's path
#   bash scripts/fuzz.sh --gen-corpus  rewrite the seed state blobs of fuzz/corpus/state_blob/
#                                      from the models (after a state format change)
#   bash scripts/fuzz.sh --repro TARGET FILE   run one input (a crash, a corpus file) once
#   PLENUM_FUZZ_DEEP=0 bash scripts/fuzz.sh     state_blob does not read outputs and step from
#                                      every accepted state (it does by default)
#
# Builds go to fuzz/target (its own target directory). The instrumentation is cargo-fuzz's:
# SanitizerCoverage (inline 8-bit counters, PC table, compare tracing) with --cfg fuzzing, in
# release mode with debug info, debug assertions and overflow checks. AddressSanitizer is added
# when FUZZ_ASAN=1 (it needs -Zsanitizer, i.e. RUSTC_BOOTSTRAP=1 on stable): Plenum has no
# unsafe code outside src/fmi2, which these targets do not reach, so the default is without.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
export CARGO_TERM_COLOR=never
TARGETS=(model_parser state_blob fmi_calls)
HOST=$(rustc -vV | sed -n 's/^host: //p')
export CARGO_TARGET_DIR="$ROOT/fuzz/target"

flags=(--cfg fuzzing -Cpasses=sancov-module
    -Cllvm-args=-sanitizer-coverage-level=4
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
    -Cllvm-args=-sanitizer-coverage-pc-table
    -Cllvm-args=-sanitizer-coverage-trace-compares
    -Cdebug-assertions -Coverflow-checks)
if [[ ${FUZZ_ASAN:-0} == 1 ]]; then
    export RUSTC_BOOTSTRAP=1
    flags+=(-Zsanitizer=address)
fi
export RUSTFLAGS="${flags[*]}"
# --target keeps the instrumentation off build scripts and proc macros (as cargo-fuzz does).
build_start=$(date +%s)
cargo build -q --release --manifest-path fuzz/Cargo.toml --target "$HOST" --bins
echo "== fuzz targets built in $(($(date +%s) - build_start)) s (ASan: ${FUZZ_ASAN:-0})"
BIN="$CARGO_TARGET_DIR/$HOST/release"

if [[ ${1:-} == --gen-corpus ]]; then
    out="$ROOT/fuzz/corpus/state_blob"
    find "$out" -name "*.bin" ! -name "regress_*" -delete
    PLENUM_FUZZ_GEN_CORPUS="$out" "$BIN/state_blob"
    # The regression inputs (regress_*.bin) are kept.
    exit 0
fi
if [[ ${1:-} == --repro ]]; then
    exec "$BIN/$2" -runs=1 "$3"
fi

SECONDS_EACH=${1:-60}
failed=()
for t in "${TARGETS[@]}"; do
    work="$CARGO_TARGET_DIR/fuzz-run/$t"
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp "$ROOT/fuzz/corpus/$t"/* "$work/corpus/"
    echo "== fuzzing $t for $SECONDS_EACH s ($(ls "$work/corpus" | wc -l) seeds)"
    set +e
    "$BIN/$t" "$work/corpus" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=20 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
        >"$work/log" 2>&1
    rc=$?
    set -e
    # libFuzzer's own summary: the last status line (execs, coverage, features, corpus),
    # and the final stats.
    grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$work/log" | tail -n 1 || true
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/log" || true
    if ((rc != 0)); then
        echo "!! $t crashed (libFuzzer exit $rc); log: $work/log"
        grep -E -A40 'panicked|ERROR: (libFuzzer|AddressSanitizer)|==[0-9]+==' "$work/log" | head -n 80 || true
        for a in "$work/artifacts"/*; do
            [[ -e $a ]] && echo "!! crash input: $a"
        done
        failed+=("$t")
    fi
done
if ((${#failed[@]})); then
    echo "fuzz: crash in ${failed[*]}"
    exit 1
fi
echo "fuzz: ${#TARGETS[@]} targets, no crash in $SECONDS_EACH s each"
