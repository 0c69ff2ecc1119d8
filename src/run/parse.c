/* `courier run`'s command line: cr_run_parse into a cr_run_spec, the help
 * (print_usage) and usage errors (status 2), and whether a program can run as a
 * job of courier's (program_problem).
 *
 * Invariants: cr_run_parse prints nothing and never exits (the fuzzer calls
 * it: fuzz/); a message about the command line is one line, free of terminal
 * controls even where it quotes an argument; the help's text is the same
 * whoever prints it (courier run --help, a usage error). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher.h"
#include "progfile.h"
#include "vsim.h"

#include "launch_internal.h"

static const char usage_text[] =
    "usage: courier run [--label] [--timeout S] [--hang-timeout S] [--bind B] [--net NET]\n"
    "                   [--hosts LIST | --hostfile F] [--rsh CMD] [--trace FILE]\n"
    "                   [--check[=LIST]] [--sim MACHINE[,key=value...] [--sim-report FILE]]\n"
    "                   -n N [--] prog [args]\n"
    "                   [: -n M prog2 [args]]...\n"
    "  -n N              start N ranks of prog (1..4096 in all; 16384 with --sim)\n"
    "  --                the options end; the program follows\n"
    "  --label           prefix every output line with [rank]\n"
    "  --timeout S       end the job if it runs longer than S seconds\n"
    "  --hang-timeout S  report and end a deadlock after S seconds (default 5, 0: off)\n"
    "  --bind B          auto (default): CPUs of its own for each rank (a share of\n"
    "                    CPUs/ranks; none when ranks outnumber CPUs); core: one\n"
    "                    CPU each, round robin, always; none: never bind\n"
    "  --net NET         the address TCP listens on: an address, address/prefix or\n"
    "                    interface name (sets COURIER_NET; default 127.0.0.1, or across\n"
    "                    hosts the address each host reaches the launcher from)\n"
    "  --hosts LIST      run across hosts: a:4,b:4 (host:slots; ranks fill them in order)\n"
    "  --hostfile F      the hosts from a file: 'name slots=N' per line\n"
    "  --rsh CMD         how to start courier's agent on a host (default ssh; e.g.\n"
    "                    'ip netns exec'; 'none': on this machine, for tests)\n"
    "  --trace FILE      record every communication call and message of every rank\n"
    "                    into FILE (Chrome trace format: Perfetto opens it; a summary:\n"
    "                    courier trace FILE)\n"
    "  --check[=LIST]    check the program's MPI usage (docs/check.md): types, coll,\n"
    "                    leaks, rma and threads; LIST: all (those, sync and buffers)\n"
    "                    or a comma list of types, coll, leaks, rma, threads, sync,\n"
    "                    buffers (sets COURIER_CHECK)\n";
/* After the machines' part of the help (cr_vsim_usage, from their descriptors). */
static const char usage_tail[] = "  --sim-report FILE the simulator's summary as JSON\n";

void print_usage(FILE *f)
{
    fputs(usage_text, f);
    cr_vsim_usage(f);
    fputs(usage_tail, f);
}

int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("courier run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    print_usage(stderr);
    return 2;
}

/* ---- the command line ---------------------------------------------------- */

int parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || !*s || *end) return -1;
    *out = v;
    return 0;
}

/* The file execvp would run for prog (a path, or a name found along $PATH),
 * in buf; false when there is none. */
