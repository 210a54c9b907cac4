/*
 * Joining the port of another process (docs/DESIGN.md §8, "exec").
 *
 * The process that drives ACCEL_IFACE holds the interface lock
 * (ifacelock.c); its fork children share its port through the region
 * (share.c). A process outside that family, typically a program its
 * children exec (LD_PRELOAD is inherited), finds the lock taken. Instead
 * of falling back to the kernel it asks the owner to join:
 *
 *   - the owner serves an abstract Unix socket, "accel-join-<iface>"
 *     (abstract names are per network namespace, as the lock is), from a
 *     thread of its own;
 *   - the joining process sends its layout (the region's size: the same
 *     library build) and its address; the owner checks the peer's uid
 *     (SO_PEERCRED: the same user or root), makes the region if no fork
 *     made it yet, reserves a slot marked remote and answers with the
 *     interface's settings and, over SCM_RIGHTS, the region's memfd and
 *     the 64 slots' eventfds;
 *   - the joining process maps the region and starts its data path
 *     (remote.c): frames dispatched to its slot are copied into its cells
 *     by the family's port lock holder, and it sends through a packet
 *     socket of its own on the interface.
 *
 * Raw syscalls only: the interposed libc names must not be re-entered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "inlib.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "share_int.h"
#include "stats.h"
#include "stk.h"

#define JOIN_MAGIC 0x6e6a6361u /* "acjn" */
#define JOIN_VERSION 1u
#define JOIN_TIMEOUT_S 3

struct join_req {
    uint32_t magic, version;
    uint64_t region_size;
    uint32_t ip, mask; /* network order */
};

struct join_rep {
    uint32_t magic;
    int32_t status; /* 0 or -errno */
    int32_t slot, pid;
    uint32_t ip, mask, gw, csum_flags;
    uint16_t mtu;
    uint8_t mac[6];
    char desc[96];
};

static int listen_fd = -1;
static struct stk_netif_cfg owner_nc;

static socklen_t
join_name(struct sockaddr_un *a)
{
    int n;

    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "accel-join-%s",
                 base_cfg.iface);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static void
set_timeouts(int fd, int sec)
{
    struct timeval tv = {sec, 0};

    syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* ---- the owner: serving joins ----------------------------------------- */

static int
check_req(int c, const struct join_req *q, long n, struct ucred *cr)
{
    socklen_t cl = sizeof(*cr);

    if (n != (long)sizeof(*q) || q->magic != JOIN_MAGIC)
        return -EPROTO;
    if (q->version != JOIN_VERSION ||
        q->region_size != sizeof(struct sh_region))
        return -EPROTONOSUPPORT; /* another build of the library */
    if (syscall(SYS_getsockopt, c, SOL_SOCKET, SO_PEERCRED, cr, &cl) != 0 ||
        (cr->uid != (uid_t)syscall(SYS_geteuid) && cr->uid != 0))
        return -EPERM;
    if (q->ip != owner_nc.ip || q->mask != owner_nc.netmask)
        return -EADDRNOTAVAIL;
    return 0;
}

static void
serve_one(int c)
{
    struct join_req q;
    struct join_rep r;
    struct ucred cr = {0, 0, 0};
    int fds[1 + SH_SLOTS], nfd = 0;
    char cbuf[CMSG_SPACE(sizeof(fds))];
    struct iovec iov = {&r, sizeof(r)};
    struct msghdr mh = {0};
    long n;

    set_timeouts(c, 2);
    n = syscall(SYS_recvfrom, c, &q, sizeof(q), MSG_WAITALL, NULL, NULL);
    memset(&r, 0, sizeof(r));
    r.magic = JOIN_MAGIC;
    r.status = check_req(c, &q, n, &cr);
    if (r.status == 0) {
        rt_lock();
        r.slot = rt__share_join_reserve();
        rt_unlock();
        if (r.slot < 0)
            r.status = r.slot;
    }
    r.pid = (int32_t)syscall(SYS_getpid);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (r.status == 0) {
        struct cmsghdr *cm;

        r.ip = owner_nc.ip;
        r.mask = owner_nc.netmask;
        r.gw = owner_nc.gateway;
        r.csum_flags = owner_nc.csum_flags;
        r.mtu = owner_nc.mtu;
        memcpy(r.mac, owner_nc.mac, sizeof(r.mac));
        snprintf(r.desc, sizeof(r.desc), "%.95s", rt__port.desc);
        fds[nfd++] = rt__sh_fd;
        for (int i = 0; i < SH_SLOTS; i++)
            fds[nfd++] = rt__sh->slot[i].efd;
        memset(cbuf, 0, sizeof(cbuf));
        mh.msg_control = cbuf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd);
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfd);
    }
    if (syscall(SYS_sendmsg, c, &mh, MSG_NOSIGNAL) != (long)sizeof(r)) {
        /* The reserved slot is given back by the sweep (10 s). */
        BASE_INFO("join", "process %d: the answer to its join was not sent",
                  (int)cr.pid);
        return;
    }
    if (r.status == 0) {
        BASE_STAT_INC(join_served);
        BASE_INFO("join", "process %d joined the port (slot %d)", (int)cr.pid,
                  r.slot);
    } else if (n > 0) {
        BASE_INFO("join", "process %d cannot join the port: %s", (int)cr.pid,
                  strerror(-r.status));
    }
}

