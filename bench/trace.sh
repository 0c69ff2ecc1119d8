#!/bin/sh
# What tracing costs: the NX/2 echo (bench/pingpong.c) with tracing off, with
# `courier run --trace`, and, with --base, built from an older tree (before the
# tracing hooks existed: what "off" costs). Runs the variants interleaved and
# prints medians of the one-way latency, and what tracing adds per message
# (one send call and one receive call, each with its message's record).
#   bench/trace.sh --build build [--base OLD_BUILD] [--reps N] [--max BYTES]
set -eu
build=build base="" reps=9 max=65536
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2 && shift 2 ;;
    --base) base=$2 && shift 2 ;;
    --reps) reps=$2 && shift 2 ;;
    --max) max=$2 && shift 2 ;;
    *) echo "usage: bench/trace.sh --build DIR [--base OLD_BUILD_DIR] [--reps N] [--max BYTES]" >&2 && exit 2 ;;
    esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { # run VARIANT BUILD [courier run options]
    v=$1 b=$2
    shift 2
    "$b/tools/courier" run -n 2 "$@" "$b/bench/pingpong" echo --max "$max" --quick 2>/dev/null |
        awk -v v="$v" '/^echo /{print v, $2, $3}' >>"$work/samples"
}
i=0
while [ "$i" -lt "$reps" ]; do
    [ -n "$base" ] && run base "$base"
    run off "$build"
    run on "$build" --trace "$work/t.json"
    i=$((i + 1))
done
median() { # median VARIANT SIZE
    awk -v v="$1" -v s="$2" '$1 == v && $2 == s {print $3}' "$work/samples" | sort -n |
        awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "-"}'
}
echo "# NX/2 echo one-way latency (us), median of $reps interleaved runs; $(uname -m), $(nproc) CPUs"
printf '%-10s %10s %10s %10s %14s\n' bytes base off on "on-off (ns)"
for s in $(awk '{print $2}' "$work/samples" | sort -n | uniq); do
    b=$( [ -n "$base" ] && median base "$s" || echo -)
    off=$(median off "$s") on=$(median on "$s")
    printf '%-10s %10s %10s %10s %14s\n' "$s" "$b" "$off" "$on" \
        "$(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.0f", (a - b) * 1000}')"
done
