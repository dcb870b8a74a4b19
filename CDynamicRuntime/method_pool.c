// Method-table entries come from slabs, 56 bytes each with no allocator header: a class with
// many methods pays for the entries and nothing else. Entries are reused,
// never returned to the system; every slab stays reachable from `slabs`.
#include "sf_private.h"
#include <pthread.h>
#include <stdlib.h>

#define SF_METHODS_PER_SLAB 127

struct method_slab {
    struct method_slab *next;
    struct sf_method entries[SF_METHODS_PER_SLAB];
};

union free_entry {
    struct sf_method method;
    union free_entry *next;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct method_slab *slabs;
static union free_entry *free_list;

sf_method_t sf_method_alloc(void) {
    pthread_mutex_lock(&pool_lock);
    if (!free_list) {
        struct method_slab *slab = calloc(1, sizeof *slab);
        if (!slab) abort();  // as Swift's own allocation does
        slab->next = slabs;
        slabs = slab;
        for (int i = SF_METHODS_PER_SLAB - 1; i >= 0; i--) {
            union free_entry *e = (union free_entry *)&slab->entries[i];
            e->next = free_list;
            free_list = e;
        }
    }
    union free_entry *e = free_list;
    free_list = e->next;
    pthread_mutex_unlock(&pool_lock);
    return &e->method;
}

void sf_method_free(sf_method_t m) {
    if (!m) return;
    union free_entry *e = (union free_entry *)m;
    pthread_mutex_lock(&pool_lock);
    e->next = free_list;
    free_list = e;
    pthread_mutex_unlock(&pool_lock);
}

// fork(): the pool's lock is a leaf (taken under the runtime lock, never the other way round),
// so ForkSafety takes it last and releases it first.
void sf_method_pool_atfork_prepare(void) { pthread_mutex_lock(&pool_lock); }
void sf_method_pool_atfork_release(void) { pthread_mutex_unlock(&pool_lock); }
