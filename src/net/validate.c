/* Validation: the published figures of the seed papers next to what the models produce.
 * Each row runs a small experiment on a fresh machine; `ok` means within 5 % (or, for a
 * published bound such as "over 2.7 MB/s" or "under 1 us", that the bound holds).
 * docs/validation.md is this table; tests/net asserts every row.
 */
#include <math.h>
#include <string.h>

#include "net_internal.h"

typedef struct vctx {
    cr_valid_row *rows;
    int n, max;
} vctx;

enum { CMP_NEAR, CMP_ATLEAST, CMP_ATMOST };

static void row(vctx *v, const char *what, const char *unit, double pub, double sim, int cmp)
{
    if (v->n >= v->max) return;
    cr_valid_row *r = &v->rows[v->n++];
    snprintf(r->what, sizeof(r->what), "%s", what);
    snprintf(r->unit, sizeof(r->unit), "%s", unit);
    r->published = pub;
    r->simulated = sim;
    r->err_pct = pub != 0 ? (sim - pub) / pub * 100.0 : 0;
    if (cmp == CMP_NEAR)
        r->ok = fabs(r->err_pct) <= 5.0;
    else if (cmp == CMP_ATLEAST)
        r->ok = sim >= pub;
    else
        r->ok = sim <= pub;
}

static cr_net_config machine(cr_machine_kind k, int nodes, const char *sw)
{
    cr_net_config c;
    memset(&c, 0, sizeof(c));
    c.kind = k;
    c.nodes = nodes;
    c.sw = sw;
    c.wrap = 1;
    c.seed = 1;
    c.tokens = 1;
    return c;
}

static double echo_us(const cr_net_config *c, int a, int b, uint64_t bytes, int reps)
{
    return (double)cr_net_echo(c, a, b, bytes, reps) / 1e6;
}

static double bw_MBps(const cr_net_config *c, int a, int b, uint64_t bytes)
{
    return (double)bytes / echo_us(c, a, b, bytes, 1);
}

static double exchange_MBps(const cr_net_config *c, uint64_t bytes)
{
    cr_traffic t;
    cr_traffic_defaults(&t);
    t.pattern = CR_PAT_EXCHANGE;
    t.bytes = bytes;
    t.count = 1;
    cr_net_result r;
    char err[160];
    if (cr_net_run(c, &t, &r, NULL, NULL, err, sizeof(err))) return -1;
    return r.thr_MBps;
}

static double coll_us(const cr_net_config *c, cr_pattern p)
{
    cr_traffic t;
    cr_traffic_defaults(&t);
    t.pattern = p;
    t.bytes = 0;
    t.count = 3;
    cr_net_result r;
    char err[160];
    if (cr_net_run(c, &t, &r, NULL, NULL, err, sizeof(err))) return -1;
    return r.lat_mean_us;
}

static void ipsc2_rows(vctx *v)
{
    cr_net_config c = machine(CR_MACH_IPSC2, 32, NULL);
    double l1 = echo_us(&c, 0, 1, 0, 4), l5 = echo_us(&c, 0, 31, 0, 4);
    row(v, "iPSC/2 NX/2 0-byte latency, 1 hop", "us", 350, l1, CMP_NEAR);
    row(v, "iPSC/2 NX/2 0-byte latency, 5 hops", "us", 350, l5, CMP_NEAR);
    row(v, "iPSC/2 5-hop minus 1-hop latency (hw ~5% of sw)", "% of 1hop", 5, (l5 - l1) / l1 * 100,
        CMP_ATMOST);
    row(v, "iPSC/2 bandwidth 1 MB message, 1 hop (\"over 2.7\")", "MB/s", 2.7,
        bw_MBps(&c, 0, 1, 1000000), CMP_ATLEAST);
    row(v, "iPSC/2 bandwidth 1 MB message, 5 hops (\"over 2.7\")", "MB/s", 2.7,
        bw_MBps(&c, 0, 31, 1000000), CMP_ATLEAST);
    cr_net_config f = machine(CR_MACH_IPSC1, 32, NULL);
    double s1 = echo_us(&f, 0, 1, 0, 2), s2 = echo_us(&f, 0, 3, 0, 2),
           s5 = echo_us(&f, 0, 31, 0, 2);
    row(v, "iPSC/1 store-and-forward: per-hop increment 1..5 vs 1..2", "us/hop", s2 - s1,
        (s5 - s1) / 4, CMP_NEAR);
    row(v, "iPSC/2 latency under 1/5 of iPSC/1 (1 hop)", "ratio", 0.2, l1 / s1, CMP_ATMOST);
}

