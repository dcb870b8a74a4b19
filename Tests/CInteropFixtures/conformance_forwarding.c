// The resolver's caching and the forwarding IMP, from C.
#include "CInteropFixtures.h"

#include <stdint.h>
#include <string.h>

#include "conformance_check.h"

static int resolver_calls;

static bool declining_resolver(sf_id cls, sf_sel cmd, sf_sel sel) {
    (void)cls; (void)cmd; (void)sel;
    resolver_calls++;
    return false;
}

static long add(sf_id self, sf_sel cmd, long a, long b) { (void)self; (void)cmd; return a + b; }
static long twice(sf_id self, sf_sel cmd, long a) { (void)self; (void)cmd; return 2 * a; }

static bool adding_resolver(sf_id cls, sf_sel cmd, sf_sel sel) {
    (void)cmd;
    resolver_calls++;
    if (strcmp(sf_sel_getName(sel), "cfTwice:") != 0) return false;
    return sf_class_addMethod((sf_class_t)cls, sel, IMP(twice), "q@:q") == SF_OK;
}

// objc4 test/resolve.m: a declined selector is cached (straight to forwarding) until the
// class's methods change; introspection asks the resolver too.
int cf_scenario_resolver_caching(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(cls);
    sf_registerClassPair(cls);
    sf_class_t meta = sf_getMetaClass(name);
    CHECK(sf_class_addMethod(meta, SEL("resolveInstanceMethod:"), IMP(declining_resolver), "B@::") == SF_OK);
    sf_id obj = sf_class_createInstance(cls);
    CHECK(obj);
    sf_sel missing = SEL("cfMissing:");
    long a = 1, out = -1;
    void *args[] = {&a};

    resolver_calls = 0;
    for (int i = 0; i < 5; i++) CHECK(sf_msg_send(obj, missing, &out, args) == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(resolver_calls == 1);
    CHECK(!sf_class_respondsToSelector(cls, missing));
    CHECK(sf_class_getMethodImplementation(cls, missing) == (sf_imp)sf_msgForward);
    CHECK(resolver_calls == 1);

    // Any change to the class's methods flushes the declined entry: the resolver is asked again.
    CHECK(sf_class_addMethod(cls, SEL("cfUnrelated::"), IMP(add), "q@:qq") == SF_OK);
    CHECK(sf_msg_send(obj, missing, &out, args) == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(resolver_calls == 2);
    CHECK(sf_msg_send(obj, missing, &out, args) == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(resolver_calls == 2);

    // A new resolver is asked again about what the old one declined.
    CHECK(sf_class_replaceMethod(meta, SEL("resolveInstanceMethod:"), IMP(adding_resolver), "B@::") != NULL);
    sf_sel added = SEL("cfTwice:");
    CHECK(sf_class_respondsToSelector(cls, added));  // the resolver adds it: reported
    CHECK(resolver_calls == 3);
    sf_imp imp = sf_class_getMethodImplementation(cls, added);
    CHECK(imp == IMP(twice));
    CHECK(((long (*)(sf_id, sf_sel, long))imp)(obj, added, 21) == 42);
    CHECK(sf_msg_send(obj, added, &out, args) == SF_OK && out == 2);
    CHECK(resolver_calls == 3);

    sf_release(obj);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

// ---- the forwarding IMP ----

typedef struct { long a, b, c, d; } cf_quad;  // returned through memory
typedef struct { double x, y; } cf_pair;      // returned in xmm0:xmm1

static cf_quad quad_reverse(sf_id self, sf_sel cmd, cf_quad q) { (void)self; (void)cmd; return (cf_quad){q.d, q.c, q.b, q.a}; }
static double scale(sf_id self, sf_sel cmd, double x, double k) { (void)self; (void)cmd; return x * k; }
static cf_pair swap_pair(sf_id self, sf_sel cmd, cf_pair p, long n) { (void)self; (void)cmd; return (cf_pair){p.y * n, p.x * n}; }
static long sum8(sf_id self, sf_sel cmd, long a, long b, long c, long d, long e, long f, long g, long h) {
    (void)self; (void)cmd;
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

static sf_id forward_target;

static sf_id target_for(sf_id self, sf_sel cmd, sf_sel sel) {
    (void)self; (void)cmd;
    if (strcmp(sf_sel_getName(sel), "cfNobody") == 0) return NULL;
    return sf_retain(forward_target);  // +1, as the runtime expects
}

static const char *signature_for(sf_id self, sf_sel cmd, sf_sel sel) {
    (void)self; (void)cmd;
    const char *n = sf_sel_getName(sel);
    if (strcmp(n, "cfAdd::") == 0) return "q@:qq";
    if (strcmp(n, "cfQuad:") == 0) return "{cf_quad=qqqq}@:{cf_quad=qqqq}";
    if (strcmp(n, "cfScale::") == 0) return "d@:dd";
    if (strcmp(n, "cfSwap::") == 0) return "{cf_pair=dd}@:{cf_pair=dd}q";
    if (strcmp(n, "cfSum8::::::::") == 0) return "q@:qqqqqqqq";
    if (strcmp(n, "cfNobody") == 0) return "q@:";
    return NULL;
}

// objc4 test/forward.m and libobjc2 Test/forward.m: class_getMethodImplementation of a missing
// selector is the forwarding IMP; called with any signature the path can learn, it forwards.
int cf_scenario_forwarding_imp(const char *name) {
    char tn[256];
    snprintf(tn, sizeof tn, "%s.Target", name);
    sf_class_t target = sf_allocateClassPair(NULL, tn);
    CHECK(target);
    sf_registerClassPair(target);
    CHECK(sf_class_addMethod(target, SEL("cfAdd::"), IMP(add), "q@:qq") == SF_OK);
    CHECK(sf_class_addMethod(target, SEL("cfQuad:"), IMP(quad_reverse), "{cf_quad=qqqq}@:{cf_quad=qqqq}") == SF_OK);
    CHECK(sf_class_addMethod(target, SEL("cfScale::"), IMP(scale), "d@:dd") == SF_OK);
    CHECK(sf_class_addMethod(target, SEL("cfSwap::"), IMP(swap_pair), "{cf_pair=dd}@:{cf_pair=dd}q") == SF_OK);
    CHECK(sf_class_addMethod(target, SEL("cfSum8::::::::"), IMP(sum8), "q@:qqqqqqqq") == SF_OK);
    CHECK(sf_class_addMethod(target, SEL("cfInstalled:"), IMP(twice), "q@:q") == SF_OK);

    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(cls);
    sf_registerClassPair(cls);
    CHECK(sf_class_addMethod(cls, SEL("forwardingTargetForSelector:"), IMP(target_for), "@@::") == SF_OK);
    CHECK(sf_class_addMethod(cls, SEL("methodSignatureForSelector:"), IMP(signature_for), "*@::") == SF_OK);
    forward_target = sf_class_createInstance(target);
    sf_id obj = sf_class_createInstance(cls);
    CHECK(obj && forward_target);

    sf_imp fwd = sf_class_getMethodImplementation(cls, SEL("cfAdd::"));
    CHECK(fwd == (sf_imp)sf_msgForward);
    CHECK(((long (*)(sf_id, sf_sel, long, long))fwd)(obj, SEL("cfAdd::"), 40, 2) == 42);
    CHECK(sf_last_error() == SF_OK);
    cf_quad q = ((cf_quad(*)(sf_id, sf_sel, cf_quad))sf_msgForward)(obj, SEL("cfQuad:"), (cf_quad){1, 2, 3, 4});
    CHECK(q.a == 4 && q.b == 3 && q.c == 2 && q.d == 1);
    CHECK(((double (*)(sf_id, sf_sel, double, double))sf_msgForward)(obj, SEL("cfScale::"), 1.5, 4.0) == 6.0);
    cf_pair p = ((cf_pair(*)(sf_id, sf_sel, cf_pair, long))sf_msgForward)(obj, SEL("cfSwap::"), (cf_pair){1.0, 2.0}, 3);
    CHECK(p.x == 6.0 && p.y == 3.0);
    // Stack arguments reach the target untouched.
    CHECK(((long (*)(sf_id, sf_sel, long, long, long, long, long, long, long, long))sf_msgForward)(
              obj, SEL("cfSum8::::::::"), 1, 1, 1, 1, 1, 1, 1, 100) == 828);

    // objc4's Aspects-style use: a method whose IMP is the forwarding IMP forwards every call,
    // typed by its own entry (no methodSignatureForSelector: answer for this selector).
    CHECK(sf_class_addMethod(cls, SEL("cfInstalled:"), (sf_imp)sf_msgForward, "q@:q") == SF_OK);
    long out = -1, arg = 8;
    void *args[] = {&arg};
    CHECK(sf_msg_send(obj, SEL("cfInstalled:"), &out, args) == SF_OK && out == 16);
    sf_imp looked = sf_msg_lookup(obj, SEL("cfInstalled:"));
    CHECK(looked == (sf_imp)sf_msgForward);
    CHECK(((long (*)(sf_id, sf_sel, long))looked)(obj, SEL("cfInstalled:"), 5) == 10);

    // No signature known: zero and a clean error, never a crash.
    CHECK(((long (*)(sf_id, sf_sel, long))sf_msgForward)(obj, SEL("cfUnknown:"), 5) == 0);
    CHECK(sf_last_error() == SF_ERR_FORWARDING);
    CHECK(strstr(sf_last_error_message(), "methodSignatureForSelector:") != NULL);
    // The path itself fails (no target, no forwardInvocation:): zero, unrecognized selector.
    CHECK(((long (*)(sf_id, sf_sel))sf_msgForward)(obj, SEL("cfNobody")) == 0);
    CHECK(sf_last_error() == SF_ERR_UNRECOGNIZED_SELECTOR);
    // _cmd is not a selector, or the receiver is NULL: zero and an error.
    CHECK(((long (*)(sf_id, const char *))sf_msgForward)(obj, "not a selector") == 0);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(((long (*)(sf_id, sf_sel, long, long))sf_msgForward)(NULL, SEL("cfAdd::"), 1, 2) == 0);
    CHECK(sf_last_error() == SF_ERR_NIL_RECEIVER);
    // A memory-returned struct called as if it returned in registers: refused, not misread.
    CHECK(((long (*)(sf_id, sf_sel, cf_quad))sf_msgForward)(obj, SEL("cfQuad:"), (cf_quad){1, 2, 3, 4}) == 0);
    CHECK(sf_last_error() == SF_ERR_SIGNATURE_MISMATCH);

    sf_release(obj);
    sf_release(forward_target);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    CHECK(sf_disposeClassPair(target) == SF_OK);
    return 0;
}
