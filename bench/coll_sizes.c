/* bench/coll.c with the sizes given on the command line: the same measurement
 * (coll.c's measure(): calibrated iteration count, the slowest rank's average
 * time per operation, "coll OP BYTES US" lines), the same two builds (courier's
 * MPL by default, any MPI with -DUSE_MPI), for the rows that coll.c's fixed
 * plan does not have (broadcast 16 KiB .. 4 MiB, all-to-all 128 KiB blocks).
 *
 *   coll_sizes [--quick] OP:SIZE[,SIZE...] ...
 *   e.g. coll_sizes --quick bcast:16384,65536 alltoall:1024,8192 allreduce:8
 * OP: barrier allreduce bcast alltoall allgather; sizes as in coll.c (per rank:
 * the vector of allreduce, the message of bcast, one block of alltoall and
 * allgather). bench/scale-run.sh runs it beside Open MPI. */
#define main coll_fixed_main /* coll.c's own main (its fixed plan) is not used */
#include "coll.c"
#undef main

static int known(const char *op)
{
    static const char *ops[] = {"barrier", "allreduce", "bcast", "alltoall", "allgather"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(op, ops[i])) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    start(&argc, &argv);
    double budget = 0.3;
    size_t cap = 64;
    for (int pass = 0; pass < 2; pass++) { /* 0: check and size the buffers, 1: measure */
        for (int i = 1; i < argc; i++) {
            if (!strcmp(argv[i], "--quick")) {
                budget = 0.05;
                continue;
            }
            char op[32];
            const char *colon = strchr(argv[i], ':');
            size_t oplen = colon ? (size_t)(colon - argv[i]) : 0;
            if (!colon || oplen >= sizeof op) goto usage;
            memcpy(op, argv[i], oplen);
            op[oplen] = 0;
            if (!known(op)) goto usage;
            for (const char *p = colon + 1; *p;) {
                char *end;
                long size = strtol(p, &end, 10);
                if (end == p || size < 0 || (*end && *end != ',')) goto usage;
                p = *end ? end + 1 : end;
                if (pass == 0) {
                    size_t need = (size_t)size;
                    if (!strcmp(op, "alltoall") || !strcmp(op, "allgather")) need *= (size_t)np;
                    if (need + 64 > cap) cap = need + 64;
                } else {
                    measure(op, size, budget);
                }
            }
        }
        if (pass == 0) {
            sbuf = calloc(cap, 1);
            rbuf = calloc(cap, 1);
            touch(sbuf, rbuf, cap);
            if (!sbuf || !rbuf) {
                fprintf(stderr, "coll_sizes: no memory for %zu bytes\n", cap);
                return 2;
            }
            if (me == 0) printf("# op bytes us_per_op (%d ranks)\n", np);
        }
    }
    free(sbuf);
    free(rbuf);
    stop();
    return 0;
usage:
    if (me == 0)
        fprintf(stderr, "usage: coll_sizes [--quick] OP:SIZE[,SIZE...] ...  (OP: barrier "
                        "allreduce bcast alltoall allgather)\n");
    stop();
    return 2;
}
