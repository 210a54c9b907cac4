/*
 * Behaviour: SO_RCVLOWAT: 0 reads back as 1, a negative value as INT_MAX;
 * read and set on a bound TCP socket, a listener, the connection accepted
 * from it (what it inherited first), a connected TCP socket and a bound UDP
 * socket, with a short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_RCVLOWAT
#define VALS                                                                   \
    {                                                                          \
        1, 100, 0, -1, 65536, 1                                                \
    }
#define LPORT (D_LPORT_BASE + 252)
#include "tmpl_opt.h"
