/*
 * Template of the UDP state matrix (scenarios 218-246): one UDP socket is
 * brought into one state, then one group of calls is made on it. A
 * scenario file defines STATE (a U_* below), GROUP (G_IO, G_SHUT or
 * G_PROBE, as in tmpl_tcp_state.h) and optionally FAM6 (AF_INET6 over
 * native IPv6), and includes this file. The states:
 *   U_BOUND        bound to the subject's address, port 0, unconnected
 *   U_BOUND_DATA   as U_BOUND, with the echo of a datagram "hello" queued
 *   U_CONNECTED    connected to the echo service
 *   U_CONN_DATA    connected, the echo of "hello" queued
 *   U_REFUSED      connected to a closed port after one send: the ICMP
 *                  port unreachable is pending (one ICMP per scenario:
 *                  the peer rate-limits them)
 *   U_DISCONNECTED connected, then disconnected with AF_UNSPEC
 * Sockets are made non-blocking once in their state.
 */
#include "tmpl_common.h"

#include <linux/sockios.h>

enum {
    U_BOUND,
    U_BOUND_DATA,
    U_CONNECTED,
    U_CONN_DATA,
    U_REFUSED,
    U_DISCONNECTED,
};

enum { G_IO, G_SHUT, G_PROBE };

static int
st_make(int st)
{
    struct sockaddr_in6 a;
    socklen_t al;
    int fd = TF(socket(FAM, SOCK_DGRAM, 0));

    al = t_addr(&a, S_SUBJ, 0);
    T(bind(fd, SA(&a), al));
    switch (st) {
    case U_BOUND:
        break;
    case U_BOUND_DATA:
        al = t_addr(&a, S_PEER, D_UDP_ECHO);
        T(sendto(fd, "hello", 5, 0, SA(&a), al));
        NOTE("revents %s", tr_pollev(d_wait(fd, POLLIN)));
        break;
    case U_CONNECTED:
    case U_CONN_DATA:
    case U_DISCONNECTED:
        al = t_addr(&a, S_PEER, D_UDP_ECHO);
        T(connect(fd, SA(&a), al));
        if (st == U_CONN_DATA) {
            T(send(fd, "hello", 5, 0));
            NOTE("revents %s", tr_pollev(d_wait(fd, POLLIN)));
        }
        if (st == U_DISCONNECTED) {
            a.sin6_family = AF_UNSPEC;
            T(connect(fd, SA(&a), al));
        }
        break;
    default: /* U_REFUSED */
        al = t_addr(&a, S_PEER, D_REFUSED);
        T(connect(fd, SA(&a), al));
        T(send(fd, "x", 1, 0));
        NOTE("revents %s", tr_pollev(d_wait(fd, POLLERR)));
        break;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static void
group_io(int fd)
{
    char buf[64];
    struct sockaddr_in6 a;
    socklen_t al = sizeof(a);
    struct iovec iov[2] = {{buf, 2}, {buf + 2, sizeof(buf) - 2}};
    struct msghdr m = {.msg_name = &a,
                       .msg_namelen = sizeof(a),
                       .msg_iov = iov,
                       .msg_iovlen = 2};
    struct iovec wv[2] = {{"a", 1}, {"b", 1}};
    struct msghdr wm = {.msg_iov = wv, .msg_iovlen = 2};
    long r;

    r = T(recv(fd, buf, 2, MSG_PEEK));
    if (r > 0)
        NOTE("peeked %s", tr_data(buf, (size_t)r));
    r = T(recv(fd, buf, 3, MSG_PEEK | MSG_TRUNC));
    memset(&a, 0, sizeof(a));
    r = T(recvfrom(fd, buf, sizeof(buf), MSG_PEEK, SA(&a), &al));
    if (r >= 0)
        NOTE("from %s len %d", tr_addr(&a, 0), (int)al);
    memset(&a, 0, sizeof(a));
    r = T(recvmsg(fd, &m, MSG_PEEK));
    if (r >= 0)
        NOTE("msg from %s namelen %d flags %s data %s", tr_addr(&a, 0),
             (int)m.msg_namelen, tr_msgflags(m.msg_flags),
             tr_data(buf, (size_t)r));
    T(read(fd, buf, 1));
    T(recv(fd, buf, sizeof(buf), 0));
    T(readv(fd, iov, 2));
    T(recv(fd, buf, 0, 0));
    T(send(fd, "x", 1, 0));
    T(write(fd, "y", 1));
    al = t_addr(&a, S_PEER, D_UDP_ECHO);
    T(sendto(fd, "z", 1, 0, SA(&a), al));
    T(sendmsg(fd, &wm, 0));
    wm.msg_name = &a;
    wm.msg_namelen = al;
    T(sendmsg(fd, &wm, 0));
    T(writev(fd, wv, 2));
    T(send(fd, "", 0, 0));
    T(close(fd));
}

static void
group_shut(int fd)
{
    char buf[16];
    long r;

    T(shutdown(fd, 3));
    t_show(fd, "before");
    T(shutdown(fd, SHUT_RD));
    t_show(fd, "after SHUT_RD");
    r = T(recv(fd, buf, sizeof(buf), 0));
    if (r > 0)
        NOTE("got %s", tr_data(buf, (size_t)r));
    T(recv(fd, buf, sizeof(buf), 0));
    T(shutdown(fd, SHUT_WR));
    t_show(fd, "after SHUT_WR");
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    T(shutdown(fd, SHUT_RDWR));
    t_show(fd, "after SHUT_RDWR");
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    T(close(fd));
}

static void
group_probe(int fd)
{
    struct pollfd p = {.fd = fd,
                       .events = POLLIN | POLLOUT | POLLRDHUP | POLLPRI};
    int v = -1;

    t_ready(fd, POLLIN | POLLOUT | POLLRDHUP | POLLPRI,
            EPOLLIN | EPOLLOUT | EPOLLRDHUP);
    if (T(ioctl(fd, FIONREAD, &v)) == 0)
        NOTE("FIONREAD = %d", v);
    if (T(ioctl(fd, SIOCOUTQ, &v)) == 0)
        NOTE("SIOCOUTQ = %d", v);
    d_name(fd, 1, "name");
    d_peer(fd, 0, "peer");
    d_geti(fd, SOL_SOCKET, SO_TYPE, "SO_TYPE");
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    T(poll(&p, 1, 0));
    NOTE("revents %s", tr_pollev(p.revents));
    T(close(fd));
}

int
main(void)
{
    int fd;

    tr_init();
    fd = st_make(STATE);
    if (GROUP == G_IO)
        group_io(fd);
    else if (GROUP == G_SHUT)
        group_shut(fd);
    else
        group_probe(fd);
    return 0;
}
