/*
 * SelectorForwarding — the lookup cache, the slow path and reference counts: the send's fast path.
 * Part of sf_private.h: include that header, which sets visibility and linkage around this one.
 */
#ifndef SF_LOOKUP_H
#define SF_LOOKUP_H
#ifndef SF_PRIVATE_H
#error "include sf_private.h"
#endif

/* ---- the lookup cache ---- */

extern struct sf_cache sf_empty_cache;

static inline uint32_t sf_sel_hash(sf_sel sel) { return sel->hash; }

/*
 * Lock-free probe. A seqlock guards against a concurrent in-place flush; a miss or a torn
 * read returns NULL and the caller takes the slow path, which holds the runtime lock.
 */
static inline sf_method_t sf_cache_probe(sf_class_t cls, sf_sel sel) {
    uint32_t seq = atomic_load_explicit(&cls->cache_seq, memory_order_acquire);
    // The mask first: a mask at most the cache's own keeps the probe inside the buckets.
    uint32_t mask = atomic_load_explicit(&cls->cache_mask, memory_order_acquire);
    struct sf_cache *cache = atomic_load_explicit(&cls->cache, memory_order_acquire);
    uint32_t i = sf_sel_hash(sel) & mask;
    sf_method_t found;
    // The selector's own bucket straight through: a hit there takes no branch (a taken branch
    // costs a send more than the instructions around it).
    if (__builtin_expect(atomic_load_explicit(&cache->buckets[i].sel, memory_order_acquire) == sel, 1)) {
        found = atomic_load_explicit(&cache->buckets[i].method, memory_order_relaxed);
    } else {
        for (;;) {
            sf_sel k = atomic_load_explicit(&cache->buckets[i].sel, memory_order_acquire);
            if (k == sel) {
                found = atomic_load_explicit(&cache->buckets[i].method, memory_order_relaxed);
                break;
            }
            if (k == NULL) return NULL;
            i = (i + 1) & mask;
        }
    }
    atomic_thread_fence(memory_order_acquire);
    if ((seq & 1u) || atomic_load_explicit(&cls->cache_seq, memory_order_relaxed) != seq) return NULL;
    return found;
}

/* Writers: called with the runtime lock held. */
void sf_cache_insert(sf_class_t cls, sf_sel sel, sf_method_t method);
void sf_cache_flush(sf_class_t cls);
/* A cache replaced by growth goes to the retired list (sf_retire). */
/* Frees the class's cache outright: only when no reader can reach the class. */
void sf_cache_destroy(sf_class_t cls);

/* ---- the slow path, installed by the Swift runtime at start-up ---- */

typedef sf_method_t (*sf_lookup_slow_fn)(sf_class_t cls, sf_sel sel);
typedef void (*sf_dealloc_hook_fn)(sf_id obj);
extern sf_lookup_slow_fn _Atomic sf_lookup_slow;
extern sf_dealloc_hook_fn _Atomic sf_dealloc_hook;
void sf_install_slow_path(sf_lookup_slow_fn fn);
/* The forwarding IMP's dispatcher (forward.c): given the first three argument words, returns
 * the code to run the call with (NULL: the zero-return stub; *stret then says which). */
typedef sf_imp (*sf_forward_target_fn)(void *a0, void *a1, void *a2, int *stret);
extern sf_forward_target_fn _Atomic sf_forward_target;
void sf_install_forward_target(sf_forward_target_fn fn);
void sf_install_dealloc_hook(sf_dealloc_hook_fn fn);
/* The selectors of the forwarding stages every forwarded send looks up, registered by the Swift
 * runtime before any class exists (NULL until then): the miss path reads them with one load. */
enum { SF_STAGE_FORWARDING_TARGET, SF_STAGE_METHOD_SIGNATURE, SF_STAGE_FORWARD_INVOCATION, SF_STAGE_COUNT };
extern sf_sel _Atomic sf_stage_selectors[SF_STAGE_COUNT];
void sf_install_stage_selectors(sf_sel forwarding_target, sf_sel method_signature, sf_sel forward_invocation);
static inline sf_sel sf_stage_selector(int stage) {
    return atomic_load_explicit(&sf_stage_selectors[stage], memory_order_relaxed);
}
/* The root class's `dealloc` (the runtime's teardown), for [super dealloc] from a root class. */
extern sf_imp _Atomic sf_root_dealloc_imp;
extern sf_sel _Atomic sf_root_dealloc_sel;
void sf_install_root_dealloc(sf_imp imp, sf_sel sel);
/* The object whose dealloc chain runs on this thread, until the root dealloc claims it. */
void *sf_dealloc_current(void);
void sf_dealloc_set_current(void *obj);

/* A small object's class comes from its tag's slot, an allocated object's from its isa word:
 * the address of the word to load is selected without a branch (a conditional move), so both
 * kinds take the same one load and neither pays a taken branch. */
static inline sf_class_t sf_object_isa(sf_id obj) {
    struct sf_class *_Atomic *word = &obj->isa;
    struct sf_class *_Atomic *slot = &sf_small_classes[(uintptr_t)obj >> SF_TAGGED_TAG_SHIFT];
    __asm__("" : "+r"(slot));  /* keeps the selection a cmov, not a branch */
    word = sf_is_tagged(obj) ? slot : word;
    return atomic_load_explicit(word, memory_order_acquire);
}

/* Cached for a selector no class in the chain implements: the miss goes straight to
 * forwarding without the runtime lock. Never returned to callers. */
