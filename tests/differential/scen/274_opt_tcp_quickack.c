/*
 * Behaviour: TCP_QUICKACK: settable everywhere TCP, its reading depends on
 * the state; read and set on a bound TCP socket, a listener, the connection
 * accepted from it (what it inherited first), a connected TCP socket and a
 * bound UDP socket, with a short option length tried once on each
 * (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_QUICKACK
#define VALS                                                                   \
    {                                                                          \
        0, 1, 5                                                                \
    }
#define LPORT (D_LPORT_BASE + 274)
#include "tmpl_opt.h"
