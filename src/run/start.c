/* Starting this host's ranks (start_here): the job's shared segment and
 * secret, where each rank may run (--bind), and each rank's process, or under
 * --sim the one process whose contexts are the ranks, with its environment
 * (courier's settings, the library path to courier's libmpi_abi.so, and what
 * MPI_Comm_spawn needs to place a new job).
 *
 * Invariants: the segment is a memfd (no name anywhere, gone with the last
 * process that holds it: nothing is ever left in /dev/shm); the secret is a
 * sealed memfd each rank reads once; every rank runs in the job's own process
 * group and has PR_SET_PDEATHSIG (SIGKILL), so no rank outlives the launcher or
 * agent that started it, even one killed by SIGKILL. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../host/host.h"
#include "../transport/transport.h"
#include "hosts.h"
#include "launcher.h"
#include "progfile.h"
#include "vsim.h"

#include "launch_internal.h"

/* ---- starting ranks ------------------------------------------------------ */

static size_t segment_size(int n)
{
    return cr_host_segment_size(n, cr_shm_region_size(n));
}

/* The job's segment (cr_shm_segment_make) and the launcher's own view of its
 * control part: the watchdog reads the ranks' status records there. */
static int make_segment(int n, int here, int cpus, size_t *len, void **control)
{
    /* A rank for each CPU at most among this host's (job.c's rule for
     * "oversubscribed"): sleeping is rare */
    int fd = cr_shm_segment_make(n, here <= cpus ? CR_HOST_SLEEPERS_FENCE : 0, len);
    if (fd < 0) return -1;
    *control = mmap(NULL, cr_host_control_size(n), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (*control != MAP_FAILED) return fd;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* The job's secret (32 random bytes): what proves that a connection comes from
 * a rank of this job (the tcp transport's handshake). It goes to the ranks in a
 * memfd sealed against writes, inherited, which each rank reads once and closes:
 * never in argv, the environment or a file another user could read. */
int random_key(unsigned char key[32])
{
    size_t got = 0;
    while (got < 32) {
        ssize_t n = getrandom(key + got, 32 - got, 0);
        if (n < 0 && errno != EINTR) return -1;
        if (n > 0) got += (size_t)n;
    }
    return 0;
}

static int make_secret(const unsigned char key[32])
{
    int fd = memfd_create("courier-secret", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    if (write(fd, key, 32) != 32 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

#ifndef COURIER_LIBDIR /* the build gives the install's (CMAKE_INSTALL_LIBDIR) */
#define COURIER_LIBDIR "lib"
#endif

/* A library of courier's (name), beside libcourier: from the build tree's
 * tools/courier, ../src (../src/abi for libmpi_abi); from an installed
 * bin/courier, ../<libdir>. Its full path into out, or "" when it is not
 * there. */
static void find_beside(const char *name, char out[PATH_MAX])
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    out[0] = '\0';
    if (n <= 0) return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    const char *rel[] = {"../src", "../src/abi", ("../" COURIER_LIBDIR)};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s/%s/%s", self, rel[i], name) < (int)sizeof p &&
            access(p, R_OK) == 0 && realpath(p, out))
            return;
    }
    out[0] = '\0';
}

/* Put lib first in the preloads of the rank's programs (in the child). */
static void preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    char pre[PATH_MAX * 2];
    snprintf(pre, sizeof pre, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    setenv("LD_PRELOAD", pre, 1);
    /* A program built with AddressSanitizer wants its runtime first of all;
     * courier's preloads replace no memory function (but shared='s, which is
     * not for such programs), so that check may go. */
    const char *asan = getenv("ASAN_OPTIONS");
    if (asan && strstr(asan, "verify_asan_link_order=0")) return;
    snprintf(pre, sizeof pre, "%s%sverify_asan_link_order=0", asan ? asan : "",
             asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", pre, 1);
}

/* A program built for the MPI-5 standard ABI needs libmpi_abi.so.1 (or .so.0,
 * the name before July 2026: a link to it) by its soname, wherever it was
 * linked: the rank's library path ends with courier's
 * directory of it (dir), after the user's own entries, which come first (the
 * dynamic loader reads LD_LIBRARY_PATH before a program's run path). A
 * directory already there is not added again (a spawned job's ranks). In the
 * child. */
static void abi_library_path(const char *dir)
{
    const char *old = getenv("LD_LIBRARY_PATH");
    if (!dir[0]) return;
    if (!old || !*old) {
        setenv("LD_LIBRARY_PATH", dir, 1);
        return;
    }
    size_t n = strlen(dir);
    for (const char *p = old; p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, dir, n)) return;
        p = end ? end + 1 : NULL;
    }
    char path[PATH_MAX * 4];
    if (snprintf(path, sizeof path, "%s:%s", old, dir) < (int)sizeof path)
        setenv("LD_LIBRARY_PATH", path, 1);
}

/* Exec rank `rank` of app appnum, its stdout and stderr the pipe ends w
 * (rank_pipes). rank -1: the process of every rank, as contexts (--sim): w is
 * rank 0's, and ctx_fds lists the other ranks' (stdout,stderr,...); probe:
 * the library to preload into a script's programs (probe.c), or NULL. */
static void child_exec(job_spec *js, int rank, int appnum, int segfd, const int w[2], pid_t parent,
                       const char *ctx_fds, const char *probe)
{
    setpgid(0, js->pgid);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* the launcher is already gone */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL); /* the launcher ignores it; an ignored signal survives exec */
    dup2(w[0], 1);
    dup2(w[1], 2);
    if (rank <= 0 && js->in_pipe[0] >= 0) { /* across hosts: what the launcher reads */
        dup2(js->in_pipe[0], 0);
    } else if (rank > 0) {
        int dn = open("/dev/null", O_RDONLY);
        if (dn >= 0) dup2(dn, 0);
    }
    /* The rank gets stdin/stdout/stderr and the segment, nothing else the launcher
     * inherited (a test harness's pipes, a shell's descriptors). */
    if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
        for (int fd = 3; fd < 1024; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(segfd, F_SETFD, fcntl(segfd, F_GETFD) & ~FD_CLOEXEC);
    fcntl(js->secretfd, F_SETFD, fcntl(js->secretfd, F_GETFD) & ~FD_CLOEXEC);
    char v[32];
    if (rank >= 0) {
        snprintf(v, sizeof v, "%d", rank);
        setenv("COURIER_RANK", v, 1);
    } else { /* contexts: each rank's COURIER_RANK is set in its context */
        unsetenv("COURIER_RANK");
        for (const char *p = ctx_fds + (strncmp(ctx_fds, "mux:", 4) ? 0 : 4); *p;) {
            char *end;
            int fd = (int)strtol(p, &end, 10);
            fcntl(fd, F_SETFD, 0);
            p = *end ? end + 1 : end;
        }
        snprintf(v, sizeof v, "%d", js->cmd.total);
        setenv("COURIER_SIM_CONTEXTS", v, 1);
        setenv("COURIER_CTX_FDS", ctx_fds, 1);
    }
    snprintf(v, sizeof v, "%d", js->cmd.total);
    setenv("COURIER_SIZE", v, 1);
    snprintf(v, sizeof v, "%d", segfd);
    setenv("COURIER_SHM_FD", v, 1);
    snprintf(v, sizeof v, "%d", js->secretfd);
    setenv("COURIER_SECRET_FD", v, 1);
    snprintf(v, sizeof v, "%d", appnum);
    setenv("COURIER_APPNUM", v, 1);
    setenv("COURIER_HOST_RANK", "0", 1);
    setenv("COURIER_LAUNCHED", "1", 1);
    { /* MPI_Comm_spawn starts its new job with this courier (src/api/mpi_dyn.c) */
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = '\0';
            setenv("COURIER_RUN", self, 1);
        }
    }
    /* Across hosts, MPI_Comm_spawn puts the new job's ranks on the job's hosts
     * (src/api/mpi_dyn.c): their names and rank counts, this rank's host, and
     * the command that starts an agent. On one host none (a spawned job's
     * ranks must not keep their parent's). */
    if (js->spawn_hosts) {
        setenv("COURIER_SPAWN_HOSTS", js->spawn_hosts, 1);
        setenv("COURIER_SPAWN_HOST", cr_tree_node_name(js->tree, js->tree->node), 1);
        setenv("COURIER_SPAWN_RSH", js->spawn_rsh, 1);
    } else {
        unsetenv("COURIER_SPAWN_HOSTS");
        unsetenv("COURIER_SPAWN_HOST");
        unsetenv("COURIER_SPAWN_RSH");
    }
    if (js->cmd.net)
        setenv("COURIER_NET", js->cmd.net, 1);
    else if (js->net_here[0])
        setenv("COURIER_NET", js->net_here, 1);
    if (js->layout) setenv("COURIER_HOST_LAYOUT", js->layout, 1);
    if (js->cmd.trace_dir) setenv("COURIER_TRACE", js->cmd.trace_dir, 1);
    if (js->vsim) {
        int fd = cr_vsim_fd(js->vsim);
        fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) & ~FD_CLOEXEC);
        snprintf(v, sizeof v, "%d", fd);
        setenv("COURIER_SIM_FD", v, 1);
        if (js->sim_preload[0]) /* the program's own timers read virtual time too */
            preload(js->sim_preload);
        /* shared=BYTES: a preload of its own shares the program's large buffers */
        if (cr_vsim_shared(js->vsim)) {
            if (js->sim_shared_preload[0]) preload(js->sim_shared_preload);
            snprintf(v, sizeof v, "%llu", (unsigned long long)cr_vsim_shared(js->vsim));
            setenv("COURIER_SIM_SHARED", v, 1);
        } else {
            unsetenv("COURIER_SIM_SHARED");
        }
    }
    /* A script's programs are seen only when they start: the probe names one
     * linked with another MPI library (src/run/probe.c). */
    snprintf(v, sizeof v, "%d", (int)getpid());
    setenv("COURIER_RANK_PID", v, 1);
    if (probe) preload(probe);
    abi_library_path(js->abi_dir);
    /* The CPUs the job has, whatever this rank is bound to: ranks judge from it
     * whether they outnumber the CPUs (and so must not spin). */
    snprintf(v, sizeof v, "%d", CPU_COUNT(&js->cpus));
    setenv("COURIER_CPUS", v, 1);
    if (js->bind && rank >= 0) {
        int n = CPU_COUNT(&js->cpus), i = rank - js->first, lo = i % n, hi = lo + 1;
        if (!js->one_each) { /* the i-th of count shares */
            lo = (int)((long)i * n / js->count);
            hi = (int)((long)(i + 1) * n / js->count);
        }
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int k = lo; k < hi; k++) CPU_SET(js->cpu_of[(js->cpu_start + k) % n], &set);
        sched_setaffinity(0, sizeof set, &set); /* a failure leaves the rank unbound */
    }
    char **argv = js->cmd.apps[appnum].argv;
    execvp(argv[0], argv);
    fprintf(stderr, "courier: rank %d: cannot execute %s: %s\n", rank, argv[0], strerror(errno));
    _exit(127);
}

