/* The tools interface MPI_T as a tool written for any MPI uses it: every
 * control variable, performance variable, category and enumeration listed and
 * read, a writable control variable written, a session of performance
 * variables around point-to-point traffic whose counted messages and bytes
 * must be what was sent and received, the error classes of misuse, and the
 * interface before MPI_Init and after MPI_Finalize. Only the MPI standard's
 * calls: it builds unchanged against Open MPI or MPICH (there courier's
 * variables are absent, and the checks of them are skipped).
 *
 *   tool            the checks; rank 0 prints "mpit: ... ok"
 *   tool RUN_MD     also: every COURIER_* variable of docs/run.md's Settings
 *                   table is a control variable (and no control variable is
 *                   missing from it) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me = -1;
#ifdef COURIER_MPI
#define EV_INVALID_INDEX MPI_T_ERR_INVALID_INDEX
#else /* MPICH 4.0 says MPI_T_ERR_INVALID of an event index past the last */
#define EV_INVALID_INDEX (rc_ == MPI_T_ERR_INVALID ? rc_ : MPI_T_ERR_INVALID_INDEX)
#endif
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL rank %d %s:%d: %s: ", me, __FILE__, __LINE__, #cond);            \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define OK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_);                                   \
    } while (0)
#define RC(want, call)                                                                             \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(rc_ == (want), "%s returned %d, not %s (%d)", #call, rc_, #want, want);              \
    } while (0)

/* A value of any type MPI_T uses, printed. */
static void show(const char *what, const char *name, MPI_Datatype dt, const void *v, int count)
{
    if (me != 0) return;
    if (dt == MPI_INT)
        printf("%s %s = %d\n", what, name, *(const int *)v);
    else if (dt == MPI_UNSIGNED)
        printf("%s %s = %u\n", what, name, *(const unsigned *)v);
    else if (dt == MPI_UNSIGNED_LONG)
        printf("%s %s = %lu\n", what, name, *(const unsigned long *)v);
    else if (dt == MPI_UNSIGNED_LONG_LONG)
        printf("%s %s = %llu\n", what, name, *(const unsigned long long *)v);
    else if (dt == MPI_COUNT)
        printf("%s %s = %lld\n", what, name, (long long)*(const MPI_Count *)v);
    else if (dt == MPI_DOUBLE)
        printf("%s %s = %g\n", what, name, *(const double *)v);
    else if (dt == MPI_CHAR)
        printf("%s %s = \"%.*s\"\n", what, name, count, (const char *)v);
    else
        printf("%s %s: a type MPI_T does not use\n", what, name);
}

/* The value buffer of a variable: big enough for count elements of any type. */
static void *vbuf(int count)
{
    void *p = calloc((size_t)(count > 0 ? count : 1), 16);
    CHECK(p, "out of memory");
    return p;
}

static void list_cvars(int *ncvar)
{
    OK(MPI_T_cvar_get_num(ncvar));
    for (int i = 0; i < *ncvar; i++) {
        int len = 0, dlen = 0, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        /* lengths first (length 0: how long the string is), then the strings */
        int rc = MPI_T_cvar_get_info(i, NULL, &len, &verb, &dt, &en, NULL, &dlen, &bind, &scope);
        if (rc == MPI_T_ERR_INVALID_INDEX) continue; /* Open MPI: a variable it let go of */
        OK(rc);
        CHECK(len > 1 && dlen >= 0, "cvar %d: name length %d, description length %d", i, len, dlen);
        char *name = malloc((size_t)len), *desc = malloc((size_t)dlen + 1);
        int l2 = len;
        OK(MPI_T_cvar_get_info(i, name, &l2, &verb, &dt, &en, desc, &dlen, &bind, &scope));
        CHECK(l2 == len && (int)strlen(name) == len - 1, "cvar %d: name length %d, said %d", i, l2,
              len);
        int idx = -1;
        OK(MPI_T_cvar_get_index(name, &idx));
        CHECK(idx == i, "cvar %s: index %d, listed at %d", name, idx, i);
        if (en != MPI_T_ENUM_NULL) {
            int n, el = 64;
            char ename[64];
            OK(MPI_T_enum_get_info(en, &n, ename, &el));
            CHECK(n > 0, "enum %s of %s: %d items", ename, name, n);
            for (int k = 0; k < n; k++) {
                int v, il = 64;
                char iname[64];
                OK(MPI_T_enum_get_item(en, k, &v, iname, &il));
            }
            RC(MPI_T_ERR_INVALID_INDEX, MPI_T_enum_get_item(en, n, NULL, NULL, NULL));
        }
        if (bind == MPI_T_BIND_NO_OBJECT) {
            MPI_T_cvar_handle h;
            int count;
            OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
            void *v = vbuf(count);
            int rrc = MPI_T_cvar_read(h, v);
#ifndef COURIER_MPI /* Open MPI 4.1 refuses to read some (MPI_T_ERR_INVALID_HANDLE) */
            if (rrc == MPI_SUCCESS)
#else
            OK(rrc);
#endif
                show("cvar", name, dt, v, count);
            free(v);
            OK(MPI_T_cvar_handle_free(&h));
            CHECK(h == MPI_T_CVAR_HANDLE_NULL, "cvar handle of %s not null once freed", name);
        }
        free(name);
        free(desc);
    }
}

