// The method body, in its own translation unit so that no loop can inline it.
#include "DispatchFixtures.h"

__attribute__((noinline)) long sfb_add(sf_id self, sf_sel cmd, long a, long b) {
    (void)self;
    (void)cmd;
    return a + b;
}
