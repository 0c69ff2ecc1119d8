#!/bin/bash
# Packs bench/scale-run.sh for a machine without a package registry (the
# 16-core device machine): one ignored folder, .device/ (listed in
# .git/info/exclude), under 64 MiB, holding
#   cb/         courier's programs in a build's layout (tools/courier, bench/...,
#               bench/mpi/mpi_mb) and lib/libcourier.so, stripped; built here
#               in build-device/ (Release)
#   ompi/ env.sh  Debian's Open MPI relocated (../shared/tools/device-openmpi.sh)
#   ompi-bin/   the same benchmark sources built with mpicc.openmpi (NAME_ompi)
#   ompi-inc/   Open MPI's headers and the sources, for rebuilding ompi-bin there
#   ssl-inc/    OpenSSL's headers, for that rebuild where libssl-dev is missing
#   extra-lib/  libudev and libz (Open MPI's hwloc needs them), used there only
#               where the machine has none
#   scale-run.sh scale-report.sh  copies of bench/'s
#   run.sh      what to run there (from the repository root):  bash .device/run.sh
# run.sh checks that the carried programs start (glibc, libraries); where
# courier's do not, it builds courier from the carried working tree with cmake
# (Release) into .device/build-src; where Open MPI's do not, it compiles them
# again with gcc and ompi-inc. Then scale-run.sh into $OUT (default
# /tmp/scale-out), then scale-report.sh into $OUT/report.md, printed.
#   bench/device-prepare.sh [--skip-build]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dev=.device bd=build-device
skip=0
[ "${1:-}" = --skip-build ] && skip=1
command -v mpicc.openmpi >/dev/null || { echo "apt-get install -y libopenmpi-dev openmpi-bin first" >&2; exit 2; }
grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >>.git/info/exclude
targets="courier_cmd courier pingpong coll_sizes coll_sizes_mpi mpi_mb memhold memhold_mpi memsample floors"
if [ $skip = 0 ]; then
    # -Wno-error=maybe-uninitialized: gcc 12 at -O3 warns in src/run/jobs.c
    cmake -S . -B $bd -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-Wno-error=maybe-uninitialized >/dev/null
    # shellcheck disable=SC2086 # a list
    cmake --build $bd -j"$(nproc)" --target $targets >/dev/null
