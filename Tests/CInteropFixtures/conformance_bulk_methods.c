// Bulk method installation from C: objc4 test/addMethods.mm re-expressed. Names that exist are
// reported and left alone by an add, inherited ones are overridden, a replace adds or replaces
// whatever the class and its superclass have, and a long list full of duplicates adds once.
#include "CInteropFixtures.h"

#include <stdint.h>
#include <string.h>

#include "conformance_check.h"

#define CF_FN(k) static int64_t cf_bulk_fn##k(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return 100 + k; }
CF_FN(0) CF_FN(1) CF_FN(2) CF_FN(3) CF_FN(4) CF_FN(5) CF_FN(6) CF_FN(7) CF_FN(8) CF_FN(9)
static int64_t cf_bulk_old(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return -1; }

static const sf_imp cf_fns[10] = {
    IMP(cf_bulk_fn0), IMP(cf_bulk_fn1), IMP(cf_bulk_fn2), IMP(cf_bulk_fn3), IMP(cf_bulk_fn4),
    IMP(cf_bulk_fn5), IMP(cf_bulk_fn6), IMP(cf_bulk_fn7), IMP(cf_bulk_fn8), IMP(cf_bulk_fn9),
};

// names[at..at+10) = stem0..stem9
static void cf_sels(sf_sel *names, int at, const char *stem) {
    char n[64];
    for (int i = 0; i < 10; i++) {
        snprintf(n, sizeof n, "%s%d", stem, i);
        names[at + i] = SEL(n);
    }
}

static int cf_add_old(sf_class_t cls, const char *stem) {
    sf_sel names[10];
    cf_sels(names, 0, stem);
    for (int i = 0; i < 10; i++) CHECK(sf_class_addMethod(cls, names[i], IMP(cf_bulk_old), "q@:") == SF_OK);
    return 0;
}

static sf_class_t cf_class(const char *name, const char *suffix, sf_class_t super) {
    char n[256];
    snprintf(n, sizeof n, "%s.%s", name, suffix);
    sf_class_t cls = sf_allocateClassPair(super, n);
    if (cls) sf_registerClassPair(cls);
    return cls;
}

static int64_t cf_send(sf_id obj, sf_sel sel) {
    int64_t out = 0;
    if (sf_msg_send(obj, sel, &out, NULL) != SF_OK) return INT64_MIN;
    return out;
}

// objc4's testBulkMemoryOnce: all added, one of two, none of five, then a replace of ten.
static int cf_bulk_once(const char *name, int round) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, "Once%d", round);
    sf_class_t c = cf_class(name, suffix, NULL);
    CHECK(c);
    sf_sel names[10];
    sf_imp imps[10];
    const char *types[10];
    cf_sels(names, 0, "method");
    for (int i = 0; i < 10; i++) imps[i] = cf_fns[i], types[i] = "q@:";
    sf_sel failed[10];
    uint32_t failures = 99;
    CHECK(sf_class_addMethodsBulk(c, names, imps, types, 4, failed, &failures) == SF_OK);
    CHECK(failures == 0);
    CHECK(sf_class_addMethodsBulk(c, names + 3, imps + 3, types + 3, 2, failed, &failures) == SF_ERR_METHOD_EXISTS);
    CHECK(failures == 1 && failed[0] == names[3]);
    CHECK(sf_class_addMethodsBulk(c, names, imps, types, 5, failed, &failures) == SF_ERR_METHOD_EXISTS);
    CHECK(failures == 5);
    for (int i = 0; i < 5; i++) CHECK(failed[i] == names[i]);
    CHECK(sf_class_replaceMethodsBulk(c, names, imps, types, 10) == SF_OK);
    for (int i = 0; i < 10; i++) CHECK(sf_class_getMethodImplementation(c, names[i]) == imps[i]);
    CHECK(sf_disposeClassPair(c) == SF_OK);
    return 0;
}

