#!/bin/sh
# Makes the charts in docs/img that docs/tools.md shows: traces the test program
# tests/tools/trace/trace_ring.c on 4 ranks and draws its trace with
# `courier trace --plot` (needs gnuplot). Run from the top of the tree after a
# build in build/:  sh docs/make-screenshots.sh
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build/tools/courier run -n 4 --trace "$work/trace.json" build/tests/tools/trace/trace_ring
build/tools/courier trace "$work/trace.json" --plot "$work/plot" >/dev/null
for c in timeline matrix balance; do cp "$work/plot/$c.png" "docs/img/trace-$c.png"; done
echo "docs/img/trace-{timeline,matrix,balance}.png made"
