/*
 * Behaviour: TCP_MAXSEG: 536 before a connection, values below 88 or above
 * 65535 EINVAL, and what a connection reports; read and set on a bound TCP
 * socket, a listener, the connection accepted from it (what it inherited
 * first), a connected TCP socket and a bound UDP socket, with a short option
 * length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_MAXSEG
#define VALS                                                                   \
    {                                                                          \
        536, 1000, 10, 88, 70000, 1200                                         \
    }
#define LPORT (D_LPORT_BASE + 266)
#include "tmpl_opt.h"
