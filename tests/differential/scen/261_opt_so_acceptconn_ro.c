/*
 * Behaviour: SO_ACCEPTCONN is read-only: setting it is ENOPROTOOPT; it reads
 * 1 only on the listener; read and set on a bound TCP socket, a listener,
 * the connection accepted from it (what it inherited first), a connected TCP
 * socket and a bound UDP socket, with a short option length tried once on
 * each (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_ACCEPTCONN
#define VALS                                                                   \
    {                                                                          \
        0, 1                                                                   \
    }
#define LPORT (D_LPORT_BASE + 261)
#include "tmpl_opt.h"
