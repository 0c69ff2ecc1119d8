/* MPI-4.0 partitioned communication between the ranks of each pair (2k, 2k+1):
 * the two sides split the same data into different partition counts, the
 * sender marks its partitions ready in reverse order (MPI_Pready, _list,
 * _range), the receiver polls MPI_Parrived and checks each partition as it
 * arrives; two operations with the same tag pair up in the order they were
 * made although started in the other order; strided datatypes on either side;
 * every request restarted 3 times, then freed. Rank 0 prints "partitioned ok". */
#include <stdbool.h>

#include "mcheck.h"

#define SP 8 /* sender partitions of SC ints */
#define SC 3
#define RP 6 /* receiver partitions of RC ints */
#define RC 4
#define NI (SP * SC)
#define NS 20 /* strided operations: ints */

static int val(int base, int r, int i)
{
    return base + r * 1000 + i;
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int me, np;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 2, "needs 2 ranks");
    MPI_Datatype every2; /* one int, extent two ints */
    OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every2));
    OK(MPI_Type_commit(&every2));
    int a[NI], b[NI], c[2 * NS], d[2 * NS];
    MPI_Request rq[4]; /* A, B (same tag), C (tag 6), D (tag 7) */
    bool sender = me % 2 == 0, active = me + 1 < np || !sender;
    int peer = sender ? me + 1 : me - 1;
    if (active && sender) {
        OK(MPI_Psend_init(a, SP, SC, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
        OK(MPI_Psend_init(b, 2, NI / 2, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
        OK(MPI_Psend_init(c, 4, NS / 4, every2, peer, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]));
        OK(MPI_Psend_init(d, 5, NS / 5, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]));
    } else if (active) {
        OK(MPI_Precv_init(a, RP, RC, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
        OK(MPI_Precv_init(b, NI, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
        OK(MPI_Precv_init(c, 2, NS / 2, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]));
        OK(MPI_Precv_init(d, 4, NS / 4, every2, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]));
    }
    for (int r = 0; active && r < 3; r++) {
        if (sender) {
            for (int i = 0; i < NI; i++) a[i] = val(0, r, i), b[i] = val(50000, r, i);
            for (int i = 0; i < NS; i++) c[2 * i] = val(70000, r, i), c[2 * i + 1] = -1;
            for (int i = 0; i < NS; i++) d[i] = val(90000, r, i);
            MPI_Request order[4] = {rq[3], rq[1], rq[2], rq[0]}; /* B before A */
            OK(MPI_Startall(4, order));
            if (r == 0) {
                for (int k = SP - 1; k >= 0; k--) OK(MPI_Pready(k, rq[0]));
            } else if (r == 1) {
                int list[SP];
                for (int k = 0; k < SP; k++) list[k] = SP - 1 - k;
                OK(MPI_Pready_list(SP, list, rq[0]));
            } else {
                OK(MPI_Pready_range(SP / 2, SP - 1, rq[0]));
                OK(MPI_Pready_range(0, SP / 2 - 1, rq[0]));
            }
            OK(MPI_Pready_range(0, 1, rq[1]));
            for (int k = 3; k >= 0; k--) OK(MPI_Pready(k, rq[2]));
            OK(MPI_Pready_range(0, 4, rq[3]));
            OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        } else {
            for (int i = 0; i < NI; i++) a[i] = b[i] = -1;
            for (int i = 0; i < 2 * NS; i++) c[i] = d[i] = -1;
            OK(MPI_Start(&rq[0]));
            OK(MPI_Startall(3, &rq[1]));
            int seen[RP] = {0}, nseen = 0;
            while (nseen < RP)
                for (int k = 0; k < RP; k++) {
                    int flag = 0;
                    if (seen[k]) continue;
                    OK(MPI_Parrived(rq[0], k, &flag));
                    if (!flag) continue;
                    for (int i = k * RC; i < (k + 1) * RC; i++)
                        CHECK(a[i] == val(0, r, i), "round %d a[%d] = %d", r, i, a[i]);
                    seen[k] = 1;
                    nseen++;
                }
            MPI_Status st[4];
            OK(MPI_Waitall(4, rq, st));
            for (int q = 0; q < 4; q++)
                CHECK(st[q].MPI_SOURCE == peer && st[q].MPI_TAG == (q < 2 ? 5 : q + 4),
                      "status %d: %d/%d", q, st[q].MPI_SOURCE, st[q].MPI_TAG);
            int n = 0;
            OK(MPI_Get_count(&st[0], MPI_INT, &n));
            CHECK(n == NI, "count %d", n);
            for (int i = 0; i < NI; i++) {
                CHECK(a[i] == val(0, r, i), "round %d a[%d] = %d", r, i, a[i]);
                CHECK(b[i] == val(50000, r, i), "round %d b[%d] = %d (pairing)", r, i, b[i]);
            }
            for (int i = 0; i < NS; i++) {
                CHECK(c[i] == val(70000, r, i), "round %d c[%d] = %d", r, i, c[i]);
                CHECK(d[2 * i] == val(90000, r, i) && d[2 * i + 1] == -1, "round %d d[%d] = %d, %d",
                      r, i, d[2 * i], d[2 * i + 1]);
            }
            int flag = 0; /* inactive again: every partition counts as arrived */
            OK(MPI_Parrived(rq[0], 0, &flag));
            CHECK(flag, "parrived on an inactive request");
        }
    }
    for (int q = 0; active && q < 4; q++) {
        OK(MPI_Request_free(&rq[q]));
        CHECK(rq[q] == MPI_REQUEST_NULL, "request %d not freed", q);
    }
    OK(MPI_Type_free(&every2));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (!me) printf("partitioned ok\n");
    OK(MPI_Finalize());
    return 0;
}
