/* `courier netsim`: runs the network models of src/net on synthetic traffic and prints a
 * table, CSV, or a gnuplot chart. Every list option (--sizes, --hops, --load) makes a sweep;
 * the runs are the cartesian product. Bad arguments give one line on stderr and exit 2.
 *
 * Invariants: option parsing (cr_netsim_parse) prints nothing and runs nothing, it only
 * fills the options or writes one line into the caller's buffer; every list stays within
 * MAXV entries however often its option is repeated (extra values are dropped, as they
 * always were); a number that is not finite is a bad value.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cr_net.h"
#include "netsim_cli.h"

#define MAXV 64

typedef struct opts {
    cr_net_config cfg;
    cr_traffic t;
    uint64_t sizes[MAXV];
    int nsizes;
    int hops[MAXV];
    int nhops;
    double loads[MAXV];
    int nloads;
    int csv, validate;
    const char *plot;
    char *err; /* where parse puts its one-line message */
    size_t errlen;
} opts;

typedef struct rowv {
    uint64_t size;
    int hops;
    double load;
    cr_net_result r;
} rowv;

/* A bad argument: the message (without "courier netsim: ") goes to o->err. */
__attribute__((format(printf, 2, 3))) static int bad(opts *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (o->errlen) vsnprintf(o->err, o->errlen, fmt, ap);
    va_end(ap);
    /* The message quotes arguments: keep it one line and free of terminal controls. */
    for (char *p = o->err; o->errlen && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return 2;
}

/* The machines and their node software models, from their descriptors. */
static void list_machines(FILE *f, bool models)
{
    for (int k = 0; k < CR_MACH_COUNT; k++) {
        const cr_machine *m = cr_machine_get((cr_machine_kind)k);
        if (!models) {
            fprintf(f, "%s%s", k ? "|" : "", m->name);
            continue;
        }
        fprintf(f, "                %s:", m->name);
        for (size_t i = 0; i < m->nsw; i++) fprintf(f, " %s", m->sw[i].name);
        fprintf(f, "%s\n", m->nsw ? "" : " hw only");
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: courier netsim --machine ");
    list_machines(f, false);
    fprintf(f, " [--nodes N | --dim D | --mesh XxY]\n"
               "         --pattern echo|uniform|transpose|shift|bit-reversal|hotspot|neighbour|\n"
               "                   all-to-all|broadcast|barrier|exchange  [options]\n"
               "  --size B | --sizes B1,B2,..   message size(s) in bytes (default 1024)\n"
               "  --hops H1,H2,..               echo: node pairs this many hops apart\n"
               "  --src N --dst N               echo/exchange end points, broadcast root\n"
               "  --load L | --load A,B | --load FROM:TO:STEP   offered load (fraction of node\n"
               "                                injection bandwidth); 0 = saturating closed loop\n"
               "  --count N  --window W  --shift K  --hot N  --hot-frac F  --seed S\n"
               "  --route ecube|anymin|random|topswitch  --networks 1|2  --tokens on|off\n"
               "  --sw MODEL|hw  the node software model, the machine's:\n");
    list_machines(f, true);
    fprintf(f, "  (cluster: 100 Gb/s links, 1 us per switch)\n"
               "  --mesh-only (iwarp without wraparound)  --pathways (iwarp reservation pool)\n"
               "  --csv  --plot FILE.png  --validate (published figures vs simulator)\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *e;
    errno = 0;
    if (!s || *s == '-' || !*s) return -1;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || *e) return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, int *out)
{
    char *e;
    errno = 0;
    if (!s || !*s) return -1;
    long v = strtol(s, &e, 10);
    if (errno || *e || v < -1000000000L || v > 1000000000L) return -1;
    *out = (int)v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *e;
    if (!s || !*s) return -1;
    *out = strtod(s, &e);
    return *e || !isfinite(*out) ? -1 : 0;
}

static int parse_loads(opts *o, const char *s)
{
    double a, b, st;
    if (strchr(s, ':')) {
        char buf[128];
        snprintf(buf, sizeof(buf), "%s", s);
        char *p1 = strtok(buf, ":"), *p2 = strtok(NULL, ":"), *p3 = strtok(NULL, ":");
        if (parse_double(p1, &a) || parse_double(p2, &b) || parse_double(p3, &st) || st <= 0)
            return bad(o, "bad load range '%s' (FROM:TO:STEP)", s);
        if (a < 0 || b < 0) return bad(o, "offered load must not be negative: '%s'", s);
        for (double x = a; x <= b + 1e-9 && o->nloads < MAXV; x += st) o->loads[o->nloads++] = x;
        return 0;
    }
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
        if (parse_double(p, &a)) return bad(o, "bad load '%s'", s);
        if (a < 0) return bad(o, "offered load must not be negative: '%s'", s);
        if (o->nloads < MAXV) o->loads[o->nloads++] = a;
    }
    return 0;
}

static int parse_list_u64(const char *s, uint64_t *v, int *n)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *p = strtok(buf, ","); p; p = strtok(NULL, ","))
        if (parse_u64(p, &v[(*n < MAXV ? *n : MAXV - 1)]) == 0)
            (*n < MAXV) ? (*n)++ : 0;
        else
            return -1;
    return 0;
}

