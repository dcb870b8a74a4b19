// The process-wide forward handler from C: objc4 test/forward.m's objc_setForwardHandler
// part, through the public header only. Integer and double arguments past the registers
// reach the handler intact, and its answer is the result of each return kind.
#include "CInteropFixtures.h"

#include <string.h>

#include "conformance_check.h"

#define CF_FH_TYPES_LL "q@:qqqqqqqqddddddddd"
#define CF_FH_TYPES_FP "d@:qqqqqqqqddddddddd"

typedef long long (*cf_fh_ll)(sf_id, sf_sel, long long, long long, long long, long long, long long, long long,
                              long long, long long, double, double, double, double, double, double, double,
                              double, double);
typedef double (*cf_fh_fp)(sf_id, sf_sel, long long, long long, long long, long long, long long, long long,
                           long long, long long, double, double, double, double, double, double, double,
                           double, double);

struct cf_fh_state {
    sf_id receiver;
    int calls;
    int bad_arguments;
};

static const char *cf_fh_signature(sf_id obj, sf_sel sel, void *context) {
    (void)obj, (void)context;
    const char *name = sf_sel_getName(sel);
    if (strcmp(name, "cfLongs::::::::::::::::::") == 0) return CF_FH_TYPES_LL;
    if (strcmp(name, "cfDoubles::::::::::::::::::") == 0) return CF_FH_TYPES_FP;
    return NULL;
}

// Checks arguments 1…8 and 1.0…9.0, then answers their sum (as a long long or a double).
static bool cf_fh_handler(sf_id receiver, sf_sel sel, sf_invocation_t inv, void *context) {
    struct cf_fh_state *state = context;
    state->calls++;
    if (receiver != state->receiver || sf_invocation_getTarget(inv) != receiver || sf_invocation_getSelector(inv) != sel)
        state->bad_arguments++;
    const char *types = sf_invocation_getTypeEncoding(inv);
    if (!types || sf_invocation_getArgumentCount(inv) != 17) return false;
    double sum = 0;
    for (size_t i = 0; i < 8; i++) {
        long long v = 0;
        if (sf_invocation_getArgument(inv, i, &v, sizeof v) != SF_OK || v != (long long)i + 1) state->bad_arguments++;
        sum += (double)v;
    }
    for (size_t i = 0; i < 9; i++) {
        double v = 0;
        if (sf_invocation_getArgument(inv, 8 + i, &v, sizeof v) != SF_OK || v != (double)i + 1) state->bad_arguments++;
        sum += v;
    }
    if (types[0] == 'q') {
        long long r = (long long)sum;
        return sf_invocation_setReturnValue(inv, &r, sizeof r) == SF_OK;
    }
    if (types[0] == 'd') return sf_invocation_setReturnValue(inv, &sum, sizeof sum) == SF_OK;
    return false;
}

static bool cf_fh_decline(sf_id receiver, sf_sel sel, sf_invocation_t inv, void *context) {
    (void)receiver, (void)sel, (void)inv;
    ((struct cf_fh_state *)context)->calls++;
    return false;
}

int cf_scenario_forward_handler(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(cls);
    sf_registerClassPair(cls);
    CHECK(sf_class_setMethodSignature(cls, cf_fh_signature, NULL) == SF_OK);
    sf_id obj = sf_class_createInstance(cls);
    CHECK(obj);
    struct cf_fh_state state = {obj, 0, 0};
    sf_sel longs = SEL("cfLongs::::::::::::::::::"), doubles = SEL("cfDoubles::::::::::::::::::");
    long long l[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    double d[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    void *args[17];
    for (int i = 0; i < 8; i++) args[i] = &l[i];
    for (int i = 0; i < 9; i++) args[8 + i] = &d[i];

    // The default: nothing answers.
    long long ll = -1;
    CHECK(sf_msg_send(obj, longs, &ll, args) == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(strstr(sf_last_error_message(), "cfLongs") != NULL);

    sf_setForwardHandler(cf_fh_handler, &state);
    // sf_msg_send and the forwarding IMP called directly, for each return kind.
    CHECK(sf_msg_send(obj, longs, &ll, args) == SF_OK);
    CHECK(ll == 81);
    double fp = -1;
    CHECK(sf_msg_send(obj, doubles, &fp, args) == SF_OK);
    CHECK(fp == 81.0);
    ll = ((cf_fh_ll)sf_msgForward)(obj, longs, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    CHECK(ll == 81);
    CHECK(sf_last_error() == SF_OK);
    fp = ((cf_fh_fp)sf_msgForward)(obj, doubles, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    CHECK(fp == 81.0);
    CHECK(state.calls == 4);
    CHECK(state.bad_arguments == 0);

    // A selector the class gives no types for: the handler is not asked.
    CHECK(sf_msg_send(obj, SEL("cfUntyped"), &ll, NULL) == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(state.calls == 4);

    // Declining leaves the error; NULL restores the default.
    struct cf_fh_state declined = {obj, 0, 0};
    sf_setForwardHandler(cf_fh_decline, &declined);
    CHECK(sf_msg_send(obj, longs, &ll, args) == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(declined.calls == 1);
    sf_setForwardHandler(NULL, NULL);
    CHECK(sf_msg_send(obj, longs, &ll, args) == SF_ERR_UNRECOGNIZED_SELECTOR);
    CHECK(declined.calls == 1);
    CHECK(state.calls == 4);

    sf_release(obj);
    return 0;
}
