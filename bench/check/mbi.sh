#!/bin/bash
# courier run --check measured with the MPI Bugs Initiative (MBI: generated MPI
# programs, each labelled with its expected outcome: OK, or the class of its
# error), beside Open MPI when asked: the programs are generated from an MBI
# tree the user already has (its scripts/*Generator.py; nothing is fetched)
# into the work directory, built with courier-cc (and Open MPI's mpicc), run
# with the ranks their header asks for, under a time limit, and classified:
# an erroneous program is reported in its class, reported in another class,
# or missed; a correct one is clean or a false alarm; either may crash or time
# out. Prints one line per class and the totals (or a Markdown table), and
# leaves in the work directory results.tsv (every program: expected class,
# what each implementation did, the first line that says so) and missed.txt
# (the erroneous programs courier did not report in their class, by what it
# said instead). See docs/check.md (section MBI) and bench/results/mbi.md.
set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() {
    cat >&2 <<EOF
usage: $0 --mbi DIR [options]
  --mbi DIR          MBI source tree (the one containing scripts/*Generator.py), or a
                     directory of programs it generated (*.c with MBI headers)
  --courier P        courier build dir or install prefix (default: $root/build)
  --only WHICH       courier, ompi or both (default: courier)
  --check ARG        courier run's check option (default --check; e.g. --check=all,
                     also written --check=LIST here)
  --jobs N           programs built and run at a time (default 2)
  --timeout S        time limit of one run, seconds (default 30; courier's watchdog
                     reports a deadlock after its --hang-timeout, 5 s)
  --hang-timeout S   courier run's --hang-timeout (default: courier's, 5 s): how long
                     the ranks wait with nothing moving before the watchdog reports
  --work DIR         scratch directory (default /tmp/courier-mbi)
  --list FILE        run only the programs named in FILE (name or name.c, one a line)
  --no-build         reuse the generated programs and executables already in the work directory
  --report           only judge and print what the runs already in the work directory
                     left (a run stopped midway: the programs it ran)
  --markdown         print the table as Markdown
EOF
    exit 2
}

mbi='' courier_arg=$root/build only=courier check=--check jobs=2 tlimit=30
work=/tmp/courier-mbi listfile='' rebuild=1 markdown=0 hang='' report=0
while [ $# -gt 0 ]; do
    case $1 in
    --mbi) mbi=${2:?}; shift 2 ;;
    --courier) courier_arg=${2:?}; shift 2 ;;
    --only) only=${2:?}; shift 2 ;;
    --check) check=${2:?}; shift 2 ;;
    --check=*) check=$1; shift ;; # courier run's own spelling
    --jobs) jobs=${2:?}; shift 2 ;;
    --timeout) tlimit=${2:?}; shift 2 ;;
    --hang-timeout) hang=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --list) listfile=${2:?}; shift 2 ;;
    --no-build) rebuild=0; shift ;;
    --markdown) markdown=1; shift ;;
    --report) report=1; rebuild=0; shift ;;
    -h | --help) usage ;;
    *) echo "unknown option: $1" >&2; usage ;;
    esac
done
die() { echo "mbi: $*" >&2; exit 2; }
[ -n "$mbi" ] || usage
case $jobs in '' | *[!0-9]* | 0) die "--jobs wants a positive number" ;; esac
case $tlimit in '' | *[!0-9]* | 0) die "--timeout wants a positive number of seconds" ;; esac
case $check in --check | --check=*) ;; *) die "--check wants --check or --check=LIST" ;; esac
[ -d "$mbi" ] || die "no directory $mbi"
mbi=$(cd "$mbi" && pwd)

# ---- the compilers, the launchers -------------------------------------------
courier_cc='' courier_run=''
[ -d "$courier_arg" ] && courier_arg=$(cd "$courier_arg" && pwd)
for d in "$courier_arg/tools" "$courier_arg/bin" "$courier_arg"; do
    if [ -x "$d/courier-cc" ] && [ -x "$d/courier" ]; then
        courier_cc=$d/courier-cc courier_run=$d/courier
        break
    fi
done
# courier's programs run with that build's library even when they were
# built against another one (--no-build): its directory first on their
# library path (the dynamic loader reads LD_LIBRARY_PATH before a program's
# run path).
courier_lib=''
for d in "$courier_arg/src" "$courier_arg/lib"; do
    [ -e "$d/libcourier.so.0" ] && { courier_lib=$d; break; }
done
ompi_cc='' ompi_run=''
if command -v mpicc.openmpi >/dev/null; then
    ompi_cc=$(command -v mpicc.openmpi)
    ompi_run=$(command -v mpirun.openmpi || true)
fi
case $only in
both) impls="courier ompi" ;;
courier | ompi) impls=$only ;;
*) die "--only wants courier, ompi or both" ;;
esac
case " $impls " in *" courier "*)
    [ -n "$courier_cc" ] || die "no courier-cc and courier in $courier_arg{/tools,/bin,}: build courier first (cmake -S . -B build && cmake --build build)" ;;
esac
case " $impls " in *" ompi "*)
    [ -n "$ompi_cc" ] && [ -n "$ompi_run" ] || die "Open MPI's mpicc.openmpi/mpirun.openmpi not found (apt-get install -y libopenmpi-dev openmpi-bin)" ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

t_start=$(date +%s)
mkdir -p "$work" || die "cannot create $work"
work=$(cd "$work" && pwd)

# ---- the programs: generated, then their headers -----------------------------
# tests.tsv: name np expected (OK or the MBI error class)
gen=$work/gen
if [ "$rebuild" = 1 ] || [ ! -d "$gen" ]; then
    rm -rf "$gen"
    mkdir -p "$gen"
    if compgen -G "$mbi/scripts/*Generator.py" >/dev/null; then
        command -v python3 >/dev/null || die "python3 is needed to run MBI's generators"
        # the generators import generator_utils from their own directory and write in the current one
        for g in "$mbi"/scripts/*Generator.py; do
            (cd "$gen" && python3 "$g" >"$gen/${g##*/}.log" 2>&1) || die "$g failed: $gen/${g##*/}.log"
        done
    elif compgen -G "$mbi/*.c" >/dev/null; then
        cp "$mbi"/*.c "$gen"/
    else
        die "$mbi has neither scripts/*Generator.py nor *.c: give the MBI source tree"
    fi
fi
# (the first test of a header: `$ mpirun -np N ${EXE}`, then `| OK` or `| ERROR: Class`)
awk 'FNR == 1 { np = ""; done = 0; name = FILENAME; sub(/.*\//, "", name); sub(/\.c$/, "", name) }
    done { next }
    /\$ mpirun -np [0-9]+/ { for (i = 1; i <= NF; i++) if ($i == "-np") np = $(i + 1) }
    np != "" && /^[ \t]*\| (OK|ERROR: )/ { o = $0; sub(/^[ \t]*\| /, "", o); sub(/^ERROR: /, "", o); sub(/[ \t]+$/, "", o)
        print name "\t" np "\t" o; done = 1 }
    /End of MBI headers/ { done = 1 }' "$gen"/*.c >"$work/tests.all"
if [ -n "$listfile" ]; then
    [ -f "$listfile" ] || die "no file $listfile"
    awk -F'\t' 'NR == FNR { sub(/#.*/, ""); sub(/\.c$/, "", $1); if ($1 != "") want[$1] = 1; next } $1 in want' \
        "$listfile" "$work/tests.all" >"$work/tests.tsv"
