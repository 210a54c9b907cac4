/*
 * Bringing the data path up, once per process, from the first thread that
 * needs it (preload's pl_sock_accelerate calls rt_start() with base_in_lib
 * set, at the first call that puts a socket on the stack). Order:
 * configuration, EAL, port (ACCEL_VDEV as given; or ACCEL_IFACE hot-plugged as
 * af_xdp, falling back to af_packet when ACCEL_DRIVER=auto), the stack on top
 * of it, the progress thread. All signals are blocked while this runs, so
 * threads DPDK creates (the EAL interrupt thread) and ours never take the
 * application's signals. The result, good or bad, is remembered: a failure is
 * logged once, with the variable to change, and every later call returns the
 * same -errno so the application stays on the kernel stack.
 *
 * Fork: once a fork shares the port (share.c: af_xdp, af_packet and memif
 * ports), parent and child both use it, each its own copy of the stack;
 * when it cannot be shared, rt_atfork_child() marks the data path unusable
 * in the child, which never touches DPDK (no bursts, no rte_eal_cleanup,
 * which would close the parent's port). A child's counters restart from
 * zero. See docs/DESIGN.md section 8.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_log.h>

#include "clock.h"
#include "impair.h"
#include "inlib.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "stats.h"
#include "statreg.h"
#include "stk.h"
#include "xdpsteer6.h"

static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static int start_state; /* 0: not tried, 1: up, <0: failed with -errno */
static _Atomic bool started;

bool
rt_started(void)
{
    return atomic_load_explicit(&started, memory_order_acquire);
}

bool
rt_configured(void)
{
    if (base_cfg_load() != 0)
        return false;
    return base_cfg.ip[0] != '\0' &&
           (base_cfg.iface[0] != '\0' || base_cfg.vdev[0] != '\0');
}

