/* Every MPL collective on ALLGRP, on an odd/even partition, on a partition in
 * reverse key order and on an explicit mpc_group list, with message sizes 0, 1,
 * 48, 1 KiB, 4 KiB and 1 MiB (48 and 1 KiB: the largest of the shared-memory
 * forms on ALLGRP), each result checked against a serial computation of what
 * every member contributed. Includes a non-commutative user reduction (affine
 * maps composed in rank order). COURIER_COLL_ALG forces one algorithm. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <courier/mpl.h>

#include "../check.h"

static int me_task;

/* Data of member r at byte/element i. */
static uint8_t byte_of(int r, size_t i)
{
    return (uint8_t)(r * 31 + i * 7 + (i >> 9));
}
static uint32_t word_of(int r, size_t i)
{
    return (uint32_t)r * 2654435761u + (uint32_t)i * 40503u + 7u;
}

/* Non-commutative: element k is the affine map x -> a*x + b (mod 2^32) as
 * (a, b); lo op hi applies lo first, then hi. */
static void affine(uint32_t *lo, uint32_t *hi, uint32_t *out, int *len)
{
    for (int k = 0; k < *len / 8; k++) {
        uint32_t a1 = lo[2 * k], b1 = lo[2 * k + 1], a2 = hi[2 * k], b2 = hi[2 * k + 1];
        out[2 * k] = a1 * a2;
        out[2 * k + 1] = a2 * b1 + b2;
    }
}

static void affine_serial(uint32_t *acc, const uint32_t *x, size_t words)
{
    int len = (int)(words * 4);
    uint32_t tmp[2];
    for (size_t k = 0; k + 1 < words; k += 2) {
        affine(&acc[k], (uint32_t *)&x[k], tmp, &(int){8});
        acc[k] = tmp[0];
        acc[k + 1] = tmp[1];
    }
    (void)len;
}

static void fill_words(uint32_t *w, int r, size_t words)
{
    for (size_t i = 0; i < words; i++) w[i] = word_of(r, i) | 1u; /* odd a: no collapse to 0 */
}

