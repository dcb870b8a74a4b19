// Invocation records, forwarding handlers, throttle rules and introspection through the C API.
#include "CAPIScenarios.h"
#include "capi_check.h"

static long sum_imp(sf_id self, sf_sel cmd, long a, long b) { (void)self; (void)cmd; return a + b; }
static sf_id keep_imp(sf_id self, sf_sel cmd, sf_id other) { (void)self; (void)cmd; return sf_retain(other); }

static sf_class_t make_class(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_class_addMethod(cls, SEL("sum:with:"), (sf_imp)sum_imp, "q@:qq");
    sf_class_addMethod(cls, SEL("keep:"), (sf_imp)keep_imp, "@@:@");
    sf_registerClassPair(cls);
    return cls;
}

int fx_capi_invocations(const char *name) {
    sf_class_t cls = make_class(name);
    sf_id obj = sf_class_createInstance(cls), other = sf_class_createInstance(cls);
    long a = 2, b = 40, r = 0;

    sf_invocation_t inv = sf_invocation_create(obj, SEL("sum:with:"), "q@:qq");
    CHECK(inv != NULL && sf_last_error() == SF_OK);
    CHECK(sf_invocation_getTarget(inv) == obj && sf_invocation_getSelector(inv) == SEL("sum:with:"));
    CHECK(strcmp(sf_invocation_getTypeEncoding(inv), "q@:qq") == 0 && sf_invocation_getArgumentCount(inv) == 2);
    CHECK(sf_invocation_setArgument(inv, 0, &a, sizeof a) == SF_OK);
    CHECK(sf_invocation_setArgument(inv, 1, &b, sizeof b) == SF_OK);
    CHECK(sf_invocation_invoke(inv) == SF_OK);
    CHECK(sf_invocation_getReturnValue(inv, &r, sizeof r) == SF_OK && r == 42);
    long got = 0;
    CHECK(sf_invocation_getArgument(inv, 1, &got, sizeof got) == SF_OK && got == 40);

    /* Wrong index and sizes, named. */
    int small = 0;
    CHECK(sf_invocation_getArgument(inv, 2, &got, sizeof got) == SF_ERR_INVALID_ARGUMENT);
    CHECK(contains(sf_last_error_message(), "argument index in 0..<2") && contains(sf_last_error_message(), "got 2") && contains(sf_last_error_message(), name));
    CHECK(sf_invocation_setArgument(inv, 0, &small, sizeof small) == SF_ERR_SIGNATURE_MISMATCH);
    CHECK(contains(sf_last_error_message(), "8 bytes") && contains(sf_last_error_message(), "sum:with:"));
    CHECK(sf_invocation_getReturnValue(inv, &small, sizeof small) == SF_ERR_SIGNATURE_MISMATCH);
    CHECK(sf_invocation_setReturnValue(inv, &small, 3) == SF_ERR_SIGNATURE_MISMATCH);
    long forced = 7;
    CHECK(sf_invocation_setReturnValue(inv, &forced, sizeof forced) == SF_OK);
    CHECK(sf_invocation_getReturnValue(inv, &r, sizeof r) == SF_OK && r == 7);

    /* A copy is independent. */
    sf_invocation_t copy = sf_invocation_copy(inv);
    CHECK(copy != NULL && copy != inv);
    long c = 100;
    CHECK(sf_invocation_setArgument(copy, 0, &c, sizeof c) == SF_OK);
    CHECK(sf_invocation_getArgument(inv, 0, &got, sizeof got) == SF_OK && got == 2);
    CHECK(sf_invocation_getReturnValue(copy, &r, sizeof r) == SF_OK && r == 7);
    CHECK(sf_invocation_invokeWithTarget(copy, other) == SF_OK);
    CHECK(sf_invocation_getReturnValue(copy, &r, sizeof r) == SF_OK && r == 140 && sf_invocation_getTarget(copy) == other);
    CHECK(sf_invocation_setTarget(copy, obj) == SF_OK && sf_invocation_getTarget(copy) == obj);
    CHECK(sf_invocation_setSelector(copy, SEL("missing:with:")) == SF_OK);
    CHECK(sf_invocation_invoke(copy) == SF_ERR_UNRECOGNIZED_SELECTOR && contains(sf_last_error_message(), "missing:with:"));

    /* Released: every later use is refused, and so is a second release. */
    CHECK(sf_invocation_release(copy) == SF_OK);
    CHECK(sf_invocation_release(copy) == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), "expected a live invocation"));
    CHECK(sf_invocation_invoke(copy) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_getTarget(copy) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_getArgument(copy, 0, &got, sizeof got) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_copy(copy) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);

    /* Retained arguments keep objects alive with the record; the object return is owned. */
    sf_invocation_t keep = sf_invocation_create(obj, SEL("keep:"), "@@:@");
    CHECK(sf_invocation_setArgument(keep, 0, &other, sizeof other) == SF_OK);
    uintptr_t before = sf_object_retainCount(other);
    CHECK(sf_invocation_retainArguments(keep) == SF_OK);
    CHECK(sf_object_retainCount(other) == before + 1);
    CHECK(sf_invocation_invoke(keep) == SF_OK);
    sf_id kept = NULL;
    CHECK(sf_invocation_getReturnValue(keep, &kept, sizeof kept) == SF_OK && kept == other);
    sf_invocation_t keep2 = sf_invocation_copy(keep);
    CHECK(sf_object_retainCount(other) == before + 4);  /* the copy's argument and return */
    CHECK(sf_invocation_release(keep2) == SF_OK && sf_invocation_release(keep) == SF_OK);
    CHECK(sf_object_retainCount(other) == before);

    CHECK(sf_invocation_release(inv) == SF_OK);
    sf_release(obj);
    sf_release(other);
    return 0;
}

