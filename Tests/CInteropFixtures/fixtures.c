// C code that drives the runtime through its public header only, as a C program would.
#include "CInteropFixtures.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SF_PRIVATE_H
#error "the C fixtures must use only SelectorForwarding.h"
#endif

// ---- implementations ----

long fx_add(sf_id self, sf_sel cmd, long a, long b) { (void)self; (void)cmd; return a + b; }
double fx_scale(sf_id self, sf_sel cmd, double x, double k) { (void)self; (void)cmd; return x * k; }
float fx_half_float(sf_id self, sf_sel cmd, float x) { (void)self; (void)cmd; return x / 2; }
signed char fx_negate_char(sf_id self, sf_sel cmd, signed char c) { (void)self; (void)cmd; return (signed char)-c; }
long fx_widen_char(sf_id self, sf_sel cmd, signed char c) { (void)self; (void)cmd; return c; }
unsigned short fx_ushort_max(sf_id self, sf_sel cmd) { (void)self; (void)cmd; return 0xFFFF; }
bool fx_is_positive(sf_id self, sf_sel cmd, double x) { (void)self; (void)cmd; return x > 0; }

fx_point fx_point_scale(sf_id self, sf_sel cmd, fx_point p, double k) {
    (void)self; (void)cmd;
    return (fx_point){p.x * k, p.y * k};
}

fx_quad fx_quad_reverse(sf_id self, sf_sel cmd, fx_quad q) {
    (void)self; (void)cmd;
    return (fx_quad){q.d, q.c, q.b, q.a};
}

double fx_mixed_sum(sf_id self, sf_sel cmd, fx_mixed m) { (void)self; (void)cmd; return m.c + m.i + m.d; }

const char *fx_class_name_of(sf_id self, sf_sel cmd) { (void)cmd; return sf_class_getName(sf_object_getClass(self)); }

sf_id fx_return_self(sf_id self, sf_sel cmd) { (void)cmd; return sf_retain(self); }  // object returns are +1

sf_sel fx_return_cmd(sf_id self, sf_sel cmd) { (void)self; return cmd; }

sf_class_t fx_class_of(sf_id self, sf_sel cmd, sf_id other) { (void)self; (void)cmd; return sf_object_getClass(other); }

long fx_sum6(sf_id self, sf_sel cmd, long a, long b, long c, long d, long e, long f) {
    (void)self; (void)cmd;
    return a + 10 * b + 100 * c + 1000 * d + 10000 * e + 100000 * f;
}

static long multiply(sf_id self, sf_sel cmd, long a, long b) { (void)self; (void)cmd; return a * b; }
static long subtract(sf_id self, sf_sel cmd, long a, long b) { (void)self; (void)cmd; return a - b; }
static long one(sf_id self, sf_sel cmd) { (void)self; (void)cmd; return 1; }
static long two(sf_id self, sf_sel cmd) { (void)self; (void)cmd; return 2; }
static long three(sf_id self, sf_sel cmd) { (void)self; (void)cmd; return 3; }
static void nothing(sf_id self, sf_sel cmd) { (void)self; (void)cmd; }

// ---- checks ----

static char failure[1024];

const char *fx_failure(void) { return failure; }

// Records the first failed condition with the runtime's last error, and returns its line.
#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            snprintf(failure, sizeof failure, "fixtures.c:%d: CHECK(%s) failed; last error %d: %s", \
                     __LINE__, #cond, (int)sf_last_error(), sf_last_error_message());            \
            return __LINE__;                                                                     \
        }                                                                                        \
    } while (0)

#define IMP(f) ((sf_imp)(f))
#define SEL(name) sf_sel_registerName(name)

static bool contains(const char *haystack, const char *needle) {
    return haystack && needle && strstr(haystack, needle) != NULL;
}

// A class is an object whose header comes first: casting is how C sends class messages.
static sf_id as_object(sf_class_t cls) { return (sf_id)cls; }

static void derived_name(char *out, size_t size, const char *name, const char *suffix) {
    snprintf(out, size, "%s_%s", name, suffix);
}

// ---- scenarios ----