/* One attempt: probe the vdev for driver on ACCEL_IFACE, start the port. */
static int
try_driver_once(int driver, uint32_t *csum, uint8_t mac[6])
{
    char devargs[BASE_CFG_STR_MAX + 160], prog[64] = "";
    uint16_t port_id;
    int rc, init_rc = 0, prog_fd = -1;
    bool steered = false;
    uint64_t t = base_now_ns();

    /* af_xdp runs our XDP program (xdpsteer.c): the kernel keeps the
     * interface's traffic that is not the stack's. */
    if (driver == BASE_DRIVER_AF_XDP && base_cfg.xdp_steer &&
        !rt__broker_active) {
        struct rt__xdpprog_cfg sc = {.ip = base_cfg.ip_addr,
                                     .mask = base_cfg.ip_mask,
                                     .shared = base_cfg.ip_shared};

#ifdef ACCEL_DPDK_STATIC
        rc = rt__xdp_steer_attach(&sc); /* or adopt the one left attached */
        steered = rc == 0;
        if (!steered)
            rt__xdp_steer_clear_stale(base_cfg.iface);
#else
        rt__xdp_steer_clear_stale(base_cfg.iface);
        prog_fd = rt__xdp_steer_open(&sc, prog, sizeof(prog));
        rc = prog_fd < 0 ? prog_fd : 0;
        steered = prog_fd >= 0;
#endif
        if (!steered && (base_cfg.ip_shared || base_cfg.ip6_shared))
            return rc; /* the kernel's traffic would go to the stack */
        if (!steered) {
            BASE_WARN("start",
                      "XDP steering program unavailable (%s): DPDK's default "
                      "program takes every frame of %s's queue from the "
                      "kernel; ACCEL_LOG_LEVEL=info shows why: fix that, or "
                      "set ACCEL_XDP_STEER=0 to choose DPDK's program",
                      strerror(-rc), base_cfg.iface);
        }
    } else if (driver == BASE_DRIVER_AF_XDP && !rt__broker_active) {
        /* DPDK's default program needs the interface free of ours. */
        rt__xdp_steer_clear_stale(base_cfg.iface);
    }
    /* Several queues: af_xdp binds one XSK per NIC queue (veth refuses:
     * it reports no channels); af_packet opens one socket per queue in a
     * PACKET_FANOUT_HASH group, the kernel spreading flows over them. */
    if (driver == BASE_DRIVER_AF_XDP)
        snprintf(devargs, sizeof(devargs),
                 "net_af_xdp0,iface=%s,start_queue=0,queue_count=%u,busy_"
                 "budget=0%s%s",
                 base_cfg.iface, base_cfg.queues, prog[0] ? ",xdp_prog=" : "",
                 prog);
    else
        snprintf(devargs, sizeof(devargs), "net_af_packet0,iface=%s,qpairs=%u",
                 base_cfg.iface, base_cfg.queues);
    rt__port.ms.prog = base_ms_lap(&t);
    rt__port_fds_scan_begin();
    rc = rt__eal_probe(devargs, &port_id);
    rt__port.ms.probe = base_ms_lap(&t);
    /* The PMD makes the XSKs (and, given xdp_prog, loads the program)
     * when the queues are set up (port init). */
    if (rc == 0)
        init_rc = rt__port_init(port_id, &base_cfg, csum, mac);
    rt__port_fds_scan_end();
    if (prog_fd >= 0)
        close(prog_fd);
    if (rc != 0) {
        BASE_INFO("start", "probe of %s failed: %s", devargs, strerror(-rc));
        if (steered)
            rt__xdp_steer_leave();
        return rc;
    }
    rc = init_rc;
    if (rc != 0) {
        rt__port_close(port_id);
        rt__eal_remove(port_id);
        if (steered)
            rt__xdp_steer_leave();
        return rc;
    }
    if (base_cfg.ip_shared || base_cfg.ip6_shared) {
        rc = steered || rt__broker_active ? rt__steer4_setup() : -ENOTSUP;
        if (rc != 0) {
            rt__port_close(port_id);
            rt__eal_remove(port_id);
            if (steered)
                rt__xdp_steer_leave();
            return rc;
        }
    }
    /* The program is attached and the stack's MAC known: its IPv6
     * addresses can go into the program's map (xdpsteer6.c). */
    if ((steered || rt__broker_active) && base_cfg.has_ip6) {
        int rc6 = rt__xdp_steer_setup6(base_cfg.iface, mac, &base_cfg.ip6_addr,
                                       base_cfg.ip6_shared);

        if (rc6 != 0)
            BASE_WARN("start",
                      "IPv6 steering on %s unavailable (%s): IPv6 frames "
                      "stay with the kernel; run as root, or unset ACCEL_IP6 "
                      "if the stack need not serve IPv6",
                      base_cfg.iface, strerror(-rc6));
    }
    snprintf(rt__port.desc, sizeof(rt__port.desc), "%s on %s%s%s",
             driver == BASE_DRIVER_AF_XDP ? "af_xdp" : "af_packet",
             base_cfg.iface, rt__port.nq > 1 ? rt__port_queues_desc() : "",
             rt__broker_active ? " (steered, accel-broker)"
             : steered         ? " (steered)"
                               : "");
    return 0;
}

/* Try one driver on ACCEL_IFACE. With quiet set (a fallback follows),
 * failures are logged at info level only, and DPDK's own error lines are
 * held back unless ACCEL_LOG_LEVEL is info or debug. */
static int
try_iface_driver(int driver, uint32_t *csum, uint8_t mac[6], bool quiet)
{
    uint32_t dpdk_level = rte_log_get_global_level();
    int rc;

    rt__port_fail_level = quiet ? BASE_LOG_INFO : BASE_LOG_ERROR;
    if (quiet && base_log_level < BASE_LOG_INFO)
        rte_log_set_global_level(RTE_LOG_CRIT);
    rc = try_driver_once(driver, csum, mac);
    /* The kernel releases a closed XSK's hold on its queue from a work
     * queue: a process started right after another one on the interface
     * exited (a service restart) can find the queue still taken and its
     * XSK refused (EINVAL or EBUSY) for some milliseconds. */
    for (int i = 0; i < 10 && driver == BASE_DRIVER_AF_XDP &&
                    (rc == -EINVAL || rc == -EBUSY);
         i++) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 20000000};

        BASE_INFO("start",
                  "%s: the AF_XDP socket was refused (%s), maybe an exited "
                  "process's is still being released: again in 20 ms",
                  base_cfg.iface, strerror(-rc));
        nanosleep(&ts, NULL);
        rc = try_driver_once(driver, csum, mac);
    }
    rte_log_set_global_level(dpdk_level);
    rt__port_fail_level = BASE_LOG_ERROR;
    return rc;
}

