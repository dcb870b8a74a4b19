// Ivar handles from C: objc4 test/ivar.m re-expressed (a char ivar in a superclass, an object
// ivar in a subclass, lookups through the chain and refusals), plus weak ivars and
// sf_class_copyIvarList agreeing with the handles.
#include "CInteropFixtures.h"

#include <stdint.h>
#include <string.h>

#include "conformance_check.h"

int cf_scenario_ivars(const char *name) {
    char n[256];
    snprintf(n, sizeof n, "%s.Super", name);
    sf_class_t super = sf_allocateClassPair(NULL, n);
    CHECK(super);
    CHECK(sf_class_addIvar(super, "superIvar", 1, 0, "c"));
    sf_registerClassPair(super);
    snprintf(n, sizeof n, "%s.Sub", name);
    sf_class_t sub = sf_allocateClassPair(super, n);
    CHECK(sub);
    CHECK(sf_class_addIvar(sub, "subIvar", sizeof(sf_id), 3, "@"));
    CHECK(sf_class_addWeakIvar(sub, "weakIvar"));
    // Handles exist before registration: the offsets of ivars already added never move.
    sf_ivar_t early = sf_class_getInstanceVariable(sub, "subIvar");
    CHECK(early);
    sf_registerClassPair(sub);

    sf_ivar_t ivar = sf_class_getInstanceVariable(sub, "subIvar");
    CHECK(ivar == early);
    CHECK(sf_last_error() == SF_OK);
    CHECK(strcmp(sf_ivar_getName(ivar), "subIvar") == 0);
    CHECK(strcmp(sf_ivar_getTypeEncoding(ivar), "@") == 0);
    CHECK(sf_ivar_getOffset(ivar) == sf_class_getIvarOffset(sub, "subIvar"));
    CHECK(sf_ivar_getOffset(ivar) % (ptrdiff_t)sizeof(sf_id) == 0);

    sf_ivar_t superIvar = sf_class_getInstanceVariable(super, "superIvar");
    CHECK(superIvar);
    CHECK(strcmp(sf_ivar_getName(superIvar), "superIvar") == 0);
    CHECK(strcmp(sf_ivar_getTypeEncoding(superIvar), "c") == 0);
    CHECK(sf_ivar_getOffset(superIvar) < sf_ivar_getOffset(ivar));
    // Found through the subclass, it is the superclass's own handle.
    CHECK(sf_class_getInstanceVariable(sub, "superIvar") == superIvar);

    sf_ivar_t weak = sf_class_getInstanceVariable(sub, "weakIvar");
    CHECK(weak && strcmp(sf_ivar_getTypeEncoding(weak), "@") == 0);
    CHECK(sf_ivar_getOffset(weak) == sf_class_getIvarOffset(sub, "weakIvar"));

    // What the chain does not have: NULL and a message naming the class and the ivar.
    CHECK(sf_class_getInstanceVariable(super, "subIvar") == NULL);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(sf_last_error_message(), "subIvar") && strstr(sf_last_error_message(), ".Super"));
    snprintf(n, sizeof n, "%s.Sub", name);
    CHECK(sf_class_getInstanceVariable(sf_getMetaClass(n), "subIvar") == NULL);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_getInstanceVariable(NULL, "foo") == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_getInstanceVariable(sub, NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_getInstanceVariable(NULL, NULL) == NULL);
    CHECK(sf_ivar_getName(NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_ivar_getTypeEncoding(NULL) == NULL);
    CHECK(sf_ivar_getOffset(NULL) == -1 && sf_last_error() == SF_ERR_INVALID_ARGUMENT);

    // The offset addresses the instance's storage: a class object stored there reads back
    // (class objects are not counted, so the strong ivar's release at dealloc is inert).
    sf_id obj = sf_class_createInstance(sub);
    CHECK(obj);
    sf_id *slot = sf_object_getIvarPointer(obj, sf_ivar_getOffset(ivar));
    *slot = (sf_id)sub;
    CHECK(((sf_id *)(void *)obj)[sf_ivar_getOffset(ivar) / (ptrdiff_t)sizeof(sf_id)] == (sf_id)sub);
    char *c = sf_object_getIvarPointer(obj, sf_ivar_getOffset(superIvar));
    *c = 'x';
    CHECK(((char *)(void *)obj)[sf_ivar_getOffset(superIvar)] == 'x');
    // The weak ivar, through its handle's offset, zeroes when its object goes.
    sf_id target = sf_class_createInstance(super);
    sf_id *weakSlot = sf_object_getIvarPointer(obj, sf_ivar_getOffset(weak));
    CHECK(sf_storeWeak(weakSlot, target) == target);
    sf_release(target);
    CHECK(sf_loadWeakRetained(weakSlot) == NULL);
    sf_release(obj);

    // sf_class_copyIvarList lists the class's own ivars as the handles describe them.
    unsigned int count = 0;
    sf_ivar_description *list = sf_class_copyIvarList(sub, &count);
    CHECK(list && count == 2);
    for (unsigned int i = 0; i < count; i++) {
        sf_ivar_t h = sf_class_getInstanceVariable(sub, list[i].name);
        CHECK(h && strcmp(sf_ivar_getName(h), list[i].name) == 0);
        CHECK(strcmp(sf_ivar_getTypeEncoding(h), list[i].types) == 0);
        CHECK(sf_ivar_getOffset(h) == list[i].offset);
    }
    sf_free(list);

    CHECK(sf_disposeClassPair(sub) == SF_OK);
    // The superclass's handle outlives its subclass.
    CHECK(strcmp(sf_ivar_getName(superIvar), "superIvar") == 0);
    CHECK(sf_disposeClassPair(super) == SF_OK);
    return 0;
}
