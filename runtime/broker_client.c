/*
 * The library's side of accel-broker (docs/DESIGN.md section 3,
 * "Privileges"; protocol in broker_proto.h). A process whose effective
 * capabilities lack CAP_NET_RAW, CAP_NET_ADMIN or CAP_BPF (a service
 * running as its own user) cannot make an AF_XDP socket nor load and
 * attach the steering program. Instead of failing, rt_start asks the
 * broker of its network namespace (rt__broker_start, before the EAL):
 *
 *   - HELLO with ACCEL_IFACE, ACCEL_IP and the port's memory: the broker
 *     checks that the user may (group accel) and that the address is not
 *     the kernel's, and attaches accel's program. A refusal is one log
 *     line with the broker's reason, and the process stays on the kernel;
 *   - while the af_xdp PMD sets the port up, libxdp's socket(AF_XDP)
 *     reaches preload's socket() wrapper, which asks rt_broker_socket()
 *     for an unbound XSK from the broker; its setsockopt(XDP_UMEM_REG)
 *     goes to rt_broker_umem_reg(): the broker registers the umem (the
 *     same hugepages, mapped on its side) with its CAP_IPC_LOCK, as the
 *     pinned pages would be charged to this process's RLIMIT_MEMLOCK;
 *     libxdp sets the rings up in this process and binds as always;
 *   - xsk_socket__create is wrapped (cmake/dpdk.cmake, static DPDK only):
 *     the PMD's call goes on with program loading inhibited, and the bound
 *     XSK is sent to the broker, which checks where it is bound and puts
 *     it in the program's xsks_map. bpf_xdp_detach is wrapped too: the
 *     PMD's detach at close is the broker's job;
 *   - the connection stays open for the life of the process family
 *     (inherited by fork, close-on-exec): when its last copy closes, the
 *     broker detaches the program.
 *
 * af_packet needs CAP_NET_RAW and its socket could be rebound to sniff
 * the interface: without privileges only af_xdp is tried (start.c).
 * Raw syscalls only: the interposed libc names must not be re-entered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <linux/if_xdp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker_proto.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"

#define TIMEOUT_S 5

bool rt__broker_active;
bool rt__broker_steers;
static int conn = -1; /* the family's connection to the broker */

/* The capabilities the port needs that this process lacks, as text
 * ("" when it has them all). */
static void
missing_caps(char *out, size_t n)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    uint64_t eff;

    memset(d, 0, sizeof(d));
    out[0] = '\0';
    if (syscall(SYS_capget, &h, d) != 0) {
        snprintf(out, n, "capabilities unknown");
        return;
    }
    eff = (uint64_t)d[0].effective | ((uint64_t)d[1].effective << 32);
#define HAS(c) ((eff >> (c)) & 1u)
    snprintf(out, n, "%s%s%s", HAS(CAP_NET_RAW) ? "" : " CAP_NET_RAW",
             HAS(CAP_NET_ADMIN) ? "" : " CAP_NET_ADMIN",
             HAS(CAP_BPF) || HAS(CAP_SYS_ADMIN) ? "" : " CAP_BPF");
#undef HAS
}

static void
socket_path(char *path, size_t n)
{
    struct stat st;
    unsigned long ns = 0;

    if (syscall(SYS_stat, "/proc/self/ns/net", &st) == 0)
        ns = (unsigned long)st.st_ino;
    snprintf(path, n, AB_DIR "/broker-%lu.sock", ns);
}

/* The header every request carries. */
static void
set_header(struct ab_req *q)
{
    q->magic = AB_MAGIC;
    q->version = AB_VERSION;
    q->size = sizeof(*q);
}

/* One request, one reply; *fd_out receives a passed fd (or -1). */
static int
call(struct ab_req *q, int pass_fd, struct ab_rep *r, int *fd_out)
{
    struct iovec iov = {q, sizeof(*q)};
    char cbuf[AB_CBUF_SIZE];
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    long n;
    int fd;

    memset(r, 0, sizeof(*r)); /* no reason unless the broker gives one */
    set_header(q);
    if (fd_out != NULL)
        *fd_out = -1;
    if (pass_fd >= 0)
        ab_msg_put_fd(&mh, cbuf, pass_fd);
    if (syscall(SYS_sendmsg, conn, &mh, MSG_NOSIGNAL) != (long)sizeof(*q))
        return -errno;
    iov = (struct iovec){r, sizeof(*r)};
    mh = (struct msghdr){.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = cbuf,
                         .msg_controllen = sizeof(cbuf)};
    n = syscall(SYS_recvmsg, conn, &mh, MSG_CMSG_CLOEXEC);
    if (n != (long)sizeof(*r) || r->magic != AB_MAGIC)
        return n < 0 ? -errno : -EPROTO;
    fd = ab_msg_get_fd(&mh);
    if (fd_out != NULL)
        *fd_out = fd;
    else if (fd >= 0)
        syscall(SYS_close, fd);
    r->why[sizeof(r->why) - 1] = '\0';
    return 0;
}

