#!/usr/bin/env bash
# Speed that must not move, by the load-free figure (docs/performance.md, "How to read these
# figures"): callgrind's instructions inside `Simulation::advance_to` for one solve of each peer
# network at the peers' settings (the Cantera networks at the rtols of docs/performance.md's
# table, the FONSim networks at rtol 1e-6, atol 1e-12), and inside the FMI calls of the
# `fmi_overhead` bench in its quick mode, for two builds; prints both counts and their ratio.
#
#   bash scripts/compare-instructions.sh BASE_DIR NEW_DIR
#
# Each directory holds a `plenum` binary and an `fmi_overhead` bench binary (copied out of
# target/release/ and target/release/deps/ after `cargo build --release --bin plenum` and
# `cargo bench --bench fmi_overhead --no-run`). Needs valgrind.
set -eu
cd "$(dirname "$0")/.."
base=${1:?usage: compare-instructions.sh BASE_DIR NEW_DIR}
new=${2:?usage: compare-instructions.sh BASE_DIR NEW_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Instructions of one solve inside advance_to (the "summary:" line of the callgrind output).
solve() {
    local bin=$1 model=$2 method=$3 rtol=$4 atol=$5
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect='*advance_to*' \
        "$bin" run "$model" --method "$method" --set "solver.rtol=$rtol" \
        --set "solver.atol=$atol" --quiet >/dev/null 2>&1
    awk '/^(summary|totals):/ {print $2; exit}' "$tmp/cg.out"
}

up=0 down=0
row() {
    local what=$1 a=$2 b=$3
    local ratio
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.4f", b / a}')
    printf '%-52s %12s %12s %8s\n' "$what" "$a" "$b" "$ratio"
    up=$(awk -v w="$up" -v r="$ratio" 'BEGIN {d = r - 1; print (d > w ? d : w)}')
    down=$(awk -v w="$down" -v r="$ratio" 'BEGIN {d = 1 - r; print (d > w ? d : w)}')
}

printf '%-52s %12s %12s %8s\n' "solve (instructions in advance_to)" base new new/base
peers=compliance-tests/peers/models
for case in "cantera_vent bdf 1e-7" "cantera_two_tanks bdf 1e-7" "cantera_wall bdf 1e-7" \
    "cantera_piston bdf 3.2e-8" "cantera_chain20 bdf 3.2e-7" "cantera_chain20 auto 1e-7" \
    "cantera_wall auto 1e-6"; do
    read -r net method rtol <<<"$case"
    row "$net $method $rtol" "$(solve "$base/plenum" "$peers/$net.toml" "$method" "$rtol" 1e-15)" \
        "$(solve "$new/plenum" "$peers/$net.toml" "$method" "$rtol" 1e-15)"
done
for net in source_restrictor_container source_tube_container two_containers_restrictor; do
    for method in auto bdf; do
        row "$net $method 1e-6" \
            "$(solve "$base/plenum" "tests/fonsim/models/$net.toml" "$method" 1e-6 1e-12)" \
            "$(solve "$new/plenum" "tests/fonsim/models/$net.toml" "$method" 1e-6 1e-12)"
    done
done

# The FMI calls of the overhead bench (quick mode: a fixed number of calls), inclusive.
fmi() {
    local bin=$1
    valgrind --tool=callgrind --callgrind-out-file="$tmp/fmi.out" "$bin" --quick >/dev/null 2>&1
    callgrind_annotate --inclusive=yes --auto=no --threshold=100 --show-percs=no "$tmp/fmi.out" \
        2>/dev/null >"$tmp/fmi.txt"
}
fmi "$base/fmi_overhead" && mv "$tmp/fmi.txt" "$tmp/fmi_base.txt"
fmi "$new/fmi_overhead" && mv "$tmp/fmi.txt" "$tmp/fmi_new.txt"
printf '%-52s %12s %12s %8s\n' "fmi_overhead --quick (inclusive instructions)" base new new/base
for f in fmi2DoStep fmi2GetReal fmi2SetReal fmi2GetFMUstate fmi2SetFMUstate \
    'Simulation>::advance_to' 'cosim::Instance::do_step'; do
    # The largest inclusive count of the function: its entry under its own source file (the
    # others are code inlined into it from elsewhere).
    count() {
        grep -E "[ :]${f}( |\$)" "$1" | awk '{gsub(",", "", $1); if ($1 + 0 > m) m = $1 + 0} END {print m}'
    }
    a=$(count "$tmp/fmi_base.txt")
    b=$(count "$tmp/fmi_new.txt")
    [ -n "$a" ] && [ -n "$b" ] && row "$f" "$a" "$b"
done
echo "largest increase: $(awk -v w="$up" 'BEGIN {printf "%.2f %%", 100 * w}'), largest decrease: \
$(awk -v w="$down" 'BEGIN {printf "%.2f %%", 100 * w}')"
