#!/bin/bash
# MPI conformance of courier measured with the public MPICH test suite
# (test/mpi of an MPICH source tree the user already has; nothing is fetched),
# beside Open MPI when its mpicc is there: every test of the chosen directories
# is built with courier-cc and with Open MPI's mpicc (in parallel), run once
# with each (one at a time, each under its own session with a time limit), and
# judged the way the suite's own `runtests` judges it. Prints one line per
# directory and a total (or a Markdown table), and leaves in the work directory
# results.tsv (every test, one status per implementation), skipped.tsv and
# missing.txt (the tests Open MPI passes and courier does not, by what courier
# lacks). See bench/conformance/README.md.
set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() {
    cat >&2 <<EOF
usage: $0 --mpich DIR [options]
  --mpich DIR        MPICH source tree (the one containing test/mpi), or test/mpi itself
  --courier P        courier build dir or install prefix (default: $root/build)
  --dirs "D..."      test directories (default: "$default_dirs")
  --only WHICH       courier, ompi or both (default: both when Open MPI's mpicc is found)
  --jobs N           parallel builds (default: number of CPUs)
  --timeout S        time limit of one test run, seconds (default 60; a shorter
                     timeLimit= in the testlist wins)
  --work DIR         scratch directory (default /tmp/courier-mpich-suite)
  --list FILE        run only the tests named in FILE (dir/name or name, one a line)
  --mem GB           skip tests whose testlist says mem= above GB (default 4, as runtests)
  --runxfail         also run the tests the testlists mark xfail= (runtests skips them)
  --no-build         reuse the executables already in the work directory
  --sim SPEC         run courier's under courier run --sim SPEC (e.g. cs2,cpu=0): the
                     simulated mode's conformance, the same binaries
  --markdown         print the table as Markdown
  --keep-going       go on past build and run failures (the default; accepted for clarity)
EOF
    exit 2
}

default_dirs="pt2pt coll datatype comm group init attr errhan topo info rma"
mpich='' courier_arg=$root/build dirs=$default_dirs only='' jobs=$(nproc 2>/dev/null || echo 2)
tlimit=60 work=/tmp/courier-mpich-suite listfile='' memtotal=4 runxfail=0 rebuild=1 markdown=0
sim=''
while [ $# -gt 0 ]; do
    case $1 in
    --mpich) mpich=${2:?}; shift 2 ;;
    --courier) courier_arg=${2:?}; shift 2 ;;
    --dirs) dirs=${2:?}; shift 2 ;;
    --only) only=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --timeout) tlimit=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --list) listfile=${2:?}; shift 2 ;;
    --mem) memtotal=${2:?}; shift 2 ;;
    --runxfail) runxfail=1; shift ;;
    --no-build) rebuild=0; shift ;;
    --sim) sim=${2:?}; shift 2 ;;
    --markdown) markdown=1; shift ;;
    --keep-going) shift ;;
    -h | --help) usage ;;
    *) echo "unknown option: $1" >&2; usage ;;
    esac
done
die() { echo "mpich-suite: $*" >&2; exit 2; }
[ -n "$mpich" ] || usage
case $jobs in '' | *[!0-9]* | 0) die "--jobs wants a positive number" ;; esac
case $tlimit in '' | *[!0-9]* | 0) die "--timeout wants a positive number of seconds" ;; esac

# ---- the suite, the compilers, the launchers --------------------------------
suite=$mpich/test/mpi
[ -d "$suite" ] || suite=$mpich
if [ ! -f "$suite/util/mtest.c" ] || [ ! -d "$suite/include" ]; then
    die "$mpich has no test/mpi (with util/mtest.c and include/): give the MPICH source tree"
fi
suite=$(cd "$suite" && pwd)

courier_cc='' courier_run=
# absolute: the tests run from their own directories
[ -d "$courier_arg" ] && courier_arg=$(cd "$courier_arg" && pwd)
for d in "$courier_arg/tools" "$courier_arg/bin" "$courier_arg"; do
    if [ -x "$d/courier-cc" ] && [ -x "$d/courier" ]; then
        courier_cc=$d/courier-cc courier_run=$d/courier
        break
    fi
done

ompi_cc='' ompi_run=
if command -v mpicc.openmpi >/dev/null; then
    ompi_cc=$(command -v mpicc.openmpi)
    ompi_run=$(command -v mpirun.openmpi || command -v orterun || true)
elif command -v mpicc >/dev/null && mpicc --showme:version 2>&1 | grep -q "Open MPI"; then
    ompi_cc=$(command -v mpicc)
    ompi_run=$(dirname "$ompi_cc")/mpirun
fi
if [ -z "$ompi_run" ] || [ ! -x "$ompi_run" ]; then ompi_cc=''; fi

case ${only:-auto} in
auto) impls=courier; [ -n "$ompi_cc" ] && impls="courier ompi" ;;
both) impls="courier ompi" ;;
courier | ompi) impls=$only ;;
*) die "--only wants courier, ompi or both" ;;
esac
case " $impls " in *" courier "*)
    [ -n "$courier_cc" ] || die "no courier-cc and courier in $courier_arg{/tools,/bin,}: build courier first (cmake -S . -B build && cmake --build build)" ;;
esac
case " $impls " in *" ompi "*)
    [ -n "$ompi_cc" ] || die "Open MPI's mpicc/mpirun not found (apt-get install -y libopenmpi-dev openmpi-bin)" ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
read -ra cflags <<<"${CFLAGS:--O2}" # CFLAGS: the optimization the tests are built with

