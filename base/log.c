/*
 * Logging. Every line is formatted into a stack buffer and written with the
 * raw write system call (syscall(SYS_write)), never through stdio and never
 * through libc's write(), which libaccel.so interposes. Lines go to stderr,
 * or to ACCEL_LOG_FILE once base_log_set_file() opened it; each starts with
 * "accel[pid:tid] level subsys: ". errno is saved and restored around
 * everything, so logging never changes what the application sees.
 *
 * Rate limit (the policy of Linux's printk_ratelimit): a call site may log
 * BASE_LOG_BURST lines per BASE_LOG_WINDOW_S seconds; the window starts at
 * its first line. A site is known by its format string (the pointer), its
 * subsystem and its level, mixed into one word: not by the return address,
 * since the optimiser duplicates calls (tail duplication, unrolling) and a
 * source line would become several sites. Identical formats of one
 * subsystem and level, merged by the compiler, share a limit: similar lines
 * anyway. The key names a slot in a fixed table (open addressing, claimed
 * by CAS, never freed; no lock, no allocation, so any thread and a signal
 * handler may log). One 64-bit word of the slot holds the window's start
 * in ms and the lines printed in it and changes only by CAS, so the limit
 * holds exactly whatever the threads do; another counts the lines dropped.
 * The first line of the next window takes that count and is preceded by a
 * line reporting it, in the same write. A count added by a thread that
 * decided just before the window turned is reported with the next one:
 * never lost. What is left at exit is reported by a destructor. Sites
 * hashed into a crowded part of the table (RL_PROBES slots taken) share a
 * slot: limited together, never unlimited.
 *
 * Debug lines are not limited, nor is anything at ACCEL_LOG_LEVEL=debug:
 * whoever asks for debug output wants every line. BASE_LOG_NOLIMIT in the
 * level is for bounded lists logged once (the configuration).
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"

#define LINE_MAX_LEN 1024  /* one line, newline included; longer: truncated */
#define REPORT_MAX_LEN 320 /* the "(N similar lines suppressed ...)" line */
#define RL_SLOTS 128       /* a power of two; a process logs from far fewer */
#define RL_PROBES 8
#define RL_WINDOW_MS (BASE_LOG_WINDOW_S * 1000ull)
#define RL_COUNT_BITS 16   /* state: window start (ms) << 16 | lines printed */
#define RL_FORMAT_SHOWN 60 /* characters of the format in the exit report */

int base_log_level = BASE_LOG_WARN;

struct rl_slot {
    _Atomic uintptr_t key; /* mix(format, subsys) << 3 | level; 0: free */
    _Atomic(const char *) subsys; /* for the report at exit */
    _Atomic(const char *) fmt;
    _Atomic uint64_t state;      /* see RL_COUNT_BITS */
    _Atomic uint64_t suppressed; /* lines dropped, not reported yet */
};

typedef uint64_t (*rl_clock_fn)(void);

static struct rl_slot rl_tab[RL_SLOTS];
static _Atomic(rl_clock_fn) rl_clock = base_now_ns;

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

/* "accel[pid:tid] level subsys: " into buf: its length (< size). */
static size_t
line_start(char *buf, size_t size, int level, const char *subsys)
{
    int n =
        snprintf(buf, size, "accel[%ld:%ld] %s %s: ", (long)syscall(SYS_getpid),
                 (long)syscall(SYS_gettid), level_names[level],
                 subsys != NULL ? subsys : "-");

    if (n < 0)
        return 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}

/* The line reporting n lines suppressed from one site, newline included,
 * into buf (REPORT_MAX_LEN bytes): its length. like: the site's format,
 * for the report at exit, where no line of the site follows. */
static size_t
report_line(char *buf, int level, const char *subsys, uint64_t n,
            const char *like)
{
    size_t len = line_start(buf, REPORT_MAX_LEN, level, subsys);
    const char *s = n == 1 ? "" : "s";
    int m;

    if (like != NULL)
        m = snprintf(buf + len, REPORT_MAX_LEN - len,
                     "(%llu similar line%s suppressed, like \"%.*s%s\": more "
                     "than %d in %d s from one call site; "
                     "ACCEL_LOG_LEVEL=debug logs every line)\n",
                     (unsigned long long)n, s, RL_FORMAT_SHOWN, like,
                     strlen(like) > RL_FORMAT_SHOWN ? "..." : "",
                     BASE_LOG_BURST, BASE_LOG_WINDOW_S);
    else
        m = snprintf(buf + len, REPORT_MAX_LEN - len,
                     "(%llu similar line%s suppressed: more than %d in %d s "
                     "from this call site; ACCEL_LOG_LEVEL=debug logs every "
                     "line)\n",
                     (unsigned long long)n, s, BASE_LOG_BURST,
                     BASE_LOG_WINDOW_S);
    if (m < 0)
        m = 0;
    len += (size_t)m;
    if (len > REPORT_MAX_LEN - 1) {
        len = REPORT_MAX_LEN - 1; /* truncated: keep the newline */
        buf[len - 1] = '\n';
    }
    return len;
}

/* The slot of key: found, or claimed, or (crowded) shared with its home
 * slot's owner. */
