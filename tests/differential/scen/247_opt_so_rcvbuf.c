/*
 * Behaviour: SO_RCVBUF: Linux stores twice the value, at least its minimum,
 * at most twice rmem_max (a negative value is a huge one); read and set on a
 * bound TCP socket, a listener, the connection accepted from it (what it
 * inherited first), a connected TCP socket and a bound UDP socket, with a
 * short option length tried once on each (scen/tmpl_opt.h).
 */
#define LEVEL SOL_SOCKET
#define OPT SO_RCVBUF
#define VALS                                                                   \
    {                                                                          \
        1, 4096, 100000, 1 << 30, -1, 65536                                    \
    }
#define LPORT (D_LPORT_BASE + 247)
#include "tmpl_opt.h"