int fx_scenario_class_pair(const char *name) {
    char subname[256];
    derived_name(subname, sizeof subname, name, "Sub");

    sf_class_t base = sf_allocateClassPair(NULL, name);
    CHECK(base != NULL && sf_last_error() == SF_OK);
    CHECK(strcmp(sf_class_getName(base), name) == 0);
    CHECK(sf_class_createInstance(base) == NULL);  // not registered yet
    CHECK(sf_last_error() == SF_ERR_CLASS_REGISTERED);
    CHECK(sf_allocateClassPair(NULL, name) == NULL);  // the name is reserved
    CHECK(sf_last_error() == SF_ERR_DUPLICATE_CLASS && contains(sf_last_error_message(), name));
    sf_registerClassPair(base);
    CHECK(sf_getClass(name) == base);

    sf_class_t meta = sf_getMetaClass(name);
    CHECK(meta != NULL && meta != base);
    CHECK(sf_class_isMetaClass(meta) && !sf_class_isMetaClass(base));
    CHECK(sf_class_getSuperclass(base) == NULL);
    CHECK(sf_class_getSuperclass(meta) == base);  // the root metaclass inherits from the root class
    CHECK(sf_object_getClass(as_object(base)) == meta);
    CHECK(strcmp(sf_class_getName(meta), name) == 0);

    sf_class_t sub = sf_allocateClassPair(base, subname);
    CHECK(sub != NULL);
    sf_registerClassPair(sub);
    CHECK(sf_class_getSuperclass(sub) == base);
    CHECK(sf_class_getSuperclass(sf_getMetaClass(subname)) == meta);
    CHECK(sf_class_getInstanceSize(sub) == sf_class_getInstanceSize(base));

    sf_id obj = sf_class_createInstance(sub);
    CHECK(obj != NULL && sf_object_getClass(obj) == sub);
    CHECK(sf_disposeClassPair(base) == SF_ERR_CLASS_IN_USE);  // a subclass exists
    CHECK(sf_disposeClassPair(sub) == SF_ERR_CLASS_IN_USE);   // an instance exists
    CHECK(contains(sf_last_error_message(), subname));
    sf_release(obj);
    CHECK(sf_disposeClassPair(sub) == SF_OK);
    CHECK(sf_getClass(subname) == NULL);
    CHECK(sf_disposeClassPair(base) == SF_OK);
    CHECK(sf_getClass(name) == NULL && sf_getMetaClass(name) == NULL);
    return 0;
}