static struct rl_slot *
rl_slot_of(uintptr_t key, const char *subsys, const char *fmt)
{
    size_t home =
        (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 40) % RL_SLOTS;

    for (size_t i = 0; i < RL_PROBES; i++) {
        struct rl_slot *s = &rl_tab[(home + i) % RL_SLOTS];
        uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);

        if (k == 0 &&
            atomic_compare_exchange_strong_explicit(
                &s->key, &k, key, memory_order_acq_rel, memory_order_acquire)) {
            atomic_store_explicit(&s->subsys, subsys, memory_order_release);
            atomic_store_explicit(&s->fmt, fmt, memory_order_release);
            return s;
        }
        if (k == key)
            return s;
    }
    return &rl_tab[home];
}

/* Whether a line of this site may be printed now. *dropped: the lines
 * suppressed before it, to report first (0: none). */
static bool
rl_admit(int level, const char *subsys, const char *fmt, uint64_t *dropped)
{
    uintptr_t key = (uintptr_t)fmt * 0xff51afd7ed558ccdull ^
                    (uintptr_t)subsys * 0xc4ceb9fe1a85ec53ull;
    struct rl_slot *s;
    uint64_t now, old, next;
    bool fresh;

    key = key << 3 | (uintptr_t)level;
    if (key == 0)
        key = 1u << 3;
    s = rl_slot_of(key, subsys, fmt);
    now = atomic_load_explicit(&rl_clock, memory_order_relaxed)() / 1000000u;
    old = atomic_load_explicit(&s->state, memory_order_relaxed);
    do {
        uint64_t start = old >> RL_COUNT_BITS;
        uint64_t lines = old & ((1u << RL_COUNT_BITS) - 1);

        fresh = now > start && now - start >= RL_WINDOW_MS;
        if (fresh) {
            next = now << RL_COUNT_BITS | 1u;
        } else if (lines < BASE_LOG_BURST) {
            next = old + 1;
        } else {
            atomic_fetch_add_explicit(&s->suppressed, 1, memory_order_relaxed);
            return false;
        }
    } while (!atomic_compare_exchange_weak_explicit(
        &s->state, &old, next, memory_order_relaxed, memory_order_relaxed));
    *dropped = fresh ? atomic_exchange_explicit(&s->suppressed, 0,
                                                memory_order_relaxed)
                     : 0;
    return true;
}

void
base_log_write(int level, const char *subsys, const char *fmt, ...)
{
    int saved = errno;
    char buf[REPORT_MAX_LEN + LINE_MAX_LEN];
    bool limited = (level & BASE_LOG_NOLIMIT) == 0;
    uint64_t dropped = 0;
    size_t r = 0, n;
    va_list ap;
    int m;

    level &= ~BASE_LOG_NOLIMIT;
    if (level < BASE_LOG_ERROR)
        level = BASE_LOG_ERROR;
    if (level > BASE_LOG_DEBUG)
        level = BASE_LOG_DEBUG;
    if (level == BASE_LOG_DEBUG || base_log_level >= BASE_LOG_DEBUG)
        limited = false;
    if (limited && !rl_admit(level, subsys, fmt, &dropped)) {
        errno = saved;
        return;
    }
    if (dropped > 0)
        r = report_line(buf, level, subsys, dropped, NULL);
    n = line_start(buf + r, LINE_MAX_LEN, level, subsys);
    va_start(ap, fmt);
    m = vsnprintf(buf + r + n, LINE_MAX_LEN - n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    n += (size_t)m;
    if (n > LINE_MAX_LEN - 2)
        n = LINE_MAX_LEN - 2; /* truncated: keep the newline */
    buf[r + n++] = '\n';
    base_log_raw(buf, (unsigned long)(r + n));
    errno = saved;
}

void
base_log_flush_suppressed(void)
{
    int saved = errno;
    char buf[REPORT_MAX_LEN];

    for (size_t i = 0; i < RL_SLOTS; i++) {
        struct rl_slot *s = &rl_tab[i];
        uintptr_t key = atomic_load_explicit(&s->key, memory_order_acquire);
        const char *fmt = atomic_load_explicit(&s->fmt, memory_order_acquire);
        uint64_t n;

        if (key == 0 ||
            atomic_load_explicit(&s->suppressed, memory_order_relaxed) == 0)
            continue;
        n = atomic_exchange_explicit(&s->suppressed, 0, memory_order_relaxed);
        if (n == 0)
            continue;
        base_log_raw(buf, report_line(buf, (int)(key & 7u),
                                      atomic_load_explicit(
                                          &s->subsys, memory_order_acquire),
                                      n, fmt != NULL ? fmt : "?"));
    }
    errno = saved;
}

__attribute__((destructor)) static void
report_at_exit(void)
{
    base_log_flush_suppressed();
}

void
base_log_atfork_child(void)
{
    for (size_t i = 0; i < RL_SLOTS; i++) {
        atomic_store_explicit(&rl_tab[i].state, 0, memory_order_relaxed);
        atomic_store_explicit(&rl_tab[i].suppressed, 0, memory_order_relaxed);
    }
}

void
base_log_test_ratelimit(uint64_t (*now_ns)(void))
{
    for (size_t i = 0; i < RL_SLOTS; i++) {
        atomic_store(&rl_tab[i].key, 0);
        atomic_store(&rl_tab[i].subsys, NULL);
        atomic_store(&rl_tab[i].fmt, NULL);
        atomic_store(&rl_tab[i].state, 0);
        atomic_store(&rl_tab[i].suppressed, 0);
    }
    atomic_store(&rl_clock, now_ns != NULL ? now_ns : base_now_ns);
}
