// Signature caches for the miss path, so that a forwarded send does not build and parse its
// signature on every call. Signatures are immortal and immutable: a slot may be overwritten at
// any time, and a reader checks that what it found is what it asked for.
#include "sf_private.h"

#define SF_SIG_CACHE_SLOTS 256

static const struct sf_signature *_Atomic by_key[SF_SIG_CACHE_SLOTS];
static const struct sf_signature *_Atomic by_types[SF_SIG_CACHE_SLOTS];

static inline unsigned slot_of(uint64_t v) { return (unsigned)((v * 0x9E3779B97F4A7C15ull) >> 56); }

const struct sf_signature *sf_sig_cache_by_key(uint64_t key) {
    const struct sf_signature *s = atomic_load_explicit(&by_key[slot_of(key)], memory_order_acquire);
    return s && s->key == key ? s : NULL;
}

void sf_sig_cache_put_key(const struct sf_signature *sig) {
    atomic_store_explicit(&by_key[slot_of(sig->key)], sig, memory_order_release);
}

const struct sf_signature *sf_sig_cache_by_types(const char *types) {
    uint64_t p = (uint64_t)(uintptr_t)types;
    const struct sf_signature *s = atomic_load_explicit(&by_types[slot_of(p)], memory_order_acquire);
    return s && s->types == types ? s : NULL;
}

void sf_sig_cache_put_types(const struct sf_signature *sig) {
    uint64_t p = (uint64_t)(uintptr_t)sig->types;
    atomic_store_explicit(&by_types[slot_of(p)], sig, memory_order_release);
}
