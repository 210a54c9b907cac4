/*
 * Stack counters. Incremented under the stack lock only (plain integers);
 * read at exit by rt_stats_dump().
 */
#ifndef ACCEL_RT_STATS_H
#define ACCEL_RT_STATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rt_stats {
#define RT_STAT(field, doc) uint64_t field;
#include "stats.def"
#undef RT_STAT
};

extern struct rt_stats rt_stats;

#define RT_STAT_INC(field) (rt_stats.field++)
#define RT_STAT_ADD(field, n) (rt_stats.field += (n))

/** Write the counters, one "name value" line each, to fd (no stdio). */
void rt_stats_write(int fd);

/** Tell the exit dump what the data path is: a short description of the
 *  port ("net_af_xdp0 on veth-a"), or NULL when it is not running. */
void rt_stats_set_datapath(const char *desc);

/** Extra lines for the exit dump, below the counters: fn prints the
 *  port's own counters (runtime's DPDK side); NULL for none. */
void rt_stats_set_port_dump(void (*fn)(long pid));

/** Register rt_stats_dump() with atexit() once (no-op unless ACCEL_STATS;
 *  call after rt_cfg_load). Safe from any thread, any number of times. */
void rt_stats_register_exit(void);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_RT_STATS_H */
