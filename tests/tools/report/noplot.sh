#!/bin/sh
# courier trace --plot where gnuplot cannot be found (PATH without it): exit 3, one line,
# and the data and scripts left in the directory.
#   noplot.sh COURIER WORKDIR
set -u
courier=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd) || exit 1
rm -rf "$work" && mkdir -p "$work" || exit 1
dir=$work/plots
env PATH=/nonexistent "$courier" trace "$here/pingpong.json" --plot "$dir" >/dev/null 2>"$work/err"
rc=$?
fail=0
[ "$rc" = 3 ] || { echo "exit status $rc, wanted 3"; fail=1; }
want="courier trace: --plot needs gnuplot (apt-get install gnuplot-nox); its data and scripts are in $dir"
if [ "$(cat "$work/err")" != "$want" ]; then
    echo "stderr was:"
    cat "$work/err"
    fail=1
fi
for f in timeline.dat timeline.gp matrix.dat matrix.gp balance.dat balance.gp ranks.dat; do
    [ -s "$dir/$f" ] || { echo "no $f"; fail=1; }
done
if ls "$dir"/*.png >/dev/null 2>&1; then
    echo "PNG files written without gnuplot?"
    fail=1
fi
exit $fail
