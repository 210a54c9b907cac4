/*
 * Logging: levels and a subsystem name, written with raw write(2) to stderr
 * or ACCEL_LOG_FILE, never stdout and never stdio. errno is preserved.
 * Each line: "accel[pid:tid] level subsys: message".
 *
 * Rate limit: at most BASE_LOG_BURST lines per BASE_LOG_WINDOW_S seconds
 * from one call site (one format string, subsystem and level); the rest are
 * counted, and the site's next line printed after the window is preceded
 * by "(N similar lines suppressed ...)". Counts not reported yet are
 * logged at exit. Debug lines, and every line at ACCEL_LOG_LEVEL=debug,
 * are never limited. Any thread, any time: lock-free, no allocation.
 */
#ifndef ACCEL_BASE_LOG_H
#define ACCEL_BASE_LOG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum base_log_level {
    BASE_LOG_ERROR = 0,
    BASE_LOG_WARN = 1,
    BASE_LOG_NOTICE = 2,
    BASE_LOG_INFO = 3,
    BASE_LOG_DEBUG = 4,
};

extern int base_log_level; /* current level, set from ACCEL_LOG_LEVEL */

/** write(2) of all n bytes through the raw system call (EINTR retried):
 *  0, or -errno (-EIO for a write of 0). */
int base_write_all(int fd, const void *buf, size_t n);

#define BASE_LOG_BURST 10   /* lines from one call site per window */
#define BASE_LOG_WINDOW_S 5 /* seconds */

/* Or'ed into base_log_write's level: the line is not rate-limited. For a
 * bounded list logged once from one call site (the configuration's
 * warnings and settings at start); BASE_LOG_ALL below. */
#define BASE_LOG_NOLIMIT 0x100

/** One line, rate-limited per call site (format, subsys and level) unless
 *  level has BASE_LOG_NOLIMIT. */
void base_log_write(int level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Log, for every call site with lines suppressed and not reported yet,
 *  one line saying how many. A destructor calls it at exit. */
void base_log_flush_suppressed(void);

/** In a fork child: the parent reports the lines it suppressed. */
void base_log_atfork_child(void);

/** Tests: forget every call site's lines and counts, and read the rate
 *  limit's clock (ns) from now_ns; NULL: base_now_ns. */
void base_log_test_ratelimit(uint64_t (*now_ns)(void));

/** Send logs to path (appended, created 0644, "%p" expands to the pid)
 *  instead of stderr; NULL or "" goes back to stderr. 0 or -errno. */
int base_log_set_file(const char *path);

/** Write one already formatted line (no prefix added) to the log fd. */
void base_log_raw(const char *buf, unsigned long len);

#define BASE_LOG(level, subsys, ...)                                           \
    do {                                                                       \
        if ((level) <= base_log_level)                                         \
            base_log_write((level), (subsys), __VA_ARGS__);                    \
    } while (0)

/* BASE_LOG without the rate limit (see BASE_LOG_NOLIMIT). */
#define BASE_LOG_ALL(level, subsys, ...)                                       \
    do {                                                                       \
        if ((level) <= base_log_level)                                         \
            base_log_write((level) | BASE_LOG_NOLIMIT, (subsys), __VA_ARGS__); \
    } while (0)

#define BASE_ERR(subsys, ...) BASE_LOG(BASE_LOG_ERROR, subsys, __VA_ARGS__)
#define BASE_WARN(subsys, ...) BASE_LOG(BASE_LOG_WARN, subsys, __VA_ARGS__)
#define BASE_INFO(subsys, ...) BASE_LOG(BASE_LOG_INFO, subsys, __VA_ARGS__)
#define BASE_DBG(subsys, ...) BASE_LOG(BASE_LOG_DEBUG, subsys, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BASE_LOG_H */
