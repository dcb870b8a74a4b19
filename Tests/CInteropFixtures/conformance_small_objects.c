// Small objects (tagged pointers) from C: libobjc2's Test/SmallObjects and objc4's tagged
// pointers, through the public header only.
#include "CInteropFixtures.h"

#include <stdint.h>
#include <stdio.h>

#include "conformance_check.h"

// The tag these scenarios register; the Swift suite holds others (tags are process-wide).
#define CF_SMALL_TAG 6

static int64_t cf_small_twice(sf_id self, sf_sel cmd) {
    (void)cmd;
    return (int64_t)sf_tagged_payload(self) * 2;
}

static int64_t cf_small_plus(sf_id self, sf_sel cmd, int64_t x) {
    (void)cmd;
    return (int64_t)sf_tagged_payload(self) + x;
}

static sf_status cf_small_after(sf_call_t call, void *context) {
    int64_t r = 0;
    if (sf_call_getReturnValue(call, &r, sizeof r) != SF_OK) return SF_ERR_INVALID_ARGUMENT;
    *(uintptr_t *)context = sf_tagged_payload(sf_call_getTarget(call));
    r += 100;
    return sf_call_setReturnValue(call, &r, sizeof r);
}

static void cf_small_observer(sf_id obj, void *context) { (void)obj, (void)context; }

static sf_class_t cf_small_class;

static sf_class_t cf_small_register(const char *name) {
    if (cf_small_class) return cf_small_class;
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    if (!cls) return NULL;
    if (sf_class_addMethod(cls, SEL("twice"), IMP(cf_small_twice), "q@:") != SF_OK) return NULL;
    if (sf_class_addMethod(cls, SEL("plus:"), IMP(cf_small_plus), "q@:q") != SF_OK) return NULL;
    sf_registerClassPair(cls);
    if (!sf_registerSmallObjectClass_np(cls, CF_SMALL_TAG)) return NULL;
    cf_small_class = cls;
    return cls;
}

int cf_scenario_small_objects(const char *name) {
    sf_class_t cls = cf_small_register(name);
    CHECK(cls);
    CHECK(sf_registerSmallObjectClass_np(cls, CF_SMALL_TAG));  // the same pair again

    sf_id o = sf_tagged_make(CF_SMALL_TAG, 21);
    CHECK(o && sf_object_isTagged(o));
    CHECK(sf_tagged_getTag(o) == CF_SMALL_TAG && sf_tagged_payload(o) == 21);
    CHECK(sf_object_getClass(o) == cls);
    CHECK(sf_tagged_make(CF_SMALL_TAG, 21) == o);

    // Sends: the cached lookup, the libffi send, the IMP's `self`.
    int64_t r = 0;
    CHECK(sf_msg_send(o, SEL("twice"), &r, NULL) == SF_OK && r == 42);
    int64_t x = 5;
    void *args[] = {&x};
    for (int i = 0; i < 100; i++) CHECK(sf_msg_send(o, SEL("plus:"), &r, args) == SF_OK && r == 26);
    int64_t (*plus)(sf_id, sf_sel, int64_t) = (int64_t (*)(sf_id, sf_sel, int64_t))sf_msg_lookup(o, SEL("plus:"));
    CHECK(plus && plus(o, SEL("plus:"), 1) == 22);
    CHECK(sf_msg_send(o, SEL("noSuchSelector"), &r, NULL) != SF_OK);

    // Retain and release do nothing.
    CHECK(sf_object_retainCount(o) == UINTPTR_MAX);
    CHECK(sf_retain(o) == o);
    sf_release(o);
    sf_release(o);
    CHECK(sf_msg_send(o, SEL("twice"), &r, NULL) == SF_OK && r == 42);

    // A class hook runs with the small object as its target.
    uintptr_t seen = 0;
    sf_hook_token t = sf_class_hookMethod(cls, SEL("twice"), SF_HOOK_AFTER, NULL, cf_small_after, &seen);
    CHECK(t);
    CHECK(sf_msg_send(sf_tagged_make(CF_SMALL_TAG, 4), SEL("twice"), &r, NULL) == SF_OK && r == 108);
    CHECK(seen == 4);
    CHECK(sf_hook_remove(t) == SF_OK);
    CHECK(sf_msg_send(o, SEL("twice"), &r, NULL) == SF_OK && r == 42);

    // Refused: storage of its own, weak references, another class.
    static char key;
    sf_setAssociatedObject(o, &key, NULL);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_getAssociatedObject(o, &key) == NULL);
    CHECK(sf_setAssociatedObjectWithPolicy(o, &key, NULL, SF_ASSOCIATION_RETAIN) != SF_OK);
    CHECK(sf_object_addDeallocObserver(o, cf_small_observer, NULL) == 0);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_object_hookMethod(o, SEL("twice"), SF_HOOK_BEFORE, NULL, cf_small_after, &seen) == 0);
    CHECK(sf_object_getIvarPointer(o, 16) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_object_getIndexedIvars(o) == NULL);
    sf_id slot;
    sf_initWeak(&slot, o);
    CHECK(slot == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    char other_name[256], ivar_name[256];
    snprintf(other_name, sizeof other_name, "%sOther", name);
    snprintf(ivar_name, sizeof ivar_name, "%sWithIvar", name);
    sf_class_t other = sf_allocateClassPair(NULL, other_name);
    CHECK(other);
    sf_registerClassPair(other);
    CHECK(sf_object_setClass(o, other) == NULL && sf_last_error() == SF_ERR_INCOMPATIBLE_CLASS);
    CHECK(sf_object_getClass(o) == cls);

    // Registration and making refuse what makes no sense.
    CHECK(!sf_registerSmallObjectClass_np(other, CF_SMALL_TAG) && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(!sf_registerSmallObjectClass_np(other, 8) && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(!sf_registerSmallObjectClass_np(NULL, 0));
    CHECK(!sf_registerSmallObjectClass_np(sf_getMetaClass(other_name), 0));
    sf_class_t with_ivar = sf_allocateClassPair(NULL, ivar_name);
    CHECK(with_ivar && sf_class_addIvar(with_ivar, "x", 8, 3, "q"));
    sf_registerClassPair(with_ivar);
    CHECK(!sf_registerSmallObjectClass_np(with_ivar, 0) && sf_last_error() == SF_ERR_INCOMPATIBLE_CLASS);
    CHECK(sf_tagged_make(8, 1) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_tagged_make(CF_SMALL_TAG, (uintptr_t)1 << 60) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_tagged_make(0, 1) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);  // tag 0 is free
    CHECK(sf_tagged_payload(NULL) == 0 && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_tagged_getTag(NULL) == -1 && !sf_object_isTagged(NULL));
    CHECK(sf_disposeClassPair(cls) != SF_OK);
    CHECK(sf_disposeClassPair(other) == SF_OK);
    CHECK(sf_disposeClassPair(with_ivar) == SF_OK);
    return 0;
}
