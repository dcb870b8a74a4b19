// +initialize and an overridden dealloc from C (objc4 test/initialize.m, GNUstep's +initialize
// race test, objc4's dealloc chains), through the public header only.
#include "CInteropFixtures.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "conformance_check.h"

static char init_log[8][128];
static int init_count;
static sf_class_t init_self;

static void cf_initialize(sf_id self, sf_sel cmd) {
    (void)cmd;
    sf_class_t cls = (sf_class_t)self;
    if (init_count < 8) snprintf(init_log[init_count], sizeof init_log[0], "%s", sf_class_getName(cls));
    init_count++;
    // A send to the class being initialized, on this thread: served without waiting.
    init_self = cls;
}

static int64_t cf_seven(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return 7; }

int cf_scenario_initialize(const char *name) {
    char n[256];
    init_count = 0;
    snprintf(n, sizeof n, "%s.Base", name);
    sf_class_t base = sf_allocateClassPair(NULL, n);
    sf_registerClassPair(base);
    snprintf(n, sizeof n, "%s.Sub", name);
    sf_class_t sub = sf_allocateClassPair(base, n);
    sf_registerClassPair(sub);
    sf_class_t base_meta = sf_getMetaClass(sf_class_getName(base));
    CHECK(sf_class_addMethod(base_meta, SEL("initialize"), IMP(cf_initialize), "v@:") == SF_OK);
    CHECK(sf_class_addMethod(sub, SEL("cfSeven"), IMP(cf_seven), "q@:") == SF_OK);
    CHECK(init_count == 0);
    // Creating an instance is the first message (+alloc's part): superclass first, then the
    // subclass, which has none of its own and runs its superclass's with itself as receiver.
    sf_id o = sf_class_createInstance(sub);
    CHECK(o);
    CHECK(init_count == 2);
    CHECK(strcmp(init_log[0], sf_class_getName(base)) == 0);
    CHECK(strcmp(init_log[1], sf_class_getName(sub)) == 0);
    CHECK(init_self == sub);
    CHECK(((int64_t (*)(sf_id, sf_sel))sf_msg_lookup(o, SEL("cfSeven")))(o, SEL("cfSeven")) == 7);
    int64_t r = 0;
    CHECK(sf_msg_send(o, SEL("cfSeven"), &r, NULL) == SF_OK && r == 7);
    CHECK(init_count == 2);
    sf_release(o);
    return 0;
}

// ---- the race: one thread runs +initialize, the others wait for it ----

static atomic_int race_runs, race_done, race_early, race_ready;

static void cf_race_initialize(sf_id self, sf_sel cmd) {
    (void)self, (void)cmd;
    atomic_fetch_add(&race_runs, 1);
    for (int i = 0; i < 200; i++) sched_yield();
    atomic_store(&race_done, 1);
}

static int64_t cf_race_value(sf_id self, sf_sel cmd) {
    (void)self, (void)cmd;
    if (!atomic_load(&race_done)) atomic_fetch_add(&race_early, 1);
    return 5;
}

#define RACE_THREADS 8
static void *race_thread(void *arg) {
    sf_class_t cls = arg;
    atomic_fetch_add(&race_ready, 1);
    while (atomic_load(&race_ready) < RACE_THREADS) sched_yield();
    sf_id cobj = (sf_id)cls;
    int64_t r = 0;
    sf_msg_send(cobj, SEL("cfRaceValue"), &r, NULL);
    return (void *)(intptr_t)(r == 5);
}

int cf_scenario_initialize_race(const char *name) {
    for (int round = 0; round < 10; round++) {
        char n[256];
        snprintf(n, sizeof n, "%s.R%d", name, round);
        sf_class_t cls = sf_allocateClassPair(NULL, n);
        sf_registerClassPair(cls);
        sf_class_t meta = sf_getMetaClass(sf_class_getName(cls));
        CHECK(sf_class_addMethod(meta, SEL("initialize"), IMP(cf_race_initialize), "v@:") == SF_OK);
        CHECK(sf_class_addMethod(meta, SEL("cfRaceValue"), IMP(cf_race_value), "q@:") == SF_OK);
        atomic_store(&race_runs, 0);
        atomic_store(&race_done, 0);
        atomic_store(&race_early, 0);
        atomic_store(&race_ready, 0);
        pthread_t t[RACE_THREADS];
        for (int i = 0; i < RACE_THREADS; i++) CHECK(pthread_create(&t[i], NULL, race_thread, cls) == 0);
        int ok = 0;
        for (int i = 0; i < RACE_THREADS; i++) {
            void *res;
            pthread_join(t[i], &res);
            ok += (int)(intptr_t)res;
        }
        CHECK(ok == RACE_THREADS);
        CHECK(atomic_load(&race_runs) == 1);
        CHECK(atomic_load(&race_early) == 0);
    }
    return 0;
}

