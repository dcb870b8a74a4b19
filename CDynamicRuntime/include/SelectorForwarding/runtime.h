/*
 * SelectorForwarding — selectors, classes, methods, ivars, message lookup and introspection.
 * Part of the public C API: include <SelectorForwarding.h>.
 */
#ifndef SELECTOR_FORWARDING_RUNTIME_H
#define SELECTOR_FORWARDING_RUNTIME_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Selectors: interned, process-wide, never freed. */
sf_sel sf_sel_registerName(const char *name);
const char *sf_sel_getName(sf_sel sel);

/* Classes. A pair is allocated, given ivars and methods, then registered. */
sf_class_t sf_allocateClassPair(sf_class_t superclass, const char *name);
/* Installs the hooks waiting for the class's name (sf_hook_whenAvailable) before it returns. */
void sf_registerClassPair(sf_class_t cls);
/* Fails with SF_ERR_CLASS_IN_USE while instances or subclasses are alive. */
sf_status sf_disposeClassPair(sf_class_t cls);
/*
 * objc_duplicateClass: a registered copy of `original` named `name` (same superclass, ivars at
 * the same offsets, its own copy of the methods, class methods, protocols and properties; a
 * hooked method contributes its original), for swapping an object's class with
 * sf_object_setClass as KVO does. NULL with SF_ERR_DUPLICATE_CLASS for a name in use,
 * SF_ERR_INVALID_ARGUMENT for NULL, a metaclass or `extraBytes` other than 0,
 * SF_ERR_CLASS_REGISTERED for a class not registered yet. Dispose it with sf_disposeClassPair.
 */
sf_class_t sf_duplicateClass(sf_class_t original, const char *name, size_t extraBytes);
/* The registered class with that name or alias; NULL for NULL or an unknown name. */
sf_class_t sf_getClass(const char *name);
/* objc_lookUpClass: as sf_getClass (this runtime has no class handler to ask). */
sf_class_t sf_lookUpClass(const char *name);
sf_class_t sf_getMetaClass(const char *name);
/*
 * libobjc2's class_registerAlias_np: `alias` becomes another name of the registered class
 * `cls`; sf_getClass, sf_lookUpClass and sf_getMetaClass find it by that name, while
 * sf_class_getName still gives its own, and sf_disposeClassPair removes its aliases. False
 * with SF_ERR_DUPLICATE_CLASS when a class has that name or it is an alias already (of any
 * class; a class allocated later cannot take it either), SF_ERR_CLASS_REGISTERED for a class
 * not registered yet, SF_ERR_INVALID_ARGUMENT for NULL, a metaclass or an empty alias.
 */
bool sf_class_registerAlias_np(sf_class_t cls, const char *alias);
const char *sf_class_getName(sf_class_t cls);
sf_class_t sf_class_getSuperclass(sf_class_t cls);
bool sf_class_isMetaClass(sf_class_t cls);
size_t sf_class_getInstanceSize(sf_class_t cls);
bool sf_class_respondsToSelector(sf_class_t cls, sf_sel sel);

/* Methods. `types` is an Objective-C type encoding such as "q@:qq". */
sf_status sf_class_addMethod(sf_class_t cls, sf_sel sel, sf_imp imp, const char *types);
/* Returns the previous implementation, or NULL if the method was added. */
sf_imp sf_class_replaceMethod(sf_class_t cls, sf_sel sel, sf_imp imp, const char *types);
/*
 * objc4's class_addMethodsBulk / class_replaceMethodsBulk: `count` methods (entry i is names[i],
 * imps[i], types[i]) under one acquisition of the runtime lock, with at most one cache flush.
 * Every entry is checked before anything changes: a NULL array or entry
 * (SF_ERR_INVALID_ARGUMENT, naming the index), a bad encoding, a reserved selector, or a
 * replacement with other types refuses the whole call, and the class is left as it was.
 * Add: a method the class already has itself (or that an earlier entry added) is not replaced;
 * its name goes to failedNames (room for `count` names, or NULL) and their number to
 * *outFailedCount (or NULL); the others are added and the status is SF_ERR_METHOD_EXISTS when
 * any was left out, else SF_OK. Replace: every entry is installed, added where missing; of two
 * entries with one selector, the later wins. The arrays stay the caller's.
 */
