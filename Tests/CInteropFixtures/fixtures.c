#include "CInteropFixtures.h"
void sf_fixture_placeholder(void) {}
