/*
 * The XDP program an af_xdp port runs (runtime/xdp/steer.bpf.c): only the
 * stack's frames go to the XSK, the rest on to the kernel. The object,
 * built with clang -target bpf, is embedded in the library
 * (rt__xdp_steer_obj, generated at build time).
 *
 * With DPDK linked statically (the default), the library attaches it
 * itself, or adopts the one an earlier process left (xdpprog.c), and the
 * af_xdp PMD only makes the XSKs: xsk_socket__create is wrapped
 * (broker_client.c) to keep libxdp from loading a program and to put the
 * XSK in this program's xsks_map, and the PMD's detach at close is
 * skipped. The program stays for the next process (ACCEL_XDP_KEEP=0:
 * detached at exit).
 *
 * With shared DPDK libraries there is nothing to wrap: a copy of the
 * object with ACCEL_IP, its subnet's broadcast and the shared-address
 * flag written over the placeholder constants goes into a memfd, the PMD
 * loads it (devarg xdp_prog=/proc/self/fd/N; nothing is left on disk) and
 * detaches it at close. A program of ours still attached is a dead
 * process's (the caller holds the interface lock): removed first.
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
#include "xdpprog.h"

struct rt__xdpprog rt__xdp_prog = {.prog_fd = -1, .xsks_fd = -1};

#ifndef ACCEL_DPDK_STATIC
extern const unsigned char rt__xdp_steer_obj[];
extern const size_t rt__xdp_steer_obj_len;

int
rt__xdp_steer_open(const struct rt__xdpprog_cfg *c, char *path, size_t pathsz)
{
    size_t n = rt__xdp_steer_obj_len;
    unsigned char *buf = malloc(n);
    int fd = -1, rc = -EINVAL;

    if (buf == NULL)
        return -ENOMEM;
    memcpy(buf, rt__xdp_steer_obj, n);
    if (rt__xdpprog_patch(buf, n, c) != 0) {
        BASE_ERR("port", "the embedded XDP program has no unique constant "
                         "placeholders (a build problem): rebuild accel "
                         "from a clean build directory");
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
#endif

/* An fd of accel's program attached to iface, or -ENOENT (none, or
 * another program), -ENODEV, -errno. */
static int
xdp_steer_prog_fd(const char *iface)
{
    int ifindex = (int)if_nametoindex(iface), fd;

    if (ifindex == 0)
        return -ENODEV;
    fd = rt__xdpprog_attached(ifindex);
    return fd < 0 ? fd : rt__fd_move_high(fd);
}

int
rt__xdp_steer_map_fd(const char *iface, const char *name)
{
    int prog = xdp_steer_prog_fd(iface), rc;

    if (prog < 0)
        return prog;
    rc = rt__xdpprog_map_fd(prog, name);
    close(prog);
    return rc < 0 ? rc : rt__fd_move_high(rc);
}

int
rt__xdp_steer_attach(const struct rt__xdpprog_cfg *c)
{
    int ifindex = (int)if_nametoindex(base_cfg.iface), rc;
    char why[160];

    if (ifindex == 0)
        return -ENODEV;
    rc = rt__xdpprog_ensure(ifindex, c, &rt__xdp_prog, why, sizeof(why));
    if (rc != 0) {
        BASE_INFO("port", "%s: %s", base_cfg.iface, why);
        return rc;
    }
    rt__xdp_prog.prog_fd = rt__fd_move_high(rt__xdp_prog.prog_fd);
    rt__xdp_prog.xsks_fd = rt__fd_move_high(rt__xdp_prog.xsks_fd);
    BASE_INFO("port", "%s: the steering program %s", base_cfg.iface,
              rt__xdp_prog.adopted ? "left by an earlier process is reused"
                                   : "is loaded and attached");
    return 0;
}

void
rt__xdp_steer_leave(void)
{
    int ifindex;

    if (rt__broker_active)
        return; /* the broker's program */
    if (base_cfg.xdp_keep) {
        rt__xdpprog_release(&rt__xdp_prog);
        return;
    }
    /* The last process of the family may be one that joined it (exec):
     * it has no fd of the program; the attached one is looked up. */
    ifindex = (int)if_nametoindex(base_cfg.iface);
    if (rt__xdp_prog.prog_fd < 0 && ifindex > 0) {
        rt__xdp_prog.ifindex = ifindex;
        rt__xdp_prog.prog_fd = rt__xdpprog_attached(ifindex);
    }
    rt__xdpprog_detach(&rt__xdp_prog);
}

void
rt__xdp_steer_clear_stale(const char *iface)
{
    struct rt__xdpprog p = {
        .ifindex = (int)if_nametoindex(iface), .prog_fd = -1, .xsks_fd = -1};

    if (p.ifindex > 0)
        p.prog_fd = rt__xdpprog_attached(p.ifindex);
    if (p.prog_fd >= 0 && rt__xdpprog_detach(&p) == 0)
        BASE_INFO("port",
                  "removed the XDP program an earlier accel process left "
                  "on %s",
                  iface);
}