extern struct sf_method sf_forward_method;
static inline sf_method_t sf_forward_method_marker(void) { return &sf_forward_method; }
/* Cached once the resolver declined the selector (objc4's _objc_msgForward_impcache): later
 * misses skip the resolver until the class's methods change, which flushes the cache. */
extern struct sf_method sf_declined_method;
static inline sf_method_t sf_declined_method_marker(void) { return &sf_declined_method; }
static inline bool sf_method_is_marker(sf_method_t m) { return m == &sf_forward_method || m == &sf_declined_method; }
static inline bool sf_cache_resolver_declined(sf_class_t cls, sf_sel sel) {
    return sf_cache_probe(cls, sel) == &sf_declined_method;
}

/* The method, a marker (the selector forwards; the resolver declined it) or NULL (lookup failed). */
static inline sf_method_t sf_lookup_entry(sf_class_t cls, sf_sel sel) {
    sf_method_t m = sf_cache_probe(cls, sel);
    if (__builtin_expect(m == NULL, 0)) m = atomic_load_explicit(&sf_lookup_slow, memory_order_relaxed)(cls, sel);
    return m;
}

static inline sf_method_t sf_lookup_method(sf_class_t cls, sf_sel sel) {
    sf_method_t m = sf_lookup_entry(cls, sel);
    return sf_method_is_marker(m) ? NULL : m;
}

/* ---- signature caches for the miss path (sig_cache.c) ----
 * by key: the signature a caller's own types imply, for keys that name their types exactly
 * (the Swift side checks: no long, pointer or struct codes). by types: the signature whose
 * immortal `types` string is this very pointer (what methodSignatureForSelector: returns when
 * it hands back an interned signature's types). Lock-free; a miss returns NULL. */
#define SF_SIG_CACHE_SLOTS 256
extern const struct sf_signature *_Atomic sf_sig_by_key[SF_SIG_CACHE_SLOTS];
extern const struct sf_signature *_Atomic sf_sig_by_types[SF_SIG_CACHE_SLOTS];

static inline unsigned sf_sig_cache_slot(uint64_t v) { return (unsigned)((v * 0x9E3779B97F4A7C15ull) >> 56); }

/* Inline: a forwarded send probes one of them on every call. */
static inline const struct sf_signature *sf_sig_cache_by_key(uint64_t key) {
    const struct sf_signature *s = atomic_load_explicit(&sf_sig_by_key[sf_sig_cache_slot(key)], memory_order_acquire);
    return s && s->key == key ? s : NULL;
}

static inline const struct sf_signature *sf_sig_cache_by_types(const char *types) {
    uint64_t p = (uint64_t)(uintptr_t)types;
    const struct sf_signature *s = atomic_load_explicit(&sf_sig_by_types[sf_sig_cache_slot(p)], memory_order_acquire);
    return s && s->types == types ? s : NULL;
}

void sf_sig_cache_put_key(const struct sf_signature *sig);
void sf_sig_cache_put_types(const struct sf_signature *sig);

static inline sf_imp sf_method_imp(sf_method_t m) {
    return atomic_load_explicit(&m->imp, memory_order_acquire);
}

/* Cache introspection, for tests and diagnostics (racy outside the runtime lock). */
static inline uint32_t sf_class_cache_capacity(sf_class_t cls) {
    return atomic_load_explicit(&cls->cache, memory_order_acquire)->mask + 1;
}
static inline uint32_t sf_class_cache_occupied(sf_class_t cls) {
    return atomic_load_explicit(&cls->cache, memory_order_acquire)->occupied;
}
static inline uint32_t sf_class_cache_seq(sf_class_t cls) {
    return atomic_load_explicit(&cls->cache_seq, memory_order_acquire);
}

/* ---- reference counts ---- */

/* Inert on immortal objects and once the final release began deallocation: a retain and
 * release made while the object is being deallocated must not free it a second time. The
 * flags are read from the counting instruction's own result, not loaded before it: a load of
 * the word a retain just wrote would wait for that retain (a retain-release pair is common).
 * An immortal object's count may move; nothing reads it. */
#define SF_OBJ_NO_REFCOUNT (SF_OBJ_IMMORTAL | SF_OBJ_DEALLOCATING)
#define SF_RC_COUNT_MASK (~(uintptr_t)SF_RC_FLAGS_MASK)

/* The count passed the limit: the object stays from now on (object.c). */
void sf_object_pin(sf_id obj);

/* Small objects are values: retain and release leave them alone. */
static inline void sf_retain_inline(sf_id obj) {
    if (__builtin_expect(sf_is_tagged(obj), 0)) return;
    uintptr_t old = atomic_fetch_add_explicit(&obj->bits, SF_RC_ONE, memory_order_relaxed);
    if (__builtin_expect((old + SF_RC_ONE) & SF_RC_PIN_BIT, 0)) sf_object_pin(obj);
}

static inline void sf_release_inline(sf_id obj) {
    if (__builtin_expect(sf_is_tagged(obj), 0)) return;
    uintptr_t old = atomic_fetch_sub_explicit(&obj->bits, SF_RC_ONE, memory_order_release);
    if ((old & (SF_RC_COUNT_MASK | SF_OBJ_NO_REFCOUNT)) == SF_RC_ONE) {
        atomic_thread_fence(memory_order_acquire);
        /* Before anything else runs: from here on retains and releases do nothing. */
        atomic_fetch_or_explicit(&obj->bits, SF_OBJ_DEALLOCATING, memory_order_relaxed);
        atomic_load_explicit(&sf_dealloc_hook, memory_order_relaxed)(obj);
    }
}

#endif
