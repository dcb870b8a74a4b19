#include "sf_private.h"
#include <stdlib.h>

_Thread_local void *sf_capi_call_top __attribute__((tls_model("initial-exec")));

void sf_free(void *list) { free(list); }
