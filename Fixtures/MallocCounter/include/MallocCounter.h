/*
 * Heap allocations made by the calling thread, for `forwarding bench`.
 *
 * Linking this target into an executable replaces glibc's malloc family there (glibc supports
 * replacing malloc: https://www.gnu.org/software/libc/manual/html_node/Replacing-malloc.html);
 * every replacement counts, then calls glibc's own allocator (__libc_malloc and friends), so
 * blocks stay glibc's and free, malloc_usable_size and the rest keep working unchanged.
 * Not for a library, and never together with another malloc interposer.
 */
#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

#ifdef __cplusplus
extern "C" {
#endif

/* Allocations (malloc, calloc, realloc, the aligned variants) made by this thread so far. */
unsigned long long sfb_thread_allocations(void);

/* Whether the counting replacements are linked in and active (0 under ASan/TSan, whose own
 * allocator must not be replaced, and on non-glibc systems). */
int sfb_allocation_counting_available(void);

#ifdef __cplusplus
}
#endif

#endif
