/*
 * The data path of an accelerated socket. Every receive (read, recv,
 * recvfrom, readv, recvmsg, recvmmsg) reduces to pl_sock_recvmsg() and
 * every send (write, send, sendto, writev, sendmsg, sendmmsg, sendfile) to
 * pl_sock_sendmsg(). Both run the stack's non-blocking operation and build
 * blocking behaviour on top: MSG_WAITALL and blocking TCP sends loop over
 * the remaining iovec, SO_RCVTIMEO/SO_SNDTIMEO bound the waits (EAGAIN, or
 * the partial count, at expiry, as Linux), EPIPE asks the wrapper to raise
 * SIGPIPE unless MSG_NOSIGNAL.
 *
 * UDP sockets bound to INADDR_ANY also receive on their kernel socket
 * (datagrams from 127.0.0.1), and datagrams sent to a destination the
 * stack cannot reach (loopback) go out through the kernel socket, bound to
 * the same port first so replies come back to it.
 */
#include "sock.h"

#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "libc.h"
#include "pl.h"
#include "route.h"
#include "rt.h"
#include "stk.h"

#ifndef UIO_MAXIOV
#define UIO_MAXIOV 1024
#endif

#define SENDFILE_CHUNK 65536

struct msg_arg {
    struct msghdr *msg;
    int flags;
};

static ssize_t
recv_op(struct stk_sock *stk, void *arg)
{
    struct msg_arg *x = arg;

    return stk_sock_recvmsg(stk, x->msg, x->flags);
}

static ssize_t
send_op(struct stk_sock *stk, void *arg)
{
    struct msg_arg *x = arg;

    return stk_sock_sendmsg(stk, x->msg, x->flags);
}

static size_t
iov_total(const struct iovec *iov, size_t n)
{
    size_t t = 0;

    for (size_t i = 0; i < n; i++)
        t += iov[i].iov_len;
    return t;
}

/* Drop the first n bytes of m's (private, writable) iovec array. */
static void
iov_advance(struct msghdr *m, size_t n)
{
    while (m->msg_iovlen > 0 && n >= m->msg_iov->iov_len) {
        n -= m->msg_iov->iov_len;
        m->msg_iov++;
        m->msg_iovlen--;
    }
    if (m->msg_iovlen > 0) {
        m->msg_iov->iov_base = (char *)m->msg_iov->iov_base + n;
        m->msg_iov->iov_len -= n;
    }
}

