/*
 * Interposed fd operations: close, close_range, dup, dup2, dup3, fcntl,
 * fcntl64 and ioctl. Duplicating a tracked fd duplicates the kernel fd with
 * libc and points the new number at the same object (one more reference),
 * so both numbers share one open socket as in Linux; dup2/dup3 onto a
 * tracked fd drops that entry first (Linux closes the target). close drops
 * the entry before the kernel close, so the number cannot be reused under
 * a stale entry; the object (and its stack socket) goes with the last
 * reference. fcntl F_GETFL/F_SETFL and ioctl FIONBIO keep our O_NONBLOCK,
 * FIONREAD/SIOCOUTQ/SIOCOUTQNSD come from the stack; everything else is the
 * kernel's.
 * Before a dup or a request that writes the open file's kernel state, an
 * accepted socket sharing the template gets a file of its own (kfile.h).
 */
#include <fcntl.h>
#include <linux/sockios.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "kfile.h"
#include "libc.h"
#include "wrap.h"

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

int
close(int fd)
{
    struct pl_ctx ctx;
    struct pl_fd *f;
    int rc;

    if (!pl_active() || !pl_fdt_peek(fd))
        return libc_close(fd);
    pl_enter(&ctx);
    f = pl_fdt_remove(fd);
    rc = (int)pl_sysret(libc_close(fd));
    pl_fd_put(f);
    return (int)pl_exit(&ctx, rc);
}

struct range {
    unsigned int first, last;
    int *fds;
    size_t n, cap;
};

static void
collect_range(int fd, struct pl_fd *f, void *arg)
{
    struct range *r = arg;
    int *more;

    (void)f;
    if ((unsigned int)fd < r->first || (unsigned int)fd > r->last)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        more = realloc(r->fds, r->cap * sizeof(*more));
        if (more == NULL)
            return;
        r->fds = more;
    }
    r->fds[r->n++] = fd;
}

int
close_range(unsigned int first, unsigned int last, int flags)
{
    struct range r = {.first = first, .last = last};
    struct pl_ctx ctx;
    int rc;

    if (!pl_active() || (flags & CLOSE_RANGE_CLOEXEC) || first > last)
        return libc_close_range(first, last, flags);
    pl_enter(&ctx);
    pl_fdt_foreach(collect_range, &r);
    for (size_t i = 0; i < r.n; i++)
        pl_fd_put(pl_fdt_remove(r.fds[i]));
    free(r.fds);
    rc = (int)pl_sysret(libc_close_range(first, last, flags));
    return (int)pl_exit(&ctx, rc);
}

/* Point nfd at the object behind fd (after a successful kernel dup). */
static void
dup_entry(int fd, int nfd)
{
    struct pl_fd *f = pl_fdt_get(fd);

    pl_fd_put(pl_fdt_exchange(nfd, f));
    pl_fd_put(f);
}

int
dup(int fd)
{
    struct pl_ctx ctx;
    int nfd;

    if (!pl_active() || !pl_fdt_peek(fd))
        return libc_dup(fd);
    pl_enter(&ctx);
    pl_kfile_own_fd(fd);
    nfd = libc_dup(fd);
    if (nfd < 0)
        return (int)pl_exit(&ctx, -errno);
    dup_entry(fd, nfd);
    return (int)pl_exit(&ctx, nfd);
}

int
dup2(int fd, int fd2)
{
    struct pl_ctx ctx;
    int rc;

    if (!pl_active() || (!pl_fdt_peek(fd) && !pl_fdt_peek(fd2)))
        return libc_dup2(fd, fd2);
    pl_enter(&ctx);
    if (fd != fd2)
        pl_kfile_own_fd(fd);
    rc = libc_dup2(fd, fd2);
    if (rc < 0)
        return (int)pl_exit(&ctx, -errno);
    if (fd != fd2)
        dup_entry(fd, fd2);
    return (int)pl_exit(&ctx, rc);
}

