// Hooks, calls and C-function methods through the C API.
#include "CInteropFixtures.h"
#include "capi_check.h"
#include <stdatomic.h>

char fx_capi_failure_text[1024];
const char *fx_capi_failure(void) { return fx_capi_failure_text; }

static int released;
int fx_capi_released_contexts(void) { return released; }
static void release_context(void *context) { released += context != NULL; }

/* -add: as a C function: adds its argument to the long the context points at. */
static sf_status add_fn(sf_call_t call, void *context) {
    long *total = context, amount;
    sf_status s = sf_call_getArgument(call, 0, &amount, sizeof amount);
    if (s) return s;
    *total += amount;
    return sf_call_setReturnValue(call, total, sizeof *total);
}

long fx_capi_send_long(sf_id obj, const char *sel, long arg, sf_status *status) {
    long result = -1;
    void *args[] = { &arg };
    *status = sf_msg_send(obj, SEL(sel), &result, args);
    return result;
}

struct trace { char log[64]; int n; sf_call_t saved; long seen; };
static void note(struct trace *t, char c) { if (t->n < 63) t->log[t->n++] = c; t->log[t->n] = 0; }

static sf_status before_fn(sf_call_t call, void *context) {
    struct trace *t = context;
    note(t, 'b');
    t->saved = call;
    sf_call_getArgument(call, 0, &t->seen, sizeof t->seen);
    return SF_OK;
}

static sf_status instead_fn(sf_call_t call, void *context) {
    struct trace *t = context;
    note(t, 'i');
    long amount;
    if (sf_call_getArgument(call, 0, &amount, sizeof amount)) return sf_last_error();
    amount *= 10;
    if (sf_call_setArgument(call, 0, &amount, sizeof amount)) return sf_last_error();
    return sf_call_proceed(call);
}

static sf_status after_fn(sf_call_t call, void *context) {
    struct trace *t = context;
    note(t, 'a');
    long r;
    if (sf_call_getReturnValue(call, &r, sizeof r)) return sf_last_error();
    r += 1000;
    return sf_call_setReturnValue(call, &r, sizeof r);
}

static sf_status drop_fn(sf_call_t call, void *context) { (void)call; note(context, 'd'); return SF_OK; }
static sf_status failing_fn(sf_call_t call, void *context) { (void)call; (void)context; return SF_ERR_INVALID_ARGUMENT; }

/* Bad uses of the call handle from inside a callback. */
static sf_status probing_fn(sf_call_t call, void *context) {
    int *bad = context;
    long v = 0; int i = 0; char c;
    if (sf_call_getArgument(call, 1, &v, sizeof v) != SF_ERR_INVALID_ARGUMENT) *bad = __LINE__;       /* index */
    if (sf_call_getArgument(call, (size_t)-1, &v, sizeof v) != SF_ERR_INVALID_ARGUMENT) *bad = __LINE__;
    if (sf_call_getArgument(call, 0, &i, sizeof i) != SF_ERR_SIGNATURE_MISMATCH) *bad = __LINE__;    /* size */
    if (!contains(sf_last_error_message(), "4 bytes")) *bad = __LINE__;
    if (sf_call_setArgument(call, 0, &c, 1) != SF_ERR_SIGNATURE_MISMATCH) *bad = __LINE__;
    if (sf_call_getArgument(call, 0, NULL, sizeof v) != SF_ERR_INVALID_ARGUMENT) *bad = __LINE__;
    if (sf_call_getReturnValue(call, &i, sizeof i) != SF_ERR_SIGNATURE_MISMATCH) *bad = __LINE__;
    if (sf_call_setReturnValue(call, NULL, sizeof v) != SF_ERR_INVALID_ARGUMENT) *bad = __LINE__;
    if (sf_call_getArgumentCount(call) != 1) *bad = __LINE__;
    if (strcmp(sf_call_getTypeEncoding(call), "q@:q") != 0) *bad = __LINE__;
    return SF_OK;
}

/* A registered class named `name` whose add: (a C function) sums into `total`. */
static sf_class_t adder_class(const char *name, long *total) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    if (!cls) return NULL;
    if (sf_class_addMethodWithFunction(cls, SEL("add:"), "q@:q", add_fn, total, NULL) != SF_OK) {
        sf_disposeClassPair(cls);
        return NULL;
    }
    sf_registerClassPair(cls);
    return cls;
}