/* Index of the pvar of this name and class, or -1 (another MPI: none). */
static int pvar_index(const char *name, int cls)
{
    int i;
    return MPI_T_pvar_get_index(name, cls, &i) == MPI_SUCCESS ? i : -1;
}

static void list_pvars(int *npvar)
{
    MPI_T_pvar_session s;
    OK(MPI_T_pvar_session_create(&s));
    OK(MPI_T_pvar_get_num(npvar));
    for (int i = 0; i < *npvar; i++) {
        char name[256], desc[1024];
        int len = sizeof name, dlen = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        int rc = MPI_T_pvar_get_info(i, name, &len, &verb, &cls, &dt, &en, desc, &dlen, &bind, &ro,
                                     &cont, &atomic);
        if (rc == MPI_T_ERR_INVALID_INDEX) continue; /* Open MPI: a variable it let go of */
        OK(rc);
        CHECK(pvar_index(name, cls) == i, "pvar %s: get_index disagrees", name);
        if (bind != MPI_T_BIND_NO_OBJECT) continue;
        MPI_T_pvar_handle h;
        int count;
        OK(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count));
        void *v = vbuf(count);
        if (!cont) OK(MPI_T_pvar_start(s, h));
        if (cont) RC(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_start(s, h));
        OK(MPI_T_pvar_read(s, h, v));
        show("pvar", name, dt, v, count);
        if (ro) RC(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_write(s, h, v));
        free(v);
        OK(MPI_T_pvar_handle_free(s, &h));
    }
    OK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not null once freed");
}

/* Every category's lists hold valid indices, and every variable is in one. */
static void list_categories(int ncvar, int npvar, int *ncat)
{
    OK(MPI_T_category_get_num(ncat));
    char *cseen = calloc((size_t)ncvar + 1, 1), *pseen = calloc((size_t)npvar + 1, 1);
    for (int c = 0; c < *ncat; c++) {
        char name[256], desc[1024];
        int len = sizeof name, dlen = sizeof desc, nc, np, nsub, nev, idx;
        OK(MPI_T_category_get_info(c, name, &len, desc, &dlen, &nc, &np, &nsub));
        OK(MPI_T_category_get_index(name, &idx));
        CHECK(idx == c, "category %s: index %d, listed at %d", name, idx, c);
#if MPI_VERSION >= 4 || defined(COURIER_MPI) /* events: MPI-4 */
        OK(MPI_T_category_get_num_events(c, &nev));
#else
        nev = 0;
#endif
        int *l = malloc(sizeof(int) * (size_t)(nc + np + nsub + nev + 1));
        OK(MPI_T_category_get_cvars(c, nc, l));
        for (int k = 0; k < nc; k++) {
            CHECK(l[k] >= 0 && l[k] < ncvar, "category %s: cvar %d", name, l[k]);
            cseen[l[k]] = 1;
        }
        OK(MPI_T_category_get_pvars(c, np, l));
        for (int k = 0; k < np; k++) {
            CHECK(l[k] >= 0 && l[k] < npvar, "category %s: pvar %d", name, l[k]);
            pseen[l[k]] = 1;
        }
        OK(MPI_T_category_get_categories(c, nsub, l));
        for (int k = 0; k < nsub; k++)
            CHECK(l[k] >= 0 && l[k] < *ncat && l[k] != c, "category %s: subcategory %d", name,
                  l[k]);
#if MPI_VERSION >= 4 || defined(COURIER_MPI)
        OK(MPI_T_category_get_events(c, nev, l));
#endif
        free(l);
        if (me == 0) printf("category %s: %d cvars, %d pvars, %d categories\n", name, nc, np, nsub);
    }
    int courier = pvar_index("courier_sent_messages", MPI_T_PVAR_CLASS_COUNTER) >= 0;
    for (int i = 0; courier && i < ncvar; i++) CHECK(cseen[i], "cvar %d in no category", i);
    for (int i = 0; courier && i < npvar; i++) CHECK(pseen[i], "pvar %d in no category", i);
    int upd;
    OK(MPI_T_category_changed(&upd));
    free(cseen);
    free(pseen);
}

