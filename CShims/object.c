// Object headers and reference counts.
#include "sf_private.h"
#include <malloc.h>

sf_dealloc_hook_fn _Atomic sf_dealloc_hook;

sf_id sf_retain(sf_id obj) {
    if (obj) sf_retain_inline(obj);
    return obj;
}

void sf_release(sf_id obj) {
    if (obj) sf_release_inline(obj);
}

uintptr_t sf_object_retainCount(sf_id obj) {
    if (!obj) return 0;
    if (atomic_load_explicit(&obj->flags, memory_order_relaxed) & SF_OBJ_IMMORTAL) return UINTPTR_MAX;
    return atomic_load_explicit(&obj->refcount, memory_order_relaxed);
}

bool sf_try_retain(sf_id obj) {
    if (atomic_load_explicit(&obj->flags, memory_order_relaxed) & SF_OBJ_IMMORTAL) return true;
    uintptr_t n = atomic_load_explicit(&obj->refcount, memory_order_relaxed);
    while (n != 0) {
        if (atomic_compare_exchange_weak_explicit(&obj->refcount, &n, n + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    }
    return false;
}

sf_class_t sf_object_getClass(sf_id obj) {
    if (!obj) return NULL;
    sf_class_t cls = sf_object_isa(obj);
    // A private per-object subclass is an implementation detail of hooks.
    while (cls && (cls->info & SF_CLASS_HIDDEN)) cls = cls->superclass;
    return cls;
}

uint32_t sf_object_flags(sf_id obj) { return atomic_load_explicit(&obj->flags, memory_order_acquire); }

void sf_object_set_flags(sf_id obj, uint32_t bits) {
    atomic_fetch_or_explicit(&obj->flags, bits, memory_order_acq_rel);
}

void *sf_object_side(sf_id obj) { return atomic_load_explicit(&obj->side, memory_order_acquire); }

void *sf_object_install_side(sf_id obj, void *side) {
    void *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&obj->side, &expected, side, memory_order_acq_rel,
                                                memory_order_acquire))
        return side;
    return expected;
}

void sf_object_set_isa(sf_id obj, sf_class_t cls) {
    atomic_store_explicit(&obj->isa, cls, memory_order_release);
}

void sf_object_init_header(sf_id obj, sf_class_t isa, uint32_t flags) {
    atomic_init(&obj->isa, isa);
    atomic_init(&obj->refcount, 1);
    atomic_init(&obj->flags, flags);
    obj->reserved = 0;
    atomic_init(&obj->side, NULL);
}

void sf_class_init(sf_class_t cls, sf_class_t isa, sf_class_t superclass, const char *name,
                   size_t instance_size, uint32_t info, void *swift_class) {
    sf_object_init_header(&cls->header, isa, SF_OBJ_IMMORTAL);
    cls->superclass = superclass;
    atomic_init(&cls->cache, &sf_empty_cache);
    atomic_init(&cls->cache_seq, 0);
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
    if (!obj || offset < (ptrdiff_t)SF_OBJECT_HEADER_SIZE) return NULL;
    return (char *)obj + offset;
}

_Atomic intptr_t sf_live_objects;
_Atomic intptr_t sf_live_closures;

size_t sf_object_allocated_size(sf_id obj) { return malloc_usable_size(obj); }
