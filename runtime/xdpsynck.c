/*
 * SYN cookies in the XDP program (runtime/xdp/synck.bpf.h): the stack's
 * link op syn_cookies lands here while a listener's SYNs find its backlog
 * full, at most every 100 ms per listener. The listener's port goes into
 * the program's accel_synck map with a deadline a second on, the ISN's
 * secret, and the SYN-ACK's MSS, window and scale, and until then the
 * program answers its SYNs itself, as the stack would. When the deadline
 * passes the SYNs reach the stack again; while the flood lasts the stack
 * asks again at once.
 *
 * XDP_TX must reach the wire. A NIC's driver sends the frame itself; a
 * veth hands it to its peer's XDP receive ring, which exists only when the
 * peer has an XDP program of its own, and otherwise counts it in
 * xdp_tx_errors. So the interface's ethtool counters are read at each ask:
 * when the transmit errors grew by at least half the cookies the program
 * sent since the last ask, its answers are being lost, the entry goes, and
 * this process leaves the cookies to the stack (one warning). Until
 * cookies were seen to leave, an ask is a probe of 50 ms, not a second:
 * where they are lost, only the SYNs of those 50 ms wait for their
 * clients' retransmission.
 *
 * Only the port's owner with the program's fd asks (root or CAP_BPF, no
 * broker: accel-broker does not take this map); the maps are found at
 * start, so fork children (nginx's workers, after they give up root)
 * have them. A process of the family whose own listener never overflowed
 * still takes the ACK of a cookie the program sent for another: it asks
 * the map (rt__xdp_synck_seen). ACCEL_XDP_SYNCOOKIES=0 turns it off. The
 * cookies the program sent are counted per CPU in accel_synck_n, for the whole
 * interface, and added to the counter tcp_syncookies_xdp at each ask and at
 * exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "rt_int.h"
#include "stats.h"
#include "stk.h"
#include "xdp/steer.h"

/* How long the program answers after an ask (the stack asks again when
 * SYNs reach it past this: stack/syncookie.c XDP_ASK_NS), and after the first
 * asks, until some of its cookies were seen to leave (a probe: were they
 * lost, the clients behind them resend their SYNs after 1 s). */
#define SYNCK_ARM_NS 1100000000ull
#define SYNCK_PROBE_NS 50000000ull

/* -1: not looked for yet; -2: not there (or given up). */
static int synck_fd = -1, sent_fd = -1;
static uint64_t sent_last;  /* accel_synck_n's total at the last sample */
static uint64_t txerr_last; /* the interface's XDP_TX errors then */
static bool txerr_known;
static bool tx_works; /* cookies left and the transmit errors did not grow */

static uint64_t
mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns's clock */
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t sent_total(void);
static bool xdp_tx_errors(uint64_t *out);

static bool
maps(void)
{
    if (synck_fd == -1) {
        synck_fd = rt__xdp_steer_map_fd(base_cfg.iface, ACCEL_SYNCK_MAP);
        sent_fd = rt__xdp_steer_map_fd(base_cfg.iface, ACCEL_SYNCK_SENT_MAP);
        if (synck_fd < 0 || sent_fd < 0) {
            BASE_INFO("port",
                      "cannot reach the XDP program's SYN cookie map on %s "
                      "(%s): the stack answers SYN floods itself",
                      base_cfg.iface,
                      strerror(synck_fd < 0 ? -synck_fd : -sent_fd));
            if (synck_fd >= 0)
                syscall(SYS_close, synck_fd);
            if (sent_fd >= 0)
                syscall(SYS_close, sent_fd);
            synck_fd = sent_fd = -2;
        } else {
            /* the program's counts so far are earlier processes' */
            sent_last = sent_total();
            txerr_known = xdp_tx_errors(&txerr_last);
        }
    }
    return synck_fd >= 0;
}

/* The cookies the program sent, summed over the CPUs; 0 on error. */
static uint64_t
sent_total(void)
{
    int ncpu = libbpf_num_possible_cpus();
    uint64_t *v, sum = 0;
    uint32_t k = 0;

    if (ncpu <= 0 || (v = calloc((size_t)ncpu, sizeof(*v))) == NULL)
        return 0;
    if (bpf_map_lookup_elem(sent_fd, &k, v) == 0)
        for (int i = 0; i < ncpu; i++)
            sum += v[i];
    free(v);
    return sum;
}

/* The sum of the interface's ethtool counters named *xdp_tx_err* (veth:
 * rx_queue_N_xdp_tx_errors); false when it has none or they cannot be
 * read. */
