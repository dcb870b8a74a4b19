/*
 * SelectorForwarding — invocation records (NSInvocation) and forwarding handlers.
 * Part of the public C API: include <SelectorForwarding.h>.
 */
#ifndef SELECTOR_FORWARDING_INVOCATIONS_H
#define SELECTOR_FORWARDING_INVOCATIONS_H

#include "hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- invocation records (NSInvocation) ---- */

typedef struct sf_invocation *sf_invocation_t;

/* A zeroed record for `types` (e.g. "q@:qq"), owned by the caller (+1): sf_invocation_release. */
sf_invocation_t sf_invocation_create(sf_id target, sf_sel sel, const char *types);
/* A record of the current call (a hook's or a C-function method's), +1, arguments retained;
 * replaying a hook's record calls the original implementation. */
sf_invocation_t sf_call_copyInvocation(sf_call_t call);
/* An independent copy (+1) with the same target, selector, arguments and return value. */
sf_invocation_t sf_invocation_copy(sf_invocation_t inv);
/* Drops the caller's reference. Releasing a record twice, or one lent to a forwardInvocation
 * handler, is SF_ERR_INVALID_ARGUMENT. */
sf_status sf_invocation_release(sf_invocation_t inv);

sf_id sf_invocation_getTarget(sf_invocation_t inv);
sf_status sf_invocation_setTarget(sf_invocation_t inv, sf_id target);
sf_sel sf_invocation_getSelector(sf_invocation_t inv);
sf_status sf_invocation_setSelector(sf_invocation_t inv, sf_sel sel);
const char *sf_invocation_getTypeEncoding(sf_invocation_t inv);
ptrdiff_t sf_invocation_getArgumentCount(sf_invocation_t inv);
/* `size` must equal the argument's size. Setting retains objects and copies C strings once
 * sf_invocation_retainArguments was called. */
sf_status sf_invocation_getArgument(sf_invocation_t inv, size_t index, void *value, size_t size);
sf_status sf_invocation_setArgument(sf_invocation_t inv, size_t index, const void *value, size_t size);
/* Objects are borrowed from the record (valid while it lives). */
sf_status sf_invocation_getReturnValue(sf_invocation_t inv, void *value, size_t size);
/* An object is retained by the record. */
sf_status sf_invocation_setReturnValue(sf_invocation_t inv, const void *value, size_t size);
/* Retains the target and object arguments and copies C strings, so the record can be kept. */
sf_status sf_invocation_retainArguments(sf_invocation_t inv);
/* Sends the message (full lookup and forwarding); the result lands in the return value. */
sf_status sf_invocation_invoke(sf_invocation_t inv);
/* Sets the target to `target`, then sends with full lookup on it. */
sf_status sf_invocation_invokeWithTarget(sf_invocation_t inv, sf_id target);

/* ---- forwarding handlers (resolveInstanceMethod:, forwardingTargetForSelector:, ...) ---- */

/* Return true after adding a method for `sel` to `cls`: the send is retried. */
typedef bool (*sf_resolve_fn)(sf_class_t cls, sf_sel sel, void *context);
/* Return an object to resend to (borrowed), or NULL to go on. */
typedef sf_id (*sf_forwarding_target_fn)(sf_id obj, sf_sel sel, void *context);
/* Return a type encoding for `sel` (copied at once), or NULL: doesNotRecognizeSelector. */
typedef const char *(*sf_method_signature_fn)(sf_id obj, sf_sel sel, void *context);
/* Handle the message; `inv` is lent for this call only (sf_invocation_copy to keep it). */
typedef sf_status (*sf_forward_invocation_fn)(sf_invocation_t inv, void *context);

sf_status sf_class_setResolveInstanceMethod(sf_class_t cls, sf_resolve_fn fn, void *context);
sf_status sf_class_setResolveClassMethod(sf_class_t cls, sf_resolve_fn fn, void *context);
sf_status sf_class_setForwardingTarget(sf_class_t cls, sf_forwarding_target_fn fn, void *context);
sf_status sf_class_setMethodSignature(sf_class_t cls, sf_method_signature_fn fn, void *context);
sf_status sf_class_setForwardInvocation(sf_class_t cls, sf_forward_invocation_fn fn, void *context);

/* ---- the process-wide forward handler (objc_setForwardHandler) ---- */

/* Asked for a message whose receiver's class defines no forwardInvocation:, after the
 * forwarding target declined, before doesNotRecognizeSelector: and the error. `inv` holds the
 * call (lent for this call only); set its return value, or invoke it on another target, and
 * return true: that is the send's result. Return false to decline (SF_ERR_UNRECOGNIZED_SELECTOR).
 * A C send (sf_msg_send) reaches it only when the class declares methodSignatureForSelector:. */
typedef bool (*sf_forward_handler_fn)(sf_id receiver, sf_sel sel, sf_invocation_t inv, void *context);

/* Installs `fn` for every class, replacing the previous handler; NULL restores the default,
 * which declines. Thread-safe; a send already inside the old handler finishes with it, so keep
 * its context valid until no such send can be running. */
void sf_setForwardHandler(sf_forward_handler_fn fn, void *context);

#ifdef __cplusplus
}
#endif

#endif
