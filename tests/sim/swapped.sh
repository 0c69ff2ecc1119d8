#!/bin/bash
# The data a switch between ranks copies (src/host/contexts.c): libcourier's
# writable data past its read-only-after-relocation part, copied out of the
# running rank and into the next one at every switch (once per message of an
# all-to-all). The job struct is on the heap (src/core/job.c) and only a
# pointer to it is in that data: with the struct there it was 2,544 bytes, now
# about 560. Fails when it grows past LIMIT (a big global added to the library
# slows every simulated job with many ranks).
#   swapped.sh LIBCOURIER [LIMIT_BYTES]   (default 1024)
set -u
lib=$1 limit=${2:-1024}
command -v readelf >/dev/null || { echo "SKIP: no readelf (binutils)"; exit 77; }
page=$(getconf PAGESIZE 2>/dev/null || echo 4096)
segs=() relro=0
while read -r type off vaddr paddr filesz memsz flags rest; do
    case $type in
    LOAD) [[ $flags == *W* ]] && segs+=("$((vaddr)) $((vaddr + memsz))") ;;
    GNU_RELRO) relro=$(((vaddr + memsz) / page * page)) ;;
    esac
done < <(readelf -lW "$lib" | awk '$1 == "LOAD" || $1 == "GNU_RELRO"')
bytes=
for s in "${segs[@]}"; do
    read -r lo hi <<< "$s"
    ((relro > lo && relro <= hi)) && lo=$relro
    bytes=$((${bytes:-0} + hi - lo))
done
[ -n "$bytes" ] || { echo "swapped.sh: no writable segment found in $lib"; exit 1; }
if [ "$bytes" -gt "$limit" ]; then
    echo "swapped.sh: $lib: $bytes bytes of writable data are copied at each switch between" \
        "simulated ranks (over $limit): move the large globals into the job on the heap" \
        "(src/core/job.c, cr_the_job_ptr)"
    exit 1
fi
echo "swapped.sh: $lib: $bytes bytes swapped at a switch (limit $limit)"
