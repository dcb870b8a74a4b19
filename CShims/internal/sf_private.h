/*
 * SelectorForwarding — object layout, lookup cache and read-side sections.
 *
 * Private to the runtime: the Swift module and the C files use these; C users of the
 * runtime include only SelectorForwarding.h. The fast path lives here, as static inline
 * functions, so that Swift callers inline it too.
 */
#ifndef SF_PRIVATE_H
#define SF_PRIVATE_H

#include "SelectorForwarding.h"
#include <ffi.h>
#include <stdatomic.h>

/* Internal symbols stay inside libSelectorForwarding.so: only SelectorForwarding.h is API. */
#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

/* ---- selectors ---- */

struct sf_selector {
    const char *name;
    uint32_t index;      /* registration order, for diagnostics */
    uint32_t hash;       /* spread of the pointer, precomputed */
};

/* ---- signatures: an encoding parsed once and prepared for libffi ---- */

struct sf_signature {
    ffi_cif cif;
    ffi_type *return_type;
    ffi_type **arg_types;   /* nargs entries, self and _cmd first */
    const char *types;      /* canonical encoding, NUL-terminated */
    uint64_t key;           /* packed scalar type codes; 0 when not expressible */
    uint32_t nargs;
    uint32_t frame_size;    /* bytes of argument storage an invocation needs */
    void *swift;            /* unretained, immortal Swift description */
};

/* ---- objects ---- */

enum {
    SF_OBJ_IMMORTAL = 1u << 0,      /* classes, and objects whose count saturated: no counting */
    SF_OBJ_HAS_WEAK = 1u << 1,      /* a weak slot points here: clear on dealloc */
    SF_OBJ_DEALLOCATING = 1u << 2,
};

/*
 * One word holds the strong count and the flags (objc4 keeps its count in the isa word): the
 * count from bit SF_RC_SHIFT up, the flags below. A count reaching 2^47 pins the object
 * (SF_OBJ_IMMORTAL) instead of wrapping: it then lives for good, as objc4 and Swift do with
 * a saturated count. The rarely used rest (associations, dealloc observers, per-object hook
 * state) hangs off `side`, made on first use; weak slots live in the global weak table.
 */
#define SF_RC_SHIFT 16
#define SF_RC_ONE ((uintptr_t)1 << SF_RC_SHIFT)
#define SF_RC_FLAGS_MASK ((uint32_t)(SF_RC_ONE - 1))
/* The word of the smallest pinned count: its top bit. */
#define SF_RC_PIN_BIT ((uintptr_t)1 << 63)
#define SF_RC_MAX_COUNT ((SF_RC_PIN_BIT >> SF_RC_SHIFT) - 1)

struct sf_object {
    struct sf_class *_Atomic isa;
    _Atomic uintptr_t bits;         /* count << SF_RC_SHIFT | flags */
    void *_Atomic side;             /* Swift side table, created on first use */
};

#define SF_OBJECT_HEADER_SIZE ((size_t)sizeof(struct sf_object))

/* ---- methods ---- */

struct sf_method {
    sf_sel sel;
    _Atomic sf_imp imp;
    const struct sf_signature *sig;
    void *owner;                    /* the Swift record that owns a closure IMP, if any */
};

/* ---- classes ---- */

struct sf_cache_bucket {
    _Atomic sf_sel sel;
    sf_method_t _Atomic method;
};

struct sf_cache {
    uint32_t mask;                  /* capacity - 1; capacity is a power of two */
    uint32_t occupied;              /* written under the runtime lock only */
    struct sf_cache_bucket buckets[];
};

enum {
    SF_CLASS_META = 1u << 0,
    SF_CLASS_REGISTERED = 1u << 1,
    SF_CLASS_HIDDEN = 1u << 2,      /* a private per-object subclass: reports its superclass */
};

struct sf_class {
    struct sf_object header;        /* isa is the metaclass: classes are objects */
    struct sf_class *superclass;
    struct sf_cache *_Atomic cache;
    _Atomic uint32_t cache_seq;     /* odd while a flush is in progress */
    uint32_t info;
    const char *name;
    size_t instance_size;
    _Atomic intptr_t live_instances;
    void *swift_class;              /* unretained RuntimeClass */
};

/* ---- the lookup cache ---- */

extern struct sf_cache sf_empty_cache;

static inline uint32_t sf_sel_hash(sf_sel sel) { return sel->hash; }

/*
 * Lock-free probe. A seqlock guards against a concurrent in-place flush; a miss or a torn
 * read returns NULL and the caller takes the slow path, which holds the runtime lock.
 */