/* The job's process group has a leader of its own that lives until the end, so
 * its id cannot be reused by an unrelated group while we may still signal it. */
static int start_leader(job_spec *js)
{
    pid_t me = getpid(), pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != me) _exit(0);
        for (;;) pause();
    }
    setpgid(pid, pid);
    js->pgid = pid;
    return 0;
}

/* Rank r's stdout and stderr: two pipes, whose read ends the launcher keeps
 * (r's streams, non-blocking) and whose write ends, w, go to the rank. 0 or -1. */
static int rank_pipes(job_spec *js, int r, int w[2])
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) < 0) return -1;
    if (pipe2(err, O_CLOEXEC) < 0) {
        close(out[0]);
        close(out[1]);
        return -1;
    }
    rank_proc *rp = &js->ranks[r];
    rp->s[0] = (stream){.fd = out[0], .out = 1};
    rp->s[1] = (stream){.fd = err[0], .out = 2};
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    w[0] = out[1];
    w[1] = err[1];
    return 0;
}

/* --sim with contexts: one process for every rank, with every rank's pipes;
 * or, where that many descriptors are more than the limit allows (about 4900
 * ranks at 20000) or COURIER_CTX_MUX=1 says so (tests), rank 0's pipes and one
 * pipe of frames for the others (ctx_mux). */