cc_of() { if [ "$1" = courier ]; then echo "$courier_cc"; else echo "$ompi_cc"; fi; }

t_start=$(date +%s)
mkdir -p "$work" || die "cannot create $work"
work=$(cd "$work" && pwd)
conf=$work/conf
mkdir -p "$conf/dtp/inc"

# ---- configuration headers (what configure would write) ---------------------
# The suite as configured with --enable-strictmpi (only standard MPI is
# tested: MPICH's MPIX extensions and non-strict tests are left out) for a
# Linux/gcc system, without Fortran, C++, MPI-IO, spawn or GPUs. One-sided
# (HAVE_MPI_WIN_CREATE, which the harness then uses in every test) is
# configured for an implementation only when a program using windows builds
# with it: otherwise as with configure --disable-rma (the rma tests still run,
# and show what is missing).
write_conf() { # IMPL
    local impl=$1 c=$work/$1/conf rma=0 cc m
    cc=$(cc_of "$impl")
    mkdir -p "$c"
    cat >"$c/probe.c" <<'EOF'
#include <mpi.h>
int main(int argc, char **argv)
{
    MPI_Win w; int k, f, x = 0; void *b;
    MPI_Init(&argc, &argv);
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &k, 0);
    MPI_Win_create(&x, sizeof x, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    MPI_Win_get_attr(w, MPI_WIN_BASE, &b, &f);
    MPI_Win_fence(0, w);
    MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, w);
    MPI_Win_free(&w);
    MPI_Win_free_keyval(&k);
    MPI_Finalize();
    return 0;
}
EOF
    "$cc" -w "$c/probe.c" -o "$c/probe" >"$c/probe.log" 2>&1 && rma=1
    {
        echo "/* mpitestconf.h for the MPICH test suite and $impl, written by courier's"
        echo "   bench/conformance/mpich-suite.sh in place of configure's */"
        echo "#ifndef MPITESTCONF_H_INCLUDED"
        echo "#define MPITESTCONF_H_INCLUDED"
        for m in HAVE_STDLIB_H HAVE_STRING_H HAVE_STDARG_H HAVE_STDINT_H HAVE_INTTYPES_H HAVE_UNISTD_H \
            HAVE_SYS_TIME_H HAVE_SYS_RESOURCE_H HAVE_GETRUSAGE HAVE_LONG_DOUBLE HAVE_LONG_LONG \
            HAVE_LONG_LONG_INT HAVE__BOOL HAVE_FLOAT__COMPLEX HAVE_DOUBLE__COMPLEX \
            HAVE_LONG_DOUBLE__COMPLEX USE_LONG_DOUBLE_COMPLEX HAVE_ATOMIC USE_STRICT_MPI ENABLE_STRICTMPI; do
            echo "#define $m 1"
        done
        if [ $rma = 1 ]; then
            echo "#define HAVE_MPI_WIN_CREATE 1"
        else
            echo "/* no HAVE_MPI_WIN_CREATE: a program using windows does not build (probe.log) */"
        fi
        echo "#define POINTERINT_t long"
        echo "#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX"
        echo "#endif"
    } >"$c/mpitestconf.h"
}
: >"$conf/mtest_mpix.h" # generated by MPICH's own build; empty outside it (see the suite's autogen.sh)
# dtpools includes "../dtpoolsconf.h": found as $conf/dtp/inc/../dtpoolsconf.h
printf '#define HAVE_STRDUP 1\n#define HAVE_MEMSET 1\n#define HAVE_STDLIB_H 1\n#define HAVE_STRING_H 1\n' >"$conf/dtp/dtpoolsconf.h"
incs_common=(-I"$conf" -I"$conf/dtp/inc" -I"$suite/include" -I"$suite/dtpools/include")

