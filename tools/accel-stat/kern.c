/*
 * --reasons: the sockets the library left on the kernel, from the ring of
 * its latest decisions, and why (the region's own texts, indexed by the
 * record's why). A record is shown only while its fd still is that socket:
 * /proc/<pid>/fd/<fd> reads exactly "socket:[<inode>]"; a closed socket,
 * or an fd number reused since, drops out. Then the kernel_why_* counters,
 * which count every decision, closed sockets included.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "ast.h"

static int
by_fd(const void *a, const void *b)
{
    const struct ast_kern_live *x = a, *y = b;

    return (x->rec->fd > y->rec->fd) - (x->rec->fd < y->rec->fd);
}

/* Is the same (fd, inode) among the first n of v? */
static bool
seen(const struct ast_kern_live *v, size_t n, const struct base_sr_kern *k)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].rec->fd == k->fd && v[i].rec->inode == k->inode)
            return true;
    return false;
}

struct ast_kern_live *
ast_kern_live(const struct ast_snap *s, size_t *n, unsigned *unverified)
{
    struct ast_kern_live *v = calloc(s->nkern != 0 ? s->nkern : 1, sizeof(*v));

    *n = 0;
    *unverified = 0;
    if (v == NULL)
        return NULL;
    /* s->kern is newest first: the first record of an (fd, inode) wins. */
    for (uint32_t i = 0; i < s->nkern; i++) {
        const struct base_sr_kern *k = &s->kern[i];
        int open;

        if (seen(v, *n, k))
            continue;
        open = ast_proc_fd_is_socket(s->pid, k->fd, k->inode);
        if (open < 0)
            (*unverified)++;
        if (open <= 0)
            continue;
        v[*n].rec = k;
        v[*n].why = k->why < s->nwhy ? s->why[k->why] : NULL;
        (*n)++;
    }
    qsort(v, *n, sizeof(*v), by_fd);
    return v;
}

static void
family_proto(const struct base_sr_kern *k, char *buf, size_t len)
{
    const char *p = ast_proto_name(k->proto);

    if (strcmp(p, "?") == 0)
        snprintf(buf, len, "p%u", k->proto);
    else
        snprintf(buf, len, "%s", p);
    if (k->family == AF_INET)
        strncat(buf, "4", len - strlen(buf) - 1);
    else if (k->family == AF_INET6)
        strncat(buf, "6", len - strlen(buf) - 1);
}

static void
when_str(uint64_t when_ns, char *buf, size_t len)
{
    time_t t = (time_t)(when_ns / 1000000000ull);
    uint64_t now = ast_realtime_ns();
    struct tm tm;

    if (when_ns == 0 || localtime_r(&t, &tm) == NULL)
        snprintf(buf, len, "-");
    else if (now >= when_ns && now - when_ns < 86400ull * 1000000000ull)
        strftime(buf, len, "%H:%M:%S", &tm);
    else
        strftime(buf, len, "%Y-%m-%d", &tm);
}

static void
print_process(FILE *f, const struct ast_snap *s)
{
    static const uint8_t zero[16];
    unsigned unverified;
    size_t n, nwhy = 0;
    struct ast_kern_live *v = ast_kern_live(s, &n, &unverified);

    fprintf(f,
            "%d (%s): %zu socket%s on the kernel now, %" PRIu64
            " since start (sock_kernel)\n",
            s->pid, s->hdr.comm, n, n == 1 ? "" : "s",
            ast_snap_value(s, "sock_kernel"));
    if (n > 0)
        fprintf(f, "  %5s %-5s %-9s %-22s %-8s %s\n", "FD", "PROTO", "CALL",
                "ADDRESS", "SINCE", "REASON");
    for (size_t i = 0; v != NULL && i < n; i++) {
        const struct base_sr_kern *k = v[i].rec;
        char fp[16], addr[INET6_ADDRSTRLEN + 10], when[16];

        family_proto(k, fp, sizeof(fp));
        if (k->port == 0 && memcmp(k->addr, zero, 16) == 0)
            snprintf(addr, sizeof(addr), "-");
        else
            ast_endpoint_str(k->family, k->addr, k->port, addr, sizeof(addr));
        when_str(k->when_ns, when, sizeof(when));
        fprintf(f, "  %5" PRId32 " %-5s %-9s %-22s %-8s ", k->fd, fp,
                k->call[0] != '\0' ? k->call : "-", addr, when);
        if (v[i].why != NULL)
            fprintf(f, "%s\n", v[i].why);
        else
            fprintf(f, "reason %u (not in the region's table)\n", k->why);
    }
    if (unverified > 0)
        fprintf(f,
                "  note: %u record%s not shown: /proc/%d/fd cannot be read "
                "(run as root or as its user)\n",
                unverified, unverified == 1 ? "" : "s", s->pid);
    fprintf(f, "  decisions by reason since start:");
    for (uint32_t i = 0; i < s->nctr; i++) {
        if (strncmp(s->ctr[i].name, "kernel_why_", 11) != 0 ||
            s->ctr[i].value == 0)
            continue;
        fprintf(f, "%s %s %" PRIu64, nwhy % 2 == 0 ? "\n   " : ",",
                s->ctr[i].name, s->ctr[i].value);
        nwhy++;
    }
    fprintf(f, "%s\n", nwhy == 0 ? " none" : "");
    free(v);
}

void
ast_kern_print(FILE *f, const struct ast_snap *snaps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        print_process(f, &snaps[i]);
}
