/*
 * accel-broker: is a local port a client's own (ports.h)? Asked of the
 * kernel through sock_diag (NETLINK_SOCK_DIAG, inet_diag), for TCP or UDP
 * sockets of both families whose source port is the port (a bytecode
 * filter, as `ss sport = :N` does, so the kernel sends only those), and
 * accepted when one of them belongs to the client's user and is bound to
 * the shared address, its IPv4-mapped form, the wildcard, or a global IPv6
 * address (the shared IPv6 one is checked when it is steered).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ports.h"

/* Source port == port: S_GE port and S_LE port (each an op and a second
 * op carrying the port in its `no`); a failed test jumps past the end. */
struct sport_filter {
    struct inet_diag_bc_op ge, ge_port, le, le_port;
};

static bool
addr_ok(const struct inet_diag_msg *m, uint32_t ip)
{
    const uint32_t *a = m->id.idiag_src;

    if (m->idiag_family == AF_INET)
        return a[0] == 0 || a[0] == ip;
    if (a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == 0)
        return true; /* :: */
    if (a[0] == 0 && a[1] == 0 && a[2] == htonl(0xffff))
        return a[3] == ip; /* ::ffff:ip */
    /* 2000::/3: a global address (the shared IPv6 one, if any, is the
     * kernel's on the interface: checked when its entry is steered). */
    return (ntohl(a[0]) >> 29) == 1;
}

/* One dump: 1 found, 0 not, -errno. */
static int
dump(int nl, int family, int proto, uint16_t port, uid_t uid, uint32_t ip)
{
    struct {
        struct nlmsghdr nh;
        struct inet_diag_req_v2 r;
        struct nlattr bc_hdr;
        struct sport_filter bc;
    } req;
    static char buf[16384];
    int found = 0;

    memset(&req, 0, sizeof(req));
    req.nh.nlmsg_len = sizeof(req);
    req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.r.sdiag_family = (uint8_t)family;
    req.r.sdiag_protocol = (uint8_t)proto;
    req.r.idiag_states = ~0u;
    req.bc_hdr.nla_len = NLA_HDRLEN + sizeof(req.bc);
    req.bc_hdr.nla_type = INET_DIAG_REQ_BYTECODE;
    req.bc.ge = (struct inet_diag_bc_op){INET_DIAG_BC_S_GE, 8, 16 + 4};
    req.bc.ge_port = (struct inet_diag_bc_op){0, 0, port};
    req.bc.le = (struct inet_diag_bc_op){INET_DIAG_BC_S_LE, 8, 8 + 4};
    req.bc.le_port = (struct inet_diag_bc_op){0, 0, port};
    if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
        return -errno;
    for (;;) {
        ssize_t len = recv(nl, buf, sizeof(buf), 0);
        struct nlmsghdr *h = (struct nlmsghdr *)buf;

        if (len < 0)
            return -errno;
        if (len == 0)
            return -EPROTO;
        for (; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
            const struct inet_diag_msg *m = NLMSG_DATA(h);

            if (h->nlmsg_type == NLMSG_DONE)
                return found;
            if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);
                return e->error < 0 ? e->error : -EPROTO;
            }
            if (ntohs(m->id.idiag_sport) == port && m->idiag_uid == uid &&
                addr_ok(m, ip))
                found = 1;
        }
    }
}

int
abs_port_owned(int proto, uint16_t port, uid_t uid, uint32_t ip)
{
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    int rc = 0;

    if (nl < 0)
        return -errno;
    for (int i = 0; i < 2 && rc == 0; i++)
        rc = dump(nl, i == 0 ? AF_INET : AF_INET6, proto, port, uid, ip);
    close(nl);
    if (rc < 0)
        return rc;
    return rc == 1 ? 0 : -EPERM;
}
