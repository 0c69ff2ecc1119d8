/* The memory a job uses on this host, and how long it takes, for
 * bench/scale-run.sh: runs a job of bench/memhold (any launcher: courier run,
 * orterun), waits until its ranks hold still, reads every process of the job
 * and /proc/meminfo, lets the job go and times its end. Plain C, no library.
 *
 *   memsample [--timeout S] [--guard-kb KB] RANK_NAME READY RELEASE -- CMD ARGS...
 * CMD is started in a process group of its own; memsample is the subreaper of
 * everything under it, so ranks that outlive their launcher are still found
 * and ended. When the file READY appears (memhold's rank 0 creates it once every
 * rank has passed the ring and a barrier), memsample reads smaps_rollup of
 * every descendant of CMD: those whose name (comm) is RANK_NAME are the ranks,
 * the others (the launcher, helpers) are counted apart; then creates RELEASE
 * and waits for CMD to end. Meanwhile it watches the machine's memory: if
 * MemAvailable falls under --guard-kb (default: a tenth of MemTotal, at least
 * 2 GiB) or the cgroup's memory.current passes 90% of its memory.max, the job
 * is ended ("memguard") instead of taking the machine down; past --timeout
 * (default 60 s) likewise ("timeout").
 * Prints one line of key=value: status (ok, exit:N, signal:N, timeout,
 * memguard, noready), t_ready_s (start to READY), t_exit_s (start to the end
 * of CMD), t_release_exit_s, nranks, the ranks' rss/pss/pss_anon/pss_file/
 * pss_shmem in kB, helpers and helper_pss_kb, Shmem of /proc/meminfo before,
 * at the sample and at its peak, MemTotal-MemAvailable likewise (used_*), the
 * cgroup's memory.current likewise (cg_*; -1 when there is none), and the
 * seconds the sample took. Exit status 0 when status is ok. The job's own
 * output goes to standard error. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long meminfo(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, k) && line[k] == ':') {
            v = atol(line + k + 1);
            break;
        }
    if (f) fclose(f);
    return v;
}

static long long read_ll(const char *path) /* a file holding one number; -1 if none */
{
    FILE *f = fopen(path, "r");
    char buf[64];
    long long v = -1;
    if (f && fgets(buf, sizeof buf, f) && buf[0] >= '0' && buf[0] <= '9') v = atoll(buf);
    if (f) fclose(f);
    return v;
}

static long cg_kb(void)
{
    long long v = read_ll("/sys/fs/cgroup/memory.current");
    if (v < 0) v = read_ll("/sys/fs/cgroup/memory/memory.usage_in_bytes");
    return v < 0 ? -1 : (long)(v / 1024);
}

static long cg_max_kb(void)
{
    long long v = read_ll("/sys/fs/cgroup/memory.max");
    if (v < 0) v = read_ll("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    return v < 0 || v > (1LL << 50) ? -1 : (long)(v / 1024);
}

static long used_kb(void)
{
    return meminfo("MemTotal") - meminfo("MemAvailable");
}

/* ---- the processes under the job ------------------------------------------- */
typedef struct {
    int pid, ppid, mark;
} proc;
static proc *procs;
static int nprocs, cap;

static int ppid_of(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
    int ppid;
    char state;
    if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2) return -1;
    return ppid;
}

static void add(int pid, int ppid, int mark)
{
    if (nprocs == cap) {
        cap = cap ? 2 * cap : 4096;
        procs = realloc(procs, (size_t)cap * sizeof *procs);
        if (!procs) exit(2);
    }
    procs[nprocs++] = (proc){pid, ppid, mark};
}

/* Adds the descendants of pid through /proc/PID/task/TID/children (only the
 * job's own files are read); 0 when the kernel has no such files. */
static int children_of(int pid)
{
    char path[320];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    struct dirent *e;
    int found_file = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/%d/task/%s/children", pid, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        found_file = 1;
        int c;
        while (fscanf(f, "%d", &c) == 1) {
            add(c, pid, 1);
            children_of(c);
        }
        fclose(f);
    }
    if (d) closedir(d);
    return found_file;
}

/* Marks the descendants of root (root itself included); returns their count. */
static int scan(int root)
{
    static int have_children = -1;
    nprocs = 0;
    if (have_children < 0) {
        char path[96];
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", getpid(), getpid());
        have_children = access(path, R_OK) == 0;
    }
    if (have_children) {
        add(root, 0, 1);
        children_of(root);
        return nprocs;
    }
    DIR *d = opendir("/proc"); /* no children files: every process's parent */
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int pid = atoi(e->d_name);
        if (pid <= 0) continue;
        int pp = ppid_of(pid);
        if (pp >= 0) add(pid, pp, pid == root);
    }
    if (d) closedir(d);
    int count = 1;
    for (int changed = 1; changed;) { /* a few passes: the tree is shallow */
        changed = 0;
        for (int i = 0; i < nprocs; i++) {
            if (procs[i].mark) continue;
            for (int j = 0; j < nprocs; j++)
                if (procs[j].mark && procs[j].pid == procs[i].ppid) {
                    procs[i].mark = changed = 1;
                    count++;
                    break;
                }
        }
    }
    return count;
}

static int comm_is(int pid, const char *name)
{
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (!ok) return 0;
    buf[strcspn(buf, "\n")] = 0;
    return !strncmp(buf, name, 15) && strlen(buf) == (strlen(name) < 15 ? strlen(name) : 15);
}

enum { RSS, PSS, PSS_ANON, PSS_FILE, PSS_SHMEM, NF };
static const char *fields[NF] = {"Rss", "Pss", "Pss_Anon", "Pss_File", "Pss_Shmem"};

