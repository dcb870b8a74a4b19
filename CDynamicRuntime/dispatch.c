// Message lookup entry points for C callers: the cache first, the slow path on a miss.
#include "sf_private.h"

sf_lookup_slow_fn _Atomic sf_lookup_slow;
/* The cache markers. Their IMP stays NULL: sf_msg_lookup's cached path reads a marker as a miss. */
struct sf_method sf_forward_method;
struct sf_method sf_declined_method;
_Thread_local void *sf_pending_error;
_Thread_local int sf_forward_depth;
_Thread_local void *sf_delivering;

void sf_install_slow_path(sf_lookup_slow_fn fn) { atomic_store(&sf_lookup_slow, fn); }
void sf_install_dealloc_hook(sf_dealloc_hook_fn fn) { atomic_store(&sf_dealloc_hook, fn); }
sf_imp _Atomic sf_root_dealloc_imp;
sf_sel _Atomic sf_root_dealloc_sel;
void sf_install_root_dealloc(sf_imp imp, sf_sel sel) {
    atomic_store(&sf_root_dealloc_sel, sel);
    atomic_store(&sf_root_dealloc_imp, imp);
}

const char *sf_sel_getName(sf_sel sel) { return sel ? sel->name : NULL; }

const char *sf_class_getName(sf_class_t cls) { return cls ? cls->name : NULL; }

sf_class_t sf_class_getSuperclass(sf_class_t cls) { return cls ? cls->superclass : NULL; }

bool sf_class_isMetaClass(sf_class_t cls) { return cls && (cls->info & SF_CLASS_META); }

size_t sf_class_getInstanceSize(sf_class_t cls) { return cls ? cls->instance_size : 0; }

sf_method_t sf_class_getInstanceMethod(sf_class_t cls, sf_sel sel) {
    if (!cls || !sel) return NULL;
    sf_rcu_enter();
    sf_method_t m = sf_lookup_method(cls, sel);
    sf_rcu_exit();
    return m;
}

// The miss is reported like Swift's doesNotRecognizeSelector, naming the class users see.
static void record_unrecognized(sf_class_t cls, sf_sel sel) {
    sf_class_t shown = sf_class_visible(cls);
    bool meta = cls->info & SF_CLASS_META;
    sf_set_last_error_parts(SF_ERR_UNRECOGNIZED_SELECTOR, meta ? "+[" : "-[", shown->name ? shown->name : "?", " ",
                            sel->name, meta ? "]: unrecognized selector sent to class"
                                            : "]: unrecognized selector sent to instance");
}

static sf_imp lookup_imp(sf_class_t cls, sf_sel sel) {
    // Cleared first: a miss whose slow path failed (a +initialize that threw) leaves its own error.
    sf_clear_last_error();
    sf_rcu_enter();
    sf_method_t m = sf_lookup_method(cls, sel);
    sf_imp imp = m ? sf_method_imp(m) : NULL;
    sf_rcu_exit();
    if (imp) sf_clear_last_error();
    else if (sf_last_status == SF_OK) record_unrecognized(cls, sel);
    return imp;
}

__attribute__((noinline)) static sf_imp msg_lookup_full(sf_id obj, sf_sel sel);

// The hit path as a leaf: a registered thread outside any read section, a cached method, no
// error to clear. Everything else (and every miss) takes the full path, which saves registers.
// Aligned to 64 bytes: placed where the code before it happened to end, its cost moved by 8 %
// from one build to the next.
__attribute__((aligned(64))) sf_imp sf_msg_lookup(sf_id obj, sf_sel sel) {
    struct sf_rcu_reader *r = sf_rcu_self;
    // The guards as one expression: their loads cannot fault once r is known. The compiler may
    // still test them one by one; on the hit path none of those branches is taken (2a's speed
    // moved with how its branches fell).
    if (__builtin_expect(r != NULL, 1) &&
        __builtin_expect(((obj == NULL) | (sel == NULL) |
                          (atomic_load_explicit(&r->state, memory_order_relaxed) != 0) |
                          (sf_rcu_readers_fence != 0) | (sf_last_status != SF_OK)) == 0, 1)) {
        // An outermost section like sf_rcu_enter's, in one store each way: a signal handler's
        // send in the middle of it sees the depth and leaves the epoch alone (async-signal-safe
        // cached sends).
        atomic_store_explicit(&r->state,
                              atomic_load_explicit(&sf_rcu_epoch, memory_order_acquire) << SF_RCU_NEST_BITS | 1,
                              memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
        sf_method_t m = sf_cache_probe(sf_object_isa(obj), sel);
        // The markers carry no IMP: a cached marker reads as a miss and takes the full path.
        sf_imp imp = __builtin_expect(m != NULL, 1) ? sf_method_imp(m) : NULL;
        atomic_signal_fence(memory_order_seq_cst);
        atomic_store_explicit(&r->state, 0, memory_order_release);
        if (__builtin_expect(imp != NULL, 1)) return imp;
    }
    return msg_lookup_full(obj, sel);
}

static sf_imp msg_lookup_full(sf_id obj, sf_sel sel) {
    if (!obj) {
        sf_set_last_error(SF_ERR_NIL_RECEIVER, "message sent to a nil receiver");
        return NULL;
    }
    if (!sel) {
        sf_set_last_error(SF_ERR_INVALID_ARGUMENT, "sf_msg_lookup: selector is NULL");
        return NULL;
    }
    return lookup_imp(sf_object_isa(obj), sel);
}

sf_imp sf_msg_lookup_super(sf_class_t cls, sf_sel sel) {
    // [super dealloc] from a root class reaches the runtime's root dealloc, as from any class.
    sf_imp root = atomic_load_explicit(&sf_root_dealloc_imp, memory_order_acquire);
    if (!cls && sel && root && sel == atomic_load_explicit(&sf_root_dealloc_sel, memory_order_relaxed)) {
        sf_clear_last_error();
        return root;
    }
    if (!cls) {
        sf_set_last_error(SF_ERR_NIL_RECEIVER, "super lookup from a class with no superclass");
        return NULL;
    }
    if (!sel) {
        sf_set_last_error(SF_ERR_INVALID_ARGUMENT, "sf_msg_lookup_super: selector is NULL");
        return NULL;
    }
    return lookup_imp(cls, sel);
}

sf_sel sf_method_getName(sf_method_t m) { return m ? m->sel : NULL; }

sf_imp sf_method_getImplementation(sf_method_t m) { return m ? sf_method_imp(m) : NULL; }

const char *sf_method_getTypeEncoding(sf_method_t m) { return m ? m->sig->types : NULL; }

void sf_method_init(sf_method_t m, sf_sel sel, sf_imp imp, const struct sf_signature *sig, void *owner) {
    m->sel = sel;
    atomic_init(&m->imp, imp);
    m->sig = sig;
    m->owner = owner;
    m->key = sig ? sig->key : 0;
    atomic_init(&m->owner_bits, 0);
    atomic_init(&m->hook_bits, 0);
}

sf_imp sf_method_swap_imp(sf_method_t m, sf_imp imp) {
    return atomic_exchange_explicit(&m->imp, imp, memory_order_acq_rel);
}
