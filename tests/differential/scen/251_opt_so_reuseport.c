/*
 * Behaviour: SO_REUSEPORT: any non-zero value reads back as 1 (also after
 * bind and listen, where Linux accepts it); read and set on a bound TCP
 * socket, a listener, the connection accepted from it (what it inherited
 * first), a connected TCP socket and a bound UDP socket, with a short option
 * length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_REUSEPORT
#define VALS                                                                   \
    {                                                                          \
        1, 0, 3, 0                                                             \
    }
#define LPORT (D_LPORT_BASE + 251)
#include "tmpl_opt.h"
