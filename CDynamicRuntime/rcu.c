// Read-side sections and grace periods (a small membarrier-based RCU).
#include "sf_private.h"
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

_Thread_local struct sf_rcu_reader *sf_rcu_self __attribute__((tls_model("initial-exec")));
_Atomic uint64_t sf_rcu_epoch = 1;
int sf_rcu_readers_fence = 1;

static pthread_mutex_t readers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sf_rcu_reader *_Atomic readers;
static pthread_key_t reader_key;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

/* Set once this thread's record has been given back: a send from a later thread-specific-data
 * destructor (an object released at thread exit whose observer sends) takes a record for the
 * length of its section only, since no destructor round may be left to give it back. */
static _Thread_local int exited;

static void give_back(struct sf_rcu_reader *r) {
    atomic_store_explicit(&r->state, 0, memory_order_release);
    r->transient = 0;
    atomic_store_explicit(&r->in_use, 0, memory_order_release);
}

static void thread_exit(void *p) {
    struct sf_rcu_reader *r = p;
    exited = 1;
    // Never leave this thread pointing at a record another thread may take over.
    if (sf_rcu_self == r) sf_rcu_self = NULL;
    if (atomic_load_explicit(&r->state, memory_order_relaxed) != 0) {
        // Still inside a section: keep the record until the section ends.
        r->transient = 1;
        sf_rcu_self = r;
        return;
    }
    give_back(r);
}

void sf_rcu_release_transient(struct sf_rcu_reader *r) {
    sf_rcu_self = NULL;
    give_back(r);
}

static void init(void) {
    pthread_key_create(&reader_key, thread_exit);
    long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
        sf_rcu_readers_fence = 0;
    }
}

void sf_rcu_init(void) { pthread_once(&init_once, init); }

struct sf_rcu_reader *sf_rcu_register_thread(void) {
    sf_rcu_init();
    pthread_mutex_lock(&readers_lock);
    struct sf_rcu_reader *r = atomic_load_explicit(&readers, memory_order_relaxed);
    for (; r; r = r->next) {
        if (!atomic_load_explicit(&r->in_use, memory_order_acquire)) break;
    }
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r) abort();  // a thread that cannot be tracked cannot send safely
        r->next = atomic_load_explicit(&readers, memory_order_relaxed);
        atomic_store_explicit(&readers, r, memory_order_release);
    }
    atomic_store_explicit(&r->in_use, 1, memory_order_relaxed);
    pthread_mutex_unlock(&readers_lock);
    sf_rcu_self = r;
    if (exited) r->transient = 1;
    else pthread_setspecific(reader_key, r);
    return r;
}

uint64_t sf_rcu_retire_tag(void) {
    return atomic_fetch_add_explicit(&sf_rcu_epoch, 1, memory_order_seq_cst);
}

uint64_t sf_rcu_oldest_reader(void) {
    sf_rcu_init();
    // Make every reader's epoch store visible before reading them.
    if (sf_rcu_readers_fence) atomic_thread_fence(memory_order_seq_cst);
    else if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) atomic_thread_fence(memory_order_seq_cst);
    uint64_t oldest = UINT64_MAX;
    for (struct sf_rcu_reader *r = atomic_load_explicit(&readers, memory_order_acquire); r; r = r->next) {
        uint64_t e = atomic_load_explicit(&r->state, memory_order_acquire) >> SF_RCU_NEST_BITS;
        if (e != 0 && e < oldest) oldest = e;
    }
    return oldest;
}

/* fork(): the readers lock is taken last (a thread registering may hold the runtime lock). */
void sf_rcu_atfork_prepare(void) { pthread_mutex_lock(&readers_lock); }
void sf_rcu_atfork_parent(void) { pthread_mutex_unlock(&readers_lock); }

/* The child has only the forking thread: every other thread's record is free, whatever
 * section it was in, or grace periods would never end. */
void sf_rcu_atfork_child(void) {
    for (struct sf_rcu_reader *r = atomic_load_explicit(&readers, memory_order_relaxed); r; r = r->next) {
        if (r != sf_rcu_self) give_back(r);
    }
    // Single-threaded here, so readers can switch to fences safely if the child's
    // registration for expedited membarrier is not in place.
    if (!sf_rcu_readers_fence && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) sf_rcu_readers_fence = 1;
    pthread_mutex_unlock(&readers_lock);
}
