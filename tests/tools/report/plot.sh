#!/bin/sh
# courier trace --plot: three PNG files (checked by their signature) with their data and
# scripts, into a directory whose name has a space and a quote, for a trace with calls and
# messages and for one without messages, with a rank without events and with call names
# that try to make gnuplot run commands.
#   plot.sh COURIER WORKDIR   (exit 77: gnuplot is not installed)
set -u
courier=$1 work=$2
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot is not installed: skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd) || exit 1
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
for t in nested odd; do
    dir="$work/$t plots/it's here"
    if ! "$courier" trace "$here/$t.json" --plot "$dir" >"$work/$t.out" 2>"$work/$t.err"; then
        echo "$t: courier trace --plot failed:"
        cat "$work/$t.err"
        fail=1
        continue
    fi
    for p in timeline matrix balance; do
        sig=$(od -An -tx1 -N8 "$dir/$p.png" 2>/dev/null | tr -d ' \n')
        if [ "$sig" != 89504e470d0a1a0a ]; then
            echo "$t: $p.png is missing or not a PNG file"
            fail=1
        fi
        for f in "$p.gp" "$p.dat"; do
            [ -f "$dir/$f" ] || { echo "$t: no $f"; fail=1; }
        done
    done
    if [ -n "$(find "$work" -name 'pwned*')" ]; then
        echo "$t: a call name ran a command in gnuplot"
        fail=1
    fi
done
exit $fail