static int
start_port(uint32_t *csum, uint8_t mac[6])
{
    uint16_t port_id;
    int rc;

    if (base_cfg.vdev[0] != '\0') {
        rc = rt__eal_first_port(&port_id);
        if (rc != 0) {
            BASE_ERR("start",
                     "ACCEL_VDEV=%s: DPDK created no port from it; check the "
                     "vdev string (driver name, options) and the dpdk lines "
                     "above",
                     base_cfg.vdev);
            return rc;
        }
        rt__port_fds_scan_begin();
        rc = rt__port_init(port_id, &base_cfg, csum, mac);
        rt__port_fds_scan_end();
        if (rc != 0)
            BASE_ERR("start",
                     "ACCEL_VDEV=%s: the port did not start (see above); fix "
                     "the vdev string or unset ACCEL_VDEV",
                     base_cfg.vdev);
        return rc;
    }
    /* A shared address needs the steering program: af_packet (and DPDK's
     * default program) would hand the stack the kernel's frames too, and
     * the kernel would answer the stack's connections with resets. */
    if ((base_cfg.ip_shared || base_cfg.ip6_shared) &&
        (base_cfg.driver == BASE_DRIVER_AF_PACKET || !base_cfg.xdp_steer)) {
        BASE_ERR("start",
                 "ACCEL_IP%s=%s is the kernel's address on %s: sharing it "
                 "needs af_xdp with accel's steering program "
                 "(ACCEL_DRIVER=auto or af_xdp, ACCEL_XDP_STEER=1), or give "
                 "the stack an address of its own; the program uses the "
                 "kernel",
                 base_cfg.ip_shared ? "" : "6",
                 base_cfg.ip_shared ? base_cfg.ip : base_cfg.ip6,
                 base_cfg.iface);
        return -ENOTSUP;
    }
    if (base_cfg.ip_shared || base_cfg.ip6_shared) {
        rc = try_iface_driver(BASE_DRIVER_AF_XDP, csum, mac, false);
        if (rc != 0)
            BASE_ERR("start",
                     "ACCEL_IFACE=%s: af_xdp with the steering program did "
                     "not start (%s), and the address %s is shared with the "
                     "kernel, which af_packet cannot do: the program uses "
                     "the kernel (see above; ACCEL_QUEUES must match the "
                     "interface's queues)",
                     base_cfg.iface, strerror(-rc),
                     base_cfg.ip_shared ? base_cfg.ip : base_cfg.ip6);
        return rc;
    }
    /* Without privileges: af_xdp through accel-broker only (a packet
     * socket needs CAP_NET_RAW and could be rebound to sniff). */
    if (rt__broker_active) {
        rc = try_iface_driver(BASE_DRIVER_AF_XDP, csum, mac, false);
        if (rc != 0)
            BASE_ERR("start",
                     "ACCEL_IFACE=%s: af_xdp through accel-broker did not "
                     "start (%s; see above); af_packet needs CAP_NET_RAW, so "
                     "this process uses the kernel: fix the above or run as "
                     "root",
                     base_cfg.iface, strerror(-rc));
        return rc;
    }
    if (base_cfg.driver != BASE_DRIVER_AF_PACKET) {
        rc = try_iface_driver(BASE_DRIVER_AF_XDP, csum, mac,
                              base_cfg.driver == BASE_DRIVER_AUTO);
        if (rc == 0 || base_cfg.driver == BASE_DRIVER_AF_XDP) {
            if (rc != 0)
                BASE_ERR("start",
                         "ACCEL_IFACE=%s: af_xdp did not start (%s); set "
                         "ACCEL_DRIVER=auto or af_packet, or check that the "
                         "interface has ACCEL_QUEUES=%u queues (ethtool -L %s "
                         "combined %u; veth has none: use af_packet)",
                         base_cfg.iface, strerror(-rc), base_cfg.queues,
                         base_cfg.iface, base_cfg.queues);
            return rc;
        }
        BASE_INFO("start", "af_xdp on %s failed (%s); trying af_packet",
                  base_cfg.iface, strerror(-rc));
        /* The steering program the attempt attached or adopted would
         * answer the stack's TCP segments with RSTs (no XSK serves them,
         * runtime/xdp/reset.bpf.h) before af_packet sees them. */
        rt__xdp_steer_clear_stale(base_cfg.iface);
    }
    rc = try_iface_driver(BASE_DRIVER_AF_PACKET, csum, mac, false);
    if (rc != 0)
        BASE_ERR("start",
                 "ACCEL_IFACE=%s: neither af_xdp nor af_packet started (%s); "
                 "run as root (CAP_NET_RAW, CAP_BPF) inside the lab namespace "
                 "accel-a, or set ACCEL_VDEV",
                 base_cfg.iface, strerror(-rc));
    return rc;
}

