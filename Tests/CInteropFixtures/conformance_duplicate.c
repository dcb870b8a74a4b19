// objc_duplicateClass from C (objc4 test/duplicateClass.m, re-expressed): the copy's shape,
// an object switched to the copy and back as KVO does, independence of later changes, and
// the refusals.
#include "CInteropFixtures.h"

#include <stdint.h>
#include <string.h>

#include "conformance_check.h"

static int64_t cf_dup_answer(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return 42; }
static int64_t cf_dup_noted(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return 99; }
static int64_t cf_dup_class_answer(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return 43; }

typedef int64_t (*cf_dup_fn)(sf_id, sf_sel);

static int64_t cf_dup_send(sf_id obj, const char *sel) {
    sf_imp imp = sf_msg_lookup(obj, SEL(sel));
    return imp ? ((cf_dup_fn)imp)(obj, SEL(sel)) : -1;
}

int cf_scenario_duplicate_class(const char *name) {
    char n[256], d[256];
    snprintf(n, sizeof n, "%s.Original", name);
    sf_class_t cls = sf_allocateClassPair(NULL, n);
    CHECK(cls);
    CHECK(sf_class_addIvar(cls, "count", 8, 3, "q"));
    CHECK(sf_class_addIvar(cls, "friend", 8, 3, "@"));
    sf_registerClassPair(cls);
    CHECK(sf_class_addMethod(cls, SEL("cfAnswer"), IMP(cf_dup_answer), "q@:") == SF_OK);
    CHECK(sf_class_addMethod(sf_getMetaClass(n), SEL("cfClassAnswer"), IMP(cf_dup_class_answer), "q@:") == SF_OK);

    snprintf(d, sizeof d, "%s.Copy", name);
    sf_class_t dup = sf_duplicateClass(cls, d, 0);
    CHECK(dup && sf_last_error() == SF_OK);
    CHECK(sf_getClass(d) == dup);
    CHECK(strcmp(sf_class_getName(dup), d) == 0);
    CHECK(sf_class_getSuperclass(dup) == NULL);
    CHECK(sf_getMetaClass(d) != sf_getMetaClass(n));
    CHECK(sf_class_getInstanceSize(dup) == sf_class_getInstanceSize(cls));
    CHECK(sf_class_getIvarOffset(dup, "friend") == sf_class_getIvarOffset(cls, "friend"));
    CHECK(sf_method_getImplementation(sf_class_getInstanceMethod(dup, SEL("cfAnswer"))) == IMP(cf_dup_answer));
    CHECK(cf_dup_send((sf_id)dup, "cfClassAnswer") == 43);
    unsigned int count = 0;
    sf_method_t *methods = sf_class_copyMethodList(dup, &count);
    CHECK(methods && count == 1);
    sf_free(methods);

    // KVO-style: the copy overrides a method; an object moves to it and back, ivars intact.
    CHECK(sf_class_replaceMethod(dup, SEL("cfAnswer"), IMP(cf_dup_noted), "q@:") == IMP(cf_dup_answer));
    sf_id friend = sf_class_createInstance(cls);
    sf_id o = sf_class_createInstance(cls);
    *(int64_t *)sf_object_getIvarPointer(o, sf_class_getIvarOffset(cls, "count")) = 5;
    *(sf_id *)sf_object_getIvarPointer(o, sf_class_getIvarOffset(cls, "friend")) = sf_retain(friend);
    CHECK(sf_object_setClass(o, dup) == cls);
    CHECK(sf_object_getClass(o) == dup);
    CHECK(cf_dup_send(o, "cfAnswer") == 99);
    CHECK(*(int64_t *)sf_object_getIvarPointer(o, sf_class_getIvarOffset(dup, "count")) == 5);
    CHECK(sf_object_setClass(o, cls) == dup);
    CHECK(cf_dup_send(o, "cfAnswer") == 42);

    // Bad input: a name in use, NULL, a metaclass, extra bytes, an unregistered class.
    CHECK(sf_duplicateClass(cls, n, 0) == NULL && sf_last_error() == SF_ERR_DUPLICATE_CLASS);
    CHECK(strstr(sf_last_error_message(), n) != NULL);
    CHECK(sf_duplicateClass(NULL, d, 0) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_duplicateClass(cls, NULL, 0) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_duplicateClass(sf_getMetaClass(n), "cfDupOfMeta", 0) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_duplicateClass(cls, "cfDupExtra", 16) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(sf_last_error_message(), n) != NULL);
    snprintf(d, sizeof d, "%s.Pending", name);
    sf_class_t pending = sf_allocateClassPair(NULL, d);
    CHECK(sf_duplicateClass(pending, "cfDupOfPending", 0) == NULL && sf_last_error() == SF_ERR_CLASS_REGISTERED);

    sf_release(o);
    sf_release(friend);
    CHECK(sf_disposeClassPair(dup) == SF_OK);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    CHECK(sf_disposeClassPair(pending) == SF_OK);
    return 0;
}
