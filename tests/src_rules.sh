#!/bin/bash
# Rules of the sources (docs/engine.md, "State"; issue 38), checked on what
# the build made and on src/ itself, so that a change cannot break them
# unnoticed:
#  - no mutable variable at file level (or static in a function) in any object
#    of src/: state lives in the job struct or in an interface's own state
#    reached from it. Read from the objects' symbol tables (.data, .bss and
#    thread-local sections; const data, relocated or not, is not there). The
#    few that are one per process by nature are listed below with why, as
#    src/core/engine.h's opening comment lists them;
#  - no file of src/ over 1,500 lines.
#   src_rules.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2/src
command -v nm >/dev/null || { echo "SKIP: no nm (binutils) to read the objects"; exit 77; }
# object (relative to its target's directory) and symbol, '.N' suffixes of
# function-level statics dropped
allowed='
core/job.c cr_the_job_ptr      the job itself (a pointer to it: the job is on the heap)
core/job.c cr_job_ready        ... and whether it is made
core/job.c job_once            ... once
host/contexts.c the            the contexts scheduler: one per process, the same in every rank copy
transport/tcp_crypto.c lib     libcrypto entry points: one library per process
api/simclock.c shim            the simulated clock preload (not libcourier): one per process
api/simshared.c sh             the shared buffers preload (shared= of --sim): one per process
api/nx.c msginfo               NX/2 interface variable for programs
api/mpl.c mperrno              MPL interface variable for programs
api/mpi_topo.c courier_mpi_weights  the addresses of MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY
api/mpi_f2c.c mpi_fortran_bottom_ a Fortran sentinel (common block): its address is the value
api/mpi_f2c.c mpi_fortran_in_place_ a Fortran sentinel (common block): its address is the value
api/mpi_f2c.c mpi_fortran_status_ignore_ a Fortran sentinel (common block): its address is the value
api/mpi_f2c.c mpi_fortran_statuses_ignore_ a Fortran sentinel (common block): its address is the value
api/mpi_f2c.c mpi_fortran_f08_status_ignore_ a Fortran sentinel (common block): its address is the value
api/mpi_f2c.c mpi_fortran_f08_statuses_ignore_ a Fortran sentinel (common block): its address is the value
api/mpi_f2c.c mpi_fortran_errcodes_ignore_ a Fortran sentinel (common block): its address is the value
api/mpi_f2c.c mpi_fortran_unweighted_ a Fortran sentinel (common block): its address is the value
api/mpi_f2c.c mpi_fortran_weights_empty_ a Fortran sentinel (common block): its address is the value
mpi_fconst.c f08               a build-time program that prints mpif.h, in no library
'
objs=$(find "$build/src" -name '*.c.o' -path '*/CMakeFiles/*')
[ -n "$objs" ] || { echo "FAIL: no objects under $build/src"; exit 1; }
fail=0
# shellcheck disable=SC2086
while read -r rel sym; do
    grep -qE "^$rel $sym( |$)" <<<"$allowed" && continue
    echo "FAIL: $rel: mutable variable '$sym' at file level (or static in a function):" \
        "move it into the job struct or its interface's state (docs/engine.md, State)"
    fail=1
done < <(nm -f sysv --defined-only $objs | awk -F'|' '
    /^Symbols from / { f = $0; sub(/^Symbols from .*\.dir\//, "", f); sub(/\.o:$/, "", f); next }
    NF >= 7 {
        n = $1; s = $7; t = $4; gsub(/ /, "", n); gsub(/ /, "", s); gsub(/ /, "", t)
        if (t == "OBJECT" && s ~ /^\.(data|bss|tdata|tbss)/ && s !~ /^\.data\.rel\.ro/ &&
            n !~ /^__odr_asan/) { # the markers of AddressSanitizer (the sanitizer build)
            sub(/\.[0-9]+$/, "", n); print f, n
        }
    }')
while read -r n f; do
    [ "$f" = total ] && continue
    [ "$n" -gt 1500 ] || continue
    echo "FAIL: ${f#"$src"/} has $n lines: split it along its seams (at most 1,500)"
    fail=1
done < <(find "$src" -name '*.[ch]' -exec wc -l {} +)
[ $fail = 0 ] && echo "src rules: ok"
exit $fail
