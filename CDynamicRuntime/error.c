// The calling thread's last error, for C callers.
#include "sf_private.h"
#include <stdlib.h>
#include <string.h>

_Thread_local sf_status sf_last_status __attribute__((tls_model("initial-exec")));
static _Thread_local char last_message[512];


sf_status sf_last_error(void) { return sf_last_status; }

const char *sf_last_error_message(void) { return last_message; }

void sf_clear_last_error_slow(void) {
    sf_last_status = SF_OK;
    last_message[0] = '\0';
}

static size_t append(size_t at, const char *part) {
    if (!part) return at;
    size_t room = sizeof last_message - 1 - at, n = strlen(part);
    if (n > room) n = room;
    memmove(last_message + at, part, n);  // part may be last_message itself
    return at + n;
}

// strncpy would zero the whole buffer on every error.
void sf_set_last_error(sf_status status, const char *message) {
    sf_set_last_error_parts(status, message, NULL, NULL, NULL, NULL);
}

void sf_set_last_error_parts(sf_status status, const char *prefix, const char *a, const char *middle,
                             const char *b, const char *suffix) {
    sf_last_status = status;
    size_t at = append(0, prefix);
    at = append(at, a);
    at = append(at, middle);
    at = append(at, b);
    at = append(at, suffix);
    last_message[at] = '\0';
}
