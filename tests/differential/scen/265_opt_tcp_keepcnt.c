/*
 * Behaviour: TCP_KEEPCNT: 1..127 taken, others EINVAL; read and set on a
 * bound TCP socket, a listener, the connection accepted from it (what it
 * inherited first), a connected TCP socket and a bound UDP socket, with a
 * short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_KEEPCNT
#define VALS                                                                   \
    {                                                                          \
        1, 127, 128, 0, -1, 5                                                  \
    }
#define LPORT (D_LPORT_BASE + 265)
#include "tmpl_opt.h"