else
    cp "$work/tests.all" "$work/tests.tsv"
fi
ntests=$(wc -l <"$work/tests.tsv")
[ "$ntests" -gt 0 ] || die "no programs selected"
echo "mbi: $ntests programs ($(awk -F'\t' '$3 == "OK"' "$work/tests.tsv" | wc -l) correct)" >&2

# ---- build and run: one worker per program, --jobs at a time ------------------
# The worker is this script again with an internal first argument, so that
# xargs -P can run several; each run is a session of its own, killed whole
# at the end (the ranks of a job that hangs in a way nobody reports).
worker=$work/worker.sh
cat >"$worker" <<'EOF'
#!/bin/bash
# mbi.sh's worker: build or run one program with one implementation
set -u
what=$1 impl=$2 name=$3 np=$4
src=$W/gen/$name.c exe=$W/$impl/bin/$name out=$W/$impl/out/$name.txt
if [ "$what" = build ] || [ ! -e "$exe.log" ]; then
    if [ "$impl" = courier ]; then cc=$CCC; else cc=$OCC; fi
    "$cc" -g -O0 -w "$src" -o "$exe" >"$exe.log" 2>&1 || rm -f "$exe"
fi
if [ ! -x "$exe" ]; then printf '%s\tbuild\t0\t%s\n' "$name" "$(grep -m1 -i error "$exe.log" | cut -c1-160)" >"$out.st"; exit 0; fi
if [ "$impl" = courier ]; then
    [ -n "$CLIB" ] && export LD_LIBRARY_PATH=$CLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    cmd=("$CRUN" run $CHECK ${HT:+--hang-timeout "$HT"} -n "$np" "$exe")
