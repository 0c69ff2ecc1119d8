/* Every MPL point-to-point and task-management call, on 2 or more tasks: wildcards
 * and their write-back, nonblocking ids (status, wait, the DONTCARE and ALLMSG
 * wildcards), probe, sendrecv, truncation, strided buffers (a column of a C
 * matrix sent and received contiguously and the other way round) and the
 * errors-return mode with mperrno. Task 0 talks to task 1; others only sync. */
#include <limits.h>
#include <string.h>

#include <courier/mpl.h>

#include "../check.h"

#define ROWS 7
#define COLS 5

static void wildcards(void)
{
    int w[4], t[2], b[2];
    CHECK(mpc_task_query(w, 4, MPL_Q_WILDCARDS) == 0, "query wildcards");
    CHECK(w[0] == DONTCARE && w[1] == ALLMSG && w[2] == NULLTASK && w[3] == ALLGRP,
          "wildcards %d %d %d %d", w[0], w[1], w[2], w[3]);
    CHECK(mpc_task_query(t, 2, MPL_Q_TYPES) == 0 && t[0] == 0 && t[1] == INT_MAX, "types");
    CHECK(mpc_task_query(b, 2, MPL_Q_BUFFERS) == 0 && b[0] >= 0 && b[1] > 0, "buffers");
}

