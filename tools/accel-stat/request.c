/*
 * Asking for the socket table. A process refreshes only the port part of
 * its snapshot unless a reader wants the sockets: the reader stores
 * CLOCK_MONOTONIC + 3 s in want_socks_until_ns (the one word of a region
 * accel-stat ever writes), and the process fills the table at each
 * snapshot until then. The store goes through a second, writable mapping
 * of the header's page, made only for it, so every read of the region
 * stays on the read-only one. When the file cannot be opened for writing
 * the last snapshot is shown as it is.
 *
 * The wait is bounded: every 20 ms, up to 1.5 s, until each process asked
 * (and running a data path) has a snapshot newer than the request.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ast.h"

#define WANT_FOR_NS 3000000000ull /* how long the process fills the table */
#define WAIT_MAX_NS 1500000000ull
#define POLL_NS 20000000ull

/* Store until in r's want_socks_until_ns. 0, or -1 when we may not. */
static int
store_want(const struct ast_region *r, uint64_t until)
{
    struct stat st, cur;
    struct base_sr_hdr *h;
    uint64_t *want, old;
    size_t len;
    void *map;
    int fd;

    fd = open(r->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return -1;
    /* The same file we read, not one made since under the same name. */
    if (fstat(fd, &st) != 0 || fstat(r->fd, &cur) != 0 ||
        st.st_ino != cur.st_ino || st.st_dev != cur.st_dev) {
        close(fd);
        return -1;
    }
    len = sizeof(*h);
    map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -1;
    h = map;
    want = &h->want_socks_until_ns;
    /* Only ever later: another reader may have asked for longer. */
    old = __atomic_load_n(want, __ATOMIC_RELAXED);
    while (old < until &&
           !__atomic_compare_exchange_n(want, &old, until, false,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    munmap(map, len);
    return 0;
}

/* Does r run a data path that takes snapshots? */
static bool
takes_snapshots(const struct ast_region *r)
{
    const struct base_sr_hdr *h = (const void *)r->map;
    uint32_t state = __atomic_load_n(&h->state, __ATOMIC_RELAXED);

    return state == BASE_SR_UP || state == BASE_SR_JOINED;
}

uint64_t
ast_request_socks(struct ast_region *v, size_t n)
{
    uint64_t req = ast_now_ns(), deadline = req + WAIT_MAX_NS;
    bool *waiting = calloc(n != 0 ? n : 1, sizeof(*waiting));
    size_t left = 0;

    if (waiting == NULL)
        return req;
    for (size_t i = 0; i < n; i++) {
        if (takes_snapshots(&v[i]) &&
            store_want(&v[i], req + WANT_FOR_NS) == 0) {
            waiting[i] = true;
            left++;
        }
    }
    while (left > 0) {
        for (size_t i = 0; i < n; i++) {
            const struct base_sr_hdr *h = (const void *)v[i].map;

            if (waiting[i] &&
                __atomic_load_n(&h->snap_ns, __ATOMIC_ACQUIRE) >= req) {
                waiting[i] = false;
                left--;
            }
        }
        if (left == 0 || ast_now_ns() >= deadline)
            break;
        ast_sleep_ns(POLL_NS);
    }
    free(waiting);
    return req;
}
