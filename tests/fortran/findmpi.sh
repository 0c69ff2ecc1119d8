#!/bin/bash
# CMake's FindMPI, pointed at courier-fort (MPI_Fortran_COMPILER), finds
# mpif.h, the mpi module and the mpi_f08 module, and a program built with
# MPI::MPI_Fortran runs under courier run.
#   findmpi.sh CMAKE BUILD_DIR SOURCE_DIR [SANITIZE]
set -u
fail() { echo "FAIL: $*"; exit 1; }
cmake=$1 build=$2 src=$3/tests/fortran
[ -x "$cmake" ] || cmake=$(command -v cmake) || fail "no cmake at $1 nor on PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/CMakeLists.txt" <<EOC
cmake_minimum_required(VERSION 3.16)
project(findmpi LANGUAGES C Fortran)
find_package(MPI REQUIRED COMPONENTS Fortran)
foreach(form F77_HEADER F90_MODULE F08_MODULE)
  if(NOT MPI_Fortran_HAVE_\${form})
    message(FATAL_ERROR "FindMPI: courier-fort has no \${form}")
  endif()
endforeach()
add_executable(ring_f08 $src/ring_f08.f90)
target_link_libraries(ring_f08 MPI::MPI_Fortran)
EOC
flags=${4:+-fsanitize=$4}
"$cmake" -S "$tmp" -B "$tmp/b" -DMPI_Fortran_COMPILER="$build/tools/courier-fort" \
    -DCMAKE_Fortran_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >"$tmp/log" 2>&1 ||
    fail "configure: $(tail -5 "$tmp/log")"
"$cmake" --build "$tmp/b" >"$tmp/log" 2>&1 || fail "build: $(tail -5 "$tmp/log")"
out=$("$build/tools/courier" run -n 2 --timeout 60 "$tmp/b/ring_f08" 2>/dev/null) || fail "the program failed: $out"
grep -q "ok on 2 ranks" <<<"$out" || fail "the program printed '$out'"
echo "fortran findmpi: FindMPI finds mpif.h, mpi and mpi_f08 through courier-fort"
