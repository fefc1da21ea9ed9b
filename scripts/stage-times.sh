# Sourced by .ci/run and scripts/test.sh: `stage NAME` ends the current stage, printing its wall
# time, its CPU time (user + system of the processes it ran, from bash's `times`) and the load
# average, then starts stage NAME; `stage_end` ends the last one. CPU time is what a stage costs
# whatever else the machine runs: on 2 free cores a stage takes at least CPU/2 of wall time.
_stage_name=""
_stage_file=$(mktemp)
trap 'rm -f "$_stage_file"' EXIT

# _stage_cpu=seconds of CPU used so far by this shell's finished child processes. (`times` must
# run in this shell: in a subshell, such as $(...), it would start from zero.)
_stage_snapshot() {
    times >"$_stage_file"
    _stage_cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/);
        n += a[1] * 60 + a[2] } printf "%.0f", n }' "$_stage_file")
}

stage_end() {
    if [[ -n $_stage_name ]]; then
        _stage_snapshot
        printf -- '-- %s: wall %d s, CPU %d s (user+sys), load average %s\n' "$_stage_name" \
            $((SECONDS - _stage_start)) $((_stage_cpu - _stage_cpu0)) "$(cut -d' ' -f1-3 /proc/loadavg)"
    fi
    _stage_name=""
}

stage() {
    stage_end
    _stage_name=$1
    _stage_start=$SECONDS
    _stage_snapshot
    _stage_cpu0=$_stage_cpu
    echo
    echo "== $1"
}
