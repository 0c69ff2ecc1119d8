/* `mpiexec` / `mpirun` (also courier-mpiexec, courier-mpirun): the MPI
 * standard's start-up command as a front end to `courier run`. It maps the
 * standard's keys (-n, -host, -wdir, -path, -file, -soft, -arch, `:` for
 * MPMD) and the options of Open MPI's and MPICH's mpiexec that users' scripts
 * pass (-np, --hostfile/-f/-machinefile, --oversubscribe, -x/-genv/-env,
 * --bind-to, -ppn/--map-by ppr:N:node, --tag-output, -q, --timeout) onto a
 * courier run command line, and runs it in this process (cr_run_main);
 * --dry-run prints that command instead.
 *
 * Invariants:
 *  - every option is either mapped or refused: a refusal is one line naming
 *    what courier takes instead, exit status 2, before anything starts;
 *  - what courier run has one of for the whole job (hosts, the working
 *    directory, the environment) is given once or the same each time: a
 *    program of an MPMD job that asks for another is refused, not half-done;
 *  - the environment (-x, -genv, -env) is set in this process before courier
 *    run starts, and the names travel across hosts in COURIER_EXPORT;
 *  - the only state is the parse (struct mx), on the stack of cr_mpiexec_main;
 *    every string it makes is in mx.files and freed at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "launcher.h"
#include "mpiexec.h"

typedef struct strv {
    char **v;
    int n, cap;
} strv;

typedef struct mx {
    const char *me; /* the name we were called by, for messages */
    strv out;       /* courier run's arguments, from "run" on */
    strv apps;      /* the programs' part: -n N prog args [: ...] */
    strv env;       /* NAME=VALUE to set */
    strv files;     /* -file contents read (owned, freed at the end) */
    char *hosts, *hostfile, *wdir, *timeout, *bind, *rsh;
    long ppn;
    bool label, dry;
    int napps;
} mx;

static void push(strv *s, const char *a)
{
    if (s->n + 2 > s->cap) {
        s->cap = s->cap ? 2 * s->cap : 32;
        s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
        if (!s->v) {
            fputs("mpiexec: out of memory\n", stderr);
            exit(1);
        }
    }
    s->v[s->n++] = (char *)a;
    s->v[s->n] = NULL;
}

static char *own(mx *m, char *s)
{
    if (!s) {
        fputs("mpiexec: out of memory\n", stderr);
        exit(1);
    }
    push(&m->files, s);
    return s;
}

__attribute__((format(printf, 2, 3))) static int refuse(const mx *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", m->me);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

/* Options courier does not take, and what it takes instead. */
static const struct {
    const char *name, *instead;
} refused[] = {
    {"mca", "courier's settings are COURIER_* environment variables: -x COURIER_EAGER_LIMIT=65536 "
            "(docs/run.md, Settings)"},
    {"gmca", "courier's settings are COURIER_* environment variables (docs/run.md, Settings)"},
    {"rank-by", "courier numbers ranks in order, filling each host's slots: -host a:4,b:4"},
    {"launch-agent", "courier run starts its agents with --rsh CMD (ssh, 'ip netns exec', none)"},
    {"bootstrap", "courier run starts its agents with --rsh CMD (ssh, 'ip netns exec', none)"},
    {"prefix", "courier finds itself: give courier-mpiexec's full path, or COURIER_AGENT for the "
               "other hosts (docs/hosts.md)"},
    {"iface",
     "courier run --net NET (an address, address/prefix or interface): -x COURIER_NET=eth0"},
    {"net", "courier run --net NET: -x COURIER_NET=eth0"},
    {"report-bindings", "courier status JOB shows each rank (docs/tools.md)"},
    {"display-map", "courier status JOB shows each rank and its host (docs/tools.md)"},
    {"output-filename", "courier forwards every rank's output to its own; --tag-output labels it"},
    {"stdin", "rank 0 reads mpiexec's standard input, the others /dev/null"},
    {"genvnone", "the ranks get mpiexec's environment; unset what they must not see first"},
    {"nolocal", "give the hosts to run on with -host or -hostfile"},
    {"cpus-per-proc", "courier run --bind auto gives each rank a share of the CPUs"},
    {"cpus-per-rank", "courier run --bind auto gives each rank a share of the CPUs"},
};

/* The name of option a without its leading dashes ("--np" and "-np": "np"),
 * or NULL when a is no option. */
static const char *opt_name(const char *a)
{
    if (a[0] != '-' || !a[1]) return NULL;
    return a + 1 + (a[1] == '-');
}

static bool is(const char *name, const char *list)
{
    /* list: names separated by '|' */
    size_t n = strlen(name);
    for (const char *p = list;;) {
        const char *e = strchr(p, '|');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !strncmp(p, name, n)) return true;
        if (!e) return false;
        p = e + 1;
    }
}

