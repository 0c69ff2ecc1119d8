# Sourced by forced.sh and auto_how.sh: run_traced FILE COMMAND... runs the
# courier command with --trace FILE put right after its "run", and fails the
# test (exit 1; 2 when the command has no "run") unless the job exits 0 and
# writes the trace. The caller's environment goes to the job.
run_traced() {
    local file=$1 traced= a
    shift
    local cmd=()
    for a in "$@"; do
        cmd+=("$a")
        if [ -z "$traced" ] && [ "$a" = run ]; then cmd+=(--trace "$file"); traced=1; fi
    done
    [ -n "$traced" ] || { echo "$(basename "$0"): no 'run' in the command: $*"; exit 2; }
    "${cmd[@]}"
    local status=$?
    [ $status -eq 0 ] || { echo "FAIL: the job exited with status $status"; exit 1; }
    [ -s "$file" ] || { echo "FAIL: no trace was written"; exit 1; }
}
