/*
 * Logging. Every line is formatted into a stack buffer and written with the
 * raw write system call (syscall(SYS_write)), never through stdio and never
 * through libc's write(), which libaccel.so interposes. Lines go to stderr,
 * or to ACCEL_LOG_FILE once base_log_set_file() opened it; each starts with
 * "accel[pid:tid] level subsys: ". errno is saved and restored around
 * everything, so logging never changes what the application sees.
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int base_log_level = BASE_LOG_WARN;

/* The log fd: stderr unless a file was opened. Moved to a high number so
 * programs that close or dup2 over low fds rarely hit it. */
static int log_fd = 2;

static const char *const level_names[] = {"error", "warn", "notice", "info",
                                          "debug"};

void
base_log_raw(const char *buf, unsigned long len)
{
    int saved = errno;

    while (len > 0) {
        long w = syscall(SYS_write, log_fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        buf += w;
        len -= (unsigned long)w;
    }
    errno = saved;
}

int
base_log_set_file(const char *path)
{
    int saved = errno;
    char name[512];
    size_t n = 0;
    long fd, hi;

    if (path == NULL || path[0] == '\0') {
        log_fd = 2;
        return 0;
    }
    /* Expand %p to the pid. */
    for (const char *p = path; *p != '\0' && n + 24 < sizeof(name); p++) {
        if (p[0] == '%' && p[1] == 'p') {
            n += (size_t)snprintf(name + n, sizeof(name) - n, "%ld",
                                  (long)syscall(SYS_getpid));
            p++;
        } else {
            name[n++] = *p;
        }
    }
    name[n] = '\0';
    fd = syscall(SYS_openat, AT_FDCWD, name,
                 O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        errno = saved;
        return -e;
    }
    hi = syscall(SYS_fcntl, (int)fd, F_DUPFD_CLOEXEC, 900);
    if (hi >= 0) {
        syscall(SYS_close, (int)fd);
        fd = hi;
    }
    log_fd = (int)fd;
    errno = saved;
    return 0;
}

int
base_write_all(int fd, const void *buf, size_t n)
{
    const char *b = buf;

    while (n > 0) {
        long w = syscall(SYS_write, fd, b, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        if (w == 0)
            return -EIO;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

void
base_log_write(int level, const char *subsys, const char *fmt, ...)
{
    int saved = errno;
    char buf[1024];
    va_list ap;
    int n, m;

    if (level < BASE_LOG_ERROR)
        level = BASE_LOG_ERROR;
    if (level > BASE_LOG_DEBUG)
        level = BASE_LOG_DEBUG;
    n = snprintf(buf, sizeof(buf),
                 "accel[%ld:%ld] %s %s: ", (long)syscall(SYS_getpid),
                 (long)syscall(SYS_gettid), level_names[level],
                 subsys != NULL ? subsys : "-");
    if (n < 0)
        n = 0;
    va_start(ap, fmt);
    m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    n += m;
    if ((size_t)n > sizeof(buf) - 2)
        n = (int)sizeof(buf) - 2; /* truncated: keep the newline */
    buf[n++] = '\n';
    base_log_raw(buf, (unsigned long)n);
    errno = saved;
}
