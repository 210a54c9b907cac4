/*
 * The port's own counters, for the ACCEL_STATS=1 exit dump: drops that
 * happen below the stack and that base_stats cannot see. It reads
 * rte_eth_stats (imissed, ierrors, oerrors, rx_nombuf), every non-zero
 * extended counter of the PMD, and, for af_xdp, the kernel's
 * XDP_STATISTICS of each AF_XDP socket (rx ring full, fill ring empty,
 * invalid descriptors) and the mbufs still in use (a leak). The port is closed
 * at exit before the dump runs (atexit order), so rt__port_close() takes a
 * snapshot first; the dump prints the snapshot, or reads the counters then if
 * the port is still up. The text is kept in a fixed buffer: nothing is
 * allocated at exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/if_xdp.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "log.h"
#include "rt_int.h"
#include "statreg.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define MAX_XSTATS 256

static char snap[8192];
static size_t snap_len;
static bool have_snap;

static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
add(const char *fmt, ...)
{
    va_list ap;
    int n;

    if (snap_len >= sizeof(snap))
        return;
    va_start(ap, fmt);
    n = vsnprintf(snap + snap_len, sizeof(snap) - snap_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        snap_len += (size_t)n < sizeof(snap) - snap_len
                        ? (size_t)n
                        : sizeof(snap) - snap_len - 1;
}

static void
add_eth_stats(uint16_t port)
{
    struct rte_eth_stats st;

    if (rte_eth_stats_get(port, &st) != 0)
        return;
    add("port_ipackets %llu\nport_opackets %llu\nport_imissed %llu\n"
        "port_ierrors %llu\nport_oerrors %llu\nport_rx_nombuf %llu\n",
        (unsigned long long)st.ipackets, (unsigned long long)st.opackets,
        (unsigned long long)st.imissed, (unsigned long long)st.ierrors,
        (unsigned long long)st.oerrors, (unsigned long long)st.rx_nombuf);
}

static void
add_xstats(uint16_t port)
{
    static struct rte_eth_xstat xs[MAX_XSTATS];
    static struct rte_eth_xstat_name names[MAX_XSTATS];
    int n = rte_eth_xstats_get(port, xs, MAX_XSTATS);

    if (n <= 0 || n > MAX_XSTATS ||
        rte_eth_xstats_get_names(port, names, MAX_XSTATS) != n)
        return;
    for (int i = 0; i < n; i++)
        if (xs[i].value != 0 && xs[i].id < (uint64_t)n)
            add("port_x_%s %llu\n", names[xs[i].id].name,
                (unsigned long long)xs[i].value);
}

static void
add_xdp_stats(void)
{
    for (int i = 0; i < rt__port.nwait; i++) {
        struct xdp_statistics x;
        socklen_t len = sizeof(x);

        memset(&x, 0, sizeof(x));
        if (syscall(SYS_getsockopt, rt__port.wait_fds[i], SOL_XDP,
                    XDP_STATISTICS, &x, &len) != 0)
            continue;
        add("xsk%d_rx_dropped %llu\nxsk%d_rx_ring_full %llu\n"
            "xsk%d_rx_fill_ring_empty %llu\nxsk%d_rx_invalid_descs %llu\n"
            "xsk%d_tx_invalid_descs %llu\nxsk%d_tx_ring_empty %llu\n",
            i, (unsigned long long)x.rx_dropped, i,
            (unsigned long long)x.rx_ring_full, i,
            (unsigned long long)x.rx_fill_ring_empty_descs, i,
            (unsigned long long)x.rx_invalid_descs, i,
            (unsigned long long)x.tx_invalid_descs, i,
            (unsigned long long)x.tx_ring_empty_descs);
    }
}

void
rt__port_stats_snapshot(void)
{
    int saved = errno;

    if (!rt__port.up)
        return;
    snap_len = 0;
    snap[0] = '\0';
    add_eth_stats(rt__port.port_id);
    add_xstats(rt__port.port_id);
    add_xdp_stats();
    if (rt__port.pool != NULL) /* a leak shows as mbufs still in use */
        add("pool_in_use %u\npool_size %u\n",
            rte_mempool_in_use_count(rt__port.pool), rt__port.pool->size);
    have_snap = true;
    errno = saved;
}

void
rt__port_stats_dump(long pid)
{
    char line[256];

    if (rt__port.up)
        rt__port_stats_snapshot();
    if (!have_snap)
        return;
    for (const char *p = snap; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        const char *sp = memchr(p, ' ', len);
        int n;

        if (sp == NULL)
            break;
        n = snprintf(line, sizeof(line), "accel[%ld] stats: %-20.*s %.*s\n",
                     pid, (int)(sp - p), p, (int)(len - (size_t)(sp - p) - 1),
                     sp + 1);
        if (n > 0)
            base_log_raw(line, (unsigned long)(n < (int)sizeof(line)
                                                   ? n
                                                   : (int)sizeof(line) - 1));
        p += len + (nl != NULL ? 1 : 0);
    }
}

/* The port part of the live state region's snapshot (base/statreg.c),
 * under the stack lock: ethdev's counters and the pool's use. */
void
rt__port_sr_fill(struct base_sr_port *p)
{
    struct rte_eth_stats st;

    p->up = rt__port.up;
    p->queues = rt__port.nq;
    if (!rt__port.up || rt__remote)
        return;
    if (rte_eth_stats_get(rt__port.port_id, &st) == 0) {
        p->ipackets = st.ipackets;
        p->opackets = st.opackets;
        p->ibytes = st.ibytes;
        p->obytes = st.obytes;
        p->imissed = st.imissed;
        p->ierrors = st.ierrors;
        p->oerrors = st.oerrors;
        p->rx_nombuf = st.rx_nombuf;
    }
    if (rt__port.pool != NULL) {
        p->pool_size = rt__port.pool->size;
        p->pool_in_use = rte_mempool_in_use_count(rt__port.pool);
    }
}