/* Set a job-wide value once: a second, different one is refused. */
static int once(mx *m, char **slot, const char *v, const char *what)
{
    if (*slot && strcmp(*slot, v))
        return refuse(m,
                      "%s %s and %s: courier run has one %s for the whole job; give it once, "
                      "before the first program",
                      what, *slot, v, what + 1);
    *slot = (char *)v;
    return 0;
}

static int set_env(mx *m, const char *name, const char *value)
{
    size_t n = strlen(name);
    if (!n || strchr(name, '='))
        return refuse(m, "-x %s: give a variable's name (NAME or NAME=VALUE)", name);
    char *kv = own(m, calloc(1, n + strlen(value) + 2));
    sprintf(kv, "%s=%s", name, value);
    for (int i = 0; i < m->env.n; i++)
        if (!strncmp(m->env.v[i], kv, n + 1) && strcmp(m->env.v[i], kv))
            return refuse(m,
                          "%s and %s: courier run gives every program of the job one "
                          "environment; set it once",
                          m->env.v[i], kv);
    push(&m->env, kv);
    return 0;
}

/* -soft's list (the standard's a, a:b, a:b:c, comma-separated): the largest
 * count it allows, or -1 when it is not such a list. */
static long soft_max(const char *s)
{
    long best = -1;
    char *copy = strdup(s), *save = NULL;
    if (!copy) return -1;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long v[3] = {0, 0, 1};
        int k = 0;
        for (char *p = t;; k++) {
            char *end;
            if (k == 3 || !*p) goto bad;
            errno = 0;
            v[k] = strtol(p, &end, 10);
            if (errno || end == p || v[k] < 1) goto bad;
            if (!*end) break;
            if (*end != ':') goto bad;
            p = end + 1;
        }
        long hi = k == 0 ? v[0] : v[1];
        if (k >= 1 && v[1] < v[0]) goto bad;
        if (k == 2) hi = v[0] + (v[1] - v[0]) / v[2] * v[2];
        if (hi > best) best = hi;
    }
    free(copy);
    return best;
bad:
    free(copy);
    return -1;
}

/* prog as found in one of -path's directories, or prog itself. */
static const char *on_path(mx *m, const char *prog, const char *path)
{
    if (!path || strchr(prog, '/')) return prog;
    char buf[PATH_MAX];
    for (const char *p = path;; p = strchr(p, ':') + 1) {
        const char *e = strchr(p, ':');
        int n = e ? (int)(e - p) : (int)strlen(p);
        snprintf(buf, sizeof buf, "%.*s/%s", n, n ? p : ".", prog);
        struct stat st;
        if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
            return own(m, strdup(buf));
        if (!e) return prog;
    }
}

/* -file F (MPICH's -configfile): each line of F is one program's part of the
 * command line (its -n and its program); the lines are joined by ':'. */
