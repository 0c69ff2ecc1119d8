#!/bin/bash
# An installed courier works wherever it is: installs the build tree with
# `cmake --install BUILD --prefix P1` (a prefix the configure step never saw),
# builds and runs an MPI and an NX/2 program with P1/bin/courier-cc and
# P1/bin/courier run, then moves the whole tree to P2 and does it again; checks
# that courier-cc and courier.pc name P2 only (through a symbolic link too),
# that COURIER_PREFIX overrides the place, that a courier-cc away from any
# installation says so, and that find_package(courier) works from P2.
#   relocate.sh CMAKE BUILD_DIR
set -u
fail() { echo "FAIL: $*"; exit 1; }
cmake=$1 build=$2
# a build carried to another machine names this one's cmake: take that one's
[ -x "$cmake" ] || cmake=$(command -v cmake) || fail "no cmake at $1 nor on PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/hello_mpi.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int me, n, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) printf("mpi: %d ranks, sum %d\n", n, sum);
    MPI_Finalize();
    return 0;
}
EOF
cat >"$tmp/hello_nx.c" <<'EOF'
#include <courier/nx.h>
#include <stdio.h>
int main(void)
{
    long v = mynode() + 1, work;
    gisum(&v, 1, &work);
    if (mynode() == 0) printf("nx: %ld nodes, sum %ld\n", numnodes(), v);
    return 0;
}
EOF

# Build and run both programs with the installation at $1; every path the
# wrapper names must lie in $1.
check() {
    local p=$1 cc=$1/bin/courier-cc show
    show=$("$cc" -show) || fail "$cc -show failed"
    for w in $show; do
        case $w in
        -I* | -L*) d=${w#-?} ;;
        -Wl,-rpath,*) d=${w#-Wl,-rpath,} ;;
        *) continue ;;
        esac
        case $d in "$p"/*) ;; *) fail "$cc -show names $d, outside $p: $show" ;; esac
    done
    echo "$show" | grep -q -- "-I$p/" || fail "$cc -show does not name $p: $show"
    "$cc" "$tmp/hello_mpi.c" -o "$tmp/hello_mpi" || fail "$cc cannot build an MPI program"
    "$cc" "$tmp/hello_nx.c" -o "$tmp/hello_nx" || fail "$cc cannot build an NX/2 program"
    out=$("$p/bin/courier" run -n 3 --timeout 60 "$tmp/hello_mpi") || fail "MPI program failed"
    [ "$out" = "mpi: 3 ranks, sum 3" ] || fail "MPI program printed '$out'"
    out=$("$p/bin/courier" run -n 3 --timeout 60 "$tmp/hello_nx") || fail "NX/2 program failed"
    [ "$out" = "nx: 3 nodes, sum 6" ] || fail "NX/2 program printed '$out'"
    # The programs find libcourier in $p (the runpath the wrapper gave them).
    if command -v readelf >/dev/null; then
        readelf -d "$tmp/hello_mpi" | grep -E 'R(UN)?PATH' | grep -qF "[$p/" ||
            fail "hello_mpi's runpath is not in $p: $(readelf -d "$tmp/hello_mpi" | grep PATH)"
    fi
    pc=$(find "$p" -name courier.pc | head -n 1)
    [ -n "$pc" ] || fail "no courier.pc under $p"
    if command -v pkg-config >/dev/null; then
        flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs courier) ||
            fail "pkg-config cannot read $pc"
        for w in $flags; do
            case $w in
            -I* | -L*) d=$(cd "${w#-?}" 2>/dev/null && pwd -P) ||
                fail "pkg-config names $w, which does not exist" ;;
            *) continue ;;
            esac
            case $d in "$p"/*) ;; *) fail "pkg-config names $d, outside $p: $flags" ;; esac
        done
    fi
}

"$cmake" --install "$build" --prefix "$tmp/p1" >/dev/null || fail "cmake --install failed"
p1=$(cd "$tmp/p1" && pwd -P)
check "$p1"
mv "$tmp/p1" "$tmp/p2"
p2=$(cd "$tmp/p2" && pwd -P)
check "$p2"
# Through a symbolic link, from elsewhere: still the real place.
mkdir "$tmp/links" && ln -s "$p2/bin/courier-cc" "$tmp/links/courier-cc"
"$tmp/links/courier-cc" -show | grep -q -- "-I$p2/include" || fail "a link to courier-cc does not name $p2"
(PATH=$tmp/links:$PATH && courier-cc -show) | grep -q -- "-I$p2/include" ||
    fail "courier-cc found along PATH does not name $p2"
# A copy away from any installation: says so, and COURIER_PREFIX puts it right.
mkdir "$tmp/alone" && cp "$p2/bin/courier-cc" "$tmp/alone/"
if "$tmp/alone/courier-cc" -show >/dev/null 2>"$tmp/err"; then fail "a courier-cc without an installation did not fail"; fi
grep -q "set COURIER_PREFIX" "$tmp/err" || fail "a courier-cc without an installation says: $(cat "$tmp/err")"
COURIER_PREFIX=$p2 "$tmp/alone/courier-cc" -show | grep -q -- "-I$p2/include" ||
    fail "COURIER_PREFIX=$p2 is not used"
# find_package(courier) from the moved tree.
mkdir "$tmp/proj" && cp "$tmp/hello_mpi.c" "$tmp/proj/" && cat >"$tmp/proj/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(hello C)
find_package(courier REQUIRED)
add_executable(hello_mpi hello_mpi.c)
target_link_libraries(hello_mpi PRIVATE courier::courier)
EOF
"$cmake" -S "$tmp/proj" -B "$tmp/proj/b" -DCMAKE_PREFIX_PATH="$p2" >"$tmp/log" 2>&1 &&
    "$cmake" --build "$tmp/proj/b" >>"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "find_package(courier) from $p2"; }
out=$("$p2/bin/courier" run -n 2 --timeout 60 "$tmp/proj/b/hello_mpi") && [ "$out" = "mpi: 2 ranks, sum 1" ] ||
    fail "the program built with find_package(courier) printed '$out'"
echo "ok: installed at $p1 and moved to $p2; courier-cc, courier run, courier.pc and courierConfig.cmake follow"
