/*
 * accel-broker: registering a client's umem (AB_UMEM_REG). The kernel
 * charges the pages an AF_XDP umem pins to the registering process's
 * RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK; a service's default 8 MB is
 * far below the port's pool, and raising its limit needs
 * CAP_SYS_RESOURCE. So the broker registers it: it maps the very pages
 * the client's umem is made of and registers them on the client's XSK.
 * The pages are found from the client's address: /proc/PID/maps gives
 * the file and offset, and /proc/PID/map_files opens exactly the file the
 * client maps (no path to race with). Only a hugetlbfs file owned by the
 * client's user is accepted (the EAL's hugepage files, 0600): nothing the
 * client could not write itself. After the registration the kernel holds
 * the pages; the broker's mapping goes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_xdp.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "umem.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

struct span {
    uint64_t start, end, off, ino;
};

/* The file mapping that covers [addr, addr + len) in pid: its first
 * entry in *first (later entries must continue it). */
static int
find_span(pid_t pid, uint64_t addr, uint64_t len, struct span *first)
{
    char path[64], line[512];
    struct span cur, prev = {0, 0, 0, 0};
    bool in = false;
    FILE *f;
    int rc = -EFAULT;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    f = fopen(path, "re");
    if (f == NULL)
        return -errno;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %" SCNu64,
                   &cur.start, &cur.end, &cur.off, &cur.ino) != 4)
            continue;
        if (!in) {
            if (addr < cur.start || addr >= cur.end)
                continue;
            if (cur.ino == 0)
                break; /* anonymous memory (--no-huge) */
            *first = cur;
            in = true;
        } else if (cur.start != prev.end || cur.ino != prev.ino ||
                   cur.off != prev.off + (prev.end - prev.start)) {
            break;
        }
        prev = cur;
        if (addr + len <= cur.end) {
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

int
abu_register(pid_t pid, uid_t uid, int xsk, const struct ab_umem *u,
             uint64_t max, char *why, size_t n)
{
    struct xdp_umem_reg reg;
    struct span s;
    struct stat st;
    struct statfs sf;
    char path[96];
    uint64_t off, aligned, page, maplen;
    void *map;
    int fd, rc;

    if (u->len == 0 || u->len > max)
        return snprintf(why, n,
                        "umem of %" PRIu64 " MB (at most %" PRIu64 " MB: "
                        "accel-broker --memlock-max-mb)",
                        u->len >> 20, max >> 20),
               -ENOMEM;
    rc = find_span(pid, u->addr, u->len, &s);
    if (rc != 0)
        return snprintf(why, n,
                        "the umem is not one file mapping of pid %d (%s); "
                        "without hugepages (ACCEL_HUGEPAGES=off) accel-broker "
                        "cannot register it",
                        (int)pid, strerror(-rc)),
               rc;
    snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
             (int)pid, s.start, s.end);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return snprintf(why, n, "cannot open %s: %s", path, strerror(errno)),
               -EACCES;
    if (fstat(fd, &st) != 0 || fstatfs(fd, &sf) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != uid || st.st_ino != s.ino ||
        sf.f_type != HUGETLBFS_MAGIC) {
        close(fd);
        return snprintf(why, n,
                        "the umem is not a hugetlbfs file of user %u "
                        "(ACCEL_HUGEPAGES=off, or no hugetlbfs the user can "
                        "write: mount one for the group, accel-lab's "
                        "/run/accel/hugepages)",
                        (unsigned)uid),
               -EPERM;
    }
    page = (uint64_t)sf.f_bsize;
    off = s.off + (u->addr - s.start);
    aligned = off & ~(page - 1);
    maplen = (off - aligned + u->len + page - 1) & ~(page - 1);
    map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
               (off_t)aligned);
    close(fd);
    if (map == MAP_FAILED)
        return snprintf(why, n, "mmap of the umem: %s", strerror(errno)),
               -errno;
    memset(&reg, 0, sizeof(reg));
    reg.addr = (uint64_t)(uintptr_t)map + (off - aligned);
    reg.len = u->len;
    reg.chunk_size = u->chunk_size;
    reg.headroom = u->headroom;
    reg.flags = u->flags;
    rc = setsockopt(xsk, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg));
    if (rc != 0) {
        rc = -errno;
        snprintf(why, n, "XDP_UMEM_REG: %s", strerror(-rc));
    }
    munmap(map, maplen);
    return rc;
}
