// The trampoline slot allocator (see include/sf_tramp.h).
#include "sf_tramp.h"
#include "sf_private.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096u
#define SLOT 16u
#define SLOTS (PAGE / SLOT)

extern const unsigned char sf_tramp_templates[SF_TRAMP_KINDS][PAGE];

struct retired {
    void *code;
    uint64_t tag;
    int kind;
};

struct pool {
    void **slots;                   /* stack of free slots */
    size_t count, cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool pools[SF_TRAMP_KINDS];
static struct retired *pending;     /* retired, waiting for the grace period */
static size_t pending_count, pending_cap;
static size_t live_count;
static uintptr_t next_hint;         /* where the next chunk goes: below the previous one */
static _Atomic int enabled = -1;    /* -1: not decided yet */

static int grow(void **array, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 1;
    size_t n = *cap ? *cap * 2 : 256;
    while (n < need) n *= 2;
    void *p = realloc(*array, n * elem);
    if (!p) return 0;
    *array = p;
    *cap = n;
    return 1;
}

static int near(uintptr_t a, uintptr_t b) {
    uintptr_t d = a > b ? a - b : b - a;
    return d < ((uintptr_t)1 << 31) - 2 * PAGE;
}

/* Two pages, code then data, within ±2 GiB of the entries where the address space allows
 * (a jump to a near target predicts and fetches better). Read+write until the code is copied. */
static void *map_chunk(void) {
    uintptr_t anchor = (uintptr_t)&sf_tramp_entry;
    if (!next_hint) next_hint = (anchor & ~(uintptr_t)(PAGE - 1)) - (64u << 20);
    for (int i = 0; i < 64 && near(next_hint, anchor); i++) {
        void *p = mmap((void *)next_hint, 2 * PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p != MAP_FAILED) {
            if ((uintptr_t)p == next_hint) {
                next_hint -= 2 * PAGE;
                return p;
            }
            munmap(p, 2 * PAGE);  /* a kernel that ignored the flag */
        }
        next_hint -= 16u << 20;
    }
    void *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int add_chunk(int kind) {
    struct pool *pool = &pools[kind];
    if (!grow((void **)&pool->slots, &pool->cap, pool->count + SLOTS, sizeof *pool->slots)) return 0;
    unsigned char *p = map_chunk();
    if (!p) return 0;
    memcpy(p, sf_tramp_templates[kind], PAGE);
    if (mprotect(p, PAGE, PROT_READ | PROT_EXEC) != 0) {
        munmap(p, 2 * PAGE);
        return 0;
    }
    for (unsigned i = SLOTS; i-- > 0;) pool->slots[pool->count++] = p + i * SLOT;
    return 1;
}

static int kind_of(const void *code) {
    // Every slot of a kind is the same 16 bytes (its displacements are relative).
    for (int k = 0; k < SF_TRAMP_KINDS; k++) {
        if (memcmp(code, sf_tramp_templates[k], SLOT) == 0) return k;
    }
    return -1;
}

/* Moves retired slots whose grace period is over to the free list (lock held). */
static void collect(void) {
    if (pending_count == 0) return;
    for (int k = 0; k < SF_TRAMP_KINDS; k++) {
        if (!grow((void **)&pools[k].slots, &pools[k].cap, pools[k].count + pending_count, sizeof(void *))) return;
    }
    uint64_t oldest = sf_rcu_oldest_reader();
    size_t kept = 0;
    for (size_t i = 0; i < pending_count; i++) {
        struct pool *pool = &pools[pending[i].kind];
        if (pending[i].tag < oldest) pool->slots[pool->count++] = pending[i].code;
        else pending[kept++] = pending[i];
    }
    pending_count = kept;
}

int sf_tramp_enabled(void) {
    int e = atomic_load_explicit(&enabled, memory_order_relaxed);
    if (e < 0) {
        const char *env = getenv("SF_TRAMPOLINES");
        e = sysconf(_SC_PAGESIZE) == PAGE && !(env && env[0] == '0');
        atomic_store_explicit(&enabled, e, memory_order_relaxed);
    }
    return e;
}

void sf_tramp_set_enabled(int on) {
    atomic_store_explicit(&enabled, on && sysconf(_SC_PAGESIZE) == PAGE, memory_order_relaxed);
}

void *sf_tramp_alloc(void *context, const void *target) {
    return sf_tramp_alloc_kind(SF_TRAMP_R10, context, target);
}

void *sf_tramp_alloc_kind(int kind, void *context, const void *target) {
    if (kind < 0 || kind >= SF_TRAMP_KINDS) return NULL;
    struct pool *pool = &pools[kind];
    pthread_mutex_lock(&lock);
    if (pool->count == 0) collect();
    if (pool->count == 0 && !add_chunk(kind)) {
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    void *code = pool->slots[--pool->count];
    live_count++;
    void **words = (void **)((char *)code + PAGE);
    words[0] = context;
    words[1] = (void *)target;
    pthread_mutex_unlock(&lock);  /* releases the words with the slot */
    return code;
}

void sf_tramp_free(void *code) {
    if (!code) return;
    int kind = kind_of(code);
    pthread_mutex_lock(&lock);
    if (kind >= 0 && grow((void **)&pending, &pending_cap, pending_count + 1, sizeof *pending)) {
        pending[pending_count++] = (struct retired){code, sf_rcu_retire_tag(), kind};
    }  /* else: the slot leaks, which is safe */
    live_count--;
    pthread_mutex_unlock(&lock);
}

void sf_tramp_set_context(void *code, void *context) {
    pthread_mutex_lock(&lock);  /* publishes with the slot like sf_tramp_alloc's words */
    ((void **)((char *)code + PAGE))[0] = context;
    pthread_mutex_unlock(&lock);
}

void sf_tramp_words(const void *code, void **context, const void **target) {
    void *const *words = (void *const *)((const char *)code + PAGE);
    if (context) *context = words[0];
    if (target) *target = words[1];
}

/* fork(): a thread freeing a slot (a closure released anywhere) may hold the lock. */
void sf_tramp_atfork_prepare(void) { pthread_mutex_lock(&lock); }
void sf_tramp_atfork_release(void) { pthread_mutex_unlock(&lock); }

void sf_tramp_stats(size_t *live, size_t *pending_slots, size_t *free_slots) {
    pthread_mutex_lock(&lock);
    if (live) *live = live_count;
    if (pending_slots) *pending_slots = pending_count;
    if (free_slots) *free_slots = pools[SF_TRAMP_R10].count;
    pthread_mutex_unlock(&lock);
}

#else  /* other platforms: the libffi closures serve */

int sf_tramp_enabled(void) { return 0; }
void sf_tramp_set_enabled(int on) { (void)on; }
void *sf_tramp_alloc(void *context, const void *target) { (void)context; (void)target; return NULL; }
void *sf_tramp_alloc_kind(int kind, void *context, const void *target) {
    (void)kind; (void)context; (void)target;
    return NULL;
}
void sf_tramp_free(void *code) { (void)code; }
void sf_tramp_set_context(void *code, void *context) { (void)code; (void)context; }
void sf_tramp_words(const void *code, void **context, const void **target) {
    (void)code;
    if (context) *context = NULL;
    if (target) *target = NULL;
}
void sf_tramp_atfork_prepare(void) {}
void sf_tramp_atfork_release(void) {}

void sf_tramp_stats(size_t *live, size_t *pending_slots, size_t *free_slots) {
    if (live) *live = 0;
    if (pending_slots) *pending_slots = 0;
    if (free_slots) *free_slots = 0;
}
void sf_tramp_entry(void) { abort(); }
void sf_tramp_invoke(struct sf_tramp_call *call) { (void)call; abort(); }
void sf_tramp_int_nothrow0(void) { abort(); }
void sf_tramp_int_nothrow1(void) { abort(); }
void sf_tramp_int_nothrow2(void) { abort(); }
void sf_tramp_int_nothrow3(void) { abort(); }

#endif