int fx_capi_hooks(const char *name) {
    long total = 0;
    sf_status st;
    struct trace t = { .n = 0 };
    sf_class_t cls = adder_class(name, &total);
    CHECK(cls);
    sf_id obj = sf_class_createInstance(cls);

    sf_hook_token b = sf_class_hookMethod(cls, SEL("add:"), SF_HOOK_BEFORE, "q@:q", before_fn, &t);
    sf_hook_token i = sf_class_hookMethod(cls, SEL("add:"), SF_HOOK_INSTEAD, NULL, instead_fn, &t);
    sf_hook_token a = sf_class_hookMethod(cls, SEL("add:"), SF_HOOK_AFTER, NULL, after_fn, &t);
    CHECK(b && i && a && b != i && i != a);
    CHECK(sf_hook_isActive(b) && sf_hook_isActive(i) && sf_hook_isActive(a));
    CHECK(fx_capi_send_long(obj, "add:", 3, &st) == 1030 && st == SF_OK);  /* 3*10 added, +1000 after */
    CHECK(strcmp(t.log, "bia") == 0 && t.seen == 3 && total == 30);

    /* The call handle dies with its callback. */
    CHECK(t.saved != NULL);
    CHECK(sf_call_getTarget(t.saved) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(contains(sf_last_error_message(), "expected a call in progress on this thread"));
    long v;
    CHECK(sf_call_getArgument(t.saved, 0, &v, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_call_proceed(t.saved) == SF_ERR_INVALID_ARGUMENT);

    /* Remove by token, once; the method is restored. */
    CHECK(sf_hook_remove(i) == SF_OK && sf_hook_remove(a) == SF_OK);
    CHECK(sf_hook_remove(i) == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), "expected an installed hook token"));
    CHECK(!sf_hook_isActive(i));
    t.n = 0;
    CHECK(fx_capi_send_long(obj, "add:", 2, &st) == 32 && st == SF_OK && strcmp(t.log, "b") == 0);
    CHECK(sf_hook_remove(b) == SF_OK);

    /* An instead-hook that does not proceed drops the call: zero comes back. */
    sf_hook_token d = sf_class_hookMethod(cls, SEL("add:"), SF_HOOK_INSTEAD, NULL, drop_fn, &t);
    CHECK(fx_capi_send_long(obj, "add:", 5, &st) == 0 && st == SF_OK && total == 32);
    CHECK(sf_hook_remove(d) == SF_OK);

    /* A failing hook fails the send, naming the class and selector. */
    sf_hook_token f = sf_class_hookMethod(cls, SEL("add:"), SF_HOOK_BEFORE, NULL, failing_fn, NULL);
    fx_capi_send_long(obj, "add:", 1, &st);
    CHECK(st == SF_ERR_HOOK && contains(sf_last_error_message(), name) && contains(sf_last_error_message(), "add:"));
    CHECK(sf_hook_remove(f) == SF_OK);

    /* Wrong indices and sizes inside a callback are refused. */
    int bad = 0;
    sf_hook_token p = sf_class_hookMethod(cls, SEL("add:"), SF_HOOK_AFTER, NULL, probing_fn, &bad);
    CHECK(fx_capi_send_long(obj, "add:", 1, &st) == 33 && st == SF_OK);
    CHECK(bad == 0);
    CHECK(sf_hook_remove(p) == SF_OK);

    sf_release(obj);
    return 0;
}

