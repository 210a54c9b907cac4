/*
 * Behaviour: TCP_WINDOW_CLAMP: 0 before the connection, small values raised
 * to half the minimum buffer, negative EINVAL; read and set on a bound TCP
 * socket, a listener, the connection accepted from it (what it inherited
 * first), a connected TCP socket and a bound UDP socket, with a short option
 * length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_WINDOW_CLAMP
#define VALS                                                                   \
    {                                                                          \
        100000, 1, 0, -1, 65535                                                \
    }
#define LPORT (D_LPORT_BASE + 272)
#include "tmpl_opt.h"
