/*
 * Behaviour: SO_SNDLOWAT: reads 1, setting it is ENOPROTOOPT; read and set
 * on a bound TCP socket, a listener, the connection accepted from it (what
 * it inherited first), a connected TCP socket and a bound UDP socket, with a
 * short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_SNDLOWAT
#define VALS                                                                   \
    {                                                                          \
        1, 2048                                                                \
    }
#define LPORT (D_LPORT_BASE + 258)
#include "tmpl_opt.h"
