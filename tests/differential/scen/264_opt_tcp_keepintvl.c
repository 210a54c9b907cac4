/*
 * Behaviour: TCP_KEEPINTVL: 1..32767 taken, others EINVAL; read and set on a
 * bound TCP socket, a listener, the connection accepted from it (what it
 * inherited first), a connected TCP socket and a bound UDP socket, with a
 * short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_KEEPINTVL
#define VALS                                                                   \
    {                                                                          \
        1, 100, 32767, 32768, 0, -1, 30                                        \
    }
#define LPORT (D_LPORT_BASE + 264)
#include "tmpl_opt.h"
