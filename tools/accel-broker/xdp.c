/*
 * accel-broker's XDP side (xdp.h). The program is the library's own
 * (runtime/xdp/steer.bpf.c, embedded as rt__xdp_steer_obj); its two
 * address constants live in .rodata and are set through libbpf's initial
 * value of that map before the load, from the validated HELLO. Attached
 * with XDP_FLAGS_UPDATE_IF_NOEXIST, as DPDK's af_xdp driver does, and
 * detached with the program's own fd as the expected one, so a program
 * someone else attached meanwhile is never removed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"

#define PROG_NAME "accel_steer" /* steer.bpf.c */
#define IP_MARK 0x5A1ECCA1u     /* steer.bpf.c's placeholders */
#define BCAST_MARK 0x5B1ECCA1u
#define SHARED_MARK                                                            \
    0x5C1ECCA1u /* accel_shared: 0, the address is not the                     \
                   kernel's (HELLO refuses those) */

extern const unsigned char rt__xdp_steer_obj[];
extern const size_t rt__xdp_steer_obj_len;

static int
libbpf_rc(long rc)
{
    if (rc >= 0)
        return 0;
    return rc == -1 ? -errno : (int)rc;
}

/* Replace the placeholders in the object's .rodata (each exactly once):
 * the address, its broadcast, and the shared-address flag (0). */
static int
set_addresses(struct bpf_object *obj, uint32_t ip, uint32_t bcast)
{
    struct bpf_map *m;

    bpf_object__for_each_map(m, obj)
    {
        const char *name = bpf_map__name(m);
        const uint8_t *init;
        uint8_t *copy;
        size_t sz, hits = 0;
        int rc;

        if (!bpf_map__is_internal(m) || strstr(name, ".rodata") == NULL)
            continue;
        init = bpf_map__initial_value(m, &sz);
        if (init == NULL || (copy = malloc(sz)) == NULL)
            return -ENOMEM;
        memcpy(copy, init, sz);
        for (size_t off = 0; off + 4 <= sz; off += 4) {
            uint32_t v;

            memcpy(&v, copy + off, 4);
            if (v == IP_MARK)
                memcpy(copy + off, &ip, 4);
            else if (v == BCAST_MARK)
                memcpy(copy + off, &bcast, 4);
            else if (v == SHARED_MARK)
                memset(copy + off, 0, 4);
            else
                continue;
            hits++;
        }
        rc = hits == 3 ? bpf_map__set_initial_value(m, copy, sz) : -ENOENT;
        free(copy);
        return libbpf_rc(rc);
    }
    return -ENOENT;
}

/* A program called accel_steer attached to ifindex: a dead broker's or a
 * dead privileged accel process's (the library's interface lock admits
 * one client per interface, and the broker one family). */
static void
detach_stale(int ifindex)
{
    struct bpf_prog_info info;
    uint32_t len = sizeof(info), id = 0;
    int fd;

    if (bpf_xdp_query_id(ifindex, 0, &id) != 0 || id == 0)
        return;
    fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0)
        return;
    memset(&info, 0, sizeof(info));
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
        strcmp(info.name, PROG_NAME) == 0)
        bpf_xdp_detach(ifindex, 0, NULL);
    close(fd);
}

int
abx_load(int ifindex, uint32_t ip, uint32_t mask, struct abx_prog *p, char *why,
         size_t n)
{
    struct bpf_program *prog;
    int rc;

    memset(p, 0, sizeof(*p));
    p->prog_fd = p->xsks_fd = -1;
    p->ifindex = ifindex;
    p->obj =
        bpf_object__open_mem(rt__xdp_steer_obj, rt__xdp_steer_obj_len, NULL);
    rc = libbpf_rc(libbpf_get_error(p->obj));
    if (rc != 0) {
        p->obj = NULL;
        snprintf(why, n, "cannot open the XDP program: %s", strerror(-rc));
        return rc;
    }
    rc = set_addresses(p->obj, ip, ip | ~mask);
    if (rc == 0)
        rc = libbpf_rc(bpf_object__load(p->obj));
    if (rc != 0) {
        snprintf(why, n, "cannot load the XDP program: %s", strerror(-rc));
        goto fail;
    }
    prog = bpf_object__find_program_by_name(p->obj, PROG_NAME);
    p->prog_fd = prog != NULL ? bpf_program__fd(prog) : -1;
    p->xsks_fd = bpf_object__find_map_fd_by_name(p->obj, "xsks_map");
    if (p->prog_fd < 0 || p->xsks_fd < 0) {
        rc = -ENOENT;
        snprintf(why, n, "the XDP program has no %s or xsks_map", PROG_NAME);
        goto fail;
    }
    rc = libbpf_rc(
        bpf_xdp_attach(ifindex, p->prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL));
    if (rc == -EBUSY || rc == -EEXIST) {
        detach_stale(ifindex);
        rc = libbpf_rc(bpf_xdp_attach(ifindex, p->prog_fd,
                                      XDP_FLAGS_UPDATE_IF_NOEXIST, NULL));
    }
    if (rc != 0) {
        snprintf(why, n,
                 "cannot attach the XDP program (%s): another XDP program "
                 "is on the interface",
                 strerror(-rc));
        goto fail;
    }
    return 0;
fail:
    bpf_object__close(p->obj);
    p->obj = NULL;
    p->prog_fd = p->xsks_fd = -1;
    return rc;
}