bool resolve_program(const char *prog, char buf[PATH_MAX])
{
    if (strchr(prog, '/')) {
        snprintf(buf, PATH_MAX, "%s", prog);
        return access(prog, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    for (const char *p = path;; p = strchr(p, ':') + 1) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(buf, PATH_MAX, "%.*s/%s", (int)n, n ? p : ".", prog);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return true;
        if (!e) return false;
    }
}

/* Is prog something execvp can run? */
bool find_program(const char *prog, void *arg)
{
    (void)arg;
    char buf[PATH_MAX];
    return resolve_program(prog, buf);
}

/* What keeps prog from running as a job of courier's (launch_internal.h). */
int program_problem(const char *prog, char *err, size_t errlen)
{
    int kind = PROG_USAGE;
    char path[PATH_MAX], lib[64];
    struct stat st;
    if (!resolve_program(prog, path))
        snprintf(err, errlen, "program '%s' not found or not executable", prog);
    else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(err, errlen, "program '%s' is a directory, not a program (name the program in it)",
                 prog);
    else if (cr_progfile_foreign_mpi(path, lib, sizeof lib) && (kind = PROG_FOREIGN))
        snprintf(err, errlen,
                 "program '%s' is linked with another MPI library (%s: Open MPI's, MPICH's or "
                 "another's), not with courier, so each of its ranks would run alone as a job of "
                 "one rank; rebuild it with courier-cc (or run it with that library's mpirun)",
                 prog, lib);
    else
        return PROG_OK;
    for (char *p = err; *p; p++) /* it quotes an argument: one line, no terminal controls */
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return kind;
}

bool program_is_script(const char *prog)
{
    char path[PATH_MAX], head[2];
    if (!resolve_program(prog, path)) return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool script = read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!';
    close(fd);
    return script;
}

__attribute__((format(printf, 4, 5))) static int parse_error(cr_run_spec *spec, char *err,
                                                             size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* The message quotes arguments: keep it one line and free of terminal controls. */
    for (char *p = err; errlen && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    cr_run_spec_free(spec);
    return 2;
}

void cr_run_spec_free(cr_run_spec *spec)
{
    free(spec->apps);
    free(spec->args);
    spec->apps = NULL;
    spec->args = NULL;
    spec->napps = spec->total = 0;
}

int cr_run_parse(int argc, char *const *argv, cr_run_spec *spec,
                 bool (*find)(const char *prog, void *arg), void *find_arg, char *err,
                 size_t errlen)
{
    *spec = (cr_run_spec){.hang_timeout = 5};
    if (errlen) err[0] = '\0';
    if (argc < 1) argc = 1; /* argv[0] ("run") is never looked at */
    /* One copy of the argument vector: each program's list ends where its ':' was. */
    spec->apps = calloc((size_t)argc, sizeof *spec->apps);
    spec->args = calloc((size_t)argc + 1, sizeof *spec->args);
    if (!spec->apps || !spec->args) return parse_error(spec, err, errlen, "out of memory");
    for (int k = 0; k < argc; k++) spec->args[k] = argv[k];
    char **args = spec->args;
    int i = 1;
    for (;;) {
        long n = -1;
        while (i < argc && args[i][0] == '-') {
            const char *a = args[i];
            if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np")) {
                if (i + 1 >= argc) return parse_error(spec, err, errlen, "%s needs a number", a);
                if (parse_count(args[i + 1], &n) || n < 1 || n > CR_RUN_MAX_SIM_RANKS)
                    return parse_error(
                        spec, err, errlen,
                        "-n %s: the number of ranks must be 1..%d (1..%d with --sim)", args[i + 1],
                        CR_RUN_MAX_RANKS, CR_RUN_MAX_SIM_RANKS);
                i += 2;
            } else if (!strcmp(a, "--label")) {
                spec->label = true;
                i++;
            } else if (!strcmp(a, "--timeout") || !strcmp(a, "--hang-timeout")) {
                char *end;
                bool hang = a[2] == 'h';
                if (i + 1 >= argc)
                    return parse_error(spec, err, errlen, "%s needs a number of seconds", a);
                double v = strtod(args[i + 1], &end);
                if (*end || !*args[i + 1] || !(v > 0 || (hang && v == 0)) || v > 1e7)
                    return parse_error(spec, err, errlen,
                                       "%s %s: give a positive number of seconds%s", a, args[i + 1],
                                       hang ? " (0: no hang timeout)" : "");
                *(hang ? &spec->hang_timeout : &spec->timeout) = v;
                i += 2;
            } else if (!strcmp(a, "--bind")) {
                const char *v = i + 1 < argc ? args[i + 1] : "";
                if (!strcmp(v, "auto"))
                    spec->bind = CR_BIND_AUTO;
                else if (!strcmp(v, "core"))
                    spec->bind = CR_BIND_CORE;
                else if (!strcmp(v, "none"))
                    spec->bind = CR_BIND_NONE;
                else
                    return parse_error(spec, err, errlen, "--bind %s: give auto, core or none", v);
                i += 2;
            } else if (!strcmp(a, "--net")) {
                if (i + 1 >= argc || !*args[i + 1] || args[i + 1][0] == '-' ||
                    strlen(args[i + 1]) > 255)
                    return parse_error(spec, err, errlen,
                                       "--net needs an address, address/prefix or interface "
                                       "name (e.g. 10.0.0.0/8 or eth0)");
                spec->net = args[i + 1];
                i += 2;
            } else if (!strcmp(a, "--hosts") || !strcmp(a, "--hostfile") || !strcmp(a, "--rsh")) {
                if (i + 1 >= argc || !*args[i + 1])
                    return parse_error(spec, err, errlen, "%s needs %s", a,
                                       a[2] == 'r'   ? "a command (e.g. ssh, or 'ip netns exec')"
                                       : a[6] == 'f' ? "a file name"
                                                     : "a list of hosts (e.g. a:4,b:4)");
                *(a[2] == 'r'   ? &spec->rsh
                  : a[6] == 'f' ? &spec->hostfile
                                : &spec->hosts) = args[i + 1];
                i += 2;
            } else if (!strcmp(a, "--sim") || !strcmp(a, "--sim-report")) {
                char names[200];
                cr_vsim_machines(names, sizeof names, " or ");
                if (i + 1 >= argc || !*args[i + 1] || args[i + 1][0] == '-')
                    return parse_error(spec, err, errlen, "%s needs %s%s%s", a,
                                       a[5] ? "a file name (e.g. --sim-report sim.json)"
                                            : "a machine (",
                                       a[5] ? "" : names, a[5] ? "" : ")");
                *(a[5] ? &spec->sim_report : &spec->sim) = args[i + 1];
                i += 2;
            } else if (!strcmp(a, "--trace") || !strcmp(a, "--trace-parts")) {
                if (i + 1 >= argc || !*args[i + 1] || args[i + 1][0] == '-')
                    return parse_error(spec, err, errlen,
                                       "%s needs a file name (e.g. --trace job.json)", a);
                *(a[7] ? &spec->trace_dir : &spec->trace) = args[i + 1];
                i += 2;
            } else if (!strcmp(a, "--check") || !strncmp(a, "--check=", 8)) {
                spec->check = a[7] ? a + 8 : "1"; /* checked with COURIER_CHECK (envcheck.c) */
                i++;
            } else if (!strcmp(a, "--")) { /* the options end: the program follows */
                i++;
                break;
            } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
                cr_run_spec_free(spec);
                spec->help = true;
                return 0;
            } else {
                return parse_error(spec, err, errlen, "unknown option %s", a);
            }
        }
        if (n < 0) return parse_error(spec, err, errlen, "give the number of ranks with -n N");
        if (i >= argc || !strcmp(args[i], ":"))
            return parse_error(spec, err, errlen, "no program to run");
        if (find && !find(args[i], find_arg))
            return parse_error(spec, err, errlen, "program '%s' not found or not executable",
                               args[i]);
        cr_run_app *a = &spec->apps[spec->napps++];
        a->n = (int)n;
        a->argv = &args[i];
        while (i < argc && strcmp(args[i], ":")) i++;
        if (spec->total + n > (spec->sim ? CR_RUN_MAX_SIM_RANKS : CR_RUN_MAX_RANKS))
            return parse_error(spec, err, errlen, "%ld ranks in all: at most %d (%d with --sim)",
                               spec->total + n, CR_RUN_MAX_RANKS, CR_RUN_MAX_SIM_RANKS);
        spec->total += (int)n;
        if (i >= argc) break;
        args[i++] = NULL; /* ends this program's argument list (in our copy) */
    }
    if (spec->sim_report && !spec->sim)
        return parse_error(spec, err, errlen, "--sim-report needs --sim MACHINE");
    if (spec->sim && (spec->hosts || spec->hostfile))
        return parse_error(spec, err, errlen,
                           "--sim runs the job on one host, in virtual time: drop --hosts");
    char why[300];
    if (spec->sim && cr_vsim_check(spec->sim, spec->total, why, sizeof why))
        return parse_error(spec, err, errlen, "%s", why);
    return 0;
}
