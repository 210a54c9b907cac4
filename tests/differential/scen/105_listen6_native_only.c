/*
 * Behaviour: as 104_listen6_mapped_only, the other way round: a listener
 * bound to fd00:200::2:P takes the peer's IPv6 connection (accept names
 * [fd00:200::1]:eph, len 28) but the IPv4 one to 10.200.0.2:P is refused.
 */
#define LISTEN_IP D_SUBJ_IP6
#define REFUSED_IP D_SUBJ_IP
#define OK_IP D_SUBJ_IP6
#include "104_listen6_mapped_only.c"
