#!/bin/sh
# The profiling interface is complete: every MPI_ function that mpi.h declares
# (the tools interface's MPI_T_ ones too) is also declared as PMPI_, and the
# library defines PMPI_name (strong) with MPI_name a weak symbol. Usage: pmpi_symbols.sh mpi.h libcourier.so
set -eu
hdr=$1 lib=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Functions: a declaration line starts with the return type and the name.
sed -n 's/^\(int\|double\|MPI_Aint\|MPI_Fint\|MPI_Message\|MPI_Comm\|MPI_Datatype\|MPI_Group\|MPI_Op\|MPI_Request\|MPI_Info\|MPI_Win\|MPI_Errhandler\|MPI_File\|MPI_Session\) \(P\{0,1\}MPI_\(T_[a-z]\|[A-Z][a-z]\)[A-Za-z0-9_]*\)(.*/\2/p' "$hdr" | sort -u >"$tmp/decl"
grep '^MPI_' "$tmp/decl" | sed 's/^/P/' >"$tmp/want_p"
grep '^PMPI_' "$tmp/decl" >"$tmp/have_p"
nm -D --defined-only "$lib" >"$tmp/nm"
awk '$2 == "T" && $3 ~ /^PMPI_/ {print $3}' "$tmp/nm" | sort -u >"$tmp/strong"
awk '$2 == "W" && $3 ~ /^MPI_/ {print "P" $3}' "$tmp/nm" | sort -u >"$tmp/weak"
bad=0
for f in have_p strong weak; do
    if ! diff -u "$tmp/want_p" "$tmp/$f" >"$tmp/d"; then
        echo "pmpi_symbols: $f differs from the PMPI_ names of mpi.h's MPI_ functions:"
        grep '^[-+]P' "$tmp/d"
        bad=1
    fi
done
[ "$bad" = 0 ] && echo "pmpi_symbols: $(wc -l <"$tmp/want_p") functions, each PMPI_ (strong) and MPI_ (weak)"
exit "$bad"
