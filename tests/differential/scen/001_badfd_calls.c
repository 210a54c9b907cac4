/*
 * Behaviour: every socket-related call on a descriptor that is not open
 * (-1, and a high number that was never opened) fails with EBADF, and the
 * multiplexers report it (poll POLLNVAL, select EBADF, epoll_ctl EBADF).
 */
#include "scen.h"

static void
bad(int fd)
{
    char buf[8] = "x";
    struct sockaddr_in a = d_sin(D_PEER_IP, D_ECHO);
    socklen_t al = sizeof(a);
    int v = 1;
    socklen_t vl = sizeof(v);
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    struct mmsghdr mm = {.msg_hdr = m};
    off_t off = 0;

    NOTE("fd=%s", fd < 0 ? "-1" : "never-opened");
    T(close(fd));
    T(read(fd, buf, sizeof(buf)));
    T(write(fd, buf, 1));
    T(readv(fd, &iov, 1));
    T(writev(fd, &iov, 1));
    T(send(fd, buf, 1, 0));
    T(recv(fd, buf, sizeof(buf), 0));
    T(sendto(fd, buf, 1, 0, SA(&a), sizeof(a)));
    T(recvfrom(fd, buf, sizeof(buf), 0, SA(&a), &al));
    T(sendmsg(fd, &m, 0));
    T(recvmsg(fd, &m, 0));
    T(sendmmsg(fd, &mm, 1, 0));
    T(recvmmsg(fd, &mm, 1, 0, NULL));
    T(bind(fd, SA(&a), sizeof(a)));
    T(listen(fd, 1));
    T(accept(fd, NULL, NULL));
    T(accept4(fd, NULL, NULL, SOCK_NONBLOCK));
    T(connect(fd, SA(&a), sizeof(a)));
    T(shutdown(fd, SHUT_RDWR));
    T(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &vl));
    T(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v)));
    T(getsockname(fd, SA(&a), &al));
    T(getpeername(fd, SA(&a), &al));
    T(fcntl(fd, F_GETFL));
    T(fcntl(fd, F_SETFL, O_NONBLOCK));
    T(fcntl(fd, F_GETFD));
    T(ioctl(fd, FIONREAD, &v));
    T(ioctl(fd, FIONBIO, &v));
    T(dup(fd));
    T(dup2(fd, 200));
    T(dup3(fd, 200, O_CLOEXEC));
    T(sendfile(fd, 0, &off, 1));
}

int
main(void)
{
    struct pollfd p[2] = {{.fd = 900, .events = POLLIN},
                          {.fd = -1, .events = POLLIN}};
    fd_set rs;
    struct timeval tv = {0, 0};
    struct epoll_event ev = {.events = EPOLLIN};
    int ep, closed;

    tr_init();
    /* select() ignores bits beyond the fd table: use a closed low fd. */
    closed = TF(dup(1));
    T(close(closed));
    bad(-1);
    bad(900);
    T(poll(p, 2, 0));
    NOTE("revents %s %s", tr_pollev(p[0].revents), tr_pollev(p[1].revents));
    FD_ZERO(&rs);
    FD_SET(closed, &rs);
    T(select(closed + 1, &rs, NULL, NULL, &tv));
    ep = TF(epoll_create1(0));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, 900, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, -1, &ev));
    T(epoll_ctl(900, EPOLL_CTL_ADD, ep, &ev));
    T(epoll_wait(900, &ev, 1, 0));
    T(close(ep));
    return 0;
}
