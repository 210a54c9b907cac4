/*
 * Logging: levels and a subsystem name, written with raw write(2) to stderr
 * or ACCEL_LOG_FILE, never stdout and never stdio. errno is preserved.
 * Each line: "accel[pid:tid] level subsys: message".
 */
#ifndef ACCEL_BASE_LOG_H
#define ACCEL_BASE_LOG_H

#include <stddef.h>

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

void base_log_write(int level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

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

#define BASE_ERR(subsys, ...) BASE_LOG(BASE_LOG_ERROR, subsys, __VA_ARGS__)
#define BASE_WARN(subsys, ...) BASE_LOG(BASE_LOG_WARN, subsys, __VA_ARGS__)
#define BASE_INFO(subsys, ...) BASE_LOG(BASE_LOG_INFO, subsys, __VA_ARGS__)
#define BASE_DBG(subsys, ...) BASE_LOG(BASE_LOG_DEBUG, subsys, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BASE_LOG_H */
