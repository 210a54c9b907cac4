/*
 * accel-broker's clients: one connection per process family, answered in
 * one thread (each request is a few system calls). A client is
 * authorised once, at accept, from SO_PEERCRED and SO_PEERGROUPS (the
 * peer's credentials when it connected: nothing to race with); an
 * unauthorised one gets its reason in the reply to its first request and
 * is closed. When a connection ends (the family's last process closed
 * it, exited or exec'd) its XSKs leave the map and its program the
 * interface.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "broker.h"
#include "umem.h"
#include "ports.h"
#include "xdp.h"
#include "xdp/steer.h"

#define MAX_ADDRS 4096

struct client {
    int fd;
    struct ucred cr;
    int auth;             /* 0 or -errno */
    char why[AB_WHY_MAX]; /* auth's reason */
    bool hello;
    bool keep;          /* leave the program attached when the family ends */
    bool shared;        /* the HELLO's address is the kernel's on iface */
    uint32_t ip, mask;  /* the HELLO's */
    uint64_t nb_window; /* neighbour requests: the current second's start */
    uint32_t nb_count;  /* and how many in it */
    char iface[IF_NAMESIZE];
    struct abx_prog prog;
    uint32_t nsock, queues;
    uint64_t pinned; /* umem bytes registered for it */
};

static struct client cl[ABR_MAX_CLIENTS];
static int ncl;

/* ---- the kernel's addresses in this namespace -----------------------------
 */

static uint32_t k4[MAX_ADDRS];
static struct in6_addr k6[MAX_ADDRS];

/* false (and a reason) when the list could not be had whole: the checks
 * against it would not be checks. */
static bool
kernel_addrs(struct abp_kernel_addrs *k, char *why, size_t n)
{
    struct ifaddrs *ifa, *i;
    bool whole = true;

    memset(k, 0, sizeof(*k));
    k->v4 = k4;
    k->v6 = k6;
    if (getifaddrs(&ifa) != 0) {
        snprintf(why, n, "getifaddrs: %s", strerror(errno));
        return false;
    }
    for (i = ifa; i != NULL; i = i->ifa_next) {
        int fam = i->ifa_addr != NULL ? i->ifa_addr->sa_family : AF_UNSPEC;

        if ((fam == AF_INET && k->n4 == MAX_ADDRS) ||
            (fam == AF_INET6 && k->n6 == MAX_ADDRS))
            whole = false;
        else if (fam == AF_INET)
            k4[k->n4++] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
        else if (fam == AF_INET6)
            k6[k->n6++] = ((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
    }
    freeifaddrs(ifa);
    if (!whole)
        snprintf(why, n, "more than %d kernel addresses of a family here",
                 MAX_ADDRS);
    return whole;
}

/* The kernel holds ip (network order) on iface itself. */
static bool
kernel_has4_on(const char *iface, uint32_t ip)
{
    struct ifaddrs *ifa, *i;
    bool on = false;

    if (getifaddrs(&ifa) != 0)
        return false;
    for (i = ifa; i != NULL && !on; i = i->ifa_next)
        on = i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
             strcmp(i->ifa_name, iface) == 0 &&
             ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == ip;
    freeifaddrs(ifa);
    return on;
}

/* ---- connections ------------------------------------------------------- */

static void
authorise(struct client *c, const struct abp_conf *conf)
{
    gid_t groups[256];
    socklen_t len = sizeof(c->cr);
    int n = 0;

    if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &c->cr, &len) != 0) {
        c->auth = -errno;
        snprintf(c->why, sizeof(c->why), "no peer credentials");
        return;
    }
    len = sizeof(groups);
    if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
        n = (int)(len / sizeof(gid_t));
    c->auth = abp_authorise(conf, c->cr.uid, c->cr.gid, groups, n, c->why,
                            sizeof(c->why));
    if (c->auth != 0)
        abr_log("pid %d uid %u refused: %s", (int)c->cr.pid,
                (unsigned)c->cr.uid, c->why);
}

