/*
 * C side of the benchmark suite: the method body every case ends up calling, and the loops
 * that measure the C API from C. Uses only the runtime's public C header.
 */
#ifndef DISPATCH_FIXTURES_H
#define DISPATCH_FIXTURES_H

#include <SelectorForwarding.h>
#include <SelectorForwarding/throttle.h>  /* from CMessageThrottle, which the umbrella does not reach here */

/* - (long)add:(long)a to:(long)b — the IMP of every C-function method in the suite. */
long sfb_add(sf_id self, sf_sel cmd, long a, long b);

typedef long (*sfb_add_imp)(sf_id self, sf_sel cmd, long a, long b);

/* Case 1, the floor: `n` calls of `imp` through the pointer. Returns a checksum. */
long sfb_loop_direct(sfb_add_imp imp, sf_id obj, sf_sel sel, long n);

/* Cases 2a and 3a: `n` times sf_msg_lookup, then a call of the IMP it returned. */
long sfb_loop_lookup_call(sf_id obj, sf_sel sel, long n);

/* Case 11a: `n` times sf_retain then sf_release of `obj`; returns its retain count after. */
long sfb_loop_retain_release(sf_id obj, long n);

/* Cases 11c-11e: bytes of malloc chunks in use (glibc's mallinfo2; 0 elsewhere), and the
 * resident set (0 where /proc is missing). */
size_t sfb_heap_in_use(void);
size_t sfb_resident_bytes(void);

/* Case 7a: `n` lookups of a selector nothing implements; returns how many came back NULL. */
long sfb_loop_lookup_missing(sf_id obj, sf_sel sel, long n);

/* Cases 4f, 4g: a C instead-hook that proceeds (sf_call_proceed). */
sf_status sfb_hook_proceed(sf_call_t call, void *context);

/* Case 8c: `n` times sf_class_hookMethod (instead, sfb_hook_proceed) and sf_hook_remove. */
long sfb_loop_hook_toggle(sf_class_t cls, sf_sel sel, long n);

/* Case 8d: `n` times sf_rule_apply and sf_rule_discard of one rule. */
long sfb_loop_rule_toggle(sf_rule_t rule, long n);

#endif
