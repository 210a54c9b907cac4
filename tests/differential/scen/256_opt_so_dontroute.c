/*
 * Behaviour: SO_DONTROUTE: non-zero reads back as 1; read and set on a bound
 * TCP socket, a listener, the connection accepted from it (what it inherited
 * first), a connected TCP socket and a bound UDP socket, with a short option
 * length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_DONTROUTE
#define VALS                                                                   \
    {                                                                          \
        1, 0, 4, 0                                                             \
    }
#define LPORT (D_LPORT_BASE + 256)
#include "tmpl_opt.h"