static void task0(int n)
{
    int src, type, nbytes, id, a[64], got[64];
    for (int i = 0; i < 64; i++) a[i] = i * 3 + 1;
    /* blocking, exact selectors */
    CHECK(mpc_bsend((char *)a, sizeof a, 1, 5) == 0, "bsend");
    src = 1, type = 6;
    CHECK(mpc_brecv((char *)got, sizeof got, &src, &type, &nbytes) == 0, "brecv");
    CHECK(src == 1 && type == 6 && nbytes == (int)sizeof got && got[63] == 63 * 3 + 2, "echo");
    /* wildcards write back the actual source and type */
    src = DONTCARE, type = DONTCARE;
    CHECK(mpc_brecv((char *)got, sizeof got, &src, &type, &nbytes) == 0, "brecv wild");
    CHECK(src == 1 && type == 77 && nbytes == 12, "wild got src %d type %d n %d", src, type,
          nbytes);
    /* nonblocking: recv posted before the message exists, status then wait */
    src = 1, type = DONTCARE;
    CHECK(mpc_recv((char *)got, sizeof got, &src, &type, &id) == 0 && id > 0, "recv");
    CHECK(mpc_status(id) == MPL_NOT_COMPLETED, "status before the send");
    CHECK(mpc_bsend(NULL, 0, 1, 1) == 0, "go");
    CHECK(mpc_wait(&id, &nbytes) == 0 && nbytes == 40 && src == 1 && type == 8, "wait: n %d t %d",
          nbytes, type);
    CHECK(mpc_status(id) == MPL_INACTIVE, "status of a retired id");
    /* status retires a completed id */
    src = 1, type = 9;
    mpc_recv((char *)got, sizeof got, &src, &type, &id);
    int st;
    while ((st = mpc_status(id)) == MPL_NOT_COMPLETED) {
    }
    CHECK(st == 4 && got[0] == 99, "status returned %d", st);
    /* nonblocking sends and wait for any / all */
    int ids[3];
    for (int i = 0; i < 3; i++) CHECK(mpc_send((char *)&a[i], 4, 1, 20 + i, &ids[i]) == 0, "send");
    int any = DONTCARE;
    CHECK(mpc_wait(&any, &nbytes) == 0 && nbytes == 4, "wait any");
    CHECK(any == ids[0] || any == ids[1] || any == ids[2], "wait any wrote %d", any);
    int all = ALLMSG;
    CHECK(mpc_wait(&all, &nbytes) == 0, "wait all");
    for (int i = 0; i < 3; i++) CHECK(mpc_status(ids[i]) == MPL_INACTIVE, "all retired");
    /* probe */
    src = DONTCARE, type = 31;
    do {
        CHECK(mpc_probe(&src, &type, &nbytes) == 0, "probe");
    } while (nbytes < 0);
    CHECK(src == 1 && type == 31 && nbytes == 24, "probe found %d %d %d", src, type, nbytes);
    src = DONTCARE, type = 31;
    mpc_brecv((char *)got, sizeof got, &src, &type, &nbytes);
    src = DONTCARE, type = 32;
    CHECK(mpc_probe(&src, &type, &nbytes) == 0 && nbytes == -1 && src == DONTCARE, "empty probe");
    /* sendrecv with a long message both ways */
    static char big[100000], bigr[100000];
    memset(big, 3, sizeof big);
    src = 1, type = 41;
    CHECK(mpc_bsendrecv(big, sizeof big, 1, 40, bigr, sizeof bigr, &src, &type, &nbytes) == 0,
          "bsendrecv");
    CHECK(nbytes == (int)sizeof bigr && bigr[99999] == 4 && bigr[0] == 4, "bsendrecv data");
    /* truncation: allowed by default, nbytes is what was kept */
    src = 1, type = 50;
    CHECK(mpc_brecv((char *)got, 8, &src, &type, &nbytes) == 0 && nbytes == 8 && got[1] == 4,
          "truncated to %d", nbytes);
    src = 1, type = 51; /* long message cut */
    CHECK(mpc_brecv(bigr, 1000, &src, &type, &nbytes) == 0 && nbytes == 1000 && bigr[999] == 5,
          "long truncated to %d", nbytes);
    /* strided: column 2 of a C matrix, and back into column 3 */
    int m[ROWS][COLS], col[ROWS];
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) m[r][c] = r * 10 + c;
    CHECK(mpc_bvsend((char *)&m[0][2], ROWS, sizeof(int), COLS * sizeof(int), 1, 60) == 0,
          "bvsend");
    src = 1, type = 61;
    CHECK(mpc_bvrecv((char *)&m[0][3], ROWS, sizeof(int), COLS * sizeof(int), &src, &type,
                     &nbytes) == 0,
          "bvrecv");
    CHECK(nbytes == ROWS * (int)sizeof(int), "bvrecv nbytes %d", nbytes);
    for (int r = 0; r < ROWS; r++)
        CHECK(m[r][3] == r * 10 + 2 + 1000 && m[r][2] == r * 10 + 2 && m[r][4] == r * 10 + 4,
              "row %d: %d %d %d", r, m[r][2], m[r][3], m[r][4]);
    /* nonblocking strided */
    CHECK(mpc_vsend((char *)&m[0][1], ROWS, sizeof(int), COLS * sizeof(int), 1, 62, &id) == 0,
          "vsend");
    CHECK(mpc_wait(&id, &nbytes) == 0 && nbytes == ROWS * 4, "vsend wait");
    src = 1, type = 63;
    CHECK(mpc_vrecv((char *)&m[0][0], ROWS, sizeof(int), COLS * sizeof(int), &src, &type, &id) == 0,
          "vrecv");
    CHECK(mpc_wait(&id, &nbytes) == 0 && nbytes == ROWS * 4, "vrecv wait");
    for (int r = 0; r < ROWS; r++) CHECK(m[r][0] == -r, "vrecv row %d: %d", r, m[r][0]);
    (void)col;
    (void)n;
}

