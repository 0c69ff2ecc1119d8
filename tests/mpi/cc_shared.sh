#!/bin/sh
# courier-cc -shared: a library that calls exit, linked with the wrapper's
# flags, must neither define __wrap_main nor need the program's main (it did:
# "symbol lookup error: libx.so: undefined symbol: main" in every program over
# it, PETSc's included); its exit ends only the calling rank under --sim's
# contexts. A program whose main is in a static archive links ('cc -o prog
# libprog.a', as HPCC's makefile does: the wrapped main needed it after the
# archive was scanned). And --showme with arguments prints the command for them.
# usage: cc_shared.sh COURIER_CC COURIER SRCDIR
set -eu
cc=$1 courier=$2 src=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$cc" -shared -fPIC "$src/shlib_lib.c" -o "$out/libshlib.so"
syms=$(nm -D "$out/libshlib.so")
if echo "$syms" | grep -Eq ' (T __wrap_main|U main)$'; then
    echo "the library defines __wrap_main or needs main:"; echo "$syms"; exit 1
fi
"$cc" "$src/shlib_prog.c" -L"$out" -lshlib -Wl,-rpath,"$out" -o "$out/prog"
for mode in "" "--sim cluster"; do
    # shellcheck disable=SC2086
    "$courier" run $mode -n 3 --timeout 60 "$out/prog" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
    for r in 0 1 2; do
        grep -q "shlib rank $r sum 126" "$out/log" || { echo "rank $r missing ($mode):"; cat "$out/log"; exit 1; }
    done
done
"$cc" -c "$src/shlib_prog.c" -o "$out/main.o"
ar rc "$out/libmain.a" "$out/main.o"
"$cc" -o "$out/prog_ar" "$out/libmain.a" -L"$out" -lshlib -Wl,-rpath,"$out"
for mode in "" "--sim cluster"; do
    # shellcheck disable=SC2086
    "$courier" run $mode -n 3 --timeout 60 "$out/prog_ar" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
    grep -q "shlib rank 1 sum 126" "$out/log" || { echo "main in an archive ($mode):"; cat "$out/log"; exit 1; }
done
show=$("$cc" --showme -c x.c -o x.o)
case $show in *" -c x.c -o x.o"*) ;; *) echo "--showme -c x.c: $show"; exit 1 ;; esac
case $show in *-lcourier*) echo "--showme -c links: $show"; exit 1 ;; esac
show=$("$cc" x.c -showme -o x)
case $show in *" x.c -o x "*-lcourier*) ;; *) echo "x.c -showme: $show"; exit 1 ;; esac
echo "cc shared ok"
