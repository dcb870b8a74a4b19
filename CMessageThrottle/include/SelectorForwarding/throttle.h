/*
 * SelectorForwarding — throttle rules and manual clocks (MessageThrottle).
 * Part of the public C API: include <SelectorForwarding.h>. It lives with the throttle
 * engine's C side (CMessageThrottle), above the runtime's; installed, it sits beside the other
 * topic headers.
 */
#ifndef SELECTOR_FORWARDING_THROTTLE_H
#define SELECTOR_FORWARDING_THROTTLE_H

#include "SelectorForwarding/invocations.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- throttle rules (MessageThrottle) ---- */

typedef struct sf_rule *sf_rule_t;
typedef struct sf_manual_clock *sf_manual_clock_t;
typedef struct sf_cooldown_token *sf_cooldown_token_t;

typedef enum sf_throttle_mode {
    SF_THROTTLE_FIRSTLY = 0,    /* the first call of a window runs at once, the rest are dropped */
    SF_THROTTLE_LAST = 1,       /* the last call of a window runs when it ends */
    SF_THROTTLE_DEBOUNCE = 2,   /* the last call runs once the calls pause for the duration */
    SF_THROTTLE_THROTTLE = 3,   /* leading and/or trailing edge (options), at most once per window */
    SF_THROTTLE_COOLDOWN = 4,   /* a call runs, then every call is dropped for the duration */
    SF_THROTTLE_SINCE_PERFORMED = 5, /* at most one run per duration, measured from the last run; a
                                      * call inside runs at the window's end (SF_RULE_LATEST: the
                                      * latest such call, else the first) */
    SF_THROTTLE_DELAYED_COOLDOWN = 6, /* AXKit's ax_dispatch_cooldown: a call arriving while not
                                       * cooling starts a cooldown of the duration and runs after
                                       * the rule's delay (sf_rule_setDelayedCooldown; none: at
                                       * once); calls while cooling are rejected. Rules given one
                                       * sf_cooldown_token_t share the cooldown */
} sf_throttle_mode;

enum {
    SF_RULE_LEADING = 1u << 0,          /* SF_THROTTLE_THROTTLE: run the first call of a window;
                                         * SF_THROTTLE_DEBOUNCE: run the first call after a pause at
                                         * once (alone: nothing more until the calls pause) */
    SF_RULE_TRAILING = 1u << 1,         /* SF_THROTTLE_THROTTLE: run the last call at the end;
                                         * SF_THROTTLE_DEBOUNCE with SF_RULE_LEADING: also the last
                                         * call, once the calls pause */
    SF_RULE_RETURN_LAST_RESULT = 1u << 2, /* a suppressed call returns the last real result, not 0 */
    SF_RULE_LATEST = 1u << 3,           /* SF_THROTTLE_SINCE_PERFORMED: keep the latest call */
};

typedef enum sf_pending_policy { SF_PENDING_CANCEL = 0, SF_PENDING_FLUSH = 1 } sf_pending_policy;

/* A rejected call, lent for the callback only. */
typedef void (*sf_rule_rejected_fn)(sf_invocation_t inv, void *context);

/* A rule for `sel` on `target`: an object (that object only), a class (its instances) or a
 * metaclass (class methods). Not applied yet; owned by the caller (+1): sf_rule_release. */
sf_rule_t sf_rule_create(sf_id target, sf_sel sel, sf_throttle_mode mode, uint64_t duration_ns, uint32_t options);
/* Runs the rule's timers on `clock` instead of a Dispatch queue (tests). Before sf_rule_apply. */
sf_status sf_rule_setManualClock(sf_rule_t rule, sf_manual_clock_t clock);
sf_status sf_rule_setRejectedHandler(sf_rule_t rule, sf_rule_rejected_fn fn, void *context);
/* Starts limiting. Applying an applied rule, or a second rule for the selector in the same
 * class hierarchy, is SF_ERR_RULE. */
sf_status sf_rule_apply(sf_rule_t rule);
/* Stops limiting; a pending call is run (SF_PENDING_FLUSH) or dropped. Not applied: SF_ERR_RULE. */
sf_status sf_rule_discard(sf_rule_t rule, sf_pending_policy pending);
/* Runs the pending call now, if any; *flushed (may be NULL) says whether one ran. */
sf_status sf_rule_flush(sf_rule_t rule, bool *flushed);
/* Drops the pending call, if any. */
sf_status sf_rule_cancel(sf_rule_t rule);
/* Drops the pending call, if any, but keeps the window and any cooldown going. Not applied:
 * SF_ERR_RULE. */
sf_status sf_rule_cancelPending(sf_rule_t rule);
/* Whether the rule has a window open now (lodash's pending()): a call is pending, or the
 * window of a call run at once, or a cooldown, has not ended. False when not applied. */
bool sf_rule_isPending(sf_rule_t rule);
bool sf_rule_isApplied(sf_rule_t rule);
/* SF_THROTTLE_DELAYED_COOLDOWN: an accepted call runs `delay_ns` after it arrives (a delay over
 * the duration counts as the duration); `token` (NULL: none) shares the cooldown with every
 * rule given it. Applied or not; the rule keeps the token alive. Another mode: SF_ERR_RULE. */
sf_status sf_rule_setDelayedCooldown(sf_rule_t rule, uint64_t delay_ns, sf_cooldown_token_t token);
/* Drops the caller's handle; an applied rule stays applied until discarded. */
sf_status sf_rule_release(sf_rule_t rule);

/* A clock that moves only when told: deadlines fire inside sf_manual_clock_advance. */
sf_manual_clock_t sf_manual_clock_create(uint64_t now_ns);
sf_status sf_manual_clock_advance(sf_manual_clock_t clock, uint64_t ns);
uint64_t sf_manual_clock_now(sf_manual_clock_t clock);
sf_status sf_manual_clock_release(sf_manual_clock_t clock);

/* A cooldown several rules share (AXKit's cooldown token), named `name` (NULL: "cooldown") in
 * messages; owned by the caller (+1): sf_cooldown_token_release. The rules sharing a token
 * must read one clock. */
sf_cooldown_token_t sf_cooldown_token_create(const char *name);
/* Whether a rule sharing the token is cooling now, read on `clock` (NULL: the monotonic clock
 * of rules on a Dispatch queue). False for a dead handle. */
bool sf_cooldown_token_isCooling(sf_cooldown_token_t token, sf_manual_clock_t clock);
/* Ends the shared cooldown at once (the rules' own windows are untouched). */
sf_status sf_cooldown_token_reset(sf_cooldown_token_t token);
/* Drops the caller's handle; rules given the token keep it. */
sf_status sf_cooldown_token_release(sf_cooldown_token_t token);

#ifdef __cplusplus
}
#endif

#endif
