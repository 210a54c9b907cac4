/*
 * Behaviour: the sender's name on an AF_INET6 UDP socket with a buffer
 * shorter than sockaddr_in6: recvfrom with 16 bytes and recvmsg with
 * msg_namelen 16 copy 16 bytes and report 28; msg_namelen 0 copies
 * nothing but reports 28 too; a NULL msg_name with a length is fine (the
 * length is left as given).
 * For a mapped sender and a native one.
 */
#include "scen.h"

static void
one_sender(int u, const char *ip)
{
    struct sockaddr_in6 d = d_sin6(ip, D_UDP_ECHO);
    unsigned char nm[32];
    socklen_t nl;
    char buf[16];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    int i;

    NOTE("sender %s", ip);
    for (i = 0; i < 4; i++)
        T(sendto(u, "abc", 3, 0, SA(&d), sizeof(d)));
    memset(nm, 0xee, sizeof(nm));
    nl = 16;
    T(recvfrom(u, buf, sizeof(buf), 0, SA(nm), &nl));
    NOTE("recvfrom len %d family %d port %02x%02x byte16 %02x", (int)nl,
         nm[0] | nm[1] << 8, nm[2], nm[3], nm[16]);
    memset(nm, 0xee, sizeof(nm));
    m.msg_name = nm;
    m.msg_namelen = 16;
    T(recvmsg(u, &m, 0));
    NOTE("recvmsg namelen %d family %d byte16 %02x", (int)m.msg_namelen,
         nm[0] | nm[1] << 8, nm[16]);
    memset(nm, 0xee, sizeof(nm));
    m.msg_namelen = 0;
    T(recvmsg(u, &m, 0));
    NOTE("recvmsg namelen 0 -> %d first byte %02x", (int)m.msg_namelen, nm[0]);
    m.msg_name = NULL;
    m.msg_namelen = 5;
    T(recvmsg(u, &m, 0));
    NOTE("recvmsg NULL name namelen 5 -> %d", (int)m.msg_namelen);
}

int
main(void)
{
    int u;

    tr_init();
    u = TF(socket(AF_INET6, SOCK_DGRAM, 0));
    one_sender(u, D_PEER_MAPPED);
    one_sender(u, D_PEER_IP6);
    T(close(u));
    return 0;
}
