// The forwarding IMP's dispatcher: sf_msgForward (forward_entry.S) calls it with the first
// three argument words and jumps to the code it returns.
#include "sf_private.h"

sf_forward_target_fn _Atomic sf_forward_target;

void sf_install_forward_target(sf_forward_target_fn fn) { atomic_store(&sf_forward_target, fn); }

sf_sel _Atomic sf_stage_selectors[SF_STAGE_COUNT];

void sf_install_stage_selectors(sf_sel forwarding_target, sf_sel method_signature, sf_sel forward_invocation) {
    atomic_store(&sf_stage_selectors[SF_STAGE_FORWARDING_TARGET], forwarding_target);
    atomic_store(&sf_stage_selectors[SF_STAGE_METHOD_SIGNATURE], method_signature);
    atomic_store(&sf_stage_selectors[SF_STAGE_FORWARD_INVOCATION], forward_invocation);
}

#if defined(__x86_64__) && defined(__ELF__)
void sf_forward_zero_return(void);
void sf_forward_zero_return_stret(void);

__attribute__((visibility("hidden"))) sf_imp sf_forward_entry_target(uintptr_t a0, uintptr_t a1, uintptr_t a2) {
    sf_forward_target_fn fn = atomic_load_explicit(&sf_forward_target, memory_order_acquire);
    int stret = 0;
    sf_imp code = fn ? fn((void *)a0, (void *)a1, (void *)a2, &stret) : NULL;
    if (code) return code;
    if (!fn) sf_set_last_error(SF_ERR_FORWARDING, "sf_msgForward: the runtime is not initialized");
    return stret ? sf_forward_zero_return_stret : sf_forward_zero_return;
}
#else
// Elsewhere no generic entry exists yet: calling the forwarding IMP reports an error.
void sf_msgForward(void) {
    sf_set_last_error(SF_ERR_FORWARDING, "sf_msgForward: no generic forwarding entry on this architecture");
}
#endif
