// Objective-C runtime conformance scenarios (see ConformanceFixtures.h), through the public
// header only.
#include "CInteropFixtures.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "conformance_check.h"

char cf_failure_text[1024];

const char *cf_failure(void) { return cf_failure_text; }

size_t cf_heap_in_use(void) {
    size_t (*asan)(void) = (size_t (*)(void))dlsym(RTLD_DEFAULT, "__sanitizer_get_current_allocated_bytes");
    if (asan) return asan();
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

// libobjc2 Test/IVarOverlap and objc4 test/ivar*: an ivar asked to be aligned lands aligned,
// in the class and in every instance's memory.
typedef struct { double a, b, c, d; } cf_vec4;  // 32 bytes, naturally 8-aligned
typedef struct { double a, b; } cf_vec2;        // 16 bytes, naturally 8-aligned

int cf_scenario_ivar_alignment(const char *name) {
    char n1[256], n2[256], n3[256];
    snprintf(n1, sizeof n1, "%s.Vec4", name);
    snprintf(n2, sizeof n2, "%s.Vec2", name);
    snprintf(n3, sizeof n3, "%s.Sub", name);

    sf_class_t a = sf_allocateClassPair(NULL, n1);
    CHECK(a);
    CHECK(sf_class_addIvar(a, "first", sizeof(sf_id), 3, "@"));
    CHECK(sf_class_addIvar(a, "second", sizeof(sf_id), 3, "@"));
    CHECK(sf_class_addIvar(a, "vec", sizeof(cf_vec4), 5, "{cf_vec4=dddd}"));
    sf_registerClassPair(a);
    ptrdiff_t off = sf_class_getIvarOffset(a, "vec");
    CHECK(off > 0 && off % 32 == 0);
    CHECK(sf_class_getInstanceSize(a) >= (size_t)off + sizeof(cf_vec4));

    sf_class_t b = sf_allocateClassPair(NULL, n2);
    CHECK(b);
    CHECK(sf_class_addIvar(b, "count", sizeof(int), 2, "i"));
    CHECK(sf_class_addIvar(b, "vec", sizeof(cf_vec2), 4, "{cf_vec2=dd}"));
    sf_registerClassPair(b);
    CHECK(sf_class_getIvarOffset(b, "vec") % 16 == 0);

    // A subclass inherits the allocation alignment and aligns its own ivar after the others.
    sf_class_t sub = sf_allocateClassPair(a, n3);
    CHECK(sub);
    CHECK(sf_class_addIvar(sub, "flag", 1, 0, "c"));
    CHECK(sf_class_addIvar(sub, "more", sizeof(cf_vec4), 6, "{cf_vec4=dddd}"));
    sf_registerClassPair(sub);
    CHECK(sf_class_getIvarOffset(sub, "more") % 64 == 0);

    // Every instance: the address of the ivar is aligned, not only its offset.
    sf_id objs[64];
    for (int i = 0; i < 64; i++) {
        sf_class_t c = i % 3 == 0 ? a : i % 3 == 1 ? b : sub;
        objs[i] = sf_class_createInstance(c);
        CHECK(objs[i]);
        uintptr_t p = (uintptr_t)sf_object_getIvarPointer(objs[i], sf_class_getIvarOffset(c, c == sub ? "more" : "vec"));
        CHECK(p % (c == a ? 32 : c == b ? 16 : 64) == 0);
        // An aligned vector store (movaps/vmovaps) there must not fault.
        memset((void *)p, 0x5A, c == b ? sizeof(cf_vec2) : sizeof(cf_vec4));
    }
    for (int i = 0; i < 64; i++) sf_release(objs[i]);

    // Out of range: refused with an error, nothing added.
    sf_class_t bad = sf_allocateClassPair(NULL, name);
    CHECK(bad);
    CHECK(!sf_class_addIvar(bad, "huge", 8, 40, "q"));
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_getIvarOffset(bad, "huge") == -1);
    CHECK(sf_disposeClassPair(bad) == SF_OK);

    CHECK(sf_disposeClassPair(sub) == SF_OK);
    CHECK(sf_disposeClassPair(a) == SF_OK);
    CHECK(sf_disposeClassPair(b) == SF_OK);
    return 0;
}
