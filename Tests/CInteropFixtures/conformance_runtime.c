// The rest of objc4's runtime API from C: class_setSuperclass (objc4 test/setSuper.m), extra
// bytes (test/classgetclass.m), association policies (test/association.m), properties
// (test/addProperty.m), imp_implementationWithBlock (test/imp_implementationWithBlock.m),
// method_invoke and long double sends (test/msgSend.m), through the public header only.
#include "CInteropFixtures.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conformance_check.h"

static long double cf_mean(sf_id self, sf_sel cmd, long double a, long double b) {
    (void)self, (void)cmd;
    return (a + b) / 2;
}

static int64_t cf_who_a(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return 1; }
static int64_t cf_who_b(sf_id self, sf_sel cmd) { (void)self, (void)cmd; return 2; }

static sf_status cf_add(sf_call_t call, void *context) {
    int64_t a, b;
    if (sf_call_getArgument(call, 0, &a, 8) || sf_call_getArgument(call, 1, &b, 8)) return SF_ERR_INVALID_ARGUMENT;
    int64_t sum = a + b + *(int64_t *)context;
    return sf_call_setReturnValue(call, &sum, 8);
}

static int released;
static void cf_release(void *context) { (void)context; released++; }

int cf_scenario_runtime_api(const char *name) {
    char n[256];
    snprintf(n, sizeof n, "%s.Root", name);
    sf_class_t root = sf_allocateClassPair(NULL, n);
    CHECK(root);
    sf_registerClassPair(root);
    snprintf(n, sizeof n, "%s.A", name);
    sf_class_t a = sf_allocateClassPair(root, n);
    sf_registerClassPair(a);
    snprintf(n, sizeof n, "%s.B", name);
    sf_class_t b = sf_allocateClassPair(root, n);
    sf_registerClassPair(b);
    CHECK(sf_class_addMethod(a, SEL("cfWho"), IMP(cf_who_a), "q@:") == SF_OK);
    CHECK(sf_class_addMethod(b, SEL("cfWho"), IMP(cf_who_b), "q@:") == SF_OK);
    snprintf(n, sizeof n, "%s.Sub", name);
    sf_class_t sub = sf_allocateClassPair(a, n);
    CHECK(sf_class_addIvar(sub, "c", 1, 0, "c"));
    sf_registerClassPair(sub);

    // class_setSuperclass: refused while an instance lives, then allowed; the cache follows.
    sf_id o = sf_class_createInstanceWithExtraBytes(sub, 40);
    CHECK(o);
    CHECK(((int64_t (*)(sf_id, sf_sel))sf_msg_lookup(o, SEL("cfWho")))(o, SEL("cfWho")) == 1);
    CHECK(sf_class_setSuperclass(sub, b) == NULL && sf_last_error() == SF_ERR_INCOMPATIBLE_CLASS);
    CHECK(sf_class_setSuperclass(sub, sub) == NULL && sf_last_error() == SF_ERR_INCOMPATIBLE_CLASS);
    CHECK(sf_class_setSuperclass(root, a) == NULL && sf_last_error() == SF_ERR_INCOMPATIBLE_CLASS);
    CHECK(sf_class_setSuperclass(sf_getMetaClass(sf_class_getName(sub)), b) == NULL);

    // Indexed ivars: after the ivars, 16-byte aligned, zeroed, ours to write.
    unsigned char *extra = sf_object_getIndexedIvars(o);
    CHECK(extra && (uintptr_t)extra % 16 == 0);
    CHECK((size_t)(extra - (unsigned char *)o) >= sf_class_getInstanceSize(sub));
    for (int i = 0; i < 40; i++) CHECK(extra[i] == 0);
    memset(extra, 0xAB, 40);
    CHECK(sf_object_getIndexedIvars(NULL) == NULL);

    // Association policies: assign does not retain, retain does, removal releases.
    sf_id v = sf_class_createInstance(root);
    static const char k1, k2;
    CHECK(sf_setAssociatedObjectWithPolicy(o, &k1, v, SF_ASSOCIATION_ASSIGN) == SF_OK);
    CHECK(sf_object_retainCount(v) == 1);
    CHECK(sf_setAssociatedObjectWithPolicy(o, &k2, v, SF_ASSOCIATION_RETAIN_NONATOMIC) == SF_OK);
    CHECK(sf_object_retainCount(v) == 2);
    sf_id copy = sf_copyAssociatedObject(o, &k2);
    CHECK(copy == v && sf_object_retainCount(v) == 3);
    sf_release(copy);
    CHECK(sf_setAssociatedObjectWithPolicy(o, &k1, v, (sf_association_policy)7) == SF_ERR_INVALID_ARGUMENT);
    sf_removeAssociatedObjects(o);
    CHECK(sf_object_retainCount(v) == 1 && sf_getAssociatedObject(o, &k2) == NULL);

    sf_release(o);
    CHECK(sf_class_setSuperclass(sub, b) == a);
    o = sf_class_createInstance(sub);
    CHECK(((int64_t (*)(sf_id, sf_sel))sf_msg_lookup(o, SEL("cfWho")))(o, SEL("cfWho")) == 2);

    // method_invoke: A's method on an instance of Sub (now B's subclass) is refused.
    sf_method_t whoA = sf_class_getInstanceMethod(a, SEL("cfWho"));
    int64_t r = 0;
    CHECK(sf_method_invoke(whoA, o, &r, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_method_invoke(sf_class_getInstanceMethod(b, SEL("cfWho")), o, &r, NULL) == SF_OK && r == 2);

    // Properties: good and malformed attribute strings.
    sf_property_attribute_t attrs[] = {{"T", "@\"Thing\""}, {"&", ""}, {"N", ""}, {"V", "_thing"}};
    CHECK(sf_class_addProperty(sub, "thing", attrs, 4));
    CHECK(strcmp(sf_property_getAttributes(sf_class_getProperty(sub, "thing")), "T@\"Thing\",&,N,V_thing") == 0);
    CHECK(!sf_class_addPropertyWithAttributes(sub, "bad", "Tq,N,N") && sf_last_error() == SF_ERR_BAD_ENCODING);
    CHECK(!sf_class_addPropertyWithAttributes(sub, "bad", "Tq,C,&") && sf_last_error() == SF_ERR_BAD_ENCODING);
    CHECK(sf_class_getProperty(sub, "bad") == NULL);

    // An IMP from a function, bound to no class: two classes, removed twice.
    static int64_t bias = 100;  // outlives the scenario: the class keeps the IMP and its context
    released = 0;
    sf_imp add = sf_imp_implementationWithFunction("q@:qq", cf_add, &bias, cf_release);
    CHECK(add);
    void *ctx = NULL;
    CHECK(sf_imp_getFunction(add, &ctx) == cf_add && ctx == &bias);
    CHECK(sf_class_addMethod(a, SEL("cfAdd:to:"), add, "q@:qq") == SF_OK);
    CHECK(sf_class_addMethod(b, SEL("cfAdd:to:"), add, "v@:") == SF_ERR_SIGNATURE_MISMATCH);
    CHECK(sf_imp_removeFunction(add));
    CHECK(!sf_imp_removeFunction(add) && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    sf_id x = sf_class_createInstance(a);
    CHECK(((int64_t (*)(sf_id, sf_sel, int64_t, int64_t))sf_msg_lookup(x, SEL("cfAdd:to:")))(x, SEL("cfAdd:to:"), 2, 3) == 105);
    CHECK(released == 0);  // the method still holds it

    // long double through a C function IMP: a direct call and sf_msg_send (libffi's ffi_call).
    CHECK(sf_class_addMethod(a, SEL("cfMean:with:"), IMP(cf_mean), "D@:DD") == SF_OK);
    long double p = 1.0L + 3 * 1.0842021724855044340e-19L, q = 3.0L, out = 0;
    void *args[] = {&p, &q};
    CHECK(sf_msg_send(x, SEL("cfMean:with:"), &out, args) == SF_OK);
    CHECK(out == (p + q) / 2);
    CHECK(((long double (*)(sf_id, sf_sel, long double, long double))sf_msg_lookup(x, SEL("cfMean:with:")))(
              x, SEL("cfMean:with:"), p, p) == p);
    sf_release(x);
    sf_release(o);
    sf_release(v);
    return 0;
}
