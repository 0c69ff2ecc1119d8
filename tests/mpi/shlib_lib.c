/* A shared library built with courier-cc -shared that calls exit (as PETSc
 * does on its error paths): see cc_shared.sh. */
#include <stdlib.h>

int shlib_val(void);
void shlib_exit(int code);

int shlib_val(void)
{
    return 42;
}

void shlib_exit(int code)
{
    exit(code);
}
