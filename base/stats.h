/*
 * Stack counters. Incremented under the stack lock only (plain integers);
 * read live by accel-stat (statreg.h) and at exit by base_stats_dump().
 */
#ifndef ACCEL_BASE_STATS_H
#define ACCEL_BASE_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct base_counters {
#define BASE_STAT(field, doc) uint64_t field;
#include "stats.def"
#undef BASE_STAT
};

/* Where the counters are: private memory until the live state region
 * exists (statreg.c), then in it. base_stats reads as the struct. */
extern struct base_counters *base_stats_p;
#define base_stats (*base_stats_p)

/** Move the counters to p (their values copied by the caller), or back
 *  to private memory with NULL (the values copied here). */
void base_stats_place(struct base_counters *p);

/** The name of counter i (stats.def order), i < the number of counters. */
const char *base_stats_name(size_t i);

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