# ---- the tests: testlists ----------------------------------------------------
# tests.tsv: idx dir prog np args envs resultTest timelimit  ("-" for empty)
# skipped.tsv: dir prog np args reason
# A testlist line is `prog [np [key=value ...]]`; # starts a comment; a prog
# that is a directory is a sub-testlist; lines starting with @var@ are the ones
# configure keeps only for features that are not configured here (spawn,
# namepub, a device), so they are skipped. env=MPIR_CVAR_* settings tune MPICH
# only: they are dropped and the lines that then repeat one another run once.
parse_testlist() { # FILE DIR
    awk -v dir="$2" -v memtotal="$memtotal" -v runxfail="$runxfail" '
    function out(kind, a, b, c, d, e, f, g) { print kind "\t" a "\t" b "\t" c "\t" d "\t" e "\t" f "\t" g }
    {
        line = $0; sub(/\r$/, "", line)
        if (line ~ /^[ \t]*@[A-Za-z0-9_]+@/) {       # a configure-guarded line
            guard = line; sub(/^[ \t]*/, "", guard); sub(/@[^@]*$/, "@", guard)
            rest = line; sub(/^[ \t]*@[A-Za-z0-9_]+@/, "", rest); sub(/#.*/, "", rest)
            n = split(rest, w, /[ \t]+/); name = w[1] == "" ? w[2] : w[1]
            if (name != "") out("S", dir, name, "-", "-", "needs " guard " (a feature not configured)")
            next
        }
        sub(/#.*/, "", line); sub(/^[ \t]+/, "", line); sub(/[ \t]+$/, "", line)
        if (line == "" || line ~ /^!/) next
        n = split(line, w, /[ \t]+/)
        prog = w[1]; np = (n >= 2 && w[2] != "") ? w[2] : 2
        args = ""; envs = ""; rt = "-"; tl = "-"; skip = ""
        for (i = 3; i <= n; i++) {
            k = w[i]; v = w[i]
            if (k !~ /=/) continue
            sub(/=.*/, "", k); sub(/^[^=]*=/, "", v)
            if (k == "arg") args = args (args == "" ? "" : " ") v
            else if (k == "env") { if (v !~ /^MPIR_CVAR_/) envs = envs (envs == "" ? "" : " ") v }
            else if (k == "resultTest") rt = v
            else if (k == "timeLimit") tl = v
            else if (k == "xfail") { if (!runxfail) skip = "xfail=" v " (runtests skips it)" }
            else if (k == "mem") { if (v + 0 > memtotal + 0) skip = "mem=" v " GB (more than --mem " memtotal ")" }
            else if (k == "strict") { if (tolower(v) == "false") skip = "strict=false (uses MPICH extensions)" }
            else if (k == "hasgpu") skip = "needs a GPU (" v ")"
            else if (k == "mpiexecarg") skip = "needs an MPICH mpiexec argument (" v ")"
        }
        if (args == "") args = "-"
        if (envs == "") envs = "-"
        if (skip != "") out("S", dir, prog, np, args, skip)
        else out("T", dir, prog, np, args, envs, rt, tl)
    }' "$1"
}

collect() { # DIR (relative to the suite)
    local d=$1 f kind a b c e g h i
    f=
    for f in "$suite/$d/testlist.in" "$suite/$d/testlist" "$suite/$d/testlist.def"; do
        [ -f "$f" ] && break
        f=
    done
    if [ -z "$f" ]; then
        echo "mpich-suite: no testlist in $suite/$d: directory skipped" >&2
        return
    fi
    while IFS=$'\t' read -r kind a b c e g h i; do
        if [ "$kind" = T ] && [ -d "$suite/$a/$b" ]; then
            collect "$a/$b"
        elif [ "$kind" = T ]; then
            case $b in */*) a=$a/${b%/*} b=${b##*/} ;; esac
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$a" "$b" "$c" "$e" "$g" "$h" "$i" >>"$work/tests.raw"
        else
            printf '%s\t%s\t%s\t%s\t%s\n' "$a" "$b" "$c" "$e" "$g" >>"$work/skipped.tsv"
        fi
    done < <(parse_testlist "$f" "$d")
}

: >"$work/tests.raw"
printf 'dir\tprog\tnp\targs\treason\n' >"$work/skipped.tsv"
for d in $dirs; do
    [ -d "$suite/$d" ] || die "no directory $suite/$d"
    collect "$d"
done
# the same test with the same arguments once; then --list
awk -F'\t' '!seen[$1 FS $2 FS $3 FS $4 FS $5]++' "$work/tests.raw" >"$work/tests.dedup"
if [ -n "$listfile" ]; then
    [ -f "$listfile" ] || die "no file $listfile"
    awk -F'\t' 'NR == FNR { sub(/#.*/, ""); if ($1 != "") { split($1, w, /[ \t]+/); want[w[1]] = 1 } next }
                ($1 "/" $2) in want || $2 in want' "$listfile" "$work/tests.dedup" >"$work/tests.sel"
    mv "$work/tests.sel" "$work/tests.dedup"
fi
[ -s "$work/tests.dedup" ] || die "no tests selected"

# ---- how each program is built: the directory's Makefile.am -----------------
# One line per program: prog, condition (an automake `if` it is built under,
# or -), sources, extra flags, extra libraries (DTYPES for util/dtypes.c).
parse_makefile_am() { # FILE SRCDIR
    awk -v srcdir="$2" '
    function canon(s) { gsub(/[^A-Za-z0-9_@]/, "_", s); return s }
    function clean(s,   n, w, i, r, t) {          # drop $(...) and @...@ tokens
        n = split(s, w, /[ \t]+/); r = ""
        for (i = 1; i <= n; i++) {
            t = w[i]
            gsub(/\$\(srcdir\)|\$\(top_srcdir\)/, srcdir, t)
            if (t == "" || t ~ /\$\(|@[A-Za-z_]+@/) continue
            r = r (r == "" ? "" : " ") t
        }
        return r
    }
    function libs(s,   n, w, i, r, t) {
        for (;;) {                                   # expand $(VAR) once per pass
            if (!match(s, /\$\([A-Za-z0-9_]+\)/)) break
            t = substr(s, RSTART + 2, RLENGTH - 3)
            s = substr(s, 1, RSTART - 1) " " ((t in var && t != "LDADD") ? var[t] : "") " " substr(s, RSTART + RLENGTH)
        }
        n = split(s, w, /[ \t]+/); r = ""
        for (i = 1; i <= n; i++) {
            t = w[i]
            if (t ~ /libdtypes/) t = "DTYPES"
            else if (t !~ /^-l/) continue
            r = r (r == "" ? "" : " ") t
        }
        return r
    }
    {
        line = $0
        while (line ~ /\\[ \t]*$/ && (getline nxt) > 0) { sub(/\\[ \t]*$/, "", line); line = line " " nxt }
        sub(/(^|[ \t])#.*/, "", line)
        if (match(line, /^if[ \t]+!?[A-Za-z0-9_]+/)) { c = line; sub(/^if[ \t]+/, "", c); sub(/[ \t].*/, "", c); cond[++depth] = c; next }
        if (line ~ /^else([ \t]|$)/) { cond[depth] = "!" cond[depth]; next }
        if (line ~ /^endif([ \t]|$)/) { if (depth > 0) depth--; next }
        if (!match(line, /^[A-Za-z0-9_]+[ \t]*\+?=/)) next
        name = line; sub(/[ \t]*\+?=.*/, "", name)
        val = line; sub(/^[^=]*=[ \t]*/, "", val)
        if (name ~ /_PROGRAMS$/) {
            n = split(val, w, /[ \t]+/)
            for (i = 1; i <= n; i++) if (w[i] != "") {
                p = canon(w[i]); seen[p] = 1
                c = ""
                for (j = 1; j <= depth; j++) if (cond[j] !~ /^!/) c = cond[j]
                if (c != "" && !(p in pcond)) pcond[p] = c
            }
        } else if (name ~ /_SOURCES$/) { p = name; sub(/_SOURCES$/, "", p); src[p] = val; seen[p] = 1 }
        else if (name ~ /_(CPPFLAGS|CFLAGS)$/) { p = name; sub(/_(CPP|C)FLAGS$/, "", p); flags[p] = flags[p] " " val; seen[p] = 1 }
        else if (name ~ /_LDADD$/) { p = name; sub(/_LDADD$/, "", p); ldadd[p] = val; seen[p] = 1 }
        else var[name] = val
    }
    END {
        for (p in seen) {
            f = clean(flags[p]); l = (p in ldadd) ? libs(ldadd[p]) : ""
            printf "%s\t%s\t%s\t%s\t%s\n", p, (p in pcond) ? pcond[p] : "-", (p in src) ? src[p] : "-", f == "" ? "-" : f, l == "" ? "-" : l
        }
    }' "$1"
}

# rules.tsv: dir prog cond sources flags libs mtest_flavour needs_run_mpitests extra_libs
: >"$work/rules.tsv"
while read -r d; do
    mk=$suite/$d/Makefile.am flavour=single
    [ -f "$mk" ] && grep -q 'Makefile_threads.mtest' "$mk" && flavour=thread
    rules=$(if [ -f "$mk" ]; then parse_makefile_am "$mk" "$suite/$d"; fi)
    while read -r p; do
        cp_=$(printf '%s' "$p" | tr -c 'A-Za-z0-9_@' '_')
        r=$(printf '%s\n' "$rules" | awk -F'\t' -v p="$cp_" '$1 == p' | head -1)
        cond=- srcs=- flags=- libs=-
        [ -n "$r" ] && IFS=$'\t' read -r _ cond srcs flags libs <<<"$r"
        [ "$srcs" = - ] && srcs=$p.c
        # run() instead of main(): linked with util/run_mpitests.c (see the suite's maint/all_mpitests.txt)
        runm=0 extra=-
        if [ -f "$suite/maint/all_mpitests.txt" ] &&
            line=$(grep -E "^$d/$p([[:space:]]|$)" "$suite/maint/all_mpitests.txt") && [ -n "$line" ]; then
            runm=1
            extra=$(printf '%s\n' "$line" | head -1 | awk '{ $1 = ""; sub(/^ +/, ""); print $0 == "" ? "-" : $0 }')
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$d" "$p" "$cond" "$srcs" "$flags" "$libs" "$flavour" "$runm" "$extra" >>"$work/rules.tsv"
    done < <(awk -F'\t' -v d="$d" '$1 == d { print $2 }' "$work/tests.dedup" | sort -u)
done < <(cut -f1 "$work/tests.dedup" | sort -u)
# programs built only under an automake condition (NOT_STRICTMPI,
# BUILD_MPIX_TESTS: MPICH extensions) are skipped; the rest are numbered
awk -F'\t' -v OFS='\t' -v skipped="$work/skipped.tsv" '
    NR == FNR { cond[$1 FS $2] = $3; next }
    cond[$1 FS $2] != "-" { print $1, $2, $3, $4, "built only under automake condition " cond[$1 FS $2] " (MPICH extensions)" >>skipped; next }
    { print ++n, $0 }' "$work/rules.tsv" "$work/tests.dedup" >"$work/tests.tsv"
awk -F'\t' -v OFS='\t' '$3 == "-"' "$work/rules.tsv" >"$work/rules.tmp" && mv "$work/rules.tmp" "$work/rules.tsv"
rm -f "$work/tests.raw" "$work/tests.dedup"
ntests=$(wc -l <"$work/tests.tsv")
[ "$ntests" -gt 0 ] || die "no tests selected"

# ---- building -----------------------------------------------------------------
# The MTest harness (util/*.c, dtpools) is compiled with -ffunction-sections
# and every program linked with --gc-sections, so that a test needs only the
# MPI calls it uses (directly or through the harness functions it calls), not
# every call the harness could make. A constant the harness names and the MPI
# lacks (courier: MPI_COMBINER_NAMED, MPI_WIN_BASE, ...) gets a placeholder
# value in the harness only, recorded in <impl>/harness.log; a test that uses
# such a harness function also needs the missing calls and fails to link.
pool_wait() { while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n 2>/dev/null || true; done; }

harness_cc() { # IMPL SRC OBJ: compile one harness file, with placeholders for missing MPI constants
    local impl=$1 src=$2 obj=$3 cc defs=() k=0 miss log=${3%.o}.log
    cc=$(cc_of "$impl")
    while :; do
        if "$cc" "${cflags[@]}" -w -Wno-error=int-conversion -ffunction-sections -fdata-sections \
            -I"$work/$impl/conf" "${incs_common[@]}" ${defs[@]+"${defs[@]}"} \
            -c "$src" -o "$obj" >"$log" 2>&1; then
            [ ${#defs[@]} -gt 0 ] && echo "$(basename "$src"): placeholders ${defs[*]}" >>"${obj%/*}/../harness.log"
            return 0
        fi
        miss=$(sed -nE "s/.*'((P?MPIX?)_[A-Za-z0-9_]+)' undeclared.*/\1/p" "$log" | sort -u)
        if [ -z "$miss" ] || [ "$k" -ge 8 ]; then
            echo "$(basename "$src"): does not compile: $(grep -m1 'error' "$log")" >>"${obj%/*}/../harness.log"
            return 1
        fi
        for m in $miss; do defs+=("-D$m=(0x4d5400+$((${#defs[@]} + 1)))"); done
        k=$((k + 1))
    done
}

build_harness() { # IMPL
    local impl=$1 h=$work/$1/harness f b
    rm -rf "$h"
    mkdir -p "$h"
    : >"$work/$impl/harness.log"
    write_conf "$impl"
    if grep -q '^#define HAVE_MPI_WIN_CREATE' "$work/$impl/conf/mpitestconf.h"; then
        echo "one-sided: configured (HAVE_MPI_WIN_CREATE)" >>"$work/$impl/harness.log"
    else
        echo "one-sided: not configured: a program using windows does not build ($work/$impl/conf/probe.log)" >>"$work/$impl/harness.log"
    fi
    for f in mtest mtest_common mtest_single mtest_thread run_mpitests dtypes; do
        [ -f "$suite/util/$f.c" ] || continue
        pool_wait
        harness_cc "$impl" "$suite/util/$f.c" "$h/$f.o" &
    done
    if [ -d "$suite/dtpools/src" ]; then
        mkdir -p "$h/dtp"
        for f in "$suite"/dtpools/src/*.c; do
            b=$(basename "$f" .c)
            pool_wait
            harness_cc "$impl" "$f" "$h/dtp/$b.o" &
        done
    fi
    wait
    (
        cd "$h" || exit 1
        for fl in single thread; do
            objs=()
            for f in mtest.o mtest_common.o "mtest_$fl.o"; do [ -f "$f" ] && objs+=("$f"); done
            [ -f "mtest_$fl.o" ] && ar rcs "libmtest_$fl.a" "${objs[@]}"
        done
        [ -f dtypes.o ] && ar rcs libdtypes.a dtypes.o
        objs=(dtp/*.o)
        [ -f "${objs[0]}" ] && ar rcs libdtpools.a "${objs[@]}"
    ) 2>>"$work/$impl/harness.log"
}

build_one() { # IMPL DIR PROG COND SRCS FLAGS LIBS FLAVOUR RUNM EXTRA
    local impl=$1 d=$2 p=$3 cond=$4 srcs=$5 flags=$6 libs=$7 flavour=$8 runm=$9 extra=${10}
    local h=$work/$impl/harness out=$work/$impl/bin/$d/$p cc s files=() fl=() ls=() arch=()
    local log=$out.log
    cc=$(cc_of "$impl")
    mkdir -p "${out%/*}"
    rm -f "$out"
    for s in $srcs; do
        case $s in
        *.c) files+=("$suite/$d/$s") ;;
        *.h) ;;
        *) echo "mpich-suite: $s is not C (C++ and Fortran tests are not built)" >"$log"; return ;;
        esac
    done
    [ "$flags" = - ] || read -ra fl <<<"$flags"
    [ "$runm" = 1 ] && [ -f "$h/run_mpitests.o" ] && files+=("$h/run_mpitests.o")
    [ "$libs" != - ] && for s in $libs; do
        case $s in DTYPES) [ -f "$h/libdtypes.a" ] && arch+=("$h/libdtypes.a") ;; *) ls+=("$s") ;; esac
    done
    [ "$extra" = - ] || for s in $extra; do case $s in -l*) ls+=("$s") ;; esac; done
    arch+=("$h/libmtest_$flavour.a")
    [ -f "$h/libdtpools.a" ] && arch+=("$h/libdtpools.a")
    {
        echo "+ $cc ${cflags[*]} -w ${fl[*]} ${files[*]} ${arch[*]} ${ls[*]} -lm -o $out"
        timeout 600 "$cc" "${cflags[@]}" -w -ffunction-sections -fdata-sections \
            -I"$work/$impl/conf" "${incs_common[@]}" -I"$suite/$d" ${fl[@]+"${fl[@]}"} \
            "${files[@]}" -Wl,--gc-sections -Wl,--start-group "${arch[@]}" -Wl,--end-group \
            ${ls[@]+"${ls[@]}"} -lm -lpthread -o "$out"
    } >"$log" 2>&1 || rm -f "$out"
}

build_all() { # IMPL
    local impl=$1 d p cond srcs flags libs flavour runm extra t0=$SECONDS n
    build_harness "$impl"
    n=$(wc -l <"$work/rules.tsv")
    echo "mpich-suite: building $n programs with $impl ($jobs at a time)" >&2
    while IFS=$'\t' read -r d p cond srcs flags libs flavour runm extra; do
        pool_wait
        build_one "$impl" "$d" "$p" "$cond" "$srcs" "$flags" "$libs" "$flavour" "$runm" "$extra" </dev/null &
    done <"$work/rules.tsv"
    wait
    echo "mpich-suite: $impl: $(find "$work/$impl/bin" -type f ! -name '*.log' | wc -l) of $n built in $((SECONDS - t0)) s" >&2
}

# ---- running ------------------------------------------------------------------
# A run: the launcher with its own time limit, inside `timeout` (a little later)
# in a session of its own; whatever is left of that session afterwards is
# killed by process id. Output (stdout and stderr together) is judged as
# runtests does: a line "No Errors" (or "Test Skipped"), no other output (the
# launcher's "WARNING:" lines are allowed only with resultTest=TestAllowWarnings),
# exit status 0; resultTest=TestStatus / TestErrFatal want a non-zero status.
kill_session() { # SID
    local pids=()
    read -ra pids <<<"$(ps -e -o pid=,sid= | awk -v s="$1" '$2 == s { printf "%s ", $1 }')"
    [ ${#pids[@]} -gt 0 ] && kill -KILL "${pids[@]}" 2>/dev/null
    return 0
}

judge() { # RESULTTEST RC OUTFILE OUTER_FIRED -> status
    local rt=$1 rc=$2 f=$3 outer=$4 c
    if [ "$outer" = 1 ]; then echo timeout; return; fi
    # (--sim: the launcher's report of the simulated run is not the program's output)
    c=$(awk -v sim="${sim:+1}" '
        sim && (/^courier: (simulated|simulating) / || /^courier:   /) { next }
        /^[ \t]*No [Ee]rrors[ \t]*$/ { if (!ne) { ne = 1; next } }
        /^[ \t]*Test Skipped[ \t]*$/ { sk = 1; next }
        /^(MPICH: |WARNING: |(Abort.*)?application called MPI_Abort)/ { warn = 1; next }
        /(FORTRAN STOP|requesting checkpoint|checkpoint completed)[ \t]*$/ { next }
        { stray = 1 }
        END { print ne + 0, sk + 0, warn + 0, stray + 0 }' "$f")
    local ne sk warn stray ok=0
    read -r ne sk warn stray <<<"$c"
    case $rt in
    -) [ $((ne + sk)) -gt 0 ] && [ "$stray" = 0 ] && [ "$warn" = 0 ] && [ "$rc" = 0 ] && ok=1 ;;
    TestAllowWarnings) [ $((ne + sk)) -gt 0 ] && [ "$stray" = 0 ] && [ "$rc" = 0 ] && ok=1 ;;
    TestStatus | TestErrFatal) [ "$rc" != 0 ] && ok=1 ;;
    TestStatusNoErrors) [ "$ne" = 1 ] && [ "$stray" = 0 ] && [ "$rc" != 0 ] && ok=1 ;;
    TestBench) [ "$rc" = 0 ] && ok=1 ;;
    *) ;;
    esac
    if [ $ok = 1 ]; then
        if [ "$sk" = 1 ]; then echo skip; else echo pass; fi
    elif [ "$rc" = 124 ] || grep -qE 'time limit for job execution has been reached|courier: deadlock|exceeded --timeout' "$f"; then
        echo timeout
    elif { [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; } ||
        grep -qE 'killed by SIG|exited on signal|Segmentation fault|Bus error|Aborted \(core dumped\)' "$f"; then
        echo crash
    else
        echo fail
    fi
}

run_one() { # IMPL IDX DIR PROG NP ARGS ENVS RESULTTEST TIMELIMIT
    local impl=$1 idx=$2 d=$3 p=$4 np=$5 args=$6 envs=$7 rt=$8 tl=$9
    local exe=$work/$impl/bin/$d/$p out=$work/$impl/out/$idx.txt t=$tlimit argv=() envv=() cmd rc t0 st
    local sidf=$work/$impl/out/sid
    if [ ! -x "$exe" ]; then
        printf '%s\tbuild\t0\n' "$idx" >>"$work/$impl/status.tsv"
        return
    fi
    case $tl in '' | - | *[!0-9]*) ;; *) [ "$tl" -lt "$t" ] && t=$tl ;; esac
    [ "$args" = - ] || read -ra argv <<<"$args"
    [ "$envs" = - ] || read -ra envv <<<"$envs"
    if [ "$impl" = courier ]; then
        cmd=("$courier_run" run ${sim:+--sim "$sim"} --timeout "$t" -n "$np" "$exe")
    else
        cmd=("$ompi_run" --oversubscribe --timeout "$t" -n "$np" "$exe")
    fi
    t0=$(date +%s%N)
    rm -f "$sidf"
    (
        cd "${exe%/*}" || exit 1
        # the session leader writes its id (the session's) to $sidf; 64 MiB of output at most
        # shellcheck disable=SC2016
        setsid bash -c 'echo "$$" >"$0"; exec "$@"' "$sidf" \
            env MPIEXEC_TIMEOUT="$t" ${envv[@]+"${envv[@]}"} timeout --verbose -k 5 $((t + 10)) \
            "${cmd[@]}" ${argv[@]+"${argv[@]}"} </dev/null 2>&1 | head -c $((64 << 20)) >"$out"
        exit "${PIPESTATUS[0]}"
    )
    rc=$?
    [ -s "$sidf" ] && kill_session "$(cat "$sidf")"
    st=$(judge "$rt" "$rc" "$out" "$(grep -qE "^timeout: sending signal" "$out" && echo 1 || echo 0)")
    printf '%s\t%s\t%s\n' "$idx" "$st" "$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')" >>"$work/$impl/status.tsv"
}

run_all() { # IMPL
    local impl=$1 idx d p np args envs rt tl k=0 t0=$SECONDS
    rm -rf "$work/$impl/out"
    mkdir -p "$work/$impl/out"
    : >"$work/$impl/status.tsv"
    echo "mpich-suite: running $ntests tests with $impl" >&2
    while IFS=$'\t' read -r idx d p np args envs rt tl; do
        k=$((k + 1))
        [ -t 2 ] && printf '\r  %d/%d %s/%s          ' "$k" "$ntests" "$d" "$p" >&2
        run_one "$impl" "$idx" "$d" "$p" "$np" "$args" "$envs" "$rt" "$tl" </dev/null
    done <"$work/tests.tsv"
    [ -t 2 ] && printf '\r%60s\r' '' >&2
    cp "$work/tests.tsv" "$work/$impl/tests.tsv" # what status.tsv's numbers name
    echo "mpich-suite: $impl: ran $ntests tests in $((SECONDS - t0)) s" >&2
}

for impl in $impls; do
    if [ "$rebuild" = 1 ] || [ ! -d "$work/$impl/bin" ]; then
        build_all "$impl"
    fi
done
for impl in $impls; do run_all "$impl"; done
# An implementation not run this time is shown beside from an earlier run in the
# same work directory when that run had the same test list (courier rebuilt and
# rerun, Open MPI's results kept: --only courier after a run of both).
for impl in courier ompi; do
    case " $impls " in *" $impl "*) continue ;; esac
    if [ -s "$work/$impl/status.tsv" ] && cmp -s "$work/$impl/tests.tsv" "$work/tests.tsv"; then
        impls="$impls $impl"
        echo "mpich-suite: $impl: results of an earlier run in $work" >&2
    fi
done

# ---- results --------------------------------------------------------------------
# results.tsv: test np args <status per implementation> seconds...
{
    printf 'test\tnp\targs'
    for impl in $impls; do printf '\t%s' "$impl"; done
    for impl in $impls; do printf '\t%s_s' "$impl"; done
    printf '\n'
    awk -F'\t' -v impls="$impls" -v work="$work" '
        BEGIN { n = split(impls, im, " ")
                for (i = 1; i <= n; i++) { f = work "/" im[i] "/status.tsv"
                    while ((getline l < f) > 0) { split(l, w, "\t"); st[i, w[1]] = w[2]; sec[i, w[1]] = w[3] } } }
        { printf "%s/%s\t%s\t%s", $2, $3, $4, $5
          for (i = 1; i <= n; i++) printf "\t%s", (i SUBSEP $1) in st ? st[i, $1] : "-"
          for (i = 1; i <= n; i++) printf "\t%s", (i SUBSEP $1) in sec ? sec[i, $1] : "-"
          printf "\n" }' "$work/tests.tsv"
} >"$work/results.tsv"

# the table: per directory, tests passed / run and (courier) built
table() {
    awk -F'\t' -v impls="$impls" -v md="$markdown" '
        NR == 1 { n = split(impls, im, " "); next }
        { split($1, w, "/"); d = w[1]
          if (!(d in seen)) { seen[d] = 1; order[++nd] = d }
          tot[d]++; tot["total"]++
          for (i = 1; i <= n; i++) {
              s = $(3 + i)
              if (s == "pass" || s == "skip") { ps[i, d]++; ps[i, "total"]++ }
              if (s == "skip") { sk[i, d]++; sk[i, "total"]++ }
              if (s != "build") { bl[i, d]++; bl[i, "total"]++ }
          } }
        function name(x) { return x == "ompi" ? "Open MPI" : x }
        function cell(i, d) { return (ps[i, d] + 0) "/" tot[d] }
        END {
            order[++nd] = "total"
            if (md) {
                printf "| directory | tests |"
                for (i = 1; i <= n; i++) printf " %s built | %s passed |", name(im[i]), name(im[i])
                printf "\n|---|---|"
                for (i = 1; i <= n; i++) printf "---|---|"
                printf "\n"
                for (k = 1; k <= nd; k++) { d = order[k]
                    printf "| %s | %d |", (d == "total" ? "**total**" : d), tot[d]
                    for (i = 1; i <= n; i++) printf " %d | %d |", bl[i, d], ps[i, d]
                    printf "\n" }
            } else {
                for (k = 1; k <= nd; k++) { d = order[k]
                    printf "%s:", d
                    for (i = 1; i <= n; i++) {
                        printf "%s %s %s", (i > 1 ? "," : ""), im[i], cell(i, d)
                        if (im[i] == "courier") printf " built %d", bl[i, d]
                        if (sk[i, d] > 0) printf " (%d skipped)", sk[i, d]
                    }
                    printf "\n" }
            }
        }' "$work/results.tsv"
}

# missing.txt: the tests Open MPI passes and courier does not, grouped by what
# courier lacks (from the build logs: undefined references, undeclared names,
# implicit declarations), then the ones courier built but failed at run time.
# names a build log says are missing: NAME<TAB>where (test, or harness:FUNCTION
# when only a harness function of util/ or dtpools refers to it)
missing_names() { # LOG
    awk -v q="'" -v bq='`' -v hfiles="$harness_files" '
        function between(l, a,   i, r) { i = index(l, a); if (!i) return ""; r = substr(l, i + length(a)); return substr(r, 1, index(r, q) - 1) }
        BEGIN { n = split(hfiles, f, " "); for (i = 1; i <= n; i++) harness[f[i]] = 1 }
        /undefined reference to / {
            o = index($0, "/harness/") ? "harness" : "test"
            if (match($0, /[A-Za-z0-9_.-]+\.c:\(\.text\.[A-Za-z0-9_.]+/)) {
                w = substr($0, RSTART, RLENGTH); file = w; sub(/:.*/, "", file); fn = w; sub(/.*\(\.text\./, "", fn)
                if (file in harness) o = "harness:" fn
            }
            print between($0, "undefined reference to " bq) "\t" o; next }
        /implicit declaration of function / { print between($0, "function " q) "\ttest"; next }
        /unknown type name / { print between($0, "type name " q) "\ttest"; next }
        match($0, q "[A-Za-z_][A-Za-z0-9_]*" q " undeclared") { print substr($0, RSTART + 1, RLENGTH - 13) "\ttest" }' "$1" |
        awk -F'\t' '$1 != "" { w[$1] = ($1 in w) ? (w[$1] == "test" || $2 == "test" ? "test" : w[$1] "," $2) : $2 }
            END { for (s in w) {
                    o = w[s]
                    if (o != "test") {
                        n = split(o, f, ","); o = ""; delete u
                        for (i = 1; i <= n; i++) { sub(/^harness:?/, "", f[i]); if (f[i] != "" && !(f[i] in u)) { u[f[i]] = 1; o = o (o == "" ? "" : ",") f[i] } }
                        o = "harness:" o
                    }
                    print s "\t" o } }'
}

missing_report() {
    local harness_files
    harness_files=$(find "$suite/util" "$suite/dtpools/src" -name '*.c' -printf '%f ' 2>/dev/null)
    local tmp=$work/missing.tmp idx=0 t np args st so reason n names
    : >"$tmp"
    while IFS=$'\t' read -r t np args st so _; do
        idx=$((idx + 1))
        [ "$so" = pass ] || [ "$so" = skip ] || continue
        [ "$st" = pass ] || [ "$st" = skip ] && continue
        local log=$work/courier/bin/$t.log
        t="$t $np"
        [ "$args" = - ] || t="$t $args"
        if [ "$st" = build ]; then
            names=$(missing_names "$log")
            n=$(printf '%s\n' "$names" | grep -c .)
            if [ "$n" = 0 ]; then
                reason=$(grep -m1 -E 'error|mpich-suite:' "$log" | cut -c1-160)
                printf 'O\t%s\t%s\n' "$t" "$reason" >>"$tmp"
            else
                printf '%s\n' "$names" | while IFS=$'\t' read -r s o; do
                    printf 'B\t%s\t%s\t%s\t%s\n' "$s" "$t" "$n" "$o" >>"$tmp"
                done
            fi
        else
            reason=$(grep -m1 -E '^courier: |MPI_ERR|rror' "$work/courier/out/$idx.txt" | cut -c1-200)
            printf 'R\t%s\t%s\t%s\n' "$st" "$t" "${reason:-(no message)}" >>"$tmp"
        fi
    done < <(tail -n +2 "$work/results.tsv")
    {
        echo "# MPICH test suite ($suite, directories: $dirs):"
        echo "# the $(cut -f3 "$tmp" | sort -u | wc -l) tests Open MPI passes and courier does not"
        echo
        echo "# 1. Not built by courier ($(awk -F'\t' '$1 != "R" { print $3 }' "$tmp" | sort -u | wc -l) tests), by the name courier lacks"
        echo "#    (undefined reference, undeclared name or type), the most needed first:"
        echo "#    NAME: tests needing it; how many need nothing else; how many need it only"
        echo "#    through the suite's MTest harness (util/*.c, dtpools) and which harness functions."
        echo "#    A test that does not compile shows only the names the compiler stopped at."
        awk -F'\t' '$1 == "B" { n[$2]++; if ($4 == 1) only[$2]++
                if ($5 != "test") { h[$2]++; split(substr($5, 9), f, ","); for (i in f) fn[$2, f[i]] = 1 } }
            END { for (s in n) { l = ""
                    for (k in fn) { split(k, a, SUBSEP); if (a[1] == s) l = l (l == "" ? "" : ", ") a[2] }
                    printf "%d\t%s\t%d\t%d\t%s\n", n[s], s, only[s], h[s], l } }' "$tmp" | sort -t$'\t' -k1,1nr -k2,2 |
            while IFS=$'\t' read -r n s only h fns; do
                printf '%s: %d test(s); %d need nothing else' "$s" "$n" "$only"
                [ "$h" -gt 0 ] && printf '; %d only through the harness (%s)' "$h" "$fns"
                printf '\n'
                awk -F'\t' -v s="$s" '$1 == "B" && $2 == s { print "    " $3 ($5 == "test" ? "" : "  [harness]") }' "$tmp"
            done
        if grep -q '^O' "$tmp"; then
            echo "#    other build errors:"
            awk -F'\t' '$1 == "O" { print "    " $2 ": " $3 }' "$tmp"
        fi
        echo
        echo "# 2. Built by courier, failed when run ($(grep -c '^R' "$tmp") tests): status: the first line that says why"
        awk -F'\t' '$1 == "R" { print "    " $3 ": " $2 ": " $4 }' "$tmp"
    } >"$work/missing.txt"
    rm -f "$tmp"
}

table | tee "$work/summary.txt"
[ "$impls" = "courier ompi" ] && missing_report
{
    echo "mpich-suite: $ntests tests ($(($(wc -l <"$work/skipped.tsv") - 1)) skipped: $work/skipped.tsv), $(($(date +%s) - t_start)) s in all"
    echo "mpich-suite: per test: $work/results.tsv; outputs: $work/<impl>/out/<n>.txt (n: first column of tests.tsv); build logs: $work/<impl>/bin/<dir>/<test>.log"
    [ -f "$work/missing.txt" ] && echo "mpich-suite: what Open MPI passes and courier does not: $work/missing.txt"
} >&2
exit 0
