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

/* Objects. Allocation returns a +1 reference. */
sf_id sf_class_createInstance(sf_class_t cls);
sf_id sf_retain(sf_id obj);
void sf_release(sf_id obj);
uintptr_t sf_object_retainCount(sf_id obj);
sf_class_t sf_object_getClass(sf_id obj);

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

#ifdef __cplusplus
}
#endif

#endif
