#!/bin/bash
# courier-fort builds Fortran programs of every kind (mpif.h in fixed form,
# `use mpi`, `use mpi_f08`, fnx.h, mplf.h) from the build tree, and again from
# an installation (`cmake --install BUILD --prefix P`) moved elsewhere after
# it was made, whose courier-fort must name only the new place (-show) and
# whose programs run with that installation's courier run.
# In a sanitizer build (SANITIZE: COURIER_SANITIZE's list) the programs are
# built with the same sanitizers, whose runtime must come first.
#   wrapper.sh CMAKE BUILD_DIR SOURCE_DIR [SANITIZE]
set -u
fail() { echo "FAIL: $*"; exit 1; }
cmake=$1 build=$2 src=$3/tests/fortran
san=${4:+-fsanitize=$4}
[ -x "$cmake" ] || cmake=$(command -v cmake) || fail "no cmake at $1 nor on PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# build NAME SOURCE with courier-fort $1 and run it with courier $2 on N ranks, expecting LINE
run() {
    local fort=$1 courier=$2 name=$3 source=$4 np=$5 want=$6 out
    "$fort" -Wall $san "$source" -o "$tmp/$name" >"$tmp/$name.log" 2>&1 ||
        fail "$fort cannot build $source: $(cat "$tmp/$name.log")"
    out=$("$courier" run -n "$np" --timeout 60 "$tmp/$name") || fail "$name failed: $out"
    grep -q "$want" <<<"$out" || fail "$name printed '$out', not '$want'"
}
all() {
    local fort=$1 courier=$2
    run "$fort" "$courier" mpif "$src/ring_mpif.f" 3 "fortran mpif.h: .* ok on 3 ranks"
    run "$fort" "$courier" usempi "$src/ring_usempi.f90" 2 "fortran use mpi: .* ok on 2 ranks"
    if [ -f "$src/ring_f08.f90" ]; then
        run "$fort" "$courier" f08 "$src/ring_f08.f90" 2 "fortran use mpi_f08: .* ok on 2 ranks"
    fi
    run "$fort" "$courier" nx "$src/nx.f" 2 "fortran nx: .* ok on 2 nodes"
    run "$fort" "$courier" mpl "$src/mpl.f" 2 "fortran mpl: .* ok on 2 tasks"
}

all "$build/tools/courier-fort" "$build/tools/courier"
"$build/tools/courier-f90" --showme:version | grep -q courier || fail "courier-f90 is not courier-fort"
# The version a build system reads is the one mpi.h declares.
want=$(awk '/^#define MPI_VERSION /{v=$3} /^#define MPI_SUBVERSION /{s=$3} END{print v "." s}' \
    "$src/../../include/courier/mpi.h")
"$build/tools/courier-fort" --showme:version | grep -q "(MPI $want)" ||
    fail "courier-fort --showme:version does not say MPI $want"
# Open MPI's single-dash -showme forms too (Nek5000's makenek asks -showme and
# reads the compiler's name from its first word).
"$build/tools/courier-fort" -showme >/dev/null || fail "courier-fort -showme failed"
[ "$("$build/tools/courier-fort" -showme:compile)" = "$("$build/tools/courier-fort" --showme:compile)" ] ||
    fail "courier-fort -showme:compile differs from --showme:compile"

"$cmake" --install "$build" --prefix "$tmp/p1" >/dev/null || fail "cmake --install failed"
mv "$tmp/p1" "$tmp/p2"
p=$tmp/p2
for w in $("$p/bin/courier-fort" -show); do
    case $w in
    -I* | -L*) d=${w#-?} ;;
    -Wl,-rpath,*) d=${w#-Wl,-rpath,} ;;
    *) continue ;;
    esac
    case $d in "$p"/*) [ -d "$d" ] || fail "courier-fort -show names $d, which is missing" ;;
    *) fail "the moved courier-fort -show names $d, outside $p" ;;
    esac
done
all "$p/bin/courier-fort" "$p/bin/courier"
# find_package(courier COMPONENTS Fortran) in the moved installation
mkdir "$tmp/pkg"
cat >"$tmp/pkg/CMakeLists.txt" <<EOC
cmake_minimum_required(VERSION 3.16)
project(pkg LANGUAGES C Fortran)
find_package(courier REQUIRED COMPONENTS Fortran)
add_executable(ring_f08 $src/ring_f08.f90)
target_link_libraries(ring_f08 PRIVATE courier::fortran)
EOC
"$cmake" -S "$tmp/pkg" -B "$tmp/pkg/b" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_Fortran_FLAGS="$san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" >"$tmp/pkg.log" 2>&1 || fail "find_package(courier COMPONENTS Fortran): $(tail -5 "$tmp/pkg.log")"
"$cmake" --build "$tmp/pkg/b" >"$tmp/pkg.log" 2>&1 || fail "courier::fortran build: $(tail -5 "$tmp/pkg.log")"
out=$("$p/bin/courier" run -n 2 --timeout 60 "$tmp/pkg/b/ring_f08" 2>/dev/null) || fail "courier::fortran program failed"
grep -q "ok on 2 ranks" <<<"$out" || fail "courier::fortran program printed '$out'"
echo "fortran wrapper: courier-fort builds mpif.h, use mpi, NX/2 and MPL programs, in the build tree and installed; courier::fortran too"
