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
    _Atomic uint64_t epoch;         /* 0 = quiescent */
    uint32_t nesting;
    _Atomic int in_use;
    uint32_t transient;             /* taken after thread exit: given back when the section ends */
    struct sf_rcu_reader *next;
};

extern _Thread_local struct sf_rcu_reader *sf_rcu_self __attribute__((tls_model("initial-exec")));
extern _Atomic uint64_t sf_rcu_epoch;
extern int sf_rcu_readers_fence;

struct sf_rcu_reader *sf_rcu_register_thread(void);
/* Gives back a record taken by a thread past its own exit destructor. */
void sf_rcu_release_transient(struct sf_rcu_reader *r);

/*
 * Signal handlers may open a section at any point of the interrupted thread's enter or exit:
 * the nesting count goes up before the epoch is published and down before it is cleared, and
 * an epoch is published whenever none is (an older one, left by an interrupted exit, only
 * protects more). A handler's section therefore never clears an epoch its thread still needs.
 */
static inline void sf_rcu_enter(void) {
    struct sf_rcu_reader *r = sf_rcu_self;
    if (__builtin_expect(r == NULL, 0)) r = sf_rcu_register_thread();
    r->nesting++;
    atomic_signal_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->epoch, memory_order_relaxed) == 0) {
        atomic_store_explicit(&r->epoch, atomic_load_explicit(&sf_rcu_epoch, memory_order_acquire),
                              memory_order_relaxed);
        if (sf_rcu_readers_fence) atomic_thread_fence(memory_order_seq_cst);
        else atomic_signal_fence(memory_order_seq_cst);
    }
}

static inline void sf_rcu_exit(void) {
    struct sf_rcu_reader *r = sf_rcu_self;
    if (--r->nesting == 0) {
        atomic_signal_fence(memory_order_seq_cst);
        atomic_store_explicit(&r->epoch, 0, memory_order_release);
        if (__builtin_expect(r->transient != 0, 0)) sf_rcu_release_transient(r);
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
