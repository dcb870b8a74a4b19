// AXKit's delayed cooldown through the C API: SF_THROTTLE_DELAYED_COOLDOWN, a rule's delay and
// the cooldown tokens several rules share (sf_rule_setDelayedCooldown, sf_cooldown_token_*).
#include "CAPIScenarios.h"
#include "capi_check.h"

static int ticks, rejected;
static void tick_imp(sf_id self, sf_sel cmd) { (void)self; (void)cmd; ticks++; }
static void on_reject(sf_invocation_t inv, void *context) {
    (void)context;
    if (sf_invocation_getSelector(inv) == SEL("tick")) rejected++;
}

static sf_class_t make_class(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_class_addMethod(cls, SEL("tick"), (sf_imp)tick_imp, "v@:");
    sf_registerClassPair(cls);
    return cls;
}

int fx_capi_cooldown_tokens(const char *name) {
    sf_class_t cls = make_class(name);
    sf_id obj = sf_class_createInstance(cls);
    sf_manual_clock_t clock = sf_manual_clock_create(1000);
    ticks = rejected = 0;

    /* AXKit's delayed cooldown: two objects share one token; one runs at once, the other 30 ns
     * after its call; a call while either cools is rejected; cancelling keeps the cooldown. */
    sf_id obj2 = sf_class_createInstance(cls);
    sf_cooldown_token_t token = sf_cooldown_token_create("shared");
    CHECK(token != NULL && !sf_cooldown_token_isCooling(token, clock));
    sf_rule_t now_rule = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_DELAYED_COOLDOWN, 100, 0);
    sf_rule_t later = sf_rule_create(obj2, SEL("tick"), SF_THROTTLE_DELAYED_COOLDOWN, 100, 0);
    CHECK(sf_rule_setDelayedCooldown(now_rule, 0, token) == SF_OK);
    CHECK(sf_rule_setDelayedCooldown(later, 30, token) == SF_OK);
    rejected = 0;
    CHECK(sf_rule_setRejectedHandler(now_rule, on_reject, NULL) == SF_OK && sf_rule_setRejectedHandler(later, on_reject, NULL) == SF_OK);
    CHECK(sf_rule_setManualClock(now_rule, clock) == SF_OK && sf_rule_setManualClock(later, clock) == SF_OK);
    CHECK(sf_rule_apply(now_rule) == SF_OK && sf_rule_apply(later) == SF_OK);
    CHECK(sf_cooldown_token_release(token) == SF_OK);  /* the rules keep it */
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && ticks == 1 && sf_rule_isPending(now_rule));
    CHECK(sf_msg_send(obj2, SEL("tick"), NULL, NULL) == SF_OK && ticks == 1 && rejected == 1);
    CHECK(sf_manual_clock_advance(clock, 100) == SF_OK);
    CHECK(sf_msg_send(obj2, SEL("tick"), NULL, NULL) == SF_OK && ticks == 1 && sf_rule_isPending(later));
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && ticks == 1 && rejected == 2);
    CHECK(sf_manual_clock_advance(clock, 29) == SF_OK && ticks == 1);
    CHECK(sf_manual_clock_advance(clock, 1) == SF_OK && ticks == 2);
    CHECK(sf_manual_clock_advance(clock, 70) == SF_OK);
    CHECK(sf_msg_send(obj2, SEL("tick"), NULL, NULL) == SF_OK && sf_rule_cancelPending(later) == SF_OK);
    CHECK(sf_manual_clock_advance(clock, 50) == SF_OK && ticks == 2);          /* the delayed call is gone */
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && rejected == 3);  /* the cooldown is not */
    CHECK(sf_manual_clock_advance(clock, 50) == SF_OK);
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && ticks == 3);
    sf_rule_t gone = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_DELAYED_COOLDOWN, 100, 0);
    CHECK(sf_rule_release(gone) == SF_OK);
    CHECK(sf_rule_setDelayedCooldown(gone, 0, NULL) == SF_ERR_INVALID_ARGUMENT);  /* released */
    sf_rule_t plain = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_COOLDOWN, 100, 0);
    CHECK(sf_rule_setDelayedCooldown(plain, 10, NULL) == SF_ERR_RULE && contains(sf_last_error_message(), "SF_THROTTLE_DELAYED_COOLDOWN"));
    CHECK(sf_rule_release(plain) == SF_OK);
    CHECK(sf_rule_discard(now_rule, SF_PENDING_CANCEL) == SF_OK && sf_rule_release(now_rule) == SF_OK);
    CHECK(sf_rule_discard(later, SF_PENDING_CANCEL) == SF_OK && sf_rule_release(later) == SF_OK);
    sf_release(obj2);

    /* Resetting a token ends the shared cooldown; the token reads the clock it is given. */
    sf_cooldown_token_t solo = sf_cooldown_token_create(NULL);
    sf_rule_t one = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_DELAYED_COOLDOWN, 100, 0);
    CHECK(sf_rule_setDelayedCooldown(one, 0, solo) == SF_OK);
    CHECK(sf_rule_setManualClock(one, clock) == SF_OK && sf_rule_apply(one) == SF_OK);
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && ticks == 4 && sf_cooldown_token_isCooling(solo, clock));
    CHECK(sf_cooldown_token_reset(solo) == SF_OK && !sf_cooldown_token_isCooling(solo, clock));
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && ticks == 5);
    CHECK(sf_rule_discard(one, SF_PENDING_CANCEL) == SF_OK && sf_rule_release(one) == SF_OK);
    CHECK(sf_cooldown_token_release(solo) == SF_OK && sf_cooldown_token_release(solo) == SF_ERR_INVALID_ARGUMENT);
    CHECK(contains(sf_last_error_message(), "expected a live cooldown token"));

    CHECK(sf_manual_clock_release(clock) == SF_OK);
    sf_release(obj);
    return 0;
}

int fx_capi_cooldown_bad_input(const char *name) {
    sf_class_t cls = make_class(name);
    sf_id obj = sf_class_createInstance(cls);
    CHECK(!sf_cooldown_token_isCooling(NULL, NULL) && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_cooldown_token_reset(NULL) == SF_ERR_INVALID_ARGUMENT && sf_cooldown_token_release(NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_rule_setDelayedCooldown(NULL, 0, NULL) == SF_ERR_INVALID_ARGUMENT);
    sf_rule_t delayed = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_DELAYED_COOLDOWN, 1, 0);
    CHECK(sf_rule_setDelayedCooldown(delayed, UINT64_MAX, NULL) == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), "delay"));
    sf_cooldown_token_t gone = sf_cooldown_token_create("gone");
    CHECK(sf_cooldown_token_release(gone) == SF_OK);
    CHECK(sf_rule_setDelayedCooldown(delayed, 1, gone) == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), "cooldown token"));
    CHECK(!sf_cooldown_token_isCooling(gone, NULL));
    CHECK(sf_rule_release(delayed) == SF_OK);
    sf_release(obj);
    return 0;
}
