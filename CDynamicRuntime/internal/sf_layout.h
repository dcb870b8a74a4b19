/*
 * SelectorForwarding — object, class, method, selector and signature layout, and its accessors.
 * Part of sf_private.h: include that header, which sets visibility and linkage around this one.
 */
#ifndef SF_LAYOUT_H
#define SF_LAYOUT_H
#ifndef SF_PRIVATE_H
#error "include sf_private.h"
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

/*
 * Small objects (tagged pointers): an sf_id with bit 63 set is no address but a value, bit 63 |
 * tag << 60 | payload. The tag (0-7) names the class (sf_small_classes), the payload is 60 bits. Bit 63
 * rather than a low bit: a user-space address never has it (so one sign test tells the two
 * apart), and the value is never below 4096, which Swift reserves in pointer types for the
 * layout of optionals and enums (a low-bit tag would make small payloads such values).
 */
#define SF_TAGGED_BIT ((uintptr_t)1 << 63)
#define SF_TAGGED_TAG_SHIFT 60
#define SF_TAGGED_TAG_COUNT 8
#define SF_TAGGED_PAYLOAD_MASK (((uintptr_t)1 << SF_TAGGED_TAG_SHIFT) - 1)
/* The class of each tag, NULL while free; set once (never cleared: a tagged class is never
 * disposed). Indexed by the pointer's top four bits, 8 + tag, so that the send's read is one
 * shift and one load; entries 0-7 stay NULL. */
extern struct sf_class *_Atomic sf_small_classes[2 * SF_TAGGED_TAG_COUNT];
static inline bool sf_is_tagged(const void *obj) { return (intptr_t)obj < 0; }
static inline unsigned sf_tagged_tag(const void *obj) {
    return (unsigned)(((uintptr_t)obj >> SF_TAGGED_TAG_SHIFT) & (SF_TAGGED_TAG_COUNT - 1));
}
static inline struct sf_class *sf_tagged_class(const void *obj) {
    return atomic_load_explicit(&sf_small_classes[(uintptr_t)obj >> SF_TAGGED_TAG_SHIFT], memory_order_acquire);
}
/* Registration (Swift, runtime lock held): publishes the tag's class. */
void sf_small_class_set(unsigned tag, struct sf_class *cls);
static inline struct sf_class *sf_small_class_get(unsigned tag) {
    return tag < SF_TAGGED_TAG_COUNT ? atomic_load_explicit(&sf_small_classes[SF_TAGGED_TAG_COUNT + tag], memory_order_acquire) : NULL;
}

/* ---- methods ---- */

struct sf_method {
    sf_sel sel;
    _Atomic sf_imp imp;
    const struct sf_signature *sig;
    void *owner;                    /* the Swift record that owns a closure IMP, if any */
    uint64_t key;                   /* sig->key, here so that typed sends check it without
                                     * reaching into the signature (immutable, like sig) */
    /* The record's words that a typed send reads beside `key` (MethodRecord, Swift): the
     * closure owning the IMP (a retained ClosureIMP, or 0) and the hook whose trampoline is
     * installed here (a retained MethodHook, or 0). Here rather than in the record: one
     * dependent load fewer per send, and the record fits a smaller allocation. */
    _Atomic uintptr_t owner_bits;
    _Atomic uintptr_t hook_bits;
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
    /* cache->mask, beside the pointer: a probe loads both from the class at once instead of
     * the mask through the pointer (one dependent load fewer per send). Never larger than the
     * published cache's mask: stored after a grown cache, read before it. */
    _Atomic uint32_t cache_mask;
    uint32_t info;
    const char *name;
    size_t instance_size;
    _Atomic intptr_t live_instances;
    void *swift_class;              /* unretained RuntimeClass */
};

/* ---- objects, classes and methods (object.c, method_pool.c, dispatch.c) ---- */

/* Retains unless the count already reached zero (a weak load racing with dealloc). */
bool sf_try_retain(sf_id obj);
uint32_t sf_object_flags(sf_id obj);
void sf_object_set_flags(sf_id obj, uint32_t bits);
/* Sets `bits` and returns the flags as they were: one caller wins a race to set a flag. */
uint32_t sf_object_test_and_set_flags(sf_id obj, uint32_t bits);
void *sf_object_side(sf_id obj);
/* sf_object_side inline, for the per-object hook's call path. */
static inline void *sf_object_side_inline(sf_id obj) {
    return sf_is_tagged(obj) ? NULL : atomic_load_explicit(&obj->side, memory_order_acquire);
}
/* sf_object_flags inline, for a throttled call's capture (one per call). */
static inline uint32_t sf_object_flags_inline(sf_id obj) {
    if (sf_is_tagged(obj)) return SF_OBJ_IMMORTAL;
    return (uint32_t)(atomic_load_explicit(&obj->bits, memory_order_acquire) & SF_RC_FLAGS_MASK);
}
/* Installs `side` if none is set; returns the one that is set afterwards. */
void *sf_object_install_side(sf_id obj, void *side);
/* Clears `side` if it is still the one set (runtime lock held); true if it was. */
bool sf_object_detach_side(sf_id obj, void *side);
/* Clears the side pointer at deallocation; returns what was set (its reference goes with it). */
void *sf_object_take_side(sf_id obj);

