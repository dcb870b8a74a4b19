/*
 * SelectorForwarding — read-side sections and the retired list.
 * Part of sf_private.h: include that header, which sets visibility and linkage around this one.
 */
#ifndef SF_RCU_H
#define SF_RCU_H
#ifndef SF_PRIVATE_H
#error "include sf_private.h"
#endif

/* ---- read-side sections, for freeing IMPs and caches that readers may still hold ----
 *
 * A sender enters a section around lookup-and-call. A writer that unpublishes something
 * tags it with sf_rcu_retire_tag() and frees it once sf_rcu_oldest_reader() is newer than
 * the tag. Readers pay two thread-local stores; writers pay a membarrier (or, where the
 * kernel lacks it, readers pay a full fence instead).
 */
struct sf_rcu_reader {
    /* 0 = quiescent; inside a section, the epoch seen at its outermost entry shifted left by
     * SF_RCU_NEST_BITS, or'ed with the nesting depth (at least 1). One word, so that entering
     * and leaving a section is one load and one store, and a signal handler sees the depth
     * and the epoch change together. */
    _Atomic uint64_t state;
    _Atomic int in_use;
    uint32_t transient;             /* taken after thread exit: given back when the section ends */
    struct sf_rcu_reader *next;
};

/* Nesting depth bits: a million nested sends would exhaust any stack first. The epoch keeps
 * the other 44 bits (one per retirement: centuries at any plausible rate). */
#define SF_RCU_NEST_BITS 20
#define SF_RCU_NEST_MASK ((UINT64_C(1) << SF_RCU_NEST_BITS) - 1)

extern _Thread_local struct sf_rcu_reader *sf_rcu_self __attribute__((tls_model("initial-exec")));
extern _Atomic uint64_t sf_rcu_epoch;
extern int sf_rcu_readers_fence;

struct sf_rcu_reader *sf_rcu_register_thread(void);
/* Gives back a record taken by a thread past its own exit destructor. */
void sf_rcu_release_transient(struct sf_rcu_reader *r);

/*
 * Signal handlers may open a section at any point of the interrupted thread's enter or exit.
 * Each side reads the state and writes it back in one store: a handler that runs between the
 * two leaves the state as it found it, so the interrupted store is still right. The outermost
 * entry publishes the current epoch; nested ones only count.
 */
static inline void sf_rcu_enter(void) {
    struct sf_rcu_reader *r = sf_rcu_self;
    if (__builtin_expect(r == NULL, 0)) r = sf_rcu_register_thread();
    uint64_t state = atomic_load_explicit(&r->state, memory_order_relaxed);
    if (__builtin_expect(state == 0, 1)) {
        atomic_store_explicit(&r->state,
                              atomic_load_explicit(&sf_rcu_epoch, memory_order_acquire) << SF_RCU_NEST_BITS | 1,
                              memory_order_relaxed);
        if (__builtin_expect(sf_rcu_readers_fence != 0, 0)) atomic_thread_fence(memory_order_seq_cst);
        else atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_store_explicit(&r->state, state + 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
    }
}

static inline void sf_rcu_exit(void) {
    struct sf_rcu_reader *r = sf_rcu_self;
    uint64_t state = atomic_load_explicit(&r->state, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect((state & SF_RCU_NEST_MASK) == 1, 1)) {
        atomic_store_explicit(&r->state, 0, memory_order_release);
        if (__builtin_expect(r->transient != 0, 0)) sf_rcu_release_transient(r);
    } else {
        atomic_store_explicit(&r->state, state - 1, memory_order_relaxed);
    }
}

void sf_rcu_init(void);
/* pthread_atfork handlers for the readers list, run last in prepare and first after fork. */
void sf_rcu_atfork_prepare(void);
void sf_rcu_atfork_parent(void);
void sf_rcu_atfork_child(void);
/* Call after unpublishing; the returned tag goes with the retired item. */
uint64_t sf_rcu_retire_tag(void);
/* Items with a tag lower than this are unreachable by every reader. */
uint64_t sf_rcu_oldest_reader(void);

/* The retired list (retire.c): the one way to free what readers may still hold. */
typedef void (*sf_retire_fn)(void *item);
struct sf_retired;
/* Queues `item` for free_fn after the grace period; call with the runtime lock held, after
 * unpublishing it. */
void sf_retire(void *item, sf_retire_fn free_fn);
/* Detaches the items no reader can reach any more (runtime lock held); NULL when none. */
struct sf_retired *sf_retired_take_ready(void);
/* Frees a detached list; call without the runtime lock (a free may re-enter the runtime). */
void sf_retired_free(struct sf_retired *list);
/* Items still waiting, and list entries examined by sf_retired_take_ready so far (lock held). */
size_t sf_retired_pending(void);
uint64_t sf_retired_visits(void);

#endif
