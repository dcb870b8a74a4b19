// The calling thread's last error, for C callers.
#include "sf_private.h"
#include <stdlib.h>
#include <string.h>

static _Thread_local sf_status last_status;
static _Thread_local char last_message[512];

void sf_set_last_error(sf_status status, const char *message) {
    last_status = status;
    if (!message) message = "";
    strncpy(last_message, message, sizeof last_message - 1);
    last_message[sizeof last_message - 1] = '\0';
}

sf_status sf_last_error(void) { return last_status; }

const char *sf_last_error_message(void) { return last_message; }

// The success path of lookups: two thread-local stores, no copying.
void sf_clear_last_error(void) {
    last_status = SF_OK;
    last_message[0] = '\0';
}
