/*
 * Behaviour: IP_TOS: TCP keeps the ECN bits its own (0xff reads 0xfc), UDP
 * stores the byte as given; read and set on a bound TCP socket, a listener,
 * the connection accepted from it (what it inherited first), a connected TCP
 * socket and a bound UDP socket, with a short option length tried once on
 * each (scen/tmpl_opt.h).
 */
#define LEVEL IPPROTO_IP
#define OPT IP_TOS
#define VALS                                                                   \
    {                                                                          \
        0x10, 0x28, 0xff, 256, -1, 0                                           \
    }
#define LPORT (D_LPORT_BASE + 275)
#include "tmpl_opt.h"