/* At exit, stop the port so the PMD releases what lives outside the
 * process (af_xdp: the XDP program on the interface; memif: the peer sees
 * a disconnect), unless other processes still share it (fork): then only
 * this process's share is released (runtime/share.c). Only if the stack
 * lock can be had: exit() called from a thread inside the library must
 * not deadlock. DPDK itself (rte_eal_cleanup) is left alone. */
/* Linux keeps sending what a process wrote after it exits, and answers
 * the peer's FIN; our stack leaves with the process. So the exit waits,
 * polling the port, until the peers acknowledged the data and the FINs:
 * as long as they keep acknowledging (each time what is left goes down,
 * EXIT_LINGER_NS more; a slow reader gets every byte, up to
 * EXIT_LINGER_MAX_NS in all, where Linux's orphaned socket would have
 * given up too), and EXIT_LINGER_NS for a peer that acknowledges nothing
 * (a zero window, a dead path). Then up to EXIT_PEER_FIN_NS more for the FINs
 * of the peers that have not closed yet: a peer whose FIN goes unanswered stays
 * in LAST-ACK for minutes. Also with other processes on the port, which would
 * answer such a FIN with a RST: they may be gone by then (nginx's master exits
 * right after its last worker). A peer that keeps its side open longer costs
 * the exit that much at most. Stack lock held. */
#define EXIT_LINGER_NS 3000000000ull
#define EXIT_LINGER_MAX_NS 120000000000ull
#define EXIT_PEER_FIN_NS 500000000ull

/* Wait until nothing is pending or end; with progress_ns, end moves to
 * progress_ns from each moment the unacknowledged bytes went down, up to
 * max. */
static void
linger_until(bool peer_fin, uint64_t end, uint64_t progress_ns, uint64_t max)
{
    struct timespec ts = {0, 200000};
    uint64_t left = stk_pending_bytes(), now;

    while (stk_pending_output(peer_fin) > 0 && (now = base_now_ns()) < end) {
        if (progress_ns != 0) {
            uint64_t l = stk_pending_bytes();

            if (l < left && now + progress_ns > end)
                end = now + progress_ns < max ? now + progress_ns : max;
            left = l;
        }
        rt_poll();
        rt_unlock();
        nanosleep(&ts, NULL);
        rt_lock();
    }
}

static void
linger_at_exit(void)
{
    uint64_t now = base_now_ns();

    rt_set_tx_defer(false);
    linger_until(false, now + EXIT_LINGER_NS, EXIT_LINGER_NS,
                 now + EXIT_LINGER_MAX_NS);
    now = base_now_ns();
    linger_until(true, now + EXIT_PEER_FIN_NS, 0, 0);
}

static pid_t stack_pid; /* the process whose stack this is */

static void
port_close_at_exit(void)
{
    struct timespec ts = {0, 1000000};

    /* A vfork child shares our memory but is not us: hands off. */
    if (!rt_started() || !rt__port.up || getpid() != stack_pid)
        return;
    for (int i = 0; i < 100; i++) {
        if (rt__trylock()) {
            uint16_t port_id = rt__port.port_id;
            /* Close what the application left open, as Linux would at
             * exit (stack/exit.c); first, the connections queued on the
             * listeners this process shares go to the others. */
            rt__dp->leave();
            stk_close_all_at_exit();
            rt__tx_send_all();
            linger_at_exit();
            rt__impair_exit();
            rt__xdp_synck_close();
            if (rt__share_exit() && rt__mf_may_close()) {
                rt__mf_own_closing();
                rt__port_close(port_id);
                rte_eth_dev_close(port_id);
                if (base_cfg.vdev[0] == '\0' && !rt__broker_active)
                    rt__xdp_steer_leave();
            }
            /* With the port marked down, later calls (the application's
             * own atexit handlers closing sockets) no longer touch DPDK. */
            rt__port.up = false;
            rt_unlock();
            return;
        }
        nanosleep(&ts, NULL);
    }
}

