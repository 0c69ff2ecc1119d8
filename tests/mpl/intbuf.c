/* MPL calls with int buffers, as real programs make them (an int array
 * passed to mpc_bsend): the buffers are void * in mpl.h, so a compiler that
 * refuses incompatible pointer types (GCC 14's default; tests/mpl checks with
 * -Werror=incompatible-pointer-types) takes the program. Task 0 sends 4 ints
 * to task 1 with each form, task 1 checks them. */
#include <stdio.h>
#include <stdlib.h>

#include <mpproto.h>

#define CHECK(c, what)                                                                             \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL: %s\n", what);                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(void)
{
    int ntasks, me, src, type, n, id;
    mpc_environ(&ntasks, &me);
    int out[4] = {1, 2, 3, 4}, in[4] = {0}, strided[8] = {0};
    if (me == 0) {
        mpc_bsend(out, sizeof out, 1, 1);
        mpc_send(out, sizeof out, 1, 2, &id);
        mpc_wait(&id, &n);
        mpc_bvsend(out, 2, sizeof(int), 2 * sizeof(int), 1, 3); /* out[0], out[2] */
    } else if (me == 1) {
        src = 0, type = 1;
        mpc_brecv(in, sizeof in, &src, &type, &n);
        CHECK(n == sizeof in && in[0] == 1 && in[3] == 4, "mpc_bsend/mpc_brecv of int[4]");
        src = 0, type = 2;
        mpc_recv(in, sizeof in, &src, &type, &id);
        mpc_wait(&id, &n);
        CHECK(n == sizeof in && in[1] == 2, "mpc_send/mpc_recv of int[4]");
        src = 0, type = 3;
        mpc_bvrecv(strided, 2, sizeof(int), 2 * sizeof(int), &src, &type, &n);
        CHECK(strided[0] == 1 && strided[2] == 3, "mpc_bvsend/mpc_bvrecv of ints");
    }
    mpc_sync(ALLGRP);
    if (me == 0) printf("intbuf ok\n");
    return 0;
}