static int read_file(mx *m, const char *name, strv *args)
{
    FILE *f = fopen(name, "r");
    if (!f) return refuse(m, "-file %s: %s", name, strerror(errno));
    char line[8192];
    bool first = true;
    while (fgets(line, sizeof line, f)) {
        char *save = NULL, *t = strtok_r(line, " \t\r\n", &save);
        if (!t || t[0] == '#') continue;
        if (!first) push(args, ":");
        first = false;
        for (; t; t = strtok_r(NULL, " \t\r\n", &save)) push(args, own(m, strdup(t)));
    }
    fclose(f);
    if (first)
        return refuse(m, "-file %s: no program in it (a line per program: -n N prog args)", name);
    return 0;
}

/* The host names of a hostfile (Open MPI's 'name slots=N' or MPICH's 'name:N'
 * per line), each given n slots: a --hosts list. */
static char *hostfile_ppn(mx *m, const char *file, long n)
{
    FILE *f = fopen(file, "r");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *out = own(m, calloc(1, cap)), line[1024];
    while (fgets(line, sizeof line, f)) {
        char *h = line + strspn(line, " \t");
        size_t k = strcspn(h, " \t\r\n:#");
        if (!k) continue;
        if (len + k + 32 > cap) break;
        len += (size_t)snprintf(out + len, cap - len, "%s%.*s:%ld", len ? "," : "", (int)k, h, n);
    }
    fclose(f);
    return len ? out : NULL;
}

/* -host a,b:2 given -ppn n: every host gets n slots. */
static char *hosts_ppn(mx *m, const char *hosts, long n)
{
    char *out = own(m, calloc(1, strlen(hosts) * 2 + 64)), *copy = own(m, strdup(hosts)),
         *save = NULL;
    size_t len = 0;
    out[0] = '\0';
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t k = strcspn(t, ":");
        len += (size_t)sprintf(out + len, "%s%.*s:%ld", len ? "," : "", (int)k, t, n);
    }
    return out;
}

/* Print one word for a POSIX shell. */
static void put_word(FILE *f, const char *w)
{
    if (*w &&
        strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
            strlen(w)) {
        fputs(w, f);
        return;
    }
    fputc('\'', f);
    for (; *w; w++)
        if (*w == '\'')
            fputs("'\\''", f);
        else
            fputc(*w, f);
    fputc('\'', f);
}

static void usage(FILE *f, const char *me)
{
    fprintf(
        f,
        "usage: %s [options] -n N prog [args] [: [options] -n M prog2 [args]]...\n"
        "courier's mpiexec: runs the job with courier run (mpiexec --dry-run prints that "
        "command).\n"
        "  -n N, -np N            ranks of this program (-soft LIST: the largest it allows)\n"
        "  -host LIST, -H LIST    hosts: a,b or a:4,b:4 (courier run --hosts)\n"
        "  -hostfile F, -f F, -machinefile F   hosts from a file (courier run --hostfile)\n"
        "  -ppn N, -npernode N, --map-by ppr:N:node   N ranks on each host\n"
        "  -wdir DIR              the ranks' working directory\n"
        "  -path DIRS             where to look for the programs (a:b)\n"
        "  -file F, -configfile F one program per line (-n N prog args)\n"
        "  -arch A                accepted when it is this machine's\n"
        "  -x NAME[=VALUE], -genv NAME VALUE, -env NAME VALUE   the ranks' environment\n"
        "  --bind-to core|hwthread|none   courier run --bind core|none\n"
        "  --tag-output, -l       label each line with its rank (courier run --label)\n"
        "  --timeout S            courier run --timeout S\n"
        "  --oversubscribe, -q, -genvall, --map-by slot|core   accepted (courier's way anyway)\n"
        "docs/run.md, \"mpiexec\", says how each maps and what is refused.\n",
        me);
}

/* The value of option a (argv[*i]), or NULL (refused) when there is none. */
static const char *value(mx *m, int argc, char **argv, int *i, int *rc)
{
    if (*i + 1 >= argc || !*argv[*i + 1]) {
        *rc = refuse(m, "%s needs a value (%s --help)", argv[*i], m->me);
        return NULL;
    }
    return argv[++*i];
}

