#!/bin/bash
# A job with one collective algorithm forced (COURIER_COLL_ALG=ALG), checked in
# its trace (courier run --trace: each call's "how" is the algorithm it ran,
# docs/tools.md) as well as by its own results, so that a forcing that does
# not take (a name the library reads otherwise, a branch that ignores it) fails
# instead of passing with the automatic choice:
#   forced.sh ALG CALL[<BYTES]=A[|B...][,CALL...] -- courier run ... prog [args]
# The job must exit 0; the first CALL must have run ALG at least once; every
# record of each CALL that names an algorithm names one of its list (the
# forced one and where it does not apply, documented in src/coll, what runs
# instead); and no call went through the collective area ("shared area") but
# with ALG=area: the automatic choice alone takes it otherwise. CALL<BYTES
# looks only at the calls of fewer bytes (below the size from which the
# automatic choice takes ALG too). Algorithms are named as COURIER_COLL_ALG
# names them (recdbl: "recursive doubling" in the trace, area: "shared area").
set -u
alg=$1 spec=$2
shift 2
[ "$1" = -- ] && shift
long() { case $1 in recdbl) echo "recursive doubling" ;; area) echo "shared area" ;; *) echo "$1" ;; esac; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
. "$(dirname "$0")/traced.sh"
COURIER_COLL_ALG=$alg run_traced "$d/t.json" "$@"
# "call<TAB>bytes<TAB>how" for every call record that names an algorithm
algs='binomial|pipeline|recursive doubling|rabenseifner|ring|bruck|pairwise|scatter|linear|direct|split|window|shared area|dissemination|shift'
grep '"cat":"call"' "$d/t.json" |
    sed -n 's/.*"name":"\([^"]*\)".*"bytes":\([0-9]*\),.*"how":"\([^"]*\)".*/\1\t\2\t\3/p' |
    grep -E "	($algs)$" >"$d/calls"
cut -f1,3 "$d/calls" | tr '\t' ' ' | sort | uniq -c >"$d/how"
fail=0
first=1
IFS=, read -ra items <<<"$spec"
for item in "${items[@]}"; do
    call=${item%%=*} below=
    case $call in *"<"*) below=${call#*<} call=${call%%<*} ;; esac
    allowed=
    IFS='|' read -ra names <<<"${item#*=}"
    for n in "${names[@]}"; do allowed="$allowed|$(long "$n")"; done
    allowed=${allowed#|}
    # this call's algorithms, counted (of the calls below BYTES where given)
    ran=$(awk -F'\t' -v c="$call" -v b="${below:-}" '$1 == c && (b == "" || $2 + 0 < b + 0) { print $3 }' \
        "$d/calls" | sort | uniq -c)
    what=$call${below:+ (under $below bytes)}
    if [ $first = 1 ] && ! grep -Eq "^ *[0-9]+ $(long "$alg")$" <<<"$ran"; then
        echo "FAIL: no $what ran $(long "$alg") (COURIER_COLL_ALG=$alg)"; fail=1
    fi
    first=0
    other=$(grep -Ev "^ *[0-9]+ ($allowed)$" <<<"$ran" | grep .)
    [ -z "$other" ] || { echo "FAIL: with COURIER_COLL_ALG=$alg, $what ran other than $allowed:"; echo "$other"; fail=1; }
done
if [ "$alg" != area ] && grep -q " shared area$" "$d/how"; then
    echo "FAIL: with COURIER_COLL_ALG=$alg, calls went through the collective area:"
    grep " shared area$" "$d/how"; fail=1
fi
[ $fail -eq 0 ] && echo "forced $alg: $spec: as the trace shows"
[ $fail -eq 0 ] || { echo "the calls' algorithms (count, call, algorithm):"; cat "$d/how"; }
exit $fail
