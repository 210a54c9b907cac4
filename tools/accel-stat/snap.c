/*
 * Copying a region. Each part is copied the way its writer writes it:
 *
 *   - the header, the port block and the socket table under snap_seq: read
 *     the count (odd: being written), copy, read it again, and retry while
 *     it was odd or changed; a bounded number of times, so a process that
 *     died in the middle of a snapshot (odd forever) costs us ~0.1 s and
 *     the view then says the snapshot is missing;
 *   - the counters one aligned 64-bit load each (never torn);
 *   - each record of the kernel ring under its own count (odd: skipped;
 *     changed while copied: retried a few times, then skipped).
 *
 * Every offset used comes from the copied header and is checked against
 * the mapping again (the file's writer may be another user than the
 * reader: root reads everyone's), and every string is cut at its field's
 * end with control characters replaced, so no view has to care.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

#define SNAP_TRIES 100 /* copies of the snapshot before giving up */
#define SNAP_ODD_WAIT_NS 1000000ull /* between tries while it is odd */
#define KERN_TRIES 4                /* copies of one ring record */

static uint32_t
load32(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Make a fixed-size field a printable, NUL-terminated string. */
static void
clean_field(char *s, size_t size)
{
    s[size - 1] = '\0';
    ast_printable(s);
}

static void
clean_header(struct base_sr_hdr *h)
{
    clean_field(h->comm, sizeof(h->comm));
    clean_field(h->cmdline, sizeof(h->cmdline));
    clean_field(h->datapath, sizeof(h->datapath));
    clean_field(h->iface, sizeof(h->iface));
    clean_field(h->ip, sizeof(h->ip));
    clean_field(h->ip6, sizeof(h->ip6));
}

static bool
fits(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/*
 * The header, port and socket table (at most cap sockets), consistent.
 * False when not.
 */
static bool
copy_snapshot(const struct ast_region *r, struct ast_snap *s, uint32_t cap)
{
    const struct base_sr_hdr *h = (const void *)r->map;
    int tries;

    for (tries = 0; tries < SNAP_TRIES; tries++) {
        uint32_t seq = load32(&h->snap_seq), n;
        const struct base_sr_hdr *c = &s->hdr;

        if (seq & 1) {
            ast_sleep_ns(SNAP_ODD_WAIT_NS);
            continue;
        }
        memcpy(&s->hdr, h, sizeof(s->hdr));
        s->have_port = c->port_off != 0 && c->snap_ns != 0 &&
                       fits(c->port_off, sizeof(s->port), r->size);
        if (s->have_port)
            memcpy(&s->port, r->map + c->port_off, sizeof(s->port));
        n = c->nsocks < c->sock_max ? c->nsocks : c->sock_max;
        n = n < cap ? n : cap;
        s->nsocks = 0;
        if (c->sock_size >= sizeof(struct base_sr_sock) &&
            fits(c->sock_off, (uint64_t)n * c->sock_size, r->size)) {
            for (uint32_t i = 0; i < n; i++)
                memcpy(&s->socks[i],
                       r->map + c->sock_off + (size_t)i * c->sock_size,
                       sizeof(s->socks[i]));
            s->nsocks = n;
        }
        atomic_thread_fence(memory_order_acquire);
        if (__atomic_load_n(&h->snap_seq, __ATOMIC_RELAXED) == seq)
            return true;
    }
    /* Keep a header for the names and counters anyway. */
    memcpy(&s->hdr, h, sizeof(s->hdr));
    s->nsocks = 0;
    s->have_port = false;
    return false;
}

/*
 * Split the NUL-separated table at off (len bytes) into at most want
 * strings: a malloc'd copy in *store, the pointers in *out. The count.
 */
static uint32_t
split_table(const struct ast_region *r, uint32_t off, uint32_t len,
            uint32_t want, char **store, const char ***out)
{
    const char **v;
    char *buf, *p, *end;
    uint32_t n = 0;

    *store = NULL;
    *out = NULL;
    if (want == 0 || !fits(off, len, r->size))
        return 0;
    buf = malloc((size_t)len + 1);
    v = calloc(want, sizeof(*v));
    if (buf == NULL || v == NULL) {
        free(buf);
        free(v);
        return 0;
    }
    memcpy(buf, r->map + off, len);
    buf[len] = '\0';
    for (p = buf, end = buf + len; p < end && n < want; p += strlen(p) + 1)
        v[n++] = p;
    *store = buf;
    *out = v;
    return n;
}

static int
copy_counters(const struct ast_region *r, struct ast_snap *s)
{
    const struct base_sr_hdr *c = &s->hdr;
    const uint64_t *vals;
    const char **names;
    uint32_t n, i;

    if (!fits(c->stats_off, (uint64_t)c->nstats * 8, r->size) ||
        c->stats_off % 8 != 0)
        return 0;
    n = split_table(r, c->names_off, c->names_len, c->nstats, &s->names,
                    &names);
    if (n == 0)
        return 0;
    s->ctr = calloc(n, sizeof(*s->ctr));
    if (s->ctr == NULL) {
        free(names);
        return -1;
    }
    vals = (const uint64_t *)(r->map + c->stats_off);
    for (i = 0; i < n; i++) {
        s->ctr[i].name = names[i];
        s->ctr[i].value = __atomic_load_n(&vals[i], __ATOMIC_RELAXED);
    }
    s->nctr = n;
    free(names);
    return 0;
}

/* One ring record, consistent; false when being written or unused. */
static bool
copy_kern(const struct base_sr_kern *rec, struct base_sr_kern *out)
{
    for (int t = 0; t < KERN_TRIES; t++) {
        uint32_t seq = load32(&rec->seq);

        if (seq == 0 || (seq & 1))
            return false; /* never written, or being written: skip */
        memcpy(out, rec, sizeof(*out));
        atomic_thread_fence(memory_order_acquire);
        if (__atomic_load_n(&rec->seq, __ATOMIC_RELAXED) == seq) {
            out->call[sizeof(out->call) - 1] = '\0';
            clean_field(out->call, sizeof(out->call));
            return true;
        }
    }
    return false;
}

static int
copy_ring(const struct ast_region *r, struct ast_snap *s)
{
    const struct base_sr_hdr *h = (const void *)r->map, *c = &s->hdr;
    uint64_t next, count;

    if (c->kern_max == 0 || c->kern_size < sizeof(struct base_sr_kern) ||
        !fits(c->kern_off, (uint64_t)c->kern_max * c->kern_size, r->size))
        return 0;
    next = __atomic_load_n(&h->kern_next, __ATOMIC_ACQUIRE);
    count = next < c->kern_max ? next : c->kern_max;
    s->kern = calloc(count != 0 ? count : 1, sizeof(*s->kern));
    if (s->kern == NULL)
        return -1;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t slot = (next - 1 - k) % c->kern_max;
        const void *rec = r->map + c->kern_off + slot * c->kern_size;

        if (copy_kern(rec, &s->kern[s->nkern]))
            s->nkern++;
    }
    return 0;
}

int
ast_snap_read(const struct ast_region *r, struct ast_snap *s)
{
    const struct base_sr_hdr *h = (const void *)r->map;
    uint32_t max = h->sock_max;

    memset(s, 0, sizeof(*s));
    s->pid = r->pid;
    /* Room for the most the table can hold, as the live header says. */
    if ((uint64_t)max * sizeof(struct base_sr_sock) > r->size)
        max = 0;
    s->socks = calloc(max != 0 ? max : 1, sizeof(*s->socks));
    if (s->socks == NULL)
        return -1;
    s->have_snap = copy_snapshot(r, s, max);
    /* The counters right after the snapshot, and the time of both just
     * after them: -w's rates divide by the time between two reads. */
    if (copy_counters(r, s) != 0) {
        ast_snap_free(s);
        return -1;
    }
    s->read_ns = ast_now_ns();
    if (copy_ring(r, s) != 0) {
        ast_snap_free(s);
        return -1;
    }
    clean_header(&s->hdr);
    ast_user_name(s->hdr.uid, s->user, sizeof(s->user));
    s->nwhy = split_table(r, s->hdr.why_off, s->hdr.why_len, s->hdr.nwhy,
                          &s->whys, &s->why);
    for (uint32_t i = 0; i < s->nwhy; i++)
        clean_field((char *)s->why[i], strlen(s->why[i]) + 1);
    return 0;
}

void
ast_snap_free(struct ast_snap *s)
{
    free(s->ctr);
    free(s->names);
    free(s->why);
    free(s->whys);
    free(s->socks);
    free(s->kern);
    memset(s, 0, sizeof(*s));
}

const struct ast_counter *
ast_snap_counter(const struct ast_snap *s, const char *name)
{
    for (uint32_t i = 0; i < s->nctr; i++)
        if (strcmp(s->ctr[i].name, name) == 0)
            return &s->ctr[i];
    return NULL;
}

uint64_t
ast_snap_value(const struct ast_snap *s, const char *name)
{
    const struct ast_counter *c = ast_snap_counter(s, name);

    return c != NULL ? c->value : 0;
}

uint64_t
ast_snap_drops(const struct ast_snap *s)
{
    uint64_t sum = 0;

    for (uint32_t i = 0; i < s->nctr; i++)
        if (strstr(s->ctr[i].name, "drop") != NULL)
            sum += s->ctr[i].value;
    return sum;
}

#define PORT_FIELD(f)                                                          \
    {                                                                          \
#f, offsetof(struct base_sr_port, f)                                   \
    }
const struct ast_port_field ast_port_fields[] = {
    PORT_FIELD(ipackets), PORT_FIELD(opackets),  PORT_FIELD(ibytes),
    PORT_FIELD(obytes),   PORT_FIELD(imissed),   PORT_FIELD(ierrors),
    PORT_FIELD(oerrors),  PORT_FIELD(rx_nombuf), {NULL, 0},
};

uint64_t
ast_port_value(const struct base_sr_port *p, const struct ast_port_field *pf)
{
    uint64_t v;

    memcpy(&v, (const char *)p + pf->off, sizeof(v));
    return v;
}

const char *
ast_state_name(uint32_t state, char *buf, size_t len)
{
    switch (state) {
    case BASE_SR_KERNEL_ONLY:
        return "kernel-only";
    case BASE_SR_UP:
        return "up";
    case BASE_SR_JOINED:
        return "joined";
    case BASE_SR_EXITING:
        return "exiting";
    default:
        snprintf(buf, len, "state %u", state);
        return buf;
    }
}

double
ast_snap_age(const struct ast_snap *s)
{
    if (!s->have_snap || s->hdr.snap_ns == 0)
        return -1;
    if (s->hdr.snap_ns >= s->read_ns)
        return 0;
    return (double)(s->read_ns - s->hdr.snap_ns) / 1e9;
}
