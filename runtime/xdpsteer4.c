/*
 * Sharing the interface's addresses with the kernel (base_cfg.ip_shared:
 * ACCEL_IP unset, or the kernel's own address on ACCEL_IFACE; ip6_shared
 * the same for IPv6, whose address is ACCEL_DST6_SHARED in accel_dst6). accel's
 * XDP program, loaded with accel_shared set, hands the stack only what these
 * maps name (runtime/xdp/steer.h), and everything else, ICMP echo, ARP
 * requests, the kernel's own ports and connections, to the kernel:
 *
 *   accel_lport  (TCP|UDP, port)      ports the stack serves: its
 *                                     listeners and UDP sockets
 *   accel_flow4  (peer, ports, TCP)   its other connections: active opens,
 *   accel_flow6                       and those a closed listener left
 *   accel_arp    neighbour            its pending ARP requests and
 *   accel_nd     target               neighbour solicitations
 *
 * The stack reports through its link ops (stack/steer.c); this file keeps
 * the maps. A port counts its sockets in this process; its entry goes
 * with the last one, unless another process of the family (fork, join)
 * still listens on it (the shared service table says), and before it
 * goes, the connections still on the port get entries of their own. A
 * killed process's listeners leave with its slot's cleanup
 * (rt__steer4_svc_gone); its connections' entries age out of the LRU map.
 *
 * The local port of every accelerated socket is also held by its kernel
 * socket (preload/sock_ctl.c binds it first), so the kernel never picks
 * one of the stack's ports, nor the stack one of the kernel's; after an
 * active open's socket is closed, a descriptor of its kernel socket stays
 * open here until the pcb is gone (TIME-WAIT included: rt__steer4_hold),
 * so the kernel cannot reuse the port toward the same peer meanwhile.
 *
 * The maps' fds: the port's owner finds them once the program is
 * attached; fork children inherit them; a joined process finds them at
 * its first report (root, or CAP_BPF, as for joining at all). Without
 * privileges the broker holds them: each change is a request to it
 * (rt__broker_steer, not answered), and it adds a port or connection
 * only if a kernel socket of the process's user holds the port. Nothing
 * here is on the per-frame path: one map update per listen, per UDP
 * socket, per active open and per ARP request, none per accepted
 * connection. Stack lock held in every call from the stack.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "log.h"
#include "rt_int.h"
#include "share_int.h"
#include "stats.h"
#include "stk.h"
#include "xdp/steer.h"

bool rt__steer4_on;

/* -1: not looked for yet; -2: not there. */
static int lport_fd = -1, flow_fd = -1, arp_fd = -1, flow6_fd = -1, nd_fd = -1;
static bool map_warned;

/* This process's sockets per served port. */
#define PORT_REFS 256
static struct {
    uint8_t proto;
    uint16_t port; /* host order */
    uint32_t n;
} refs[PORT_REFS];

/* The connections with an entry in accel_flow4/6 made by this process,
 * and the kernel descriptor each holds after its socket closed (-1:
 * none): chained hash, by the 4-tuple. */
struct held {
    struct held *next;
    struct stk_flow f;
    int fd;
};
#define HELD_BUCKETS 4096
static struct held *held[HELD_BUCKETS];

static uint32_t
held_hash(const struct stk_flow *f)
{
    uint32_t h = f->rip * 2654435761u ^ ((uint32_t)f->lport << 16 | f->rport);

    return (h ^ (h >> 15)) & (HELD_BUCKETS - 1);
}

static bool
same_flow(const struct stk_flow *a, const struct stk_flow *b)
{
    return a->v6 == b->v6 && a->lport == b->lport && a->rport == b->rport &&
           a->rip == b->rip && a->lip == b->lip &&
           (!a->v6 || (memcmp(a->rip6, b->rip6, 16) == 0 &&
                       memcmp(a->lip6, b->lip6, 16) == 0));
}

static struct held **
held_find(const struct stk_flow *f)
{
    struct held **p = &held[held_hash(f)];

    while (*p != NULL && !same_flow(&(*p)->f, f))
        p = &(*p)->next;
    return p;
}

static void
held_note(const struct stk_flow *f, bool on)
{
    struct held **p = held_find(f), *h = *p;

    if (on && h == NULL) {
        h = malloc(sizeof(*h));
        if (h == NULL)
            return; /* the port is then freed at close: a narrower race */
        h->next = NULL;
        h->f = *f;
        h->fd = -1;
        *p = h;
    } else if (!on && h != NULL) {
        *p = h->next;
        if (h->fd >= 0)
            close(h->fd);
        free(h);
    }
}

void
rt__steer4_hold(const struct stk_flow *f, int fd)
{
    struct held *h = *held_find(f);

    if (h == NULL || h->fd >= 0) {
        close(fd);
        return;
    }
    h->fd = fd;
}

static int
bpf_rc(int rc)
{
    if (rc >= 0)
        return 0;
    return rc == -1 ? -errno : rc;
}

