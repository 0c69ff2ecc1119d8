# Sourced by the tests that read how a job's messages went from its trace
# (xchg.sh, part_wire.sh, waited.sh):
#   traced_job NP COURIER PROG REGEX N
# runs PROG on NP ranks with --trace, shows its output, and exits 1 unless
# the job succeeded and N lines of its output match REGEX; then
#   msgs_of BYTES
# prints the "how" of each message of BYTES bytes in the trace, one a line
# ("eager", "single-copy", "cooperative", "pushed", ...).
traced_dir=$(mktemp -d)
trap 'rm -rf "$traced_dir"' EXIT
traced_job() {
    "$2" run -n "$1" --timeout 120 --trace "$traced_dir/t.json" "$3" >"$traced_dir/out" 2>&1
    local status=$?
    cat "$traced_dir/out"
    [ $status -eq 0 ] || { echo "FAIL: the job exited with status $status"; exit 1; }
    [ "$(grep -c "$4" "$traced_dir/out")" -eq "$5" ] || { echo "FAIL: not $5 lines say ok"; exit 1; }
}
msgs_of() {
    grep '"ph":"f",[^}]*"cat":"msg"' "$traced_dir/t.json" | grep "\"bytes\":$1," |
        grep -o '"how":"[a-z-]*"' | cut -d'"' -f4
}