int
dup3(int fd, int fd2, int flags)
{
    struct pl_ctx ctx;
    int rc;

    if (!pl_active() || (!pl_fdt_peek(fd) && !pl_fdt_peek(fd2)))
        return libc_dup3(fd, fd2, flags);
    pl_enter(&ctx);
    if (fd != fd2)
        pl_kfile_own_fd(fd);
    rc = libc_dup3(fd, fd2, flags);
    if (rc < 0)
        return (int)pl_exit(&ctx, -errno);
    dup_entry(fd, fd2);
    return (int)pl_exit(&ctx, rc);
}

/* Whether the fcntl command writes state of the open file (not the fd's
 * own flags, not a query). */
static bool
fcntl_writes_file(int cmd)
{
    switch (cmd) {
    case F_GETFD:
    case F_SETFD:
    case F_GETOWN:
    case F_GETOWN_EX:
    case F_GETSIG:
    case F_GETLEASE:
    case F_GETLK:
    case F_OFD_GETLK:
    case F_GETPIPE_SZ:
    case F_GET_SEALS:
        return false;
    default:
        return true;
    }
}

/* fcntl and fcntl64 share this body; `real` is the libc function the
 * call passes through to. */
static int
do_fcntl(int fd, int cmd, unsigned long arg,
         int (*real)(int, int, unsigned long))
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    int rc;

    if (!pl_active() || !pl_fdt_peek(fd))
        return real(fd, cmd, arg);
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
        pl_enter(&ctx);
        pl_kfile_own_fd(fd);
        rc = real(fd, cmd, arg);
        if (rc < 0)
            return (int)pl_exit(&ctx, -errno);
        dup_entry(fd, rc);
        return (int)pl_exit(&ctx, rc);
    }
    if (cmd != F_GETFL && cmd != F_SETFL) {
        if (fcntl_writes_file(cmd)) {
            pl_enter(&ctx);
            pl_kfile_own_fd(fd);
            pl_leave(&ctx);
        }
        return real(fd, cmd, arg);
    }
    s = pl_wrap_sock(fd, PL_ST_UNDECIDED | PL_ST_ACCEL);
    if (s == NULL)
        return real(fd, cmd, arg);
    pl_enter(&ctx);
    rc = pl_sock_fcntl(s, fd, cmd, arg);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}

static int
real_fcntl(int fd, int cmd, unsigned long arg)
{
    return libc_fcntl(fd, cmd, arg);
}

static int
real_fcntl64(int fd, int cmd, unsigned long arg)
{
    return libc_fcntl64(fd, cmd, arg);
}

int
fcntl(int fd, int cmd, ...)
{
    unsigned long arg;
    va_list ap;

    va_start(ap, cmd);
    arg = va_arg(ap, unsigned long);
    va_end(ap);
    return do_fcntl(fd, cmd, arg, real_fcntl);
}

int
fcntl64(int fd, int cmd, ...)
{
    unsigned long arg;
    va_list ap;

    va_start(ap, cmd);
    arg = va_arg(ap, unsigned long);
    va_end(ap);
    return do_fcntl(fd, cmd, arg, real_fcntl64);
}

int
ioctl(int fd, unsigned long req, ...)
{
    struct pl_ctx ctx;
    struct pl_sock *s;
    unsigned long arg;
    unsigned int mask;
    va_list ap;
    int rc;

    va_start(ap, req);
    arg = va_arg(ap, unsigned long);
    va_end(ap);
    if (!pl_active() || (req != FIONBIO && req != FIONREAD && req != SIOCOUTQ &&
                         req != SIOCOUTQNSD)) {
        if (pl_active() && pl_fdt_peek(fd)) {
            pl_enter(&ctx);
            pl_kfile_own_fd(fd);
            pl_leave(&ctx);
        }
        return libc_ioctl(fd, req, arg);
    }
    mask = req == FIONBIO ? (PL_ST_UNDECIDED | PL_ST_ACCEL) : PL_ST_ACCEL;
    s = pl_wrap_sock(fd, mask);
    if (s == NULL)
        return libc_ioctl(fd, req, arg);
    pl_enter(&ctx);
    rc = pl_sock_ioctl(s, fd, req, arg);
    pl_wrap_put(&s->hdr);
    return (int)pl_exit(&ctx, rc);
}
