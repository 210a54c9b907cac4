/*
 * Behaviour: SO_PRIORITY: 0-6 for anyone, other values with CAP_NET_ADMIN
 * (root here); read and set on a bound TCP socket, a listener, the
 * connection accepted from it (what it inherited first), a connected TCP
 * socket and a bound UDP socket, with a short option length tried once on
 * each (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_PRIORITY
#define VALS                                                                   \
    {                                                                          \
        3, 6, 7, 0, -1, 0                                                      \
    }
#define LPORT (D_LPORT_BASE + 255)
#include "tmpl_opt.h"