static int parse_mesh(opts *o, const char *s)
{
    char *e, *f;
    errno = 0;
    long x = strtol(s, &e, 10), y = 0;
    int ok = e != s && (*e == 'x' || *e == 'X');
    if (ok) {
        y = strtol(e + 1, &f, 10);
        ok = f != e + 1 && !*f && !errno;
    }
    if (!ok || x < 1 || y < 1 || x > 1000000000L || y > 1000000000L)
        return bad(o, "mesh '%s' is not a rectangle XxY of positive sides", s);
    o->cfg.mesh_x = (int)x;
    o->cfg.mesh_y = (int)y;
    return 0;
}

static int parse_route(const char *s, cr_route_kind *r)
{
    static const char *n[] = {"ecube", "anymin", "random", "topswitch"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, n[i]) == 0) return *r = (cr_route_kind)(i + 1), 0;
    return -1;
}

/* Returns 0 to run, 1 after --help, 2 on bad arguments. */
static int parse(opts *o, int argc, char **argv, char *err, size_t errlen)
{
    int have_machine = 0;
    memset(o, 0, sizeof(*o));
    o->err = err;
    o->errlen = errlen;
    if (errlen) err[0] = '\0';
    cr_traffic_defaults(&o->t);
    o->t.pattern = CR_PAT_ECHO;
    o->cfg.wrap = 1;
    o->cfg.tokens = 1;
    o->cfg.seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1, rc = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 1;
        else if (!strcmp(a, "--csv"))
            o->csv = 1, takes = 0;
        else if (!strcmp(a, "--validate"))
            o->validate = 1, takes = 0;
        else if (!strcmp(a, "--pathways"))
            o->cfg.pathways = 1, takes = 0;
        else if (!strcmp(a, "--mesh-only"))
            o->cfg.wrap = 0, takes = 0;
        else if (!v)
            return bad(o, "option '%s' needs a value", a);
        else if (!strcmp(a, "--machine")) {
            if (cr_machine_parse(v, &o->cfg.kind)) return bad(o, "unknown machine '%s'", v);
            have_machine = 1;
        } else if (!strcmp(a, "--nodes"))
            rc = parse_int(v, &o->cfg.nodes) || o->cfg.nodes < 1;
        else if (!strcmp(a, "--dim"))
            rc = parse_int(v, &o->cfg.dim) || o->cfg.dim < 1;
        else if (!strcmp(a, "--mesh")) {
            if (parse_mesh(o, v)) return 2;
        } else if (!strcmp(a, "--pattern")) {
            if (cr_pattern_parse(v, &o->t.pattern)) return bad(o, "unknown pattern '%s'", v);
        } else if (!strcmp(a, "--size") || !strcmp(a, "--sizes"))
            rc = parse_list_u64(v, o->sizes, &o->nsizes);
        else if (!strcmp(a, "--hops")) {
            uint64_t hv[MAXV];
            int n = 0;
            rc = parse_list_u64(v, hv, &n);
            for (int k = 0; k < n; k++)
                if (o->nhops < MAXV) o->hops[o->nhops++] = (int)hv[k];
        } else if (!strcmp(a, "--load")) {
            if (parse_loads(o, v)) return 2;
        } else if (!strcmp(a, "--src"))
            rc = parse_int(v, &o->t.src);
        else if (!strcmp(a, "--dst"))
            rc = parse_int(v, &o->t.dst);
        else if (!strcmp(a, "--count"))
            rc = parse_int(v, &o->t.count) || o->t.count < 1;
        else if (!strcmp(a, "--window"))
            rc = parse_int(v, &o->t.window) || o->t.window < 1;
        else if (!strcmp(a, "--shift"))
            rc = parse_int(v, &o->t.shift) || o->t.shift < 0;
        else if (!strcmp(a, "--hot"))
            rc = parse_int(v, &o->t.hot);
        else if (!strcmp(a, "--hot-frac"))
            rc = parse_double(v, &o->t.hot_frac) || o->t.hot_frac <= 0 || o->t.hot_frac > 1;
        else if (!strcmp(a, "--seed"))
            rc = parse_u64(v, &o->cfg.seed);
        else if (!strcmp(a, "--route")) {
            if (parse_route(v, &o->cfg.route)) return bad(o, "unknown routing '%s'", v);
        } else if (!strcmp(a, "--networks"))
            rc = parse_int(v, &o->cfg.networks) || o->cfg.networks < 1 || o->cfg.networks > 2;
        else if (!strcmp(a, "--tokens")) {
            if (strcmp(v, "on") && strcmp(v, "off"))
                return bad(o, "--tokens is on or off, not '%s'", v);
            o->cfg.tokens = !strcmp(v, "on");
        } else if (!strcmp(a, "--sw"))
            o->cfg.sw = v;
        else if (!strcmp(a, "--plot"))
            o->plot = v;
        else
            return bad(o, "unknown option '%s' (try --help)", a);
        if (rc) return bad(o, "bad value '%s' for %s", v, a);
        i += takes;
    }
    if (o->cfg.dim > 0 && (o->cfg.kind == CR_MACH_IPSC2 || o->cfg.kind == CR_MACH_IPSC1) &&
        o->cfg.dim > 7)
        return bad(o, "dimension %d is over 7 (the iPSC/2 maximum)", o->cfg.dim);
    if (!have_machine && !o->validate) return bad(o, "--machine is required (try --help)");
    if (!o->nsizes) o->sizes[o->nsizes++] = o->t.pattern == CR_PAT_ECHO ? 0 : 1024;
    if (!o->nloads) o->loads[o->nloads++] = o->t.load;
    if (o->t.pattern == CR_PAT_ECHO && o->t.count == 100) o->t.count = 4;
    return 0;
}