/*
 * Side-table locks: a fixed array of one-word locks chosen by the table's address (objc4's
 * striped side tables), not a word per table: a table costs no lock of its own, and the
 * fork handlers can take every lock there is. Held only for a few dictionary operations
 * (leaf locks: nothing else is taken under them).
 */
#define SF_SIDE_LOCKS 64
struct sf_side_lock {
    _Atomic uint32_t word;
    char pad[60];
};
extern struct sf_side_lock sf_side_locks[SF_SIDE_LOCKS];
static inline struct sf_side_lock *sf_side_lock_for(const void *table) {
    uintptr_t a = (uintptr_t)table;
    return &sf_side_locks[((a >> 4) ^ (a >> 10)) % SF_SIDE_LOCKS];
}
void sf_side_lock_slow(struct sf_side_lock *l);
static inline void sf_side_lock(const void *table) {
    struct sf_side_lock *l = sf_side_lock_for(table);
    uint32_t expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->word, &expected, 1, memory_order_acquire, memory_order_relaxed))
        sf_side_lock_slow(l);
}
static inline void sf_side_unlock(const void *table) {
    atomic_store_explicit(&sf_side_lock_for(table)->word, 0, memory_order_release);
}
/* pthread_atfork: every side-table lock, taken after the runtime's own, released in both. */
void sf_side_locks_atfork_prepare(void);
void sf_side_locks_atfork_release(void);
/* Tests only: how many side-table locks are held now. */
int sf_side_locks_held_for_testing(void);
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
/* pthread_atfork: the trampoline allocator's leaf lock (tramp.c), like the pool's. */
void sf_tramp_atfork_prepare(void);
void sf_tramp_atfork_release(void);
void sf_method_init(sf_method_t m, sf_sel sel, sf_imp imp, const struct sf_signature *sig, void *owner);
/* Swaps the IMP atomically; returns the previous one. */
sf_imp sf_method_swap_imp(sf_method_t m, sf_imp imp);

/* ---- field accessors for Swift (which cannot read _Atomic fields directly) ---- */

static inline void *sf_class_swift(sf_class_t cls) { return cls->swift_class; }
static inline sf_class_t sf_class_super(sf_class_t cls) { return cls->superclass; }
/* class_setSuperclass only: the runtime lock held, no instances in the class's subtree. */
static inline void sf_class_set_super(sf_class_t cls, sf_class_t s) { cls->superclass = s; }
static inline uint32_t sf_class_info(sf_class_t cls) { return cls->info; }
static inline void sf_class_set_info(sf_class_t cls, uint32_t info) { cls->info = info; }
/* The class users see: `cls` past the hidden per-object hook classes above it (a hidden class
 * always has a superclass). The one walk every reader of a visible class uses, C and Swift. */
static inline sf_class_t sf_class_visible(sf_class_t cls) {
    while (cls && (cls->info & SF_CLASS_HIDDEN) && cls->superclass) cls = cls->superclass;
    return cls;
}
static inline void sf_class_set_instance_size(sf_class_t cls, size_t size) { cls->instance_size = size; }
static inline const struct sf_signature *sf_method_sig(sf_method_t m) { return m->sig; }
static inline uint64_t sf_method_key(sf_method_t m) { return m->key; }
static inline sf_sel sf_method_sel(sf_method_t m) { return m->sel; }
static inline void *sf_method_owner(sf_method_t m) { return m->owner; }
static inline void sf_method_set_owner(sf_method_t m, void *owner) { m->owner = owner; }
static inline uintptr_t sf_method_owner_bits(sf_method_t m) {
    return atomic_load_explicit(&m->owner_bits, memory_order_acquire);
}
static inline uintptr_t sf_method_exchange_owner_bits(sf_method_t m, uintptr_t bits) {
    return atomic_exchange_explicit(&m->owner_bits, bits, memory_order_acq_rel);
}
static inline uintptr_t sf_method_hook_bits(sf_method_t m) {
    return atomic_load_explicit(&m->hook_bits, memory_order_acquire);
}
static inline uintptr_t sf_method_exchange_hook_bits(sf_method_t m, uintptr_t bits) {
    return atomic_exchange_explicit(&m->hook_bits, bits, memory_order_acq_rel);
}
static inline sf_id sf_class_as_object(sf_class_t cls) { return &cls->header; }
static inline sf_class_t sf_object_as_class(sf_id obj) { return (sf_class_t)obj; }
static inline size_t sf_object_header_size(void) { return sizeof(struct sf_object); }
static inline size_t sf_class_struct_size(void) { return sizeof(struct sf_class); }
static inline size_t sf_method_struct_size(void) { return sizeof(struct sf_method); }

#endif
