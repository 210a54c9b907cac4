/*
 * Finding and opening regions: the files accel-stat-<pid> of the region
 * directory (/dev/shm, or $ACCEL_STAT_DIR for tests), each opened
 * read-only and mapped PROT_READ, MAP_SHARED after these checks:
 *
 *   - the magic, the version (a newer one: this tool is older than the
 *     library; said once, the region skipped) and the sizes and offsets,
 *     so that no later read leaves the mapping;
 *   - the process: a region whose pid is gone, or whose starttime is not
 *     the running pid's (the pid was reused), is stale, as is a file that
 *     is not a region at all while its pid is gone. A stale region is
 *     removed when we may (its owner or root; one line on stderr) and
 *     skipped silently otherwise.
 *
 * A region we may not open (EACCES: another user's, mode 0600) is not an
 * error: the caller counts it. A live process whose region is not written
 * yet (no magic, no starttime) is skipped: it is being created.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ast.h"

const char *
ast_dir(void)
{
    const char *d = getenv("ACCEL_STAT_DIR");

    return d != NULL && d[0] != '\0' ? d : BASE_SR_DIR;
}

/* Is [off, off + len) inside a region of size bytes? */
static bool
fits(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/*
 * The sizes and offsets of a version-1 header, against the file's size:
 * every part a reader uses must lie inside the mapping.
 */
static bool
layout_ok(const struct base_sr_hdr *h, size_t size)
{
    if (h->hdr_size < sizeof(*h) || h->hdr_size > size)
        return false;
    if (!fits(h->stats_off, (uint64_t)h->nstats * 8, size) ||
        !fits(h->names_off, h->names_len, size) ||
        !fits(h->why_off, h->why_len, size))
        return false;
    if (h->port_off != 0 &&
        !fits(h->port_off, sizeof(struct base_sr_port), size))
        return false;
    if (h->sock_max != 0 &&
        (h->sock_size < sizeof(struct base_sr_sock) ||
         !fits(h->sock_off, (uint64_t)h->sock_max * h->sock_size, size)))
        return false;
    if (h->kern_max != 0 &&
        (h->kern_size < sizeof(struct base_sr_kern) ||
         !fits(h->kern_off, (uint64_t)h->kern_max * h->kern_size, size)))
        return false;
    /* The atomic words must be naturally aligned. */
    return h->stats_off % 8 == 0 && h->kern_size % 8 == 0 &&
           h->kern_off % 8 == 0;
}

/*
 * A stale region: remove it when we may and say so in one line; a file
 * another user owns stays, silently (it is theirs, or root's, to clean).
 */
static void
remove_stale(const struct ast_region *r, const char *comm)
{
    if (unlink(r->path) != 0)
        return;
    if (comm != NULL && comm[0] != '\0')
        fprintf(stderr,
                AST_PROG ": removed the stale region of dead process %d "
                         "(%s)\n",
                r->pid, comm);
    else
        fprintf(stderr,
                AST_PROG ": removed the stale region of dead process %d\n",
                r->pid);
}

/* The comm of a mapped header, printable, for messages. */
static void
header_comm(const struct base_sr_hdr *h, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)sizeof(h->comm), h->comm);
    ast_printable(buf);
}

/*
 * The header of a mapped region, and the process behind it: AST_OPEN_OK,
 * or what to do with the file (stale: removed, NONE; otherwise SKIP).
 */
static enum ast_open_rc
check_header(struct ast_region *r, bool loud)
{
    const struct base_sr_hdr *h = (const void *)r->map;
    uint64_t start = 0;
    enum ast_liveness live = ast_proc_state(r->pid, &start);
    char comm[sizeof(h->comm) + 1];

    if (h->magic != BASE_SR_MAGIC || h->version == 0) {
        if (live == AST_PROC_GONE) {
            remove_stale(r, NULL);
            return AST_OPEN_NONE;
        }
        if (loud)
            fprintf(stderr,
                    AST_PROG ": %s is not a region accel-stat can read (yet): "
                             "being created, or not accel's\n",
                    r->path);
        return AST_OPEN_SKIP;
    }
    header_comm(h, comm, sizeof(comm));
    if (live == AST_PROC_GONE) {
        remove_stale(r, comm);
        return AST_OPEN_NONE;
    }
    if (h->version != BASE_SR_VERSION) {
        fprintf(stderr,
                AST_PROG ": process %d (%s) publishes region version %" PRIu32
                         "; this accel-stat reads version %u: it is %s "
                         "than the library, use the accel-stat of the same "
                         "accel\n",
                r->pid, comm, h->version, BASE_SR_VERSION,
                h->version > BASE_SR_VERSION ? "older" : "newer");
        return AST_OPEN_SKIP;
    }
    if (!layout_ok(h, r->size)) {
        fprintf(stderr,
                AST_PROG ": %s: sizes or offsets out of the file: skipped\n",
                r->path);
        return AST_OPEN_SKIP;
    }
    if (h->starttime == 0 || live != AST_PROC_ALIVE) {
        if (loud)
            fprintf(stderr,
                    AST_PROG ": %s is not complete yet (no starttime), or "
                             "/proc/%d cannot be read\n",
                    r->path, r->pid);
        return AST_OPEN_SKIP;
    }
    if (h->starttime != start) {
        remove_stale(r, comm); /* the pid runs another process now */
        return AST_OPEN_NONE;
    }
    if (h->pid != r->pid) {
        fprintf(stderr,
                AST_PROG ": %s holds the region of pid %" PRId32 ": skipped\n",
                r->path, h->pid);
        return AST_OPEN_SKIP;
    }
    return AST_OPEN_OK;
}

