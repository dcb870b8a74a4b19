// Object headers and reference counts.
#include "sf_private.h"
#include <malloc.h>
#include <sched.h>

sf_dealloc_hook_fn _Atomic sf_dealloc_hook;
static _Thread_local void *dealloc_current;
void *sf_dealloc_current(void) { return dealloc_current; }
void sf_dealloc_set_current(void *obj) { dealloc_current = obj; }

sf_id sf_retain(sf_id obj) {
    if (obj) sf_retain_inline(obj);
    return obj;
}

void sf_release(sf_id obj) {
    if (obj) sf_release_inline(obj);
}

uintptr_t sf_object_retainCount(sf_id obj) {
    if (!obj) return 0;
    if (sf_is_tagged(obj)) return UINTPTR_MAX;
    uintptr_t bits = atomic_load_explicit(&obj->bits, memory_order_relaxed);
    if (bits & SF_OBJ_IMMORTAL) return UINTPTR_MAX;
    return bits >> SF_RC_SHIFT;
}

bool sf_try_retain(sf_id obj) {
    if (sf_is_tagged(obj)) return true;
    uintptr_t bits = atomic_load_explicit(&obj->bits, memory_order_relaxed);
    for (;;) {
        if (bits & SF_OBJ_IMMORTAL) return true;
        if ((bits >> SF_RC_SHIFT) == 0 || (bits & SF_OBJ_DEALLOCATING)) return false;
        if (atomic_compare_exchange_weak_explicit(&obj->bits, &bits, bits + SF_RC_ONE, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            if ((bits + SF_RC_ONE) & SF_RC_PIN_BIT) sf_object_pin(obj);
            return true;
        }
    }
}

void sf_object_pin(sf_id obj) {
    if (sf_is_tagged(obj)) return;
    atomic_fetch_or_explicit(&obj->bits, SF_OBJ_IMMORTAL, memory_order_relaxed);
}

void sf_object_set_retain_count_for_testing(sf_id obj, uintptr_t count) {
    if (count > SF_RC_MAX_COUNT) count = SF_RC_MAX_COUNT;
    uintptr_t bits = atomic_load_explicit(&obj->bits, memory_order_relaxed);
    uintptr_t next;
    do {
        next = (count << SF_RC_SHIFT) | (bits & SF_RC_FLAGS_MASK & ~(uintptr_t)SF_OBJ_IMMORTAL);
    } while (!atomic_compare_exchange_weak_explicit(&obj->bits, &bits, next, memory_order_relaxed,
                                                    memory_order_relaxed));
}

sf_class_t sf_object_getClass(sf_id obj) {
    if (!obj) return NULL;
    // A private per-object subclass is an implementation detail of hooks.
    return sf_class_visible(sf_object_isa(obj));
}

// A small object reads as immortal (never counted, never deallocated) and has no header words.
uint32_t sf_object_flags(sf_id obj) {
    if (sf_is_tagged(obj)) return SF_OBJ_IMMORTAL;
    return (uint32_t)(atomic_load_explicit(&obj->bits, memory_order_acquire) & SF_RC_FLAGS_MASK);
}

void sf_object_set_flags(sf_id obj, uint32_t bits) {
    if (sf_is_tagged(obj)) return;
    atomic_fetch_or_explicit(&obj->bits, bits & SF_RC_FLAGS_MASK, memory_order_acq_rel);
}

uint32_t sf_object_test_and_set_flags(sf_id obj, uint32_t bits) {
    if (sf_is_tagged(obj)) return SF_OBJ_IMMORTAL;
    return (uint32_t)(atomic_fetch_or_explicit(&obj->bits, bits & SF_RC_FLAGS_MASK, memory_order_acq_rel) & SF_RC_FLAGS_MASK);
}

void *sf_object_side(sf_id obj) { return sf_is_tagged(obj) ? NULL : atomic_load_explicit(&obj->side, memory_order_acquire); }

// NULL for a small object, which has no side pointer (callers refuse it before this).
void *sf_object_install_side(sf_id obj, void *side) {
    if (sf_is_tagged(obj)) return NULL;
    void *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&obj->side, &expected, side, memory_order_acq_rel,
                                                memory_order_acquire))
        return side;
    return expected;
}

bool sf_object_detach_side(sf_id obj, void *side) {
    if (sf_is_tagged(obj)) return false;
    return atomic_compare_exchange_strong_explicit(&obj->side, &side, NULL, memory_order_acq_rel, memory_order_acquire);
}

void *sf_object_take_side(sf_id obj) {
    if (sf_is_tagged(obj)) return NULL;
    if (!atomic_load_explicit(&obj->side, memory_order_acquire)) return NULL;
    return atomic_exchange_explicit(&obj->side, NULL, memory_order_acq_rel);
}

struct sf_side_lock sf_side_locks[SF_SIDE_LOCKS] __attribute__((aligned(64)));