static void
drop(int i)
{
    struct client *c = &cl[i];

    if (c->hello) {
        abx_unload(&c->prog, c->keep);
        abr_log("pid %d uid %u: connection closed; %s released", (int)c->cr.pid,
                (unsigned)c->cr.uid, c->iface);
    }
    close(c->fd);
    cl[i] = cl[--ncl];
}

static int
reply(int fd, int status, const char *why, int pass_fd)
{
    struct ab_rep r = {.magic = AB_MAGIC, .status = status};
    struct iovec iov = {&r, sizeof(r)};
    char cbuf[AB_CBUF_SIZE];
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

    snprintf(r.why, sizeof(r.why), "%s", why != NULL ? why : "");
    if (pass_fd >= 0)
        ab_msg_put_fd(&mh, cbuf, pass_fd);
    return sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(r) ? 0 : -errno;
}

/* ---- requests ------------------------------------------------------------ */

static bool
iface_taken(const char *iface, const struct client *self)
{
    for (int i = 0; i < ncl; i++)
        if (&cl[i] != self && cl[i].hello && strcmp(cl[i].iface, iface) == 0)
            return true;
    return false;
}

static int
do_hello(struct client *c, const struct abp_conf *conf, const struct ab_req *q,
         char *why, size_t n)
{
    const struct ab_hello *h = &q->u.hello;
    struct abp_kernel_addrs k;
    int rc, ifindex;

    if (c->hello)
        return snprintf(why, n, "HELLO sent twice"), -EALREADY;
    if (!kernel_addrs(&k, why, n))
        return -E2BIG;
    c->shared = kernel_has4_on(h->iface, h->ip);
    rc = abp_check_hello(conf, h, &k, c->shared, why, n);
    if (rc != 0)
        return rc;
    ifindex = (int)if_nametoindex(h->iface);
    if (ifindex == 0)
        return snprintf(why, n,
                        "no interface %s in accel-broker's network "
                        "namespace",
                        h->iface),
               -ENODEV;
    if (iface_taken(h->iface, c))
        return snprintf(why, n,
                        "%s is already driven by another accel process "
                        "family through accel-broker",
                        h->iface),
               -EBUSY;
    rc = abx_load(ifindex, h->ip, h->mask, c->shared, &c->prog, why, n);
    if (rc != 0)
        return rc;
    c->hello = true;
    c->keep = h->keep != 0;
    c->ip = h->ip;
    c->mask = h->mask;
    c->queues = h->queues;
    snprintf(c->iface, sizeof(c->iface), "%s", h->iface);
    abr_log("pid %d uid %u: %s steered to the stack at %s", (int)c->cr.pid,
            (unsigned)c->cr.uid, c->iface,
            inet_ntop(AF_INET, &h->ip, (char[INET_ADDRSTRLEN]){0},
                      INET_ADDRSTRLEN));
    return 0;
}

static int
do_xsk_attach(struct client *c, const struct ab_req *q, int fd, char *why,
              size_t n)
{
    uint32_t ifindex = 0, queue = 0;
    int rc, domain = 0;
    socklen_t len = sizeof(domain);

    if (fd < 0)
        return snprintf(why, n, "no socket passed"), -EBADF;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 ||
        domain != AF_XDP)
        return snprintf(why, n, "not an AF_XDP socket"), -EINVAL;
    if (q->u.xsk.queue >= c->queues)
        return snprintf(why, n, "queue %u is not one of the HELLO's %u",
                        q->u.xsk.queue, c->queues),
               -EINVAL;
    rc = abx_xsk_binding(fd, &ifindex, &queue);
    if (rc == -EOPNOTSUPP) {
        /* The kernel hands an XSK only frames of the interface and queue
         * it is bound to: a wrongly bound one gets nothing from the map.
         * The check is one more line of defence where it can be made. */
        static bool said;

        if (!said)
            abr_log("this kernel has no XDP socket diagnostics "
                    "(CONFIG_XDP_SOCKETS_DIAG): XSK bindings are not checked");
        said = true;
        ifindex = (uint32_t)c->prog.x.ifindex;
        queue = q->u.xsk.queue;
    } else if (rc != 0) {
        return snprintf(why, n, "the XSK is not bound: %s", strerror(-rc)), rc;
    }
    if ((int)ifindex != c->prog.x.ifindex || queue != q->u.xsk.queue)
        return snprintf(why, n,
                        "the XSK is bound to ifindex %u queue %u, not to %s "
                        "queue %u",
                        ifindex, queue, c->iface, q->u.xsk.queue),
               -EPERM;
    rc = abx_xsk_set(&c->prog, queue, fd);
    if (rc != 0)
        snprintf(why, n, "xsks_map update: %s", strerror(-rc));
    return rc;
}

