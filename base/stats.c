/*
 * Stack counters (stats.def) and their text form. base_stats_write() writes
 * "name value" lines to an fd; base_stats_dump() is the atexit hook used with
 * ACCEL_STATS=1: it prints every counter to stderr (or ACCEL_LOG_FILE),
 * prefixed "accel[pid] stats:", and says whether the data path ran in this
 * process, so a zero counter cannot be mistaken for a port that saw nothing,
 * then the port's own counters through the hook the DPDK side registers.
 * Output is formatted into a buffer and written with raw write(2).
 */
#include "stats.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfg.h"
#include "log.h"

static struct base_counters own;
struct base_counters *base_stats_p = &own;

void
base_stats_place(struct base_counters *p)
{
    if (p == NULL) {
        if (base_stats_p != &own)
            memcpy(&own, base_stats_p, sizeof(own));
        p = &own;
    }
    base_stats_p = p;
}

static char datapath[160];
static void (*port_dump)(long pid);

void
base_stats_set_port_dump(void (*fn)(long pid))
{
    port_dump = fn;
}

static const struct {
    const char *name;
    size_t off;
} stat_rows[] = {
#define BASE_STAT(field, doc) {#field, offsetof(struct base_counters, field)},
#include "stats.def"
#undef BASE_STAT
};

#define NSTATS (sizeof(stat_rows) / sizeof(stat_rows[0]))

const char *
base_stats_name(size_t i)
{
    return i < NSTATS ? stat_rows[i].name : "";
}

static uint64_t
stat_get(size_t i)
{
    uint64_t v;

    memcpy(&v, (const char *)&base_stats + stat_rows[i].off, sizeof(v));
    return v;
}

void
base_stats_write(int fd)
{
    int saved = errno;
    char line[128];

    for (size_t i = 0; i < NSTATS; i++) {
        int n = snprintf(line, sizeof(line), "%s %llu\n", stat_rows[i].name,
                         (unsigned long long)stat_get(i));
        (void)base_write_all(fd, line, (size_t)n);
    }
    errno = saved;
}

void
base_stats_set_datapath(const char *desc)
{
    if (desc == NULL)
        datapath[0] = '\0';
    else
        snprintf(datapath, sizeof(datapath), "%s", desc);
}

/* "12.3 MB" */
static void
fmt_bytes(uint64_t b, char *buf, size_t n)
{
    if (b >= 10000000u)
        snprintf(buf, n, "%.1f MB", (double)b / 1e6);
    else if (b >= 10000u)
        snprintf(buf, n, "%.1f kB", (double)b / 1e3);
    else
        snprintf(buf, n, "%llu bytes", (unsigned long long)b);
}

/* ACCEL_STATS=1: a few lines, the drops only when there were any. */
static void
dump_summary(long pid)
{
    const struct base_counters *c = base_stats_p;
    char line[512], rx[32], tx[32];
    size_t at;
    bool any = false;
    int n;

    fmt_bytes(c->rx_bytes, rx, sizeof(rx));
    fmt_bytes(c->tx_bytes, tx, sizeof(tx));
    n = snprintf(line, sizeof(line),
                 "accel[%ld] stats: frames in %llu (%s), out %llu (%s); "
                 "sockets: %llu accelerated, %llu on the kernel\n",
                 pid, (unsigned long long)c->rx_frames, rx,
                 (unsigned long long)c->tx_frames, tx,
                 (unsigned long long)c->sock_accel,
                 (unsigned long long)c->sock_kernel);
    base_log_raw(line, (unsigned long)n);
    n = snprintf(line, sizeof(line),
                 "accel[%ld] stats: TCP: %llu connected, %llu accepted, %llu "
                 "reset by us; %llu segments retransmitted, %llu timeouts\n",
                 pid, (unsigned long long)c->tcp_connect,
                 (unsigned long long)c->tcp_accept,
                 (unsigned long long)c->tcp_rst_sent,
                 (unsigned long long)c->tcp_retrans_segs,
                 (unsigned long long)c->tcp_rto);
    base_log_raw(line, (unsigned long)n);
    n = snprintf(line, sizeof(line), "accel[%ld] stats: drops:", pid);
    at = (size_t)n;
    for (size_t i = 0; i < NSTATS && at < sizeof(line) - 64; i++) {
        if (strstr(stat_rows[i].name, "drop") == NULL || stat_get(i) == 0)
            continue;
        n = snprintf(line + at, sizeof(line) - at, " %s %llu",
                     stat_rows[i].name, (unsigned long long)stat_get(i));
        at += (size_t)n;
        any = true;
    }
    if (any) {
        line[at++] = '\n';
        base_log_raw(line, (unsigned long)at);
    }
    n = snprintf(line, sizeof(line),
                 "accel[%ld] stats: every counter: ACCEL_STATS=2 (or "
                 "accel-stat -a %ld while it runs)\n",
                 pid, pid);
    base_log_raw(line, (unsigned long)n);
}

void
base_stats_dump(void)
{
    int saved = errno;
    long pid = (long)syscall(SYS_getpid);
    char line[256];
    int n;

    if (!base_cfg.stats)
        return;
    if (datapath[0] != '\0')
        n = snprintf(line, sizeof(line), "accel[%ld] stats: data path: %s\n",
                     pid, datapath);
    else
        n = snprintf(line, sizeof(line),
                     "accel[%ld] stats: data path was not started in this "
                     "process (no accelerated socket was needed, or the "
                     "start failed: see the log above)\n",
                     pid);
    base_log_raw(line, (unsigned long)n);
    if (base_cfg.stats == 1) {
        dump_summary(pid);
        errno = saved;
        return;
    }
    for (size_t i = 0; i < NSTATS; i++) {
        n = snprintf(line, sizeof(line), "accel[%ld] stats: %-20s %llu\n", pid,
                     stat_rows[i].name, (unsigned long long)stat_get(i));
        base_log_raw(line, (unsigned long)n);
    }
    if (port_dump != NULL && datapath[0] != '\0')
        port_dump(pid);
    errno = saved;
}

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void
register_exit(void)
{
    if (base_cfg.stats)
        atexit(base_stats_dump);
}

void
base_stats_register_exit(void)
{
    pthread_once(&exit_once, register_exit);
}
