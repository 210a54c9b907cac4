/*
 * accel-dump's view of a live state region (adp_region.h): open it
 * read-write (the capture words are the only ones accel-dump writes),
 * check what the capture needs (magic, layout version, a header that has
 * the capture part, a ring inside the file), and take or give back the
 * capture. Every shared word is read and written with __atomic builtins:
 * the data path of another process uses them at the same time.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "adp_region.h"

const char *
adp_region_dir(void)
{
    const char *d = getenv(ADP_DIR_ENV);

    return d != NULL && d[0] != '\0' ? d : BASE_SR_DIR;
}

bool
adp_pid_alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* /proc/<pid>/stat's starttime (field 22), or 0 when unknown. */
static uint64_t
proc_starttime(pid_t pid)
{
    char path[64], buf[1024], *p;
    unsigned long long v = 0;
    ssize_t n;
    int fd, field;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
    if (p == NULL)
        return 0;
    for (field = 2; field < 22 && p != NULL; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL || sscanf(p + 1, "%llu", &v) != 1)
        return 0;
    return v;
}

static int fail(struct adp_region *r, int why, char *err, size_t errlen,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
fail(struct adp_region *r, int why, char *err, size_t errlen, const char *fmt,
     ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    adp_region_close(r);
    return why;
}

/* The capture ring lies inside the file, after the header's capture part,
 * and its size is a power of two. */
static bool
ring_ok(const struct base_sr_hdr *h, size_t len)
{
    uint32_t size = h->cap_size;

    return size >= 64 && (size & (size - 1)) == 0 && (h->cap_off & 7u) == 0 &&
           h->cap_off >= ADP_HDR_NEED && (uint64_t)h->cap_off + size <= len;
}

int
adp_region_open(struct adp_region *r, const char *dir, pid_t pid, char *err,
                size_t errlen)
{
    struct base_sr_hdr *h;
    struct stat st;
    uint64_t start;
    void *m;

    memset(r, 0, sizeof(*r));
    r->fd = -1;
    r->pid = pid;
    snprintf(r->path, sizeof(r->path), "%s/" BASE_SR_PREFIX "%d", dir,
             (int)pid);
    r->fd = open(r->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (r->fd < 0 && errno == ENOENT)
        return fail(r, ADP_OPEN_NONE, err, errlen,
                    "no accel process %d (no %s)", (int)pid, r->path);
    if (r->fd < 0 && (errno == EACCES || errno == EPERM))
        return fail(r, ADP_OPEN_PERM, err, errlen,
                    "cannot open %s: %s: run as root or as the process's "
                    "user",
                    r->path, strerror(errno));
    if (r->fd < 0)
        return fail(r, ADP_OPEN_OTHER, err, errlen, "cannot open %s: %s",
                    r->path, strerror(errno));
    if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (size_t)st.st_size < offsetof(struct base_sr_hdr, size))
        return fail(r, ADP_OPEN_OTHER, err, errlen,
                    "%s is not an accel live state region", r->path);
    m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
             r->fd, 0);
    if (m == MAP_FAILED)
        return fail(r, ADP_OPEN_OTHER, err, errlen, "cannot map %s: %s",
                    r->path, strerror(errno));
    r->h = h = m;
    r->len = (size_t)st.st_size;
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    /* The process writes the magic last: no magic, no region (yet). */
    if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != BASE_SR_MAGIC)
        return fail(r, ADP_OPEN_OTHER, err, errlen,
                    "%s is not an accel live state region (or is still "
                    "being made)",
                    r->path);
    if (h->version != BASE_SR_VERSION)
        return fail(r, ADP_OPEN_OTHER, err, errlen,
                    "%s has layout version %u; this accel-dump reads "
                    "version %u",
                    r->path, h->version, BASE_SR_VERSION);
    if (h->hdr_size < ADP_HDR_NEED)
        return fail(r, ADP_OPEN_OLD, err, errlen,
                    "process %d runs an accel library older than "
                    "accel-dump: its region has no capture ring (update "
                    "accel and restart the process)",
                    (int)pid);
    if (r->len < h->hdr_size || !ring_ok(h, r->len))
        return fail(r, ADP_OPEN_OTHER, err, errlen,
                    "%s is corrupt (capture ring at %u, %u bytes, in a "
                    "file of %zu bytes)",
                    r->path, h->cap_off, h->cap_size, r->len);
    if (h->pid != pid)
        return fail(r, ADP_OPEN_OTHER, err, errlen,
                    "%s is the region of pid %d, not %d", r->path, h->pid,
                    (int)pid);
    start = proc_starttime(pid);
    if (!adp_pid_alive(pid) ||
        (h->starttime != 0 && start != 0 && start != h->starttime))
        return fail(r, ADP_OPEN_NONE, err, errlen,
                    "no accel process %d (%s is stale: its process is "
                    "gone)",
                    (int)pid, r->path);
    return ADP_OPEN_OK;
}

