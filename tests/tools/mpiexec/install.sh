#!/bin/bash
# An installation has courier-mpiexec and courier-mpirun (links to courier) in
# the prefix given at install time, and no mpiexec or mpirun (another MPI's
# stays first on PATH) unless -DCOURIER_INSTALL_MPIEXEC=ON.
#   install.sh BUILD_DIR
set -u
build=$1
p=$(mktemp -d)
trap 'rm -rf "$p"' EXIT
cmake --install "$build" --prefix "$p" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
status=0
for name in courier-mpiexec courier-mpirun; do
    got=$("$p/bin/$name" --dry-run -n 2 prog 2>&1)
    echo "$name --dry-run -n 2 prog: $got"
    [ "$got" = "courier run -n 2 prog" ] || { echo "FAIL: $p/bin/$name"; status=1; }
done
want_plain=no
grep -q '^COURIER_INSTALL_MPIEXEC:BOOL=ON' "$build/CMakeCache.txt" && want_plain=yes
for name in mpiexec mpirun; do
    have=no
    [ -e "$p/bin/$name" ] && have=yes
    [ $have = $want_plain ] || { echo "FAIL: $name installed: $have, wanted $want_plain"; status=1; }
done
[ $status -eq 0 ] && echo ok
exit $status
