// Weak references from C: objc_storeWeak re-pointing in place, an object storing itself from
// its dealloc (objc4 test/arr-weak.m), copied and moved weak fields of a struct (objc4
// test/weakcopy.m), weak ivars zeroed and their layouts (class_getIvarLayout), re-expressed.
#include "CInteropFixtures.h"

#include <stdint.h>
#include <string.h>

#include "conformance_check.h"

// A struct with a weak field, copied and moved as ARC copies and moves it.
typedef struct cf_weak_holder {
    int64_t tag;
    sf_id weak;
} cf_weak_holder;

static sf_id cf_self_store_result = (sf_id)1;
static void cf_store_self(sf_id obj, void *context) {
    cf_self_store_result = sf_storeWeak((sf_id *)context, obj);
}

static int cf_has_word(const uint8_t *layout, unsigned word) {
    unsigned index = 0;
    for (; layout && *layout; layout++) {
        index += *layout >> 4;
        unsigned scans = *layout & 0x0F;
        if (word >= index && word < index + scans) return 1;
        index += scans;
    }
    return 0;
}

int cf_scenario_weak(const char *name) {
    char n[256];
    snprintf(n, sizeof n, "%s.Target", name);
    sf_class_t cls = sf_allocateClassPair(NULL, n);
    CHECK(cls);
    sf_registerClassPair(cls);

    // Re-pointed in place: the first object's death leaves the slot alone.
    sf_id a = sf_class_createInstance(cls), b = sf_class_createInstance(cls);
    sf_id slot = NULL;
    CHECK(sf_storeWeak(&slot, a) == a);
    CHECK(sf_storeWeak(&slot, b) == b);
    sf_release(a);
    sf_id loaded = sf_loadWeakRetained(&slot);
    CHECK(loaded == b);
    sf_release(loaded);

    // weakcopy.m: a copied struct's weak field refers to the same object; a move leaves NULL.
    cf_weak_holder h1 = {.tag = 1}, h2, h3;
    sf_initWeak(&h1.weak, b);
    h2.tag = h1.tag;
    sf_copyWeak(&h2.weak, &h1.weak);
    h3.tag = h2.tag;
    sf_moveWeak(&h3.weak, &h2.weak);
    CHECK(h2.weak == NULL);
    loaded = sf_loadWeakRetained(&h3.weak);
    CHECK(loaded == b && h3.tag == 1);
    sf_release(loaded);

    // arr-weak.m: storing an object from its own dealloc stores NULL.
    sf_id from_dealloc = NULL;
    CHECK(sf_object_addDeallocObserver(b, cf_store_self, &from_dealloc) != 0);
    sf_release(b);
    CHECK(cf_self_store_result == NULL && from_dealloc == NULL);
    CHECK(sf_loadWeakRetained(&slot) == NULL);
    CHECK(sf_loadWeakRetained(&h1.weak) == NULL && sf_loadWeakRetained(&h3.weak) == NULL);
    sf_destroyWeak(&slot);
    sf_destroyWeak(&h1.weak);
    sf_destroyWeak(&h3.weak);

    // Weak ivars: zeroed with their object, unregistered with their owner; layouts.
    snprintf(n, sizeof n, "%s.Owner", name);
    sf_class_t owner = sf_allocateClassPair(NULL, n);
    CHECK(sf_class_addIvar(owner, "strong", 8, 3, "@"));
    CHECK(sf_class_addIvar(owner, "count", 8, 3, "q"));
    CHECK(sf_class_addWeakIvar(owner, "delegate"));
    CHECK(!sf_class_addWeakIvar(owner, "delegate") && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(sf_last_error_message(), "delegate") != NULL);
    CHECK(!sf_class_addWeakIvar(NULL, "x") && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    sf_registerClassPair(owner);
    CHECK(!sf_class_addWeakIvar(owner, "late") && sf_last_error() == SF_ERR_CLASS_REGISTERED);

    ptrdiff_t strong_at = sf_class_getIvarOffset(owner, "strong");
    ptrdiff_t weak_at = sf_class_getIvarOffset(owner, "delegate");
    const uint8_t *strong_layout = sf_class_getIvarLayout(owner);
    const uint8_t *weak_layout = sf_class_getWeakIvarLayout(owner);
    CHECK(strong_layout && weak_layout);
    CHECK(cf_has_word(strong_layout, (unsigned)(strong_at / 8)) && !cf_has_word(strong_layout, (unsigned)(weak_at / 8)));
    CHECK(cf_has_word(weak_layout, (unsigned)(weak_at / 8)) && !cf_has_word(weak_layout, (unsigned)(strong_at / 8)));
    CHECK(!cf_has_word(strong_layout, 0) && !cf_has_word(strong_layout, (unsigned)(sf_class_getIvarOffset(owner, "count") / 8)));
    CHECK(sf_class_getWeakIvarLayout(cls) == NULL && sf_last_error() == SF_OK);

    sf_id o = sf_class_createInstance(owner);
    sf_id d = sf_class_createInstance(cls);
    sf_id *ivar = sf_object_getIvarPointer(o, weak_at);
    CHECK(*ivar == NULL && sf_loadWeakRetained(ivar) == NULL);
    CHECK(sf_storeWeak(ivar, d) == d);
    CHECK(sf_object_retainCount(d) == 1);
    sf_release(d);
    CHECK(*ivar == NULL);
    d = sf_class_createInstance(cls);
    CHECK(sf_storeWeak(ivar, d) == d);
    sf_release(o);  // the owner first: its slot leaves the table
    sf_release(d);  // and d's deallocation writes into no freed memory

    CHECK(sf_storeWeak(NULL, NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_getIvarLayout(NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_disposeClassPair(owner) == SF_OK);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}
