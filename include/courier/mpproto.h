/* mpproto.h: the name under which IBM's Parallel Environment shipped the MPL
 * prototypes; MPL programs include it. courier's are all in mpl.h. */
#ifndef COURIER_MPPROTO_H
#define COURIER_MPPROTO_H
#include "mpl.h"
#endif