sf_status sf_class_addMethodsBulk(sf_class_t cls, const sf_sel *names, const sf_imp *imps, const char **types,
                                  uint32_t count, sf_sel *failedNames, uint32_t *outFailedCount);
sf_status sf_class_replaceMethodsBulk(sf_class_t cls, const sf_sel *names, const sf_imp *imps, const char **types,
                                      uint32_t count);
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

/*
 * Method types (objc4's method_getNumberOfArguments and friends). Types are the canonical
 * encoding sf_method_getTypeEncoding returns (no offsets, qualifiers or quoted class names).
 * The count includes self and _cmd; argument indices do too (0 is self, 1 is _cmd).
 * copy: a malloc'd string the caller frees, NULL for a NULL method or an index out of range.
 * get: strncpy semantics, as objc4: at most dst_len bytes, NUL-terminated only when the type
 * is shorter than dst_len, the rest of dst zero-filled; dst is all zeros for a NULL method or
 * an index out of range; a NULL dst is ignored.
 */
unsigned int sf_method_getNumberOfArguments(sf_method_t m);
char *sf_method_copyReturnType(sf_method_t m);
char *sf_method_copyArgumentType(sf_method_t m, unsigned int index);
void sf_method_getReturnType(sf_method_t m, char *dst, size_t dst_len);
void sf_method_getArgumentType(sf_method_t m, unsigned int index, char *dst, size_t dst_len);

/* Instance variables, declared before sf_registerClassPair. */
bool sf_class_addIvar(sf_class_t cls, const char *name, size_t size, uint8_t log2_alignment,
                      const char *types);
/* Byte offset of the ivar from the object's start, or -1 when the class has none by that name. */
ptrdiff_t sf_class_getIvarOffset(sf_class_t cls, const char *name);
void *sf_object_getIvarPointer(sf_id obj, ptrdiff_t offset);
/* A zeroing weak object ivar (`__weak id`, type "@"): it reads NULL once its object is
 * deallocated. Access it only with sf_storeWeak / sf_loadWeakRetained on
 * sf_object_getIvarPointer; the owner's deallocation unregisters it. Errors as sf_class_addIvar. */
bool sf_class_addWeakIvar(sf_class_t cls, const char *name);
/*
 * Ivar handles (objc4's Ivar). sf_class_getInstanceVariable searches the superclasses too, weak
 * ivars included; the same ivar gives the same handle from the class and its subclasses. NULL
 * with SF_ERR_INVALID_ARGUMENT for a NULL class or name, and for a name no ivar of the chain has
 * (a metaclass has none); the message names the class and the ivar. A handle, and the strings
 * its getters return, stay valid as long as the class that declares the ivar: until
 * sf_disposeClassPair. The getters give NULL (offset: -1) for a NULL handle.
 */
sf_ivar_t sf_class_getInstanceVariable(sf_class_t cls, const char *name);
const char *sf_ivar_getName(sf_ivar_t ivar);
/* The ivar's type, canonical ("@" for a weak ivar too). */
const char *sf_ivar_getTypeEncoding(sf_ivar_t ivar);
/* Byte offset from the object's start, as sf_class_getIvarOffset; use with sf_object_getIvarPointer. */
ptrdiff_t sf_ivar_getOffset(sf_ivar_t ivar);
/*
 * class_getIvarLayout / class_getWeakIvarLayout: which pointer-sized words of an instance hold
 * strong (weak) object ivars, in objc4's format: bytes 0xSN (skip S words, then N words), from
 * the object's first word, inherited ivars included, ending with a 0 byte. NULL when there are
 * none (SF_OK) or for a NULL class (SF_ERR_INVALID_ARGUMENT). Valid while the class exists.
 */
