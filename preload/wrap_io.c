/*
 * Interposed data calls. Every receive form builds a msghdr and goes to
 * pl_sock_recvmsg(), every send form to pl_sock_sendmsg() (sock_io.c);
 * sendmmsg loops over those, sendfile reads the file and sends. recvmsg
 * and recvmmsg, which need none of this, are generated (wrap_gen.c).
 * A UDP socket still UNDECIDED is decided by its first sendto/sendmsg with
 * a destination. SIGPIPE is raised for EPIPE (unless MSG_NOSIGNAL) after
 * the thread left the library, so the handler runs as application code.
 */
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "libc.h"
#include "wrap.h"

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

#ifndef UIO_MAXIOV
#define UIO_MAXIOV 1024
#endif

static bool
iov_empty(const struct iovec *iov, int cnt)
{
    for (int i = 0; i < cnt; i++)
        if (iov[i].iov_len != 0)
            return false;
    return true;
}

/* Leave the library, raising SIGPIPE first when asked. */
static ssize_t
exit_send(struct pl_ctx *ctx, ssize_t rc, bool sigpipe)
{
    if (sigpipe) {
        base_in_lib = 0;
        raise(SIGPIPE);
    }
    return pl_exit(ctx, rc);
}

/* Decide an UNDECIDED UDP socket on its first send with a destination;
 * NULL (reference dropped) when the call must pass through. */
static struct pl_sock *
sock_for_send(int fd, const struct sockaddr *to, socklen_t tolen)
{
    struct pl_sock *s = pl_wrap_sock(fd, PL_ST_UNDECIDED | PL_ST_ACCEL);
    int saved, st;

    if (s == NULL || pl_sock_state(s) == PL_SOCK_ACCEL)
        return s;
    saved = errno;
    base_in_lib = 1;
    st = pl_sock_decide_send(s, fd, to, tolen);
    base_in_lib = 0;
    errno = saved;
    if (st == PL_SOCK_ACCEL)
        return s;
    pl_wrap_put(&s->hdr);
    return NULL;
}

ssize_t
read(int fd, void *buf, size_t n)
{
    struct iovec iov = {.iov_base = buf, .iov_len = n};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    struct pl_ctx ctx;
    struct pl_sock *s;
    ssize_t rc;

    if (!pl_active())
        return libc_read(fd, buf, n);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_read(fd, buf, n);
    pl_enter(&ctx);
    /* sock_read_iter: an empty read returns 0 at once (SYS5 behaviour);
     * recv() with length 0 does go to the protocol. */
    rc = n == 0 ? 0 : pl_sock_recvmsg(s, fd, &msg, 0);
    pl_wrap_put(&s->hdr);
    return pl_exit(&ctx, rc);
}

ssize_t
__read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        return libc___read_chk(fd, buf, n, buflen); /* aborts */
    return read(fd, buf, n);
}

ssize_t
readv(int fd, const struct iovec *iov, int cnt)
{
    struct msghdr msg = {.msg_iov = (struct iovec *)iov,
                         .msg_iovlen = cnt > 0 ? (size_t)cnt : 0};
    struct pl_ctx ctx;
    struct pl_sock *s;
    ssize_t rc;

    if (!pl_active())
        return libc_readv(fd, iov, cnt);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_readv(fd, iov, cnt);
    pl_enter(&ctx);
    if (cnt < 0 || cnt > UIO_MAXIOV)
        rc = -EINVAL;
    else if (iov_empty(iov, cnt))
        rc = 0; /* as read() of nothing */
    else
        rc = pl_sock_recvmsg(s, fd, &msg, 0);
    pl_wrap_put(&s->hdr);
    return pl_exit(&ctx, rc);
}

ssize_t
recv(int fd, void *buf, size_t n, int flags)
{
    struct iovec iov = {.iov_base = buf, .iov_len = n};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    struct pl_ctx ctx;
    struct pl_sock *s;
    ssize_t rc;

    if (!pl_active())
        return libc_recv(fd, buf, n, flags);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_recv(fd, buf, n, flags);
    pl_enter(&ctx);
    rc = pl_sock_recvmsg(s, fd, &msg, flags);
    pl_wrap_put(&s->hdr);
    return pl_exit(&ctx, rc);
}

ssize_t
__recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    if (n > buflen)
        return libc___recv_chk(fd, buf, n, buflen, flags); /* aborts */
    return recv(fd, buf, n, flags);
}

ssize_t
recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
         socklen_t *alen)
{
    struct iovec iov = {.iov_base = buf, .iov_len = n};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    struct pl_ctx ctx;
    struct pl_sock *s;
    ssize_t rc;

    if (!pl_active())
        return libc_recvfrom(fd, buf, n, flags, addr, alen);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_recvfrom(fd, buf, n, flags, addr, alen);
    pl_enter(&ctx);
    if (addr != NULL && alen != NULL && (int)*alen >= 0) {
        msg.msg_name = addr;
        msg.msg_namelen = *alen;
    }
    rc = pl_sock_recvmsg(s, fd, &msg, flags);
    /* __sys_recvfrom: the data is taken, then move_addr_to_user fails
     * on a missing or negative length. */
    if (rc >= 0 && addr != NULL) {
        if (alen == NULL)
            rc = -EFAULT;
        else if ((int)*alen < 0)
            rc = -EINVAL;
        else
            *alen = msg.msg_namelen;
    }
    pl_wrap_put(&s->hdr);
    return pl_exit(&ctx, rc);
}