/* courier's writable COURIER_SPIN written and read back; a constant refused. */
static void write_cvar(void)
{
    int i, count, old, v;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index("COURIER_SPIN", &i) != MPI_SUCCESS) return; /* another MPI */
    int verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    OK(MPI_T_cvar_get_info(i, NULL, NULL, &verb, &dt, &en, NULL, NULL, &bind, &scope));
    CHECK(scope == MPI_T_SCOPE_LOCAL, "COURIER_SPIN: scope %d", scope);
    OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    OK(MPI_T_cvar_read(h, &old));
    v = 1234;
    OK(MPI_T_cvar_write(h, &v));
    v = 0;
    OK(MPI_T_cvar_read(h, &v));
    CHECK(v == 1234, "COURIER_SPIN read back %d after writing 1234", v);
    RC(MPI_T_ERR_INVALID, MPI_T_cvar_write(h, &(int){0})); /* out of its range */
    OK(MPI_T_cvar_write(h, &old));
    OK(MPI_T_cvar_handle_free(&h));
    RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(h, &v));
    OK(MPI_T_cvar_get_index("COURIER_EAGER_LIMIT", &i));
    OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    OK(MPI_T_cvar_read(h, &v));
    RC(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(h, &v));
    OK(MPI_T_cvar_handle_free(&h));
}

/* A session around a ring of messages: the counters count exactly them. */
static void session_traffic(int np)
{
    static const char *const names[4] = {"courier_sent_messages", "courier_sent_bytes",
                                         "courier_recv_messages", "courier_recv_bytes"};
    int idx[4];
    for (int k = 0; k < 4; k++)
        if ((idx[k] = pvar_index(names[k], MPI_T_PVAR_CLASS_COUNTER)) < 0) return;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[4];
    OK(MPI_T_pvar_session_create(&s));
    for (int k = 0; k < 4; k++) {
        int count;
        OK(MPI_T_pvar_handle_alloc(s, idx[k], NULL, &h[k], &count));
        CHECK(count == 1, "%s: count %d", names[k], count);
    }
    enum { N = 12 };
    static char out[200000], in[200000];
    unsigned long long bytes = 0;
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    for (int i = 0; i < N; i++) { /* 0 bytes to 176 KiB: eager and rendezvous */
        int len = i == N - 1 ? (int)sizeof out : i * i * 137;
        MPI_Sendrecv(out, len, MPI_CHAR, right, i, in, len, MPI_CHAR, left, i, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        bytes += (unsigned long long)len;
    }
    OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    unsigned long long v[4];
    for (int k = 0; k < 4; k++) OK(MPI_T_pvar_read(s, h[k], &v[k]));
    CHECK(v[0] == N && v[2] == N, "counted %llu sent, %llu received: %d each way", v[0], v[2], N);
    CHECK(v[1] == bytes && v[3] == bytes, "counted %llu bytes sent, %llu received, not %llu", v[1],
          v[3], bytes);
    /* stopped: the traffic of a barrier is not counted */
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long w;
    OK(MPI_T_pvar_read(s, h[0], &w));
    CHECK(w == v[0], "a stopped counter moved from %llu to %llu", v[0], w);
    /* readreset, write, reset */
    OK(MPI_T_pvar_readreset(s, h[1], &w));
    CHECK(w == bytes, "readreset read %llu, not %llu", w, bytes);
    OK(MPI_T_pvar_read(s, h[1], &w));
    CHECK(w == 0, "after readreset: %llu", w);
    w = 5;
    OK(MPI_T_pvar_write(s, h[2], &w));
    OK(MPI_T_pvar_start(s, h[2]));
    MPI_Sendrecv(out, 1, MPI_CHAR, right, 99, in, 1, MPI_CHAR, left, 99, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    OK(MPI_T_pvar_read(s, h[2], &w));
    CHECK(w == 6, "written 5, then one message received: %llu", w);
    OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    OK(MPI_T_pvar_read(s, h[2], &w));
    CHECK(w == 0, "after reset: %llu", w);
    RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &w));
    /* a second session is independent of the first */
    MPI_T_pvar_session s2;
    MPI_T_pvar_handle h2;
    int count;
    OK(MPI_T_pvar_session_create(&s2));
    OK(MPI_T_pvar_handle_alloc(s2, idx[0], NULL, &h2, &count));
    RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, h2, &w)); /* not of that session */
    OK(MPI_T_pvar_read(s2, h2, &w));
    CHECK(w == 0, "a new handle of a counter reads %llu", w);
    OK(MPI_T_pvar_session_free(&s2));
    RC(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_session_free(&s2));
    for (int k = 0; k < 4; k++) OK(MPI_T_pvar_handle_free(s, &h[k]));
    OK(MPI_T_pvar_session_free(&s));
}

