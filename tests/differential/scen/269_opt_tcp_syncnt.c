/*
 * Behaviour: TCP_SYNCNT: 1..127 taken (default the sysctl, 6), others
 * EINVAL; read and set on a bound TCP socket, a listener, the connection
 * accepted from it (what it inherited first), a connected TCP socket and a
 * bound UDP socket, with a short option length tried once on each
 * (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_TCP
#define OPT TCP_SYNCNT
#define VALS                                                                   \
    {                                                                          \
        1, 127, 128, 0, -1, 3                                                  \
    }
#define LPORT (D_LPORT_BASE + 269)
#include "tmpl_opt.h"
