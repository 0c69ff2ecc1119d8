/* The net_validation test: the network models (src/net) against the seed papers'
 * figures. Prints the validation table (docs/validation.md) and fails if a row
 * is off, missing, or unknown.
 *
 * Invariants: the published figures, and what "ok" means for each (within 5 %,
 * or the paper's bound: "over 2.7 MB/s", "less than 1 us"), are this file's own
 * data, copied from the papers, not taken from the library under test: the
 * library's rows give only the simulated values (and their published column,
 * which must agree with the papers'). Every row of the table must come back,
 * and a row the library adds that the table does not know fails until its
 * paper figure is written here. One row compares the model with itself (the
 * iPSC/1's per-hop increment, no paper figure): its reference is the library's.
 * Every row must come out the same, to the last bit, when the table is made a
 * second time (determinism: the figures do not change from run to run). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cr_net.h"

enum { NEAR, ATLEAST, ATMOST, SELF };

static const struct paper {
    const char *what;
    double published; /* the paper's figure (SELF: none; the library's reference) */
    int cmp;          /* NEAR: within 5 %; ATLEAST/ATMOST: the paper's bound */
} papers[] = {
    {"iPSC/2 NX/2 0-byte latency, 1 hop", 350, NEAR},
    {"iPSC/2 NX/2 0-byte latency, 5 hops", 350, NEAR},
    {"iPSC/2 hardware share of the 5-hop 0-byte latency (~5% of sw)", 5, NEAR},
    {"iPSC/2 bandwidth 1 MB message, 1 hop (\"over 2.7\")", 2.7, ATLEAST},
    {"iPSC/2 bandwidth 1 MB message, 5 hops (\"over 2.7\")", 2.7, ATLEAST},
    {"iPSC/1 store-and-forward: per-hop increment 1..5 vs 1..2", 0, SELF},
    {"iPSC/2 latency under 1/5 of iPSC/1 (1 hop)", 0.2, ATMOST},
    {"CS-2 Direct DMA latency (Table 1)", 9, NEAR},
    {"CS-2 Channel comms latency (Table 1)", 24, NEAR},
    {"CS-2 NX/2 latency (Table 1)", 78, NEAR},
    {"CS-2 PVM latency (Table 1)", 78, NEAR},
    {"CS-2 PARMACS latency (Table 1)", 78, NEAR},
    {"CS-2 Direct DMA sustained bandwidth (Table 1)", 44, NEAR},
    {"CS-2 NX/2 sustained bandwidth (Table 1)", 44, NEAR},
    {"CS-2 barrier sync, 2 PEs (Table 1)", 28, NEAR},
    {"CS-2 latency added per switch traversed", 170, NEAR},
    {"CS-2 longest route in 1024 PEs: switches", 9, NEAR},
    {"CS-2 longest route adds to endpoint latency", 1.5, NEAR},
    {"iWarp one logical channel uses the full bus", 40, NEAR},
    {"iWarp header, 3 cells straight (150+100+3x200)", 850, NEAR},
    {"iWarp header, 3+2 cells, 1 corner (+50 addr +50 turn)", 1350, NEAR},
    {"iWarp two active channels share a bus: each gets", 20, NEAR},
    {"SP2 MPL latency, thin node (Table 1)", 40, NEAR},
    {"SP2 MPL pt-to-pt bandwidth, thin (Table 1)", 35.5, NEAR},
    {"SP2 MPL exchange bandwidth, thin (Table 1)", 37, NEAR},
    {"SP2 MPL latency, fat node (Table 1)", 39, NEAR},
    {"SP2 MPL pt-to-pt bandwidth, fat (Table 1)", 35.5, NEAR},
    {"SP2 MPL exchange bandwidth, fat (Table 1)", 48.2, NEAR},
    {"SP1 MPL latency, 370 node, TB0 adapter (Table 1)", 37.6, NEAR},
    {"SP1 MPL pt-to-pt bandwidth, 370/TB0 (Table 1)", 8.7, NEAR},
    {"SP1 MPL exchange bandwidth, 370/TB0 (Table 1)", 8.8, NEAR},
    {"SP2 switch latency, 5 chips (\"less than 1 us\")", 1, ATMOST},
    /* seed 004: section 10 ("a message transfer within 10 microseconds"), the abstract
     * ("startup time to approximately 20 microseconds"), section 4 (PEACE's parts: 7.5 +
     * 15 + 17.5 + 20 % go with one process per node), section 9 (TICNET) */
    {"GMD IPC message of the CP, 16 bytes (\"within 10 us\")", 10, ATMOST},
    {"GMD startup of a synchronous send with the CP (~20 us)", 20, NEAR},
    {"GMD one process per node: startup that disappears (60 %)", 60, NEAR},
    {"GMD TICNET cluster bus: 1 MiB inside a cluster", 640, NEAR},
    {"GMD TICNET crossbar link: 1 MiB between clusters", 100, NEAR},
};
enum { NPAPERS = sizeof papers / sizeof *papers };

static const struct paper *paper_of(const char *what)
{
    for (int i = 0; i < NPAPERS; i++)
        if (!strcmp(papers[i].what, what)) return &papers[i];
    return NULL;
}

int main(void)
{
    cr_valid_row rows[64];
    int n = cr_net_validate(rows, 64), bad = 0, seen[NPAPERS] = {0};
    printf("| figure | unit | published | simulated | error | ok |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        const cr_valid_row *r = &rows[i];
        const struct paper *p = paper_of(r->what);
        if (!p) {
            printf("| %s | %s | ? | %.4g | | NO: not in tests/net/validate_main.c: add the "
                   "paper's figure there |\n",
                   r->what, r->unit, r->simulated);
            bad++;
            continue;
        }
        seen[p - papers]++;
        double pub = p->cmp == SELF ? r->published : p->published;
        double err = pub != 0 ? (r->simulated - pub) / pub * 100.0 : 0;
        int ok = p->cmp == ATLEAST  ? r->simulated >= pub
                 : p->cmp == ATMOST ? r->simulated <= pub
                                    : pub != 0 && fabs(err) <= 5.0;
        const char *why = ok ? "yes" : "NO";
        if (ok && fabs(r->published - pub) > 1e-9 * fabs(pub)) {
            why = "NO: the library's published figure differs from the paper's";
            ok = 0;
        }
        printf("| %s | %s | %.4g | %.4g | %+.1f %% | %s |\n", r->what, r->unit, pub, r->simulated,
               err, why);
        bad += !ok;
    }
    for (int i = 0; i < NPAPERS; i++)
        if (seen[i] != 1) {
            printf("| %s | | %.4g | | | NO: %s |\n", papers[i].what, papers[i].published,
                   seen[i] ? "reported more than once" : "not reported by cr_net_validate");
            bad++;
        }
    /* every figure is the same run after run: the rows again, to the last bit */
    cr_valid_row again[64];
    int n2 = cr_net_validate(again, 64);
    for (int i = 0; i < n; i++)
        if (n2 != n || memcmp(&rows[i].simulated, &again[i].simulated, sizeof(double))) {
            printf("| %s | | | %.17g then %.17g | | NO: not the same in a second run |\n",
                   rows[i].what, rows[i].simulated, i < n2 ? again[i].simulated : 0.0);
            bad++;
        }
    printf("\n%d rows, %d outside tolerance, missing or not repeatable (%d figures from the "
           "papers)\n",
           n, bad, NPAPERS);
    return bad ? 1 : 0;
}