/* Messages no receive asked for yet: the unexpected queue's length and mark. */
static void unexpected_queue(void)
{
    int il = pvar_index("courier_unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL);
    int im = pvar_index("courier_unexpected_queue_max", MPI_T_PVAR_CLASS_HIGHWATERMARK);
    if (il < 0 || im < 0) return;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle hl, hm;
    int count;
    OK(MPI_T_pvar_session_create(&s));
    OK(MPI_T_pvar_handle_alloc(s, il, NULL, &hl, &count));
    OK(MPI_T_pvar_handle_alloc(s, im, NULL, &hm, &count));
    int x = 0;
    if (me == 1)
        for (int t = 7; t <= 9; t++) MPI_Send(&x, 1, MPI_INT, 0, t, MPI_COMM_WORLD);
    if (me == 0) {
        int flag = 0; /* tag 9 there: 7 and 8, sent before it, are too */
        while (!flag) MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        unsigned long long len, max;
        OK(MPI_T_pvar_read(s, hl, &len));
        OK(MPI_T_pvar_read(s, hm, &max));
        CHECK(len >= 3 && max >= len, "unexpected queue: length %llu, mark %llu", len, max);
        for (int t = 7; t <= 9; t++)
            MPI_Recv(&x, 1, MPI_INT, 1, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        unsigned long long after;
        OK(MPI_T_pvar_read(s, hl, &after));
        CHECK(after == len - 3, "unexpected queue: %llu after taking 3 of %llu", after, len);
        OK(MPI_T_pvar_read(s, hm, &after));
        CHECK(after == max, "the mark fell from %llu to %llu", max, after);
    }
    OK(MPI_T_pvar_session_free(&s));
}

/* What misuse returns (MPI-4.1 §15.3.10). */
static void errors(void)
{
    int ncat, verb, cls, bind, scope, ro, cont, atomic, nc, np, nsub;
    MPI_Datatype dt;
    MPI_T_enum en;
    RC(MPI_T_ERR_INVALID_INDEX,
       MPI_T_cvar_get_info(-1, NULL, NULL, &verb, &dt, &en, NULL, NULL, &bind, &scope));
    RC(MPI_T_ERR_INVALID_INDEX, MPI_T_pvar_get_info(-1, NULL, NULL, &verb, &cls, &dt, &en, NULL,
                                                    NULL, &bind, &ro, &cont, &atomic));
    OK(MPI_T_category_get_num(&ncat));
    RC(MPI_T_ERR_INVALID_INDEX,
       MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, &nc, &np, &nsub));
    int i;
    RC(MPI_T_ERR_INVALID_NAME, MPI_T_cvar_get_index("no such variable", &i));
    RC(MPI_T_ERR_INVALID_NAME,
       MPI_T_pvar_get_index("no such variable", MPI_T_PVAR_CLASS_COUNTER, &i));
    RC(MPI_T_ERR_INVALID_NAME, MPI_T_category_get_index("no such category", &i));
#if MPI_VERSION >= 4 || defined(COURIER_MPI)
    RC(MPI_T_ERR_INVALID_NAME, MPI_T_event_get_index("no such event", &i));
#endif
    RC(MPI_T_ERR_INVALID_SESSION,
       MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES));
    int len;
    char str[MPI_MAX_ERROR_STRING];
    OK(MPI_Error_class(MPI_T_ERR_INVALID_HANDLE, &cls));
    CHECK(cls == MPI_T_ERR_INVALID_HANDLE, "class of MPI_T_ERR_INVALID_HANDLE: %d", cls);
    OK(MPI_Error_string(MPI_T_ERR_CVAR_SET_NEVER, str, &len));
    CHECK(len > 0, "no string for MPI_T_ERR_CVAR_SET_NEVER");
#if MPI_VERSION >= 4 || defined(COURIER_MPI)
    /* events: as many types as the MPI has; each index past them refused */
    int nev, nsrc;
    OK(MPI_T_event_get_num(&nev));
    MPI_Datatype dts[1];
    MPI_Aint displs[1];
    MPI_Info info;
    int nel;
    RC(EV_INVALID_INDEX, MPI_T_event_get_info(nev, NULL, NULL, &verb, dts, displs, &nel, &en, &info,
                                              NULL, NULL, &bind));
    MPI_T_event_registration reg;
    RC(EV_INVALID_INDEX, MPI_T_event_handle_alloc(nev, NULL, MPI_INFO_NULL, &reg));
    OK(MPI_T_source_get_num(&nsrc));
    for (int k = 0; k < nsrc; k++) {
        MPI_Count t1, t2, tps, max;
        MPI_T_source_order ord;
        char sname[256];
        int sl = sizeof sname;
        OK(MPI_T_source_get_info(k, sname, &sl, NULL, NULL, &ord, &tps, &max, &info));
        if (info != MPI_INFO_NULL) MPI_Info_free(&info);
        OK(MPI_T_source_get_timestamp(k, &t1));
        OK(MPI_T_source_get_timestamp(k, &t2));
        CHECK(ord != MPI_T_SOURCE_ORDERED || t2 >= t1, "source %s went back: %lld, %lld", sname,
              (long long)t1, (long long)t2);
    }
    RC(MPI_T_ERR_INVALID_INDEX, MPI_T_source_get_timestamp(nsrc, &(MPI_Count){0}));
#endif
}

