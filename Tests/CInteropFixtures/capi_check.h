/* The scenarios' check macro: record the failing line and what the runtime said, return it. */
#ifndef CAPI_CHECK_H
#define CAPI_CHECK_H
#include <stdio.h>
#include <string.h>

extern char fx_capi_failure_text[1024];

#define CHECK(cond)                                                                                  \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            snprintf(fx_capi_failure_text, sizeof fx_capi_failure_text,                              \
                     "%s:%d: CHECK(%s) failed; last error %d: %s", __FILE__, __LINE__, #cond,        \
                     (int)sf_last_error(), sf_last_error_message() ? sf_last_error_message() : "");  \
            return __LINE__;                                                                         \
        }                                                                                            \
    } while (0)
#define SEL(name) sf_sel_registerName(name)

static inline int contains(const char *haystack, const char *needle) {
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

long fx_capi_send_long(sf_id obj, const char *sel, long arg, sf_status *status);
#endif
