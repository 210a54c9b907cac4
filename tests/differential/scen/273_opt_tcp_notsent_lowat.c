/*
 * Behaviour: TCP_NOTSENT_LOWAT: any value reads back (0 meaning none); read
 * and set on a bound TCP socket, a listener, the connection accepted from it
 * (what it inherited first), a connected TCP socket and a bound UDP socket,
 * with a short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_NOTSENT_LOWAT
#define VALS                                                                   \
    {                                                                          \
        16384, 0, -1, 1                                                        \
    }
#define LPORT (D_LPORT_BASE + 273)
#include "tmpl_opt.h"