static int parse(mx *m, int argc, char **argv)
{
    int rc = 0;
    long n = -1, soft = -1;
    const char *path = NULL;
    struct utsname un;
    uname(&un);
    for (int i = 0; i < argc;) {
        const char *a = argv[i], *o = opt_name(a), *v;
        if (!strcmp(a, ":")) return refuse(m, "':' with no program before it");
        if (!o) { /* the program and its arguments, to the next ':' */
            if (n < 0 && soft < 0)
                return refuse(m, "%s: give the number of ranks with -n N (courier run -n N)", a);
            char *num = own(m, calloc(1, 24));
            snprintf(num, 24, "%ld", n >= 0 ? n : soft);
            if (m->napps++) push(&m->apps, ":");
            push(&m->apps, "-n");
            push(&m->apps, num);
            push(&m->apps, on_path(m, a, path));
            for (i++; i < argc && strcmp(argv[i], ":"); i++) push(&m->apps, argv[i]);
            if (i < argc) i++; /* the ':' */
            n = soft = -1;
            path = NULL;
            continue;
        }
        if (is(o, "n|np|c")) {
            if (!(v = value(m, argc, argv, &i, &rc))) return rc;
            char *end;
            errno = 0;
            n = strtol(v, &end, 10);
            if (errno || *end || n < 1 || n > CR_RUN_MAX_RANKS)
                return refuse(m, "%s %s: the number of ranks must be 1..%d", a, v,
                              CR_RUN_MAX_RANKS);
        } else if (is(o, "soft")) {
            if (!(v = value(m, argc, argv, &i, &rc))) return rc;
            soft = soft_max(v);
            if (soft < 1 || soft > CR_RUN_MAX_RANKS)
                return refuse(m,
                              "-soft %s: give counts as a, a:b or a:b:c (comma-separated), "
                              "at most %d",
                              v, CR_RUN_MAX_RANKS);
        } else if (is(o, "host|hosts|H")) {
            if (!(v = value(m, argc, argv, &i, &rc)) || (rc = once(m, &m->hosts, v, "-host")))
                return rc;
        } else if (is(o, "hostfile|f|machinefile|machine|default-hostfile")) {
            if (!(v = value(m, argc, argv, &i, &rc)) ||
                (rc = once(m, &m->hostfile, v, "-hostfile")))
                return rc;
        } else if (is(o, "wdir|wd|dir")) {
            if (!(v = value(m, argc, argv, &i, &rc)) || (rc = once(m, &m->wdir, v, "-wdir")))
                return rc;
        } else if (is(o, "path")) {
            if (!(path = value(m, argc, argv, &i, &rc))) return rc;
        } else if (is(o, "file|configfile")) {
            if (!(v = value(m, argc, argv, &i, &rc))) return rc;
            if (n >= 0 || soft >= 0 || m->napps)
                return refuse(m, "-file %s: give it alone, in place of the programs", v);
            strv more = {0};
            if ((rc = read_file(m, v, &more))) return rc;
            rc = parse(m, more.n, more.v);
            free(more.v);
            if (rc) return rc;
            i++;
        } else if (is(o, "arch")) {
            if (!(v = value(m, argc, argv, &i, &rc))) return rc;
            if (strcmp(v, un.machine))
                return refuse(m,
                              "-arch %s: courier starts programs of this machine's "
                              "architecture, %s (uname -m)",
                              v, un.machine);
        } else if (is(o, "x")) {
            if (!(v = value(m, argc, argv, &i, &rc))) return rc;
            const char *eq = strchr(v, '=');
            char *name = own(m, strndup(v, eq ? (size_t)(eq - v) : strlen(v)));
            const char *cur = getenv(name);
            if (!eq && !cur)
                return refuse(m, "-x %s: %s is not set here (give -x %s=VALUE)", v, name, name);
            if ((rc = set_env(m, name, eq ? eq + 1 : cur))) return rc;
        } else if (is(o, "genv|env")) {
            if (i + 2 >= argc)
                return refuse(m, "%s needs a name and a value (%s NAME VALUE)", a, a);
            if ((rc = set_env(m, argv[i + 1], argv[i + 2]))) return rc;
            i += 2;
        } else if (is(o, "bind-to|bind|binding")) {
            if (!(v = value(m, argc, argv, &i, &rc))) return rc;
            const char *b = !strcmp(v, "core") || !strcmp(v, "hwthread") || !strcmp(v, "cpu")
                                ? "core"
                            : !strcmp(v, "none") ? "none"
                                                 : NULL;
            if (!b)
                return refuse(m,
                              "%s %s: courier binds each rank to CPUs of its own (courier run "
                              "--bind auto, the default), to one core (--bind-to core) or not "
                              "at all (--bind-to none)",
                              a, v);
            if ((rc = once(m, &m->bind, b, "--bind-to"))) return rc;
        } else if (is(o, "ppn|perhost|npernode|N|map-by")) {
            if (!(v = value(m, argc, argv, &i, &rc))) return rc;
            const char *num = v;
            if (is(o, "map-by")) {
                if (!strcmp(v, "slot") || !strcmp(v, "core") || !strcmp(v, "hwthread")) {
                    i++;
                    continue;
                }
                if (strncmp(v, "ppr:", 4) || !strstr(v + 4, ":node"))
                    return refuse(m,
                                  "--map-by %s: courier places ranks in order, filling each "
                                  "host's slots (-host a:4,b:4, or --map-by ppr:N:node)",
                                  v);
                num = v + 4;
            }
            char *end;
            long p = strtol(num, &end, 10);
            if (p < 1 || p > CR_RUN_MAX_RANKS || (*end && strcmp(end, ":node")))
                return refuse(m, "%s %s: give a number of ranks per host, 1..%d", a, v,
                              CR_RUN_MAX_RANKS);
            m->ppn = p;
        } else if (is(o, "rsh|launcher-exec")) {
            if (!(v = value(m, argc, argv, &i, &rc)) || (rc = once(m, &m->rsh, v, "--rsh")))
                return rc;
        } else if (is(o, "launcher")) {
            if (!(v = value(m, argc, argv, &i, &rc))) return rc;
            if (strcmp(v, "ssh"))
                return refuse(m,
                              "-launcher %s: courier starts its agents with ssh, or the "
                              "command --rsh CMD names (inside a Slurm allocation, srun)",
                              v);
        } else if (is(o, "tag-output|l|prepend-rank|label")) {
            m->label = true;
        } else if (is(o, "timeout")) {
            if (!(v = value(m, argc, argv, &i, &rc))) return rc;
            m->timeout = (char *)v;
        } else if (is(o, "q|quiet|oversubscribe|genvall|allow-run-as-root|v|verbose")) {
            /* courier's way anyway: it runs as many ranks as asked on a host,
             * passes the whole environment, says only what goes wrong */
        } else if (is(o, "dry-run")) {
            m->dry = true;
        } else if (is(o, "h|help")) {
            usage(stdout, m->me);
            exit(0);
        } else if (is(o, "version|V")) { /* build systems ask it which MPI it is */
            printf("%s (courier) %s\n", m->me, COURIER_VERSION);
            exit(0);
        } else {
            for (size_t k = 0; k < sizeof refused / sizeof *refused; k++)
                if (!strcmp(o, refused[k].name))
                    return refuse(m, "%s is not something courier takes: %s", a,
                                  refused[k].instead);
            return refuse(m,
                          "%s is not something courier takes (%s --help lists what it maps "
                          "onto courier run; courier run --help)",
                          a, m->me);
        }
        i++;
    }
    if (n >= 0 || soft >= 0 || path)
        return refuse(m, "no program after the last options (give one: -n N prog)");
    return 0;
}

