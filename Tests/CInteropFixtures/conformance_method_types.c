// Method type introspection from C: objc4 test/methodArgs.m, through the public header only.
#include "CInteropFixtures.h"

#include <stdlib.h>
#include <string.h>

#include "conformance_check.h"

static sf_id cf_method_two(sf_id self, sf_sel cmd, int a, void *b) {
    (void)cmd, (void)a, (void)b;
    return self;
}

// dst gets the type and is zero-filled to dst_len; nothing is written past it.
static int cf_check_get(const char *type, void (*get)(const char *, char *, size_t), const char *arg) {
    char buf[128];
    memset(buf, 1, sizeof buf);
    get(arg, buf, 1 + strlen(type));
    CHECK(strcmp(type, buf) == 0);
    CHECK(buf[1 + strlen(type)] == 1);
    memset(buf, 1, sizeof buf);
    get(arg, buf, 2);
    CHECK(strncmp(type, buf, 2) == 0);
    CHECK(buf[2] == 1);
    return 0;
}

static sf_method_t cf_m;
static void cf_get_arg(const char *index, char *dst, size_t len) { sf_method_getArgumentType(cf_m, (unsigned)atoi(index), dst, len); }
static void cf_get_ret(const char *unused, char *dst, size_t len) { (void)unused; sf_method_getReturnType(cf_m, dst, len); }

int cf_scenario_method_types(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(cls);
    sf_registerClassPair(cls);
    sf_class_t meta = sf_getMetaClass(name);
    CHECK(sf_class_addMethod(meta, SEL("method::"), IMP(cf_method_two), "@28@0:8i16^v20") == SF_OK);
    sf_method_t m = sf_class_getClassMethod(cls, SEL("method::"));
    CHECK(m);
    cf_m = m;
    CHECK(sf_method_getNumberOfArguments(m) == 4);

    const char *expected[] = {"@", ":", "i", "^v"};
    const char *index[] = {"0", "1", "2", "3"};
    for (unsigned i = 0; i < 4; i++) {
        char *arg = sf_method_copyArgumentType(m, i);
        CHECK(arg && strcmp(arg, expected[i]) == 0);
        int failed = cf_check_get(arg, cf_get_arg, index[i]);
        free(arg);
        if (failed) return failed;
    }
    CHECK(sf_method_copyArgumentType(m, 4) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_method_copyArgumentType(m, (unsigned)-1) == NULL);

    char buf[128];
    memset(buf, 1, sizeof buf);
    sf_method_getArgumentType(m, 4, buf, 127);
    CHECK(buf[0] == 0 && buf[1] == 0 && buf[126] == 0 && buf[127] == 1);
    memset(buf, 1, sizeof buf);
    sf_method_getArgumentType(m, (unsigned)-1, buf, 127);
    CHECK(buf[0] == 0 && buf[127] == 1);

    char *ret = sf_method_copyReturnType(m);
    CHECK(ret && strcmp(ret, "@") == 0);
    int failed = cf_check_get(ret, cf_get_ret, NULL);
    free(ret);
    if (failed) return failed;
    CHECK(strcmp(sf_method_getTypeEncoding(m), "@@:i^v") == 0);

    // NULL method and NULL buffers: zeros, or nothing, never a crash.
    CHECK(sf_method_getNumberOfArguments(NULL) == 0);
    CHECK(sf_method_copyArgumentType(NULL, 10) == NULL);
    CHECK(sf_method_copyReturnType(NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    memset(buf, 1, sizeof buf);
    sf_method_getArgumentType(NULL, 1, buf, 127);
    CHECK(buf[0] == 0 && buf[1] == 0 && buf[127] == 1);
    memset(buf, 1, sizeof buf);
    sf_method_getArgumentType(NULL, 1, buf, 0);
    CHECK(buf[0] == 1 && buf[1] == 1);
    sf_method_getArgumentType(m, 1, NULL, 128);
    sf_method_getArgumentType(NULL, 1, NULL, 0);
    memset(buf, 1, sizeof buf);
    sf_method_getReturnType(NULL, buf, 127);
    CHECK(buf[0] == 0 && buf[127] == 1);
    memset(buf, 1, sizeof buf);
    sf_method_getReturnType(NULL, buf, 0);
    CHECK(buf[0] == 1);
    sf_method_getReturnType(m, NULL, 128);
    sf_method_getReturnType(NULL, NULL, 0);

    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}
