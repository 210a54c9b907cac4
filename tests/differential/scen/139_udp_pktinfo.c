/*
 * Behaviour: IP_PKTINFO on an AF_INET UDP socket, set before bind (an
 * option of a socket not yet on the stack, which gets it when it is):
 * each echo's IP_PKTINFO gives the local address it was sent to as
 * ipi_addr and ipi_spec_dst, 10.200.0.2 (the interface index printed only
 * as non-zero); IP_RECVTTL and IP_RECVTOS add IP_TTL (an int, the peer's
 * 64) and IP_TOS (one byte, 0) after it; a control buffer with room for
 * the first message only gives MSG_CTRUNC and msg_controllen 32, one of
 * 20 bytes MSG_CTRUNC and a first message cut to 20 (cmsg_len 20); with
 * the options off again, msg_controllen 0.
 */
#include "scen.h"

static void
one(int u, size_t ctlsz)
{
    struct sockaddr_in d = d_sin(D_PEER_IP, D_UDP_ECHO), from;
    char buf[16], ctl[256], a[INET_ADDRSTRLEN], sp[INET_ADDRSTRLEN];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_name = &from,
                       .msg_namelen = sizeof(from),
                       .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctl,
                       .msg_controllen = ctlsz};
    struct cmsghdr *c;

    memset(ctl, 0, sizeof(ctl));
    T(sendto(u, "pi", 2, 0, SA(&d), sizeof(d)));
    T(recvmsg(u, &m, 0));
    NOTE("ctl %d: from %s flags %s controllen %d", (int)ctlsz,
         tr_addr(&from, 0), tr_msgflags(m.msg_flags), (int)m.msg_controllen);
    for (c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
        size_t dl = c->cmsg_len - CMSG_LEN(0);

        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
            dl == sizeof(struct in_pktinfo)) {
            struct in_pktinfo pi;

            memcpy(&pi, CMSG_DATA(c), sizeof(pi));
            inet_ntop(AF_INET, &pi.ipi_addr, a, sizeof(a));
            inet_ntop(AF_INET, &pi.ipi_spec_dst, sp, sizeof(sp));
            NOTE("IP_PKTINFO addr %s spec_dst %s ifindex>0 %d", a, sp,
                 pi.ipi_ifindex > 0);
        } else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL &&
                   dl == sizeof(int)) {
            int ttl;

            memcpy(&ttl, CMSG_DATA(c), sizeof(ttl));
            NOTE("IP_TTL %d", ttl);
        } else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
                   dl == 1) {
            NOTE("IP_TOS %d", *(unsigned char *)CMSG_DATA(c));
        } else {
            NOTE("cmsg level %d type %d len %d", c->cmsg_level, c->cmsg_type,
                 (int)c->cmsg_len);
        }
    }
}

int
main(void)
{
    struct sockaddr_in me = d_sin("0.0.0.0", D_LPORT_BASE + 139);
    int u;

    tr_init();
    u = TF(socket(AF_INET, SOCK_DGRAM, 0));
    d_seti(u, IPPROTO_IP, IP_PKTINFO, 1);
    T(bind(u, SA(&me), sizeof(me)));
    d_geti(u, IPPROTO_IP, IP_PKTINFO, "IP_PKTINFO");
    one(u, 256);
    d_seti(u, IPPROTO_IP, IP_RECVTTL, 1);
    d_seti(u, IPPROTO_IP, IP_RECVTOS, 1);
    d_geti(u, IPPROTO_IP, IP_RECVTTL, "IP_RECVTTL");
    one(u, 256);
    one(u, CMSG_SPACE(sizeof(struct in_pktinfo)));
    one(u, 20);
    d_seti(u, IPPROTO_IP, IP_PKTINFO, 0);
    d_seti(u, IPPROTO_IP, IP_RECVTTL, 0);
    d_seti(u, IPPROTO_IP, IP_RECVTOS, 0);
    d_geti(u, IPPROTO_IP, IP_PKTINFO, "IP_PKTINFO");
    one(u, 256);
    T(close(u));
    return 0;
}
