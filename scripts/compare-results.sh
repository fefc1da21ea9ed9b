#!/usr/bin/env bash
# Results that must not move: run every shipped model (models/*.toml), gallery model
# (examples/*/model.toml), Cantera and FONSim network (compliance-tests/peers/models,
# tests/fonsim/models) and the fixtures of every kind (tests/fixtures/models/all_kinds.toml,
# every_kind.toml) with `--method auto` and `--method bdf` (the shipped models and the fixtures
# also with dopri5 and rk4) through two `plenum` binaries, and compare the CSVs byte for byte
# (`cmp`).
#
#   bash scripts/compare-results.sh BASE_BIN [NEW_BIN]
#
# BASE_BIN: a `plenum` built from the commit to compare with (copy it out of target/ first);
# NEW_BIN: default target/release/plenum. The CSVs and the printed summaries go to
# target/compare/{base,new}/. A run that fails must fail the same way in both (same exit
# code, same message); the printed summaries (final values, steps, right-hand sides) must match
# but for the solve time. Prints one line per run and the counts; exits 1 if any run differs.
set -u
cd "$(dirname "$0")/.."
base=${1:?usage: compare-results.sh BASE_BIN [NEW_BIN]}
new=${2:-target/release/plenum}
out=target/compare
rm -rf "$out"
mkdir -p "$out/base" "$out/new"

runs=()
fixtures="tests/fixtures/models/all_kinds.toml tests/fixtures/models/every_kind.toml"
for m in models/*.toml $fixtures; do
    for method in auto bdf dopri5 rk4; do runs+=("$m $method"); done
done
for m in examples/*/model.toml compliance-tests/peers/models/*.toml tests/fonsim/models/*.toml; do
    for method in auto bdf; do runs+=("$m $method"); done
done

same=0 differ=0 failed_alike=0
for r in "${runs[@]}"; do
    read -r model method <<<"$r"
    tag=$(echo "$model" | tr '/' '_' | sed 's/\.toml$//')_$method
    for side in base new; do
        bin=$base
        [ "$side" = new ] && bin=$new
        "$bin" run "$model" --method "$method" --quiet --csv "$out/$side/$tag.csv" \
            >"$out/$side/$tag.txt" 2>&1
        echo "exit $?" >>"$out/$side/$tag.txt"
    done
    # The printed summary (final values, steps, right-hand sides, errors, exit code) must match
    # too, but for its solve time.
    strip() { grep -v '^solve_s' "$1"; }
    if [ -f "$out/base/$tag.csv" ] || [ -f "$out/new/$tag.csv" ]; then
        if cmp -s "$out/base/$tag.csv" "$out/new/$tag.csv" \
            && diff -q <(strip "$out/base/$tag.txt") <(strip "$out/new/$tag.txt") >/dev/null; then
            rows=$(($(wc -l <"$out/new/$tag.csv") - 1))
            echo "same     $model --method $method ($rows rows)"
            same=$((same + 1))
        else
            echo "DIFFERS  $model --method $method"
            cmp "$out/base/$tag.csv" "$out/new/$tag.csv" | head -n1
            differ=$((differ + 1))
        fi
    elif diff -q <(strip "$out/base/$tag.txt") <(strip "$out/new/$tag.txt") >/dev/null; then
        echo "failed alike  $model --method $method: $(head -n1 "$out/new/$tag.txt")"
        failed_alike=$((failed_alike + 1))
    else
        echo "DIFFERS  $model --method $method (failed differently)"
        differ=$((differ + 1))
    fi
done
echo "${#runs[@]} runs: $same identical CSVs, $failed_alike failed alike, $differ differ"
[ "$differ" -eq 0 ]