ssize_t
pl_sock_recvmsg(struct pl_sock *s, int fd, struct msghdr *msg, int flags)
{
    size_t n = msg->msg_iovlen;
    struct iovec local[n > 0 && n <= UIO_MAXIOV ? n : 1];
    struct msghdr m = *msg;
    struct msg_arg x = {.msg = &m,
                        .flags = flags & ~(MSG_WAITALL | MSG_DONTWAIT)};
    struct sockaddr_in6 n6;
    bool nb, waitall;
    int64_t deadline = -2;
    unsigned sig0 = 0;
    size_t want, total = 0;
    ssize_t rc;
    int w;
    bool fault;

    if (!pl_sock_live(s))
        return -EBADF;
    if (n > UIO_MAXIOV)
        return -EMSGSIZE;
    /* The iovec array first (Linux copies it in before the protocol
     * runs), then the error queue (none: the stack keeps no IP_RECVERR
     * queue), then the buffers: TCP fails at once, nothing consumed (a
     * NULL buffer is fine with MSG_TRUNC, which copies nothing); a
     * datagram is received into nothing and dropped, then EFAULT
     * (udp_recvmsg). */
    if (n > 0 && msg->msg_iov == NULL)
        return -EFAULT;
    if (flags & MSG_ERRQUEUE)
        return -EAGAIN;
    fault = !(s->type == SOCK_STREAM && (flags & MSG_TRUNC)) &&
            pl_uaddr_bad(msg->msg_iov, n);
    if (fault && s->type == SOCK_STREAM)
        return -EFAULT;
    if (fault) {
        m.msg_iov = NULL;
        m.msg_iovlen = 0;
    }
    nb = atomic_load(&s->nonblock) || (flags & MSG_DONTWAIT);
    if (!nb) /* a call that may wait: handlers that run from here on count */
        sig0 = rt_sig_count;
    else /* the stack tells "would wait" from "shut down" (UDP) */
        x.flags |= MSG_DONTWAIT;
    waitall = (flags & MSG_WAITALL) && s->type == SOCK_STREAM && !nb &&
              !(flags & MSG_PEEK);
    want = iov_total(msg->msg_iov, n);
    if (waitall && n > 0) {
        memcpy(local, msg->msg_iov, n * sizeof(local[0]));
        m.msg_iov = local;
    }
    if (pl_sock_af(s) != s->kfamily && m.msg_name != NULL) {
        m.msg_name = &n6; /* after IPV6_ADDRFORM: named as AF_INET */
        m.msg_namelen = sizeof(n6);
    }
    for (;;) {
        rc = pl_sock_run(s, recv_op, &x);
        if (rc == PL_SOCK_MOVED && pl_sock_state(s) == PL_SOCK_KERNEL)
            return total ? (ssize_t)total
                         : pl_sysret(
                               libc_recvmsg(pl_sock_kfd(s, fd), msg, flags));
        if (msg->msg_name == NULL)
            ; /* Linux writes no length back without a name buffer */
        else if (m.msg_name != &n6)
            msg->msg_namelen = m.msg_namelen;
        else if (rc >= 0 && m.msg_namelen > 0)
            pl_sock_name_v4(&n6, m.msg_namelen, msg->msg_name,
                            &msg->msg_namelen);
        else if (rc >= 0) /* none (TCP) */
            msg->msg_namelen = 0;
        if (rc >= 0 && fault)
            return -EFAULT;
        if (rc >= 0) /* the bytes of control messages the stack wrote */
            msg->msg_controllen = m.msg_controllen;
        msg->msg_flags = m.msg_flags;
        if (rc == -EAGAIN && s->type == SOCK_DGRAM && atomic_load(&s->kside)) {
            ssize_t k =
                libc_recvmsg(pl_sock_kfd(s, fd), msg, x.flags | MSG_DONTWAIT);

            if (k >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                return pl_sysret(k);
        }
        if (rc > 0 && waitall) {
            total += (size_t)rc;
            if (total >= want)
                return (ssize_t)total;
            iov_advance(&m, (size_t)rc);
            continue;
        }
        if (rc >= 0)
            return (ssize_t)total + rc;
        /* Nothing to read: the thread will wait or poll for the answer to
         * what it sent, so what it deferred (ACCEL_TX_DEFER) goes now. */
        if (rc == -EAGAIN && nb)
            rt_flush();
        if (rc != -EAGAIN || nb)
            return total ? (ssize_t)total : rc;
        if (deadline == -2)
            deadline = pl_sock_deadline(s, false);
        w = pl_sock_wait(s, fd, EPOLLIN, deadline, RT_WAIT_RECV, &sig0);
        if (w == -EINTR && total == 0 && pl_sock_restart(s, false))
            continue;
        if (w < 0)
            return total ? (ssize_t)total : w;
    }
}

/* A datagram for a destination only the kernel reaches (loopback, or
 * native IPv6 from a dual-stack socket): sent from the kernel socket,
 * bound to the stack socket's port first. */
static ssize_t
send_kernel_udp(struct pl_sock *s, int fd, const struct msghdr *msg, int flags)
{
    pthread_mutex_lock(&s->mu);
    if (!atomic_load(&s->kside))
        (void)pl_sock_kbind_any(s, fd);
    pthread_mutex_unlock(&s->mu);
    return pl_sysret(libc_sendmsg(pl_sock_kfd(s, fd), msg, flags));
}

ssize_t
pl_sock_sendmsg(struct pl_sock *s, int fd, const struct msghdr *msg, int flags,
                bool *sigpipe)
{
    size_t n = msg->msg_iovlen;
    struct iovec local[n > 0 && n <= UIO_MAXIOV ? n : 1];
    struct msghdr m = *msg;
    struct msg_arg x = {.msg = &m, .flags = flags & ~MSG_DONTWAIT};
    bool nb, stream = s->type == SOCK_STREAM, to_v6 = false;
    struct sockaddr_in v4;
    const struct sockaddr *to = msg->msg_name;
    socklen_t tolen = msg->msg_namelen;
    int64_t deadline = -2;
    unsigned sig0 = 0;
    size_t want, total = 0;
    ssize_t rc;
    int w;

    if (!pl_sock_live(s))
        return -EBADF;
    if (n > UIO_MAXIOV)
        return -EMSGSIZE;
    if (pl_uaddr_bad(msg->msg_iov, n)) /* nothing is sent */
        return -EFAULT;
    if (!stream && to != NULL) {
        enum pl_in6 k = pl_sock_view(s, fd, false, to, tolen, &v4);
        enum pl_route r = PL_ROUTE_ACCEL;

        to_v6 = k == PL_IN6_NATIVE;
        if (k == PL_IN6_BAD) /* Linux's errno; nothing is sent */
            return pl_sysret(libc_sendmsg(pl_sock_kfd(s, fd), msg, flags));
        if (k == PL_IN6_NATIVE)
            r = pl_sock_route_connect6(s->type, -1, to, tolen, NULL);
        else if (k == PL_IN6_V4 || to->sa_family == AF_INET)
            r = pl_sock_route_connect(s->type, -1,
                                      pl_sock_route_addr(k, to, &tolen, &v4),
                                      tolen, NULL);
        if (r == PL_ROUTE_KERNEL)
            return send_kernel_udp(s, fd, msg, flags);
    }
    /* Shared address: a datagram socket's first send takes its port from
     * the kernel first (kside marks it done: one load per send after). */
    if (!stream && pl_shared_addr() && !atomic_load(&s->kside)) {
        pthread_mutex_lock(&s->mu);
        rc = pl_sock_kreserve(s, fd, to_v6);
        pthread_mutex_unlock(&s->mu);
        if (rc < 0)
            return rc;
    }
    nb = atomic_load(&s->nonblock) || (flags & MSG_DONTWAIT);
    if (!nb) /* a call that may wait: handlers that run from here on count */
        sig0 = rt_sig_count;
    want = iov_total(msg->msg_iov, n);
    if (stream && !nb && n > 0) {
        memcpy(local, msg->msg_iov, n * sizeof(local[0]));
        m.msg_iov = local;
    }
    for (;;) {
        rc = pl_sock_run(s, send_op, &x);
        if (rc == PL_SOCK_MOVED && pl_sock_state(s) == PL_SOCK_KERNEL)
            return total ? (ssize_t)total
                         : pl_sysret(
                               libc_sendmsg(pl_sock_kfd(s, fd), msg, flags));
        if (rc >= 0 && !stream)
            pl_sock_serve(s, RT_SERVE_ON); /* autobound: replies come here */
        if (rc >= 0) {
            total += (size_t)rc;
            if (!stream || nb || total >= want || rc == 0)
                return (ssize_t)total;
            iov_advance(&m, (size_t)rc);
            continue;
        }
        if (total > 0 && rc != -EAGAIN)
            return (ssize_t)total;
        if (rc == -EPIPE && !(flags & MSG_NOSIGNAL))
            *sigpipe = true;
        if (rc != -EAGAIN || nb)
            return total ? (ssize_t)total : rc;
        if (deadline == -2)
            deadline = pl_sock_deadline(s, true);
        w = pl_sock_wait(s, fd, EPOLLOUT, deadline, RT_WAIT_SEND, &sig0);
        if (w == -EINTR && total == 0 && pl_sock_restart(s, true))
            continue;
        if (w < 0)
            return total ? (ssize_t)total : w;
    }
}

int
pl_sock_recvmmsg(struct pl_sock *s, int fd, struct mmsghdr *vec,
                 unsigned int vlen, int flags, struct timespec *timeout)
{
    int64_t deadline = -1;
    unsigned int i;
    ssize_t rc;

    if (timeout != NULL) {
        if (timeout->tv_sec < 0 || timeout->tv_nsec < 0 ||
            timeout->tv_nsec >= 1000000000)
            return -EINVAL;
        deadline = pl_deadline((int64_t)timeout->tv_sec * 1000000000 +
                               timeout->tv_nsec);
    }
    if (vlen > UIO_MAXIOV)
        vlen = UIO_MAXIOV;
    for (i = 0; i < vlen; i++) {
        int f = flags & ~MSG_WAITFORONE;

        if (i > 0 && (flags & MSG_WAITFORONE))
            f |= MSG_DONTWAIT;
        rc = pl_sock_recvmsg(s, fd, &vec[i].msg_hdr, f);
        if (rc < 0)
            return i > 0 ? (int)i : (int)rc;
        vec[i].msg_len = (unsigned int)rc;
        /* Linux checks the timeout only after each datagram. */
        if (deadline >= 0 && pl_ms_left(deadline) == 0) {
            i++;
            break;
        }
    }
    return (int)i;
}

int
pl_sock_sendmmsg(struct pl_sock *s, int fd, struct mmsghdr *vec,
                 unsigned int vlen, int flags, bool *sigpipe)
{
    unsigned int i;
    ssize_t rc;

    if (vlen > UIO_MAXIOV)
        vlen = UIO_MAXIOV;
    for (i = 0; i < vlen; i++) {
        rc = pl_sock_sendmsg(s, fd, &vec[i].msg_hdr, flags, sigpipe);
        if (rc < 0) {
            if (i > 0)
                *sigpipe = false;
            return i > 0 ? (int)i : (int)rc;
        }
        vec[i].msg_len = (unsigned int)rc;
    }
    return (int)i;
}

ssize_t
pl_sock_sendfile(struct pl_sock *s, int out, int in, off_t *off, size_t n,
                 bool *sigpipe)
{
    struct iovec iov;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    size_t total = 0;
    ssize_t r, sent;
    char *buf;

    if (off != NULL && *off < 0)
        return -EINVAL;
    if (n == 0)
        return 0;
    buf = malloc(SENDFILE_CHUNK);
    if (buf == NULL)
        return -ENOMEM;
    while (total < n) {
        size_t chunk = n - total < SENDFILE_CHUNK ? n - total : SENDFILE_CHUNK;

        if (off != NULL)
            r = pread(in, buf, chunk, *off + (off_t)total);
        else
            r = libc_read(in, buf, chunk);
        if (r <= 0) {
            if (r < 0 && total == 0)
                total = (size_t)-errno;
            break;
        }
        iov.iov_base = buf;
        iov.iov_len = (size_t)r;
        sent = pl_sock_sendmsg(s, out, &m, 0, sigpipe);
        if (sent < 0) {
            if (off == NULL)
                lseek(in, -r, SEEK_CUR);
            if (total == 0)
                total = (size_t)sent;
            else
                *sigpipe = false;
            break;
        }
        if (off == NULL && sent < r)
            lseek(in, -(r - sent), SEEK_CUR);
        total += (size_t)sent;
        if (sent < r)
            break;
    }
    free(buf);
    if ((ssize_t)total < 0)
        return (ssize_t)total;
    if (off != NULL)
        *off += (off_t)total;
    return (ssize_t)total;
}

int
pl_sock_decide_send(struct pl_sock *s, int fd, const struct sockaddr *a,
                    socklen_t len)
{
    struct sockaddr_in v4;
    enum pl_in6 k;

    if (a == NULL || s->type != SOCK_DGRAM)
        return pl_sock_state(s);
    pthread_mutex_lock(&s->mu);
    if (pl_sock_state(s) == PL_SOCK_UNDECIDED) {
        k = pl_sock_view(s, fd, false, a, len, &v4);
        (void)pl_sock_decide_remote(s, fd, k, a, len, &v4, "sendto");
    }
    pthread_mutex_unlock(&s->mu);
    return pl_sock_state(s);
}
