/* The machine descriptors (cr_machine, src/net): every machine in CR_MACHINES has a complete
 * descriptor that the table, the lookups and courier run --sim's defaults agree with: its
 * name finds it and its kind; its default software models exist (or are "hw"), the
 * one-sided default carries long messages as the job's model does (else --sim refuses every
 * job on the machine); a machine made with its defaults works (echo 0 bytes between two
 * nodes in positive time); its --sim shape holds n ranks; and the validation table's rows
 * are the machines' own, in the table's order. */
#include <stdio.h>
#include <string.h>

#include "cr_net.h"

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) failures++, printf("FAIL line %d: ", __LINE__), printf(__VA_ARGS__), puts("");   \
    } while (0)

static const cr_swmodel *model(cr_machine_kind k, const char *name)
{
    return strcmp(name, "hw") ? cr_swmodel_find(k, name) : NULL;
}

static void one(cr_machine_kind k)
{
    const cr_machine *m = cr_machine_get(k);
    CHECK(m && m->name && m->title, "machine %d has no descriptor or name", (int)k);
    if (!m) return;
    cr_machine_kind back;
    CHECK(cr_machine_find(m->name) == m, "%s: cr_machine_find", m->name);
    CHECK(!cr_machine_parse(m->name, &back) && back == k, "%s: cr_machine_parse", m->name);
    CHECK(!strcmp(cr_machine_name(k), m->name), "%s: cr_machine_name", m->name);
    CHECK(m->init && m->fini && m->wire && m->hops && m->stats && m->inject_bps,
          "%s: a model hook is missing", m->name);
    CHECK(!m->fabric == !m->link_name, "%s: fabric and link_name go together", m->name);
    for (size_t i = 0; i < m->nsw; i++) {
        CHECK(m->sw[i].name && m->sw[i].desc, "%s: software model %zu unnamed", m->name, i);
        CHECK(cr_swmodel_find(k, m->sw[i].name) == &m->sw[i], "%s: %s is not found as itself",
              m->name, m->sw[i].name);
    }
    CHECK(!m->sw_default || cr_swmodel_default(k), "%s: default model %s missing", m->name,
          m->sw_default);
    if (m->sim) {
        CHECK(m->sim_sw && (!strcmp(m->sim_sw, "hw") || cr_swmodel_find(k, m->sim_sw)),
              "%s: --sim software %s missing", m->name, m->sim_sw ? m->sim_sw : "(null)");
        CHECK(m->cpu > 0, "%s: --sim cpu ratio %g", m->name, m->cpu);
        CHECK(!m->sim_keys == !m->sim_key && !m->sim_keys == !m->sim_keys_what &&
                  !m->sim_keys == !m->sim_keys_help,
              "%s: its --sim keys are named, described, helped and checked together", m->name);
        if (m->sim_rma && m->sim_sw) {
            const cr_swmodel *a = model(k, m->sim_sw), *b = model(k, m->sim_rma);
            CHECK(b, "%s: --sim one-sided model %s missing", m->name, m->sim_rma);
            CHECK(a && b && a->eager_max == b->eager_max && a->ctl_ps == b->ctl_ps,
                  "%s: rma=%s is not of sw=%s's protocol", m->name, m->sim_rma, m->sim_sw);
        }
        for (int n = 1; n <= 64; n += 21) { /* the shape holds n ranks */
            cr_net_config c = {.kind = k, .seed = 1, .tokens = 1, .sw = m->sim_sw};
            if (m->sim_shape)
                m->sim_shape(&c, n);
            else
                c.nodes = n < 2 ? 2 : n;
            char err[200];
            cr_net *net = cr_net_new(&c, err, sizeof err);
            CHECK(net, "%s: --sim shape for %d ranks: %s", m->name, n, err);
            if (net)
                CHECK(cr_net_nodes(net) >= n, "%s: %d nodes for %d ranks", m->name,
                      cr_net_nodes(net), n);
            cr_net_free(net);
        }
    }
    cr_net_config c = {.kind = k, .nodes = k == CR_MACH_IWARP ? 4 : 2, .seed = 1, .wrap = 1};
    cr_time t = cr_net_echo(&c, 0, 1, 0, 2);
    CHECK(t > 0, "%s: 0-byte echo on its defaults took %lld ps", m->name, (long long)t);
}

int main(void)
{
    int sim = 0;
    for (int k = 0; k < CR_MACH_COUNT; k++) {
        one((cr_machine_kind)k);
        sim += cr_machine_get((cr_machine_kind)k)->sim;
    }
    CHECK(sim >= 5, "--sim offers %d machines", sim);
    CHECK(!cr_machine_get(CR_MACH_COUNT) && !cr_machine_find("vax"), "no machine beyond the table");
    CHECK(!cr_machine_get(CR_MACH_IPSC1)->sim, "the iPSC/1 is for comparisons only");
    /* the validation table is the machines' rows, by the table's order: the iPSC/2's first,
     * GMD's last */
    cr_valid_row rows[64];
    int n = cr_net_validate(rows, 64);
    CHECK(n > 20 && !strncmp(rows[0].what, "iPSC/2", 6) && !strncmp(rows[n - 1].what, "GMD", 3),
          "validation: %d rows, first '%s', last '%s'", n, n ? rows[0].what : "",
          n ? rows[n - 1].what : "");
    printf("%s: %d machines, %d offered by --sim, %d validation rows\n", failures ? "FAILED" : "ok",
           CR_MACH_COUNT, sim, n);
    return failures != 0;
}
