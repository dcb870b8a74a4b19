// Signature caches for the miss path, so that a forwarded send does not build and parse its
// signature on every call. Signatures are immortal and immutable: a slot may be overwritten at
// any time, and a reader (sf_lookup.h) checks that what it found is what it asked for.
#include "sf_private.h"

const struct sf_signature *_Atomic sf_sig_by_key[SF_SIG_CACHE_SLOTS];
const struct sf_signature *_Atomic sf_sig_by_types[SF_SIG_CACHE_SLOTS];

void sf_sig_cache_put_key(const struct sf_signature *sig) {
    atomic_store_explicit(&sf_sig_by_key[sf_sig_cache_slot(sig->key)], sig, memory_order_release);
}

void sf_sig_cache_put_types(const struct sf_signature *sig) {
    uint64_t p = (uint64_t)(uintptr_t)sig->types;
    atomic_store_explicit(&sf_sig_by_types[sf_sig_cache_slot(p)], sig, memory_order_release);
}