ssize_t
__recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
               struct sockaddr *addr, socklen_t *alen)
{
    if (n > buflen) /* aborts */
        return libc___recvfrom_chk(fd, buf, n, buflen, flags, addr, alen);
    return recvfrom(fd, buf, n, flags, addr, alen);
}

ssize_t
write(int fd, const void *buf, size_t n)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = n};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    struct pl_ctx ctx;
    struct pl_sock *s;
    bool sigpipe = false;
    ssize_t rc;

    if (!pl_active())
        return libc_write(fd, buf, n);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_write(fd, buf, n);
    pl_enter(&ctx);
    rc = pl_sock_sendmsg(s, fd, &msg, 0, &sigpipe);
    pl_wrap_put(&s->hdr);
    return exit_send(&ctx, rc, sigpipe);
}

ssize_t
writev(int fd, const struct iovec *iov, int cnt)
{
    struct msghdr msg = {.msg_iov = (struct iovec *)iov,
                         .msg_iovlen = cnt > 0 ? (size_t)cnt : 0};
    struct pl_ctx ctx;
    struct pl_sock *s;
    bool sigpipe = false;
    ssize_t rc;

    if (!pl_active())
        return libc_writev(fd, iov, cnt);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_writev(fd, iov, cnt);
    pl_enter(&ctx);
    if (cnt < 0 || cnt > UIO_MAXIOV)
        rc = -EINVAL;
    else
        rc = pl_sock_sendmsg(s, fd, &msg, 0, &sigpipe);
    pl_wrap_put(&s->hdr);
    return exit_send(&ctx, rc, sigpipe);
}

ssize_t
send(int fd, const void *buf, size_t n, int flags)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = n};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    struct pl_ctx ctx;
    struct pl_sock *s;
    bool sigpipe = false;
    ssize_t rc;

    if (!pl_active())
        return libc_send(fd, buf, n, flags);
    s = pl_wrap_sock(fd, PL_ST_ACCEL);
    if (s == NULL)
        return libc_send(fd, buf, n, flags);
    pl_enter(&ctx);
    rc = pl_sock_sendmsg(s, fd, &msg, flags, &sigpipe);
    pl_wrap_put(&s->hdr);
    return exit_send(&ctx, rc, sigpipe);
}

ssize_t
sendto(int fd, const void *buf, size_t n, int flags,
       const struct sockaddr *addr, socklen_t alen)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = n};
    struct msghdr msg = {.msg_name = (void *)addr,
                         .msg_namelen = addr != NULL ? alen : 0,
                         .msg_iov = &iov,
                         .msg_iovlen = 1};
    struct pl_ctx ctx;
    struct pl_sock *s;
    bool sigpipe = false;
    ssize_t rc;

    if (!pl_active())
        return libc_sendto(fd, buf, n, flags, addr, alen);
    s = sock_for_send(fd, addr, alen);
    if (s == NULL)
        return libc_sendto(fd, buf, n, flags, addr, alen);
    pl_enter(&ctx);
    rc = pl_sock_sendmsg(s, fd, &msg, flags, &sigpipe);
    pl_wrap_put(&s->hdr);
    return exit_send(&ctx, rc, sigpipe);
}

ssize_t
sendmsg(int fd, const struct msghdr *msg, int flags)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    bool sigpipe = false;
    ssize_t rc;

    if (!pl_active() || msg == NULL)
        return libc_sendmsg(fd, msg, flags);
    s = sock_for_send(fd, msg->msg_name, msg->msg_namelen);
    if (s == NULL)
        return libc_sendmsg(fd, msg, flags);
    pl_enter(&ctx);
    rc = pl_sock_sendmsg(s, fd, msg, flags, &sigpipe);
    pl_wrap_put(&s->hdr);
    return exit_send(&ctx, rc, sigpipe);
}

int
sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    bool sigpipe = false;
    int rc;

    if (!pl_active() || vec == NULL || vlen == 0)
        return libc_sendmmsg(fd, vec, vlen, flags);
    s = sock_for_send(fd, vec[0].msg_hdr.msg_name, vec[0].msg_hdr.msg_namelen);
    if (s == NULL)
        return libc_sendmmsg(fd, vec, vlen, flags);
    pl_enter(&ctx);
    rc = pl_sock_sendmmsg(s, fd, vec, vlen, flags, &sigpipe);
    pl_wrap_put(&s->hdr);
    return (int)exit_send(&ctx, rc, sigpipe);
}

ssize_t
sendfile(int out, int in, off_t *off, size_t n)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    bool sigpipe = false;
    ssize_t rc;

    if (!pl_active())
        return libc_sendfile(out, in, off, n);
    s = pl_wrap_sock(out, PL_ST_ACCEL);
    if (s == NULL)
        return libc_sendfile(out, in, off, n);
    pl_enter(&ctx);
    rc = pl_sock_sendfile(s, out, in, off, n, &sigpipe);
    pl_wrap_put(&s->hdr);
    return exit_send(&ctx, rc, sigpipe);
}

ssize_t
sendfile64(int out, int in, off64_t *off, size_t n)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    bool sigpipe = false;
    off_t o;
    ssize_t rc;

    if (!pl_active())
        return libc_sendfile64(out, in, off, n);
    s = pl_wrap_sock(out, PL_ST_ACCEL);
    if (s == NULL)
        return libc_sendfile64(out, in, off, n);
    pl_enter(&ctx);
    o = off != NULL ? (off_t)*off : 0;
    rc = pl_sock_sendfile(s, out, in, off != NULL ? &o : NULL, n, &sigpipe);
    if (off != NULL)
        *off = (off64_t)o;
    pl_wrap_put(&s->hdr);
    return exit_send(&ctx, rc, sigpipe);
}
