/*
 * Behaviour: IP_FREEBIND: non-zero reads back as 1; read and set on a bound
 * TCP socket, a listener, the connection accepted from it (what it inherited
 * first), a connected TCP socket and a bound UDP socket, with a short option
 * length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_IP
#define OPT IP_FREEBIND
#define VALS                                                                   \
    {                                                                          \
        1, 0, 2, 0                                                             \
    }
#define LPORT (D_LPORT_BASE + 279)
#include "tmpl_opt.h"