/* ACCEL_TCP_CC's algorithm. "kernel": the one the kernel gives new TCP
 * sockets of this process's network namespace, when the stack has it. */
static int
tcp_cc_choice(void)
{
    const char *w = base_cfg_enum_word("ACCEL_TCP_CC", base_cfg.tcp_cc);
    char name[64] = "";
    FILE *f;
    int cc;

    if (strcmp(w, "kernel") != 0)
        return stk_tcp_cc_find(w);
    f = fopen("/proc/sys/net/ipv4/tcp_congestion_control", "re");
    if (f != NULL) {
        if (fgets(name, sizeof(name), f) == NULL)
            name[0] = '\0';
        fclose(f);
    }
    name[strcspn(name, "\n")] = '\0';
    cc = name[0] != '\0' ? stk_tcp_cc_find(name) : -1;
    if (cc < 0) {
        BASE_INFO("tcp",
                  "the kernel's TCP congestion control \"%s\" "
                  "(net.ipv4.tcp_congestion_control) is not one accel has: "
                  "using cubic (ACCEL_TCP_CC=cubic|reno|bbr chooses)",
                  name);
        cc = stk_tcp_cc_find("cubic");
    }
    return cc;
}

/* The groups the stack's IPv6 sockets join reach it through the XDP
 * program's map (no-op without the steering program). Stack lock held. */
static void
steer_group6(void *ctx, const uint8_t group[16], bool add)
{
    (void)ctx;
    (void)rt__xdp_steer_group6(group, add);
}

/* The shared-address steering (xdpsteer4.c), as the stack's link ops. */
static void
steer_port(void *ctx, int proto, uint16_t port, bool on)
{
    (void)ctx;
    rt__steer4_port(proto, port, on);
}

static void
steer_flow(void *ctx, const struct stk_flow *f, bool on)
{
    (void)ctx;
    rt__steer4_flow(f, on);
}

static void
steer_arp(void *ctx, uint32_t ip)
{
    (void)ctx;
    rt__steer4_arp(ip);
}

static void
steer_nd(void *ctx, const uint8_t target[16])
{
    (void)ctx;
    rt__steer4_nd(target);
}

static void
synck_arm(void *ctx, const struct stk_synck_arm *a)
{
    (void)ctx;
    rt__xdp_synck_arm(a);
}

static bool
synck_seen(void *ctx, uint16_t port)
{
    (void)ctx;
    return rt__xdp_synck_seen(port);
}

/* ACCEL_IP6 and ACCEL_GATEWAY6 on the netif (stack lock held). */
static int
start_ip6(void)
{
    char a[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN];
    int rc;

    if (!base_cfg.has_ip6)
        return 0;
    rc = stk_netif_set_ip6(&base_cfg.ip6_addr, base_cfg.ip6_prefix);
    if (rc == 0 && base_cfg.has_gw6)
        rc = stk_netif_set_gw6(&base_cfg.gw6_addr);
    inet_ntop(AF_INET6, &base_cfg.ip6_addr, a, sizeof(a));
    inet_ntop(AF_INET6, &base_cfg.gw6_addr, g, sizeof(g));
    if (rc != 0)
        BASE_ERR("start",
                 "ACCEL_IP6=%s/%u: the stack refused it (%s); give a global "
                 "or unique local unicast address, or unset ACCEL_IP6",
                 a, base_cfg.ip6_prefix, strerror(-rc));
    else
        BASE_INFO("stack", "netif ip6 %s/%u%s%s", a, base_cfg.ip6_prefix,
                  base_cfg.has_gw6 ? " gateway " : "",
                  base_cfg.has_gw6 ? g : "");
    return rc;
}

/* The stack on top of the port (or the joined port), then the progress
 * thread; the port's owner also serves joins. */