// ---- dealloc ----

static char dealloc_log[256];
static sf_class_t dealloc_sub, dealloc_root;
static int owned_gone;

static void cf_owned_gone(sf_id obj, void *context) { (void)obj, (void)context; owned_gone++; }

static void cf_sub_dealloc(sf_id self, sf_sel cmd) {
    strcat(dealloc_log, "sub ");
    // Releases what it owns, then [super dealloc].
    sf_id *owned = sf_object_getIvarPointer(self, sf_class_getIvarOffset(dealloc_sub, "owned"));
    sf_release(*owned);
    *owned = NULL;
    ((void (*)(sf_id, sf_sel))sf_msg_lookup_super(sf_class_getSuperclass(dealloc_sub), cmd))(self, cmd);
}

static void cf_root_dealloc(sf_id self, sf_sel cmd) {
    strcat(dealloc_log, "root ");
    // From a root class, super is the runtime's root dealloc.
    sf_imp super_imp = sf_msg_lookup_super(sf_class_getSuperclass(dealloc_root), cmd);
    if (super_imp) ((void (*)(sf_id, sf_sel))super_imp)(self, cmd);
}

static int64_t cf_bad_dealloc(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return 0; }

int cf_scenario_dealloc(const char *name) {
    char n[256];
    dealloc_log[0] = 0;
    owned_gone = 0;
    snprintf(n, sizeof n, "%s.Root", name);
    dealloc_root = sf_allocateClassPair(NULL, n);
    sf_registerClassPair(dealloc_root);
    snprintf(n, sizeof n, "%s.Sub", name);
    dealloc_sub = sf_allocateClassPair(dealloc_root, n);
    CHECK(sf_class_addIvar(dealloc_sub, "owned", sizeof(void *), 3, "^v"));
    sf_registerClassPair(dealloc_sub);
    CHECK(sf_class_addMethod(dealloc_root, SEL("dealloc"), IMP(cf_root_dealloc), "v@:") == SF_OK);
    CHECK(sf_class_addMethod(dealloc_sub, SEL("dealloc"), IMP(cf_sub_dealloc), "v@:") == SF_OK);
    // The wrong shape is refused, naming class and selector.
    CHECK(sf_class_addMethod(dealloc_sub, SEL("dealloc"), IMP(cf_bad_dealloc), "q@:") == SF_ERR_SIGNATURE_MISMATCH);
    snprintf(n, sizeof n, "%s.Other", name);
    sf_class_t other = sf_allocateClassPair(NULL, n);
    sf_registerClassPair(other);
    CHECK(sf_class_addMethod(other, SEL("dealloc"), IMP(cf_bad_dealloc), "q@:") == SF_ERR_SIGNATURE_MISMATCH);
    CHECK(strstr(sf_last_error_message(), sf_class_getName(other)) && strstr(sf_last_error_message(), "dealloc"));

    snprintf(n, sizeof n, "%s.Owned", name);
    sf_class_t owned_cls = sf_allocateClassPair(NULL, n);
    sf_registerClassPair(owned_cls);
    sf_id owned = sf_class_createInstance(owned_cls);
    CHECK(sf_object_addDeallocObserver(owned, cf_owned_gone, NULL));
    sf_id o = sf_class_createInstance(dealloc_sub);
    *(sf_id *)sf_object_getIvarPointer(o, sf_class_getIvarOffset(dealloc_sub, "owned")) = owned;
    sf_release(o);
    CHECK(strcmp(dealloc_log, "sub root ") == 0);
    CHECK(owned_gone == 1);
    return 0;
}
