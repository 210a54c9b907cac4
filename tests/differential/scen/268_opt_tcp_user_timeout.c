/*
 * Behaviour: TCP_USER_TIMEOUT: milliseconds, negative EINVAL; read and set
 * on a bound TCP socket, a listener, the connection accepted from it (what
 * it inherited first), a connected TCP socket and a bound UDP socket, with a
 * short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_USER_TIMEOUT
#define VALS                                                                   \
    {                                                                          \
        1000, 0, -1, 30000                                                     \
    }
#define LPORT (D_LPORT_BASE + 268)
#include "tmpl_opt.h"
