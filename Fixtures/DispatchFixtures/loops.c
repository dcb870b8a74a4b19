// Measurement loops written in C, so the C API is measured as a C caller uses it. They count
// down so that the loop state fits in callee-saved registers (nothing spills to the stack).
#include "DispatchFixtures.h"

long sfb_loop_direct(sfb_add_imp imp, sf_id obj, sf_sel sel, long n) {
    long acc = 0;
    for (; n > 0; n--) acc += imp(obj, sel, n, 1);
    return acc;
}

long sfb_loop_lookup_call(sf_id obj, sf_sel sel, long n) {
    long acc = 0;
    for (; n > 0; n--) {
        sfb_add_imp imp = (sfb_add_imp)sf_msg_lookup(obj, sel);
        acc += imp(obj, sel, n, 1);
    }
    return acc;
}

long sfb_loop_retain_release(sf_id obj, long n) {
    for (; n > 0; n--) sf_release(sf_retain(obj));
    return (long)sf_object_retainCount(obj);
}

long sfb_loop_lookup_missing(sf_id obj, sf_sel sel, long n) {
    long missing = 0;
    for (; n > 0; n--) {
        if (sf_msg_lookup(obj, sel) == NULL) missing++;
    }
    return missing;
}

sf_status sfb_hook_proceed(sf_call_t call, void *context) {
    (void)context;
    return sf_call_proceed(call);
}

long sfb_loop_hook_toggle(sf_class_t cls, sf_sel sel, long n) {
    long done = 0;
    for (; n > 0; n--) {
        sf_hook_token t = sf_class_hookMethod(cls, sel, SF_HOOK_INSTEAD, NULL, sfb_hook_proceed, NULL);
        if (t != 0 && sf_hook_remove(t) == SF_OK) done++;
    }
    return done;
}

long sfb_loop_rule_toggle(sf_rule_t rule, long n) {
    long done = 0;
    for (; n > 0; n--) {
        if (sf_rule_apply(rule) == SF_OK && sf_rule_discard(rule, SF_PENDING_CANCEL) == SF_OK) done++;
    }
    return done;
}