static int start_contexts(job_spec *js, int segfd)
{
    int n = js->cmd.total;
    struct rlimit rl;
    bool mux = (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
                4 * (rlim_t)n + 256 > rl.rlim_cur) ||
               (getenv("COURIER_CTX_MUX") && !strcmp(getenv("COURIER_CTX_MUX"), "1"));
    int np = mux ? 1 : n; /* ranks with pipes of their own */
    int *w = malloc((size_t)(np + 1) * 2 * sizeof *w);
    char *fds = malloc((size_t)np * 24 + 32);
    if (!w || !fds) {
        free(w);
        free(fds);
        errno = ENOMEM;
        return -1;
    }
    size_t len = 0;
    fds[0] = '\0';
    int made = 0, nw = 0, rc = -1;
    for (; made < np; made++) {
        if (rank_pipes(js, made, &w[2 * made]) < 0) goto out;
        nw += 2;
        if (made > 0)
            len += (size_t)sprintf(fds + len, "%s%d,%d", made > 1 ? "," : "", w[2 * made],
                                   w[2 * made + 1]);
    }
    if (mux && n > 1) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) goto out;
        fcntl(p[0], F_SETFL, O_NONBLOCK);
        js->mux = (ctx_mux){.fd = p[0]};
        for (int r = 1; r < n; r++) { /* streams without a pipe: mux_pump fills them */
            js->ranks[r].s[0].out = 1;
            js->ranks[r].s[1].out = 2;
        }
        w[nw++] = p[1];
        sprintf(fds, "mux:%d", p[1]);
    }
    pid_t me = getpid(), pid = fork();
    if (pid < 0) goto out;
    if (pid == 0) child_exec(js, -1, 0, segfd, w, me, fds, NULL);
    setpgid(pid, js->pgid);
    js->ctx_pid = pid;
    for (int r = 0; r < n; r++) {
        js->ranks[r].pid = pid;
        js->ranks[r].running = true;
    }
    rc = 0;
