/*
 * SelectorForwarding from plain C: register a class, hook a method, throttle it with a manual
 * clock, forward a message. Build against an installed copy:
 *   cc demo.c $(pkg-config --cflags --libs selector-forwarding) -o demo && ./demo
 * expected.txt holds its output.
 */
#include <SelectorForwarding.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(expr) do { if ((expr) != SF_OK) { \
    fprintf(stderr, "%s failed: %s\n", #expr, sf_last_error_message()); exit(1); } } while (0)

/* -[Counter add:] as a C function plus a context: the running total lives in the context. */
static sf_status counter_add(sf_call_t call, void *context) {
    long *total = context, amount;
    CHECK(sf_call_getArgument(call, 0, &amount, sizeof amount));
    *total += amount;
    return sf_call_setReturnValue(call, total, sizeof *total);
}

static int pings;
static void counter_ping(sf_id self, sf_sel cmd) { (void)self; (void)cmd; pings++; }

static sf_status log_before(sf_call_t call, void *context) {
    long amount;
    CHECK(sf_call_getArgument(call, 0, &amount, sizeof amount));
    printf("%s -%s %ld\n", (const char *)context, sf_sel_getName(sf_call_getSelector(call)), amount);
    return SF_OK;
}

/* An instead-hook that doubles the argument, then runs the original. */
static sf_status double_it(sf_call_t call, void *context) {
    (void)context;
    long amount;
    CHECK(sf_call_getArgument(call, 0, &amount, sizeof amount));
    amount *= 2;
    CHECK(sf_call_setArgument(call, 0, &amount, sizeof amount));
    return sf_call_proceed(call);
}

/* A proxy's forwardInvocation: replays every message on the object in the context. */
static const char *proxy_signature(sf_id obj, sf_sel sel, void *context) {
    (void)obj;
    sf_method_t m = sf_class_getInstanceMethod(sf_object_getClass(context), sel);
    return m ? sf_method_getTypeEncoding(m) : NULL;
}
static sf_status proxy_forward(sf_invocation_t inv, void *context) {
    printf("forwarding -%s to Counter\n", sf_sel_getName(sf_invocation_getSelector(inv)));
    return sf_invocation_invokeWithTarget(inv, context);
}

static long send_add(sf_id obj, long amount) {
    long result = 0;
    void *args[] = { &amount };
    CHECK(sf_msg_send(obj, sf_sel_registerName("add:"), &result, args));
    return result;
}

int main(void) {
    /* Register a class with a C-function method and a plain IMP. */
    long total = 0;
    sf_class_t counter_class = sf_allocateClassPair(NULL, "Counter");
    CHECK(sf_class_addMethodWithFunction(counter_class, sf_sel_registerName("add:"), "q@:q", counter_add, &total, NULL));
    CHECK(sf_class_addMethod(counter_class, sf_sel_registerName("ping"), (sf_imp)counter_ping, "v@:"));
    sf_registerClassPair(counter_class);
    sf_id counter = sf_class_createInstance(counter_class);
    printf("add: 5 -> %ld\n", send_add(counter, 5));

    unsigned int count;
    sf_method_t *methods = sf_class_copyMethodList(counter_class, &count);
    printf("Counter has %u methods:", count);
    for (unsigned int i = 0; i < count; i++) printf(" %s", sf_sel_getName(sf_method_getName(methods[i])));
    printf("\n");
    sf_free(methods);

    /* Hook it: log before, double the argument instead. */
    sf_hook_token logged = sf_class_hookMethod(counter_class, sf_sel_registerName("add:"), SF_HOOK_BEFORE, "q@:q",
                                               log_before, "before");
    sf_hook_token doubled = sf_class_hookMethod(counter_class, sf_sel_registerName("add:"), SF_HOOK_INSTEAD, NULL,
                                                double_it, NULL);
    if (!logged || !doubled) { fprintf(stderr, "hook: %s\n", sf_last_error_message()); return 1; }
    printf("hooked add: 5 -> %ld\n", send_add(counter, 5));
    CHECK(sf_hook_remove(doubled));
    CHECK(sf_hook_remove(logged));
    if (sf_hook_remove(logged) != SF_OK) printf("removing twice: %s\n", sf_last_error_message());
    printf("unhooked add: 1 -> %ld\n", send_add(counter, 1));

    /* Throttle -ping: debounce 100 ms on a manual clock. */
    sf_manual_clock_t clock = sf_manual_clock_create(0);
    sf_rule_t rule = sf_rule_create(counter, sf_sel_registerName("ping"), SF_THROTTLE_DEBOUNCE, 100000000, 0);
    CHECK(sf_rule_setManualClock(rule, clock));
    CHECK(sf_rule_apply(rule));
    for (int i = 0; i < 3; i++) CHECK(sf_msg_send(counter, sf_sel_registerName("ping"), NULL, NULL));
    printf("3 pings sent, %d ran\n", pings);
    CHECK(sf_manual_clock_advance(clock, 100000000));
    printf("after 100 ms, %d ran\n", pings);
    if (sf_rule_apply(rule) != SF_OK) printf("applying twice: %s\n", sf_last_error_message());
    CHECK(sf_rule_discard(rule, SF_PENDING_CANCEL));
    CHECK(sf_rule_release(rule));
    CHECK(sf_manual_clock_release(clock));

    /* Forward: a Proxy class with no methods hands add: to the counter. */
    sf_class_t proxy_class = sf_allocateClassPair(NULL, "Proxy");
    sf_registerClassPair(proxy_class);
    CHECK(sf_class_setMethodSignature(proxy_class, proxy_signature, counter));
    CHECK(sf_class_setForwardInvocation(proxy_class, proxy_forward, counter));
    sf_id proxy = sf_class_createInstance(proxy_class);
    printf("proxy add: 10 -> %ld\n", send_add(proxy, 10));
    long unused;
    void *args[] = { &unused };
    if (sf_msg_send(proxy, sf_sel_registerName("missing:"), &unused, args) != SF_OK)
        printf("error: %s\n", sf_last_error_message());

    sf_release(proxy);
    sf_release(counter);
    return 0;
}
