/*
 * Template of the TCP state matrix (scenarios 140-217): one TCP socket is
 * brought into one state, then one group of calls is made on it. A
 * scenario file defines
 *   STATE  one of the ST_* below
 *   GROUP  G_IO (every send/receive call, non-blocking),
 *          G_SHUT (shutdown each way in turn, with revents after each),
 *          G_PROBE (SO_ERROR, poll/epoll/select readiness, FIONREAD,
 *          SIOCOUTQ, names, SO_ACCEPTCONN, TCP_INFO's state)
 *   LPORT  the subject port it may listen on
 *   FAM6   (optional) AF_INET6 sockets over native IPv6 instead of AF_INET
 * and includes this file. The states:
 *   ST_BOUND        bound to the subject's address, port 0 (not listening)
 *   ST_LISTEN       listening, nothing queued
 *   ST_SYNSENT      non-blocking connect to an address nobody has
 *                   (EINPROGRESS; SYN_SENT for the ~3 s the neighbour
 *                   resolution takes, far longer than the scenario)
 *   ST_ESTAB        connected to the echo service, idle
 *   ST_ESTAB_DATA   connected, the echo of "hello" unread
 *   ST_FINWAIT2     SHUT_WR sent to the source service, which keeps
 *                   sending 100 MB (FIN_WAIT2, our FIN acknowledged, the
 *                   receive buffer full of its data)
 *   ST_SHUT_RD      connected to echo, shutdown(SHUT_RD)
 *   ST_SHUT_RDWR    connected to echo, shutdown(SHUT_RDWR), the peer's
 *                   FIN back
 *   ST_CLOSE_WAIT   the peer closed at once (D_CLOSE), FIN read by nobody
 *   ST_LAST_ACK     CLOSE_WAIT then our SHUT_WR (both sides closed)
 *   ST_TIME_WAIT    our SHUT_WR to echo, its FIN back
 *   ST_RST          the peer's RST arrived, not yet reported
 *   ST_RST_READ     the RST reported once (recv ECONNRESET)
 *   ST_REFUSED      non-blocking connect refused, SO_ERROR pending
 *   ST_REFUSED_READ the refusal read from SO_ERROR
 *   ST_ACCEPTED     accepted from the peer (it reads to EOF)
 *   ST_ACCEPTED_FIN accepted, the peer closed at once
 *   ST_ACCEPTED_RST accepted, the peer reset (before the accept)
 * Every socket is made non-blocking once in its state, so no call can
 * block; waits for asynchronous answers (an RST provoked by a send) are
 * poll()s bounded at 100 ms that return as soon as the answer is in.
 */
#include "tmpl_common.h"

#include <linux/sockios.h>

enum {
    ST_BOUND,
    ST_LISTEN,
    ST_SYNSENT,
    ST_ESTAB,
    ST_ESTAB_DATA,
    ST_FINWAIT2,
    ST_SHUT_RD,
    ST_SHUT_RDWR,
    ST_CLOSE_WAIT,
    ST_LAST_ACK,
    ST_TIME_WAIT,
    ST_RST,
    ST_RST_READ,
    ST_REFUSED,
    ST_REFUSED_READ,
    ST_ACCEPTED,
    ST_ACCEPTED_FIN,
    ST_ACCEPTED_RST,
};

enum { G_IO, G_SHUT, G_PROBE };

/* A socket of the family connected to the peer's @p port (blocking). */
static int
st_connect(int port)
{
    struct sockaddr_in6 a;
    socklen_t al = t_addr(&a, S_PEER, port);
    int fd = socket(FAM, SOCK_STREAM, 0);

    if (fd < 0 || connect(fd, SA(&a), al) < 0)
        d_fatal(__LINE__, "connect to peer");
    NOTE("connected to peer port %d", port);
    return fd;
}

/* Wait up to 100 ms for an error or hang-up to show (an answer to what
 * was just sent, an RST from a peer that has gone). */
static void
st_settle(int fd)
{
    struct pollfd p = {.fd = fd, .events = 0};

    poll(&p, 1, 100);
}

