/*
 * Behaviour: TCP_LINGER2: seconds (default the fin timeout, 60), negative
 * reads -1, huge ones are clamped; read and set on a bound TCP socket, a
 * listener, the connection accepted from it (what it inherited first), a
 * connected TCP socket and a bound UDP socket, with a short option length
 * tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_LINGER2
#define VALS                                                                   \
    {                                                                          \
        10, 0, -1, 1000000, 30                                                 \
    }
#define LPORT (D_LPORT_BASE + 270)
#include "tmpl_opt.h"