static int
start_stack(struct stk_netif_cfg *nc)
{
    int rc, ifindex;

    nc->ip = base_cfg.ip_addr;
    nc->netmask = base_cfg.ip_mask;
    nc->gateway = base_cfg.gw_addr;
    nc->mtu = (uint16_t)base_cfg.mtu;
    nc->link.tx_alloc = rt__dp->tx_alloc;
    nc->link.tx_send = rt__dp->tx_send;
    nc->link.ctx = NULL;
    nc->link.mc_group6 = steer_group6;
    if (rt__steer4_on) {
        nc->link.steer_port = steer_port;
        nc->link.steer_flow = steer_flow;
        nc->link.arp_request = base_cfg.ip_shared ? steer_arp : NULL;
        nc->link.nd_request = base_cfg.ip6_shared ? steer_nd : NULL;
    }
    /* The port's owner on an af_xdp port with accel's program (a joined
     * process, or one served by the broker, cannot reach its maps). */
    if (rt__port.is_xdp && base_cfg.xdp_steer && base_cfg.xdp_syncookies &&
        base_cfg.vdev[0] == '\0' && !rt__broker_active && !rt__remote &&
        rt__xdp_synck_open()) {
        nc->link.syn_cookies = synck_arm;
        nc->link.syn_cookies_seen = synck_seen;
    }
    rc = rt__impair_start();
    if (rc != 0)
        return rc;
    rt__loop_reset();
    rt__isn_key_load();
    /* The kernel's index of ACCEL_IFACE names the stack's interface
     * (ip_mreqn, scope ids, IP_PKTINFO); a vdev has none (0). */
    ifindex = base_cfg.vdev[0] == '\0' && base_cfg.iface[0] != '\0'
                  ? (int)if_nametoindex(base_cfg.iface)
                  : 0;
    rt_lock();
    stk_set_ifindex(ifindex);
    {
        struct stk_tcp_cfg tc = {.rto_min_ms = base_cfg.tcp_rto_min_ms,
                                 .cc = tcp_cc_choice()};

        stk_tcp_configure(&tc); /* both in range: checked by base_cfg */
    }
    rc = stk_init(nc);
    if (rc == 0)
        rc = start_ip6();
    if (rc == 0)
        rt__dp->stack_up();
    rt_unlock();
    if (rc != 0) {
        BASE_ERR("start",
                 "the stack did not start (%s): the program uses the "
                 "kernel; fix the line above if there is one, else report "
                 "this",
                 strerror(-rc));
        return rc;
    }
    /* The live state region (accel-stat) is made here, while the low fds
     * are still reserved, not by the progress thread's first tick: its
     * files (the region, /proc reads) opened by another thread while the
     * application runs would take the application's lowest free number
     * for a moment, and a socket() or pipe() made then would get another
     * number than under Linux. */
    base_sr_ensure(rt_lock, rt_unlock);
    if (base_cfg.progress_usec > 0) {
        rc = rt__progress_start(base_cfg.progress_usec);
        if (rc != 0)
            return rc;
    }
    if (!rt__remote && base_cfg.iface[0] != '\0' && base_cfg.vdev[0] == '\0' &&
        base_cfg.join) {
        rc = rt__join_serve_start(nc);
        if (rc != 0)
            BASE_INFO("start",
                      "cannot serve joins (%s): exec'd children of this "
                      "process will use the kernel",
                      strerror(-rc));
    }
    return 0;
}

/* ACCEL_IFACE is driven by another accel process (owner): join its port
 * (share_join.c) or stay on the kernel, saying why. */