static void *
serve_main(void *arg)
{
    (void)arg;
    base_in_lib = 1;
    for (;;) {
        int fd = __atomic_load_n(&listen_fd, __ATOMIC_RELAXED);
        long c;

        if (fd < 0)
            break;
        c = syscall(SYS_accept4, fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
                continue;
            if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK)
                break;
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
            continue;
        }
        serve_one((int)c);
        syscall(SYS_close, (int)c);
    }
    return NULL;
}

int
rt__join_serve_start(const struct stk_netif_cfg *nc)
{
    struct sockaddr_un a;
    socklen_t al = join_name(&a);
    pthread_attr_t attr;
    pthread_t tid;
    long fd;
    int rc;

    owner_nc = *nc;
    fd = syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (syscall(SYS_bind, (int)fd, &a, al) != 0 ||
        syscall(SYS_listen, (int)fd, 16) != 0) {
        rc = -errno;
        syscall(SYS_close, (int)fd);
        return rc;
    }
    listen_fd = rt__fd_move_high((int)fd);
    /* Signals are blocked here (rt_start): the thread never takes the
     * application's. */
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    rc = pthread_create(&tid, &attr, serve_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        syscall(SYS_close, listen_fd);
        listen_fd = -1;
        return -rc;
    }
    pthread_setname_np(tid, "accel-join");
    return 0;
}

void
rt__join_atfork_child(void)
{
    /* The service thread is the parent's: a child keeping the socket
     * would take connections nobody answers. */
    if (listen_fd >= 0)
        syscall(SYS_close, listen_fd);
    listen_fd = -1;
}

/* ---- the joining process ---------------------------------------------- */

static void
close_fds(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            syscall(SYS_close, fds[i]);
}

int
rt__join(struct stk_netif_cfg *nc, char *reason, size_t rn)
{
    struct sockaddr_un a;
    socklen_t al = join_name(&a);
    struct join_req q = {JOIN_MAGIC, JOIN_VERSION, sizeof(struct sh_region),
                         base_cfg.ip_addr, base_cfg.ip_mask};
    struct join_rep r;
    int fds[1 + SH_SLOTS], nfd = 0, rc;
    char cbuf[CMSG_SPACE(sizeof(fds))];
    struct iovec iov = {&r, sizeof(r)};
    struct msghdr mh = {0};
    struct cmsghdr *cm;
    long fd, n;

    fd = syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(reason, rn, "socket: %s", strerror(errno));
        return -errno;
    }
    set_timeouts((int)fd, JOIN_TIMEOUT_S);
    if (syscall(SYS_connect, (int)fd, &a, al) != 0) {
        rc = -errno;
        snprintf(reason, rn,
                 "it serves no joins: %s (an older accel, or its first "
                 "process has exited)",
                 strerror(-rc));
        syscall(SYS_close, (int)fd);
        return rc;
    }
    if (syscall(SYS_sendto, (int)fd, &q, sizeof(q), MSG_NOSIGNAL, NULL, 0) !=
        (long)sizeof(q)) {
        rc = -errno;
        snprintf(reason, rn, "join request not sent: %s", strerror(-rc));
        syscall(SYS_close, (int)fd);
        return rc;
    }
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof(cbuf);
    n = syscall(SYS_recvmsg, (int)fd, &mh, MSG_WAITALL | MSG_CMSG_CLOEXEC);
    rc = n < 0 ? -errno : 0;
    syscall(SYS_close, (int)fd);
    for (cm = CMSG_FIRSTHDR(&mh); n > 0 && cm != NULL;
         cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            nfd = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            if (nfd > 1 + SH_SLOTS)
                nfd = 1 + SH_SLOTS;
            memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)nfd);
        }
    }
    if (n != (long)sizeof(r) || r.magic != JOIN_MAGIC) {
        close_fds(fds, nfd);
        snprintf(reason, rn, "no answer to the join request%s%s",
                 rc < 0 ? ": " : "", rc < 0 ? strerror(-rc) : "");
        return rc < 0 ? rc : -EPROTO;
    }
    if (r.status != 0) {
        close_fds(fds, nfd);
        snprintf(reason, rn, "the owner refused: %s%s", strerror(-r.status),
                 r.status == -EADDRNOTAVAIL     ? " (ACCEL_IP differs from its)"
                 : r.status == -EPROTONOSUPPORT ? " (another build of libaccel)"
                                                : "");
        return r.status;
    }
    if (nfd != 1 + SH_SLOTS) {
        close_fds(fds, nfd);
        snprintf(reason, rn, "the owner sent %d fds, not %d", nfd,
                 1 + SH_SLOTS);
        return -EPROTO;
    }
    rc = rt__rm_start(fds[0], fds + 1, r.slot, reason, rn);
    syscall(SYS_close, fds[0]); /* mapped, or failed */
    if (rc != 0) {
        close_fds(fds + 1, SH_SLOTS);
        return rc;
    }
    snprintf(rt__port.desc, sizeof(rt__port.desc),
             "joined %.96s (process %d's port)", r.desc, (int)r.pid);
    memset(nc, 0, sizeof(*nc));
    nc->ip = r.ip;
    nc->netmask = r.mask;
    nc->gateway = r.gw;
    nc->csum_flags = r.csum_flags;
    nc->mtu = r.mtu;
    memcpy(nc->mac, r.mac, sizeof(nc->mac));
    return 0;
}