const uint8_t *sf_class_getIvarLayout(sf_class_t cls);
const uint8_t *sf_class_getWeakIvarLayout(sf_class_t cls);

/* ---- class layout ---- */

/* class_setSuperclass: returns the previous superclass, or NULL with SF_ERR_INCOMPATIBLE_CLASS
 * while the class or a subclass has instances, for a cycle, a root class, another root
 * hierarchy, or a superclass whose instances do not fit where the old one's ended
 * (SF_ERR_INVALID_ARGUMENT for NULL or a metaclass). Caches are flushed. */
sf_class_t sf_class_setSuperclass(sf_class_t cls, sf_class_t newSuper);
/* class_createInstance(cls, extraBytes): +1; the extra bytes are zeroed and start at
 * sf_object_getIndexedIvars, aligned to 16 (or the class's larger ivar alignment). */
sf_id sf_class_createInstanceWithExtraBytes(sf_class_t cls, size_t extraBytes);
/* The storage after the object's ivars; NULL for NULL and class objects. */
void *sf_object_getIndexedIvars(sf_id obj);

/*
 * Message lookup, like GNUstep's objc_msg_lookup: returns the IMP to cast and call with
 * (obj, sel, args...). Returns NULL (and records SF_ERR_UNRECOGNIZED_SELECTOR or
 * SF_ERR_NIL_RECEIVER) when nothing implements the selector; on success the last error is
 * SF_OK. An IMP the runtime made from a Swift closure (or a hook) that fails returns zero and
 * records its error (SF_ERR_FORWARDING), so sf_last_error() right after the call says whether
 * it failed. That error is this call's only: later sends start clean and never report it.
 * An error from such an IMP called through its pointer names the class the method was
 * made for: the IMP never reads its receiver.
 *
 * Async-signal-safe only on a hit: when `sel` is already in the cache of obj's class and
 * the calling thread has sent before (its reader record exists). A miss takes the runtime
 * lock and allocates; in a signal handler that interrupted a thread adding methods (or
 * holding malloc's lock) it deadlocks. Adding, removing or exchanging methods, hooking and
 * disposing a class flush its cache, so a handler cannot count on a hit while another
 * thread changes the class. Every other function of this header is not async-signal-safe.
 */
sf_imp sf_msg_lookup(sf_id obj, sf_sel sel);
/* Lookup for a `super` send: starts at `cls` (the superclass of the method's class). */
sf_imp sf_msg_lookup_super(sf_class_t cls, sf_sel sel);
/*
 * A full message send through libffi, with the forwarding path on a miss. `args` holds one
 * pointer per argument after self and _cmd; exactly the return type's size is written to
 * `ret` (4 bytes for an `int`, 1 for a `char`), forwarded or not: `int ret; sf_msg_send(obj,
 * sel, &ret, NULL)` is right. `ret` may be NULL to discard the value.
 */
sf_status sf_msg_send(sf_id obj, sf_sel sel, void *ret, void **args);

/* ---- lent C strings (objc_autoreleasePoolPush) ---- */

/*
 * A `char *` a Swift `String` method returns (or a Swift caller passes) is a copy the runtime
 * lends to the calling thread: valid until the innermost pool pushed before it was lent is
 * popped, or the thread exits. Swift callers read it at once and need no pool; a C loop that
 * calls such methods brackets each iteration with a push and a pop (memory grows otherwise).
 * Pops happen in reverse order of pushes; popping a pool frees what was lent since its push.
 */
void *sf_autoreleasePoolPush(void);
/* NULL, or a pool an outer pop freed already: SF_ERR_INVALID_ARGUMENT. */
sf_status sf_autoreleasePoolPop(void *pool);

/* ---- method_invoke ---- */

/* Calls the method's implementation on `receiver` without a lookup; `ret` and `args` as for
 * sf_msg_send. SF_ERR_INVALID_ARGUMENT when `receiver` is not an instance of the method's
 * class or a subclass (for a class method: the class or a subclass). */
sf_status sf_method_invoke(sf_method_t m, sf_id receiver, void *ret, void **args);

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

#endif
