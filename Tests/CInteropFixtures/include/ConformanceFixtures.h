/*
 * Objective-C runtime conformance scenarios, transcribed from the runtime tests of
 * gnustep/libobjc2 (Test/) and apple/objc4 (test/), written against SelectorForwarding.h only.
 * Each returns 0 on success, else the line of the first failed check (cf_failure() says why).
 */
#ifndef CONFORMANCE_FIXTURES_H
#define CONFORMANCE_FIXTURES_H

#include <SelectorForwarding.h>

#ifdef __cplusplus
extern "C" {
#endif

const char *cf_failure(void);

/* Bytes of heap in use (mallinfo2, or ASan's allocator when it is there). */
size_t cf_heap_in_use(void);

int cf_scenario_ivar_alignment(const char *name);
int cf_scenario_resolver_caching(const char *name);
int cf_scenario_forwarding_imp(const char *name);
int cf_scenario_protocols(const char *name);
/* class_setSuperclass, extra bytes, association policies, method_invoke, properties, IMPs from
 * functions, long double sends. */
int cf_scenario_runtime_api(const char *name);
/* objc_duplicateClass and isa swizzling between the original and the copy. */
int cf_scenario_duplicate_class(const char *name);
/* Per-object and class hooks living with sf_object_setClass to a KVO-style subclass or an
 * sf_duplicateClass copy, in either order (conformance_class_swap.c). */
int cf_scenario_class_swap_hooked_then_hooks_removed(const char *name);
int cf_scenario_class_swap_hooked_then_class_restored(const char *name);
int cf_scenario_class_swap_duplicate(const char *name);
int cf_scenario_class_swap_refused(const char *name);
int cf_scenario_class_swap_swapped_then_hooks_removed(const char *name);
int cf_scenario_class_swap_swapped_then_class_restored(const char *name);
int cf_scenario_class_swap_class_hooks(const char *name);
int cf_scenario_class_swap_class_hooks_removed(const char *name);
/* objc_storeWeak, objc_copyWeak, objc_moveWeak, weak ivars and ivar layouts. */
int cf_scenario_weak(const char *name);
/* +initialize and an overridden dealloc from C (conformance_lifecycle.c). */
int cf_scenario_initialize(const char *name);
int cf_scenario_initialize_race(const char *name);
int cf_scenario_dealloc(const char *name);
/* method_getNumberOfArguments, method_copy/getReturnType, method_copy/getArgumentType. */
int cf_scenario_method_types(const char *name);
int cf_scenario_small_objects(const char *name);
/* class_getInstanceVariable, ivar_getName / getTypeEncoding / getOffset. */
int cf_scenario_ivars(const char *name);
/* class_addMethodsBulk, class_replaceMethodsBulk. */
int cf_scenario_bulk_methods(const char *name);
/* object_dispose. */
int cf_scenario_dispose(const char *name);
/* class_registerAlias_np, objc_lookUpClass. */
int cf_scenario_alias(const char *name);
/* objc_setForwardHandler: arguments past the registers, each return kind, decline, restore. */
int cf_scenario_forward_handler(const char *name);
/* `@?` and `[N type]`: ivar offsets as the C compiler's, array arguments, strong slots, refusals. */
int cf_scenario_block_array_encodings(const char *name);

/* Heap bytes per method added to `classes` new classes, `methods` each (selectors interned
 * beforehand); with `send_each`, every method is also sent once (filling the caches). */
double cf_heap_per_added_method(const char *name, int classes, int methods, bool send_each);

#ifdef __cplusplus
}
#endif

#endif
