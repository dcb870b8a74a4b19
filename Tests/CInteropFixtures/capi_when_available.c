// Hooks asked for by class name before the class is registered, through the C API.
#include "CAPIScenarios.h"
#include "capi_check.h"
#include <stdio.h>

/* -value: answers its argument plus one. */
static sf_status value_fn(sf_call_t call, void *context) {
    (void)context;
    long x;
    sf_status s = sf_call_getArgument(call, 0, &x, sizeof x);
    if (s) return s;
    x += 1;
    return sf_call_setReturnValue(call, &x, sizeof x);
}

/* An after hook that adds 1000 and counts its calls in the long `context` points at. */
static sf_status plus_1000(sf_call_t call, void *context) {
    long r;
    ++*(long *)context;
    if (sf_call_getReturnValue(call, &r, sizeof r)) return sf_last_error();
    r += 1000;
    return sf_call_setReturnValue(call, &r, sizeof r);
}

static sf_status counting(sf_call_t call, void *context) { (void)call; ++*(long *)context; return SF_OK; }

static sf_class_t allocate(const char *name, int withValue) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    if (cls && withValue && sf_class_addMethodWithFunction(cls, SEL("value:"), "q@:q", value_fn, NULL, NULL) != SF_OK) return NULL;
    return cls;
}

static sf_imp value_imp(sf_class_t cls) { return sf_method_getImplementation(sf_class_getInstanceMethod(cls, SEL("value:"))); }