static int rollup(int pid, long *sum)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        for (int k = 0; k < NF; k++) {
            size_t l = strlen(fields[k]);
            if (!strncmp(line, fields[k], l) && line[l] == ':') sum[k] += atol(line + l + 1);
        }
    fclose(f);
    return 1;
}

/* Ends everything under the job: the launcher (alive: not yet waited for) and
 * its process group, then every process left under memsample (the subreaper). */
static void end_all(int child, int alive)
{
    if (alive) {
        kill(-child, SIGTERM);
        kill(child, SIGTERM);
        for (int i = 0; i < 100; i++) { /* the launcher's own clean-up, up to 5 s */
            if (waitpid(child, NULL, WNOHANG) == child) break;
            usleep(50000);
        }
        kill(-child, SIGKILL);
    }
    for (int round = 0; round < 100; round++) {
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }
        if (scan(getpid()) <= 1) break;
        for (int i = 0; i < nprocs; i++)
            if (procs[i].mark && procs[i].pid != getpid()) kill(procs[i].pid, SIGKILL);
        usleep(50000);
    }
}

int main(int argc, char **argv)
{
    double timeout = 60;
    long guard = -1;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = atof(argv[++i]);
        else if (!strcmp(argv[i], "--guard-kb") && i + 1 < argc)
            guard = atol(argv[++i]);
        else
            goto usage;
    }
    if (argc - i < 5 || strcmp(argv[i + 3], "--")) goto usage;
    const char *name = argv[i], *ready = argv[i + 1], *release = argv[i + 2];
    char **cmd = argv + i + 4;
    long total = meminfo("MemTotal");
    if (guard < 0) guard = total / 10 > (2L << 20) ? total / 10 : (2L << 20);
    long cgmax = cg_max_kb();
    unlink(ready);
    unlink(release);
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    long shmem0 = meminfo("Shmem"), used0 = used_kb(), cg0 = cg_kb();
    long shmem_peak = shmem0, used_peak = used0, cg_peak = cg0;
    double t0 = now();
    pid_t child = fork();
    if (child < 0) return 2;
    if (child == 0) {
        setpgid(0, 0);
        dup2(2, 1); /* the job's output is not this line's */
        execvp(cmd[0], cmd);
        fprintf(stderr, "memsample: cannot run %s: %s\n", cmd[0], strerror(errno));
        _exit(127);
    }
    setpgid(child, child);

    char status[32] = "noready";
    double t_ready = -1, t_exit = -1, t_rel = -1, sample_s = 0;
    long sum[NF] = {0}, helper[NF] = {0}, shmem_s = -1, used_s = -1, cg_s = -1;
    int nranks = 0, nhelpers = 0, done = 0, st = 0;
    while (!done) {
        long sh = meminfo("Shmem"), us = used_kb(), cg = cg_kb();
        if (sh > shmem_peak) shmem_peak = sh;
        if (us > used_peak) used_peak = us;
        if (cg > cg_peak) cg_peak = cg;
        if (total - us < guard || (cgmax > 0 && cg > cgmax / 10 * 9)) {
            strcpy(status, "memguard");
            end_all(child, 1);
            break;
        }
        if (waitpid(child, &st, WNOHANG) == child) {
            t_exit = now() - t0;
            if (t_ready >= 0) t_rel = t_exit - t_rel;
            if (WIFEXITED(st))
                snprintf(status, sizeof status, WEXITSTATUS(st) ? "exit:%d" : "ok",
                         WEXITSTATUS(st));
            else
                snprintf(status, sizeof status, "signal:%d", WTERMSIG(st));
            if (t_ready < 0 && !strcmp(status, "ok")) strcpy(status, "noready");
            end_all(child, 0); /* anything it left behind */
            break;
        }
        if (now() - t0 > timeout) {
            strcpy(status, "timeout");
            end_all(child, 1);
            break;
        }
        if (t_ready < 0 && access(ready, F_OK) == 0) {
            t_ready = now() - t0;
            double s0 = now();
            scan(child);
            for (int k = 0; k < nprocs; k++) {
                if (!procs[k].mark) continue;
                if (comm_is(procs[k].pid, name))
                    nranks += rollup(procs[k].pid, sum);
                else
                    nhelpers += rollup(procs[k].pid, helper);
            }
            shmem_s = meminfo("Shmem");
            used_s = used_kb();
            cg_s = cg_kb();
            sample_s = now() - s0;
            FILE *f = fopen(release, "w");
            if (f) fclose(f);
            t_rel = now() - t0;
        }
        usleep(t_ready < 0 ? 50000 : 20000);
    }
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    printf("status=%s t_ready_s=%.3f t_exit_s=%.3f t_release_exit_s=%.3f nranks=%d rss_kb=%ld "
           "pss_kb=%ld pss_anon_kb=%ld pss_file_kb=%ld pss_shmem_kb=%ld helpers=%d "
           "helper_pss_kb=%ld shmem0_kb=%ld shmem_kb=%ld shmem_peak_kb=%ld used0_kb=%ld "
           "used_kb=%ld used_peak_kb=%ld cg0_kb=%ld cg_kb=%ld cg_peak_kb=%ld sample_s=%.3f\n",
           status, t_ready, t_exit, t_rel, nranks, sum[RSS], sum[PSS], sum[PSS_ANON], sum[PSS_FILE],
           sum[PSS_SHMEM], nhelpers, helper[PSS], shmem0, shmem_s, shmem_peak, used0, used_s,
           used_peak, cg0, cg_s, cg_peak, sample_s);
    unlink(ready);
    unlink(release);
    return strcmp(status, "ok") ? 1 : 0;
usage:
    fprintf(stderr, "usage: memsample [--timeout S] [--guard-kb KB] RANK_NAME READY RELEASE -- "
                    "CMD ARGS...\n");
    return 2;
}
