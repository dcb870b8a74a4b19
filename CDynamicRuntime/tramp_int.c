// Thunks for throwing Swift closures `(ObjectRef, Int…) throws -> Int` of 0-3 arguments, the
// targets of their slots (see sf_tramp.h). Written in C with Swift's calling convention for the
// call (the context in %r13, the error in %r12) so that no Swift thunk, with its @objc wrapper
// and frame, stands between the slot and the closure.
#include "sf_tramp.h"
#include "sf_private.h"
#include <stdatomic.h>

#define SF_SWIFTCALL __attribute__((swiftcall))
#define SF_CONTEXT __attribute__((swift_context))
#define SF_ERROR __attribute__((swift_error_result))

typedef intptr_t (*int_body0)(sf_id, void *SF_CONTEXT, void **SF_ERROR) SF_SWIFTCALL;
typedef intptr_t (*int_body1)(sf_id, intptr_t, void *SF_CONTEXT, void **SF_ERROR) SF_SWIFTCALL;
typedef intptr_t (*int_body2)(sf_id, intptr_t, intptr_t, void *SF_CONTEXT, void **SF_ERROR) SF_SWIFTCALL;
typedef intptr_t (*int_body3)(sf_id, intptr_t, intptr_t, intptr_t, void *SF_CONTEXT, void **SF_ERROR) SF_SWIFTCALL;

static _Atomic(sf_tramp_int_failure_fn) failure;

void sf_tramp_set_int_failure(sf_tramp_int_failure_fn fn) { atomic_store_explicit(&failure, fn, memory_order_release); }

/* A thrown error (owned) goes to Swift, which names the method from the closure (its owner:
 * the thunk never reads the receiver, which C may pass as any word and the body may free),
 * records it for C and leaves it pending for the sender; the C caller gets zero. */
__attribute__((noinline, cold)) static intptr_t failed(void *error, const struct sf_swift_closure *c, sf_sel sel) {
    atomic_load_explicit(&failure, memory_order_acquire)(error, c, sel);
    return 0;
}

intptr_t sf_tramp_int_throwing0(sf_id self, sf_sel sel, const struct sf_swift_closure *c) {
    void *error = NULL;
    intptr_t r = ((int_body0)c->function)(self, (void *)c->context, &error);
    return __builtin_expect(error != NULL, 0) ? failed(error, c, sel) : r;
}

intptr_t sf_tramp_int_throwing1(sf_id self, sf_sel sel, intptr_t a, const struct sf_swift_closure *c) {
    void *error = NULL;
    intptr_t r = ((int_body1)c->function)(self, a, (void *)c->context, &error);
    return __builtin_expect(error != NULL, 0) ? failed(error, c, sel) : r;
}

intptr_t sf_tramp_int_throwing2(sf_id self, sf_sel sel, intptr_t a, intptr_t b, const struct sf_swift_closure *c) {
    void *error = NULL;
    intptr_t r = ((int_body2)c->function)(self, a, b, (void *)c->context, &error);
    return __builtin_expect(error != NULL, 0) ? failed(error, c, sel) : r;
}

intptr_t sf_tramp_int_throwing3(sf_id self, sf_sel sel, intptr_t a, intptr_t b, intptr_t c3,
                                const struct sf_swift_closure *c) {
    void *error = NULL;
    intptr_t r = ((int_body3)c->function)(self, a, b, c3, (void *)c->context, &error);
    return __builtin_expect(error != NULL, 0) ? failed(error, c, sel) : r;
}
