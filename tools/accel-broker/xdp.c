/*
 * accel-broker's XDP side (xdp.h). The program is the library's own
 * (runtime/xdp/steer.bpf.c), loaded by the library's loader
 * (runtime/xdpprog.c) with the constants of the validated HELLO: attached
 * where no program is, or adopted when a privileged accel process left
 * the same one; detached with the program's own fd as the expected one,
 * so a program someone else attached meanwhile is never removed.
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

static int
libbpf_rc(long rc)
{
    if (rc >= 0)
        return 0;
    return rc == -1 ? -errno : (int)rc;
}

int
abx_load(int ifindex, uint32_t ip, uint32_t mask, bool shared,
         struct abx_prog *p, char *why, size_t n)
{
    const struct rt__xdpprog_cfg c = {.ip = ip, .mask = mask, .shared = shared};
    int rc;

    memset(p, 0, sizeof(*p));
    rc = rt__xdpprog_ensure(ifindex, &c, &p->x, why, n);
    if (rc == -EEXIST || rc == -EBUSY)
        snprintf(why, n,
                 "cannot attach the XDP program: another XDP program is on "
                 "the interface");
    return rc;
}

void
abx_unload(struct abx_prog *p, bool keep)
{
    if (p->x.prog_fd < 0)
        return;
    if (keep) {
        rt__xdpprog_release(&p->x);
        return;
    }
    if (rt__xdpprog_detach(&p->x) != 0)
        fprintf(stderr,
                "accel-broker: detaching the XDP program of ifindex "
                "%d: %s\n",
                p->x.ifindex, strerror(errno));
}

int
abx_xsk_set(struct abx_prog *p, uint32_t queue, int fd)
{
    if (fd < 0)
        return libbpf_rc(bpf_map_delete_elem(p->x.xsks_fd, &queue));
    return libbpf_rc(bpf_map_update_elem(p->x.xsks_fd, &queue, &fd, 0));
}

int
abx_map_update(struct abx_prog *p, const char *name, const void *key,
               const void *val, int del)
{
    int fd = rt__xdpprog_map_fd(p->x.prog_fd, name), rc;

    if (fd < 0)
        return -ENOENT;
    if (del) {
        rc = libbpf_rc(bpf_map_delete_elem(fd, key));
        rc = rc == -ENOENT ? 0 : rc;
    } else {
        rc = libbpf_rc(bpf_map_update_elem(fd, key, val, 0));
    }
    close(fd);
    return rc;
}

int
abx_map_has(struct abx_prog *p, const char *name, const void *key)
{
    int fd = rt__xdpprog_map_fd(p->x.prog_fd, name), rc;
    uint8_t val[16];

    if (fd < 0)
        return 0;
    rc = bpf_map_lookup_elem(fd, key, val) == 0;
    close(fd);
    return rc;
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
