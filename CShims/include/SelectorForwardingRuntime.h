/*
 * SelectorForwarding — the rest of objc4's runtime C API: class_setSuperclass, extra bytes
 * at allocation, association policies, method_invoke, properties, IMPs from functions.
 * Included by SelectorForwarding.h; include that one. docs/c-api.md gives each function's
 * errors, ownership and thread-safety.
 */
#ifndef SELECTOR_FORWARDING_RUNTIME_H
#define SELECTOR_FORWARDING_RUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

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

/* ---- method_invoke ---- */

/* Calls the method's implementation on `receiver` without a lookup; `ret` and `args` as for
 * sf_msg_send. SF_ERR_INVALID_ARGUMENT when `receiver` is not an instance of the method's
 * class or a subclass (for a class method: the class or a subclass). */
sf_status sf_method_invoke(sf_method_t m, sf_id receiver, void *ret, void **args);


/* ---- properties (objc_property_t) ---- */

typedef struct sf_property *sf_property_t;      /* immortal once declared */
typedef struct sf_property_attribute {
    const char *name;   /* one character: T R C & N G S D W P V t */
    const char *value;  /* "" for flags */
} sf_property_attribute_t;

/* class_addProperty. False with SF_ERR_BAD_ENCODING for malformed attributes (no or a bad
 * type `T`, unknown names, a value on a flag, duplicates, C/&/W together…) or
 * SF_ERR_INVALID_ARGUMENT when the class already declares `name`. */
bool sf_class_addProperty(sf_class_t cls, const char *name, const sf_property_attribute_t *attributes,
                          unsigned int attributeCount);
/* The same from an attribute string such as "T@,&,N,V_name". */
bool sf_class_addPropertyWithAttributes(sf_class_t cls, const char *name, const char *attributes);
/* class_replaceProperty: replaces the attributes, or adds the property. */
sf_status sf_class_replaceProperty(sf_class_t cls, const char *name, const sf_property_attribute_t *attributes,
                                   unsigned int attributeCount);
/* Searches superclasses too; NULL when none. */
sf_property_t sf_class_getProperty(sf_class_t cls, const char *name);
/* The class's own properties (sf_free the array). */
sf_property_t *sf_class_copyPropertyList(sf_class_t cls, unsigned int *outCount);
const char *sf_property_getName(sf_property_t property);
/* Valid for the life of the process, also after sf_class_replaceProperty. */
const char *sf_property_getAttributes(sf_property_t property);
/* malloc'ed (free it); NULL when the property has no such attribute. */
char *sf_property_copyAttributeValue(sf_property_t property, const char *attributeName);
/* One allocation, strings included (sf_free). */
sf_property_attribute_t *sf_property_copyAttributeList(sf_property_t property, unsigned int *outCount);


/* ---- IMPs from a C function plus a context, bound to no class (imp_implementationWithBlock) ---- */

/* An IMP for calls of signature `types` that runs fn(call, context) (sf_function_fn, as for
 * sf_class_addMethodWithFunction). Install it with sf_class_addMethod, sf_class_replaceMethod or
 * sf_method_setImplementation in any number of classes (their types must match `types`:
 * SF_ERR_SIGNATURE_MISMATCH). The context is released (release may be NULL) once the IMP is
 * removed and no method holds it any more; NULL (context still the caller's) on failure. */
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
