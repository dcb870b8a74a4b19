/*
 * SelectorForwarding — the runtime's public C API.
 *
 * Reads like the Objective-C runtime's C API, with an `sf_` prefix. Functions that can fail
 * return NULL / false / a non-zero sf_status and record the reason for the calling thread:
 * sf_last_error() and sf_last_error_message() read it back.
 */
#ifndef SELECTOR_FORWARDING_H
#define SELECTOR_FORWARDING_H

/*
 * The API by topic; each header includes what it needs. docs/c-api.md gives every function's
 * errors, ownership and thread-safety. Handles (hook tokens, invocations, rules, clocks) are
 * checked against a table: a released or unknown handle is an SF_ERR_INVALID_ARGUMENT, never
 * a crash.
 */
#include "SelectorForwarding/types.h"        /* handles, sf_status, sf_last_error */
#include "SelectorForwarding/runtime.h"      /* selectors, classes, methods, ivars, sends */
#include "SelectorForwarding/protocols.h"    /* protocols */
#include "SelectorForwarding/properties.h"   /* properties */
#include "SelectorForwarding/objects.h"      /* instances, weak, associated objects, observers */
#include "SelectorForwarding/hooks.h"        /* sf_call_t, hooks, C-function methods */
#include "SelectorForwarding/invocations.h"  /* invocation records, forwarding handlers */
/* Throttle rules and manual clocks belong to the layer above (CMessageThrottle): installed,
 * the header is here; the runtime's own build does not see it. */
#if __has_include("SelectorForwarding/throttle.h")
#include "SelectorForwarding/throttle.h"
#endif

#endif
