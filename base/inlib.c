/*
 * The per-thread "inside the library" mark (see inlib.h). It lives in the
 * runtime's core so every layer and the unit tests can link it.
 */
#include "inlib.h"

__thread int base_in_lib;