void sf_side_lock_slow(struct sf_side_lock *l) {
    for (;;) {
        uint32_t expected = 0;
        if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&l->word, &expected, 1, memory_order_acquire, memory_order_relaxed))
            return;
        sched_yield();
    }
}

void sf_side_locks_atfork_prepare(void) {
    for (int i = 0; i < SF_SIDE_LOCKS; i++) sf_side_lock_slow(&sf_side_locks[i]);
}

void sf_side_locks_atfork_release(void) {
    for (int i = SF_SIDE_LOCKS - 1; i >= 0; i--) atomic_store_explicit(&sf_side_locks[i].word, 0, memory_order_release);
}

int sf_side_locks_held_for_testing(void) {
    int n = 0;
    for (int i = 0; i < SF_SIDE_LOCKS; i++) n += atomic_load_explicit(&sf_side_locks[i].word, memory_order_acquire) != 0;
    return n;
}

void sf_object_set_isa(sf_id obj, sf_class_t cls) {
    if (sf_is_tagged(obj)) return;
    atomic_store_explicit(&obj->isa, cls, memory_order_release);
}

void sf_object_init_header(sf_id obj, sf_class_t isa, uint32_t flags) {
    atomic_init(&obj->isa, isa);
    atomic_init(&obj->bits, SF_RC_ONE | (flags & SF_RC_FLAGS_MASK));
    atomic_init(&obj->side, NULL);
}

void sf_class_init(sf_class_t cls, sf_class_t isa, sf_class_t superclass, const char *name,
                   size_t instance_size, uint32_t info, void *swift_class) {
    sf_object_init_header(&cls->header, isa, SF_OBJ_IMMORTAL);
    cls->superclass = superclass;
    atomic_init(&cls->cache, &sf_empty_cache);
    atomic_init(&cls->cache_seq, 0);
    atomic_init(&cls->cache_mask, 0);
    cls->info = info;
    cls->name = name;
    cls->instance_size = instance_size;
    atomic_init(&cls->live_instances, 0);
    cls->swift_class = swift_class;
}

intptr_t sf_class_live_instances(sf_class_t cls) {
    return atomic_load_explicit(&cls->live_instances, memory_order_acquire);
}

void sf_class_adjust_live_instances(sf_class_t cls, intptr_t delta) {
    atomic_fetch_add_explicit(&cls->live_instances, delta, memory_order_acq_rel);
}

void *sf_object_getIvarPointer(sf_id obj, ptrdiff_t offset) {
    if (obj && sf_is_tagged(obj)) {
        sf_set_last_error(SF_ERR_INVALID_ARGUMENT, "sf_object_getIvarPointer: a small (tagged) object has no ivar storage");
        return NULL;
    }
    if (!obj || offset < (ptrdiff_t)SF_OBJECT_HEADER_SIZE) return NULL;
    return (char *)obj + offset;
}

_Atomic intptr_t sf_live_objects;
_Atomic intptr_t sf_live_closures;

size_t sf_object_allocated_size(sf_id obj) { return sf_is_tagged(obj) ? 0 : malloc_usable_size(obj); }

/* ---- small objects (tagged pointers) ---- */

struct sf_class *_Atomic sf_small_classes[2 * SF_TAGGED_TAG_COUNT];

void sf_small_class_set(unsigned tag, struct sf_class *cls) {
    atomic_store_explicit(&sf_small_classes[SF_TAGGED_TAG_COUNT + tag], cls, memory_order_release);
}

bool sf_object_isTagged(sf_id obj) { return sf_is_tagged(obj); }

sf_id sf_tagged_make(unsigned tag, uintptr_t payload) {
    if (tag >= SF_TAGGED_TAG_COUNT) {
        sf_set_last_error(SF_ERR_INVALID_ARGUMENT, "sf_tagged_make: expected a tag from 0 to 7");
        return NULL;
    }
    if (payload > SF_TAGGED_PAYLOAD_MASK) {
        sf_set_last_error(SF_ERR_INVALID_ARGUMENT, "sf_tagged_make: expected a payload below 2^60");
        return NULL;
    }
    if (!sf_small_class_get(tag)) {
        sf_set_last_error(SF_ERR_INVALID_ARGUMENT, "sf_tagged_make: no class is registered for that tag");
        return NULL;
    }
    sf_clear_last_error();
    return (sf_id)(SF_TAGGED_BIT | (uintptr_t)tag << SF_TAGGED_TAG_SHIFT | payload);
}

uintptr_t sf_tagged_payload(sf_id obj) {
    if (!obj || !sf_is_tagged(obj)) {
        sf_set_last_error(SF_ERR_INVALID_ARGUMENT, "sf_tagged_payload: expected a small (tagged) object");
        return 0;
    }
    sf_clear_last_error();
    return (uintptr_t)obj & SF_TAGGED_PAYLOAD_MASK;
}

int sf_tagged_getTag(sf_id obj) { return obj && sf_is_tagged(obj) ? (int)sf_tagged_tag(obj) : -1; }
