// The per-class lookup cache: open addressing, lock-free reads, writes under the runtime lock.
#include "sf_private.h"
#include <stdlib.h>
#include <string.h>

// The empty cache's one bucket must be part of the object itself: a probe reads buckets[0]
// and loops until it sees NULL, and nothing guarantees what the linker places after a
// separate array (a neighbouring global such as `retired_head` would be read as a bucket, and
// a lookup in a fresh class would spin forever once a cache had been retired). Initialising the flexible array member (a GNU C extension that clang
// and GCC support for static objects) reserves the bucket inside sf_empty_cache.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wgnu-flexible-array-initializer"
struct sf_cache sf_empty_cache = {.mask = 0, .occupied = 0, .buckets = {{NULL, NULL}}};
#pragma clang diagnostic pop

static struct sf_cache *cache_new(uint32_t capacity) {
    struct sf_cache *c = calloc(1, sizeof(struct sf_cache) + capacity * sizeof(struct sf_cache_bucket));
    if (c) c->mask = capacity - 1;
    return c;
}

static void cache_put(struct sf_cache *c, sf_sel sel, sf_method_t m) {
    uint32_t i = sf_sel_hash(sel) & c->mask;
    for (;;) {
        sf_sel k = atomic_load_explicit(&c->buckets[i].sel, memory_order_relaxed);
        if (k == sel || k == NULL) break;
        i = (i + 1) & c->mask;
    }
    if (atomic_load_explicit(&c->buckets[i].sel, memory_order_relaxed) == NULL) c->occupied++;
    atomic_store_explicit(&c->buckets[i].method, m, memory_order_relaxed);
    // The selector last, with release: a reader that sees it sees the method too.
    atomic_store_explicit(&c->buckets[i].sel, sel, memory_order_release);
}

void sf_cache_insert(sf_class_t cls, sf_sel sel, sf_method_t method) {
    struct sf_cache *c = atomic_load_explicit(&cls->cache, memory_order_relaxed);
    uint32_t capacity = c->mask + 1;
    if (c == &sf_empty_cache || (c->occupied + 1) * 4 > capacity * 3) {
        uint32_t grown = c == &sf_empty_cache ? 8 : capacity * 2;
        struct sf_cache *n = cache_new(grown);
        if (!n) return;  // out of memory: stay uncached, lookups still work
        if (c != &sf_empty_cache) {
            for (uint32_t i = 0; i <= c->mask; i++) {
                sf_sel k = atomic_load_explicit(&c->buckets[i].sel, memory_order_relaxed);
                if (k) cache_put(n, k, atomic_load_explicit(&c->buckets[i].method, memory_order_relaxed));
            }
        }
        cache_put(n, sel, method);
        atomic_store_explicit(&cls->cache, n, memory_order_release);
        atomic_store_explicit(&cls->cache_mask, n->mask, memory_order_release);
        if (c != &sf_empty_cache) sf_retire(c, free);
        return;
    }
    cache_put(c, sel, method);
}

void sf_cache_flush(sf_class_t cls) {
    struct sf_cache *c = atomic_load_explicit(&cls->cache, memory_order_relaxed);
    if (c == &sf_empty_cache || c->occupied == 0) return;
    uint32_t seq = atomic_load_explicit(&cls->cache_seq, memory_order_relaxed);
    atomic_store_explicit(&cls->cache_seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (uint32_t i = 0; i <= c->mask; i++) {
        atomic_store_explicit(&c->buckets[i].sel, NULL, memory_order_relaxed);
        atomic_store_explicit(&c->buckets[i].method, NULL, memory_order_relaxed);
    }
    c->occupied = 0;
    atomic_store_explicit(&cls->cache_seq, seq + 2, memory_order_release);
}

void sf_cache_destroy(sf_class_t cls) {
    struct sf_cache *c = atomic_load_explicit(&cls->cache, memory_order_relaxed);
    atomic_store_explicit(&cls->cache_mask, 0, memory_order_release);
    atomic_store_explicit(&cls->cache, &sf_empty_cache, memory_order_release);
    if (c != &sf_empty_cache) free(c);
}