typedef struct prog {
    struct timespec t0;
    int shown, idx, total;
} prog;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void progress(void *ctx, double frac)
{
    prog *p = ctx;
    double el = since(&p->t0);
    if (el < 1.0) return;
    fprintf(stderr, "\rnetsim: run %d/%d  %3.0f%%  %.1f s", p->idx + 1, p->total,
            frac > 1 ? 100.0 : frac * 100, el);
    p->shown = 1;
}

static void print_table(const opts *o, const rowv *rows, int n, FILE *f)
{
    int hot = o->t.pattern == CR_PAT_HOTSPOT;
    if (o->csv)
        fprintf(f, "machine,pattern,size,hops,load,msgs,lat_mean_us,lat_p50_us,lat_p95_us,"
                   "lat_p99_us,lat_max_us,thr_MBps,node_MBps,bg_lat_us,deadlock,undelivered\n");
    else
        fprintf(f, "%-6s %-12s %8s %4s %5s %8s %10s %10s %10s %10s %10s %9s%s\n", "mach", "pattern",
                "size", "hops", "load", "msgs", "lat_mean", "p50", "p95", "p99", "max", "MB/s",
                hot ? "   bg_lat" : "");
    for (int i = 0; i < n; i++) {
        const rowv *r = &rows[i];
        const cr_net_result *x = &r->r;
        if (o->csv)
            fprintf(f, "%s,%s,%llu,%d,%.3f,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%.3f,%d,%llu\n",
                    cr_machine_name(o->cfg.kind), cr_pattern_name(o->t.pattern),
                    (unsigned long long)r->size, r->hops, r->load, (unsigned long long)x->msgs,
                    x->lat_mean_us, x->lat_p50_us, x->lat_p95_us, x->lat_p99_us, x->lat_max_us,
                    x->thr_MBps, x->node_MBps, x->bg_lat_mean_us, x->deadlock,
                    (unsigned long long)x->undelivered);
        else {
            fprintf(f, "%-6s %-12s %8llu %4d %5.2f %8llu %10.2f %10.2f %10.2f %10.2f %10.2f %9.3f",
                    cr_machine_name(o->cfg.kind), cr_pattern_name(o->t.pattern),
                    (unsigned long long)r->size, r->hops, r->load, (unsigned long long)x->msgs,
                    x->lat_mean_us, x->lat_p50_us, x->lat_p95_us, x->lat_p99_us, x->lat_max_us,
                    x->thr_MBps);
            if (hot) fprintf(f, " %8.2f", x->bg_lat_mean_us);
            if (x->deadlock)
                fprintf(f, "  DEADLOCK (%llu undelivered)", (unsigned long long)x->undelivered);
            else if (x->undelivered)
                fprintf(f, "  (%llu undelivered)", (unsigned long long)x->undelivered);
            fprintf(f, "\n");
        }
    }
    if (!o->csv)
        fprintf(f, "latencies in us (creation to receipt), MB/s = 10^6 bytes/s delivered\n");
}

