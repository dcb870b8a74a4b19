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

long sfb_loop_lookup_missing(sf_id obj, sf_sel sel, long n) {
    long missing = 0;
    for (; n > 0; n--) {
        if (sf_msg_lookup(obj, sel) == NULL) missing++;
    }
    return missing;
}
