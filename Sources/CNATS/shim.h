#ifndef MVVMR_CNATS_SHIM_H
#define MVVMR_CNATS_SHIM_H

/*
 * nats.c, the NATS client with JetStream (Debian's libnats-dev), for the NATS session store. The calls the
 * store makes are neither variadic nor macros, so nats.h is imported as it is and no shim function is needed.
 * Nothing above the session store sees this module.
 */

#include <nats/nats.h>

#endif