static void task1(void)
{
    int src, type, nbytes, buf[64];
    src = 0, type = 5;
    mpc_brecv((char *)buf, sizeof buf, &src, &type, &nbytes);
    for (int i = 0; i < 64; i++) buf[i]++;
    mpc_bsend((char *)buf, sizeof buf, 0, 6);
    mpc_bsend((char *)buf, 12, 0, 77);
    src = 0, type = 1;
    mpc_brecv(NULL, 0, &src, &type, &nbytes);
    mpc_bsend((char *)buf, 40, 0, 8);
    buf[0] = 99;
    mpc_bsend((char *)buf, 4, 0, 9);
    for (int i = 0; i < 3; i++) {
        src = 0, type = 20 + i;
        mpc_brecv((char *)buf, 4, &src, &type, &nbytes);
    }
    mpc_bsend((char *)buf, 24, 0, 31);
    static char big[100000], bigr[100000];
    memset(big, 4, sizeof big);
    src = 0, type = 40;
    mpc_bsendrecv(big, sizeof big, 0, 41, bigr, sizeof bigr, &src, &type, &nbytes);
    CHECK(nbytes == (int)sizeof bigr && bigr[5] == 3, "task 1 sendrecv");
    int four[4] = {4, 4, 4, 4};
    mpc_bsend((char *)four, sizeof four, 0, 50);
    memset(big, 5, sizeof big);
    mpc_bsend(big, sizeof big, 0, 51);
    /* column received contiguously, sent back as a column of another matrix */
    int col[ROWS], m[ROWS][COLS];
    src = 0, type = 60;
    mpc_brecv((char *)col, sizeof col, &src, &type, &nbytes);
    for (int r = 0; r < ROWS; r++) {
        CHECK(col[r] == r * 10 + 2, "column element %d: %d", r, col[r]);
        m[r][4] = col[r] + 1000;
    }
    mpc_bvsend((char *)&m[0][4], ROWS, sizeof(int), COLS * sizeof(int), 0, 61);
    src = 0, type = 62;
    mpc_brecv((char *)col, sizeof col, &src, &type, &nbytes);
    for (int r = 0; r < ROWS; r++) CHECK(col[r] == r * 10 + 1, "vsend column %d", r);
    for (int r = 0; r < ROWS; r++) col[r] = -r;
    mpc_bsend((char *)col, sizeof col, 0, 63);
}

/* With errors returning, bad calls give -1 and mperrno and change nothing. */
static void errors_return(void)
{
    int v = 0, src = 0, type = 0, nbytes, id;
    CHECK(mpc_task_set(&v, 1, MPL_SET_ERRORS_FATAL) == 0, "task_set");
    CHECK(mpc_task_query(&v, 1, MPL_Q_ERRORS) == 0 && v == 0, "errors mode");
    CHECK(mpc_bsend((char *)&v, -1, 0, 1) == -1 && mperrno == MPL_EINVAL, "neglen");
    CHECK(mpc_bsend((char *)&v, 4, 999, 1) == -1 && mperrno == MPL_ETASK, "bad dest");
    src = 999;
    CHECK(mpc_brecv((char *)&v, 4, &src, &type, &nbytes) == -1 && mperrno == MPL_ETASK, "bad src");
    CHECK(mpc_bvsend((char *)&v, 2, 8, 4, 0, 1) == -1 && mperrno == MPL_EINVAL, "stride");
    id = 12345;
    CHECK(mpc_wait(&id, &nbytes) == -1 && mperrno == MPL_EMSGID, "bad msgid");
    id = DONTCARE;
    CHECK(mpc_wait(&id, &nbytes) == -1 && mperrno == MPL_ENOPEND, "nothing pending");
    CHECK(mpc_sync(42) == -1 && mperrno == MPL_EGROUP, "bad gid");
    CHECK(mpc_combine(&v, &id, 4, NULL, ALLGRP) == -1 && mperrno == MPL_EFUNC, "NULL func");
    CHECK(mpc_task_query(&v, 1, 99) == -1 && mperrno == MPL_EQTYPE, "bad qtype");
    v = 1;
    CHECK(mpc_task_set(&v, 1, MPL_SET_ERRORS_FATAL) == 0, "task_set back");
}

int main(void)
{
    int n, me;
    CHECK(mpc_environ(&n, &me) == 0, "environ");
    CHECK(n >= 2, "run with at least 2 tasks");
    wildcards();
    if (me == 0) task0(n);
    if (me == 1) task1();
    errors_return();
    CHECK(mpc_sync(ALLGRP) == 0, "sync");
    if (me == 0) printf("p2p: all MPL point-to-point calls ok on %d tasks\n", n);
    return 0;
}
