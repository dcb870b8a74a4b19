/*
 * SelectorForwarding — instances, reference counts, weak references, associated objects, dealloc observers.
 * Part of the public C API: include <SelectorForwarding.h>.
 */
#ifndef SELECTOR_FORWARDING_OBJECTS_H
#define SELECTOR_FORWARDING_OBJECTS_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Objects. Allocation returns a +1 reference. */
sf_id sf_class_createInstance(sf_class_t cls);
sf_id sf_retain(sf_id obj);
void sf_release(sf_id obj);
uintptr_t sf_object_retainCount(sf_id obj);
/*
 * object_dispose: destroys the instance now, whatever its retain count, as its last release
 * would (dealloc observers, then strong ivars released, associations removed, weak references
 * cleared, then the memory freed) except that `dealloc` is not sent, as in objc4. Every other
 * reference to it dangles: use it only on an object nothing else holds or can reach.
 * SF_ERR_INVALID_ARGUMENT for NULL, a class object, a small (tagged) object, or an object
 * already being deallocated or disposed (from its own dealloc observer, say).
 */
sf_status sf_object_dispose(sf_id obj);
sf_class_t sf_object_getClass(sf_id obj);
/*
 * isa swizzling, like object_setClass: returns the previous class, or NULL with
 * SF_ERR_INCOMPATIBLE_CLASS when `cls` does not fit the object's allocation or alignment,
 * keeps strong object ivars at other offsets, lacks a method the object has hooks of its own
 * on (or has it with other types), or the object is being deallocated
 * (SF_ERR_INVALID_ARGUMENT for NULL, a class object or a metaclass). The object's own hooks
 * move with it: they keep running, and removing the last one leaves `cls` installed.
 */
sf_class_t sf_object_setClass(sf_id obj, sf_class_t cls);

/*
 * Small objects (tagged pointers), like objc_registerSmallObjectClass_np: a value (an integer,
 * a short string, a date) that is an object without an allocation. The pointer itself holds a
 * tag, naming the class, and a payload of 60 bits. Messages go to the tag's class as to any
 * object (its class hooks included); retain and release do nothing and sf_object_retainCount
 * reports UINTPTR_MAX. What needs storage of the object's own is refused with
 * SF_ERR_INVALID_ARGUMENT (associations, dealloc observers, ivar pointers, per-object hooks),
 * and so are weak references, since it is never deallocated (sf_initWeak leaves the slot NULL,
 * sf_storeWeak leaves it as it was); sf_object_setClass with SF_ERR_INCOMPATIBLE_CLASS.
 *
 * sf_registerSmallObjectClass_np: makes `cls` the class of `tag` (0-7) for good: false with
 * SF_ERR_INVALID_ARGUMENT for NULL, a metaclass, a hook's private subclass, a tag out of
 * range, or a tag taken by another class (or `cls` already registered under another tag);
 * SF_ERR_CLASS_REGISTERED for a class not registered yet; SF_ERR_INCOMPATIBLE_CLASS for a
 * class with ivars (its own or inherited). Registering the same pair again succeeds. A
 * registered class cannot be disposed (SF_ERR_CLASS_IN_USE).
 * sf_tagged_make: the small object of `tag` and `payload`; NULL with SF_ERR_INVALID_ARGUMENT
 * for a tag out of range or not registered, or a payload of 2^60 or more.
 * sf_tagged_payload: its payload; 0 with SF_ERR_INVALID_ARGUMENT for any other object.
 * sf_tagged_getTag: its tag, or -1 for NULL or an ordinary object.
 */
bool sf_registerSmallObjectClass_np(sf_class_t cls, unsigned tag);
sf_id sf_tagged_make(unsigned tag, uintptr_t payload);
uintptr_t sf_tagged_payload(sf_id obj);
int sf_tagged_getTag(sf_id obj);
bool sf_object_isTagged(sf_id obj);

/* Zeroing weak references, like objc_initWeak / objc_loadWeakRetained / objc_destroyWeak.
 * sf_loadWeakRetained returns +1 (the caller releases it), or NULL once the object is gone. */
void sf_initWeak(sf_id *slot, sf_id obj);
sf_id sf_loadWeakRetained(sf_id *slot);
void sf_destroyWeak(sf_id *slot);
/*
 * objc_storeWeak: re-points a weak slot (nil, or set up by sf_initWeak / sf_storeWeak /
 * sf_copyWeak / sf_moveWeak) at `obj` in place and returns what it now holds: `obj`, or NULL
 * when `obj` is NULL or already being deallocated. Safe against another thread releasing
 * `obj`'s last reference. A NULL slot: NULL with SF_ERR_INVALID_ARGUMENT.
 */
sf_id sf_storeWeak(sf_id *slot, sf_id obj);
/* objc_copyWeak: `destination` (holding nothing) refers to what `source` refers to. */
void sf_copyWeak(sf_id *destination, sf_id *source);
/* objc_moveWeak: `destination` (holding nothing) takes over `source`, which then holds NULL
 * and needs no sf_destroyWeak. */
void sf_moveWeak(sf_id *destination, sf_id *source);

/* Associated objects (retained by the owner until it is deallocated or the key is reset). */
void sf_setAssociatedObject(sf_id obj, const void *key, sf_id value);
sf_id sf_getAssociatedObject(sf_id obj, const void *key);

/* ---- association policies (objc_AssociationPolicy, same values) ---- */

typedef enum sf_association_policy {
    SF_ASSOCIATION_ASSIGN = 0,              /* not retained; dangles if the value dies first */
    SF_ASSOCIATION_RETAIN_NONATOMIC = 1,
    SF_ASSOCIATION_COPY_NONATOMIC = 3,      /* the value's copy (@@:), else retained */
    SF_ASSOCIATION_RETAIN = 01401,          /* sf_setAssociatedObject's policy */
    SF_ASSOCIATION_COPY = 01403,
} sf_association_policy;

/* objc_setAssociatedObject; NULL `value` removes the key. SF_ERR_INVALID_ARGUMENT for an
 * unknown policy or an owner being deallocated; a failing copy stores nothing. */
sf_status sf_setAssociatedObjectWithPolicy(sf_id obj, const void *key, sf_id value, sf_association_policy policy);
/* The associated object, +1 (the caller releases it): safe against a concurrent reset. */
sf_id sf_copyAssociatedObject(sf_id obj, const void *key);
/* objc_removeAssociatedObjects: releases what the associations retained. */
void sf_removeAssociatedObjects(sf_id obj);

/* Dealloc observers run once, in registration order, before the object's memory goes. */
typedef void (*sf_dealloc_fn)(sf_id obj, void *context);
uint64_t sf_object_addDeallocObserver(sf_id obj, sf_dealloc_fn fn, void *context);
bool sf_object_removeDeallocObserver(sf_id obj, uint64_t token);

#ifdef __cplusplus
}
#endif

#endif