int fx_capi_invocation_bad_input(const char *name) {
    sf_class_t cls = make_class(name);
    sf_id obj = sf_class_createInstance(cls);
    long v = 0;
    CHECK(sf_invocation_create(obj, NULL, "q@:qq") == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_create(obj, SEL("sum:with:"), NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_create(obj, SEL("sum:with:"), "q@:{") == NULL && sf_last_error() == SF_ERR_BAD_ENCODING);
    CHECK(sf_invocation_copy(NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_release(NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_getTarget(NULL) == NULL && sf_invocation_getSelector(NULL) == NULL);
    CHECK(sf_invocation_setTarget(NULL, obj) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_setSelector(NULL, SEL("x")) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_getTypeEncoding(NULL) == NULL && sf_invocation_getArgumentCount(NULL) == -1);
    CHECK(sf_invocation_getArgument(NULL, 0, &v, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_setArgument(NULL, 0, &v, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_getReturnValue(NULL, &v, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_setReturnValue(NULL, &v, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_retainArguments(NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_invoke(NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_invokeWithTarget(NULL, obj) == SF_ERR_INVALID_ARGUMENT);
    /* A pointer that was never a handle. */
    CHECK(sf_invocation_invoke((sf_invocation_t)&v) == SF_ERR_INVALID_ARGUMENT);

    sf_invocation_t inv = sf_invocation_create(obj, SEL("sum:with:"), "q@:qq");
    CHECK(sf_invocation_setArgument(inv, 0, NULL, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_getArgument(inv, 0, NULL, sizeof v) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_invocation_setSelector(inv, NULL) == SF_ERR_INVALID_ARGUMENT);
    /* A NULL target does nothing and returns zero, as a message to nil does. */
    CHECK(sf_invocation_setTarget(inv, NULL) == SF_OK && sf_invocation_invoke(inv) == SF_OK);
    CHECK(sf_invocation_getReturnValue(inv, &v, sizeof v) == SF_OK && v == 0);
    CHECK(sf_invocation_release(inv) == SF_OK);
    sf_release(obj);
    return 0;
}

/* ---- forwarding ---- */

struct forwarding { sf_class_t cls; sf_id backup; sf_invocation_t lent; int resolved, signatures, forwarded; };

static sf_status doubled_fn(sf_call_t call, void *context) {
    (void)context;
    long a;
    if (sf_call_getArgument(call, 0, &a, sizeof a)) return sf_last_error();
    a *= 2;
    return sf_call_setReturnValue(call, &a, sizeof a);
}

static bool resolve(sf_class_t cls, sf_sel sel, void *context) {
    struct forwarding *f = context;
    if (sel != SEL("double:")) return false;
    f->resolved++;
    return sf_class_addMethodWithFunction(cls, sel, "q@:q", doubled_fn, NULL, NULL) == SF_OK;
}

static sf_id target_for(sf_id obj, sf_sel sel, void *context) {
    (void)obj;
    struct forwarding *f = context;
    return sel == SEL("sum:with:") ? f->backup : NULL;
}

static const char *signature_for(sf_id obj, sf_sel sel, void *context) {
    (void)obj;
    struct forwarding *f = context;
    f->signatures++;
    if (sel == SEL("bad:")) return "q@:{";
    return sel == SEL("triple:") || sel == SEL("refuse:") ? "q@:q" : NULL;
}

static sf_status forward(sf_invocation_t inv, void *context) {
    struct forwarding *f = context;
    f->forwarded++;
    f->lent = inv;
    if (sf_invocation_getSelector(inv) == SEL("refuse:")) return SF_ERR_INVALID_ARGUMENT;
    if (sf_invocation_release(inv) != SF_ERR_INVALID_ARGUMENT) return SF_ERR_HOOK;  /* lent, not owned */
    long a;
    if (sf_invocation_getArgument(inv, 0, &a, sizeof a)) return sf_last_error();
    a *= 3;
    return sf_invocation_setReturnValue(inv, &a, sizeof a);
}

int fx_capi_forwarding(const char *name) {
    struct forwarding f = { 0 };
    char backup_name[256];
    snprintf(backup_name, sizeof backup_name, "%s_Backup", name);
    sf_class_t backup_cls = make_class(backup_name);
    f.backup = sf_class_createInstance(backup_cls);
    f.cls = sf_allocateClassPair(NULL, name);
    sf_registerClassPair(f.cls);
    CHECK(sf_class_setResolveInstanceMethod(f.cls, resolve, &f) == SF_OK);
    CHECK(sf_class_setForwardingTarget(f.cls, target_for, &f) == SF_OK);
    CHECK(sf_class_setMethodSignature(f.cls, signature_for, &f) == SF_OK);
    CHECK(sf_class_setForwardInvocation(f.cls, forward, &f) == SF_OK);
    sf_id obj = sf_class_createInstance(f.cls);
    sf_status st;

    CHECK(fx_capi_send_long(obj, "double:", 21, &st) == 42 && st == SF_OK && f.resolved == 1);
    CHECK(fx_capi_send_long(obj, "double:", 5, &st) == 10 && f.resolved == 1);  /* now a method */
    long a = 40, b = 2, r = 0;
    void *args[] = { &a, &b };
    CHECK(sf_msg_send(obj, SEL("sum:with:"), &r, args) == SF_OK && r == 42);    /* forwarding target */
    CHECK(fx_capi_send_long(obj, "triple:", 5, &st) == 15 && st == SF_OK && f.forwarded == 1);
    /* The lent record died with the handler. */
    CHECK(sf_invocation_getTarget(f.lent) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    fx_capi_send_long(obj, "refuse:", 1, &st);
    CHECK(st == SF_ERR_FORWARDING && contains(sf_last_error_message(), "refuse:") && contains(sf_last_error_message(), name));
    fx_capi_send_long(obj, "bad:", 1, &st);
    CHECK(st == SF_ERR_BAD_ENCODING || st == SF_ERR_FORWARDING);
    fx_capi_send_long(obj, "unknown:", 1, &st);
    CHECK(st == SF_ERR_UNRECOGNIZED_SELECTOR || st == SF_ERR_FORWARDING);
    CHECK(contains(sf_last_error_message(), "unknown:"));

    CHECK(sf_class_setResolveInstanceMethod(NULL, resolve, &f) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_setResolveClassMethod(f.cls, NULL, &f) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_setForwardingTarget(f.cls, NULL, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_setMethodSignature(NULL, signature_for, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_setForwardInvocation(f.cls, NULL, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(contains(sf_last_error_message(), name));

    sf_release(obj);
    sf_release(f.backup);
    return 0;
}

/* ---- rules ---- */

static int ticks, rejected;
static void tick_imp(sf_id self, sf_sel cmd) { (void)self; (void)cmd; ticks++; }
static void on_reject(sf_invocation_t inv, void *context) {
    (void)context;
    if (sf_invocation_getSelector(inv) == SEL("tick")) rejected++;
}

int fx_capi_rules(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_class_addMethod(cls, SEL("tick"), (sf_imp)tick_imp, "v@:");
    sf_registerClassPair(cls);
    sf_id obj = sf_class_createInstance(cls);
    sf_manual_clock_t clock = sf_manual_clock_create(1000);
    CHECK(clock != NULL && sf_manual_clock_now(clock) == 1000);
    ticks = rejected = 0;

    /* Debounce on one object: three calls, one run after the pause. */
    sf_rule_t rule = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_DEBOUNCE, 100, 0);
    CHECK(rule != NULL && !sf_rule_isApplied(rule));
    CHECK(sf_rule_setManualClock(rule, clock) == SF_OK);
    CHECK(sf_rule_discard(rule, SF_PENDING_CANCEL) == SF_ERR_RULE && contains(sf_last_error_message(), "not applied"));
    CHECK(sf_rule_apply(rule) == SF_OK && sf_rule_isApplied(rule));
    CHECK(sf_rule_apply(rule) == SF_ERR_RULE && contains(sf_last_error_message(), "already applied"));
    CHECK(contains(sf_last_error_message(), "tick"));
    CHECK(sf_rule_setManualClock(rule, clock) == SF_ERR_RULE);
    for (int i = 0; i < 3; i++) CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK);
    CHECK(ticks == 0);
    CHECK(sf_manual_clock_advance(clock, 50) == SF_OK && ticks == 0);
    CHECK(sf_manual_clock_advance(clock, 100) == SF_OK && ticks == 1 && sf_manual_clock_now(clock) == 1150);
    /* flush runs the pending call; cancel drops it. */
    bool flushed = true;
    CHECK(sf_rule_flush(rule, &flushed) == SF_OK && !flushed);
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK);
    CHECK(sf_rule_flush(rule, &flushed) == SF_OK && flushed && ticks == 2);
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK);
    CHECK(sf_rule_cancel(rule) == SF_OK);
    CHECK(sf_manual_clock_advance(clock, 1000) == SF_OK && ticks == 2);
    /* Discard with flush runs what is pending. */
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK);
    CHECK(sf_rule_discard(rule, SF_PENDING_FLUSH) == SF_OK && ticks == 3 && !sf_rule_isApplied(rule));
    CHECK(sf_rule_discard(rule, SF_PENDING_FLUSH) == SF_ERR_RULE);
    CHECK(sf_rule_flush(rule, NULL) == SF_ERR_RULE && sf_rule_cancel(rule) == SF_ERR_RULE);
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && ticks == 4);  /* unthrottled again */
    CHECK(sf_rule_release(rule) == SF_OK && sf_rule_release(rule) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_rule_apply(rule) == SF_ERR_INVALID_ARGUMENT && contains(sf_last_error_message(), "expected a live rule"));

    /* Cooldown on the class: rejected calls reach the handler. */
    sf_rule_t cool = sf_rule_create((sf_id)cls, SEL("tick"), SF_THROTTLE_COOLDOWN, 100, 0);
    CHECK(sf_rule_setManualClock(cool, clock) == SF_OK);
    CHECK(sf_rule_setRejectedHandler(cool, on_reject, NULL) == SF_OK);
    CHECK(sf_rule_apply(cool) == SF_OK);
    /* A second rule for the selector in the hierarchy conflicts. */
    sf_rule_t second = sf_rule_create((sf_id)cls, SEL("tick"), SF_THROTTLE_FIRSTLY, 100, 0);
    CHECK(sf_rule_apply(second) == SF_ERR_RULE && contains(sf_last_error_message(), name));
    CHECK(sf_rule_release(second) == SF_OK);
    for (int i = 0; i < 3; i++) CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK);
    CHECK(ticks == 5 && rejected == 2);
    CHECK(sf_manual_clock_advance(clock, 200) == SF_OK);
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && ticks == 6);
    CHECK(sf_rule_discard(cool, SF_PENDING_CANCEL) == SF_OK && sf_rule_release(cool) == SF_OK);

    /* Throttle with leading and trailing edges. */
    sf_rule_t thr = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_THROTTLE, 100, SF_RULE_LEADING | SF_RULE_TRAILING);
    CHECK(sf_rule_setManualClock(thr, clock) == SF_OK && sf_rule_apply(thr) == SF_OK);
    for (int i = 0; i < 3; i++) CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK);
    CHECK(ticks == 7);
    CHECK(sf_manual_clock_advance(clock, 100) == SF_OK && ticks == 8);
    CHECK(sf_rule_discard(thr, SF_PENDING_CANCEL) == SF_OK && sf_rule_release(thr) == SF_OK);

    /* Debounce with a leading edge (lodash {leading: true}): at once, then after the pause. */
    sf_rule_t lead = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_DEBOUNCE, 100, SF_RULE_LEADING | SF_RULE_TRAILING);
    CHECK(sf_rule_setManualClock(lead, clock) == SF_OK && !sf_rule_isPending(lead));
    CHECK(sf_rule_cancelPending(lead) == SF_ERR_RULE && contains(sf_last_error_message(), "not applied"));
    CHECK(sf_rule_apply(lead) == SF_OK && !sf_rule_isPending(lead));
    for (int i = 0; i < 3; i++) CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK);
    CHECK(ticks == 9 && sf_rule_isPending(lead));
    CHECK(sf_manual_clock_advance(clock, 100) == SF_OK && ticks == 10 && !sf_rule_isPending(lead));
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && ticks == 11 && sf_rule_isPending(lead));
    CHECK(sf_rule_cancelPending(lead) == SF_OK && sf_rule_isPending(lead));  /* the window goes on */
    CHECK(sf_manual_clock_advance(clock, 100) == SF_OK && ticks == 11 && !sf_rule_isPending(lead));
    CHECK(sf_rule_discard(lead, SF_PENDING_CANCEL) == SF_OK && sf_rule_release(lead) == SF_OK);

    /* The window measured from the last run, keeping the latest call. */
    sf_rule_t since = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_SINCE_PERFORMED, 100, SF_RULE_LATEST);
    CHECK(sf_rule_setManualClock(since, clock) == SF_OK && sf_rule_apply(since) == SF_OK);
    CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK && ticks == 12);
    CHECK(sf_manual_clock_advance(clock, 50) == SF_OK);
    for (int i = 0; i < 2; i++) CHECK(sf_msg_send(obj, SEL("tick"), NULL, NULL) == SF_OK);
    CHECK(ticks == 12 && sf_rule_isPending(since));
    CHECK(sf_manual_clock_advance(clock, 50) == SF_OK && ticks == 13);
    CHECK(sf_rule_discard(since, SF_PENDING_CANCEL) == SF_OK && sf_rule_release(since) == SF_OK);
    CHECK(!sf_rule_isPending(NULL) && sf_rule_cancelPending(NULL) == SF_ERR_INVALID_ARGUMENT);

    CHECK(sf_manual_clock_release(clock) == SF_OK && sf_manual_clock_release(clock) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_manual_clock_advance(clock, 1) == SF_ERR_INVALID_ARGUMENT);
    sf_release(obj);
    return 0;
}