int fx_capi_hook_bad_input(const char *name) {
    long total = 0;
    struct trace t = { .n = 0 };
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("add:"), "q@:q", add_fn, &total, NULL) == SF_OK);
    sf_registerClassPair(cls);
    sf_id obj = sf_class_createInstance(cls);

    CHECK(sf_class_hookMethod(NULL, SEL("add:"), SF_HOOK_BEFORE, NULL, before_fn, &t) == 0);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), "expected a class, got NULL"));
    CHECK(sf_class_hookMethod(cls, NULL, SF_HOOK_BEFORE, NULL, before_fn, &t) == 0);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), name));
    CHECK(sf_class_hookMethod(cls, SEL("add:"), SF_HOOK_BEFORE, NULL, NULL, &t) == 0);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), "add:"));
    CHECK(sf_class_hookMethod(cls, SEL("add:"), (sf_hook_position)7, NULL, before_fn, &t) == 0);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), "position 7"));
    CHECK(sf_class_hookMethod(cls, SEL("nothing"), SF_HOOK_BEFORE, NULL, before_fn, &t) == 0);
    CHECK(sf_last_error() == SF_ERR_HOOK && contains(sf_last_error_message(), "nothing"));
    CHECK(sf_class_hookMethod(cls, SEL("add:"), SF_HOOK_BEFORE, "d@:d", before_fn, &t) == 0);
    CHECK(sf_last_error() == SF_ERR_SIGNATURE_MISMATCH && contains(sf_last_error_message(), "q@:q"));
    CHECK(sf_object_hookMethod(NULL, SEL("add:"), SF_HOOK_BEFORE, NULL, before_fn, &t) == 0);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_hook_remove(0) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_hook_remove(UINT64_MAX) == SF_ERR_INVALID_ARGUMENT);
    CHECK(!sf_hook_isActive(0));

    /* Every sf_call_ function refuses NULL. */
    long v;
    CHECK(sf_call_getTarget(NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_call_getSelector(NULL) == NULL && sf_call_getTypeEncoding(NULL) == NULL);
    CHECK(sf_call_getArgumentCount(NULL) == -1);
    CHECK(sf_call_getArgument(NULL, 0, &v, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_call_setArgument(NULL, 0, &v, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_call_getReturnValue(NULL, &v, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_call_setReturnValue(NULL, &v, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_call_proceed(NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_call_copyInvocation(NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    /* A pointer that was never a call. */
    CHECK(sf_call_proceed((sf_call_t)&v) == SF_ERR_INVALID_ARGUMENT);

    sf_release(obj);
    return 0;
}

int fx_capi_object_hooks(const char *name) {
    long total = 0;
    sf_status st;
    struct trace t = { .n = 0 };
    sf_class_t cls = adder_class(name, &total);
    CHECK(cls);
    sf_id hooked = sf_class_createInstance(cls), plain = sf_class_createInstance(cls);

    sf_hook_token h = sf_object_hookMethod(hooked, SEL("add:"), SF_HOOK_BEFORE, NULL, before_fn, &t);
    CHECK(h != 0);
    CHECK(sf_object_getClass(hooked) == cls);  /* the private subclass reports its superclass */
    fx_capi_send_long(plain, "add:", 1, &st);
    CHECK(st == SF_OK && t.n == 0);
    fx_capi_send_long(hooked, "add:", 1, &st);
    CHECK(st == SF_OK && strcmp(t.log, "b") == 0 && total == 2);
    CHECK(sf_hook_remove(h) == SF_OK && sf_hook_remove(h) == SF_ERR_INVALID_ARGUMENT);
    fx_capi_send_long(hooked, "add:", 1, &st);
    CHECK(st == SF_OK && t.n == 1 && total == 3);

    sf_release(hooked);
    sf_release(plain);
    return 0;
}

static sf_status failing_body(sf_call_t call, void *context) {
    (void)call; (void)context;
    return SF_ERR_INVALID_ARGUMENT;
}

/* A failed call through an IMP pointer leaves its error with C (sf_last_error) only: a hooked
 * method called through its pointer afterwards runs and returns as if nothing had failed, for
 * an original of each kind (a plain C function, a C-function method) and each register entry. */
int fx_capi_hook_after_failed_direct_call(const char *name) {
    long total = 0;
    struct trace t = { .n = 0 };
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(sf_class_addMethod(cls, SEL("sum:with:"), (sf_imp)fx_add, "q@:qq") == SF_OK);
    CHECK(sf_class_addMethod(cls, SEL("scale:by:"), (sf_imp)fx_scale, "d@:dd") == SF_OK);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("add:"), "q@:q", add_fn, &total, NULL) == SF_OK);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("fail:"), "q@:q", failing_body, NULL, NULL) == SF_OK);
    sf_registerClassPair(cls);
    sf_id obj = sf_class_createInstance(cls);
    sf_hook_token hooks[3] = {
        sf_class_hookMethod(cls, SEL("sum:with:"), SF_HOOK_BEFORE, NULL, before_fn, &t),
        sf_class_hookMethod(cls, SEL("scale:by:"), SF_HOOK_BEFORE, NULL, before_fn, &t),
        sf_class_hookMethod(cls, SEL("add:"), SF_HOOK_BEFORE, NULL, before_fn, &t),
    };
    CHECK(hooks[0] && hooks[1] && hooks[2]);
    long (*fail)(sf_id, sf_sel, long) = (long (*)(sf_id, sf_sel, long))sf_msg_lookup(obj, SEL("fail:"));
    long (*sum)(sf_id, sf_sel, long, long) = (long (*)(sf_id, sf_sel, long, long))sf_msg_lookup(obj, SEL("sum:with:"));
    double (*scale)(sf_id, sf_sel, double, double) = (double (*)(sf_id, sf_sel, double, double))sf_msg_lookup(obj, SEL("scale:by:"));
    long (*add)(sf_id, sf_sel, long) = (long (*)(sf_id, sf_sel, long))sf_msg_lookup(obj, SEL("add:"));
    CHECK(fail && sum && scale && add);

    CHECK(fail(obj, SEL("fail:"), 1) == 0 && sf_last_error() == SF_ERR_FORWARDING);
    CHECK(sum(obj, SEL("sum:with:"), 2, 3) == 5 && strcmp(t.log, "b") == 0);
    CHECK(fail(obj, SEL("fail:"), 1) == 0 && sf_last_error() == SF_ERR_FORWARDING);
    CHECK(scale(obj, SEL("scale:by:"), 1.5, 2) == 3.0 && strcmp(t.log, "bb") == 0);
    CHECK(fail(obj, SEL("fail:"), 1) == 0 && sf_last_error() == SF_ERR_FORWARDING);
    CHECK(add(obj, SEL("add:"), 4) == 4 && total == 4 && strcmp(t.log, "bbb") == 0);
    /* A send after it all starts clean too. */
    sf_status st;
    CHECK(fail(obj, SEL("fail:"), 1) == 0 && sf_last_error() == SF_ERR_FORWARDING);
    CHECK(fx_capi_send_long(obj, "add:", 1, &st) == 5 && st == SF_OK && strcmp(t.log, "bbbb") == 0);

    for (int i = 0; i < 3; i++) CHECK(sf_hook_remove(hooks[i]) == SF_OK);
    sf_release(obj);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

/* ---- C-function methods ---- */

static sf_status proceeding_body(sf_call_t call, void *context) {
    int *bad = context;
    if (sf_call_proceed(call) != SF_ERR_INVALID_ARGUMENT) *bad = __LINE__;   /* not a hook */
    if (!contains(sf_last_error_message(), "nothing to proceed to")) *bad = __LINE__;
    return SF_OK;
}

int fx_capi_function_methods(const char *name) {
    static long totals[3];
    sf_status st;
    int bad = 0;
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("add:"), "q@:q", add_fn, &totals[0], release_context) == SF_OK);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("add:"), "q@:q", add_fn, &totals[1], release_context) == SF_ERR_METHOD_EXISTS);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("probe"), "v@:", proceeding_body, &bad, NULL) == SF_OK);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("fail:"), "q@:q", failing_body, NULL, NULL) == SF_OK);
    CHECK(sf_class_addMethodWithFunction(NULL, SEL("x"), "v@:", add_fn, NULL, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_addMethodWithFunction(cls, NULL, "v@:", add_fn, NULL, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("x"), NULL, add_fn, NULL, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("x"), "v@:", NULL, NULL, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_addMethodWithFunction(cls, SEL("x"), "q@:{", add_fn, NULL, NULL) == SF_ERR_BAD_ENCODING);
    sf_registerClassPair(cls);
    sf_id obj = sf_class_createInstance(cls);

    CHECK(fx_capi_send_long(obj, "add:", 4, &st) == 4 && st == SF_OK && totals[0] == 4);
    CHECK(sf_msg_send(obj, SEL("probe"), NULL, NULL) == SF_OK && bad == 0);
    CHECK(fx_capi_send_long(obj, "fail:", 1, &st) == 0 && st == SF_ERR_FORWARDING);
    CHECK(contains(sf_last_error_message(), name) && contains(sf_last_error_message(), "fail:"));

    /* Replacing swaps the body; the old context is kept until the class goes. */
    CHECK(sf_class_replaceMethodWithFunction(cls, SEL("add:"), "q@:q", add_fn, &totals[1], release_context) == SF_OK);
    CHECK(fx_capi_send_long(obj, "add:", 5, &st) == 5 && totals[1] == 5 && totals[0] == 4);
    CHECK(sf_class_replaceMethodWithFunction(cls, SEL("add:"), "d@:d", add_fn, &totals[2], release_context) == SF_ERR_SIGNATURE_MISMATCH);

    sf_release(obj);
    CHECK(sf_disposeClassPair(cls) == SF_OK);
    return 0;
}

/* ---- for CAPIConcurrencyTests: a hook that only counts ---- */

static _Atomic long counting_calls;
sf_status fx_capi_counting_hook(sf_call_t call, void *context) {
    (void)call; (void)context;
    atomic_fetch_add_explicit(&counting_calls, 1, memory_order_relaxed);
    return SF_OK;
}
long fx_capi_counting_hook_calls(void) { return atomic_load(&counting_calls); }