static int
start_joined(const char *owner, struct stk_netif_cfg *nc)
{
    char why[200] = "ACCEL_JOIN=0";
    int rc = -EBUSY;

    memset(nc, 0, sizeof(*nc));
    if (base_cfg.join)
        rc = rt__join(nc, why, sizeof(why));
    if (rc != 0) {
        BASE_ERR("start",
                 "ACCEL_IFACE=%s is already driven by accel process %s and "
                 "this process cannot join it (%s): it uses the kernel. Give "
                 "it its own interface, or start it as a fork child of that "
                 "process",
                 base_cfg.iface, owner, why);
        return -EBUSY;
    }
    /* The owner's settings (nc), not this process's environment. */
    base_cfg.ip_addr = nc->ip;
    base_cfg.ip_mask = nc->netmask;
    base_cfg.gw_addr = nc->gateway;
    base_cfg.mtu = nc->mtu;
    /* The owner shares its address with the kernel (as this process's own
     * configuration says, the environment being inherited): this process
     * reports its ports and connections to the same maps. */
    if (base_cfg.ip_shared || base_cfg.ip6_shared) {
        rc = rt__steer4_setup();
        if (rc != 0) {
            BASE_ERR("start",
                     "ACCEL_IFACE=%s: this process would join process %s's "
                     "port on the address it shares with the kernel, but "
                     "cannot reach the steering maps (%s): it uses the "
                     "kernel",
                     base_cfg.iface, owner, strerror(-rc));
            return rc;
        }
    }
    return start_stack(nc);
}

/* Bring the data path up, timing each phase for the start-up info line. */
static int
do_start(void)
{
    struct stk_netif_cfg nc;
    uint64_t t0 = base_now_ns(), t = t0;
    double ms_eal = 0, ms_port = 0, ms_stack = 0, ms_total;
    int rc;

    rc = base_cfg_load();
    base_stats_register_exit();
    if (rc != 0)
        return rc; /* logged by base_cfg_load */
    if (base_cfg.ip[0] == '\0') {
        BASE_ERR("start",
                 "ACCEL_IP is not set and ACCEL_IFACE=%s has no IPv4 "
                 "address to share; set ACCEL_IP=a.b.c.d/len (in the lab: "
                 "ACCEL_IP=10.200.0.2/24, see `accel-lab up`)",
                 base_cfg.iface);
        return -EINVAL;
    }
    if (base_cfg.iface[0] == '\0' && base_cfg.vdev[0] == '\0') {
        BASE_ERR("start",
                 "no port: set ACCEL_IFACE=<interface> (in the lab namespace "
                 "accel-a, see `accel-lab up`) or ACCEL_VDEV=<dpdk vdev>");
        return -EINVAL;
    }
    if (base_cfg.vdev[0] == '\0') {
        char owner[32];

        rc = rt__iface_lock(base_cfg.iface, owner, sizeof(owner));
        if (rc == -EBUSY) {
            rc = start_joined(owner, &nc);
            if (rc != 0) {
                if (rt__remote) {
                    rt_lock();
                    (void)rt__share_exit();
                    rt__port.up = false;
                    rt_unlock();
                }
                return rc;
            }
            goto up;
        }
        if (rc != 0)
            return rc;
        /* No CAP_NET_RAW, CAP_BPF, CAP_NET_ADMIN: accel-broker, or the
         * kernel with one line saying why. */
        rc = rt__broker_start(&base_cfg);
        if (rc != 0)
            return rc;
    }
    (void)base_ms_lap(&t); /* configuration and the interface lock */
    rc = rt__eal_init(&base_cfg);
    if (rc != 0)
        return rc;
    ms_eal = base_ms_lap(&t);
    memset(&nc, 0, sizeof(nc));
    rc = start_port(&nc.csum_flags, nc.mac);
    if (rc != 0)
        return rc;
    ms_port = base_ms_lap(&t);
    rt__eal_unlink_hugepages();
    rc = start_stack(&nc);
    if (rc != 0) {
        rt__port_close(rt__port.port_id);
        return rc;
    }
    ms_stack = base_ms_lap(&t);
    base_stats_set_port_dump(rt__port_stats_dump);
up:
    BASE_INFO("start",
              "data path up: %s, ip %s, mac %02x:%02x:%02x:%02x:%02x:%02x, "
              "rx wait: %s",
              rt__port.desc, base_cfg.ip, nc.mac[0], nc.mac[1], nc.mac[2],
              nc.mac[3], nc.mac[4], nc.mac[5],
              rt__port.wait_kind == RT__WAIT_SOCK   ? "socket"
              : rt__port.wait_kind == RT__WAIT_INTR ? "rx interrupt"
                                                    : "none (1 ms sleeps)");
    t = t0;
    ms_total = base_ms_lap(&t);
    if (rt__remote)
        BASE_INFO("start", "start-up took %.1f ms (joined)", ms_total);
    else
        BASE_INFO("start",
                  "start-up took %.1f ms (eal %.1f, port %.1f [program %.1f, "
                  "probe %.1f, pool %.1f, queues %.1f, start %.1f], stack "
                  "%.1f, other %.1f)",
                  ms_total, ms_eal, ms_port, rt__port.ms.prog,
                  rt__port.ms.probe, rt__port.ms.pool, rt__port.ms.queues,
                  rt__port.ms.start, ms_stack,
                  ms_total - ms_eal - ms_port - ms_stack);
    base_stats_set_datapath(rt__port.desc);
    base_sr_set_port_fn(rt__port_sr_fill);
    base_sr_set_datapath(rt__remote ? BASE_SR_JOINED : BASE_SR_UP,
                         rt__port.desc, base_cfg.iface, base_cfg.ip,
                         base_cfg.ip6, rt__remote ? 0 : (int)getpid());
    stack_pid = getpid();
    atexit(port_close_at_exit);
    return 0;
}

