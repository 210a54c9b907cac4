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