static int
do_umem_reg(struct client *c, const struct abp_conf *conf,
            const struct ab_req *q, int fd, char *why, size_t n)
{
    int domain = 0, rc;
    socklen_t len = sizeof(domain);

    if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 ||
        domain != AF_XDP)
        return snprintf(why, n, "no AF_XDP socket passed"), -EBADF;
    if (c->pinned > conf->memlock_max)
        return snprintf(why, n, "umem limit reached"), -ENOMEM;
    rc = abu_register(c->cr.pid, c->cr.uid, fd, &q->u.umem,
                      conf->memlock_max - c->pinned, why, n);
    if (rc == 0)
        c->pinned += q->u.umem.len;
    return rc;
}

/* A port the family serves already (checked when it was added: the
 * connections a closing listener leaves get entries of their own, after
 * its kernel socket may be gone), or one a kernel socket of its user
 * holds. */
static int
port_owned(void *arg, int proto, uint16_t port)
{
    struct client *c = arg;
    struct accel_lport_key k = {.proto = (uint8_t)proto, .port = htons(port)};

    if (abx_map_has(&c->prog, ACCEL_LPORT_MAP, &k))
        return 0;
    return abs_port_owned(proto, port, c->cr.uid, c->ip);
}

/* Neighbour requests (ARP, neighbour solicitations) a client may steer
 * per second: each takes the next reply from that neighbour away from the
 * kernel for a moment. */
#define NB_PER_SEC 100u
#define NB_WAIT_NS 3000000000ull /* the reply's deadline: xdpsteer4.c's */

static uint64_t
mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns's clock */
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
do_steer(struct client *c, const struct ab_req *q, char *why, size_t n)
{
    struct ab_steer s = q->u.steer;
    struct abp_kernel_addrs k;
    struct abp_steer_ctx x = {.shared = c->shared,
                              .ip = c->ip,
                              .mask = c->mask,
                              .port_owned = port_owned,
                              .arg = c};
    int rc;

    /* The kernel's addresses matter to accel_dst6 only: no netlink dump
     * for each connection of a shared address. */
    memset(&k, 0, sizeof(k));
    if (strcmp(s.map, ACCEL_DST6_MAP) == 0 && !kernel_addrs(&k, why, n))
        return -E2BIG;
    rc = abp_check_steer(&s, &k, &x, why, n);
    if (rc != 0)
        return rc;
    if (s.op == AB_STEER_ADD && (strcmp(s.map, ACCEL_ARP_MAP) == 0 ||
                                 strcmp(s.map, ACCEL_ND_MAP) == 0)) {
        uint64_t now = mono_ns(), deadline = now + NB_WAIT_NS;

        if (now - c->nb_window >= 1000000000ull) {
            c->nb_window = now;
            c->nb_count = 0;
        }
        if (++c->nb_count > NB_PER_SEC)
            return snprintf(why, n, "more than %u neighbour requests a second",
                            NB_PER_SEC),
                   -EBUSY;
        memcpy(s.val, &deadline, sizeof(deadline));
    }
    rc = abx_map_update(&c->prog, s.map, s.key, s.val, s.op == AB_STEER_DEL);
    if (rc != 0)
        snprintf(why, n, "%s update: %s", s.map, strerror(-rc));
    return rc;
}