int cr_mpiexec_main(int argc, char **argv)
{
    const char *slash = strrchr(argv[0], '/');
    mx m = {.me = slash ? slash + 1 : argv[0]};
    int rc = parse(&m, argc - 1, argv + 1);
    if (!rc && !m.napps) rc = refuse(&m, "no program to run (%s -n N prog [args])", m.me);
    if (!rc && m.hosts && m.hostfile)
        rc = refuse(&m, "-host and -hostfile: give one (courier run --hosts or --hostfile)");
    long total = 0;
    for (int i = 0; !rc && i + 1 < m.apps.n; i++)
        if (!strcmp(m.apps.v[i], "-n") && (i == 0 || !strcmp(m.apps.v[i - 1], ":")))
            total += atol(m.apps.v[i + 1]);
    if (!rc && m.ppn) {
        if (m.hosts) {
            m.hosts = hosts_ppn(&m, m.hosts, m.ppn);
        } else if (m.hostfile) {
            if (!(m.hosts = hostfile_ppn(&m, m.hostfile, m.ppn)))
                rc = refuse(&m, "-hostfile %s: no host in it to give %ld ranks each", m.hostfile,
                            m.ppn);
            m.hostfile = NULL;
        } else if (m.ppn < total) {
            rc = refuse(&m,
                        "%ld ranks per host with %ld ranks and no hosts: give the hosts "
                        "(-host a:%ld,b:%ld; courier run --hosts), or run them all here",
                        m.ppn, total, m.ppn, m.ppn);
        }
    }
    if (rc) goto out;
    push(&m.out, "run");
    if (m.label) push(&m.out, "--label");
    if (m.timeout) push(&m.out, "--timeout"), push(&m.out, m.timeout);
    if (m.bind) push(&m.out, "--bind"), push(&m.out, m.bind);
    if (m.hosts) push(&m.out, "--hosts"), push(&m.out, m.hosts);
    if (m.hostfile) push(&m.out, "--hostfile"), push(&m.out, m.hostfile);
    if (m.rsh) push(&m.out, "--rsh"), push(&m.out, m.rsh);
    for (int i = 0; i < m.apps.n; i++) push(&m.out, m.apps.v[i]);
    /* the names travel across hosts (src/run/tree.c) */
    char *export = NULL;
    if (m.env.n) {
        size_t len = 0;
        const char *old = getenv("COURIER_EXPORT");
        for (int i = 0; i < m.env.n; i++) len += strlen(m.env.v[i]) + 1;
        export = own(&m, calloc(1, len + (old ? strlen(old) : 0) + 32));
        strcpy(export, old && *old ? old : "");
        for (int i = 0; i < m.env.n; i++)
            if (strncmp(m.env.v[i], "COURIER_", 8))
                sprintf(export + strlen(export), "%s%.*s", *export ? "," : "",
                        (int)strcspn(m.env.v[i], "="), m.env.v[i]);
        if (!*export) export = NULL;
    }
    if (m.dry) {
        if (m.wdir) fputs("cd ", stdout), put_word(stdout, m.wdir), fputs(" && ", stdout);
        for (int i = 0; i < m.env.n; i++) put_word(stdout, m.env.v[i]), putchar(' ');
        if (export) fputs("COURIER_EXPORT=", stdout), put_word(stdout, export), putchar(' ');
        fputs("courier", stdout);
        for (int i = 0; i < m.out.n; i++) putchar(' '), put_word(stdout, m.out.v[i]);
        putchar('\n');
        goto out;
    }
    if (m.wdir && chdir(m.wdir)) {
        rc = refuse(&m, "-wdir %s: %s", m.wdir, strerror(errno));
        goto out;
    }
    for (int i = 0; i < m.env.n; i++) {
        char *eq = strchr(m.env.v[i], '=');
        *eq = '\0';
        setenv(m.env.v[i], eq + 1, 1);
        *eq = '=';
    }
    if (export) setenv("COURIER_EXPORT", export, 1);
    rc = cr_run_main(m.out.n, m.out.v);
out:
    free(m.out.v);
    free(m.apps.v);
    free(m.env.v);
    for (int i = 0; i < m.files.n; i++) free(m.files.v[i]);
    free(m.files.v);
    return rc;
}