static void cs2_rows(vctx *v)
{
    static const struct {
        const char *sw, *what;
        double us;
    } t1[] = {{"dma", "CS-2 Direct DMA latency (Table 1)", 9},
              {"channel", "CS-2 Channel comms latency (Table 1)", 24},
              {"nx2", "CS-2 NX/2 latency (Table 1)", 78},
              {"pvm", "CS-2 PVM latency (Table 1)", 78},
              {"parmacs", "CS-2 PARMACS latency (Table 1)", 78}};
    for (size_t i = 0; i < sizeof(t1) / sizeof(t1[0]); i++) {
        cr_net_config c = machine(CR_MACH_CS2, 4, t1[i].sw);
        row(v, t1[i].what, "us", t1[i].us, echo_us(&c, 0, 1, 0, 4), CMP_NEAR);
    }
    cr_net_config c = machine(CR_MACH_CS2, 4, "dma");
    row(v, "CS-2 Direct DMA sustained bandwidth (Table 1)", "MB/s", 44, bw_MBps(&c, 0, 1, 1 << 20),
        CMP_NEAR);
    c = machine(CR_MACH_CS2, 4, "nx2");
    row(v, "CS-2 NX/2 sustained bandwidth (Table 1)", "MB/s", 44, bw_MBps(&c, 0, 1, 1 << 20),
        CMP_NEAR);
    c = machine(CR_MACH_CS2, 4, "barrier");
    row(v, "CS-2 barrier sync, 2 PEs (Table 1)", "us", 28, coll_us(&c, CR_PAT_BARRIER), CMP_NEAR);
    c = machine(CR_MACH_CS2, 1024, "hw");
    double near = echo_us(&c, 0, 1, 0, 2), far = echo_us(&c, 0, 1023, 0, 2);
    cr_net *net = cr_net_new(&c, (char[80]){0}, 80);
    int sw9 = net ? cr_net_hops(net, 0, 1023) : -1;
    cr_net_free(net);
    row(v, "CS-2 latency added per switch traversed", "ns", 170, (far - near) * 1000 / (sw9 - 1),
        CMP_NEAR);
    row(v, "CS-2 longest route in 1024 PEs: switches", "switches", 9, sw9, CMP_NEAR);
    row(v, "CS-2 longest route adds to endpoint latency", "us", 1.5, (far - near) * sw9 / (sw9 - 1),
        CMP_NEAR);
}

static void iwarp_rows(vctx *v)
{
    cr_net_config c = machine(CR_MACH_IWARP, 0, "hw");
    c.mesh_x = c.mesh_y = 8;
    row(v, "iWarp one logical channel uses the full bus", "MB/s", 40, bw_MBps(&c, 0, 1, 1 << 18),
        CMP_NEAR);
    double h3 = echo_us(&c, 0, 3, 0, 2) * 1000 - 100; /* minus the end marker's last word */
    row(v, "iWarp header, 3 cells straight (150+100+3x200)", "ns", 850, h3, CMP_NEAR);
    double hc = echo_us(&c, 0, 8 * 2 + 3, 0, 2) * 1000 - 100;
    row(v, "iWarp header, 3+2 cells, 1 corner (+50 addr +50 turn)", "ns", 1350, hc, CMP_NEAR);
    /* two channels multiplexed on cell 1's XRight bus */
    cr_net *net = NULL;
    (void)net;
    cr_traffic t;
    cr_traffic_defaults(&t);
    t.pattern = CR_PAT_SHIFT;
    t.shift = 2;
    t.bytes = 1 << 16;
    t.count = 1;
    t.window = 1;
    cr_net_config m = c;
    m.mesh_x = 4;
    m.mesh_y = 1;
    m.wrap = 0;
    m.nodes = 0;
    cr_net_result r;
    char err[160];
    /* cells 0->2 and 1->3 share bus 1->2; 2->0 and 3->1 share bus 2->1 (mesh, no wrap) */
    if (cr_net_run(&m, &t, &r, NULL, NULL, err, sizeof(err)) == 0)
        row(v, "iWarp two active channels share a bus: each gets", "MB/s", 20,
            (double)t.bytes / r.lat_max_us, CMP_NEAR);
}

static void sp2_rows(vctx *v)
{
    cr_net_config c = machine(CR_MACH_SP2, 16, "mpl-thin");
    row(v, "SP2 MPL latency, thin node (Table 1)", "us", 40.0, echo_us(&c, 0, 5, 0, 4), CMP_NEAR);
    row(v, "SP2 MPL pt-to-pt bandwidth, thin (Table 1)", "MB/s", 35.5, bw_MBps(&c, 0, 5, 1 << 20),
        CMP_NEAR);
    row(v, "SP2 MPL exchange bandwidth, thin (Table 1)", "MB/s", 37.0, exchange_MBps(&c, 1 << 20),
        CMP_NEAR);
    c = machine(CR_MACH_SP2, 16, "mpl-fat");
    row(v, "SP2 MPL latency, fat node (Table 1)", "us", 39.0, echo_us(&c, 0, 5, 0, 4), CMP_NEAR);
    row(v, "SP2 MPL pt-to-pt bandwidth, fat (Table 1)", "MB/s", 35.5, bw_MBps(&c, 0, 5, 1 << 20),
        CMP_NEAR);
    row(v, "SP2 MPL exchange bandwidth, fat (Table 1)", "MB/s", 48.2, exchange_MBps(&c, 1 << 20),
        CMP_NEAR);
    c = machine(CR_MACH_SP2, 64, "hw");
    double sw = (echo_us(&c, 0, 63, 0, 2) - echo_us(&c, 0, 1, 0, 2)) * 5 / 4;
    row(v, "SP2 switch latency, 5 chips (\"less than 1 us\")", "us", 1.0, sw, CMP_ATMOST);
}

int cr_net_validate(cr_valid_row *rows, int max)
{
    vctx v = {rows, 0, max};
    ipsc2_rows(&v);
    cs2_rows(&v);
    iwarp_rows(&v);
    sp2_rows(&v);
    return v.n;
}
