/*
 * The data path of a process that joined another's port (share_join.c):
 * no DPDK here, the port's mbufs are in the owner's memory.
 *
 *   receive: the family's port lock holder dispatches frames to this
 *            process's slot as to any other and copies them into its cells
 *            (share_rx.c, rt__sh_pump_remote); rt__rm_drain inputs them,
 *            under the stack lock, and wakes on the slot's eventfd as a
 *            fork child does on its ring;
 *   send:    frames go out through a packet socket of this process's own,
 *            bound to the interface (the frames are whole: the stack fills
 *            in every checksum), after the flow reports that must precede
 *            them are on record (port lock), as a family process does
 *            before its burst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/ethernet.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "impair.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "share_int.h"
#include "stats.h"
#include "stk.h"

#define RM_FRAME 2048

bool rt__remote;
int rt__rm_efd[SH_SLOTS];
static int pkt_fd = -1;
static uint8_t (*txf)[RM_FRAME];
static uint16_t txlen[RT__MAX_BURST];

static int
open_packet(const char *iface, char *reason, size_t rn)
{
    struct sockaddr_ll sll;
    struct ifreq ifr;
    int one = 1, e;
    long fd;

    fd = syscall(SYS_socket, AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        e = errno;
        snprintf(reason, rn, "packet socket: %s (needs CAP_NET_RAW)",
                 strerror(e));
        return -e;
    }
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = 0; /* sends only: receives nothing */
    if (syscall(SYS_ioctl, (int)fd, SIOCGIFINDEX, &ifr) != 0 ||
        (sll.sll_ifindex = ifr.ifr_ifindex,
         syscall(SYS_bind, (int)fd, &sll, sizeof(sll)) != 0)) {
        e = errno;
        snprintf(reason, rn, "packet socket on %s: %s", iface, strerror(e));
        syscall(SYS_close, (int)fd);
        return -e;
    }
    /* Straight to the driver, as DPDK's af_packet does. */
    syscall(SYS_setsockopt, (int)fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
            sizeof(one));
    return rt__fd_move_high((int)fd);
}

int
rt__rm_start(int memfd, const int *efds, int slot, char *reason, size_t rn)
{
    size_t size = sizeof(struct sh_region);
    struct sh_region *r;
    struct sh_slot *s;
    struct stat st;
    int exp = SLOT_RESERVED, fd, rc;
    void *p, *tb;

    if (slot < 0 || slot >= SH_SLOTS || syscall(SYS_fstat, memfd, &st) != 0 ||
        (size_t)st.st_size != size) {
        snprintf(reason, rn, "the shared region is not the expected one");
        return -EPROTO;
    }
    fd = open_packet(base_cfg.iface, reason, rn);
    if (fd < 0)
        return fd;
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    tb = mmap(NULL, (size_t)RT__MAX_BURST * RM_FRAME, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || tb == MAP_FAILED) {
        rc = -errno;
        snprintf(reason, rn, "cannot map the shared region: %s", strerror(-rc));
        if (p != MAP_FAILED)
            munmap(p, size);
        if (tb != MAP_FAILED)
            munmap(tb, (size_t)RT__MAX_BURST * RM_FRAME);
        syscall(SYS_close, fd);
        return rc;
    }
    r = p;
    s = &r->slot[slot];
    /* The token says this process lives, as in a fork child. */
    if (pthread_mutex_lock(&s->token) == EOWNERDEAD)
        pthread_mutex_consistent(&s->token);
    atomic_store(&s->pid, (int)getpid());
    s->map_addr = (uintptr_t)p;
    if (!atomic_compare_exchange_strong(&s->state, &exp, SLOT_LIVE)) {
        pthread_mutex_unlock(&s->token);
        munmap(p, size);
        munmap(tb, (size_t)RT__MAX_BURST * RM_FRAME);
        syscall(SYS_close, fd);
        snprintf(reason, rn, "the reserved slot expired");
        return -ETIMEDOUT;
    }
    for (int i = 0; i < SH_SLOTS; i++)
        rt__rm_efd[i] = rt__fd_move_high(efds[i]);
    pkt_fd = fd;
    txf = tb;
    rt__sh = r;
    rt__sh_me = slot;
    /* Active from the start: a process joins to use the network, and the
     * answer to its first ARP request may reach the port before its first
     * drain would mark it (to_all gives ARP only to active slots; the
     * connect then waited for a timer, 100 ms). */
    atomic_store(&rt__sh->slot[slot].active, true);
    rt__port.up = true;
    rt__port.burst =
        base_cfg.burst > RT__MAX_BURST ? RT__MAX_BURST : base_cfg.burst;
    rt__port.rx_budget = base_cfg.rx_budget < rt__port.burst
                             ? rt__port.burst
                             : base_cfg.rx_budget;
    rt__port.wait_kind = RT__WAIT_SOCK; /* sleeps on the slot's eventfd */
    rt__port.nwait = 0;
    rt__port.nq = 1;
    rt__port.txq = 0;
    rt__port.ntx = 0;
    rt__remote = true;
    rt__shared = true;
    rt__dp_select();
    return 0;
}

void
rt__rm_stack_up(void)
{
    stk_set_flow_ops(&rt__sh_flow_ops);
}

/* ---- receive (stack lock held) ---------------------------------------- */

#define FAMILY_CHECK_NS 1000000000ull