else
    cmd=("$ORUN" --oversubscribe -n "$np" "$exe")
fi
t0=$(date +%s%N)
sidf=$out.sid
rm -f "$sidf"
# (in a subshell whose stderr is dropped: bash's "Killed" when timeout -k kills)
(setsid bash -c 'echo "$$" >"$0"; exec "$@"' "$sidf" timeout -k 5 "$T" "${cmd[@]}" </dev/null >"$out" 2>&1) 2>/dev/null
rc=$?
if [ -s "$sidf" ]; then
    pids=$(ps -e -o pid=,sid= | awk -v s="$(cat "$sidf")" '$2 == s { printf "%s ", $1 }')
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    rm -f "$sidf"
fi
printf '%s\t%s\t%s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')" >"$out.st"
EOF
chmod +x "$worker"
export W=$work CLIB=$courier_lib CCC=$courier_cc CRUN=$courier_run OCC=$ompi_cc ORUN=$ompi_run CHECK=$check T=$tlimit HT=$hang

# The programs go in an order shuffled once (a fixed seed), so that a run
# stopped midway has run a sample of every class in proportion (--report
# then judges it); each worker builds its program (unless --no-build) and
# runs it.
if [ "$report" = 0 ]; then
    awk 'BEGIN { srand(42) } { printf "%.8f\t%s\n", rand(), $0 }' "$work/tests.tsv" | sort -k1,1 | cut -f2- >"$work/order.tsv"
    for impl in $impls; do
        [ "$rebuild" = 1 ] && rm -rf "${work:?}/$impl/bin"
        rm -rf "${work:?}/$impl/out"
        mkdir -p "$work/$impl/bin" "$work/$impl/out"
        echo "mbi: building and running $ntests programs with $impl ($([ "$impl" = courier ] && echo "courier run $check${hang:+ --hang-timeout $hang}" || echo mpirun), $jobs at a time)" >&2
        t0=$SECONDS
        awk -F'\t' '{ print $1, $2 }' "$work/order.tsv" | xargs -P "$jobs" -n 2 "$worker" run "$impl"
        echo "mbi: $impl: $ntests programs in $((SECONDS - t0)) s" >&2
    done
else
    impls=$(for impl in courier ompi; do [ -d "$work/$impl/out" ] && printf '%s ' $impl; done)
    impls=${impls% }
    [ -n "$impls" ] || die "no runs in $work"
fi