out:
    for (int i = 0; i < nw; i++) close(w[i]);
    free(w);
    free(fds);
    return rc;
}

/* An agent: the job's hosts and rsh command as MPI_Comm_spawn passes them to
 * the courier run it starts (--hosts, --rsh). 0, or -1: out of memory. */
static int spawn_places(job_spec *js)
{
    const cr_tree *t = js->tree;
    size_t hl = 1, rl = 1;
    for (int h = 0; h < t->nnodes - 1; h++) hl += strlen(t->hosts[h].name) + 16;
    for (int i = 0; t->rsh && t->rsh[i]; i++) rl += strlen(t->rsh[i]) + 1;
    js->spawn_hosts = malloc(hl);
    js->spawn_rsh = malloc(rl);
    if (!js->spawn_hosts || !js->spawn_rsh) return -1;
    size_t off = 0;
    for (int h = 0; h < t->nnodes - 1; h++)
        off += (size_t)snprintf(js->spawn_hosts + off, hl - off, "%s%s:%d", h ? "," : "",
                                t->hosts[h].name, t->hosts[h].count);
    js->spawn_hosts[off] = '\0';
    off = 0;
    for (int i = 0; t->rsh && t->rsh[i]; i++)
        off += (size_t)snprintf(js->spawn_rsh + off, rl - off, "%s%s", i ? " " : "", t->rsh[i]);
    js->spawn_rsh[off] = '\0';
    return 0;
}

