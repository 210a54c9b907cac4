/*
 * Stack counters. Incremented under the stack lock only (plain integers);
 * read at exit by base_stats_dump().
 */
#ifndef ACCEL_BASE_STATS_H
#define ACCEL_BASE_STATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct base_stats {
#define BASE_STAT(field, doc) uint64_t field;
#include "stats.def"
#undef BASE_STAT
};

extern struct base_stats base_stats;

#define BASE_STAT_INC(field) (base_stats.field++)
#define BASE_STAT_ADD(field, n) (base_stats.field += (n))

/** Write the counters, one "name value" line each, to fd (no stdio). */
void base_stats_write(int fd);

/** Print the counters to stderr if ACCEL_STATS=1 (registered atexit). */
void base_stats_dump(void);

/** Tell the exit dump what the data path is: a short description of the
 *  port ("net_af_xdp0 on veth-a"), or NULL when it is not running. */
void base_stats_set_datapath(const char *desc);

/** Extra lines for the exit dump, below the counters: fn prints the
 *  port's own counters (runtime's DPDK side); NULL for none. */
void base_stats_set_port_dump(void (*fn)(long pid));

/** Register base_stats_dump() with atexit() once (no-op unless ACCEL_STATS;
 *  call after base_cfg_load). Safe from any thread, any number of times. */
void base_stats_register_exit(void);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BASE_STATS_H */
