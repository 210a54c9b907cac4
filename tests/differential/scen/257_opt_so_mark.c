/*
 * Behaviour: SO_MARK (root): any value reads back as set; read and set on a
 * bound TCP socket, a listener, the connection accepted from it (what it
 * inherited first), a connected TCP socket and a bound UDP socket, with a
 * short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_MARK
#define VALS                                                                   \
    {                                                                          \
        5, 0, -1, 0                                                            \
    }
#define LPORT (D_LPORT_BASE + 257)
#include "tmpl_opt.h"
