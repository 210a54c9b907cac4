/*
 * One accel process per interface. af_xdp takes the interface's queue and
 * its XDP program; a second process probing the same interface would
 * fail over to af_packet and, on the way, detach the first one's program,
 * cutting it off. So the process that starts the port on ACCEL_IFACE holds
 * an exclusive flock on a file named after the network namespace and the
 * interface; its fork children share it (same open file), and anything
 * else (an exec'd child, an unrelated program) finds it taken: it joins
 * the owner's port (share_join.c) or, if it cannot, stays on the kernel
 * with one line saying why (start.c). The lock goes away with the last
 * process holding the open file, dead or alive.
 *
 * Only raw syscalls: the interposed libc names must not be re-entered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "rt_int.h"

#define LOCK_DIR "/run/accel"

static long
open_lock(const char *iface, char *path, size_t n)
{
    struct stat st;
    unsigned long ns = 0;
    long fd;

    if (syscall(SYS_stat, "/proc/self/ns/net", &st) == 0)
        ns = (unsigned long)st.st_ino;
    syscall(SYS_mkdir, LOCK_DIR, 0755);
    snprintf(path, n, LOCK_DIR "/iface-%lu-%s.lock", ns, iface);
    /* Readable and writable by the group only (accel-broker keeps
     * /run/accel 2770 root:accel, so the group is accel's): whatever the
     * umask, the file's owner sets 0660. A file another user made 0640
     * still takes a flock when opened read-only (its pid then stays the
     * previous owner's). */
    fd =
        syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT | O_CLOEXEC, 0660);
    if (fd >= 0) {
        struct stat ds, fs;

        syscall(SYS_fchmod, (int)fd, 0660);
        /* A file made before the directory was the group's keeps root's
         * group: the directory's, so the group's members can lock it
         * (root, or an owner in the group, may change it). */
        if (syscall(SYS_stat, LOCK_DIR, &ds) == 0 &&
            syscall(SYS_fstat, (int)fd, &fs) == 0 && fs.st_gid != ds.st_gid &&
            (ds.st_mode & S_ISGID) != 0)
            syscall(SYS_fchown, (int)fd, -1, ds.st_gid);
    } else if (errno == EACCES) {
        fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    }
    return fd;
}

int
rt__iface_lock(const char *iface, char *owner, size_t on)
{
    char path[256], buf[32];
    long fd, n;
    int len;

    fd = open_lock(iface, path, sizeof(path));
    if (fd < 0) {
        BASE_INFO("start",
                  "cannot open %s (%s); going on without the "
                  "one-process-per-interface check",
                  path, strerror(errno));
        return 0;
    }
    if (syscall(SYS_flock, (int)fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        n = syscall(SYS_pread64, (int)fd, buf, sizeof(buf) - 1, 0L);
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        syscall(SYS_close, (int)fd);
        if (e != EWOULDBLOCK)
            return 0;
        snprintf(owner, on, "%s", buf[0] ? buf : "?");
        return -EBUSY;
    }
    len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    syscall(SYS_ftruncate, (int)fd, 0L);
    syscall(SYS_pwrite64, (int)fd, buf, (size_t)len, 0L);
    (void)rt__fd_move_high((int)fd); /* held for the process's life */
    return 0;
}
