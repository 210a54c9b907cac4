/*
 * The interface lock file (ifacelock.h): /run/accel/iface-<netns inode>-
 * <interface>.lock, flocked by the process that starts the port on the
 * interface (ifacelock.c) and by `accel-run --prepare` while it attaches
 * the program (tools/prepare.c). Only raw syscalls: the library's
 * interposed libc names must not be re-entered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ifacelock.h"

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
rt__iface_lock_try(const char *iface, int *fd, char *owner, size_t on,
                   char *path, size_t pn)
{
    char buf[32];
    long f, n;
    int len;

    *fd = -1;
    f = open_lock(iface, path, pn);
    if (f < 0)
        return -errno;
    if (syscall(SYS_flock, (int)f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;

        n = syscall(SYS_pread64, (int)f, buf, sizeof(buf) - 1, 0L);
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        syscall(SYS_close, (int)f);
        if (e != EWOULDBLOCK)
            return -e;
        snprintf(owner, on, "%s", buf[0] ? buf : "?");
        return -EBUSY;
    }
    len = snprintf(buf, sizeof(buf), "%ld\n", (long)syscall(SYS_getpid));
    syscall(SYS_ftruncate, (int)f, 0L);
    syscall(SYS_pwrite64, (int)f, buf, (size_t)len, 0L);
    *fd = (int)f;
    return 0;
}
