#!/bin/bash
# full.sh COURIER PROG: runs PROG at 2 ranks with its files on a 1 MiB tmpfs (no huge pages: one would not fit) of
# its own, mounted in a mount namespace of its own (so nothing stays mounted
# whatever happens). Exit 77 (skipped) where that cannot be done: not root, no
# unshare, no mount namespaces.
set -u
courier=$1 prog=$2
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null ||
    ! unshare --mount --propagation private true 2>/dev/null; then
    echo "full.sh: needs root and mount namespaces: skipped" >&2
    exit 77
fi
exec unshare --mount --propagation private -- bash -c '
    d=$(mktemp -d) || exit 77
    if ! mount -t tmpfs -o size=1m,huge=never courier-io-full "$d"; then rmdir "$d"; exit 77; fi
    "$1" run -n 2 --timeout 120 "$2" "$d"
    rc=$?
    umount "$d"
    rmdir "$d"
    exit $rc' full.sh "$courier" "$prog"
