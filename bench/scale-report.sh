#!/bin/bash
# Markdown tables from what bench/scale-run.sh wrote (raw.txt, machine.txt):
# medians of the repetitions and courier / Open MPI ratios (below 1: courier
# faster, or smaller; bandwidth: above 1 is courier faster), like
# bench/results/*.md. One awk program (it also runs on the device machine,
# where every second counts).
#   bench/scale-report.sh DIR      (DIR holds raw.txt and machine.txt)
# raw.txt: one sample a line, "IMPL ALG RANKS METRIC SIZE VALUE"; IMPL courier,
# courier-mpi, ompi or floor; ALG a COURIER_COLL_ALG name or "-"; VALUE a
# number, NA, or for fail:* and mem:status lines a word.
set -u
dir=${1:?usage: $0 DIR (with raw.txt and machine.txt from bench/scale-run.sh)}
[ -f "$dir/raw.txt" ] || { echo "no $dir/raw.txt" >&2; exit 2; }
touch "$dir/machine.txt" 2>/dev/null
awk '
function key(i, a, n, m, s) { return i SUBSEP a SUBSEP n SUBSEP m SUBSEP s }
function med(k,    c, i, j, t, v) {          # median of the samples under k; "NA" if none
    c = cnt[k]; if (!c) return "NA"
    for (i = 1; i <= c; i++) v[i] = val[k, i]
    for (i = 2; i <= c; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
}
function ratio(a, b) { return (a == "NA" || b == "NA" || b == 0) ? "—" : sprintf("%.2f", a / b) }
function na(v) { return v == "NA" ? "—" : v >= 1000 ? sprintf("%.0f", v) : v >= 100 ? sprintf("%.1f", v) : v >= 1 ? sprintf("%.2f", v) : sprintf("%.3f", v) }
function mib(v) { return v == "NA" ? "—" : sprintf("%.1f", v / 1024) }
function human(s) { return s >= 1048576 ? (s / 1048576) " MiB" : s >= 1024 ? (s / 1024) " KiB" : s " B" }
function log2up(n,    r, k) { r = 0; for (k = 1; k < n; k *= 2) r++; return r }
FILENAME ~ /machine\.txt$/ { f = $1; $1 = ""; sub(/^ /, ""); M[f] = $0; next }     # machine.txt
{
    i = $1; a = $2; n = $3; m = $4; s = $5; v = $6
    if (m ~ /^fail:/) { sub(/^fail:/, "", m); fl = "- " i (a == "-" ? "" : " (" a ")") ", " n " ranks, " m ": " v
                        if (!(fl in fails)) forder[++nf] = fl; fails[fl]++; next }
    if (m == "mem:status") { k = i SUBSEP n; if (k in st) st[k] = st[k] ", " v; else st[k] = v
                             if (!((n) in memn)) { memn[n] = 1; mlist[++nm] = n }
                             if (!((n, i) in memi)) { memi[n, i] = 1; mimp[n] = mimp[n] " " i }
                             next }
    if (v == "NA" || v !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) next
    k = key(i, a, n, m, s); val[k, ++cnt[k]] = v + 0
    if (i == "courier" && a != "-" && !(a in algseen)) { algseen[a] = 1; algs[++na_] = a }
    if ((m ~ /^(coll|mb):/) && (i == "courier" || i == "ompi")) {
        t = (m ~ /^coll:/) ? "coll" : "mb"
        if (!((t, n, m, s) in rowseen)) { rowseen[t, n, m, s] = 1; rows[t, ++nrows[t]] = n SUBSEP m SUBSEP s }
    }
    if (m == "ring" && i != "floor" && !(n in ringseen)) { ringseen[n] = 1; rings[++nr] = n }
    if (m == "launch" && !(n in lseen)) { lseen[n] = 1; launches[++nl] = n }
}
END {
    cpus = M["cpus"] + 0; if (!cpus) cpus = 1
    printf "Machine: %s cores, %s, %s, %s, %s; memory %s kB, cgroup memory.max %s, pids.max %s, /dev/shm %s; %s.\n",
        cpus, M["model"], M["kernel"], M["os"], M["glibc"], M["memtotal_kb"], M["cgroup_memory_max"], M["cgroup_pids_max"], M["dev_shm"], M["date"]
    printf "Open MPI: %s (btl self,vader, pml ob1; orterun --oversubscribe, --bind-to none past %d ranks). courier: %s.\n", M["ompi"], cpus, M["courier"]
    printf "Settings: algs %s; np %s.\n", M["algs"], M["np"]
    print "Medians of the repetitions; ratios courier / Open MPI (times: below 1 is courier faster; bandwidth: above 1)."

    line = med(key("floor", "-", 2, "line", 0))
    print "\n## Point to point (2 ranks), token ring, launch\n"
    print "| measure | courier | Open MPI | courier/Open MPI | floor without a library (bench/floors) |"
    print "|---|---|---|---|---|"
    split("0 8 1024 65536", L, " ")
    for (j = 1; j <= 4; j++) {
        c = med(key("courier", "-", 2, "lat", L[j])); o = med(key("ompi", "-", 2, "lat", L[j]))
        if (c o == "NANA") continue
        printf "| NX/2 echo latency %s (one way) | %s us | %s us | %s | %s |\n", human(L[j]), na(c), na(o), ratio(c, o),
            ((L[j] == 0 && line != "NA") ? na(line) " us (one cache line, one way)" : "")
    }
    split("1048576 4194304", B, " ")
    for (j = 1; j <= 2; j++) {
        c = med(key("courier", "-", 2, "bw", B[j])); o = med(key("ompi", "-", 2, "bw", B[j]))
        if (c o == "NANA") continue
        printf "| NX/2 echo bandwidth %s | %s MB/s | %s MB/s | %s | |\n", human(B[j]), na(c), na(o), ratio(c, o)
    }
    for (j = 1; j <= nr; j++) {
        n = rings[j]; c = med(key("courier", "-", n, "ring", 0)); o = med(key("ompi", "-", n, "ring", 0))
        f = med(key("floor", "-", n, "ring", 0))
        printf "| token ring, %d ranks on %d cores%s, per hop | %s us | %s us | %s | %s |\n", n, cpus,
            (n > cpus ? sprintf(", oversubscribed %gx", n / cpus) : ""), na(c), na(o), ratio(c, o),
            (f == "NA" ? "" : na(f) " us (a yield-waiting ring of " n " processes)")
    }
    for (j = 1; j <= nl; j++) {
        n = launches[j]; c = med(key("courier", "-", n, "launch", 0)); o = med(key("ompi", "-", n, "launch", 0))
        printf "| launch, %d ranks: MPI_Init + MPI_Finalize, the launcher'"'"'s wall time | %s ms | %s ms | %s | |\n", n, na(c), na(o), ratio(c, o)
    }

    for (tb = 1; tb <= 2; tb++) {
        t = tb == 1 ? "coll" : "mb"
        if (!nrows[t]) continue
        if (t == "coll") print "\n## Collectives (bench/coll.c'"'"'s measurement through bench/coll_sizes; courier'"'"'s MPL), us per operation, the slowest rank'"'"'s\n"
        else print "\n## MPI (bench/mpi/mb.c), us per call (latency: one way; multi: multi-pair latency)\n"
        h = "| ranks | operation | bytes | Open MPI |"; sep = "|---|---|---|---|"
        for (j = 1; j <= na_; j++) { h = h " courier " algs[j] " | " algs[j] " / Open MPI |"; sep = sep "---|---|" }
        if (na_ > 1) { h = h " best courier / Open MPI |"; sep = sep "---|" }
        print h " floor |"; print sep "---|"
        for (r = 1; r <= nrows[t]; r++) {
            split(rows[t, r], R, SUBSEP); n = R[1]; m = R[2]; s = R[3]; op = m; sub(/^[a-z]+:/, "", op)
            o = med(key("ompi", "-", n, m, s))
            out = sprintf("| %s | %s | %s | %s |", n, op, human(s), na(o)); best = "NA"
            for (j = 1; j <= na_; j++) {
                c = med(key("courier", algs[j], n, m, s))
                if (c == "NA" && j == 1) c = med(key("courier", "-", n, m, s))   # no algorithm: latency, multi
                out = out sprintf(" %s | %s |", na(c), ratio(c, o))
                if (c != "NA" && (best == "NA" || c < best)) best = c
            }
            if (na_ == 0) { c = med(key("courier", "-", n, m, s)); best = c }
            if (na_ > 1) out = out " " ratio(best, o) " |"
            fl = ""
            if (op == "barrier" || (op == "allreduce" && s == 8)) {
                # ceil(log2 n) rounds, each one cache line one way (oversubscribed: a yield-ring hop)
                rr = log2up(n)
                if (n <= cpus) { f = line; w = "line" } else { f = med(key("floor", "-", n, "ring", 0)); w = "ring " n " hop" }
                if (f != "NA") fl = sprintf("%.3f (%d x %s)", rr * f, rr, w)
            }
            print out " " fl " |"
        }
    }

    if (nm) {
        print "\n## Memory of a job on one host (bench/memhold under bench/memsample), MiB\n"
        print "The ring holds still after a barrier, then every process under the launcher is read. PSS: the ranks'"'"'"
        print "proportional set size (smaps_rollup), which holds their share of the shared memory they map (Pss_Shmem);"
        print "Shmem: /proc/meminfo'"'"'s Shmem at the sample less before the launch (memfd and /dev/shm segments, pages"
        print "touched); total = PSS - Pss_Shmem + Shmem (each page once); used: MemTotal - MemAvailable at the sample"
        print "less before. ready: launch to every rank past the ring and a barrier (s); release->exit: from the sample'"'"'s"
        print "end to the launcher'"'"'s exit (s)."
        print ""
        print "| ranks | implementation | status | ready s | release->exit s | ranks seen | PSS | Pss_Shmem | Shmem | Shmem peak | total | total / rank | used | launcher, helpers PSS | total / Open MPI'"'"'s |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for (j = 1; j <= nm; j++) {
            n = mlist[j]
            for (pass = 1; pass <= 2; pass++) {       # Open MPI'"'"'s total first, for the ratios
                ni = split(mimp[n], I, " ")
                for (q = 1; q <= ni; q++) {
                    i = I[q]
                    pss = med(key(i, "-", n, "mem:pss_kb", 0)); ps = med(key(i, "-", n, "mem:pss_shmem_kb", 0))
                    s0 = med(key(i, "-", n, "mem:shmem0_kb", 0)); s1 = med(key(i, "-", n, "mem:shmem_kb", 0))
                    sp = med(key(i, "-", n, "mem:shmem_peak_kb", 0))
                    u0 = med(key(i, "-", n, "mem:used0_kb", 0)); u1 = med(key(i, "-", n, "mem:used_kb", 0))
                    nrk = med(key(i, "-", n, "mem:nranks", 0))
                    shd = (s1 == "NA" || s0 == "NA" || s1 < 0) ? "NA" : s1 - s0
                    spd = (sp == "NA" || s0 == "NA") ? "NA" : sp - s0
                    ud = (u1 == "NA" || u0 == "NA" || u1 < 0) ? "NA" : u1 - u0      # -1: no sample
                    tot = (pss == "NA" || pss == 0 || shd == "NA") ? "NA" : pss - (ps == "NA" ? 0 : ps) + shd
                    if (pass == 1) { if (i == "ompi") ototal[n] = tot; continue }
                    rd = med(key(i, "-", n, "mem:t_ready_s", 0)); rx = med(key(i, "-", n, "mem:t_release_exit_s", 0))
                    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", n, i, st[i, n],
                        ((rd == "NA" || rd < 0) ? "—" : rd), ((rx == "NA" || rx < 0) ? "—" : rx), (nrk == "NA" ? "—" : nrk),
                        (nrk > 0 ? mib(pss) : "—"), (nrk > 0 ? mib(ps) : "—"), mib(shd), mib(spd), mib(tot),
                        ((tot == "NA" || nrk == "NA" || nrk == 0) ? "—" : sprintf("%.2f", tot / nrk / 1024)), mib(ud),
                        (nrk > 0 ? mib(med(key(i, "-", n, "mem:helper_pss_kb", 0))) : "—"),
                        (i == "ompi" ? "—" : ratio(tot, ((n in ototal) ? ototal[n] : "NA")))
                }
            }
        }
    }

    if (nf) {
        print "\n## Runs that failed, were cut off or skipped\n"
        for (j = 1; j <= nf; j++) print forder[j] (fails[forder[j]] > 1 ? " (" fails[forder[j]] " times)" : "")
    }
}' "$dir/machine.txt" "$dir/raw.txt"
