/*
 * Behaviour: SO_REUSEADDR: any non-zero value reads back as 1; read and set
 * on a bound TCP socket, a listener, the connection accepted from it (what
 * it inherited first), a connected TCP socket and a bound UDP socket, with a
 * short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_REUSEADDR
#define VALS                                                                   \
    {                                                                          \
        1, 0, 7, 0, 1                                                          \
    }
#define LPORT (D_LPORT_BASE + 250)
#include "tmpl_opt.h"
