// C strings lent to a thread: Swift String arguments and returns cross as copies that live
// until the enclosing pool (a Swift send, or sf_autoreleasePoolPush/Pop from C) ends.
#include "sf_private.h"
#include <pthread.h>
#include <stdlib.h>

_Thread_local size_t sf_lent_count __attribute__((tls_model("initial-exec")));
static _Thread_local char **lent;
static _Thread_local size_t lent_capacity;

static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

// Runs at thread exit; a string lent later (by another destructor) registers it again.
static void free_at_exit(void *unused) {
    (void)unused;
    sf_lent_drain_slow(0);
    free(lent);
    lent = NULL;
    lent_capacity = 0;
}

static void make_exit_key(void) { pthread_key_create(&exit_key, free_at_exit); }

const char *sf_lend_string(char *s) {
    if (!s) return NULL;
    if (sf_lent_count == lent_capacity) {
        size_t capacity = lent_capacity ? lent_capacity * 2 : 16;
        char **grown = realloc(lent, capacity * sizeof *grown);
        if (!grown) {
            free(s);
            return NULL;
        }
        if (!lent) {
            pthread_once(&exit_once, make_exit_key);
            pthread_setspecific(exit_key, (void *)1);
        }
        lent = grown;
        lent_capacity = capacity;
    }
    lent[sf_lent_count++] = s;
    return s;
}

void sf_lent_drain_slow(size_t mark) {
    while (sf_lent_count > mark) free(lent[--sf_lent_count]);
}

// A pool is the count at its push, plus one so that it is never NULL.
void *sf_autoreleasePoolPush(void) {
    sf_clear_last_error();
    return (void *)(uintptr_t)(sf_lent_count + 1);
}

sf_status sf_autoreleasePoolPop(void *pool) {
    uintptr_t mark = (uintptr_t)pool;
    if (mark == 0 || mark - 1 > sf_lent_count) {
        sf_set_last_error(SF_ERR_INVALID_ARGUMENT, mark == 0
            ? "invalid argument: expected a pool from sf_autoreleasePoolPush, got NULL"
            : "invalid argument: expected a pool from sf_autoreleasePoolPush, got one popped already (pops run in reverse order of pushes)");
        return SF_ERR_INVALID_ARGUMENT;
    }
    sf_lent_drain(mark - 1);
    sf_clear_last_error();
    return SF_OK;
}
