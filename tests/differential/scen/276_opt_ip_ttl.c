/*
 * Behaviour: IP_TTL: 1..255 taken, -1 restores the default 64, others
 * EINVAL; read and set on a bound TCP socket, a listener, the connection
 * accepted from it (what it inherited first), a connected TCP socket and a
 * bound UDP socket, with a short option length tried once on each
 * (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_IP
#define OPT IP_TTL
#define VALS                                                                   \
    {                                                                          \
        1, 255, 256, 0, -2, -1, 32                                             \
    }
#define LPORT (D_LPORT_BASE + 276)
#include "tmpl_opt.h"