static bool
xdp_tx_errors(uint64_t *out)
{
    struct {
        struct ethtool_sset_info hdr;
        uint32_t len;
    } si = {
        .hdr = {.cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_STATS}};
    struct ethtool_gstrings *names = NULL;
    struct ethtool_stats *vals = NULL;
    struct ifreq ifr;
    uint32_t n;
    bool found = false;
    /* Raw system calls: at exit the application's close() wrapper is not
     * bypassed (no wrapper is on the stack), and a socket made through it
     * would be an accelerated one. */
    long fd = syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return false;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", base_cfg.iface);
    ifr.ifr_data = (void *)&si;
    if (syscall(SYS_ioctl, (int)fd, SIOCETHTOOL, &ifr) != 0 ||
        si.hdr.sset_mask == 0 || (n = si.len) == 0 || n > 4096)
        goto out;
    names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
    vals = calloc(1, sizeof(*vals) + (size_t)n * sizeof(uint64_t));
    if (names == NULL || vals == NULL)
        goto out;
    names->cmd = ETHTOOL_GSTRINGS;
    names->string_set = ETH_SS_STATS;
    names->len = n;
    ifr.ifr_data = (void *)names;
    if (syscall(SYS_ioctl, (int)fd, SIOCETHTOOL, &ifr) != 0)
        goto out;
    vals->cmd = ETHTOOL_GSTATS;
    vals->n_stats = n;
    ifr.ifr_data = (void *)vals;
    if (syscall(SYS_ioctl, (int)fd, SIOCETHTOOL, &ifr) != 0)
        goto out;
    *out = 0;
    for (uint32_t i = 0; i < n && i < vals->n_stats; i++) {
        char name[ETH_GSTRING_LEN + 1];

        memcpy(name, names->data + (size_t)i * ETH_GSTRING_LEN,
               ETH_GSTRING_LEN);
        name[ETH_GSTRING_LEN] = '\0';
        if (strstr(name, "xdp_tx_err") != NULL) {
            *out += vals->data[i];
            found = true;
        }
    }
out:
    free(names);
    free(vals);
    syscall(SYS_close, (int)fd);
    return found;
}

/* Count the program's cookies since the last sample; true when the
 * interface's XDP_TX errors say they were lost. */
static bool
sample(void)
{
    uint64_t sent = sent_total(), err = 0, d_sent;
    bool lost = false, have = xdp_tx_errors(&err);

    d_sent = sent >= sent_last ? sent - sent_last : 0;
    BASE_STAT_ADD(tcp_syncookies_xdp, d_sent);
    sent_last = sent;
    if (have && txerr_known && d_sent > 0 && err - txerr_last >= d_sent / 2)
        lost = true;
    else if (d_sent > 0 && (txerr_known || !have))
        tx_works = true;
    txerr_last = err;
    txerr_known = have;
    return lost;
}

bool
rt__xdp_synck_open(void)
{
    return maps();
}

#define SEEN_NS (120ull * 1000000000ull) /* the stack's COOKIE_RECENT_NS */
#define SEEN_NEG_NS 10000000ull

bool
rt__xdp_synck_seen(uint16_t port)
{
    static uint16_t neg_port;
    static uint64_t neg_until;
    struct accel_synck v;
    uint16_t k = htons(port);
    uint64_t now = mono_ns();

    if (synck_fd < 0 || (port == neg_port && now < neg_until))
        return false;
    if (bpf_map_lookup_elem(synck_fd, &k, &v) == 0 &&
        now < v.until_ns + SEEN_NS)
        return true;
    neg_port = port;
    neg_until = now + SEEN_NEG_NS;
    return false;
}

void
rt__xdp_synck_arm(const struct stk_synck_arm *a)
{
    struct accel_synck v = {
        .mss4 = a->mss4, .mss6 = a->mss6, .wnd = a->wnd, .wscale = a->wscale};
    uint16_t port = htons(a->port);
    int rc;

    if (!maps())
        return;
    if (sample()) {
        BASE_WARN("port",
                  "%s: the XDP program's SYN cookies do not reach the wire "
                  "(XDP_TX errors; a veth whose peer has no XDP program): "
                  "the stack answers SYN floods itself",
                  base_cfg.iface);
        BASE_STAT_INC(tcp_syncookies_xdp_lost);
        bpf_map_delete_elem(synck_fd, &port);
        syscall(SYS_close, synck_fd);
        syscall(SYS_close, sent_fd);
        synck_fd = sent_fd = -2;
        return;
    }
    v.until_ns = mono_ns() + (tx_works ? SYNCK_ARM_NS : SYNCK_PROBE_NS);
    memcpy(v.key, a->key, sizeof(v.key));
    rc = bpf_map_update_elem(synck_fd, &port, &v, BPF_ANY);
    if (rc != 0)
        BASE_INFO("port", "XDP SYN cookies for port %u: %s", a->port,
                  strerror(rc == -1 ? errno : -rc));
    else
        BASE_STAT_INC(tcp_syncookies_xdp_asks);
}

void
rt__xdp_synck_close(void)
{
    if (synck_fd >= 0) {
        (void)sample();
        syscall(SYS_close, synck_fd);
        syscall(SYS_close, sent_fd);
        synck_fd = sent_fd = -1;
    }
}
