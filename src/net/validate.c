/* Validation: the published figures of the seed papers next to what the models produce.
 * Each machine's descriptor writes its own rows (its validate hook, in its file) with the
 * helpers here; the table is theirs in the order of CR_MACHINES. Each row runs a small
 * experiment on a fresh machine; `ok` means within 5 % (or, for a published bound such as
 * "over 2.7 MB/s" or "under 1 us", that the bound holds). docs/validation.md is this table;
 * tests/net asserts every row.
 */
#include <math.h>
#include <string.h>

#include "net_internal.h"

struct cr_valid_ctx {
    cr_valid_row *rows;
    int n, max;
};

void cr_valid_add(cr_valid_ctx *v, const char *what, const char *unit, double pub, double sim,
                  int cmp)
{
    if (v->n >= v->max) return;
    cr_valid_row *r = &v->rows[v->n++];
    snprintf(r->what, sizeof(r->what), "%s", what);
    snprintf(r->unit, sizeof(r->unit), "%s", unit);
    r->published = pub;
    r->simulated = sim;
    r->err_pct = pub != 0 ? (sim - pub) / pub * 100.0 : 0;
    if (cmp == CR_CMP_NEAR)
        r->ok = fabs(r->err_pct) <= 5.0;
    else if (cmp == CR_CMP_ATLEAST)
        r->ok = sim >= pub;
    else
        r->ok = sim <= pub;
}

cr_net_config cr_valid_config(cr_machine_kind k, int nodes, const char *sw)
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

double cr_valid_echo_us(const cr_net_config *c, int a, int b, uint64_t bytes, int reps)
{
    return (double)cr_net_echo(c, a, b, bytes, reps) / 1e6;
}

double cr_valid_bw_MBps(const cr_net_config *c, int a, int b, uint64_t bytes)
{
    return (double)bytes / cr_valid_echo_us(c, a, b, bytes, 1);
}

double cr_valid_exchange_MBps(const cr_net_config *c, uint64_t bytes)
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

double cr_valid_coll_us(const cr_net_config *c, cr_pattern p)
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

int cr_net_validate(cr_valid_row *rows, int max)
{
    cr_valid_ctx v = {rows, 0, max};
    for (int k = 0; k < CR_MACH_COUNT; k++) {
        const cr_machine *m = cr_machine_get((cr_machine_kind)k);
        if (m->validate) m->validate(&v);
    }
    return v.n;
}