static void test_group(int gid, const char *name)
{
    int size, rank, taskid;
    CHECK(mpc_getsize(&size, gid) == 0, "getsize");
    CHECK(mpc_getrank(&rank, me_task, gid) == 0, "getrank");
    CHECK(mpc_gettaskid(rank, &taskid, gid) == 0 && taskid == me_task, "gettaskid");
    /* 48 and 1024: the largest that travel inline and in a slot of the shared
     * collective area (src/coll/coll_shm.c); 4096 and up go by messages */
    const size_t sizes[] = {0, 1, 48, 1024, 4096, 1 << 20};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t len = sizes[si];
        uint8_t *a = malloc(len + 8), *b = malloc(len + 8), *e = malloc(len + 8);
        int root = size > 1 ? 1 : 0;
        /* bcast */
        for (size_t i = 0; i < len; i++) a[i] = rank == root ? byte_of(root, i) : 0;
        CHECK(mpc_bcast(a, (int)len, root, gid) == 0, "bcast");
        for (size_t i = 0; i < len; i++)
            CHECK(a[i] == byte_of(root, i), "%s bcast %zu: byte %zu", name, len, i);
        /* byte reductions (b_vxor) */
        for (size_t i = 0; i < len; i++) a[i] = byte_of(rank, i);
        memset(e, 0, len);
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < len; i++) e[i] ^= byte_of(r, i);
        memset(b, 0xee, len);
        CHECK(mpc_combine(a, b, (int)len, b_vxor, gid) == 0, "combine");
        CHECK(!memcmp(b, e, len), "%s combine b_vxor %zu", name, len);
        memset(b, 0xee, len);
        CHECK(mpc_reduce(a, b, (int)len, root, b_vxor, gid) == 0, "reduce");
        if (rank == root) CHECK(!memcmp(b, e, len), "%s reduce b_vxor %zu", name, len);
        /* int sum and double max: whole elements */
        size_t words = len / 4, wl = words * 4;
        uint32_t *wa = (uint32_t *)a, *wb = (uint32_t *)b, *we = (uint32_t *)e;
        for (size_t i = 0; i < words; i++) wa[i] = word_of(rank, i);
        memset(we, 0, wl);
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < words; i++) we[i] += word_of(r, i);
        CHECK(mpc_combine(wa, wb, (int)wl, i_vadd, gid) == 0, "combine i_vadd");
        CHECK(!memcmp(wb, we, wl), "%s combine i_vadd %zu", name, len);
        /* prefix with i_vadd */
        memset(we, 0, wl);
        for (int r = 0; r <= rank; r++)
            for (size_t i = 0; i < words; i++) we[i] += word_of(r, i);
        CHECK(mpc_prefix(wa, wb, (int)wl, i_vadd, gid) == 0, "prefix");
        CHECK(!memcmp(wb, we, wl), "%s prefix i_vadd %zu", name, len);
        size_t dn = len / 8;
        double *da = (double *)a, *db = (double *)b;
        for (size_t i = 0; i < dn; i++) da[i] = (double)((rank * 7 + (int)i) % 13) - 6;
        CHECK(mpc_combine(da, db, (int)(dn * 8), d_vmax, gid) == 0, "combine d_vmax");
        for (size_t i = 0; i < dn; i++) {
            double m = -1e9;
            for (int r = 0; r < size; r++) {
                double v = (double)((r * 7 + (int)i) % 13) - 6;
                if (v > m) m = v;
            }
            CHECK(db[i] == m, "%s d_vmax %zu element %zu", name, len, i);
        }
        /* non-commutative user reduction: combine, reduce at root != 0, prefix */
        size_t aw = (len / 8) * 2, al = aw * 4;
        fill_words(wa, rank, aw);
        fill_words(we, 0, aw);
        for (int r = 1; r < size; r++) {
            uint32_t x[2];
            for (size_t k = 0; k < aw; k += 2) {
                x[0] = word_of(r, k) | 1u;
                x[1] = word_of(r, k + 1) | 1u;
                affine_serial(&we[k], x, 2);
            }
        }
        CHECK(mpc_combine(wa, wb, (int)al, affine, gid) == 0, "combine affine");
        CHECK(!memcmp(wb, we, al), "%s combine non-commutative %zu", name, len);
        memset(wb, 0, al);
        CHECK(mpc_reduce(wa, wb, (int)al, root, affine, gid) == 0, "reduce affine");
        if (rank == root) CHECK(!memcmp(wb, we, al), "%s reduce non-commutative %zu", name, len);
        free(a);
        free(b);
        free(e);
        /* block collectives: blocks of len/size (at least 1 byte for len 1) */
        size_t blk = len >= 4096 ? len / (size_t)size : len;
        size_t all = blk * (size_t)size;
        uint8_t *s = malloc(all + 1), *r = malloc(all + 1);
        for (size_t i = 0; i < blk; i++) s[i] = byte_of(rank, i);
        CHECK(mpc_gather(s, r, (int)blk, root, gid) == 0, "gather");
        if (rank == root)
            for (int m = 0; m < size; m++)
                for (size_t i = 0; i < blk; i++)
                    CHECK(r[m * blk + i] == byte_of(m, i), "%s gather %zu", name, blk);
        memset(r, 0, all);
        CHECK(mpc_concat(s, r, (int)blk, gid) == 0, "concat");
        for (int m = 0; m < size; m++)
            for (size_t i = 0; i < blk; i++)
                CHECK(r[m * blk + i] == byte_of(m, i), "%s concat %zu from %d", name, blk, m);
        /* scatter: root's block m is byte_of(100 + m) */
        if (rank == root)
            for (int m = 0; m < size; m++)
                for (size_t i = 0; i < blk; i++) s[m * blk + i] = byte_of(100 + m, i);
        CHECK(mpc_scatter(s, r, (int)blk, root, gid) == 0, "scatter");
        for (size_t i = 0; i < blk; i++)
            CHECK(r[i] == byte_of(100 + rank, i), "%s scatter %zu", name, blk);
        /* index: my block m for member m is byte_of(rank*size + m) */
        for (int m = 0; m < size; m++)
            for (size_t i = 0; i < blk; i++) s[m * blk + i] = byte_of(rank * size + m, i);
        CHECK(mpc_index(s, r, (int)blk, gid) == 0, "index");
        for (int m = 0; m < size; m++)
            for (size_t i = 0; i < blk; i++)
                CHECK(r[m * blk + i] == byte_of(m * size + rank, i), "%s index %zu from %d", name,
                      blk, m);
        /* shift by +1 circular, then -2 end-off */
        for (size_t i = 0; i < blk; i++) s[i] = byte_of(rank, i);
        CHECK(mpc_shift(s, r, (int)blk, 1, 1, gid) == 0, "shift");
        int from = (rank - 1 + size) % size;
        for (size_t i = 0; i < blk; i++) CHECK(r[i] == byte_of(from, i), "%s shift %zu", name, blk);
        memset(r, 0xab, blk);
        CHECK(mpc_shift(s, r, (int)blk, -2, 0, gid) == 0, "shift end-off");
        for (size_t i = 0; i < blk; i++)
            CHECK(r[i] == (rank + 2 < size ? byte_of(rank + 2, i) : 0xab), "%s end-off shift",
                  name);
        free(s);
        free(r);
        CHECK(mpc_sync(gid) == 0, "sync");
    }
}

int main(void)
{
    int n, gid, label, size;
    mpc_environ(&n, &me_task);
    test_group(ALLGRP, "allgrp");
    /* odd/even split, key order = task order */
    CHECK(mpc_partition(ALLGRP, me_task, me_task % 2, &gid) == 0, "partition");
    CHECK(mpc_getlabel(&label, gid) == 0 && label == me_task % 2, "label");
    CHECK(mpc_getsize(&size, gid) == 0 && size == (n + 1 - me_task % 2) / 2, "partition size %d",
          size);
    int rank, t;
    mpc_getrank(&rank, me_task, gid);
    CHECK(rank == me_task / 2, "partition rank %d", rank);
    test_group(gid, "odd/even");
    /* keys reversed: rank order is reverse task order */
    int rev;
    CHECK(mpc_partition(ALLGRP, -me_task, 7, &rev) == 0, "partition rev");
    mpc_getrank(&rank, me_task, rev);
    mpc_gettaskid(0, &t, rev);
    CHECK(rank == n - 1 - me_task && t == n - 1, "reverse key: rank %d, rank 0 is task %d", rank,
          t);
    test_group(rev, "reverse");
    /* a partition of a partition, and an explicit list (every other task, reversed) */
    int sub;
    CHECK(mpc_partition(gid, 0, 0, &sub) == 0, "sub-partition");
    mpc_sync(sub);
    if (me_task % 2 == 0) {
        int list[64], m = 0, lg;
        for (int i = n - 1; i >= 0; i--)
            if (i % 2 == 0) list[m++] = i;
        CHECK(mpc_group(m, list, 42, &lg) == 0, "group");
        CHECK(mpc_getlabel(&label, lg) == 0 && label == 42, "group label");
        test_group(lg, "list");
    }
    mpc_sync(ALLGRP);
    if (me_task == 0) printf("coll: every MPL collective ok on %d tasks and partitions\n", n);
    return 0;
}
