#!/bin/sh
# platform.sh: write a SimGrid platform (one <cluster> element) and its
# hostfile for bench/sim/run.sh.
#   platform.sh N BANDWIDTH LATENCY OUT_PREFIX
# e.g. platform.sh 256 50MBps 1us /tmp/x  writes /tmp/x.xml (hosts node-0 ..
# node-255, each with a private link of BANDWIDTH and LATENCY to the cluster's
# switch; no backbone, so only the hosts' own links are shared) and /tmp/x.hosts
# (one host per line, one rank per host).
set -eu
if [ $# -ne 4 ]; then
    echo "usage: platform.sh N BANDWIDTH LATENCY OUT_PREFIX" >&2
    exit 2
fi
n=$1 bw=$2 lat=$3 out=$4
case $n in '' | *[!0-9]*) echo "platform.sh: N must be a number" >&2; exit 2 ;; esac
cat > "$out.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="cluster" prefix="node-" suffix="" radical="0-$((n - 1))"
           speed="1Gf" bw="$bw" lat="$lat"/>
</platform>
XML
i=0
: > "$out.hosts"
while [ "$i" -lt "$n" ]; do
    echo "node-$i" >> "$out.hosts"
    i=$((i + 1))
done
