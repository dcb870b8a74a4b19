// The throttle engine's thread state (internal/sf_throttle_state.h).
#include "sf_throttle_state.h"

_Thread_local void *sf_throttle_performing __attribute__((tls_model("initial-exec")));
