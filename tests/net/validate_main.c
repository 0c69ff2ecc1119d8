/* Prints the validation table (published figure vs simulator) and fails if any row is off.
 * Used by the test suite and to regenerate docs/validation.md. */
#include <stdio.h>

#include "cr_net.h"

int main(void)
{
    cr_valid_row rows[64];
    int n = cr_net_validate(rows, 64), bad = 0;
    printf("| figure | unit | published | simulated | error | ok |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        printf("| %s | %s | %.4g | %.4g | %+.1f %% | %s |\n", rows[i].what, rows[i].unit,
               rows[i].published, rows[i].simulated, rows[i].err_pct, rows[i].ok ? "yes" : "NO");
        bad += !rows[i].ok;
    }
    printf("\n%d rows, %d outside tolerance\n", n, bad);
    return bad ? 1 : 0;
}
