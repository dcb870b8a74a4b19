// Blocks (`@?`) and C arrays (`[N type]`) from C, through the public header only: ivars laid
// out as the C compiler lays out the same members, array arguments passed as pointers, object
// arrays held strongly, malformed encodings refused.
#include "CInteropFixtures.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "conformance_check.h"

// The ivars below, as a C struct: the runtime's offsets from the first ivar must match.
struct cf_enc_ivars {
    char flag;
    void *objects[16];
    int ints[4];
    struct { char c[3]; double d; } mixed;
    short grid[2][3];
    void *handler;  // a block
};

static long long cf_enc_sum(sf_id self, sf_sel cmd, const int *values, sf_id block) {
    (void)self, (void)cmd;
    return values[0] + values[1] + values[2] + values[3] + (block ? 1000 : 0);
}

static void cf_enc_gone(sf_id obj, void *context) {
    (void)obj;
    (*(int *)context)++;
}

#define CF_ADD_IVAR(cls, member, types)                                                            \
    sf_class_addIvar(cls, #member, sizeof(((struct cf_enc_ivars *)0)->member),                  \
                     (uint8_t)__builtin_ctz(_Alignof(__typeof__(((struct cf_enc_ivars *)0)->member))), types)

int cf_scenario_block_array_encodings(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(cls);
    CHECK(CF_ADD_IVAR(cls, flag, "c"));
    CHECK(CF_ADD_IVAR(cls, objects, "[16@]"));
    CHECK(CF_ADD_IVAR(cls, ints, "[4i]"));
    CHECK(CF_ADD_IVAR(cls, mixed, "{?=[3c]d}"));
    CHECK(CF_ADD_IVAR(cls, grid, "[2[3s]]"));
    CHECK(CF_ADD_IVAR(cls, handler, "@?"));
    // A size other than the type's, and malformed arrays, are refused naming the encoding.
    CHECK(!sf_class_addIvar(cls, "wrong", 8, 2, "[4i]"));
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(sf_last_error_message(), "16 bytes") != NULL);
    const char *bad[] = {"[16", "[x@]", "[4]", "[4i", "[4iq]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(!sf_class_addIvar(cls, "bad", 16, 2, bad[i]));
        CHECK(sf_last_error() == SF_ERR_BAD_ENCODING);
        CHECK(strstr(sf_last_error_message(), bad[i]) != NULL);
    }
    CHECK(sf_class_addMethod(cls, SEL("cfSum:block:"), IMP(cf_enc_sum), "q@:[4i]@?") == SF_OK);
    sf_registerClassPair(cls);

    ptrdiff_t base = sf_class_getIvarOffset(cls, "flag");
    CHECK(base > 0 && base % 8 == 0);
    CHECK(sf_class_getIvarOffset(cls, "objects") - base == (ptrdiff_t)offsetof(struct cf_enc_ivars, objects));
    CHECK(sf_class_getIvarOffset(cls, "ints") - base == (ptrdiff_t)offsetof(struct cf_enc_ivars, ints));
    CHECK(sf_class_getIvarOffset(cls, "mixed") - base == (ptrdiff_t)offsetof(struct cf_enc_ivars, mixed));
    CHECK(sf_class_getIvarOffset(cls, "grid") - base == (ptrdiff_t)offsetof(struct cf_enc_ivars, grid));
    CHECK(sf_class_getIvarOffset(cls, "handler") - base == (ptrdiff_t)offsetof(struct cf_enc_ivars, handler));
    CHECK(sf_class_getInstanceSize(cls) == (size_t)base + sizeof(struct cf_enc_ivars));
    unsigned int count = 0;
    sf_ivar_description *ivars = sf_class_copyIvarList(cls, &count);
    CHECK(ivars && count == 6);
    CHECK(strcmp(ivars[1].types, "[16@]") == 0 && ivars[1].size == 128);
    CHECK(strcmp(ivars[4].types, "[2[3s]]") == 0 && ivars[4].size == 12);
    CHECK(strcmp(ivars[5].types, "@?") == 0 && ivars[5].size == 8);
    sf_free(ivars);

    // The method's types as written; the array argument is a pointer to its first element.
    sf_method_t m = sf_class_getInstanceMethod(cls, SEL("cfSum:block:"));
    CHECK(m);
    char buf[16];
    sf_method_getArgumentType(m, 2, buf, sizeof buf);
    CHECK(strcmp(buf, "[4i]") == 0);
    sf_method_getArgumentType(m, 3, buf, sizeof buf);
    CHECK(strcmp(buf, "@?") == 0);
    sf_id obj = sf_class_createInstance(cls);
    sf_id block = sf_class_createInstance(cls);
    CHECK(obj && block);
    int values[4] = {1, 2, 3, 4};
    const int *vp = values;
    void *args[] = {&vp, &block};
    long long r = 0;
    CHECK(sf_msg_send(obj, SEL("cfSum:block:"), &r, args) == SF_OK);
    CHECK(r == 1010);

    // An invocation retains a block argument as it retains an object.
    sf_invocation_t inv = sf_invocation_create(obj, SEL("cfSum:block:"), "q@:[4i]@?");
    CHECK(inv);
    CHECK(sf_invocation_setArgument(inv, 0, &vp, sizeof vp) == SF_OK);
    CHECK(sf_invocation_setArgument(inv, 1, &block, sizeof block) == SF_OK);
    size_t before = sf_object_retainCount(block);
    CHECK(sf_invocation_retainArguments(inv) == SF_OK);
    CHECK(sf_object_retainCount(block) == before + 1);
    CHECK(sf_invocation_invoke(inv) == SF_OK);
    CHECK(sf_invocation_getReturnValue(inv, &r, sizeof r) == SF_OK);
    CHECK(r == 1010);
    CHECK(sf_invocation_release(inv) == SF_OK);
    CHECK(sf_object_retainCount(block) == before);

    // The object array's slots and the block ivar are strong: released with their owner.
    int gone = 0;
    sf_id held[3];
    for (int i = 0; i < 3; i++) {
        held[i] = sf_class_createInstance(cls);
        CHECK(held[i]);
        CHECK(sf_object_addDeallocObserver(held[i], cf_enc_gone, &gone) != 0);
    }
    sf_id *slots = sf_object_getIvarPointer(obj, sf_class_getIvarOffset(cls, "objects"));
    slots[0] = held[0];
    slots[15] = held[1];
    *(sf_id *)sf_object_getIvarPointer(obj, sf_class_getIvarOffset(cls, "handler")) = held[2];
    CHECK(gone == 0);
    sf_release(obj);
    CHECK(gone == 3);
    sf_release(block);
    return 0;
}