int fx_capi_rule_bad_input(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    sf_class_addMethod(cls, SEL("tick"), (sf_imp)tick_imp, "v@:");
    sf_registerClassPair(cls);
    sf_id obj = sf_class_createInstance(cls);
    CHECK(sf_rule_create(NULL, SEL("tick"), SF_THROTTLE_DEBOUNCE, 1, 0) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_rule_create(obj, NULL, SF_THROTTLE_DEBOUNCE, 1, 0) == NULL && contains(sf_last_error_message(), name));
    CHECK(sf_rule_create(obj, SEL("tick"), (sf_throttle_mode)42, 1, 0) == NULL && contains(sf_last_error_message(), "expected an sf_throttle_mode, got 42"));
    CHECK(sf_rule_create(obj, SEL("tick"), SF_THROTTLE_THROTTLE, 1, 0) == NULL && contains(sf_last_error_message(), "SF_RULE_LEADING"));
    CHECK(sf_rule_create(obj, SEL("tick"), SF_THROTTLE_DEBOUNCE, 1, 1u << 9) == NULL && contains(sf_last_error_message(), "option"));
    CHECK(sf_rule_create(obj, SEL("tick"), SF_THROTTLE_DEBOUNCE, UINT64_MAX, 0) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_rule_setManualClock(NULL, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_rule_setRejectedHandler(NULL, on_reject, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_rule_apply(NULL) == SF_ERR_INVALID_ARGUMENT && sf_rule_discard(NULL, SF_PENDING_CANCEL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_rule_flush(NULL, NULL) == SF_ERR_INVALID_ARGUMENT && sf_rule_cancel(NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_rule_release(NULL) == SF_ERR_INVALID_ARGUMENT && !sf_rule_isApplied(NULL));
    CHECK(sf_manual_clock_create(UINT64_MAX) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_manual_clock_advance(NULL, 1) == SF_ERR_INVALID_ARGUMENT && sf_manual_clock_now(NULL) == 0);
    CHECK(sf_manual_clock_release(NULL) == SF_ERR_INVALID_ARGUMENT);

    sf_rule_t rule = sf_rule_create(obj, SEL("tick"), SF_THROTTLE_DEBOUNCE, 1, 0);
    CHECK(sf_rule_setManualClock(rule, NULL) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_rule_setManualClock(rule, (sf_manual_clock_t)rule) == SF_ERR_INVALID_ARGUMENT);  /* a rule is not a clock */
    CHECK(sf_rule_discard(rule, (sf_pending_policy)5) == SF_ERR_INVALID_ARGUMENT);
    sf_manual_clock_t clock = sf_manual_clock_create(0);
    CHECK(sf_manual_clock_advance(clock, UINT64_MAX) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_manual_clock_release(clock) == SF_OK);
    /* A rule for a missing method does not apply. */
    sf_rule_t missing = sf_rule_create(obj, SEL("nothing"), SF_THROTTLE_DEBOUNCE, 1, 0);
    CHECK(sf_rule_apply(missing) != SF_OK && contains(sf_last_error_message(), "nothing"));
    CHECK(sf_rule_release(missing) == SF_OK && sf_rule_release(rule) == SF_OK);
    sf_release(obj);
    return 0;
}

/* ---- introspection ---- */

int fx_capi_introspection(const char *name) {
    sf_class_t cls = sf_allocateClassPair(NULL, name);
    CHECK(sf_class_addIvar(cls, "count", sizeof(long), 3, "q"));
    CHECK(sf_class_addIvar(cls, "owner", sizeof(sf_id), 3, "@"));
    sf_class_addMethod(cls, SEL("sum:with:"), (sf_imp)sum_imp, "q@:qq");
    sf_class_addMethod(cls, SEL("keep:"), (sf_imp)keep_imp, "@@:@");
    sf_registerClassPair(cls);

    unsigned int n = 99;
    sf_method_t *methods = sf_class_copyMethodList(cls, &n);
    CHECK(methods != NULL && n == 2);
    CHECK(sf_method_getName(methods[0]) == SEL("keep:") && sf_method_getName(methods[1]) == SEL("sum:with:"));
    CHECK(strcmp(sf_method_getTypeEncoding(methods[1]), "q@:qq") == 0);
    sf_free(methods);

    sf_ivar_description *ivars = sf_class_copyIvarList(cls, &n);
    CHECK(ivars != NULL && n == 2);
    CHECK(strcmp(ivars[0].name, "count") == 0 && strcmp(ivars[0].types, "q") == 0 && ivars[0].size == 8);
    CHECK(strcmp(ivars[1].name, "owner") == 0 && strcmp(ivars[1].types, "@") == 0);
    CHECK(ivars[0].offset == sf_class_getIvarOffset(cls, "count") && ivars[1].offset == sf_class_getIvarOffset(cls, "owner"));
    sf_free(ivars);

    sf_class_t *classes = sf_copyClassList(&n);
    int found = 0;
    for (unsigned int i = 0; i < n; i++) found += classes[i] == cls;
    CHECK(found == 1);
    sf_free(classes);

    /* Empty lists are NULL with a zero count; NULL arguments are refused. */
    sf_class_t empty = sf_allocateClassPair(NULL, "");
    CHECK(empty == NULL);
    char empty_name[256];
    snprintf(empty_name, sizeof empty_name, "%s_Empty", name);
    empty = sf_allocateClassPair(NULL, empty_name);
    sf_registerClassPair(empty);
    n = 5;
    CHECK(sf_class_copyMethodList(empty, &n) == NULL && n == 0 && sf_last_error() == SF_OK);
    n = 5;
    CHECK(sf_class_copyIvarList(empty, &n) == NULL && n == 0);
    n = 5;
    CHECK(sf_class_copyMethodList(NULL, &n) == NULL && n == 0 && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_class_copyIvarList(NULL, NULL) == NULL && sf_last_error() == SF_ERR_INVALID_ARGUMENT);
    methods = sf_class_copyMethodList(cls, NULL);  /* the count is optional */
    CHECK(methods != NULL);
    sf_free(methods);
    sf_free(NULL);
    CHECK(sf_disposeClassPair(empty) == SF_OK);
    return 0;
}