/* One request of client i; false when the connection is to be dropped. */
static bool
handle(int i, const struct abp_conf *conf)
{
    struct client *c = &cl[i];
    struct ab_req q;
    struct iovec iov = {&q, sizeof(q)};
    char cbuf[AB_CBUF_SIZE], why[AB_WHY_MAX] = "";
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = cbuf,
                        .msg_controllen = sizeof(cbuf)};
    ssize_t len = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
    int fd, out = -1, rc;
    bool sent;

    if (len <= 0)
        return false;
    fd = ab_msg_get_fd(&mh);
    if (c->auth != 0) {
        reply(c->fd, c->auth, c->why, -1);
        if (fd >= 0)
            close(fd);
        return false;
    }
    rc = abp_check_frame(&q, (size_t)len, why, sizeof(why));
    if (rc == 0 && q.op != AB_HELLO && !c->hello) {
        snprintf(why, sizeof(why), "HELLO first");
        rc = -EPROTO;
    }
    if (rc == 0) {
        switch (q.op) {
        case AB_HELLO:
            rc = do_hello(c, conf, &q, why, sizeof(why));
            break;
        case AB_XSK_SOCKET:
            if (c->nsock >= c->queues) {
                snprintf(why, sizeof(why), "one socket per queue");
                rc = -EMFILE;
                break;
            }
            out = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
            rc = out >= 0 ? 0 : -errno;
            if (rc != 0)
                snprintf(why, sizeof(why), "socket(AF_XDP): %s",
                         strerror(errno));
            else
                c->nsock++;
            break;
        case AB_XSK_ATTACH:
            rc = do_xsk_attach(c, &q, fd, why, sizeof(why));
            break;
        case AB_STEER:
            rc = do_steer(c, &q, why, sizeof(why));
            break;
        case AB_UMEM_REG:
            rc = do_umem_reg(c, conf, &q, fd, why, sizeof(why));
            break;
        }
    }
    if (rc != 0)
        abr_log("pid %d uid %u: request %u refused: %s", (int)c->cr.pid,
                (unsigned)c->cr.uid, q.op, why);
    if (q.op == AB_STEER && (q.u.steer.flags & AB_STEER_NOREPLY) && c->hello) {
        if (fd >= 0)
            close(fd);
        return true; /* done, or refused and logged: not answered */
    }
    sent = reply(c->fd, rc, why, out) == 0;
    if (out >= 0)
        close(out);
    if (fd >= 0)
        close(fd);
    /* A refused HELLO ends the conversation; later requests may fail
     * alone (the client logs them). */
    return sent && (rc == 0 || c->hello);
}

int
abr_serve(int lfd, const struct abp_conf *conf, volatile bool *stop)
{
    struct pollfd pf[1 + ABR_MAX_CLIENTS];

    while (!*stop) {
        int n;

        pf[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < ncl; i++)
            pf[1 + i] = (struct pollfd){.fd = cl[i].fd, .events = POLLIN};
        n = poll(pf, (nfds_t)(1 + ncl), -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            abr_log("poll: %s", strerror(errno));
            break;
        }
        /* Clients first, from the last: drop() moves the last one down. */
        for (int i = ncl - 1; i >= 0; i--) {
            if (pf[1 + i].revents == 0)
                continue;
            if ((pf[1 + i].revents & POLLIN) == 0 || !handle(i, conf))
                drop(i);
        }
        if (pf[0].revents & POLLIN) {
            /* Non-blocking: a client that does not read its replies
             * must not stall the others (a full socket drops it). */
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

            if (fd < 0)
                continue;
            if (ncl == ABR_MAX_CLIENTS) {
                reply(fd, -EMFILE, "accel-broker has no room for more clients",
                      -1);
                close(fd);
                continue;
            }
            memset(&cl[ncl], 0, sizeof(cl[ncl]));
            cl[ncl].fd = fd;
            authorise(&cl[ncl], conf);
            ncl++;
        }
    }
    while (ncl > 0)
        drop(ncl - 1);
    return 0;
}
