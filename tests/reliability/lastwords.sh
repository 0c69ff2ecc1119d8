#!/bin/bash
# A rank's last words are never lost: runs lastwords (every rank prints to stdout
# and stderr and exits 1, one of them writes 64 KiB) COUNT times with 4 ranks,
# modes "all" and "late", with and without --label, and checks every time that
# every line arrives, complete and in order, that the launcher's one report line
# comes after every rank's stderr, and that nothing is left behind.
#   lastwords.sh COURIER LASTWORDS [COUNT]
set -u
courier=$1 prog=$2 count=${3:-50}
marker="courier-lastwords-$$"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
report() {
    echo "FAIL (run $i: $mode${label:+ $label}): $*"
    echo "--- stdout (first lines):"; head -n 8 "$dir/out"; echo "--- stderr:"; cat "$dir/err"
    fail=1
}
for i in $(seq "$count"); do
    for mode in all late; do
        label=
        [ $((i % 2)) -eq 0 ] && label=--label
        "$courier" run -n 4 $label --timeout 120 "$prog" $mode "$marker" >"$dir/out" 2>"$dir/err"
        status=$?
        [ $status -eq 1 ] || { report "exit status $status, wanted 1"; break 2; }
        big=1
        [ $mode = late ] && big=0
        for r in 0 1 2 3; do
            pre=
            [ -n "$label" ] && pre="[$r] "
            grep -qxF "${pre}lastwords: rank $r stdout" "$dir/out" || { report "rank $r's stdout line is missing"; break 3; }
            grep -qxF "${pre}lastwords: rank $r stderr" "$dir/err" || { report "rank $r's stderr line is missing"; break 3; }
        done
        pre=
        [ -n "$label" ] && pre="[$big] "
        # The 64 KiB: 1000 numbered lines in order, then the unfinished last one.
        got=$(awk -v pre="$pre" -v b=$big '
            index($0, pre "big " b " ") != 1 { next }
            { body = substr($0, length(pre) + 1) }
            body == "big " b " end" { print (want == 1000 ? "ok" : "only " want " lines before the end"); exit }
            { line = sprintf("big %d %04d ", b, want); while (length(line) < 63) line = line "x"
              if (body != line) { print "line " want " is \"" $0 "\""; exit }
              want++ }' "$dir/out")
        [ "$got" = ok ] || { report "rank $big's 64 KiB write: ${got:-no end line}"; break 2; }
        [ "$(wc -l <"$dir/out")" -eq 1005 ] || { report "$(wc -l <"$dir/out") stdout lines, wanted 1005"; break 2; }
        [ "$(grep -c '^courier:' "$dir/err")" -eq 1 ] || { report "not one courier line"; break 2; }
        tail -n 1 "$dir/err" | grep -Eqx 'courier: rank [0-3] \(pid [0-9]+\) exited with status 1; ending the job' ||
            { report "the report is not the last stderr line"; break 2; }
    done
done
left=$(pgrep -f "$marker")
[ -n "$left" ] && { echo "FAIL: processes left:"; pgrep -af "$marker"; kill -KILL $left; fail=1; }
[ $fail -eq 0 ] && echo "ok: $count runs of each mode, every rank's last words arrived"
exit $fail