int cf_scenario_bulk_methods(const char *name) {
    sf_class_t super = cf_class(name, "Super", NULL);
    CHECK(super);
    if (cf_add_old(super, "superMethod") || cf_add_old(super, "bothMethod")) return __LINE__;
    sf_class_t sub = cf_class(name, "Sub", super), sub2 = cf_class(name, "Sub2", super);
    CHECK(sub && sub2);
    if (cf_add_old(sub, "subMethod") || cf_add_old(sub, "bothMethod")) return __LINE__;
    if (cf_add_old(sub2, "subMethod") || cf_add_old(sub2, "bothMethod")) return __LINE__;

    sf_imp imps[130], imps2[130];
    const char *types[130];
    for (int i = 0; i < 130; i++) {
        imps[i] = cf_fns[i % 10];
        imps2[i] = cf_fns[(i + 5) % 10];  // a different function in every slot
        types[i] = "q@:";
    }
    sf_sel failed[130];
    uint32_t failures = 0;

    // The ten that exist are reported, in order, and keep their IMPs; the ten new ones are added.
    sf_sel add[20];
    cf_sels(add, 0, "superMethod");
    cf_sels(add, 10, "superMethodAddNew");
    CHECK(sf_class_addMethodsBulk(super, add, imps, types, 20, failed, &failures) == SF_ERR_METHOD_EXISTS);
    CHECK(strstr(sf_last_error_message(), "10 of 20"));
    CHECK(failures == 10);
    for (int i = 0; i < 10; i++) {
        CHECK(failed[i] == add[i]);
        CHECK(sf_class_getMethodImplementation(super, add[i]) == IMP(cf_bulk_old));
    }
    for (int i = 10; i < 20; i++) CHECK(sf_class_getMethodImplementation(super, add[i]) == imps[i]);

    // An inherited method is overridden: the subclass does not have it itself. A send cached
    // before the add sees the override (one flush for the list).
    sf_id s = sf_class_createInstance(sub);
    CHECK(cf_send(s, add[0]) == -1);
    CHECK(sf_class_addMethodsBulk(sub, add, imps, types, 10, NULL, &failures) == SF_OK);
    CHECK(failures == 0);
    for (int i = 0; i < 10; i++) CHECK(sf_class_getMethodImplementation(sub, add[i]) == imps[i]);
    CHECK(cf_send(s, add[0]) == 100 && cf_send(s, add[9]) == 109);
    sf_release(s);

    // Replace adds or replaces, whether the superclass, the class, both or neither have it.
    sf_sel replace[40];
    cf_sels(replace, 0, "superMethod");
    cf_sels(replace, 10, "subMethodNew");
    cf_sels(replace, 20, "subMethod");
    cf_sels(replace, 30, "bothMethod");
    CHECK(sf_class_replaceMethodsBulk(sub2, replace, imps, types, 40) == SF_OK);
    for (int i = 0; i < 40; i++) CHECK(sf_class_getMethodImplementation(sub2, replace[i]) == imps[i]);
    sf_sel superReplace[20];
    cf_sels(superReplace, 0, "superMethod");
    cf_sels(superReplace, 10, "superMethodNew");
    CHECK(sf_class_replaceMethodsBulk(super, superReplace, imps, types, 20) == SF_OK);
    for (int i = 0; i < 20; i++) CHECK(sf_class_getMethodImplementation(super, superReplace[i]) == imps[i]);

    // A long add, almost all of it present already and full of duplicates: one is added.
    sf_sel mostly[130];
    for (int k = 0; k < 4; k++) {
        cf_sels(mostly, 30 * k, "superMethod");
        cf_sels(mostly, 30 * k + 10, "subMethodNew");
        cf_sels(mostly, 30 * k + 20, "subMethod");
    }
    cf_sels(mostly, 120, "bothMethod");
    mostly[16] = SEL("indexSixteenIsDifferent");
    CHECK(sf_class_addMethodsBulk(sub2, mostly, imps2, types, 130, failed, &failures) == SF_ERR_METHOD_EXISTS);
    CHECK(failures == 129);
    for (int i = 0; i < 130; i++) {
        sf_imp now = sf_class_getMethodImplementation(sub2, mostly[i]);
        CHECK(i == 16 ? now == imps2[i] : now == imps[i]);
    }
    for (uint32_t i = 0; i < failures; i++) CHECK(failed[i] && failed[i] != mostly[16]);
    // A name twice in one add: the first is added, the second reported.
    sf_sel twice[2] = {SEL("cfAddedTwice"), SEL("cfAddedTwice")};
    CHECK(sf_class_addMethodsBulk(sub2, twice, imps + 1, types, 2, failed, &failures) == SF_ERR_METHOD_EXISTS);
    CHECK(failures == 1 && failed[0] == twice[0]);
    CHECK(sf_class_getMethodImplementation(sub2, twice[0]) == imps[1]);
    // ... and in one replace, the later wins.
    CHECK(sf_class_replaceMethodsBulk(sub2, twice, imps + 3, types, 2) == SF_OK);
    CHECK(sf_class_getMethodImplementation(sub2, twice[0]) == imps[4]);

    // The methods run: "fixme actually try calling them".
    sf_id t = sf_class_createInstance(sub2);
    for (int i = 0; i < 40; i++) CHECK(cf_send(t, replace[i]) == 100 + i % 10);
    CHECK(cf_send(t, mostly[16]) == 100 + (16 + 5) % 10);
    sf_release(t);

    // Refusals check every entry first: nothing of the list is installed.
    sf_sel fresh[3] = {SEL("cfBulkFreshA"), SEL("cfBulkFreshB"), SEL("cfBulkFreshC")};
    const char *badTypes[3] = {"q@:", "q@:{", "q@:"};
    sf_imp withNull[3] = {imps[0], NULL, imps[2]};
    CHECK(sf_class_addMethodsBulk(sub, fresh, imps, badTypes, 3, failed, &failures) == SF_ERR_BAD_ENCODING);
    CHECK(sf_class_addMethodsBulk(sub, fresh, withNull, types, 3, failed, &failures) == SF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(sf_last_error_message(), "index 1"));
    CHECK(sf_class_replaceMethodsBulk(sub, fresh, withNull, types, 3) == SF_ERR_INVALID_ARGUMENT);
    const char *otherTypes[2] = {"q@:", "v@:q"};
    sf_sel mixed[2] = {fresh[0], replace[0]};  // replace[0] exists on sub2 as q@:
    CHECK(sf_class_replaceMethodsBulk(sub2, mixed, imps, otherTypes, 2) == SF_ERR_SIGNATURE_MISMATCH);
    CHECK(sf_class_getMethodImplementation(sub2, replace[0]) == imps[0]);
    sf_sel reserved[2] = {fresh[0], SEL(".cxx_destruct")};
    CHECK(sf_class_addMethodsBulk(sub, reserved, imps, types, 2, failed, &failures) == SF_ERR_RESERVED_SELECTOR);
    for (int i = 0; i < 3; i++) {
        CHECK(!sf_class_respondsToSelector(sub, fresh[i]));
        CHECK(!sf_class_respondsToSelector(sub2, fresh[i]));
    }
    CHECK(sf_class_addMethodsBulk(NULL, fresh, imps, types, 3, failed, &failures) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_addMethodsBulk(sub, NULL, imps, types, 3, failed, &failures) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_replaceMethodsBulk(sub, fresh, imps, NULL, 3) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_replaceMethodsBulk(NULL, NULL, NULL, NULL, 0) == SF_ERR_INVALID_ARGUMENT);
    // Nothing to do is no error, arrays or not.
    failures = 7;
    CHECK(sf_class_addMethodsBulk(sub, NULL, NULL, NULL, 0, NULL, &failures) == SF_OK && failures == 0);
    CHECK(sf_class_replaceMethodsBulk(sub, NULL, NULL, NULL, 0) == SF_OK);

    for (int round = 0; round < 3; round++) {
        int line = cf_bulk_once(name, round);
        if (line) return line;
    }
    CHECK(sf_disposeClassPair(sub) == SF_OK);
    CHECK(sf_disposeClassPair(sub2) == SF_OK);
    CHECK(sf_disposeClassPair(super) == SF_OK);
    return 0;
}
