/*
 * Behaviour: IP_MTU_DISCOVER: the modes 0..5, others EINVAL; read and set on
 * a bound TCP socket, a listener, the connection accepted from it (what it
 * inherited first), a connected TCP socket and a bound UDP socket, with a
 * short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_IP
#define OPT IP_MTU_DISCOVER
#define VALS                                                                   \
    {                                                                          \
        0, 1, 2, 3, 4, 5, 6, -1, 1                                             \
    }
#define LPORT (D_LPORT_BASE + 277)
#include "tmpl_opt.h"
