// object_dispose from C: an instance destroyed whatever its count, with the teardown of a last
// release (observers, strong ivars, associations, weak references) but no dealloc message, as
// in objc4; objects with hooks of their own; refusals that never crash.
#include "CInteropFixtures.h"

#include <stdint.h>
#include <string.h>

#include "conformance_check.h"

static int cf_dispose_deallocs;
static void cf_dispose_dealloc(sf_id self, sf_sel cmd) {
    (void)self, (void)cmd;
    cf_dispose_deallocs++;
}

static int cf_dispose_observed;
static void cf_dispose_observer(sf_id obj, void *context) {
    (void)obj;
    (*(int *)context)++;
}

// Disposing from the object's own observer: refused, since its teardown is under way.
static sf_status cf_dispose_inner = SF_OK;
static void cf_dispose_again(sf_id obj, void *context) {
    (void)context;
    cf_dispose_inner = sf_object_dispose(obj);
}

static int64_t cf_dispose_value(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return 7; }
static sf_status cf_dispose_hook(sf_call_t call, void *context) { (void)call, (void)context; return SF_OK; }

static char cf_dispose_key;

int cf_scenario_dispose(const char *name) {
    char n[256];
    snprintf(n, sizeof n, "%s.Holder", name);
    sf_class_t holder = sf_allocateClassPair(NULL, n);
    CHECK(holder);
    CHECK(sf_class_addIvar(holder, "child", sizeof(sf_id), 3, "@"));
    CHECK(sf_class_addWeakIvar(holder, "weakChild"));
    CHECK(sf_class_addMethod(holder, SEL("value"), IMP(cf_dispose_value), "q@:") == SF_OK);
    CHECK(sf_class_addMethod(holder, SEL("dealloc"), IMP(cf_dispose_dealloc), "v@:") == SF_OK);
    sf_registerClassPair(holder);
    snprintf(n, sizeof n, "%s.Child", name);
    sf_class_t child = sf_allocateClassPair(NULL, n);
    CHECK(child);
    sf_registerClassPair(child);

    // Three references, a strong ivar, a weak ivar, an association, a weak reference and an
    // observer: disposal runs the observer, releases what it holds, clears what points at it.
    sf_id obj = sf_class_createInstance(holder);
    sf_retain(obj);
    sf_retain(obj);
    CHECK(sf_object_retainCount(obj) == 3);
    sf_id strong = sf_class_createInstance(child), weakTarget = sf_class_createInstance(child);
    sf_id associated = sf_class_createInstance(child);
    int strongGone = 0, weakTargetGone = 0, associatedGone = 0, observed = 0;
    CHECK(sf_object_addDeallocObserver(strong, cf_dispose_observer, &strongGone));
    CHECK(sf_object_addDeallocObserver(weakTarget, cf_dispose_observer, &weakTargetGone));
    CHECK(sf_object_addDeallocObserver(associated, cf_dispose_observer, &associatedGone));
    CHECK(sf_object_addDeallocObserver(obj, cf_dispose_observer, &observed));
    *(sf_id *)sf_object_getIvarPointer(obj, sf_class_getIvarOffset(holder, "child")) = strong;  // the ivar's +1
    CHECK(sf_storeWeak(sf_object_getIvarPointer(obj, sf_class_getIvarOffset(holder, "weakChild")), weakTarget) == weakTarget);
    sf_setAssociatedObject(obj, &cf_dispose_key, associated);
    sf_release(associated);
    sf_id weakRef = NULL;
    sf_initWeak(&weakRef, obj);

    cf_dispose_deallocs = 0;
    CHECK(sf_object_dispose(obj) == SF_OK);
    CHECK(sf_last_error() == SF_OK);
    CHECK(observed == 1);
    CHECK(strongGone == 1 && associatedGone == 1);
    CHECK(weakTargetGone == 0);
    CHECK(cf_dispose_deallocs == 0);  // no dealloc message, as objc4's object_dispose
    CHECK(sf_loadWeakRetained(&weakRef) == NULL);
    sf_destroyWeak(&weakRef);
    // The weak ivar let go of its slot: the target's death touches no freed memory.
    sf_release(weakTarget);
    CHECK(weakTargetGone == 1);

    // An object with hooks of its own (a private subclass) is disposed the same way, and the
    // class can go afterwards: the instance count came back down.
    sf_id hooked = sf_class_createInstance(holder);
    CHECK(sf_object_hookMethod(hooked, SEL("value"), SF_HOOK_BEFORE, NULL, cf_dispose_hook, NULL));
    CHECK(sf_object_dispose(hooked) == SF_OK);

    // Refusals: NULL, class objects, an object whose teardown has begun.
    CHECK(sf_object_dispose(NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_object_dispose((sf_id)holder) == SF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(sf_last_error_message(), "class object"));
    snprintf(n, sizeof n, "%s.Holder", name);
    CHECK(sf_object_dispose((sf_id)sf_getMetaClass(n)) == SF_ERR_INVALID_ARGUMENT);
    sf_id twice = sf_class_createInstance(child);
    CHECK(sf_object_addDeallocObserver(twice, cf_dispose_again, NULL));
    cf_dispose_inner = SF_OK;
    CHECK(sf_object_dispose(twice) == SF_OK);
    CHECK(cf_dispose_inner == SF_ERR_INVALID_ARGUMENT);
    sf_id released = sf_class_createInstance(child);
    CHECK(sf_object_addDeallocObserver(released, cf_dispose_again, NULL));
    cf_dispose_inner = SF_OK;
    sf_release(released);
    CHECK(cf_dispose_inner == SF_ERR_INVALID_ARGUMENT);

    CHECK(sf_disposeClassPair(holder) == SF_OK);
    CHECK(sf_disposeClassPair(child) == SF_OK);
    return 0;
}
