// The process's memory figures for the memory cases (11c-11e).
#include "DispatchFixtures.h"
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

size_t sfb_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    return mallinfo2().uordblks;
#else
    return 0;
#endif
}

size_t sfb_resident_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, resident = 0;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    return n == 2 ? resident * (size_t)sysconf(_SC_PAGESIZE) : 0;
}