static bool
maps(void)
{
    if (rt__broker_steers)
        return true; /* the broker's maps: update() asks it */
    if (lport_fd == -1) {
        lport_fd = rt__xdp_steer_map_fd(base_cfg.iface, ACCEL_LPORT_MAP);
        flow_fd = rt__xdp_steer_map_fd(base_cfg.iface, ACCEL_FLOW4_MAP);
        arp_fd = rt__xdp_steer_map_fd(base_cfg.iface, ACCEL_ARP_MAP);
        flow6_fd = rt__xdp_steer_map_fd(base_cfg.iface, ACCEL_FLOW6_MAP);
        nd_fd = rt__xdp_steer_map_fd(base_cfg.iface, ACCEL_ND_MAP);
        if (lport_fd < 0 || flow_fd < 0 || arp_fd < 0 || flow6_fd < 0 ||
            nd_fd < 0) {
            if (!map_warned)
                BASE_WARN("port",
                          "cannot reach the steering maps of the XDP program "
                          "on %s (%s): the stack's ports stay with the "
                          "kernel; run as root",
                          base_cfg.iface,
                          strerror(lport_fd < 0 ? -lport_fd : ENOENT));
            map_warned = true;
            lport_fd = flow_fd = arp_fd = flow6_fd = nd_fd = -2;
        }
    }
    return lport_fd >= 0;
}

int
rt__steer4_setup(void)
{
    rt__steer4_on = true;
    return maps() ? 0 : -ENOENT;
}

static void
report(int rc, const char *what)
{
    if (rc != 0 && rc != -ENOENT) {
        BASE_STAT_INC(steer_map_fail);
        BASE_INFO("port", "steering map %s failed: %s", what, strerror(-rc));
    }
}

/* Add (val != NULL) or delete the entry key of the map name (fd here):
 * through the broker when the process has no privileges (it checks each
 * addition: the port must be this user's; not answered). */
static int
update(int fd, const char *name, const void *key, uint32_t klen,
       const void *val, uint32_t vlen)
{
    if (rt__broker_steers)
        return rt__broker_steer(name, val != NULL, key, klen, val, vlen);
    return val != NULL ? bpf_rc(bpf_map_update_elem(fd, key, val, BPF_ANY))
                       : bpf_rc(bpf_map_delete_elem(fd, key));
}

static void
lport_set(int proto, uint16_t port, bool on)
{
    struct accel_lport_key k = {.proto = (uint8_t)proto, .port = htons(port)};
    uint32_t v = 1;

    if (!maps())
        return;
    report(update(lport_fd, ACCEL_LPORT_MAP, &k, sizeof(k), on ? &v : NULL,
                  sizeof(v)),
           on ? "add port" : "remove port");
}

/* Another process of the family still listens on port. */
static bool
family_holds(int proto, uint16_t port)
{
    bool held;

    if (!rt__shared || proto != IPPROTO_TCP)
        return false;
    rt__sh_port_lock();
    held = rt__sh_svc_find(proto, port, false) != NULL;
    rt__sh_port_unlock();
    return held;
}

void
rt__steer4_port(int proto, uint16_t port, bool on)
{
    int free_i = -1, i;

    for (i = 0; i < PORT_REFS; i++) {
        if (refs[i].n != 0 && refs[i].proto == proto && refs[i].port == port)
            break;
        if (refs[i].n == 0 && free_i < 0)
            free_i = i;
    }
    if (on) {
        if (i < PORT_REFS) {
            refs[i].n++;
            return;
        }
        if (free_i >= 0) {
            refs[free_i].proto = (uint8_t)proto;
            refs[free_i].port = port;
            refs[free_i].n = 1;
        }
        lport_set(proto, port, true);
        return;
    }
    if (i < PORT_REFS && --refs[i].n != 0)
        return;
    if (family_holds(proto, port))
        return;
    /* The connections still on the port keep reaching the stack. */
    if (proto == IPPROTO_TCP)
        stk_steer_adopt_port(port);
    lport_set(proto, port, false);
}

void
rt__steer4_svc_gone(int proto, uint16_t port)
{
    if (rt__steer4_on)
        lport_set(proto, port, false);
}

void
rt__steer4_flow(const struct stk_flow *f, bool on)
{
    struct accel_flow4_key k = {.raddr = f->rip,
                                .lport = htons(f->lport),
                                .rport = htons(f->rport),
                                .proto = IPPROTO_TCP};
    struct accel_flow6_key k6 = {.lport = htons(f->lport),
                                 .rport = htons(f->rport),
                                 .proto = IPPROTO_TCP};
    uint32_t v = 1;

    held_note(f, on);
    if (!maps())
        return;
    if (f->v6)
        memcpy(k6.raddr, f->rip6, 16);
    report(f->v6 ? update(flow6_fd, ACCEL_FLOW6_MAP, &k6, sizeof(k6),
                          on ? &v : NULL, sizeof(v))
                 : update(flow_fd, ACCEL_FLOW4_MAP, &k, sizeof(k),
                          on ? &v : NULL, sizeof(v)),
           on ? "add connection" : "remove connection");
}

/* A reply within this long goes to the stack (lwIP's request timeout is
 * longer; a later request makes a new entry). */
#define ARP_WAIT_NS 3000000000ull

static uint64_t
deadline_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns's clock */
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
           ARP_WAIT_NS;
}

void
rt__steer4_arp(uint32_t ip)
{
    uint64_t deadline;

    if (!maps())
        return;
    deadline = deadline_ns();
    report(update(arp_fd, ACCEL_ARP_MAP, &ip, sizeof(ip), &deadline,
                  sizeof(deadline)),
           "add ARP request");
}

void
rt__steer4_nd(const uint8_t target[16])
{
    uint64_t deadline;

    if (!maps())
        return;
    deadline = deadline_ns();
    report(update(nd_fd, ACCEL_ND_MAP, target, 16, &deadline, sizeof(deadline)),
           "add neighbour solicitation");
}
