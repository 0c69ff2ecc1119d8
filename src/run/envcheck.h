/* The COURIER_* settings courier run takes from the environment, checked once
 * before any rank starts (src/run/envcheck.c). */
#ifndef COURIER_ENVCHECK_H
#define COURIER_ENVCHECK_H
#include <stdbool.h>
#include <stddef.h>

/* 0 when every documented COURIER_* variable set holds a value it takes; else
 * -1 and, in err, one line naming the first that does not and what it takes:
 * "COURIER_COLL_ALG=bogus is not a value it takes: give one of auto, ...". */
int cr_envcheck(char *err, size_t errlen);
/* A flag variable (0 or 1; checked above): set to anything but "" or "0". */
bool cr_envcheck_flag(const char *name);
/* Does net (an address, address/prefix or interface name) name an address of
 * this host? 0, or -1 with one line in err, which names it as given ("--net ",
 * "COURIER_NET=") followed by net. */
int cr_envcheck_net(const char *net, const char *given, char *err, size_t errlen);
#endif
