/*
 * The throttle engine's thread state. Private: Swift reaches it through the module map, C
 * users never see it.
 */
#ifndef SF_THROTTLE_STATE_H
#define SF_THROTTLE_STATE_H

/* The markers of the calls the engine's rules are performing on this thread (a linked list on
 * the stack, NULL when none): read on every throttled call, so no pthread key. */
extern _Thread_local void *sf_throttle_performing __attribute__((tls_model("initial-exec")));
static inline void *sf_throttle_performing_top(void) { return sf_throttle_performing; }
static inline void sf_throttle_set_performing_top(void *top) { sf_throttle_performing = top; }

#endif
