/*
 * SelectorForwarding — the call in progress, hooks, and methods implemented by a C function plus a context.
 * Part of the public C API: include <SelectorForwarding.h>.
 */
#ifndef SELECTOR_FORWARDING_HOOKS_H
#define SELECTOR_FORWARDING_HOOKS_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- one call in progress, as a hook or a C-function method sees it ---- */

/* Valid only during the callback it was passed to, on that thread; any other use is refused. */
typedef struct sf_call *sf_call_t;

sf_id sf_call_getTarget(sf_call_t call);
sf_sel sf_call_getSelector(sf_call_t call);
const char *sf_call_getTypeEncoding(sf_call_t call);
/* Arguments after self and _cmd; -1 (SF_ERR_INVALID_ARGUMENT) for an invalid call. */
ptrdiff_t sf_call_getArgumentCount(sf_call_t call);
/* `size` must equal the argument's size (8 for `q`, `@`, `*`…; sizeof the struct for `{…}`). */
sf_status sf_call_getArgument(sf_call_t call, size_t index, void *value, size_t size);
/* Replaces the argument for the rest of this call (objects are borrowed, not retained). */
sf_status sf_call_setArgument(sf_call_t call, size_t index, const void *value, size_t size);
/* The return value so far (zero until the original ran); objects are borrowed. */
sf_status sf_call_getReturnValue(sf_call_t call, void *value, size_t size);
/* Sets the value the sender receives; an object is retained (methods return +1). */
sf_status sf_call_setReturnValue(sf_call_t call, const void *value, size_t size);
/* Instead-hooks: runs the next instead-hook or the original. Refused outside a hook. */
sf_status sf_call_proceed(sf_call_t call);

/* ---- hooks ---- */

typedef enum sf_hook_position {
    SF_HOOK_BEFORE = 0,     /* before the original, in the order added; may change arguments */
    SF_HOOK_INSTEAD = 1,    /* around it: call sf_call_proceed, or the call is dropped */
    SF_HOOK_AFTER = 2,      /* after it; sees and may change the return value */
    /* OR-ed into a position: the hook removes itself after the first call that runs it (its
     * token is then no longer active); AspectOptionAutomaticRemoval. */
    SF_HOOK_AUTOMATIC_REMOVAL = 0x100,
} sf_hook_position;

/* A hook body. A non-zero status fails the call: the sender gets SF_ERR_HOOK. */
typedef sf_status (*sf_hook_fn)(sf_call_t call, void *context);
/* Identifies one installed hook; 0 means none. */
typedef uint64_t sf_hook_token;

/* Hooks `sel` for every instance of `cls` (a metaclass: the class method). `types`, if not
 * NULL, is checked against the method's. `context` is passed to `fn` and must stay valid until
 * the hook is removed. Returns 0 on failure. */
sf_hook_token sf_class_hookMethod(sf_class_t cls, sf_sel sel, sf_hook_position position, const char *types,
                                  sf_hook_fn fn, void *context);
/* Hooks `sel` for this object only (it gets a private subclass). */
sf_hook_token sf_object_hookMethod(sf_id obj, sf_sel sel, sf_hook_position position, const char *types,
                                   sf_hook_fn fn, void *context);
/* Removes a hook; the method is restored exactly when its last hook goes. A token removed
 * before (or never issued) is SF_ERR_INVALID_ARGUMENT. */
sf_status sf_hook_remove(sf_hook_token token);
bool sf_hook_isActive(sf_hook_token token);

/* ---- hooks on a class by name, before it is registered (InterposeKit's whenAvailable) ---- */

/* A hook waiting for its class; owned by the caller (+1): sf_pending_hook_release. */
typedef struct sf_pending_hook *sf_pending_hook_t;

typedef enum sf_pending_hook_state {
    SF_PENDING_HOOK_INVALID = -1,   /* a dead handle (SF_ERR_INVALID_ARGUMENT) */
    SF_PENDING_HOOK_WAITING = 0,    /* no class of that name is registered yet */
    SF_PENDING_HOOK_INSTALLED = 1,  /* on the class: sf_pending_hook_getToken */
    SF_PENDING_HOOK_FAILED = 2,     /* the class could not be hooked: the error is recorded */
    SF_PENDING_HOOK_REMOVED = 3,    /* sf_pending_hook_remove dropped or removed it */
} sf_pending_hook_state;