void
adp_region_close(struct adp_region *r)
{
    if (r->h != NULL)
        munmap(r->h, r->len);
    if (r->fd >= 0)
        close(r->fd);
    r->h = NULL;
    r->fd = -1;
}

void
adp_region_ring(struct adp_region *r, struct adp_ring *ring)
{
    ring->base = (uint8_t *)r->h + r->h->cap_off;
    ring->size = r->h->cap_size;
    ring->headp = &r->h->cap_head;
    ring->tailp = &r->h->cap_tail;
    ring->tail = __atomic_load_n(&r->h->cap_tail, __ATOMIC_ACQUIRE);
}

pid_t
adp_cap_owner(const struct adp_region *r)
{
    return (pid_t)__atomic_load_n(&r->h->cap_on, __ATOMIC_ACQUIRE);
}

void
adp_cap_alive(struct adp_region *r)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    __atomic_store_n(&r->h->cap_alive_ns,
                     (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                     __ATOMIC_RELEASE);
}

/*
 * The order matters: the data path reads cap_snaplen and starts at
 * cap_head once it sees cap_on, so both are in place first; cap_alive_ns
 * too, or the data path would take a stale value for a dead accel-dump.
 * Two accel-dumps starting at the same instant both write the words
 * before one of them wins cap_on; the loser's tail is at most the head
 * it read, and the winner publishes its own tail at its first batch.
 */
int
adp_cap_claim(struct adp_region *r, uint32_t snaplen, pid_t self, pid_t *holder)
{
    struct base_sr_hdr *h = r->h;
    uint32_t cur = __atomic_load_n(&h->cap_on, __ATOMIC_ACQUIRE);

    for (int tries = 0; tries < 8; tries++) {
        uint64_t head;

        if (cur != 0 && (pid_t)cur != self && adp_pid_alive((pid_t)cur))
            break;
        __atomic_store_n(&h->cap_snaplen, snaplen, __ATOMIC_RELAXED);
        head = __atomic_load_n(&h->cap_head, __ATOMIC_ACQUIRE);
        __atomic_store_n(&h->cap_tail, head, __ATOMIC_RELEASE);
        adp_cap_alive(r);
        if (__atomic_compare_exchange_n(&h->cap_on, &cur, (uint32_t)self, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 0;
    }
    *holder = (pid_t)cur;
    return -EBUSY;
}

int
adp_cap_resume(struct adp_region *r, pid_t self, pid_t *holder)
{
    uint32_t cur = 0;

    adp_cap_alive(r);
    if (__atomic_compare_exchange_n(&r->h->cap_on, &cur, (uint32_t)self, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;
    *holder = (pid_t)cur;
    return -EBUSY;
}

bool
adp_cap_release(struct adp_region *r, pid_t self)
{
    uint32_t cur = (uint32_t)self;

    return __atomic_compare_exchange_n(&r->h->cap_on, &cur, 0u, false,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

const char *
adp_region_gone(const struct adp_region *r)
{
    struct stat st;

    if (__atomic_load_n(&r->h->state, __ATOMIC_ACQUIRE) == BASE_SR_EXITING)
        return "is exiting";
    if (!adp_pid_alive(r->pid))
        return "exited";
    if (stat(r->path, &st) != 0 || st.st_ino != r->ino || st.st_dev != r->dev)
        return "left its region (it exited or exec'd)";
    return NULL;
}
