/*
 * SelectorForwarding — the runtime's public C API.
 *
 * Reads like the Objective-C runtime's C API, with an `sf_` prefix. Functions that can fail
 * return NULL / false / a non-zero sf_status and record the reason for the calling thread:
 * sf_last_error() and sf_last_error_message() read it back.
 */
#ifndef SELECTOR_FORWARDING_H
#define SELECTOR_FORWARDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sf_object *sf_id;                 /* any object, classes included */
typedef struct sf_class *sf_class_t;             /* a class or a metaclass */
typedef const struct sf_selector *sf_sel;        /* an interned selector */
typedef struct sf_method *sf_method_t;           /* a method-table entry */
typedef void (*sf_imp)(void);                    /* cast to the method's real type before calling */
typedef struct sf_protocol *sf_protocol_t;       /* a protocol, immortal once allocated */

/* Error codes. Keep in sync with RuntimeError.code in Swift. */
typedef enum sf_status {
    SF_OK = 0,
    SF_ERR_UNRECOGNIZED_SELECTOR = 1,
    SF_ERR_DUPLICATE_CLASS = 2,
    SF_ERR_BAD_ENCODING = 3,
    SF_ERR_SIGNATURE_MISMATCH = 4,
    SF_ERR_INVALID_ARGUMENT = 5,
    SF_ERR_CLASS_IN_USE = 6,
    SF_ERR_NIL_RECEIVER = 7,
    SF_ERR_METHOD_EXISTS = 8,
    SF_ERR_CLASS_REGISTERED = 9,
    SF_ERR_NO_SUCH_METHOD = 10,
    SF_ERR_RESERVED_SELECTOR = 11,
    SF_ERR_HOOK = 12,
    SF_ERR_FORWARDING = 13,
    SF_ERR_RULE = 14,               /* a throttle rule refused: applied twice, conflicting, target gone */
    SF_ERR_DUPLICATE_PROTOCOL = 20, /* a protocol of that name exists, or registered twice */
    SF_ERR_INCOMPATIBLE_CLASS = 21, /* sf_object_setClass / sf_class_setSuperclass refused */
} sf_status;

/* The last error recorded on this thread (SF_OK when the last fallible call succeeded). */
sf_status sf_last_error(void);
/* A message naming the class, selector and what was expected; valid until the next call. */
const char *sf_last_error_message(void);

/* Selectors: interned, process-wide, never freed. */
sf_sel sf_sel_registerName(const char *name);
const char *sf_sel_getName(sf_sel sel);

/* Classes. A pair is allocated, given ivars and methods, then registered. */
sf_class_t sf_allocateClassPair(sf_class_t superclass, const char *name);
void sf_registerClassPair(sf_class_t cls);
/* Fails with SF_ERR_CLASS_IN_USE while instances or subclasses are alive. */
sf_status sf_disposeClassPair(sf_class_t cls);
sf_class_t sf_getClass(const char *name);
sf_class_t sf_getMetaClass(const char *name);
const char *sf_class_getName(sf_class_t cls);
sf_class_t sf_class_getSuperclass(sf_class_t cls);
bool sf_class_isMetaClass(sf_class_t cls);
size_t sf_class_getInstanceSize(sf_class_t cls);
bool sf_class_respondsToSelector(sf_class_t cls, sf_sel sel);

/* Methods. `types` is an Objective-C type encoding such as "q@:qq". */
sf_status sf_class_addMethod(sf_class_t cls, sf_sel sel, sf_imp imp, const char *types);
/* Returns the previous implementation, or NULL if the method was added. */
sf_imp sf_class_replaceMethod(sf_class_t cls, sf_sel sel, sf_imp imp, const char *types);
sf_method_t sf_class_getInstanceMethod(sf_class_t cls, sf_sel sel);
/*
 * The IMP a send of `sel` to an instance would run. The resolver is asked first (as
 * objc4's class_getMethodImplementation does); when nothing implements the selector the
 * result is sf_msgForward, never NULL (NULL only for a NULL class or selector).
 */
