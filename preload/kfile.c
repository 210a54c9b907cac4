/* Shared kernel file of accepted sockets (see kfile.h). */
#include "kfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>

#include "libc.h"
#include "log.h"
#include "rt.h"

/* One template per family (AF_INET, AF_INET6): atomic; among the
 * runtime's high fds. */
static int template_fds[2] = {-1, -1};

static int
template_get(int family)
{
    int *slot = &template_fds[family == AF_INET6];
    int t = __atomic_load_n(slot, __ATOMIC_ACQUIRE), k, expect = -1;

    if (t >= 0)
        return t;
    k = libc_socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (k < 0)
        return -errno;
    t = rt_fd_dup_high(k);
    libc_close(k);
    if (t < 0)
        return t;
    if (!__atomic_compare_exchange_n(slot, &expect, t, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        libc_close(t); /* another thread made one first */
        t = expect;
    }
    return t;
}

int
pl_kfile_shared(int family, int flags)
{
    int cmd = (flags & SOCK_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD;
    int t = template_get(family), nfd;

    if (t < 0)
        return t;
    nfd = libc_fcntl(t, cmd, 0);
    if (nfd >= 0)
        return nfd;
    if (errno != EBADF)
        return -errno;
    /* The application closed every fd (closefrom): make a new one. */
    __atomic_compare_exchange_n(&template_fds[family == AF_INET6], &t, -1,
                                false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    t = template_get(family);
    if (t < 0)
        return t;
    nfd = libc_fcntl(t, cmd, 0);
    return nfd >= 0 ? nfd : -errno;
}

void
pl_kfile_own(struct pl_sock *s, int fd)
{
    struct pl_fd *cur;
    int k, fdfl, rc = 0;

    if (!atomic_load(&s->kshared))
        return;
    pthread_mutex_lock(&s->mu);
    if (!atomic_load(&s->kshared))
        goto out;
    fdfl = libc_fcntl(fd, F_GETFD, 0);
    k = libc_socket(s->kfamily, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fdfl < 0 || k < 0) {
        rc = -errno;
        if (k >= 0)
            libc_close(k);
        goto out;
    }
    /* The number still names s (a racing close drops the entry first). */
    cur = pl_fdt_get(fd);
    if (cur == &s->hdr) {
        if (libc_dup3(k, fd, (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) == fd)
            atomic_store(&s->kshared, false);
        else
            rc = -errno;
    }
    pl_fd_put(cur);
    libc_close(k);
out:
    pthread_mutex_unlock(&s->mu);
    if (rc < 0)
        BASE_WARN("fd",
                  "fd %d: no kernel socket of its own (%s): the kernel-side "
                  "setting just made is shared by the process's accepted "
                  "sockets; raise the fd limit (ulimit -n) if it is EMFILE",
                  fd, strerror(-rc));
}

void
pl_kfile_own_fd(int fd)
{
    struct pl_fd *f = pl_fdt_get(fd);
    struct pl_sock *s = pl_sock_of(f);

    if (s != NULL)
        pl_kfile_own(s, fd);
    pl_fd_put(f);
}