void
abx_unload(struct abx_prog *p)
{
    LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = p->prog_fd);

    if (p->obj == NULL)
        return;
    if (bpf_xdp_detach(p->ifindex, XDP_FLAGS_REPLACE, &o) != 0)
        fprintf(stderr,
                "accel-broker: detaching the XDP program of ifindex "
                "%d: %s\n",
                p->ifindex, strerror(errno));
    bpf_object__close(p->obj);
    p->obj = NULL;
    p->prog_fd = p->xsks_fd = -1;
}

int
abx_xsk_set(struct abx_prog *p, uint32_t queue, int fd)
{
    if (fd < 0)
        return libbpf_rc(bpf_map_delete_elem(p->xsks_fd, &queue));
    return libbpf_rc(bpf_map_update_elem(p->xsks_fd, &queue, &fd, 0));
}

int
abx_map_update(struct abx_prog *p, const char *name, const void *key,
               const void *val, int del)
{
    int fd = bpf_object__find_map_fd_by_name(p->obj, name);

    if (fd < 0)
        return -ENOENT;
    if (del) {
        int rc = libbpf_rc(bpf_map_delete_elem(fd, key));
        return rc == -ENOENT ? 0 : rc;
    }
    return libbpf_rc(bpf_map_update_elem(fd, key, val, 0));
}

/* ---- sock_diag: where an XSK is bound ------------------------------------ */

int
abx_xsk_binding(int fd, uint32_t *ifindex, uint32_t *queue)
{
    struct {
        struct nlmsghdr nh;
        struct xdp_diag_req r;
    } req = {
        .nh = {.nlmsg_len = sizeof(req),
               .nlmsg_type = SOCK_DIAG_BY_FAMILY,
               .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .r = {.sdiag_family = AF_XDP, .xdiag_show = XDP_SHOW_INFO},
    };
    static char buf[32768];
    struct stat st;
    int nl, rc = -ENOENT;
    bool done = false;

    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return -ENOTSOCK;
    nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0)
        return -errno;
    if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
        rc = -errno;
        done = true;
    }
    while (!done) {
        ssize_t len = recv(nl, buf, sizeof(buf), 0);
        struct nlmsghdr *h = (struct nlmsghdr *)buf;

        if (len <= 0) {
            rc = len < 0 ? -errno : rc;
            break;
        }
        for (; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
            struct xdp_diag_msg *m = NLMSG_DATA(h);
            struct rtattr *a = (struct rtattr *)(m + 1);
            int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));

            if (h->nlmsg_type == NLMSG_ERROR) {
                rc = -EOPNOTSUPP; /* no CONFIG_XDP_SOCKETS_DIAG */
                done = true;
                break;
            }
            if (h->nlmsg_type == NLMSG_DONE) {
                done = true;
                break;
            }
            if (m->xdiag_ino != (uint32_t)st.st_ino)
                continue;
            rc = -ENOTCONN; /* found, not bound */
            for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
                struct xdp_diag_info *inf = RTA_DATA(a);

                if (a->rta_type != XDP_DIAG_INFO)
                    continue;
                *ifindex = inf->ifindex;
                *queue = inf->queue_id;
                rc = inf->ifindex != 0 ? 0 : -ENOTCONN;
            }
        }
    }
    close(nl);
    return rc;
}