static int start_ranks(job_spec *js, int segfd)
{
    find_beside("libcourier_probe.so", js->probe_preload);
    find_beside("libmpi_abi.so.1", js->abi_dir);
    char *slash = strrchr(js->abi_dir, '/');
    if (slash) *slash = '\0';
    if (js->agent && js->tree && spawn_places(js) < 0) return -1;
    pid_t me = getpid();
    if (start_leader(js) < 0) return -1;
    if (js->contexts) return start_contexts(js, segfd);
    if (js->agent && js->first == 0) {
        if (pipe2(js->in_pipe, O_CLOEXEC) < 0) return -1;
        fcntl(js->in_pipe[1], F_SETFL, O_NONBLOCK);
    }
    int rank = 0;
    for (int a = 0; a < js->cmd.napps; a++) {
        /* a script's programs get the probe (read once per program, not per rank) */
        const char *probe = js->probe_preload[0] && program_is_script(js->cmd.apps[a].argv[0])
                                ? js->probe_preload
                                : NULL;
        for (int k = 0; k < js->cmd.apps[a].n; k++, rank++) {
            if (rank < js->first || rank >= js->first + js->count) continue;
            int w[2];
            if (rank_pipes(js, rank, w) < 0) return -1;
            pid_t pid = fork();
            if (pid < 0) return -1;
            if (pid == 0) child_exec(js, rank, a, segfd, w, me, NULL, probe);
            setpgid(pid, js->pgid);
            rank_proc *rp = &js->ranks[rank];
            rp->pid = pid;
            rp->appnum = a;
            rp->running = true;
            close(w[0]);
            close(w[1]);
        }
    }
    return 0;
}

/* The simulated mode's timer shim (src/api/simclock.c). Without it the ranks
 * run on, and only courier's own timers (dclock, MPI_Wtime, ...) read virtual
 * time: said once. */
static void find_sim_preload(job_spec *js, const char *who)
{
    find_beside("libcourier_simclock.so", js->sim_preload);
    if (js->vsim && cr_vsim_shared(js->vsim)) {
        find_beside("libcourier_simshared.so", js->sim_shared_preload);
        if (!js->sim_shared_preload[0])
            fprintf(stderr,
                    "%s: --sim: libcourier_simshared.so is not beside courier; shared= shares "
                    "nothing (each rank's buffers are its own)\n",
                    who);
    }
    if (js->sim_preload[0]) return;
    fprintf(stderr,
            "%s: --sim: libcourier_simclock.so is not beside courier; the programs' own "
            "clock_gettime and gettimeofday read real time (dclock and MPI_Wtime are virtual)\n",
            who);
}

/* ---- starting a job --------------------------------------------------------- */

/* The signals the watch loop takes, from a descriptor. */
int signal_fd(void)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

void raise_fd_limit(int ranks)
{
    /* Two pipes per rank, both ends open while the ranks start: raise the
     * descriptor limit as far as we may, the hard one too where that is
     * allowed (CAP_SYS_RESOURCE) and the job needs it (16384 simulated ranks). */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl)) return;
    rlim_t need = 4 * (rlim_t)ranks + 256;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        struct rlimit more = {need, need};
        if (setrlimit(RLIMIT_NOFILE, &more) == 0) return;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int alloc_ranks(job_spec *js)
{
    js->in_fd = js->in_pipe[0] = js->in_pipe[1] = js->segfd = -1;
    js->mux.fd = -1;
    js->ranks = calloc((size_t)js->cmd.total, sizeof *js->ranks);
    if (!js->ranks) return -1;
    for (int r = 0; r < js->cmd.total; r++) js->ranks[r].s[0].fd = js->ranks[r].s[1].fd = -1;
    return 0;
}