sf_imp sf_class_getMethodImplementation(sf_class_t cls, sf_sel sel);
/* The same for the object's class (its hook subclass included): object_getMethodImplementation. */
sf_imp sf_object_getMethodImplementation(sf_id obj, sf_sel sel);
/* The class method (a method of the metaclass) `sel` of `cls`: class_getClassMethod. */
sf_method_t sf_class_getClassMethod(sf_class_t cls, sf_sel sel);
/* The selector named `name` if it is registered, else NULL; registers nothing (sel_lookUpByName). */
sf_sel sf_sel_lookUpName(const char *name);
/*
 * The forwarding IMP (objc4's _objc_msgForward). Cast to the method's type and called as
 * (self, _cmd, args…) — or installed as a method's IMP — it runs the forwarding path:
 * forwardingTargetForSelector:, then forwardInvocation:, then doesNotRecognizeSelector:,
 * with the call's own arguments. The arguments' types come from methodSignatureForSelector:,
 * else from the receiver's method entry for the selector (one installed with this IMP). With
 * neither, or when self/_cmd are not an object and a registered selector, the call returns
 * zero (a memory-returned struct is left untouched) and sf_last_error() is
 * SF_ERR_FORWARDING; it never crashes. Errors of the path itself are reported the same way.
 * x86-64 only; elsewhere it always reports SF_ERR_FORWARDING.
 */
void sf_msgForward(void);
sf_sel sf_method_getName(sf_method_t m);
sf_imp sf_method_getImplementation(sf_method_t m);
const char *sf_method_getTypeEncoding(sf_method_t m);
/* On a hooked method the hook stays and wraps `imp`; returns the IMP it wrapped. */
sf_imp sf_method_setImplementation(sf_method_t m, sf_imp imp);
/* Refused (sf_last_error() says why) for NULL, different signatures, or a hooked method. */
void sf_method_exchangeImplementations(sf_method_t a, sf_method_t b);

/* Instance variables, declared before sf_registerClassPair. */
bool sf_class_addIvar(sf_class_t cls, const char *name, size_t size, uint8_t log2_alignment,
                      const char *types);
/* Byte offset of the ivar from the object's start, or -1 when the class has none by that name. */
ptrdiff_t sf_class_getIvarOffset(sf_class_t cls, const char *name);
void *sf_object_getIvarPointer(sf_id obj, ptrdiff_t offset);

/*
 * Protocols, like objc_allocateProtocol & co. Allocate, add method descriptions and
 * incorporated protocols, then register; a registered protocol is immutable. Lists are
 * malloc'ed arrays the caller frees (NULL when empty); `outCount` may be NULL.
 */
typedef struct sf_method_description {
    sf_sel name;        /* NULL when not found */
    const char *types;  /* canonical encoding, valid for the life of the process */
} sf_method_description;

/* NULL (SF_ERR_DUPLICATE_PROTOCOL) when a protocol of that name exists or is being built. */
sf_protocol_t sf_allocateProtocol(const char *name);
/* SF_ERR_DUPLICATE_PROTOCOL when registered twice. */
sf_status sf_registerProtocol(sf_protocol_t proto);
sf_protocol_t sf_getProtocol(const char *name);
const char *sf_protocol_getName(sf_protocol_t proto);
/* Before registration only; SF_ERR_RESERVED_SELECTOR for dealloc, SF_ERR_BAD_ENCODING for bad
 * types, SF_ERR_METHOD_EXISTS when declared already. */
sf_status sf_protocol_addMethodDescription(sf_protocol_t proto, sf_sel name, const char *types,
                                           bool isRequiredMethod, bool isInstanceMethod);
/* `addition` must be registered; `proto` not yet. */
sf_status sf_protocol_addProtocol(sf_protocol_t proto, sf_protocol_t addition);
/* Searches incorporated protocols too; {NULL, NULL} when not declared. */
sf_method_description sf_protocol_getMethodDescription(sf_protocol_t proto, sf_sel sel,
                                                       bool isRequiredMethod, bool isInstanceMethod);
sf_method_description *sf_protocol_copyMethodDescriptionList(sf_protocol_t proto, bool isRequiredMethod,
                                                             bool isInstanceMethod, unsigned int *outCount);