# ---- what each run said ----------------------------------------------------------
# kind: types, coll:<what the ranks disagree on>, rma, buffers, leak:<objects>,
# check (another --check report), deadlock (the watchdog), arg:MPI_ERR_<class>
# (an argument error, fatal), crash (a rank killed by a signal), error (a
# non-zero status without any of those), timeout, clean; with the first line
# that says so. Judged from the outputs, so that --report judges old runs anew.
classify='
    function put(k, l) { if (kk == "") { kk = k; ll = l } }
    /^courier: check: type mismatch/ { put("types", $0) }
    /^courier: check: collective mismatch/ { w = $0; sub(/.*disagree on (the )?/, "", w); sub(/[^a-z ].*/, "", w); gsub(/ /, "-", w); put("coll:" w, $0) }
    /^courier: check: RMA conflict/ { put("rma", $0) }
    /^courier: check: rank [0-9]+ (changed|used \(as the origin buffer of an MPI_[A-Za-z_]+\)) the/ { put("buffers", $0) }
    /^courier: check: rank [0-9]+: MPI_Finalize with objects/ { leak = 1; if (ll0 == "") ll0 = $0; next }
    /^courier: check: rank [0-9]+ ended with info objects/ { lk["info"] = 1; if (ll0 == "") ll0 = $0; next }
    leak && /^  free or complete each/ { next }
    leak && /^  / { w = $0; sub(/^  (a |an )?/, "", w)
        if (w ~ /^(persistent request|request)/) t = "request"
        else if (w ~ /^message/) t = "message"
        else { t = w; sub(/[ #\047].*/, "", t) }
        lk[t] = 1; next }
    leak { leak = 0 }
    /^courier: check:/ { put("check", $0) }
    /^courier: deadlock/ { put("deadlock", $0) }
    /\(MPI_ERR_[A-Z_]+\)/ { w = $0; sub(/.*\(MPI_ERR_/, "MPI_ERR_", w); sub(/\).*/, "", w); put("arg:" w, $0) }
    impl == "ompi" && /MPI_ERR_[A-Z_]+/ { w = $0; sub(/.*MPI_ERR_/, "MPI_ERR_", w); sub(/[^A-Z_].*/, "", w); put("arg:" w, $0) }
    /^courier: rank [0-9]+ \(pid [0-9]+\) killed by SIG/ { sig = $0 }
    /(signal [0-9]+|Segmentation fault|Aborted)/ && impl == "ompi" { sig = $0 }
    END {
        n = split("request message communicator group datatype window file error info operation op", order, " "); s = ""
        for (i = 1; i <= n; i++) if (order[i] in lk) { s = s (s == "" ? "" : ",") order[i]; delete lk[order[i]] }
        for (t in lk) s = s (s == "" ? "" : ",") t
        if (s != "") put("leak:" s, ll0)
        if (rc == 124 || rc == 137) { print "timeout\t" (kk == "" ? "no report in the time limit" : ll); exit }
        if (kk != "") { print kk "\t" ll; exit }
        if (rc == 0) { print "clean\t-"; exit }
        if (sig != "" || (rc > 128 && rc < 160)) { print "crash\t" (sig != "" ? sig : "status " rc); exit }
        print "error\tstatus " rc }'
for impl in $impls; do
    for st in "$work/$impl/out/"*.st; do
        [ -f "$st" ] || continue
        IFS=$'\t' read -r name rc secs _ <"$st"
        case $rc in
        '' | *[!0-9]*) continue ;; # an older worker's line
        esac
        k=$(awk -v rc="$rc" -v impl="$impl" "$classify" "${st%.st}")
        printf '%s\t%s\t%s\t%s\n' "$name" "${k%%$'\t'*}" "$secs" "$(printf '%s' "${k#*$'\t'}" | tr '\t' ' ' | cut -c1-240)"
    done >"$work/$impl/kinds.tsv"
done

# ---- judgement ----------------------------------------------------------------
# An implementation's report is in the program's class when it is the one a
# user would act on for that error: an argument error with the MPI error class
# MBI's class names, the --check report of that kind, or (for errors that make
# the ranks wait for each other forever) the watchdog's deadlock report.
# verdict: inclass, other (reported, in another class), missed, alarm (a
# correct program reported), clean, crash, timeout, build.
inclass_awk='
function inclass(cls, k) {
    if (cls == "InvalidDatatype") return k == "arg:MPI_ERR_TYPE"
    if (cls == "InvalidCommunicator") return k == "arg:MPI_ERR_COMM" || k == "arg:MPI_ERR_TOPOLOGY" # (a communicator without the topology the call needs)
    if (cls == "InvalidSrcDest") return k == "arg:MPI_ERR_RANK"
    if (cls == "InvalidRoot") return k == "arg:MPI_ERR_ROOT"
    if (cls == "InvalidTag") return k == "arg:MPI_ERR_TAG"
    if (cls == "InvalidOperator") return k == "arg:MPI_ERR_OP"
    if (cls == "InvalidWindow" || cls == "InvalidWin") return k == "arg:MPI_ERR_WIN"
    if (cls == "InvalidOtherArg") return k ~ /^arg:/
    if (cls == "DatatypeMatching") return k == "types" || k ~ /^coll:.*(type|signature|count)/ || k == "arg:MPI_ERR_TRUNCATE"
    if (cls == "RootMatching") return k == "coll:root"
    if (cls == "OperatorMatching") return k ~ /^coll:.*operator/
    if (cls == "CallMatching" || cls == "TagMatching" || cls == "CommunicatorMatching" || cls == "MessageRace" || cls == "MissingStart")
        return k == "deadlock" || k ~ /^coll:/ || k ~ /^leak:.*message/
    if (cls == "MissingWait") return k ~ /^leak:.*request/ || k == "deadlock"
    if (cls == "RequestLeak") return k ~ /^leak:.*request/
    if (cls == "CommunicatorLeak") return k ~ /^leak:.*communicator/
    if (cls == "GroupLeak") return k ~ /^leak:.*group/
    if (cls == "TypeLeak") return k ~ /^leak:.*datatype/
    if (cls == "OperatorLeak") return k ~ /^leak:.*(op|operator|operation)/
    if (cls == "LocalConcurrency") return k == "buffers" || k == "rma"
    if (cls == "GlobalConcurrency") return k == "rma"
    if (cls == "BufferingHazard") return k == "deadlock"
    return 0
}
function verdict(cls, k) {
    if (k == "build" || k == "crash" || k == "timeout") return k
    if (cls == "OK") return k == "clean" ? "clean" : "alarm"
    if (k == "clean") return "missed"
    if (k == "error") return "other"
    return inclass(cls, k) ? "inclass" : "other"
}'

# results.tsv: program np expected, then per implementation: verdict kind seconds line
{
    printf 'program\tnp\texpected'
    for impl in $impls; do printf '\t%s\t%s_kind\t%s_s\t%s_says' "$impl" "$impl" "$impl" "$impl"; done
    printf '\n'
    for impl in $impls; do sed "s/^/$impl\t/" "$work/$impl/kinds.tsv"; done >"$work/status.tmp"
    awk -F'\t' -v impls="$impls" "$inclass_awk"'
            NR == FNR { k[$1, $2] = $3; s[$1, $2] = $4; l[$1, $2] = $5; next }
            { n = split(impls, im, " "); any = 0
              for (i = 1; i <= n; i++) if ((im[i] SUBSEP $1) in k) any = 1
              if (!any) next # not run (yet)
              printf "%s\t%s\t%s", $1, $2, $3
              for (i = 1; i <= n; i++) { key = im[i] SUBSEP $1
                  if (key in k) printf "\t%s\t%s\t%s\t%s", verdict($3, k[key]), k[key], s[key], l[key]
                  else printf "\t-\t-\t-\t-" }
              printf "\n" }' "$work/status.tmp" "$work/tests.tsv"
} >"$work/results.tsv"
rm -f "$work/status.tmp"

# the table: per class, the programs and what each implementation did
table() {
    awk -F'\t' -v impls="$impls" -v md="$markdown" -v classes="$(tail -n +2 "$work/results.tsv" | cut -f3 | sort -u | tr '\n' ' ')" '
        NR == 1 { n = split(impls, im, " "); next }
        { c = $3; tot[c]++
          tk = (c == "OK") ? "correct" : "erroneous"; tot[tk]++
          for (i = 1; i <= n; i++) { v = $(4 + 4 * (i - 1)); cnt[i, c, v]++; cnt[i, tk, v]++ } }
        function name(x) { return x == "ompi" ? "Open MPI" : x }
        function rep(i, c) { return cnt[i, c, "inclass"] + cnt[i, c, "other"] }
        END {
            m = split(classes, sc, " ")
            nr = 0
            for (j = 1; j <= m; j++) if (sc[j] != "OK") row[++nr] = sc[j]
            row[++nr] = "erroneous"; row[++nr] = "OK"
            if (md) {
                printf "| class | programs |"
                for (i = 1; i <= n; i++) printf " %s in class | %s other class | %s missed | %s crash/timeout |", name(im[i]), name(im[i]), name(im[i]), name(im[i])
                printf "\n|---|---:|"
                for (i = 1; i <= n; i++) printf "---:|---:|---:|---:|"
                printf "\n"
                for (r = 1; r <= nr; r++) { c = row[r]; cc = (c == "OK") ? "correct" : c
                    if (c == "erroneous") printf "| **all erroneous** | %d |", tot[c]
                    else if (c == "OK") printf "| **correct (OK)** | %d |", tot["correct"]
                    else printf "| %s | %d |", c, tot[c]
                    for (i = 1; i <= n; i++) {
                        if (c == "OK") printf " %d clean | %d false alarms | | %d |", cnt[i, cc, "clean"], cnt[i, cc, "alarm"], cnt[i, cc, "crash"] + cnt[i, cc, "timeout"] + cnt[i, cc, "build"]
                        else printf " %d | %d | %d | %d |", cnt[i, cc, "inclass"], cnt[i, cc, "other"], cnt[i, cc, "missed"], cnt[i, cc, "crash"] + cnt[i, cc, "timeout"] + cnt[i, cc, "build"]
                    }
                    printf "\n" }
            } else {
                for (r = 1; r <= nr; r++) { c = row[r]; cc = (c == "OK") ? "correct" : c
                    printf "%-22s %4d:", (c == "OK" ? "correct" : c), tot[cc]
                    for (i = 1; i <= n; i++) {
                        if (c == "OK") printf "%s %s %d clean, %d false alarms", (i > 1 ? ";" : ""), im[i], cnt[i, cc, "clean"], cnt[i, cc, "alarm"]
                        else printf "%s %s %d in class, %d other, %d missed", (i > 1 ? ";" : ""), im[i], cnt[i, cc, "inclass"], cnt[i, cc, "other"], cnt[i, cc, "missed"]
                        if (cnt[i, cc, "crash"]) printf ", %d crash", cnt[i, cc, "crash"]
                        if (cnt[i, cc, "timeout"]) printf ", %d timeout", cnt[i, cc, "timeout"]
                        if (cnt[i, cc, "build"]) printf ", %d not built", cnt[i, cc, "build"]
                    }
                    printf "\n" }
            }
        }' "$work/results.tsv"
}

# missed.txt: courier's erroneous programs not reported in their class, and its
# false alarms, grouped by what courier did (the kind of report, or none)
case " $impls " in *" courier "*)
    {
        echo "# MBI ($mbi), courier run $check: what courier did not report in the program's class"
        echo "# verdict kind: count; then each program (expected class) and the first line courier said"
        awk -F'\t' 'NR > 1 && ($4 != "inclass" && $4 != "clean") { print $4 "\t" $5 "\t" $1 "\t" $3 "\t" $7 }' "$work/results.tsv" |
            sort -t$'\t' -k1,1 -k2,2 -k4,4 -k3,3 |
            awk -F'\t' '{ g = $1 " " $2; if (g != last) { n = 0; last = g; print ""; print "## " g } print "    " $3 " (" $4 "): " $5 }'
    } >"$work/missed.txt"
    ;;
esac

table | tee "$work/summary.txt"
{
    echo "mbi: $ntests programs, $(($(date +%s) - t_start)) s in all"
    echo "mbi: per program: $work/results.tsv; outputs: $work/<impl>/out/<program>.txt; build logs: $work/<impl>/bin/<program>.log"
    [ -f "$work/missed.txt" ] && echo "mbi: what courier missed, and its false alarms: $work/missed.txt"
} >&2
exit 0
