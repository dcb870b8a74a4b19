// The check macro of the conformance scenarios: records the first failure with the runtime's
// last error and returns its line.
#ifndef CONFORMANCE_CHECK_H
#define CONFORMANCE_CHECK_H

#include <stdio.h>

extern char cf_failure_text[1024];

#define CHECK(cond)                                                                                  \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            snprintf(cf_failure_text, sizeof cf_failure_text, "%s:%d: CHECK(%s) failed; last error %d: %s", \
                     __FILE__, __LINE__, #cond, (int)sf_last_error(), sf_last_error_message());      \
            return __LINE__;                                                                         \
        }                                                                                            \
    } while (0)

#define SEL(name) sf_sel_registerName(name)
#define IMP(f) ((sf_imp)(f))

#endif