static int
connect_broker(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    struct timeval tv = {TIMEOUT_S, 0};
    long fd;

    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    fd = syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (syscall(SYS_connect, (int)fd, &a, sizeof(a)) != 0) {
        int e = errno;
        syscall(SYS_close, (int)fd);
        return -e;
    }
    syscall(SYS_setsockopt, (int)fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    syscall(SYS_setsockopt, (int)fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    return (int)fd;
}

int
rt__broker_start(const struct base_cfg *cfg)
{
    char caps[64], path[128];
    struct ab_req q;
    struct ab_rep r;
    int rc;

    missing_caps(caps, sizeof(caps));
    if (caps[0] == '\0' || cfg->vdev[0] != '\0')
        return 0; /* privileged, or a vdev (memif needs no privilege) */
#ifndef ACCEL_DPDK_STATIC
    BASE_ERR("start",
             "ACCEL_IFACE=%s: this process (uid %u) lacks%s and this "
             "libaccel.so links DPDK as shared libraries, which cannot go "
             "through accel-broker; build with ACCEL_DPDK_STATIC=ON or run as "
             "root: it uses the kernel",
             cfg->iface, (unsigned)getuid(), caps);
    return -EPERM;
#endif
    socket_path(path, sizeof(path));
    rc = connect_broker(path);
    if (rc < 0) {
        BASE_ERR("start",
                 "ACCEL_IFACE=%s: this process (uid %u) lacks%s and cannot "
                 "reach accel-broker at %s (%s): %s; it uses the kernel",
                 cfg->iface, (unsigned)getuid(), caps, path, strerror(-rc),
                 rc == -EACCES ? "the user is not in the broker's group (add "
                                 "it: usermod -aG accel USER)"
                               : "start accel-broker in this network "
                                 "namespace (in the lab: accel-lab broker "
                                 "start), or run as root");
        return rc;
    }
    conn = rt__fd_move_high(rc);
    memset(&q, 0, sizeof(q));
    q.op = AB_HELLO;
    snprintf(q.u.hello.iface, sizeof(q.u.hello.iface), "%s", cfg->iface);
    q.u.hello.ip = cfg->ip_addr;
    q.u.hello.mask = cfg->ip_mask;
    q.u.hello.queues = cfg->queues;
    q.u.hello.keep = cfg->xdp_keep ? 1u : 0u;
    q.u.hello.umem_bytes = (uint64_t)cfg->mem_mb << 20;
    rc = call(&q, -1, &r, NULL);
    if (rc == 0)
        rc = r.status;
    if (rc != 0) {
        BASE_ERR("start",
                 "ACCEL_IFACE=%s: accel-broker refused this process (uid "
                 "%u, lacking%s): %s; it uses the kernel (accel-broker's log "
                 "says more)",
                 cfg->iface, (unsigned)getuid(), caps,
                 r.why[0] ? r.why : strerror(-rc));
        syscall(SYS_close, conn);
        conn = -1;
        return rc < 0 ? rc : -EPERM;
    }
    rt__broker_active = true;
    rt__broker_steers = true;
    BASE_INFO("start", "lacking%s: the port goes through accel-broker (%s)",
              caps, path);
    return 0;
}

void
rt__broker_stop(void)
{
    if (conn < 0)
        return;
    syscall(SYS_close, conn); /* the broker takes its program back */
    conn = -1;
    rt__broker_active = false;
    rt__broker_steers = false;
}

int
rt_broker_socket(int type)
{
    struct ab_req q;
    struct ab_rep r;
    int rc, fd;

    (void)type; /* the broker's are SOCK_RAW | SOCK_CLOEXEC */
    if (!rt__broker_active)
        return -ENOSYS;
    memset(&q, 0, sizeof(q));
    q.op = AB_XSK_SOCKET;
    rc = call(&q, -1, &r, &fd);
    if (rc == 0)
        rc = r.status;
    if (rc == 0 && fd < 0)
        rc = -EPROTO;
    if (rc != 0) {
        BASE_ERR("port",
                 "accel-broker gave no AF_XDP socket (%s): the port does not "
                 "start; fix what accel-broker's log says, or run as root",
                 r.why[0] ? r.why : strerror(-rc));
        return rc;
    }
    return fd;
}

int
rt_broker_umem_reg(int fd, const void *reg, unsigned int len)
{
    const struct xdp_umem_reg *u = reg;
    struct ab_req q;
    struct ab_rep r;
    int rc;

    if (!rt__broker_active)
        return -ENOSYS;
    if (len < offsetof(struct xdp_umem_reg, flags) + sizeof(u->flags))
        return -EINVAL;
    memset(&q, 0, sizeof(q));
    q.op = AB_UMEM_REG;
    q.u.umem.addr = u->addr;
    q.u.umem.len = u->len;
    q.u.umem.chunk_size = u->chunk_size;
    q.u.umem.headroom = u->headroom;
    q.u.umem.flags = u->flags;
    rc = call(&q, fd, &r, NULL);
    if (rc == 0)
        rc = r.status;
    if (rc != 0)
        BASE_ERR("port",
                 "accel-broker did not register the port's umem (%s): the "
                 "port does not start; fix what accel-broker's log says, or "
                 "run as root",
                 r.why[0] ? r.why : strerror(-rc));
    return rc;
}

int
rt__broker_steer(const char *map, bool add, const void *key, uint32_t klen,
                 const void *val, uint32_t vlen)
{
    struct ab_req q;
    int rc;

    if (!rt__broker_steers)
        return -ENOSYS;
    if (klen > sizeof(q.u.steer.key) || vlen > sizeof(q.u.steer.val))
        return -EINVAL;
    memset(&q, 0, sizeof(q));
    q.op = AB_STEER;
    snprintf(q.u.steer.map, sizeof(q.u.steer.map), "%s", map);
    q.u.steer.op = add ? AB_STEER_ADD : AB_STEER_DEL;
    q.u.steer.klen = klen;
    q.u.steer.vlen = vlen;
    memcpy(q.u.steer.key, key, klen);
    if (val != NULL)
        memcpy(q.u.steer.val, val, vlen);
    /* Not answered: any process of the family may steer, on the one
     * connection they share (SOCK_SEQPACKET: each request whole). */
    q.u.steer.flags = AB_STEER_NOREPLY;
    set_header(&q);
    if (syscall(SYS_sendto, conn, &q, sizeof(q), MSG_NOSIGNAL, NULL, 0) !=
        (long)sizeof(q)) {
        rc = -errno;
        BASE_INFO("port", "accel-broker: %s %s not sent: %s", map,
                  add ? "add" : "delete", strerror(-rc));
        return rc;
    }
    return 0;
}

/* ---- the af_xdp PMD's libxdp and libbpf calls (static DPDK) ---------------
 */

#ifdef ACCEL_DPDK_STATIC
#include <net/if.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <bpf/bpf.h>
#include <linux/if_link.h>
#include <xdp/xsk.h>

int __real_xsk_socket__create(struct xsk_socket **xsk, const char *ifname,
                              __u32 queue_id, struct xsk_umem *umem,
                              struct xsk_ring_cons *rx,
                              struct xsk_ring_prod *tx,
                              const struct xsk_socket_config *config);
int __wrap_xsk_socket__create(struct xsk_socket **xsk, const char *ifname,
                              __u32 queue_id, struct xsk_umem *umem,
                              struct xsk_ring_cons *rx,
                              struct xsk_ring_prod *tx,
                              const struct xsk_socket_config *config);
int __real_bpf_xdp_detach(int ifindex, __u32 flags,
                          const struct bpf_xdp_attach_opts *opts);
int __wrap_bpf_xdp_detach(int ifindex, __u32 flags,
                          const struct bpf_xdp_attach_opts *opts);
int __real_bpf_xdp_attach(int ifindex, int prog_fd, __u32 flags,
                          const struct bpf_xdp_attach_opts *opts);
int __wrap_bpf_xdp_attach(int ifindex, int prog_fd, __u32 flags,
                          const struct bpf_xdp_attach_opts *opts);

int
__wrap_xsk_socket__create(struct xsk_socket **xsk, const char *ifname,
                          __u32 queue_id, struct xsk_umem *umem,
                          struct xsk_ring_cons *rx, struct xsk_ring_prod *tx,
                          const struct xsk_socket_config *config)
{
    struct xsk_socket_config c = *config;
    struct ab_req q;
    struct ab_rep r;
    int rc, fd;

    if (!rt__broker_active && rt__xdp_prog.xsks_fd < 0)
        return __real_xsk_socket__create(xsk, ifname, queue_id, umem, rx, tx,
                                         config);
    /* Our program is attached already (the broker's, or the one this
     * process attached or adopted: xdpsteer.c); libxdp must not load its
     * own (without CAP_BPF it could not). */
    c.libxdp_flags |= XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
    rc = __real_xsk_socket__create(xsk, ifname, queue_id, umem, rx, tx, &c);
    if (rc != 0)
        return rc;
    fd = xsk_socket__fd(*xsk);
    memset(&r, 0, sizeof(r));
    if (!rt__broker_active) {
        rc = bpf_map_update_elem(rt__xdp_prog.xsks_fd, &queue_id, &fd, 0);
        rc = rc == 0 ? 0 : -errno;
    } else {
        memset(&q, 0, sizeof(q));
        q.op = AB_XSK_ATTACH;
        q.u.xsk.queue = queue_id;
        rc = call(&q, fd, &r, NULL);
        if (rc == 0)
            rc = r.status;
    }
    if (rc != 0) {
        BASE_ERR("port",
                 "%s did not steer queue %u to the XSK (%s): the port does "
                 "not start; check that ACCEL_QUEUES matches the interface's "
                 "queues%s",
                 rt__broker_active ? "accel-broker" : "the XDP program's map",
                 queue_id, r.why[0] ? r.why : strerror(-rc),
                 rt__broker_active ? " and what accel-broker's log says" : "");
        xsk_socket__delete(*xsk);
        *xsk = NULL;
        return rc < 0 ? rc : -EPERM;
    }
    return 0;
}

/* The PMD detaches the interface's program at close (bpf_xdp_attach with
 * fd -1, or bpf_xdp_detach; no XDP_FLAGS_REPLACE): not the broker's (it
 * detaches it), and not ours, kept for the next process (xdpsteer.c);
 * with ACCEL_XDP_KEEP=0 rt__xdp_steer_leave detaches it, naming it with
 * XDP_FLAGS_REPLACE, as every detach of the library's own does. */
static bool
pmd_detach_skipped(int ifindex, __u32 flags)
{
    int fd;

    if (flags & XDP_FLAGS_REPLACE)
        return false;
    if (rt__broker_active)
        return true;
    fd = rt__xdpprog_attached(ifindex);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

int
__wrap_bpf_xdp_detach(int ifindex, __u32 flags,
                      const struct bpf_xdp_attach_opts *opts)
{
    if (pmd_detach_skipped(ifindex, flags))
        return 0;
    return __real_bpf_xdp_detach(ifindex, flags, opts);
}

int
__wrap_bpf_xdp_attach(int ifindex, int prog_fd, __u32 flags,
                      const struct bpf_xdp_attach_opts *opts)
{
    if (prog_fd < 0 && pmd_detach_skipped(ifindex, flags))
        return 0;
    return __real_bpf_xdp_attach(ifindex, prog_fd, flags, opts);
}

/* SIOCSIFFLAGS that sets the flags the interface has: done, without the
 * CAP_NET_ADMIN the kernel asks even for that. rte_eth_dev_start restores
 * the promiscuous flag (off) through it, and fails the start otherwise. */
int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...);

int
__wrap_ioctl(int fd, unsigned long req, ...)
{
    struct ifreq cur;
    va_list ap;
    void *arg;

    va_start(ap, req);
    arg = va_arg(ap, void *);
    va_end(ap);
    if (rt__broker_active && req == SIOCSIFFLAGS && arg != NULL) {
        const struct ifreq *want = arg;

        memset(&cur, 0, sizeof(cur));
        memcpy(cur.ifr_name, want->ifr_name, sizeof(cur.ifr_name));
        if (__real_ioctl(fd, SIOCGIFFLAGS, &cur) == 0 &&
            cur.ifr_flags == want->ifr_flags)
            return 0;
    }
    return __real_ioctl(fd, req, arg);
}
#endif /* ACCEL_DPDK_STATIC */