fi
rm -rf $dev
mkdir -p $dev/cb/tools $dev/cb/bench/mpi $dev/cb/lib $dev/ompi-bin $dev/ompi-inc
cp $bd/tools/courier $dev/cb/tools/
for p in pingpong coll_sizes coll_sizes_mpi memhold memhold_mpi memsample floors; do cp $bd/bench/$p $dev/cb/bench/; done
cp $bd/bench/mpi/mpi_mb $dev/cb/bench/mpi/
cp -L $bd/src/libcourier.so.0 $dev/cb/lib/
ln -s libcourier.so.0 $dev/cb/lib/libcourier.so
strip --strip-unneeded $dev/cb/tools/* $dev/cb/bench/* $dev/cb/bench/mpi/* $dev/cb/lib/libcourier.so.0 2>/dev/null || true

../shared/tools/device-openmpi.sh $dev >/dev/null
mpicc.openmpi -O2 -DUSE_MPI bench/pingpong.c -o $dev/ompi-bin/pingpong_ompi
mpicc.openmpi -O2 -DUSE_MPI bench/coll_sizes.c -o $dev/ompi-bin/coll_sizes_ompi
mpicc.openmpi -O2 bench/mpi/mb.c -o $dev/ompi-bin/mb_ompi
mpicc.openmpi -O2 -DUSE_MPI bench/memhold.c -o $dev/ompi-bin/memhold_ompi
strip --strip-unneeded $dev/ompi-bin/*
# libraries Open MPI's core needs beyond glibc, for a machine that lacks them
# (run.sh uses them only then)
mkdir -p $dev/extra-lib
for l in libudev.so.1 libz.so.1; do cp -L "/lib/x86_64-linux-gnu/$l" $dev/extra-lib/; done
inc=$(mpicc.openmpi --showme:incdirs | tr ' ' '\n' | head -1)
cp "$inc"/*.h $dev/ompi-inc/
cp bench/scale-run.sh bench/scale-report.sh $dev/
cp bench/pingpong.c bench/coll.c bench/coll_sizes.c bench/memhold.c $dev/ompi-inc/ # sources for the rebuild
cp bench/mpi/mb.c $dev/ompi-inc/
# OpenSSL's headers, for rebuilding courier where libssl-dev is missing (courier
# loads libcrypto at run time; the build wants the headers and the library's name)
mkdir -p $dev/ssl-inc/openssl
cp /usr/include/openssl/*.h $dev/ssl-inc/openssl/
cp /usr/include/x86_64-linux-gnu/openssl/*.h $dev/ssl-inc/openssl/ 2>/dev/null || true

# the newest glibc symbol version the carried programs ask for (courier's; Open
# MPI's, whose Debian 12 libevent wants 2.36: arc4random)
glibc_of() { for f in "$@"; do [ -f "$f" ] && objdump -T "$f" 2>/dev/null; done |
    grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1; }
need=$(glibc_of $dev/cb/tools/* $dev/cb/bench/* $dev/cb/bench/mpi/* $dev/cb/lib/*.so.0)
# shellcheck disable=SC2046 # a list of files
need_ompi=$(glibc_of $dev/ompi-bin/* $(find $dev/ompi -type f \( -name '*.so*' -o -path '*/bin/*' \)))
echo "courier $need, Open MPI $need_ompi" >$dev/glibc-needed

cat >$dev/run.sh <<'EOS'
#!/bin/bash
# Made by bench/device-prepare.sh; run from the repository root:  bash .device/run.sh
# Environment: OUT (default /tmp/scale-out), ALGS, BUDGET_S (whole run, default
# 400, a courier rebuild included), SMALL, and the rest of scale-run.sh's.
d=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$d")
t0=$(date +%s)
export OUT=${OUT:-/tmp/scale-out}
mkdir -p "$OUT"
note() { echo "run.sh: $*" | tee -a "$OUT/prepare.txt" >&2; }
: >"$OUT/prepare.txt"
note "glibc here: $(ldd --version 2>/dev/null | head -1); carried programs need $(cat "$d/glibc-needed"); $(nproc) cpus"
export LD_LIBRARY_PATH=$d/cb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for l in libudev.so.1 libz.so.1; do
    ldconfig -p 2>/dev/null | grep -q "$l" || { note "no $l here: the carried one"; x=1; }
done
[ -n "${x:-}" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d/extra-lib
cb=$d/cb
if ! out=$(timeout 30 "$cb/tools/courier" run -n 2 "$cb/bench/pingpong" hello 2>&1); then
    note "the carried courier does not start here ($(echo "$out" | tail -2 | tr '\n' ' ')); building it from source"
    b=$d/build-src ssl=()
    if [ ! -f /usr/include/openssl/evp.h ]; then
        crypto=$(ldconfig -p 2>/dev/null | awk '/libcrypto\.so\.[0-9]+ .*x86-64/ {print $NF; exit}')
        ssl=(-DOPENSSL_INCLUDE_DIR="$d/ssl-inc" -DOPENSSL_CRYPTO_LIBRARY="$crypto")
        note "no OpenSSL headers here: the carried ones, with ${crypto:-no libcrypto found}"
    fi
    { timeout 150 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-Wno-error=maybe-uninitialized "${ssl[@]}" &&
        timeout 240 cmake --build "$b" -j"$(nproc)" --target courier_cmd courier pingpong coll_sizes coll_sizes_mpi mpi_mb memhold memhold_mpi memsample floors; } \
        >"$OUT/build-src.log" 2>&1 || { note "the build failed: $(tail -3 "$OUT/build-src.log" | tr '\n' ' ')"; }
    cb=$b
    export LD_LIBRARY_PATH=$b/src:$LD_LIBRARY_PATH
    timeout 30 "$cb/tools/courier" run -n 2 "$cb/bench/pingpong" hello >/dev/null 2>&1 && note "built courier starts" ||
        note "the built courier does not start either"
fi
obin=$d/ompi-bin
if ! out=$(. "$d/env.sh"; timeout 30 orterun --oversubscribe -np 2 "$obin/mb_ompi" hello 2>&1); then
    note "the carried Open MPI programs do not start here ($(echo "$out" | tail -2 | tr '\n' ' ')); compiling them again"
    obin=$d/ompi-bin-src
    mkdir -p "$obin"
    lib=$(ls -d "$d"/ompi/usr/lib/x86_64-linux-gnu/libmpi.so.* | head -1)
    s=$d/ompi-inc
    for p in "pingpong -DUSE_MPI" "coll_sizes -DUSE_MPI" "mb" "memhold -DUSE_MPI"; do
        set -- $p
        gcc -O2 $2 -I"$s" "$s/$1.c" "$lib" -o "$obin/$1_ompi" 2>>"$OUT/prepare.txt" || note "gcc failed for $1"
    done
fi
spent=$(($(date +%s) - t0))
BUDGET_S=$((${BUDGET_S:-400} - spent)) CB=$cb OMPI_BIN=$obin OMPI_ENV=$d/env.sh bash "$d/scale-run.sh"
bash "$d/scale-report.sh" "$OUT" >"$OUT/report.md" 2>>"$OUT/prepare.txt"
cat "$OUT/report.md"
echo "run.sh: $(($(date +%s) - t0)) s in all; files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
EOS
chmod +x $dev/run.sh $dev/scale-run.sh $dev/scale-report.sh
size=$(du -sk $dev | cut -f1)
echo "$dev: $((size / 1024)) MiB (limit 64 MiB); the carried programs need glibc: $(cat $dev/glibc-needed)"
[ "$size" -lt $((64 * 1024)) ] || { echo "too big for the carry limit" >&2; exit 1; }
echo "run there (carry [\".device\"], from the repository root):"
echo '  ALGS="auto" BUDGET_S=400 bash .device/run.sh'
echo "dry run here:  SMALL=1 OUT=/tmp/scale-dry bash .device/run.sh"
