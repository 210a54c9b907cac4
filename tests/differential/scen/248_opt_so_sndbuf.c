/*
 * Behaviour: SO_SNDBUF: doubled, clamped to the minimum and to twice
 * wmem_max; read and set on a bound TCP socket, a listener, the connection
 * accepted from it (what it inherited first), a connected TCP socket and a
 * bound UDP socket, with a short option length tried once on each
 * (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_SNDBUF
#define VALS                                                                   \
    {                                                                          \
        1, 4096, 100000, 1 << 30, -1, 65536                                    \
    }
#define LPORT (D_LPORT_BASE + 248)
#include "tmpl_opt.h"