int
rt_start(void)
{
    sigset_t all, old;
    int rc, saved_inlib = base_in_lib, saved_errno = errno;

    if (rt_started())
        return 0;
    pthread_mutex_lock(&start_mu);
    if (start_state != 0) {
        rc = start_state < 0 ? start_state : 0;
        pthread_mutex_unlock(&start_mu);
        return rc;
    }
    base_in_lib = 1;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rt__fd_reserve_low();
    rc = do_start();
    if (rc != 0)
        rt__broker_stop(); /* the broker takes its program back */
    rt__fd_release_low();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    base_in_lib = saved_inlib;
    start_state = rc == 0 ? 1 : (rc < 0 ? rc : -EINVAL);
    if (rc == 0)
        atomic_store_explicit(&started, true, memory_order_release);
    pthread_mutex_unlock(&start_mu);
    errno = saved_errno;
    return rc == 0 ? 0 : start_state;
}

void
rt_exit_drain(void)
{
    port_close_at_exit();
}

/* fork, in the parent before it (the stack lock is held across the fork,
 * so the child's copy of the stack is consistent): share the port with the
 * child if it can be (runtime/share.c). */
static bool fork_shares;

void
rt_atfork_prepare(void)
{
    fork_shares = false;
    if (!rt_started())
        return;
    rt_lock();
    /* Deferred output leaves from the parent: the child's copy of the
     * list would send the same segments again. */
    stk_output_flush();
    rt__impair_atfork_prepare();
    fork_shares = rt__share_prepare();
}

bool
rt_atfork_parent(void)
{
    bool shared = fork_shares;

    if (!rt_started())
        return false;
    if (shared)
        stk_fork_freeze(false);
    rt_unlock();
    return shared;
}

void
rt_atfork_child(void)
{
    bool was_started = rt_started();

    rt__loop_atfork_child(); /* a fresh stack lock, not held */
    rt__join_atfork_child();
    rt__block_atfork_child();
    rt__progress_atfork_child();
    base_clock_atfork_child();
    base_log_atfork_child();
    pthread_mutex_init(&start_mu, NULL);
    base_sr_atfork_child(); /* the parent's region is the parent's */
    memset(&base_stats, 0, sizeof(base_stats));
    if (was_started && fork_shares) {
        /* The parent's port, shared: this child polls it too. */
        rt__port_atfork_child();
        rt__share_child();
        stack_pid = getpid();
        stk_fork_freeze(true);
        base_stats_set_datapath(rt__port.desc);
        base_sr_set_datapath(BASE_SR_UP, rt__port.desc, base_cfg.iface,
                             base_cfg.ip, base_cfg.ip6, 0);
        return;
    }
    /* The child shares the parent's port memory but owns none of it:
     * never touch DPDK here. Later calls get -ENODEV and stay on the
     * kernel. */
    rt__mf_child();
    atomic_store(&started, false);
    start_state = -ENODEV;
    rt__port.up = false;
    rt__port.ntx = 0;
    base_stats_set_datapath(NULL);
    base_sr_set_datapath(BASE_SR_KERNEL_ONLY, NULL, NULL, NULL, NULL, 0);
    base_stats_set_port_dump(NULL);
}
