/* The transport registry: every transport courier has, in the order of
 * preference in which the engine offers them its peers (the first that reaches
 * a peer owns it), and the names COURIER_TRANSPORTS picks from. A new
 * transport is one file and one line here.
 *
 * Invariants: self comes first (it serves the rank itself) and sim second (in
 * the simulated mode it serves every other peer); the table is constant. */
#include <stdbool.h>
#include <string.h>

#include "transport.h"

static const cr_transport *const registry[] = {
    &cr_transport_self, &cr_transport_sim, &cr_transport_shm, &cr_transport_tcp, &cr_transport_ucx};

const cr_transport *const *cr_tp_registry(int *n)
{
    *n = (int)(sizeof registry / sizeof registry[0]);
    return registry;
}

bool cr_tp_allowed(const cr_transport *t, const char *list)
{
    if (t == &cr_transport_self || t == &cr_transport_sim || !list || !*list) return true;
    size_t n = strlen(t->name);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, t->name, n) == 0) return true;
        p += k + (p[k] == ',');
    }
    return false;
}

int cr_tp_unknown(const char *list, size_t *len)
{
    int n;
    const cr_transport *const *r = cr_tp_registry(&n);
    for (const char *p = list; p && *p;) {
        size_t k = strcspn(p, ",");
        bool known = false;
        for (int i = 0; i < n; i++)
            known |= strlen(r[i]->name) == k && strncmp(p, r[i]->name, k) == 0;
        if (!known) {
            *len = k;
            return (int)(p - list);
        }
        p += k + (p[k] == ',');
    }
    return -1;
}
