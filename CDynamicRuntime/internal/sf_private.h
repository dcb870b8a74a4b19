/*
 * SelectorForwarding — the runtime's private C interface, by topic (the headers below).
 *
 * Private to the runtime: the Swift module and the C files use these; C users of the
 * runtime include only SelectorForwarding.h. The fast path lives here, as static inline
 * functions, so that Swift callers inline it too.
 */
#ifndef SF_PRIVATE_H
#define SF_PRIVATE_H

#include "SelectorForwarding.h"
#include <ffi.h>
#include <stdatomic.h>

/* Internal symbols stay inside libSelectorForwarding.so: only SelectorForwarding.h is API. */
#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

#include "sf_layout.h"        /* structs of objects, classes, methods, selectors, signatures */
#include "sf_thread_state.h"  /* last error, pending error, forwarding depth, counters */
#include "sf_lookup.h"        /* lookup cache, slow path, reference counts (the fast path) */
#include "sf_rcu.h"           /* read-side sections, the retired list */
#include "sf_ffi.h"           /* libffi glue */

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