/* The CPUs the job may use, and how its ranks are bound to them (start_here). */
static void choose_cpus(job_spec *js)
{
    /* Binding (docs/run.md has the figures). With more ranks than CPUs, a rank
     * left to migrate costs everyone a trip through the load balancer: one CPU
     * each, neighbours apart. Otherwise each rank gets CPUs of its own, a share
     * of cpus/count (on a machine with as many CPUs as ranks, one): with other
     * work on the machine the scheduler put two unbound ranks on one CPU and
     * every message then waited for a time slice (osu_latency, 8 B, 2 ranks on
     * 2 CPUs beside 4-8 CPU-bound processes: 27-442 us in some runs, against
     * 0.13-0.14 bound), while a rank's own threads keep the room of its share.
     * The shares start at the CPU the launcher runs on, so that jobs started
     * side by side (ctest -j) spread over the machine. A job of one rank is
     * left alone. */
    if (sched_getaffinity(0, sizeof js->cpus, &js->cpus) != 0) {
        CPU_ZERO(&js->cpus);
        CPU_SET(0, &js->cpus);
    }
    int ncpu = CPU_COUNT(&js->cpus), here = sched_getcpu();
    js->cpu_start = 0;
    for (int c = 0, k = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &js->cpus)) {
            if (c == here && js->count < ncpu) js->cpu_start = k;
            js->cpu_of[k++] = c;
        }
    js->one_each = js->cmd.bind == CR_BIND_CORE || js->count > ncpu;
    /* auto: CPUs of its own for each rank where there are enough; with more
     * ranks than CPUs none, as Open MPI does. There, bound ranks hand a CPU to
     * each other without the scheduler's moves on an idle machine (4 ranks on
     * 2 CPUs: osu_bcast 8 B 0.2 us bound, 0.29 unbound; osu_allreduce 1.7-1.8
     * against 1.8-2.8; Open MPI 0.43 and 9.3); but once other work takes a
     * CPU, the ranks bound to it can neither leave it nor be balanced away:
     * beside one CPU-bound process osu_bcast 0.8-12 us bound, 0.1-1.3
     * unbound (Open MPI 0.2-1.6), osu_allreduce 8-40 against 3.4-12, IMB
     * Allreduce 26-28 against 7-27. */
    js->bind = js->cmd.bind == CR_BIND_CORE ||
               (js->cmd.bind == CR_BIND_AUTO && js->count > 1 && js->count <= ncpu);
}

/* --sim: the simulator, the timer shim, and whether the ranks run as contexts
 * of one process. 0, or 1 after saying why not (who: as for start_here). */
static int start_sim(job_spec *js, const char *who)
{
    char err[300];
    js->vsim = cr_vsim_new(js->cmd.sim, js->cmd.total, err, sizeof err);
    if (!js->vsim) {
        fprintf(stderr, "%s: %s\n", who, err);
        return 1;
    }
    find_sim_preload(js, who);
    /* Ranks as contexts of one process where the program allows it
     * (docs/sim.md, "Ranks as contexts"); else processes. */
    int want = cr_vsim_ranks(js->vsim);
    if (want != CR_VSIM_RANKS_PROCESSES) {
        char path[PATH_MAX];
        const char *prog = js->cmd.apps[0].argv[0];
        const char *why = js->cmd.napps > 1              ? "the job runs several programs"
                          : js->count != js->cmd.total   ? "its ranks are on several hosts"
                          : !resolve_program(prog, path) ? "the program is not found"
                                                         : cr_progfile_contexts(path);
        /* auto: not where the ranks would share a library's globals (a tool
         * preloaded, or one the program loads); asked for, contexts it is */
        char lib[128], other[200];
        const char *pre = getenv("LD_PRELOAD");
        if (!why && want == CR_VSIM_RANKS_AUTO && pre && pre[strspn(pre, " :")]) {
            why = "a library is preloaded (LD_PRELOAD)";
        } else if (!why && want == CR_VSIM_RANKS_AUTO &&
                   cr_progfile_other_lib(path, lib, sizeof lib)) {
            snprintf(other, sizeof other, "it loads %s", lib);
            why = other;
        }
        if (!why) {
            js->contexts = true;
            cr_vsim_use_contexts(js->vsim);
        } else if (want == CR_VSIM_RANKS_CONTEXTS) {
            fprintf(stderr,
                    "%s: --sim ranks=contexts: %s cannot run its ranks as contexts: %s; "
                    "leave ranks= out to run them as processes\n",
                    who, prog, why);
            return 1;
        }
    }
    return 0;
}

