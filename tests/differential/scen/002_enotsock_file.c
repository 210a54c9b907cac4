/*
 * Behaviour: socket calls on a regular file descriptor fail with ENOTSOCK
 * (and fcntl/read/write/ioctl keep working on it), socket calls on a pipe
 * fail with ENOTSOCK too.
 */
#include "scen.h"

static void
notsock(int fd)
{
    char buf[8] = "x";
    struct sockaddr_in a = d_sin(D_PEER_IP, D_ECHO);
    socklen_t al = sizeof(a);
    int v = 1;
    socklen_t vl = sizeof(v);
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    struct mmsghdr mm = {.msg_hdr = m};

    T(send(fd, buf, 1, 0));
    T(recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    T(sendto(fd, buf, 1, 0, SA(&a), sizeof(a)));
    T(recvfrom(fd, buf, sizeof(buf), 0, SA(&a), &al));
    T(sendmsg(fd, &m, 0));
    T(recvmsg(fd, &m, 0));
    T(sendmmsg(fd, &mm, 1, 0));
    T(recvmmsg(fd, &mm, 1, 0, NULL));
    T(bind(fd, SA(&a), sizeof(a)));
    T(listen(fd, 1));
    T(accept(fd, NULL, NULL));
    T(accept4(fd, NULL, NULL, 0));
    T(connect(fd, SA(&a), sizeof(a)));
    T(shutdown(fd, SHUT_RDWR));
    T(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &vl));
    T(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v)));
    T(getsockname(fd, SA(&a), &al));
    T(getpeername(fd, SA(&a), &al));
}

int
main(void)
{
    char path[] = "/tmp/accel-diff-XXXXXX";
    char buf[16];
    int fd, p[2], v = 0;

    tr_init();
    fd = TF(mkstemp(path));
    T(unlink(path));
    T(write(fd, "file-data", 9));
    notsock(fd);
    T(lseek(fd, 0, SEEK_SET));
    T(read(fd, buf, sizeof(buf)));
    NOTE("data %s", tr_data(buf, 9));
    T(fcntl(fd, F_GETFL) & O_ACCMODE);
    T(ioctl(fd, FIONREAD, &v));
    NOTE("FIONREAD on file %d", v);
    T(close(fd));

    T(pipe(p));
    notsock(p[0]);
    T(close(p[0]));
    T(close(p[1]));
    return 0;
}