int fx_scenario_methods_and_lookup(const char *name) {
    char subname[256];
    derived_name(subname, sizeof subname, name, "Sub");
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(cls != NULL);
    sf_registerClassPair(cls);
    sf_sel add = SEL("add:to:"), scale = SEL("scale:by:"), half = SEL("half:"), neg = SEL("negate:");
    sf_sel point = SEL("point:scaledBy:"), quad = SEL("reverse:"), mixed = SEL("mixed:"), name_sel = SEL("className");
    sf_sel me = SEL("me"), cmd = SEL("cmd"), class_of = SEL("classOf:"), sum6 = SEL("sum:::::"), widen = SEL("widen:");
    sf_sel positive = SEL("isPositive:"), umax = SEL("ushortMax");

    CHECK(sf_class_addMethod(cls, add, IMP(fx_add), "q24@0:8q16q20") == SF_OK);  // offsets are accepted
    CHECK(sf_class_addMethod(cls, scale, IMP(fx_scale), "d@:dd") == SF_OK);
    CHECK(sf_class_addMethod(cls, half, IMP(fx_half_float), "f@:f") == SF_OK);
    CHECK(sf_class_addMethod(cls, neg, IMP(fx_negate_char), "c@:c") == SF_OK);
    CHECK(sf_class_addMethod(cls, widen, IMP(fx_widen_char), "q@:c") == SF_OK);
    CHECK(sf_class_addMethod(cls, point, IMP(fx_point_scale), "{fx_point=dd}@:{fx_point=dd}d") == SF_OK);
    CHECK(sf_class_addMethod(cls, quad, IMP(fx_quad_reverse), "{fx_quad=qqqq}@:{fx_quad=qqqq}") == SF_OK);
    CHECK(sf_class_addMethod(cls, mixed, IMP(fx_mixed_sum), "d@:{fx_mixed=cid}") == SF_OK);
    CHECK(sf_class_addMethod(cls, name_sel, IMP(fx_class_name_of), "r*@:") == SF_OK);
    CHECK(sf_class_addMethod(cls, me, IMP(fx_return_self), "@@:") == SF_OK);
    CHECK(sf_class_addMethod(cls, cmd, IMP(fx_return_cmd), ":@:") == SF_OK);
    CHECK(sf_class_addMethod(cls, class_of, IMP(fx_class_of), "#@:@") == SF_OK);
    CHECK(sf_class_addMethod(cls, sum6, IMP(fx_sum6), "q@:qqqqqq") == SF_OK);
    CHECK(sf_class_addMethod(cls, positive, IMP(fx_is_positive), "B@:d") == SF_OK);
    CHECK(sf_class_addMethod(cls, umax, IMP(fx_ushort_max), "S@:") == SF_OK);

    sf_id obj = sf_class_createInstance(cls);
    CHECK(obj != NULL);
    long (*f_add)(sf_id, sf_sel, long, long) = (long (*)(sf_id, sf_sel, long, long))sf_msg_lookup(obj, add);
    CHECK(f_add == fx_add && sf_last_error() == SF_OK);
    CHECK(f_add(obj, add, 40, 2) == 42);
    double (*f_scale)(sf_id, sf_sel, double, double) = (double (*)(sf_id, sf_sel, double, double))sf_msg_lookup(obj, scale);
    CHECK(f_scale(obj, scale, 1.5, 4) == 6.0);
    CHECK(((float (*)(sf_id, sf_sel, float))sf_msg_lookup(obj, half))(obj, half, 3.0f) == 1.5f);
    CHECK(((signed char (*)(sf_id, sf_sel, signed char))sf_msg_lookup(obj, neg))(obj, neg, -128 + 1) == 127);
    fx_point p = ((fx_point(*)(sf_id, sf_sel, fx_point, double))sf_msg_lookup(obj, point))(obj, point, (fx_point){1, -2}, 3);
    CHECK(p.x == 3 && p.y == -6);
    fx_quad q = ((fx_quad(*)(sf_id, sf_sel, fx_quad))sf_msg_lookup(obj, quad))(obj, quad, (fx_quad){1, 2, 3, 4});
    CHECK(q.a == 4 && q.d == 1);
    const char *n = ((const char *(*)(sf_id, sf_sel))sf_msg_lookup(obj, name_sel))(obj, name_sel);
    CHECK(strcmp(n, name) == 0);
    sf_id back = ((sf_id(*)(sf_id, sf_sel))sf_msg_lookup(obj, me))(obj, me);
    CHECK(back == obj && sf_object_retainCount(obj) == 2);
    sf_release(back);
    CHECK(((sf_sel(*)(sf_id, sf_sel))sf_msg_lookup(obj, cmd))(obj, cmd) == cmd);
    CHECK(((sf_class_t(*)(sf_id, sf_sel, sf_id))sf_msg_lookup(obj, class_of))(obj, class_of, obj) == cls);
    CHECK(((long (*)(sf_id, sf_sel, long, long, long, long, long, long))sf_msg_lookup(obj, sum6))(obj, sum6, 1, 2, 3, 4, 5, 6) == 654321);

    // Introspection.
    CHECK(sf_class_respondsToSelector(cls, add) && !sf_class_respondsToSelector(cls, SEL("nope")));
    sf_method_t m = sf_class_getInstanceMethod(cls, add);
    CHECK(m != NULL && sf_method_getName(m) == add);
    CHECK(sf_method_getImplementation(m) == IMP(fx_add));
    CHECK(strcmp(sf_method_getTypeEncoding(m), "q@:qq") == 0);  // canonical: offsets dropped
    CHECK(strcmp(sf_method_getTypeEncoding(sf_class_getInstanceMethod(cls, name_sel)), "*@:") == 0);
    CHECK(sf_class_getMethodImplementation(cls, scale) == IMP(fx_scale));
    CHECK(strcmp(sf_sel_getName(add), "add:to:") == 0);

    // A subclass inherits, overrides, and reaches the superclass's version with a super lookup.
    sf_class_t sub = sf_allocateClassPair(cls, subname);
    sf_registerClassPair(sub);
    sf_id child = sf_class_createInstance(sub);
    CHECK(sf_msg_lookup(child, add) == IMP(fx_add));
    CHECK(sf_class_addMethod(sub, add, IMP(multiply), "q@:qq") == SF_OK);
    CHECK(sf_msg_lookup(child, add) == IMP(multiply));  // the cached inherited entry was flushed
    CHECK(sf_msg_lookup(obj, add) == IMP(fx_add));
    CHECK(sf_msg_lookup_super(sf_class_getSuperclass(sub), add) == IMP(fx_add));
    CHECK(sf_class_getInstanceMethod(sub, scale) == sf_class_getInstanceMethod(cls, scale));  // inherited entry

    sf_release(child);
    sf_release(obj);
    CHECK(sf_disposeClassPair(sub) == SF_OK);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

int fx_scenario_replace_exchange(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_registerClassPair(cls);
    sf_id obj = sf_class_createInstance(cls);
    sf_sel value = SEL("value"), other = SEL("other"), missing = SEL("fresh");

    CHECK(sf_class_addMethod(cls, value, IMP(one), "q@:") == SF_OK);
    CHECK(sf_class_addMethod(cls, value, IMP(two), "q@:") == SF_ERR_METHOD_EXISTS);
    CHECK(contains(sf_last_error_message(), "value"));
    CHECK(sf_class_replaceMethod(cls, value, IMP(two), "q@:") == IMP(one));
    CHECK(sf_last_error() == SF_OK);
    CHECK(sf_msg_lookup(obj, value) == IMP(two));
    CHECK(((long (*)(sf_id, sf_sel))sf_msg_lookup(obj, value))(obj, value) == 2);

    // Replacing a missing method adds it and returns NULL with SF_OK.
    CHECK(sf_class_replaceMethod(cls, missing, IMP(three), "q@:") == NULL);
    CHECK(sf_last_error() == SF_OK && sf_msg_lookup(obj, missing) == IMP(three));
    // An incompatible signature is refused and changes nothing.
    CHECK(sf_class_replaceMethod(cls, value, IMP(fx_scale), "d@:dd") == NULL);
    CHECK(sf_last_error() == SF_ERR_SIGNATURE_MISMATCH);
    CHECK(contains(sf_last_error_message(), "q@:") && contains(sf_last_error_message(), "d@:dd"));
    CHECK(sf_msg_lookup(obj, value) == IMP(two));

    sf_method_t m = sf_class_getInstanceMethod(cls, value);
    CHECK(sf_method_setImplementation(m, IMP(three)) == IMP(two));
    CHECK(sf_msg_lookup(obj, value) == IMP(three));

    CHECK(sf_class_addMethod(cls, other, IMP(one), "q@:") == SF_OK);
    sf_method_exchangeImplementations(sf_class_getInstanceMethod(cls, value), sf_class_getInstanceMethod(cls, other));
    CHECK(sf_msg_lookup(obj, value) == IMP(one));
    CHECK(sf_msg_lookup(obj, other) == IMP(three));
    sf_method_exchangeImplementations(NULL, m);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT && sf_msg_lookup(obj, value) == IMP(one));

    sf_release(obj);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

int fx_scenario_msg_send(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_registerClassPair(cls);
    sf_sel add = SEL("add:to:"), point = SEL("point:scaledBy:"), quad = SEL("reverse:"), me = SEL("me");
    sf_sel neg = SEL("negate:"), half = SEL("half:"), noop = SEL("noop"), mixed = SEL("mixed:"), umax = SEL("ushortMax");
    CHECK(sf_class_addMethod(cls, add, IMP(fx_add), "q@:qq") == SF_OK);
    CHECK(sf_class_addMethod(cls, point, IMP(fx_point_scale), "{fx_point=dd}@:{fx_point=dd}d") == SF_OK);
    CHECK(sf_class_addMethod(cls, quad, IMP(fx_quad_reverse), "{fx_quad=qqqq}@:{fx_quad=qqqq}") == SF_OK);
    CHECK(sf_class_addMethod(cls, me, IMP(fx_return_self), "@@:") == SF_OK);
    CHECK(sf_class_addMethod(cls, neg, IMP(fx_negate_char), "c@:c") == SF_OK);
    CHECK(sf_class_addMethod(cls, half, IMP(fx_half_float), "f@:f") == SF_OK);
    CHECK(sf_class_addMethod(cls, noop, IMP(nothing), "v@:") == SF_OK);
    CHECK(sf_class_addMethod(cls, mixed, IMP(fx_mixed_sum), "d@:{fx_mixed=cid}") == SF_OK);
    CHECK(sf_class_addMethod(cls, umax, IMP(fx_ushort_max), "S@:") == SF_OK);
    sf_id obj = sf_class_createInstance(cls);

    long a = 40, b = 2, sum = 0;
    void *args2[] = {&a, &b};
    CHECK(sf_msg_send(obj, add, &sum, args2) == SF_OK && sum == 42 && sf_last_error() == SF_OK);

    fx_point p = {1.5, -1}, pr = {0, 0};
    double k = 2;
    void *pargs[] = {&p, &k};
    CHECK(sf_msg_send(obj, point, &pr, pargs) == SF_OK && pr.x == 3 && pr.y == -2);

    fx_quad q = {1, 2, 3, 4}, qr = {0, 0, 0, 0};
    void *qargs[] = {&q};
    CHECK(sf_msg_send(obj, quad, &qr, qargs) == SF_OK && qr.a == 4 && qr.b == 3 && qr.c == 2 && qr.d == 1);

    fx_mixed mx = {'\x02', 30, 0.5};
    double mr = 0;
    void *margs[] = {&mx};
    CHECK(sf_msg_send(obj, mixed, &mr, margs) == SF_OK && mr == 32.5);

    sf_id back = NULL;
    CHECK(sf_msg_send(obj, me, &back, NULL) == SF_OK && back == obj);
    CHECK(sf_object_retainCount(obj) == 2);  // the object return is +1
    sf_release(back);

    // Narrow returns fill exactly their type's size, not the word libffi writes.
    signed char c = 5;
    struct { signed char value; unsigned char after[7]; } cr = {0, {0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA}};
    void *cargs[] = {&c};
    CHECK(sf_msg_send(obj, neg, &cr.value, cargs) == SF_OK && cr.value == -5 && cr.after[0] == 0xAA && cr.after[6] == 0xAA);
    uint64_t ur = 0;
    CHECK(sf_msg_send(obj, umax, &ur, NULL) == SF_OK && ur == 0xFFFF);
    float f = 5, fr = 0;
    void *fargs[] = {&f};
    CHECK(sf_msg_send(obj, half, &fr, fargs) == SF_OK && fr == 2.5f);

    // Void methods need no return storage.
    CHECK(sf_msg_send(obj, noop, NULL, NULL) == SF_OK);

    // Bad calls are refused with a code, never a crash.
    CHECK(sf_msg_send(obj, add, NULL, args2) == SF_ERR_INVALID_ARGUMENT);
    CHECK(contains(sf_last_error_message(), "ret: expected storage") && contains(sf_last_error_message(), name));
    CHECK(sf_msg_send(obj, add, &sum, NULL) == SF_ERR_INVALID_ARGUMENT);
    void *holey[] = {&a, NULL};
    CHECK(sf_msg_send(obj, add, &sum, holey) == SF_ERR_INVALID_ARGUMENT);
    CHECK(contains(sf_last_error_message(), "argument 2"));
    CHECK(sf_msg_send(NULL, add, &sum, args2) == SF_ERR_NIL_RECEIVER);
    CHECK(sf_last_error() == SF_ERR_NIL_RECEIVER);
    CHECK(sf_msg_send(obj, NULL, &sum, args2) == SF_ERR_INVALID_ARGUMENT);

    sf_release(obj);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

int fx_scenario_missing_methods(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_registerClassPair(cls);
    sf_sel known = SEL("known"), unknown = SEL("fixtureUnknown:");
    CHECK(sf_class_addMethod(cls, known, IMP(one), "q@:") == SF_OK);
    sf_id obj = sf_class_createInstance(cls);
    char expected[512];

    CHECK(sf_msg_lookup(obj, unknown) == NULL);
    CHECK(sf_last_error() == SF_ERR_UNRECOGNIZED_SELECTOR);
    snprintf(expected, sizeof expected, "-[%s fixtureUnknown:]: unrecognized selector sent to instance", name);
    CHECK(strcmp(sf_last_error_message(), expected) == 0);

    // A successful lookup clears the error (the full path), and the next one keeps it clear
    // (the leaf path, which runs only while no error is set).
    CHECK(sf_msg_lookup(obj, known) == IMP(one) && sf_last_error() == SF_OK);
    CHECK(strcmp(sf_last_error_message(), "") == 0);
    CHECK(sf_msg_lookup(obj, known) == IMP(one) && sf_last_error() == SF_OK);
    CHECK(sf_msg_lookup(obj, unknown) == NULL && sf_last_error() == SF_ERR_UNRECOGNIZED_SELECTOR);

    // Class messages miss in the metaclass.
    CHECK(sf_msg_lookup(as_object(cls), unknown) == NULL && sf_last_error() == SF_ERR_UNRECOGNIZED_SELECTOR);
    snprintf(expected, sizeof expected, "+[%s fixtureUnknown:]: unrecognized selector sent to class", name);
    CHECK(strcmp(sf_last_error_message(), expected) == 0);

    long a = 1, b = 2, out = -1;
    void *args[] = {&a, &b};
    CHECK(sf_msg_send(obj, unknown, &out, args) == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(sf_last_error() == SF_ERR_UNRECOGNIZED_SELECTOR && out == -1);
    CHECK(contains(sf_last_error_message(), "fixtureUnknown:") && contains(sf_last_error_message(), name));

    CHECK(sf_msg_lookup(NULL, known) == NULL && sf_last_error() == SF_ERR_NIL_RECEIVER);
    CHECK(sf_msg_lookup(obj, NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_msg_lookup_super(NULL, known) == NULL && sf_last_error() == SF_ERR_NIL_RECEIVER);
    CHECK(sf_msg_lookup_super(cls, NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_msg_lookup_super(cls, unknown) == NULL && sf_last_error() == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(sf_class_getMethodImplementation(cls, unknown) == (sf_imp)sf_msgForward);  // objc4's _objc_msgForward
    CHECK(sf_class_getInstanceMethod(cls, unknown) == NULL);

    sf_release(obj);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

int fx_scenario_bad_inputs(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_sel sel = SEL("m");
    CHECK(sf_sel_registerName(NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_sel_getName(NULL) == NULL);
    CHECK(sf_allocateClassPair(NULL, NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_allocateClassPair(NULL, "") == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);

    CHECK(sf_class_addMethod(NULL, sel, IMP(one), "q@:") == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_addMethod(cls, NULL, IMP(one), "q@:") == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_addMethod(cls, sel, NULL, "q@:") == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_addMethod(cls, sel, IMP(one), NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_replaceMethod(NULL, sel, IMP(one), "q@:") == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);

    static const struct { const char *types; const char *offset; } bad[] = {
        {"", "offset 0"}, {"q", "offset 1"}, {"q@", "offset 2"}, {"qq:", "offset 1"}, {"{Point}@:", "offset 0"},
        {"{P=dd", "offset 0"}, {"[4i]@:", "offset 0"}, {"(u=i)@:", "offset 0"}, {"b3@:", "offset 0"},
        {"@?", "offset 2"}, {"v@:[x@]", "offset 4"}, {"x@:", "offset 0"}, {"^", "offset 0"}, {"v@:^", "offset 3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(sf_class_addMethod(cls, sel, IMP(one), bad[i].types) == SF_ERR_BAD_ENCODING);
        CHECK(contains(sf_last_error_message(), bad[i].offset));
    }
    CHECK(sf_class_getInstanceMethod(cls, sel) == NULL);  // nothing was added
    CHECK(sf_class_addMethod(cls, SEL(".cxx_destruct"), IMP(nothing), "v@:") == SF_ERR_RESERVED_SELECTOR);
    CHECK(sf_class_addMethod(cls, SEL("dealloc"), IMP(one), "i@:") == SF_ERR_SIGNATURE_MISMATCH);
    CHECK(contains(sf_last_error_message(), "dealloc"));

    CHECK(sf_class_createInstance(NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    sf_registerClassPair(cls);
    sf_class_t meta = sf_getMetaClass(name);
    CHECK(sf_class_createInstance(meta) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_allocateClassPair(meta, "fixtureChildOfMeta") == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_disposeClassPair(NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_disposeClassPair(meta) == SF_ERR_INVALID_ARGUMENT);

    CHECK(sf_class_getName(NULL) == NULL && sf_class_getSuperclass(NULL) == NULL);
    CHECK(!sf_class_isMetaClass(NULL) && sf_class_getInstanceSize(NULL) == 0);
    CHECK(!sf_class_respondsToSelector(NULL, sel) && !sf_class_respondsToSelector(cls, NULL));
    CHECK(sf_class_getInstanceMethod(NULL, sel) == NULL && sf_class_getMethodImplementation(cls, NULL) == NULL);
    CHECK(sf_method_getName(NULL) == NULL && sf_method_getImplementation(NULL) == NULL);
    CHECK(sf_method_getTypeEncoding(NULL) == NULL);
    CHECK(sf_method_setImplementation(NULL, IMP(one)) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_getClass(NULL) == NULL && sf_getMetaClass(NULL) == NULL);
    CHECK(sf_class_getIvarOffset(NULL, "x") == -1 && sf_class_getIvarOffset(cls, NULL) == -1);
    CHECK(sf_object_getIvarPointer(NULL, 16) == NULL);
    CHECK(sf_retain(NULL) == NULL && sf_object_retainCount(NULL) == 0 && sf_object_getClass(NULL) == NULL);
    sf_release(NULL);
    CHECK(sf_object_addDeallocObserver(NULL, NULL, NULL) == 0);
    CHECK(!sf_object_removeDeallocObserver(NULL, 1));
    CHECK(sf_getAssociatedObject(NULL, &sel) == NULL);
    sf_setAssociatedObject(NULL, &sel, NULL);
    sf_initWeak(NULL, NULL);
    CHECK(sf_loadWeakRetained(NULL) == NULL);
    sf_destroyWeak(NULL);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

// Dealloc observers append their index to a log.
struct dealloc_log {
    int entries[16];
    int count;
    sf_id seen;
};

static int tags[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static struct dealloc_log *current_log;

static void log_dealloc(sf_id obj, void *context) {
    current_log->entries[current_log->count++] = *(int *)context;
    current_log->seen = obj;
}

int fx_scenario_objects(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_registerClassPair(cls);
    struct dealloc_log log = {{0}, 0, NULL};
    current_log = &log;

    sf_id obj = sf_class_createInstance(cls);
    CHECK(obj != NULL && sf_object_retainCount(obj) == 1);
    CHECK(sf_retain(obj) == obj && sf_object_retainCount(obj) == 2);
    sf_release(obj);
    CHECK(sf_object_retainCount(obj) == 1);

    uint64_t t0 = sf_object_addDeallocObserver(obj, log_dealloc, &tags[0]);
    uint64_t t1 = sf_object_addDeallocObserver(obj, log_dealloc, &tags[1]);
    uint64_t t2 = sf_object_addDeallocObserver(obj, log_dealloc, &tags[2]);
    CHECK(t0 != 0 && t1 != 0 && t2 != 0 && t0 != t1 && t1 != t2);
    CHECK(sf_object_removeDeallocObserver(obj, t1));
    CHECK(!sf_object_removeDeallocObserver(obj, t1));
    CHECK(sf_object_addDeallocObserver(obj, NULL, NULL) == 0);

    sf_retain(obj);
    sf_release(obj);
    CHECK(log.count == 0);
    sf_release(obj);
    CHECK(log.count == 2 && log.entries[0] == 0 && log.entries[1] == 2);  // once each, in order
    CHECK(log.seen == obj);

    // Classes are immortal objects.
    sf_id class_object = as_object(cls);
    CHECK(sf_object_retainCount(class_object) == UINTPTR_MAX);
    sf_release(class_object);
    sf_release(class_object);
    CHECK(sf_object_getClass(class_object) == sf_getMetaClass(name));
    CHECK(sf_object_addDeallocObserver(class_object, log_dealloc, &tags[3]) == 0);

    current_log = NULL;
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

int fx_scenario_weak_and_associated(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_registerClassPair(cls);
    struct dealloc_log log = {{0}, 0, NULL};
    current_log = &log;
    static char key_a, key_b;

    sf_id owner = sf_class_createInstance(cls);
    sf_id value = sf_class_createInstance(cls);
    sf_id other = sf_class_createInstance(cls);
    sf_object_addDeallocObserver(owner, log_dealloc, &tags[1]);
    sf_object_addDeallocObserver(value, log_dealloc, &tags[2]);
    sf_object_addDeallocObserver(other, log_dealloc, &tags[3]);

    sf_id slot = NULL;
    sf_initWeak(&slot, owner);
    CHECK(slot == owner);
    sf_id loaded = sf_loadWeakRetained(&slot);
    CHECK(loaded == owner && sf_object_retainCount(owner) == 2);
    sf_release(loaded);

    sf_setAssociatedObject(owner, &key_a, value);
    CHECK(sf_object_retainCount(value) == 2);  // the association retains
    CHECK(sf_getAssociatedObject(owner, &key_a) == value);
    CHECK(sf_getAssociatedObject(owner, &key_b) == NULL);
    sf_release(value);  // now only the association owns it
    CHECK(log.count == 0);

    sf_setAssociatedObject(owner, &key_b, other);
    sf_release(other);
    sf_setAssociatedObject(owner, &key_b, NULL);  // resetting releases at once
    CHECK(log.count == 1 && log.entries[0] == 3);

    sf_release(owner);  // the owner goes, then what it associated
    CHECK(log.count == 3 && log.entries[1] == 1 && log.entries[2] == 2);
    CHECK(sf_loadWeakRetained(&slot) == NULL);
    CHECK(slot == NULL);
    sf_destroyWeak(&slot);

    // A weak slot destroyed before its object dies is left alone by the dealloc.
    sf_id short_lived = sf_class_createInstance(cls);
    sf_id slot2 = NULL;
    sf_initWeak(&slot2, short_lived);
    sf_destroyWeak(&slot2);
    slot2 = (sf_id)&key_b;  // a sentinel the runtime must not overwrite
    sf_release(short_lived);
    CHECK(slot2 == (sf_id)&key_b);

    // Weak references to classes never clear.
    sf_id class_slot = NULL;
    sf_initWeak(&class_slot, as_object(cls));
    CHECK(sf_loadWeakRetained(&class_slot) == as_object(cls));
    sf_destroyWeak(&class_slot);

    current_log = NULL;
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

int fx_scenario_ivars(const char *name) {
    char childname[256];
    derived_name(childname, sizeof childname, name, "Child");
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(sf_class_addIvar(cls, "count", sizeof(long), 3, "q"));
    CHECK(sf_class_addIvar(cls, "flag", sizeof(bool), 0, "B"));
    CHECK(sf_class_addIvar(cls, "point", sizeof(fx_point), 3, "{fx_point=dd}"));
    CHECK(sf_class_addIvar(cls, "child", sizeof(sf_id), 3, "@"));
    CHECK(!sf_class_addIvar(cls, "count", sizeof(long), 3, "q") && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(!sf_class_addIvar(cls, "wrong", 4, 2, "q") && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(!sf_class_addIvar(cls, "bad", 8, 3, "x") && sf_last_error() == SF_ERR_BAD_ENCODING);
    CHECK(contains(sf_last_error_message(), "\"x\" at offset 0"));  // the caller's text, not "v@:x"
    CHECK(!sf_class_addIvar(cls, "two", 16, 3, "qq") && sf_last_error() == SF_ERR_BAD_ENCODING);
    CHECK(!sf_class_addIvar(cls, "none", 0, 0, "") && sf_last_error() == SF_ERR_BAD_ENCODING);
    CHECK(!sf_class_addIvar(NULL, "x", 8, 3, "q") && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    sf_registerClassPair(cls);
    CHECK(!sf_class_addIvar(cls, "late", sizeof(long), 3, "q") && sf_last_error() == SF_ERR_CLASS_REGISTERED);

    ptrdiff_t count = sf_class_getIvarOffset(cls, "count");
    ptrdiff_t flag = sf_class_getIvarOffset(cls, "flag");
    ptrdiff_t point = sf_class_getIvarOffset(cls, "point");
    ptrdiff_t child = sf_class_getIvarOffset(cls, "child");
    CHECK(count > 0 && count % 8 == 0 && flag == count + 8 && point == count + 16 && child == count + 32);
    CHECK(sf_class_getIvarOffset(cls, "late") == -1);
    CHECK(sf_class_getInstanceSize(cls) == (size_t)child + sizeof(sf_id));

    sf_class_t leaf = sf_allocateClassPair(NULL, childname);
    sf_registerClassPair(leaf);
    struct dealloc_log log = {{0}, 0, NULL};
    current_log = &log;

    sf_id obj = sf_class_createInstance(cls);
    CHECK(*(long *)sf_object_getIvarPointer(obj, count) == 0);  // instances start zeroed
    *(long *)sf_object_getIvarPointer(obj, count) = 7;
    *(fx_point *)sf_object_getIvarPointer(obj, point) = (fx_point){1, 2};
    sf_id kid = sf_class_createInstance(leaf);
    sf_object_addDeallocObserver(kid, log_dealloc, &tags[5]);
    *(sf_id *)sf_object_getIvarPointer(obj, child) = kid;  // the ivar takes over our +1
    CHECK(*(long *)sf_object_getIvarPointer(obj, count) == 7);
    CHECK(((fx_point *)sf_object_getIvarPointer(obj, point))->y == 2);
    CHECK(sf_object_getIvarPointer(obj, 0) == NULL);  // the header is not an ivar
    sf_release(obj);
    CHECK(log.count == 1 && log.entries[0] == 5);  // object ivars are strong: released with their owner

    current_log = NULL;
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    CHECK(sf_disposeClassPair(leaf) == SF_OK);
    return 0;
}

int fx_scenario_class_methods(const char *name) {
    char subname[256];
    derived_name(subname, sizeof subname, name, "Sub");
    sf_class_t root = sf_allocateClassPair(NULL, name);
    sf_registerClassPair(root);
    sf_class_t sub = sf_allocateClassPair(root, subname);
    sf_registerClassPair(sub);
    sf_sel make = SEL("classAdd:to:"), inst = SEL("instanceOnly"), both = SEL("both");

    CHECK(sf_class_addMethod(sf_getMetaClass(name), make, IMP(fx_add), "q#:qq") == SF_OK);
    CHECK(sf_class_addMethod(root, inst, IMP(one), "q@:") == SF_OK);
    CHECK(sf_class_addMethod(root, both, IMP(one), "q@:") == SF_OK);
    sf_id sub_object = as_object(sub);

    long (*f)(sf_id, sf_sel, long, long) = (long (*)(sf_id, sf_sel, long, long))sf_msg_lookup(sub_object, make);
    CHECK(f == fx_add && f(sub_object, make, 2, 3) == 5);  // class methods are inherited
    CHECK(sf_msg_lookup(sub_object, inst) == IMP(one));  // the root metaclass falls back to root instance methods
    CHECK(sf_msg_lookup(sub_object, both) == IMP(one));
    CHECK(sf_class_addMethod(sf_getMetaClass(subname), both, IMP(two), "q@:") == SF_OK);
    CHECK(sf_msg_lookup(sub_object, both) == IMP(two));  // a class method shadows it
    sf_id obj = sf_class_createInstance(sub);
    CHECK(sf_msg_lookup(obj, make) == NULL && sf_last_error() == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(sf_msg_lookup(obj, both) == IMP(one));
    long a = 4, b = 5, out = 0;
    void *args[] = {&a, &b};
    CHECK(sf_msg_send(sub_object, make, &out, args) == SF_OK && out == 9);

    sf_release(obj);
    CHECK(sf_disposeClassPair(sub) == SF_OK);
    CHECK(sf_disposeClassPair(root) == SF_OK);
    return 0;
}

int fx_scenario_many_objects(const char *name, int count) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_registerClassPair(cls);
    static char key;
    for (int i = 0; i < count; i++) {
        sf_id obj = sf_class_createInstance(cls);
        sf_id value = sf_class_createInstance(cls);
        CHECK(obj && value);
        sf_setAssociatedObject(obj, &key, value);
        sf_release(value);
        sf_id slot = NULL;
        sf_initWeak(&slot, obj);
        sf_release(obj);
        CHECK(sf_loadWeakRetained(&slot) == NULL);
        sf_destroyWeak(&slot);
    }
    CHECK(sf_disposeClassPair(cls) == SF_OK);  // no instance survived
    return 0;
}

// ---- single calls ----

long fx_call_long2(sf_id obj, const char *sel, long a, long b, long fallback) {
    sf_sel s = sf_sel_registerName(sel);
    sf_imp imp = sf_msg_lookup(obj, s);
    if (!imp) return fallback;
    return ((long (*)(sf_id, sf_sel, long, long))imp)(obj, s, a, b);
}

sf_status fx_lookup_status(sf_id obj, const char *sel) {
    (void)sf_msg_lookup(obj, sf_sel_registerName(sel));
    return sf_last_error();
}

sf_status fx_send_long2(sf_id obj, const char *sel, long a, long b, long *out) {
    void *args[] = {&a, &b};
    return sf_msg_send(obj, sf_sel_registerName(sel), out, args);
}

uintptr_t fx_call_object_and_release(sf_id obj, const char *sel) {
    sf_sel s = sf_sel_registerName(sel);
    sf_imp imp = sf_msg_lookup(obj, s);
    if (!imp) return 0;
    sf_id result = ((sf_id(*)(sf_id, sf_sel))imp)(obj, s);
    uintptr_t count = sf_object_retainCount(result);
    sf_release(result);
    return count;
}

double fx_sum_doubles(sf_id self, sf_sel cmd, int n, ...) {
    (void)self;
    (void)cmd;
    va_list ap;
    va_start(ap, n);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += va_arg(ap, double);
    va_end(ap);
    return sum;
}

sf_imp fx_sum_doubles_imp(void) { return (sf_imp)fx_sum_doubles; }
