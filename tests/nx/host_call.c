/* A node program that calls a host's call (waitall): the job ends with one
 * line naming it (tests/CMakeLists.txt, nx_host_call_on_node). */
#include <courier/cube.h>

int main(void)
{
    waitall(-1, -1);
    return 0;
}