/* This host's part of the job: its segment and secret, then its ranks (first ..
 * first+count-1). 0, or 1 after saying why (who: "courier run", or the agent). */
int start_here(job_spec *js, const unsigned char key[32], const char *who)
{
    choose_cpus(js);

    size_t seglen = segment_size(js->cmd.total);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        seglen + (64u << 20) > rl.rlim_cur) {
        unsigned long long need = (seglen + (64u << 20) + 1023) / 1024;
        fprintf(stderr,
                "%s: the address-space limit (ulimit -v %llu KiB) is too low: the job's shared "
                "segment for %d ranks (%llu KiB) and the room every rank needs besides (64 MiB) "
                "do not fit in it; raise it to at least %llu KiB (ulimit -v unlimited, or "
                "ulimit -v %llu), or use fewer ranks\n",
                who, (unsigned long long)rl.rlim_cur / 1024, js->cmd.total,
                (unsigned long long)(seglen + 1023) / 1024, need, need);
        return 1;
    }
    int segfd = make_segment(js->cmd.total, js->count, CPU_COUNT(&js->cpus), &seglen, &js->control);
    if (segfd < 0) {
        fprintf(stderr,
                "%s: cannot create the %zu-byte shared segment for %d ranks: %s; "
                "use fewer ranks or raise the memory limit\n",
                who, seglen, js->cmd.total, strerror(errno));
        return 1;
    }
    const cr_host_head *hd = js->control;
    js->cards = (cr_host_card *)((char *)js->control + hd->card_off);
    js->secretfd = make_secret(key);
    if (js->secretfd < 0) {
        fprintf(stderr, "%s: cannot make the job's secret: %s\n", who, strerror(errno));
        close(segfd);
        return 1;
    }
    if (js->cmd.sim && start_sim(js, who)) {
        close(segfd);
        close(js->secretfd);
        return 1;
    }
    js->started = now_ns();
    if (start_ranks(js, segfd) < 0) {
        int e = errno;
        fprintf(stderr, "%s: cannot start %d ranks: %s%s\n", who, js->count, strerror(e),
                e == EMFILE ? " (raise the open-file limit: ulimit -n)" : "");
        if (js->pgid) {
            kill(-js->pgid, SIGKILL);
            while (waitpid(-js->pgid, NULL, 0) > 0) {
            }
        }
        close(segfd);
        close(js->secretfd);
        return 1;
    }
    if (js->vsim && cr_vsim_start(js->vsim)) {
        fprintf(stderr, "%s: cannot start the simulator's thread\n", who);
        kill(-js->pgid, SIGKILL);
        return 1;
    }
    js->segfd = segfd;         /* kept for courier status (closed at the end) */
    if (js->in_pipe[0] >= 0) { /* rank 0 holds its end */
        close(js->in_pipe[0]);
        js->in_fd = js->in_pipe[1];
    }
    close(js->secretfd);
    return 0;
}