sf_protocol_t *sf_protocol_copyProtocolList(sf_protocol_t proto, unsigned int *outCount);
bool sf_protocol_conformsToProtocol(sf_protocol_t proto, sf_protocol_t other);
sf_protocol_t *sf_copyProtocolList(unsigned int *outCount);
/* False when already adopted by this class (or on error: sf_last_error()). */
bool sf_class_addProtocol(sf_class_t cls, sf_protocol_t proto);
/* Through superclasses and incorporated protocols. */
bool sf_class_conformsToProtocol(sf_class_t cls, sf_protocol_t proto);
sf_protocol_t *sf_class_copyProtocolList(sf_class_t cls, unsigned int *outCount);
/* The class's answer, or what the object's own conformsToProtocol: (B@:^v) says: a
 * forwarding proxy answers for its target. */
bool sf_object_conformsToProtocol(sf_id obj, sf_protocol_t proto);

/* Objects. Allocation returns a +1 reference. */
sf_id sf_class_createInstance(sf_class_t cls);
sf_id sf_retain(sf_id obj);
void sf_release(sf_id obj);
uintptr_t sf_object_retainCount(sf_id obj);
sf_class_t sf_object_getClass(sf_id obj);
/*
 * isa swizzling, like object_setClass: returns the previous class, or NULL with
 * SF_ERR_INCOMPATIBLE_CLASS when `cls` does not fit the object's allocation or alignment,
 * keeps strong object ivars at other offsets, or the object has per-object hooks or is being
 * deallocated (SF_ERR_INVALID_ARGUMENT for NULL, a class object or a metaclass).
 */
sf_class_t sf_object_setClass(sf_id obj, sf_class_t cls);

/* Zeroing weak references, like objc_initWeak / objc_loadWeakRetained / objc_destroyWeak. */
void sf_initWeak(sf_id *slot, sf_id obj);
sf_id sf_loadWeakRetained(sf_id *slot);
void sf_destroyWeak(sf_id *slot);

/* Associated objects (retained by the owner until it is deallocated or the key is reset). */
void sf_setAssociatedObject(sf_id obj, const void *key, sf_id value);
sf_id sf_getAssociatedObject(sf_id obj, const void *key);

/* Dealloc observers run once, in registration order, before the object's memory goes. */
typedef void (*sf_dealloc_fn)(sf_id obj, void *context);
uint64_t sf_object_addDeallocObserver(sf_id obj, sf_dealloc_fn fn, void *context);
bool sf_object_removeDeallocObserver(sf_id obj, uint64_t token);

/*
 * Message lookup, like GNUstep's objc_msg_lookup: returns the IMP to cast and call with
 * (obj, sel, args...). Returns NULL (and records SF_ERR_UNRECOGNIZED_SELECTOR or
 * SF_ERR_NIL_RECEIVER) when nothing implements the selector; on success the last error is
 * SF_OK. An IMP the runtime made from a Swift closure (or a hook) that fails returns zero and
 * records its error (SF_ERR_FORWARDING), so sf_last_error() right after the call says whether
 * it failed. That error is this call's only: later sends start clean and never report it.
 */
sf_imp sf_msg_lookup(sf_id obj, sf_sel sel);
/* Lookup for a `super` send: starts at `cls` (the superclass of the method's class). */
sf_imp sf_msg_lookup_super(sf_class_t cls, sf_sel sel);
/*
 * A full message send through libffi, with the forwarding path on a miss. `args` holds one
 * pointer per argument after self and _cmd; `ret` must fit the return type (at least a word
 * for integer returns).
 */
sf_status sf_msg_send(sf_id obj, sf_sel sel, void *ret, void **args);

/* ======================================================================================
 * Hooks, invocations, forwarding, C-function methods, throttle rules, introspection.
 * docs/c-api.md gives every function's errors, ownership and thread-safety. Handles
 * (hook tokens, invocations, rules, clocks) are checked against a table: a released or
 * unknown handle is an SF_ERR_INVALID_ARGUMENT, never a crash.
 * ====================================================================================== */

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

/* ---- throttle rules (MessageThrottle) ---- */

typedef struct sf_rule *sf_rule_t;
typedef struct sf_manual_clock *sf_manual_clock_t;