enum ast_open_rc
ast_region_open(const char *dir, int pid, bool loud, struct ast_region *r)
{
    enum ast_open_rc rc;
    struct stat st;
    uint64_t start;
    void *map;

    memset(r, 0, sizeof(*r));
    r->pid = pid;
    r->fd = -1;
    snprintf(r->path, sizeof(r->path), "%s/" BASE_SR_PREFIX "%d", dir, pid);
    r->fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (r->fd < 0) {
        if (errno == ENOENT)
            return AST_OPEN_NONE;
        if (errno == EACCES || errno == EPERM)
            return ast_proc_state(pid, &start) == AST_PROC_GONE
                       ? AST_OPEN_NONE /* stale, and not ours to remove */
                       : AST_OPEN_EACCES;
        if (loud || errno != ELOOP)
            fprintf(stderr, AST_PROG ": %s: %s\n", r->path, strerror(errno));
        return errno == ELOOP ? AST_OPEN_SKIP : AST_OPEN_ERROR;
    }
    if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (loud)
            fprintf(stderr, AST_PROG ": %s is not a regular file\n", r->path);
        ast_region_close(r);
        return AST_OPEN_SKIP;
    }
    r->size = (size_t)st.st_size;
    if (r->size < sizeof(struct base_sr_hdr)) {
        /* Too short to be checked in place: judged by its pid alone. */
        rc = ast_proc_state(pid, &start) == AST_PROC_GONE ? AST_OPEN_NONE
                                                          : AST_OPEN_SKIP;
        if (rc == AST_OPEN_NONE)
            remove_stale(r, NULL);
        else if (loud)
            fprintf(stderr, AST_PROG ": %s is too short for a region\n",
                    r->path);
        ast_region_close(r);
        return rc;
    }
    map = mmap(NULL, r->size, PROT_READ, MAP_SHARED, r->fd, 0);
    if (map == MAP_FAILED) {
        fprintf(stderr, AST_PROG ": mmap %s: %s\n", r->path, strerror(errno));
        r->map = NULL;
        ast_region_close(r);
        return AST_OPEN_ERROR;
    }
    r->map = map;
    rc = check_header(r, loud);
    if (rc != AST_OPEN_OK)
        ast_region_close(r);
    return rc;
}

void
ast_region_close(struct ast_region *r)
{
    if (r->map != NULL)
        munmap((void *)r->map, r->size);
    if (r->fd >= 0)
        close(r->fd);
    r->map = NULL;
    r->fd = -1;
}

/* The pid of a directory entry named accel-stat-<pid>, or 0. */
static int
entry_pid(const char *name)
{
    size_t plen = strlen(BASE_SR_PREFIX);
    const char *p;
    long pid;
    char *end;

    if (strncmp(name, BASE_SR_PREFIX, plen) != 0)
        return 0;
    p = name + plen;
    if (*p < '1' || *p > '9')
        return 0;
    errno = 0;
    pid = strtol(p, &end, 10);
    if (errno != 0 || *end != '\0' || pid > INT32_MAX)
        return 0;
    return (int)pid;
}

static int
by_pid(const void *a, const void *b)
{
    const struct ast_region *x = a, *y = b;

    return (x->pid > y->pid) - (x->pid < y->pid);
}

int
ast_region_scan(const char *dir, struct ast_region_list *l)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t cap = 0;

    memset(l, 0, sizeof(*l));
    if (d == NULL) {
        fprintf(stderr, AST_PROG ": cannot read %s: %s\n", dir,
                strerror(errno));
        return AST_EXIT_FAIL;
    }
    while ((e = readdir(d)) != NULL) {
        int pid = entry_pid(e->d_name);
        struct ast_region r;

        if (pid == 0)
            continue;
        switch (ast_region_open(dir, pid, false, &r)) {
        case AST_OPEN_OK:
            break;
        case AST_OPEN_EACCES:
            l->others++;
            continue;
        default:
            continue;
        }
        if (l->n == cap) {
            struct ast_region *v;

            cap = cap != 0 ? 2 * cap : 16;
            v = realloc(l->v, cap * sizeof(*v));
            if (v == NULL) {
                ast_region_close(&r);
                fprintf(stderr, AST_PROG ": out of memory\n");
                break;
            }
            l->v = v;
        }
        l->v[l->n++] = r;
    }
    closedir(d);
    if (l->n > 1)
        qsort(l->v, l->n, sizeof(*l->v), by_pid);
    return 0;
}

void
ast_region_list_free(struct ast_region_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        ast_region_close(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}
