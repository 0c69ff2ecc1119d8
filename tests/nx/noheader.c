/* An NX/2 program of the 32-bit era, built for 64 bits without <nx.h>: its
 * int arguments reach the library in the low half of each register, so -1
 * (any type, all other nodes, any node or process type) arrives as 4294967295
 * and a negative type mask as its zero-extended 32-bit pattern. courier takes
 * them as the 32-bit values they were. The functions are declared here as the
 * library defines them (long), and the arguments passed as such values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void csend(long type, char *buf, long count, long node, long pid);
void crecv(long typesel, char *buf, long count);
void crecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[]);
long infotype(void);
long infonode(void);
long mynode(void);
long numnodes(void);
void gsync(void);

#define U32(v) ((long)(uint32_t)(int32_t)(v)) /* an int as it arrives zero-extended */

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "FAIL node %ld: %s\n", mynode(), what);
        exit(1);
    }
}

int main(void)
{
    long me = mynode(), n = numnodes();
    char buf[16] = "hello";
    if (me == 0) {
        /* to all other nodes: node -1 as 4294967295 */
        csend(7, buf, 6, U32(-1), 0);
        csend(9, buf, 6, U32(-1), U32(0));
    } else {
        crecv(U32(-1), buf, sizeof buf); /* any type */
        check(infotype() == 7 && infonode() == 0, "crecv of any type");
        long info[4] = {0};
        crecvx(U32(-1), buf, sizeof buf, U32(-1), U32(-1), info); /* any node and ptype */
        check(info[0] == 9 && info[2] == 0, "crecvx from any node");
    }
    gsync();
    if (me == 1) {
        csend(5, buf, 6, 0, 0);
    } else if (me == 0) {
        /* a 32-bit mask selecting type 5: bit 31 set, bit 5 set */
        crecv(U32(INT32_MIN | (1 << 5)), buf, sizeof buf);
        check(infotype() == 5 && infonode() == 1, "crecv with a 32-bit type mask");
    }
    gsync();
    if (me == 0) printf("noheader: %ld nodes ok\n", n);
    return 0;
}
