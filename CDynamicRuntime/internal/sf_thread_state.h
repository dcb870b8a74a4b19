/*
 * SelectorForwarding — per-thread state: the last error, a pending error, forwarding depth, live counters.
 * Part of sf_private.h: include that header, which sets visibility and linkage around this one.
 */
#ifndef SF_THREAD_STATE_H
#define SF_THREAD_STATE_H
#ifndef SF_PRIVATE_H
#error "include sf_private.h"
#endif

/* ---- thread-local errors ---- */

void sf_set_last_error(sf_status status, const char *message);
/* Sets the last error to "<prefix><a><middle><b><suffix>" without printf (misses are common). */
void sf_set_last_error_parts(sf_status status, const char *prefix, const char *a, const char *middle,
                             const char *b, const char *suffix);
void sf_clear_last_error_slow(void);
extern _Thread_local sf_status sf_last_status __attribute__((tls_model("initial-exec")));

/* The success path of lookups: one thread-local load; a store only after an error. */
static inline void sf_clear_last_error(void) {
    if (__builtin_expect(sf_last_status != SF_OK, 0)) sf_clear_last_error_slow();
}

/* ---- an error raised inside an IMP (a throwing closure or hook), for the sender ---- */

extern _Thread_local void *sf_pending_error __attribute__((tls_model("initial-exec")));
static inline void *sf_take_pending_error(void) {
    void *e = sf_pending_error;
    if (__builtin_expect(e != NULL, 0)) sf_pending_error = NULL;
    return e;
}
static inline void *sf_get_pending_error(void) { return sf_pending_error; }
static inline void sf_set_pending_error(void *e) { sf_pending_error = e; }

/* The invocation record that forwardInvocation: is being handed on this thread (NULL when
 * none): a record sent in by anyone else is refused, never dereferenced. */
extern _Thread_local void *sf_delivering __attribute__((tls_model("initial-exec")));
static inline void *sf_delivering_record(void) { return sf_delivering; }
static inline void *sf_swap_delivering_record(void *r) {
    void *old = sf_delivering;
    sf_delivering = r;
    return old;
}

/* The C API's calls in progress on this thread (an sf_call_t is valid only while on it). */
extern _Thread_local void *sf_capi_call_top __attribute__((tls_model("initial-exec")));
static inline void *sf_capi_calls(void) { return sf_capi_call_top; }
static inline void sf_capi_set_calls(void *top) { sf_capi_call_top = top; }

/* Forwarding depth on this thread: a forwardInvocation: that re-sends to itself is an error,
 * not a stack overflow. */
extern _Thread_local int sf_forward_depth __attribute__((tls_model("initial-exec")));
static inline int sf_forward_depth_enter(void) { return ++sf_forward_depth; }
static inline void sf_forward_depth_exit(void) { --sf_forward_depth; }

/* ---- C strings lent to this thread (Swift String arguments and returns) ---- */

/* How many are lent now; a Swift send marks this count and frees back to it once it has read
 * its result (one thread-local load when nothing was lent). */
extern _Thread_local size_t sf_lent_count __attribute__((tls_model("initial-exec")));
static inline size_t sf_lent_mark(void) { return sf_lent_count; }
void sf_lent_drain_slow(size_t mark);
static inline void sf_lent_drain(size_t mark) {
    if (__builtin_expect(sf_lent_count > mark, 0)) sf_lent_drain_slow(mark);
}
/* Takes a malloc'd string and lends it until the thread's count falls below its place (a
 * pool pop, a Swift send's end, thread exit); NULL (and `s` freed) when out of memory. */
const char *sf_lend_string(char *s);

/* Live counts, for leak checks in tests and the stress run. */
extern _Atomic intptr_t sf_live_objects;
extern _Atomic intptr_t sf_live_closures;
static inline intptr_t sf_counter_objects(void) { return atomic_load(&sf_live_objects); }
static inline intptr_t sf_counter_closures(void) { return atomic_load(&sf_live_closures); }
static inline void sf_counter_objects_add(intptr_t d) { atomic_fetch_add_explicit(&sf_live_objects, d, memory_order_relaxed); }
static inline void sf_counter_closures_add(intptr_t d) { atomic_fetch_add_explicit(&sf_live_closures, d, memory_order_relaxed); }

#endif