static inline sf_method_t sf_cache_probe(sf_class_t cls, sf_sel sel) {
    uint32_t seq = atomic_load_explicit(&cls->cache_seq, memory_order_acquire);
    struct sf_cache *cache = atomic_load_explicit(&cls->cache, memory_order_acquire);
    uint32_t mask = cache->mask;
    uint32_t i = sf_sel_hash(sel) & mask;
    sf_method_t found;
    for (;;) {
        sf_sel k = atomic_load_explicit(&cache->buckets[i].sel, memory_order_acquire);
        if (k == sel) {
            found = atomic_load_explicit(&cache->buckets[i].method, memory_order_relaxed);
            break;
        }
        if (k == NULL) return NULL;
        i = (i + 1) & mask;
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

static inline sf_class_t sf_object_isa(sf_id obj) {
    return atomic_load_explicit(&obj->isa, memory_order_acquire);
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

static inline sf_method_t sf_lookup_method(sf_class_t cls, sf_sel sel) {
    sf_method_t m = sf_cache_probe(cls, sel);
    if (__builtin_expect(m == NULL, 0)) m = atomic_load_explicit(&sf_lookup_slow, memory_order_relaxed)(cls, sel);
    return sf_method_is_marker(m) ? NULL : m;
}

/* ---- signature caches for the miss path (sig_cache.c) ----
 * by key: the signature a caller's own types imply, for keys that name their types exactly
 * (the Swift side checks: no long, pointer or struct codes). by types: the signature whose
 * immortal `types` string is this very pointer (what methodSignatureForSelector: returns when
 * it hands back an interned signature's types). Lock-free; a miss returns NULL. */
const struct sf_signature *sf_sig_cache_by_key(uint64_t key);
void sf_sig_cache_put_key(const struct sf_signature *sig);
const struct sf_signature *sf_sig_cache_by_types(const char *types);
void sf_sig_cache_put_types(const struct sf_signature *sig);

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

static inline sf_imp sf_method_imp(sf_method_t m) {
    return atomic_load_explicit(&m->imp, memory_order_acquire);
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

static inline void sf_retain_inline(sf_id obj) {
    uintptr_t old = atomic_fetch_add_explicit(&obj->bits, SF_RC_ONE, memory_order_relaxed);
    if (__builtin_expect((old + SF_RC_ONE) & SF_RC_PIN_BIT, 0)) sf_object_pin(obj);
}

static inline void sf_release_inline(sf_id obj) {
    uintptr_t old = atomic_fetch_sub_explicit(&obj->bits, SF_RC_ONE, memory_order_release);
    if ((old & (SF_RC_COUNT_MASK | SF_OBJ_NO_REFCOUNT)) == SF_RC_ONE) {
        atomic_thread_fence(memory_order_acquire);
        /* Before anything else runs: from here on retains and releases do nothing. */
        atomic_fetch_or_explicit(&obj->bits, SF_OBJ_DEALLOCATING, memory_order_relaxed);
        atomic_load_explicit(&sf_dealloc_hook, memory_order_relaxed)(obj);
    }
}

/* Retains unless the count already reached zero (a weak load racing with dealloc). */
bool sf_try_retain(sf_id obj);
uint32_t sf_object_flags(sf_id obj);
void sf_object_set_flags(sf_id obj, uint32_t bits);
void *sf_object_side(sf_id obj);
/* Installs `side` if none is set; returns the one that is set afterwards. */
void *sf_object_install_side(sf_id obj, void *side);
void sf_object_set_isa(sf_id obj, sf_class_t cls);
/* Bytes usable in the object's allocation (at least its class's instance size). */
size_t sf_object_allocated_size(sf_id obj);
void sf_object_init_header(sf_id obj, sf_class_t isa, uint32_t flags);
/* Tests only: sets the strong count (at most SF_RC_MAX_COUNT) and clears a pin. */
void sf_object_set_retain_count_for_testing(sf_id obj, uintptr_t count);
static inline uintptr_t sf_object_max_retain_count(void) { return SF_RC_MAX_COUNT; }
void sf_class_init(sf_class_t cls, sf_class_t isa, sf_class_t superclass, const char *name,
                   size_t instance_size, uint32_t info, void *swift_class);
intptr_t sf_class_live_instances(sf_class_t cls);
void sf_class_adjust_live_instances(sf_class_t cls, intptr_t delta);
/* Method entries come from a pool of slabs (method_pool.c), not one malloc each. */
sf_method_t sf_method_alloc(void);
void sf_method_free(sf_method_t m);
/* pthread_atfork: the pool's leaf lock, taken last before fork, released in both processes. */
void sf_method_pool_atfork_prepare(void);
void sf_method_pool_atfork_release(void);
void sf_method_init(sf_method_t m, sf_sel sel, sf_imp imp, const struct sf_signature *sig, void *owner);
/* Swaps the IMP atomically; returns the previous one. */
sf_imp sf_method_swap_imp(sf_method_t m, sf_imp imp);

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

/* ---- hooks: the state a trampoline reads on every call ---- */

struct sf_hook_slot {
    _Atomic sf_imp original;        /* the IMP the hook wraps (NULL: look up in the superclass) */
    void *_Atomic chain;            /* the current immutable hook chain (Swift object) */
};

static inline sf_imp sf_hook_original(struct sf_hook_slot *s) {
    return atomic_load_explicit(&s->original, memory_order_acquire);
}
static inline void sf_hook_set_original(struct sf_hook_slot *s, sf_imp imp) {
    atomic_store_explicit(&s->original, imp, memory_order_release);
}
static inline void *sf_hook_chain(struct sf_hook_slot *s) {
    return atomic_load_explicit(&s->chain, memory_order_acquire);
}
static inline void *sf_hook_swap_chain(struct sf_hook_slot *s, void *chain) {
    return atomic_exchange_explicit(&s->chain, chain, memory_order_acq_rel);
}
static inline size_t sf_hook_slot_size(void) { return sizeof(struct sf_hook_slot); }

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

/* ---- libffi helpers awkward in Swift ---- */

/* The table of scalar type codes (sf_type_codes.h): libffi type and key code of a code
 * character (NULL / 0 for none), and the rows in order, for Swift's check of its own copy. */
ffi_type *sf_ffi_type_for_code(char code);
uint8_t sf_type_code_key(char code);
size_t sf_type_code_count(void);
char sf_type_code_character(size_t index);
ffi_type *sf_ffi_make_struct(ffi_type **elements, size_t count);
ffi_status sf_ffi_prep_cif(ffi_cif *cif, unsigned nargs, ffi_type *rtype, ffi_type **atypes);
void *sf_ffi_closure_alloc(void **code);
ffi_status sf_ffi_prep_closure(void *closure, ffi_cif *cif,
                               void (*fun)(ffi_cif *, void *, void **, void *),
                               void *user_data, void *code);
void sf_ffi_closure_free(void *closure);
void sf_ffi_call(ffi_cif *cif, sf_imp fn, void *rvalue, void **avalue);
size_t sf_ffi_type_size(ffi_type *t);
size_t sf_ffi_type_alignment(ffi_type *t);

/* ---- field accessors for Swift (which cannot read _Atomic fields directly) ---- */

static inline void *sf_class_swift(sf_class_t cls) { return cls->swift_class; }
static inline sf_class_t sf_class_super(sf_class_t cls) { return cls->superclass; }
/* class_setSuperclass only: the runtime lock held, no instances in the class's subtree. */
static inline void sf_class_set_super(sf_class_t cls, sf_class_t s) { cls->superclass = s; }
static inline uint32_t sf_class_info(sf_class_t cls) { return cls->info; }
static inline void sf_class_set_info(sf_class_t cls, uint32_t info) { cls->info = info; }
static inline void sf_class_set_instance_size(sf_class_t cls, size_t size) { cls->instance_size = size; }
static inline const struct sf_signature *sf_method_sig(sf_method_t m) { return m->sig; }
static inline sf_sel sf_method_sel(sf_method_t m) { return m->sel; }
static inline void *sf_method_owner(sf_method_t m) { return m->owner; }
static inline void sf_method_set_owner(sf_method_t m, void *owner) { m->owner = owner; }
static inline sf_id sf_class_as_object(sf_class_t cls) { return &cls->header; }
static inline sf_class_t sf_object_as_class(sf_id obj) { return (sf_class_t)obj; }
static inline size_t sf_object_header_size(void) { return sizeof(struct sf_object); }
static inline size_t sf_class_struct_size(void) { return sizeof(struct sf_class); }
static inline size_t sf_method_struct_size(void) { return sizeof(struct sf_method); }

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

/* Live counts, for leak checks in tests and the stress run. */
extern _Atomic intptr_t sf_live_objects;
extern _Atomic intptr_t sf_live_closures;
static inline intptr_t sf_counter_objects(void) { return atomic_load(&sf_live_objects); }
static inline intptr_t sf_counter_closures(void) { return atomic_load(&sf_live_closures); }
static inline void sf_counter_objects_add(intptr_t d) { atomic_fetch_add_explicit(&sf_live_objects, d, memory_order_relaxed); }
static inline void sf_counter_closures_add(intptr_t d) { atomic_fetch_add_explicit(&sf_live_closures, d, memory_order_relaxed); }
#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