static void
st_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* The accepted side of a connect-back in @p mode. */
static int
st_accept(const char *mode)
{
    int l = socket(FAM, SOCK_STREAM, 0), one = 1, fd;
    struct sockaddr_in6 a;
    socklen_t al = t_addr(&a, S_SUBJ, LPORT);

    if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(l, SA(&a), al) || listen(l, 4))
        d_fatal(__LINE__, "listener");
    d_connect_back_to(S_SUBJ, LPORT, mode);
    usleep(50000);
    fd = TF(accept(l, NULL, NULL));
    if (fd < 0)
        d_fatal(__LINE__, "accept");
    close(l);
    return fd;
}

static int
st_make(int st)
{
    struct sockaddr_in6 a;
    socklen_t al;
    char buf[16];
    int fd, one = 1;

    switch (st) {
    case ST_BOUND:
        fd = TF(socket(FAM, SOCK_STREAM, 0));
        al = t_addr(&a, S_SUBJ, 0);
        T(bind(fd, SA(&a), al));
        break;
    case ST_LISTEN:
        fd = TF(socket(FAM, SOCK_STREAM, 0));
        T(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
        al = t_addr(&a, S_SUBJ, LPORT);
        T(bind(fd, SA(&a), al));
        T(listen(fd, 4));
        break;
    case ST_SYNSENT:
        fd = TF(socket(FAM, SOCK_STREAM | SOCK_NONBLOCK, 0));
        al = t_addr(&a, S_NONLOCAL, D_ECHO);
        T(connect(fd, SA(&a), al));
        break;
    case ST_ESTAB:
        fd = st_connect(D_ECHO);
        break;
    case ST_ESTAB_DATA:
        fd = st_connect(D_ECHO);
        T(send(fd, "hello", 5, 0));
        NOTE("revents %s", tr_pollev(d_wait(fd, POLLIN)));
        usleep(20000);
        break;
    case ST_FINWAIT2:
        fd = st_connect(D_SOURCE);
        T(send(fd, "100000000\n", 10, 0));
        T(shutdown(fd, SHUT_WR));
        NOTE("revents %s", tr_pollev(d_wait(fd, POLLIN)));
        /* FIN_WAIT2 proper: until our FIN is acknowledged (SIOCOUTQ 0),
         * the socket is still in FIN_WAIT1 (at most 1 s) */
        for (int i = 0, q = 1; i < 100 && q != 0; i++)
            if (ioctl(fd, SIOCOUTQ, &q) != 0 || q != 0)
                usleep(10000);
        /* and until the receive buffer is full (nothing more can come:
         * data arriving after a SHUT_RD resets, RFC 1122) */
        for (int i = 0, q = 0, last = -1; i < 100 && q != last; i++) {
            last = q;
            usleep(50000);
            ioctl(fd, FIONREAD, &q);
        }
        break;
    case ST_SHUT_RD:
        fd = st_connect(D_ECHO);
        T(shutdown(fd, SHUT_RD));
        break;
    case ST_SHUT_RDWR:
        fd = st_connect(D_ECHO);
        T(shutdown(fd, SHUT_RDWR));
        usleep(50000);
        break;
    case ST_CLOSE_WAIT:
        fd = st_connect(D_CLOSE);
        NOTE("revents %s", tr_pollev(d_wait(fd, POLLRDHUP)));
        break;
    case ST_LAST_ACK:
        fd = st_connect(D_CLOSE);
        NOTE("revents %s", tr_pollev(d_wait(fd, POLLRDHUP)));
        T(shutdown(fd, SHUT_WR));
        usleep(50000);
        break;
    case ST_TIME_WAIT:
        fd = st_connect(D_ECHO);
        T(shutdown(fd, SHUT_WR));
        NOTE("revents %s", tr_pollev(d_wait(fd, POLLRDHUP)));
        usleep(50000);
        break;
    case ST_RST:
    case ST_RST_READ:
        fd = st_connect(D_RST);
        T(send(fd, "r", 1, 0));
        NOTE("revents %s", tr_pollev(d_wait(fd, 0)));
        if (st == ST_RST_READ)
            T(recv(fd, buf, sizeof(buf), 0));
        break;
    case ST_REFUSED:
    case ST_REFUSED_READ:
        fd = TF(socket(FAM, SOCK_STREAM | SOCK_NONBLOCK, 0));
        al = t_addr(&a, S_PEER, D_REFUSED);
        T(connect(fd, SA(&a), al));
        NOTE("revents %s", tr_pollev(d_wait(fd, POLLOUT)));
        if (st == ST_REFUSED_READ)
            d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
        break;
    case ST_ACCEPTED:
        fd = st_accept("hold");
        break;
    case ST_ACCEPTED_FIN:
        fd = st_accept("close");
        NOTE("revents %s", tr_pollev(d_wait(fd, POLLRDHUP)));
        break;
    default: /* ST_ACCEPTED_RST */
        fd = st_accept("rst");
        NOTE("revents %s", tr_pollev(d_wait(fd, 0)));
        break;
    }
    if (fd < 0)
        d_fatal(__LINE__, "state");
    st_nonblock(fd);
    return fd;
}

/* Counts that depend on timing (the source's stream) print as ">0". */
#define BULK (STATE == ST_FINWAIT2)
#define TV(e) (BULK ? TP(e) : T(e))

static void
group_io(int fd)
{
    char buf[64];
    struct sockaddr_in6 a;
    socklen_t al = sizeof(a);
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    struct iovec wv[2] = {{"a", 1}, {"b", 1}};
    struct msghdr wm = {.msg_iov = wv, .msg_iovlen = 2};
    socklen_t tl;
    long r;

    signal(SIGPIPE, SIG_IGN);
    r = TV(recv(fd, buf, 2, MSG_PEEK));
    if (r > 0 && !BULK)
        NOTE("peeked %s", tr_data(buf, (size_t)r));
    r = TV(recv(fd, buf, 2, 0));
    if (r > 0 && !BULK)
        NOTE("got %s", tr_data(buf, (size_t)r));
    TV(read(fd, buf, 1));
    TV(readv(fd, &iov, 1));
    r = TV(recvfrom(fd, buf, sizeof(buf), 0, SA(&a), &al));
    if (r >= 0)
        NOTE("recvfrom len %d", (int)al);
    r = TV(recvmsg(fd, &m, 0));
    if (r >= 0)
        NOTE("msg_namelen %d msg_flags %s", (int)m.msg_namelen,
             tr_msgflags(m.msg_flags));
    T(recv(fd, buf, 0, 0));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    st_settle(fd);
    T(write(fd, "y", 1));
    st_settle(fd);
    tl = t_addr(&a, S_PEER, D_ECHO);
    T(sendto(fd, "z", 1, 0, SA(&a), tl));
    st_settle(fd);
    T(sendmsg(fd, &wm, 0));
    st_settle(fd);
    T(writev(fd, wv, 2));
    st_settle(fd);
    T(send(fd, "", 0, 0));
    T(close(fd));
}

static void
group_shut(int fd)
{
    char buf[16];

    T(shutdown(fd, 3));
    T(shutdown(fd, -1));
    t_show(fd, "before");
    T(shutdown(fd, SHUT_RD));
    usleep(50000);
    t_show(fd, "after SHUT_RD");
    T(shutdown(fd, SHUT_WR));
    usleep(50000);
    t_show(fd, "after SHUT_WR");
    T(shutdown(fd, SHUT_RDWR));
    usleep(50000);
    t_show(fd, "after SHUT_RDWR");
    TV(recv(fd, buf, sizeof(buf), 0));
    T(send(fd, "x", 1, MSG_NOSIGNAL));
    T(close(fd));
}

static void
group_probe(int fd)
{
    struct pollfd p = {.fd = fd, .events = 0};
    struct tcp_info ti;
    socklen_t tl = sizeof(ti);
    int v = -1;

    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
    t_ready(fd, POLLIN | POLLOUT | POLLRDHUP | POLLPRI,
            EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLPRI);
    T(poll(&p, 1, 0));
    NOTE("revents (events 0) %s", tr_pollev(p.revents));
    if (T(ioctl(fd, FIONREAD, &v)) == 0 && BULK)
        NOTE("FIONREAD %s", v > 0 ? ">0" : "0");
    else if (v >= 0)
        NOTE("FIONREAD = %d", v);
    if (T(ioctl(fd, SIOCOUTQ, &v)) == 0)
        NOTE("SIOCOUTQ = %d", v);
    d_name(fd, 1, "name");
    d_peer(fd, 1, "peer");
    d_geti(fd, SOL_SOCKET, SO_ACCEPTCONN, "SO_ACCEPTCONN");
    memset(&ti, 0, sizeof(ti));
    if (T(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl)) == 0)
        NOTE("tcpi_state %d", ti.tcpi_state);
    d_geti(fd, SOL_SOCKET, SO_ERROR, "SO_ERROR");
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