static int have_gnuplot(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* echo: latency vs size, one curve per hop count; sweeps: latency vs load per size. */
static int plot(const opts *o, const rowv *rows, int n)
{
    if (!have_gnuplot()) {
        fprintf(stderr,
                "courier netsim: gnuplot is not installed, no plot written to %s "
                "(install gnuplot-nox, or use --csv)\n",
                o->plot);
        return 1;
    }
    FILE *g = popen("gnuplot", "w");
    if (!g) return fprintf(stderr, "courier netsim: cannot run gnuplot\n"), 1;
    int by_size = o->nloads == 1;
    int ncurves = by_size ? (o->nhops ? o->nhops : 1) : o->nsizes;
    fprintf(g, "set terminal png size 900,600\nset output '%s'\nset grid\n", o->plot);
    fprintf(g, "set title 'courier netsim: %s %s'\n", cr_machine_name(o->cfg.kind),
            cr_pattern_name(o->t.pattern));
    fprintf(g, "set xlabel '%s'\nset ylabel 'latency (us)'\n",
            by_size ? "message size (bytes)" : "offered load");
    if (by_size) fprintf(g, "set logscale x 2\n");
    fprintf(g, "plot ");
    for (int c = 0; c < ncurves; c++) {
        if (by_size)
            fprintf(g, "%s'-' using 1:2 with linespoints title '%d hops'", c ? ", " : "",
                    o->nhops ? o->hops[c] : rows[0].hops);
        else
            fprintf(g, "%s'-' using 1:2 with linespoints title '%llu bytes'", c ? ", " : "",
                    (unsigned long long)o->sizes[c]);
    }
    fprintf(g, "\n");
    for (int c = 0; c < ncurves; c++) {
        for (int i = 0; i < n; i++) {
            const rowv *r = &rows[i];
            if (by_size && o->nhops && r->hops != o->hops[c]) continue;
            if (!by_size && r->size != o->sizes[c]) continue;
            fprintf(g, "%g %g\n", by_size ? (r->size ? (double)r->size : 1.0) : r->load,
                    r->r.lat_mean_us);
        }
        fprintf(g, "e\n");
    }
    int rc = pclose(g);
    if (rc != 0) return fprintf(stderr, "courier netsim: gnuplot failed writing %s\n", o->plot), 1;
    fprintf(stderr, "courier netsim: plot written to %s\n", o->plot);
    return 0;
}

static int validate(void)
{
    cr_valid_row rows[64];
    int n = cr_net_validate(rows, 64), badn = 0;
    printf("%-58s %9s %10s %10s %8s  ok\n", "figure", "unit", "published", "simulated", "error");
    for (int i = 0; i < n; i++) {
        printf("%-58s %9s %10.4g %10.4g %+7.1f%%  %s\n", rows[i].what, rows[i].unit,
               rows[i].published, rows[i].simulated, rows[i].err_pct, rows[i].ok ? "yes" : "NO");
        badn += !rows[i].ok;
    }
    printf("%d figures, %d outside tolerance\n", n, badn);
    return badn ? 1 : 0;
}

int cr_netsim_parse(int argc, char **argv, char *err, size_t errlen)
{
    opts o;
    return parse(&o, argc, argv, err, errlen);
}

int cr_netsim_main(int argc, char **argv)
{
    opts o;
    char err[1024];
    int rc = parse(&o, argc, argv, err, sizeof err);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc) {
        fprintf(stderr, "courier netsim: %s\n", err);
        return rc;
    }
    if (o.validate) return validate();
    int nh = (o.t.pattern == CR_PAT_ECHO && o.nhops) ? o.nhops : 1;
    int total = o.nloads * o.nsizes * nh;
    rowv *rows = calloc((size_t)total, sizeof(rowv));
    if (!rows) return fprintf(stderr, "courier netsim: out of memory\n"), 1;
    prog p = {.total = total};
    clock_gettime(CLOCK_MONOTONIC, &p.t0);
    int n = 0;
    for (int li = 0; li < o.nloads; li++)
        for (int si = 0; si < o.nsizes; si++)
            for (int hi = 0; hi < nh; hi++, n++) {
                cr_traffic t = o.t;
                t.load = o.loads[li];
                t.bytes = o.sizes[si];
                if (o.t.pattern == CR_PAT_ECHO && o.nhops) {
                    t.src = 0;
                    t.dst = cr_net_node_at_hops(&o.cfg, o.hops[hi]);
                    if (t.dst < 0) {
                        fprintf(stderr,
                                "courier netsim: no node is %d hops from node 0 on this "
                                "machine\n",
                                o.hops[hi]);
                        free(rows);
                        return 2;
                    }
                }
                char err[200];
                p.idx = n;
                rows[n].size = t.bytes;
                rows[n].load = t.load;
                if (cr_net_run(&o.cfg, &t, &rows[n].r, progress, &p, err, sizeof(err)) != 0) {
                    if (p.shown) fprintf(stderr, "\n");
                    fprintf(stderr, "courier netsim: %s\n", err);
                    free(rows);
                    return 2;
                }
                int a = t.src < 0 ? 0 : t.src, b = t.dst < 0 ? 1 : t.dst;
                rows[n].hops = -1;
                if (o.t.pattern == CR_PAT_ECHO || o.t.pattern == CR_PAT_EXCHANGE) {
                    char e2[100];
                    cr_net *net = cr_net_new(&o.cfg, e2, sizeof(e2));
                    rows[n].hops = net ? cr_net_hops(net, a, b) : -1;
                    cr_net_free(net);
                }
            }
    if (p.shown) fprintf(stderr, "\r%60s\r", "");
    print_table(&o, rows, n, stdout);
    rc = 0;
    if (o.plot) rc = plot(&o, rows, n);
    free(rows);
    return rc;
}