/* Frames reach a joined process only while a process of the owner's
 * family dispatches them. When the last one has exited, the port is
 * closed: say so once, with what to do. */
static void
check_family(uint64_t now)
{
    static uint64_t next;
    static bool warned;

    if (warned || now < next)
        return;
    next = now + FAMILY_CHECK_NS;
    rt__sh_port_lock();
    for (int i = 0; i < SH_SLOTS; i++) {
        struct sh_slot *s = &rt__sh->slot[i];

        if (!s->remote && atomic_load(&s->state) == SLOT_LIVE &&
            rt__sh_slot_alive(i)) {
            rt__sh_port_unlock();
            return;
        }
    }
    rt__sh_port_unlock();
    warned = true;
    BASE_STAT_INC(join_family_gone);
    BASE_WARN("join",
              "the processes driving %s have all exited: this process "
              "joined their port and its accelerated sockets no longer "
              "receive; restart it to drive the interface itself",
              base_cfg.iface);
}

bool
rt__rm_pending(void)
{
    struct sh_xring *x = &rt__sh->xr[rt__sh_me];

    return atomic_load_explicit(&x->head, memory_order_relaxed) !=
           atomic_load_explicit(&x->tail, memory_order_acquire);
}

int
rt__rm_drain(void)
{
    struct sh_xring *x = &rt__sh->xr[rt__sh_me];
    uint32_t h = atomic_load_explicit(&x->head, memory_order_relaxed);
    uint32_t t = atomic_load_explicit(&x->tail, memory_order_acquire);
    int n = 0;

    if (h == t)
        check_family(base_now_ns());
    if (!atomic_load_explicit(&rt__sh->slot[rt__sh_me].active,
                              memory_order_relaxed))
        atomic_store(&rt__sh->slot[rt__sh_me].active, true);
    while (h != t && n < (int)rt__port.rx_budget) {
        const struct sh_cell *c = &x->c[h & (SH_XCELLS - 1)];

        /* Each burst of frames its own time (see loop.c). */
        if (n != 0 && n % rt__port.burst == 0)
            stk_clock_turn(base_now_ns());
        stk_input_lid(c->data, c->len, c->lid); /* copies the frame */
        atomic_store_explicit(&x->head, ++h, memory_order_release);
        n++;
    }
    BASE_STAT_ADD(join_rx_frames, (uint64_t)n);
    return n;
}

/* ---- send (stack lock held) ------------------------------------------- */

uint8_t *
rt__rm_tx_alloc(void *ctx, uint16_t len, void **handle)
{
    (void)ctx;
    if (!rt__port.up)
        return NULL;
    if (len > RM_FRAME) {
        BASE_STAT_INC(tx_drop_toolong);
        return NULL;
    }
    if (rt__port.ntx >= rt__port.burst)
        rt__rm_flush();
    *handle = (void *)(uintptr_t)rt__port.ntx;
    return txf[rt__port.ntx];
}

void
rt__rm_tx_send(void *ctx, void *handle, uint16_t len)
{
    uint32_t i = (uint32_t)(uintptr_t)handle;

    (void)ctx;
    txlen[i] = len;
    __atomic_store_n(&rt__port.ntx, i + 1, __ATOMIC_RELAXED);
    if (rt__port.ntx >= rt__port.burst)
        rt__tx_flush();
}

void
rt__rm_flush(void)
{
    struct mmsghdr mm[RT__MAX_BURST];
    struct iovec iov[RT__MAX_BURST];
    uint32_t n = rt__port.ntx, sent = 0;
    uint64_t bytes = 0;
    int tries = 0;

    if (rt__impair_active()) { /* ACCEL_TEST_IMPAIR (impair_port.c) */
        n = rt__impair_tx_copies(txf[0], RM_FRAME, txlen, n);
        __atomic_store_n(&rt__port.ntx, n, __ATOMIC_RELAXED);
    }
    if (n == 0)
        return;
    /* An owner on record before its SYN or SYN-ACK leaves. */
    if (rt__sh_nops > 0) {
        if (rt__sh_port_held) {
            rt__sh_ops_apply();
        } else {
            rt__sh_port_lock();
            rt__sh_ops_apply();
            rt__sh_port_unlock();
        }
    }
    memset(mm, 0, sizeof(mm[0]) * n);
    for (uint32_t i = 0; i < n; i++) {
        iov[i] = (struct iovec){txf[i], txlen[i]};
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
    }
    for (uint32_t i = 0; i < n;) {
        long r = syscall(SYS_sendmmsg, pkt_fd, mm + i, n - i, 0);

        if (r > 0) {
            for (uint32_t j = i; j < i + (uint32_t)r; j++)
                bytes += txlen[j];
            sent += (uint32_t)r;
            i += (uint32_t)r;
            tries = 0;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else if (r < 0 && (errno == ENOBUFS || errno == EAGAIN) &&
                   tries++ < 4) {
            continue;
        } else {
            /* Dropped as a full ring drops it: TCP sends it again. */
            BASE_STAT_INC(join_tx_drop);
            BASE_STAT_INC(tx_drop_full);
            i++;
            tries = 0;
        }
    }
    BASE_STAT_ADD(tx_frames, sent);
    BASE_STAT_ADD(tx_bytes, bytes);
    __atomic_store_n(&rt__port.ntx, 0, __ATOMIC_RELAXED);
}