/* docs/run.md's Settings table and the control variables name the same variables. */
static int check_docs(const char *path, int ncvar)
{
    FILE *f = fopen(path, "r");
    CHECK(f, "cannot open %s", path);
    char line[4096];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "| `COURIER_", 11) != 0) continue;
        char *cell_end = strchr(line + 1, '|');
        for (char *p = line; (p = strstr(p, "`COURIER_")) && p < cell_end; p++) {
            char name[128];
            size_t n = strcspn(p + 1, "`");
            CHECK(n < sizeof name, "a long name in %s", path);
            memcpy(name, p + 1, n);
            name[n] = '\0';
            int i;
            CHECK(MPI_T_cvar_get_index(name, &i) == MPI_SUCCESS,
                  "%s (docs/run.md, Settings) is no control variable", name);
            found++;
        }
    }
    fclose(f);
    /* COURIER_HANG_TIMEOUT is documented beside the table: one more variable */
    CHECK(found + 1 == ncvar, "docs/run.md lists %d settings, MPI_T has %d control variables",
          found, ncvar);
    return found;
}

int main(int argc, char **argv)
{
    int provided, n;
    /* before MPI_T_init_thread: refused; then usable before MPI_Init */
    RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)); /* nested */
    int ncvar, npvar, ncat;
    OK(MPI_T_cvar_get_num(&ncvar));
    MPI_Init(&argc, &argv);
    int np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    list_cvars(&ncvar);
    list_pvars(&npvar);
    list_categories(ncvar, npvar, &ncat);
    write_cvar();
    session_traffic(np);
    unexpected_queue();
    errors();
    int docs = argc > 1 ? check_docs(argv[1], ncvar) : 0;
    OK(MPI_T_finalize());
    OK(MPI_T_cvar_get_num(&n)); /* one init still open */
    OK(MPI_T_finalize());
    RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    /* after MPI_Finalize: the counters still read */
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int i = pvar_index("courier_sent_messages", MPI_T_PVAR_CLASS_COUNTER);
    if (i >= 0) {
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h;
        unsigned long long v;
        OK(MPI_T_pvar_session_create(&s));
        OK(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &n));
        OK(MPI_T_pvar_start(s, h));
        OK(MPI_T_pvar_read(s, h, &v));
        CHECK(v == 0, "after MPI_Finalize a started counter reads %llu", v);
        OK(MPI_T_pvar_session_free(&s));
    }
    OK(MPI_T_finalize());
    if (me == 0)
        printf("mpit: %d cvars, %d pvars, %d categories%s ok\n", ncvar, npvar, ncat,
               docs ? ", docs/run.md's settings" : "");
    return 0;
}