int fx_capi_when_available(const char *name) {
    char late[160], dropped[160], missing[160];
    snprintf(late, sizeof late, "%s_late", name);
    snprintf(dropped, sizeof dropped, "%s_dropped", name);
    snprintf(missing, sizeof missing, "%s_missing", name);
    sf_status st;

    /* Asked for before the class exists: it waits, and is on from the first send. */
    long runs = 0;
    sf_pending_hook_t p = sf_hook_whenAvailable(late, SEL("value:"), SF_HOOK_AFTER, "q@:q", plus_1000, &runs);
    CHECK(p != NULL && sf_last_error() == SF_OK);
    CHECK(sf_pending_hook_getState(p) == SF_PENDING_HOOK_WAITING && sf_last_error() == SF_OK);
    CHECK(sf_pending_hook_getToken(p) == 0 && sf_last_error() == SF_ERR_HOOK);
    CHECK(contains(sf_last_error_message(), late) && contains(sf_last_error_message(), "registered yet"));
    sf_class_t cls = allocate(late, 1);
    CHECK(cls != NULL);
    CHECK(sf_pending_hook_getState(p) == SF_PENDING_HOOK_WAITING);  /* allocated is not registered */
    sf_imp original = value_imp(cls);
    sf_registerClassPair(cls);
    CHECK(sf_pending_hook_getState(p) == SF_PENDING_HOOK_INSTALLED);
    sf_hook_token token = sf_pending_hook_getToken(p);
    CHECK(token != 0 && sf_hook_isActive(token));
    CHECK(value_imp(cls) != original);
    sf_id obj = sf_class_createInstance(cls);
    CHECK(fx_capi_send_long(obj, "value:", 1, &st) == 1002 && st == SF_OK && runs == 1);

    /* Removed as sf_hook_remove would: the exact original is back; again is harmless. */
    CHECK(sf_pending_hook_remove(p) == SF_OK);
    CHECK(sf_pending_hook_getState(p) == SF_PENDING_HOOK_REMOVED && !sf_hook_isActive(token));
    CHECK(value_imp(cls) == original);
    CHECK(fx_capi_send_long(obj, "value:", 1, &st) == 2 && st == SF_OK && runs == 1);
    CHECK(sf_pending_hook_remove(p) == SF_OK && sf_pending_hook_getState(p) == SF_PENDING_HOOK_REMOVED);
    CHECK(sf_pending_hook_getToken(p) == 0 && contains(sf_last_error_message(), "removed"));
    CHECK(sf_hook_remove(token) == SF_ERR_INVALID_ARGUMENT);  /* its token went with it */
    CHECK(sf_pending_hook_release(p) == SF_OK);
    CHECK(sf_pending_hook_getState(p) == SF_PENDING_HOOK_INVALID && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_pending_hook_remove(p) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_pending_hook_release(p) == SF_ERR_INVALID_ARGUMENT);

    /* Asked for once the class is registered: installed at once; its token is an ordinary one. */
    long counted = 0;
    sf_pending_hook_t now = sf_hook_whenAvailable(late, SEL("value:"), SF_HOOK_BEFORE, NULL, counting, &counted);
    CHECK(now != NULL && sf_pending_hook_getState(now) == SF_PENDING_HOOK_INSTALLED);
    CHECK(fx_capi_send_long(obj, "value:", 5, &st) == 6 && st == SF_OK && counted == 1);
    CHECK(sf_hook_remove(sf_pending_hook_getToken(now)) == SF_OK);
    CHECK(value_imp(cls) == original);
    CHECK(fx_capi_send_long(obj, "value:", 5, &st) == 6 && counted == 1);
    CHECK(sf_pending_hook_remove(now) == SF_OK && sf_pending_hook_getState(now) == SF_PENDING_HOOK_REMOVED);
    CHECK(sf_pending_hook_release(now) == SF_OK);

    /* Removed while waiting: it never installs. A handle released while waiting: it still does. */
    long never = 0, once = 0;
    sf_pending_hook_t cancelled = sf_hook_whenAvailable(dropped, SEL("value:"), SF_HOOK_BEFORE, NULL, counting, &never);
    CHECK(cancelled != NULL && sf_pending_hook_remove(cancelled) == SF_OK);
    CHECK(sf_pending_hook_getState(cancelled) == SF_PENDING_HOOK_REMOVED);
    sf_pending_hook_t released = sf_hook_whenAvailable(dropped, SEL("value:"), SF_HOOK_BEFORE | SF_HOOK_AUTOMATIC_REMOVAL,
                                                       NULL, counting, &once);
    CHECK(released != NULL && sf_pending_hook_release(released) == SF_OK);
    sf_class_t other = allocate(dropped, 1);
    CHECK(other != NULL);
    sf_registerClassPair(other);
    CHECK(sf_pending_hook_getState(cancelled) == SF_PENDING_HOOK_REMOVED);
    sf_id obj2 = sf_class_createInstance(other);
    CHECK(fx_capi_send_long(obj2, "value:", 1, &st) == 2 && st == SF_OK && never == 0 && once == 1);
    CHECK(fx_capi_send_long(obj2, "value:", 1, &st) == 2 && once == 1);  /* the one-shot went */
    CHECK(sf_pending_hook_release(cancelled) == SF_OK);

    /* The class registers without the method: FAILED, the error names class and selector. */
    sf_pending_hook_t failed = sf_hook_whenAvailable(missing, SEL("value:"), SF_HOOK_BEFORE, NULL, counting, &never);
    sf_class_t bare = allocate(missing, 0);
    CHECK(failed != NULL && bare != NULL);
    sf_registerClassPair(bare);
    CHECK(sf_pending_hook_getState(failed) == SF_PENDING_HOOK_FAILED && sf_last_error() == SF_ERR_HOOK);
    CHECK(contains(sf_last_error_message(), missing) && contains(sf_last_error_message(), "value:"));
    CHECK(sf_pending_hook_getToken(failed) == 0 && sf_last_error() == SF_ERR_HOOK);
    CHECK(sf_pending_hook_remove(failed) == SF_OK && sf_pending_hook_getState(failed) == SF_PENDING_HOOK_FAILED);
    CHECK(sf_pending_hook_release(failed) == SF_OK);
    /* Types other than the method's: FAILED at once, for a registered class. */
    sf_pending_hook_t mismatched = sf_hook_whenAvailable(late, SEL("value:"), SF_HOOK_BEFORE, "d@:d", counting, &never);
    CHECK(sf_pending_hook_getState(mismatched) == SF_PENDING_HOOK_FAILED && sf_last_error() == SF_ERR_SIGNATURE_MISMATCH);
    CHECK(contains(sf_last_error_message(), late) && contains(sf_last_error_message(), "value:"));
    CHECK(sf_pending_hook_release(mismatched) == SF_OK);
    CHECK(never == 0);

    /* Bad input: NULL, nothing kept. */
    CHECK(sf_hook_whenAvailable(NULL, SEL("value:"), SF_HOOK_BEFORE, NULL, counting, &never) == NULL);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_hook_whenAvailable("", SEL("value:"), SF_HOOK_BEFORE, NULL, counting, &never) == NULL);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_hook_whenAvailable(late, NULL, SF_HOOK_BEFORE, NULL, counting, &never) == NULL);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_hook_whenAvailable(late, SEL("value:"), SF_HOOK_BEFORE, NULL, NULL, &never) == NULL);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_hook_whenAvailable(late, SEL("value:"), (sf_hook_position)7, NULL, counting, &never) == NULL);
    CHECK(sf_last_error() == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), "hook position 7"));
    CHECK(sf_hook_whenAvailable(missing, SEL("forwardInvocation:"), SF_HOOK_BEFORE, NULL, counting, &never) == NULL);
    CHECK(sf_last_error() == SF_ERR_RESERVED_SELECTOR && contains(sf_last_error_message(), missing));
    CHECK(sf_hook_whenAvailable(late, SEL("value:"), SF_HOOK_BEFORE, "q@:{", counting, &never) == NULL);
    CHECK(sf_last_error() == SF_ERR_BAD_ENCODING);
    CHECK(sf_pending_hook_getState(NULL) == SF_PENDING_HOOK_INVALID && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_pending_hook_getToken(NULL) == 0 && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_pending_hook_remove(NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_pending_hook_release(NULL) == SF_ERR_INVALID_ARGUMENT);

    sf_release(obj);
    sf_release(obj2);
    return 0;
}
