// Counting replacements of the malloc family for `forwarding bench`; see MallocCounter.h.
#include "MallocCounter.h"

#if defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#    define SFB_SANITIZED 1
#  endif
#endif

#if defined(__GLIBC__) || (defined(__linux__) && !defined(__ANDROID__))
#  include <features.h>
#endif

#if defined(__GLIBC__) && !defined(SFB_SANITIZED)

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

// Initial-exec: the executable's own TLS block, reached without __tls_get_addr (which could
// allocate, and so recurse).
static __thread unsigned long long allocations __attribute__((tls_model("initial-exec")));

unsigned long long sfb_thread_allocations(void) { return allocations; }
int sfb_allocation_counting_available(void) { return 1; }

void *malloc(size_t size) {
    allocations++;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    allocations++;
    return __libc_calloc(count, size);
}

void *realloc(void *ptr, size_t size) {
    allocations++;
    return __libc_realloc(ptr, size);
}

void free(void *ptr) { __libc_free(ptr); }

void *memalign(size_t alignment, size_t size) {
    allocations++;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    allocations++;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    allocations++;
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t size) {
    allocations++;
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    allocations++;
    return __libc_pvalloc(size);
}

#else

unsigned long long sfb_thread_allocations(void) { return 0; }
int sfb_allocation_counting_available(void) { return 0; }

#endif
