#!/usr/bin/env python3
# memwatch.py: the memory of a whole job, for bench/sim/run.sh.
#   memwatch.py ROOT_PID [INTERVAL_S]
# Every INTERVAL_S (default 0.5) until ROOT_PID ends, reads smaps_rollup of ROOT_PID,
# its descendants and every process of its session (when ROOT_PID leads one, so
# that ranks that outlive or leave their parent are still found), and sums Pss
# and Rss; the wrappers run.sh puts around a job (/usr/bin/time, timeout) are
# left out of the sums. At the end prints one line:
#   memwatch samples=S max_pss_kib=P max_rss_kib=R max_procs=C
# where P and R are the largest sums seen in one sample (not the sum of maxima).
import os
import sys
import time


def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    rest = s[s.rindex(")") + 2:].split()
    return int(rest[1]), int(rest[3])  # ppid, session id


def rollup(pid):
    pss = rss = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
            elif line.startswith("Rss:"):
                rss = int(line.split()[1])
    return pss, rss


def main():
    root = int(sys.argv[1])
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    me = os.getpid()
    try:
        _, root_sid = stat(root)
    except OSError:
        print("memwatch samples=0 max_pss_kib=0 max_rss_kib=0 max_procs=0")
        return
    leads_session = root_sid == root
    samples = max_pss = max_rss = max_procs = 0
    while os.path.exists(f"/proc/{root}"):
        procs = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            if pid == me:
                continue
            try:
                procs[pid] = stat(pid)
            except OSError:
                pass
        children = {}
        for pid, (ppid, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        job = set()
        todo = [root]
        while todo:
            p = todo.pop()
            if p in job:
                continue
            job.add(p)
            todo.extend(children.get(p, []))
        if leads_session:
            job.update(p for p, (_, sid) in procs.items() if sid == root_sid)
        pss = rss = n = 0
        for pid in job:
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() in ("time", "timeout"):
                        continue
                a, b = rollup(pid)
            except OSError:
                continue
            pss += a
            rss += b
            n += 1
        if n:
            samples += 1
            max_pss = max(max_pss, pss)
            max_rss = max(max_rss, rss)
            max_procs = max(max_procs, n)
        time.sleep(interval)
    print(f"memwatch samples={samples} max_pss_kib={max_pss} max_rss_kib={max_rss} "
          f"max_procs={max_procs}")


if __name__ == "__main__":
    main()
