/*
 * Behaviour: TCP_DEFER_ACCEPT: seconds rounded to the retransmission
 * schedule; read and set on a bound TCP socket, a listener, the connection
 * accepted from it (what it inherited first), a connected TCP socket and a
 * bound UDP socket, with a short option length tried once on each
 * (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_DEFER_ACCEPT
#define VALS                                                                   \
    {                                                                          \
        5, 0, 1, 30, -1, 0                                                     \
    }
#define LPORT (D_LPORT_BASE + 271)
#include "tmpl_opt.h"