/* Hooks `sel` for every instance of the class named `className` (its own name or an alias), as
 * sf_class_hookMethod does: at once if that class is registered, else inside the
 * sf_registerClassPair (or sf_class_registerAlias_np) that makes it so, before any thread can
 * find the class or make an instance of it. Hooks waiting for one name go on in the order
 * asked for. NULL (nothing kept) for a NULL or empty name, NULL selector or function, unknown
 * position, reserved selector or bad `types`; what depends on the class (no such method,
 * other types) leaves the hook SF_PENDING_HOOK_FAILED. `context` stays the caller's: keep it
 * valid until the hook is failed or removed (and no call can still be inside it). */
sf_pending_hook_t sf_hook_whenAvailable(const char *className, sf_sel sel, sf_hook_position position,
                                        const char *types, sf_hook_fn fn, void *context);
/* SF_PENDING_HOOK_FAILED records the failure as the thread's last error (sf_last_error_message
 * names the class and selector); the other states reset it. */
sf_pending_hook_state sf_pending_hook_getState(sf_pending_hook_t hook);
/* The installed hook's token (for sf_hook_isActive, sf_hook_remove); 0 with SF_ERR_HOOK (or the
 * failure) in any other state. */
sf_hook_token sf_pending_hook_getToken(sf_pending_hook_t hook);
/* A waiting hook is dropped and never installs; an installed one is removed as sf_hook_remove
 * does. SF_OK whenever the hook is neither waiting nor installed afterwards, so again is
 * harmless; only a dead handle is an error. */
sf_status sf_pending_hook_remove(sf_pending_hook_t hook);
/* Drops the caller's handle only: a waiting hook still installs when its class registers, and
 * an installed one stays (remove it first to stop either). */
sf_status sf_pending_hook_release(sf_pending_hook_t hook);

/* ---- methods implemented by a C function plus a context (imp_implementationWithBlock) ---- */

/* The body: read arguments and set the return value through `call`. Non-zero fails the send. */
typedef sf_status (*sf_function_fn)(sf_call_t call, void *context);
/* Called once with the context when the method's implementation is freed (not when adding it
 * failed: then the caller still owns the context). May be NULL. */
typedef void (*sf_context_release_fn)(void *context);

sf_status sf_class_addMethodWithFunction(sf_class_t cls, sf_sel sel, const char *types, sf_function_fn fn,
                                         void *context, sf_context_release_fn release);
/* Replaces (or adds) the method; the previous implementation is kept alive with the class. */
sf_status sf_class_replaceMethodWithFunction(sf_class_t cls, sf_sel sel, const char *types, sf_function_fn fn,
                                             void *context, sf_context_release_fn release);

/* ---- IMPs from a C function plus a context, bound to no class (imp_implementationWithBlock) ---- */

/* An IMP for calls of signature `types` that runs fn(call, context), as above. Install it with
 * sf_class_addMethod, sf_class_replaceMethod or sf_method_setImplementation in any number of
 * classes (other types: SF_ERR_SIGNATURE_MISMATCH). The context is released (release may be
 * NULL) once the IMP is removed and no method holds it; NULL on failure (context still yours). */
sf_imp sf_imp_implementationWithFunction(const char *types, sf_function_fn fn, void *context,
                                         sf_context_release_fn release);
/* imp_getBlock: the function (and *outContext, may be NULL) of such an IMP; NULL with
 * SF_ERR_INVALID_ARGUMENT for any other IMP or one removed already. */
sf_function_fn sf_imp_getFunction(sf_imp imp, void **outContext);
/* imp_removeBlock: gives up the caller's IMP. Methods that hold it keep working; it is freed
 * after the last one lets go and a grace period. False (SF_ERR_INVALID_ARGUMENT) for any other
 * IMP or a second removal. Do not call the bare pointer after removing it. */
bool sf_imp_removeFunction(sf_imp imp);

#ifdef __cplusplus
}
#endif

#endif
