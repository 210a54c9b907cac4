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

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_RT_STATS_H */
