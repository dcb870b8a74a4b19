/*
 * Scenarios for the C API's hooks, invocations, forwarding handlers, C-function methods,
 * throttle rules and introspection, through SelectorForwarding.h only. Each returns 0 on
 * success, else the line of the first failed check (fx_capi_failure() says which).
 */
#ifndef CAPI_SCENARIOS_H
#define CAPI_SCENARIOS_H

#include <SelectorForwarding.h>

#ifdef __cplusplus
extern "C" {
#endif

const char *fx_capi_failure(void);
/* How many contexts the runtime has released through an sf_context_release_fn so far. */
int fx_capi_released_contexts(void);

int fx_capi_hooks(const char *name);
int fx_capi_hook_bad_input(const char *name);
int fx_capi_object_hooks(const char *name);
/* Hooked methods called through their IMP after a failed call through another IMP. */
int fx_capi_hook_after_failed_direct_call(const char *name);
/* Hooks asked for by class name: before and after the class registers, removed, failed. */
int fx_capi_when_available(const char *name);
int fx_capi_invocations(const char *name);
int fx_capi_invocation_bad_input(const char *name);
int fx_capi_forwarding(const char *name);
int fx_capi_function_methods(const char *name);
int fx_capi_rules(const char *name);
int fx_capi_rule_bad_input(const char *name);
int fx_capi_cooldown_tokens(const char *name);
int fx_capi_cooldown_bad_input(const char *name);
int fx_capi_introspection(const char *name);

/* A before-hook that counts its calls (thread-safe), and the count. */
sf_status fx_capi_counting_hook(sf_call_t call, void *context);
long fx_capi_counting_hook_calls(void);

#ifdef __cplusplus
}
#endif

#endif