typedef enum sf_throttle_mode {
    SF_THROTTLE_FIRSTLY = 0,    /* the first call of a window runs at once, the rest are dropped */
    SF_THROTTLE_LAST = 1,       /* the last call of a window runs when it ends */
    SF_THROTTLE_DEBOUNCE = 2,   /* the last call runs once the calls pause for the duration */
    SF_THROTTLE_THROTTLE = 3,   /* leading and/or trailing edge (options), at most once per window */
    SF_THROTTLE_COOLDOWN = 4,   /* a call runs, then every call is dropped for the duration */
} sf_throttle_mode;

enum {
    SF_RULE_LEADING = 1u << 0,          /* SF_THROTTLE_THROTTLE: run the first call of a window */
    SF_RULE_TRAILING = 1u << 1,         /* SF_THROTTLE_THROTTLE: run the last call at the end */
    SF_RULE_RETURN_LAST_RESULT = 1u << 2, /* a suppressed call returns the last real result, not 0 */
};

typedef enum sf_pending_policy { SF_PENDING_CANCEL = 0, SF_PENDING_FLUSH = 1 } sf_pending_policy;

/* A rejected call, lent for the callback only. */
typedef void (*sf_rule_rejected_fn)(sf_invocation_t inv, void *context);

/* A rule for `sel` on `target`: an object (that object only), a class (its instances) or a
 * metaclass (class methods). Not applied yet; owned by the caller (+1): sf_rule_release. */
sf_rule_t sf_rule_create(sf_id target, sf_sel sel, sf_throttle_mode mode, uint64_t duration_ns, uint32_t options);
/* Runs the rule's timers on `clock` instead of a Dispatch queue (tests). Before sf_rule_apply. */
sf_status sf_rule_setManualClock(sf_rule_t rule, sf_manual_clock_t clock);
sf_status sf_rule_setRejectedHandler(sf_rule_t rule, sf_rule_rejected_fn fn, void *context);
/* Starts limiting. Applying an applied rule, or a second rule for the selector in the same
 * class hierarchy, is SF_ERR_RULE. */
sf_status sf_rule_apply(sf_rule_t rule);
/* Stops limiting; a pending call is run (SF_PENDING_FLUSH) or dropped. Not applied: SF_ERR_RULE. */
sf_status sf_rule_discard(sf_rule_t rule, sf_pending_policy pending);
/* Runs the pending call now, if any; *flushed (may be NULL) says whether one ran. */
sf_status sf_rule_flush(sf_rule_t rule, bool *flushed);
/* Drops the pending call, if any. */
sf_status sf_rule_cancel(sf_rule_t rule);
bool sf_rule_isApplied(sf_rule_t rule);
/* Drops the caller's handle; an applied rule stays applied until discarded. */
sf_status sf_rule_release(sf_rule_t rule);

/* A clock that moves only when told: deadlines fire inside sf_manual_clock_advance. */
sf_manual_clock_t sf_manual_clock_create(uint64_t now_ns);
sf_status sf_manual_clock_advance(sf_manual_clock_t clock, uint64_t ns);
uint64_t sf_manual_clock_now(sf_manual_clock_t clock);
sf_status sf_manual_clock_release(sf_manual_clock_t clock);

/* ---- introspection (class_copyMethodList and friends) ---- */

typedef struct sf_ivar_description {
    const char *name;
    const char *types;
    ptrdiff_t offset;
    size_t size;
} sf_ivar_description;

/* The class's own methods (not inherited), `*count` entries; free the array with sf_free. */
sf_method_t *sf_class_copyMethodList(sf_class_t cls, unsigned int *count);
/* The class's own ivars; one allocation, strings included: sf_free. */
sf_ivar_description *sf_class_copyIvarList(sf_class_t cls, unsigned int *count);
/* Every registered class, `*count` entries: sf_free. */
sf_class_t *sf_copyClassList(unsigned int *count);
/* Frees a list returned by an sf_*copy*List function. NULL is ignored. */
void sf_free(void *list);

#ifdef __cplusplus
}
#endif

#include "SelectorForwardingRuntime.h"

#endif
