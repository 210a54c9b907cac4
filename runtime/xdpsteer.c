/*
 * The XDP program an af_xdp port runs (runtime/xdp/steer.bpf.c): only the
 * stack's frames go to the XSK, the rest on to the kernel. The object,
 * built with clang -target bpf, is embedded in the library
 * (rt__xdp_steer_obj, generated at build time). Before the PMD loads it
 * (devarg xdp_prog=PATH), a copy with ACCEL_IP, its subnet's broadcast and
 * the shared-address flag written over three placeholder constants goes
 * into a memfd, and PATH is
 * /proc/self/fd/N: nothing is left on disk.
 *
 * A process killed with SIGKILL cannot detach the program; the PMD attaches
 * only where no program is, so the next process would fall back to
 * af_packet. The caller holds the interface lock (ifacelock.c), so a
 * program of ours still attached is a dead process's: it is removed first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "rt_int.h"

/* The program's name (its function in steer.bpf.c). */
#define XS_PROG_NAME "accel_steer"

extern const unsigned char rt__xdp_steer_obj[];
extern const size_t rt__xdp_steer_obj_len;

/* The placeholders' values in steer.bpf.c (as the u32 is stored). */
#define XS_IP_MARK 0x5A1ECCA1u
#define XS_BCAST_MARK 0x5B1ECCA1u
#define XS_SHARED_MARK 0x5C1ECCA1u

/* Overwrite the one occurrence of mark in buf with v; -1 if it is not
 * there exactly once. */
static int
patch_u32(unsigned char *buf, size_t n, uint32_t mark, uint32_t v)
{
    unsigned char *at = NULL;

    for (size_t i = 0; i + 4 <= n; i++) {
        if (memcmp(buf + i, &mark, 4) != 0)
            continue;
        if (at != NULL)
            return -1;
        at = buf + i;
    }
    if (at == NULL)
        return -1;
    memcpy(at, &v, 4);
    return 0;
}

int
rt__xdp_steer_open(const struct rt__xdp_steer_cfg *c, char *path, size_t pathsz)
{
    size_t n = rt__xdp_steer_obj_len;
    unsigned char *buf = malloc(n);
    int fd = -1, rc = -EINVAL;

    if (buf == NULL)
        return -ENOMEM;
    memcpy(buf, rt__xdp_steer_obj, n);
    if (patch_u32(buf, n, XS_IP_MARK, c->ip) != 0 ||
        patch_u32(buf, n, XS_BCAST_MARK, c->ip | ~c->mask) != 0 ||
        patch_u32(buf, n, XS_SHARED_MARK, c->shared ? 1u : 0u) != 0) {
        BASE_ERR("port", "the embedded XDP program has no unique address "
                         "placeholders (a build problem)");
        goto out;
    }
    fd = memfd_create("accel-xdp-steer", MFD_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    rc = base_write_all(fd, buf, n);
    if (rc != 0) {
        close(fd);
        goto out;
    }
    snprintf(path, pathsz, "/proc/self/fd/%d", fd);
    rc = fd;
out:
    free(buf);
    return rc;
}

int
rt__xdp_steer_prog_fd(const char *iface)
{
    struct bpf_prog_info info;
    uint32_t len = sizeof(info), id = 0;
    int ifindex = (int)if_nametoindex(iface), fd;

    if (ifindex == 0)
        return -ENODEV;
    if (bpf_xdp_query_id(ifindex, 0, &id) != 0 || id == 0)
        return -ENOENT;
    fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0)
        return fd;
    memset(&info, 0, sizeof(info));
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 ||
        strcmp(info.name, XS_PROG_NAME) != 0) {
        close(fd);
        return -ENOENT;
    }
    return fd;
}

int
rt__xdp_steer_map_fd(const char *iface, const char *name)
{
    struct bpf_prog_info info;
    uint32_t ids[16], len = sizeof(info);
    int prog = rt__xdp_steer_prog_fd(iface), rc = -ENOENT;

    if (prog < 0)
        return prog;
    memset(&info, 0, sizeof(info));
    info.nr_map_ids = 16;
    info.map_ids = (uint64_t)(uintptr_t)ids;
    if (bpf_obj_get_info_by_fd(prog, &info, &len) != 0)
        info.nr_map_ids = 0;
    for (uint32_t i = 0; rc < 0 && i < info.nr_map_ids && i < 16; i++) {
        struct bpf_map_info mi;
        uint32_t mlen = sizeof(mi);
        int fd = bpf_map_get_fd_by_id(ids[i]);

        if (fd < 0)
            continue;
        memset(&mi, 0, sizeof(mi));
        if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0 &&
            strcmp(mi.name, name) == 0)
            rc = rt__fd_move_high(fd);
        else
            close(fd);
    }
    close(prog);
    return rc;
}

void
rt__xdp_steer_clear_stale(const char *iface)
{
    int ifindex = (int)if_nametoindex(iface);
    int fd = rt__xdp_steer_prog_fd(iface);

    if (fd < 0)
        return;
    if (bpf_xdp_detach(ifindex, 0, NULL) == 0)
        BASE_INFO("port",
                  "removed the XDP program a dead accel process left on %s",
                  iface);
    close(fd);
}
