/*
 * Where the runtime's own file descriptors land. Starting DPDK opens a few
 * dozen fds (hugepage segments, the PMD's sockets, eventfds, the EAL
 * interrupt thread's epoll). Opened in the low range, they would shift every
 * fd the application gets afterwards, and programs that size tables by fd
 * number (wrk's event loop, select() users) break: under Linux alone the
 * application's next socket would have been fd 4, not fd 150.
 *
 * So while the data path starts, the free low slots are filled with
 * placeholders (dups of one /dev/null fd) up to a base near the top of the
 * range the application is likely to use; DPDK's fds land above the base;
 * then the placeholders are closed and the low slots are the application's
 * again. The same idea as Onload's EF_ONLOAD_FD_BASE. Single fds the runtime
 * opens later are moved above the base with rt__fd_move_high().
 *
 * Only raw syscalls: the interposed libc names must not be re-entered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_int.h"

/* Never reserve more than this many slots (cost: one dup each). */
#define FDPLACE_MAX_RESERVE 4096
/* Room left between the base and the soft limit for the runtime's fds. */
#define FDPLACE_HEADROOM 200

static int *reserved;
static int nreserved;

int
rt__fd_base(void)
{
    struct rlimit rl;
    long soft;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        soft = 1024;
    else
        soft = (long)rl.rlim_cur;
    /* Stay under FD_SETSIZE so select() users keep working either way. */
    if (soft > 1024)
        soft = 1024;
    if (soft <= 2 * FDPLACE_HEADROOM)
        return (int)(soft / 2);
    return (int)(soft - FDPLACE_HEADROOM);
}

void
rt__fd_reserve_low(void)
{
    long null_fd, fd;
    int base = rt__fd_base();

    null_fd = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0)
        return;
    reserved = calloc(FDPLACE_MAX_RESERVE, sizeof(*reserved));
    if (reserved == NULL) {
        syscall(SYS_close, (int)null_fd);
        return;
    }
    reserved[nreserved++] = (int)null_fd;
    while (nreserved < FDPLACE_MAX_RESERVE) {
        fd = syscall(SYS_fcntl, (int)null_fd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            break;
        if (fd >= base) { /* the low range is full: done */
            syscall(SYS_close, (int)fd);
            break;
        }
        reserved[nreserved++] = (int)fd;
    }
}

bool
rt__fd_reserved(int fd)
{
    int lo = 0, hi = nreserved - 1;

    while (lo <= hi) { /* reserved[] is ascending: dup takes the lowest */
        int mid = lo + (hi - lo) / 2;

        if (reserved[mid] == fd)
            return true;
        if (reserved[mid] < fd)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return false;
}

void
rt__fd_release_low(void)
{
    for (int i = 0; i < nreserved; i++)
        syscall(SYS_close, reserved[i]);
    free(reserved);
    reserved = NULL;
    nreserved = 0;
}

int
rt_fd_dup_high(int fd)
{
    long hi = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, rt__fd_base());

    return hi < 0 ? -errno : (int)hi;
}

int
rt__fd_move_high(int fd)
{
    long hi;

    if (fd < 0 || fd >= rt__fd_base())
        return fd;
    hi = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, rt__fd_base());
    if (hi < 0)
        return fd;
    syscall(SYS_close, fd);
    return (int)hi;
}
