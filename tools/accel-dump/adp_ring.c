/*
 * Reading the capture ring (adp_ring.h). The producer (base/statreg_cap.c)
 * writes records at its head and publishes cap_head with release; a
 * record never straddles the end of the ring: where the next one would,
 * the producer writes a BASE_SR_CAP_WRAP word and goes on at offset 0.
 * Every length read from the ring is checked against the ring before it
 * is used: a bad one ends the capture with a message.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "adp_ring.h"

/* Records between two publications of the tail. */
#define PUBLISH_EVERY 64u

static int
corrupt(const struct adp_ring *r, char *err, size_t errlen, const char *what,
        uint64_t v)
{
    snprintf(err, errlen,
             "the capture ring is corrupt at byte %" PRIu64 " (%s: %" PRIu64
             ")",
             r->tail, what, v);
    return ADP_RING_CORRUPT;
}

int
adp_ring_read(struct adp_ring *r, adp_frame_fn fn, void *arg, uint64_t *nread,
              char *err, size_t errlen)
{
    uint64_t head = __atomic_load_n(r->headp, __ATOMIC_ACQUIRE);
    unsigned since = 0;
    int rc = 0;

    if (head - r->tail > r->size)
        return corrupt(r, err, errlen, "head past the tail by", head - r->tail);
    while (r->tail != head && rc == 0) {
        uint32_t off = (uint32_t)(r->tail & (r->size - 1u));
        uint32_t room = r->size - off; /* >= 8: records are 8-aligned */
        uint64_t avail = head - r->tail;
        struct base_sr_cap c;
        struct adp_frame f;
        uint32_t word;

        if ((r->tail & 7u) != 0)
            return corrupt(r, err, errlen, "unaligned tail", r->tail);
        memcpy(&word, r->base + off, sizeof(word));
        if (word == BASE_SR_CAP_WRAP) {
            if (room > avail)
                return corrupt(r, err, errlen, "wrap past the head", room);
            r->tail += room;
            continue;
        }
        if (room < sizeof(c) || avail < sizeof(c))
            return corrupt(r, err, errlen, "record header cut, bytes left",
                           room < avail ? room : avail);
        memcpy(&c, r->base + off, sizeof(c));
        if (c.rec_len < sizeof(c) || (c.rec_len & 7u) != 0 ||
            c.rec_len > r->size / 2 || c.rec_len > room || c.rec_len > avail)
            return corrupt(r, err, errlen, "record length", c.rec_len);
        if (c.caplen > c.rec_len - sizeof(c) || c.caplen > c.origlen)
            return corrupt(r, err, errlen, "captured length", c.caplen);
        f.data = r->base + off + sizeof(c);
        f.caplen = c.caplen;
        f.origlen = c.origlen;
        f.ts_ns = c.ts_ns;
        f.dir = c.dir;
        f.drop = c.drop;
        rc = fn(arg, &f);
        r->tail += c.rec_len;
        (*nread)++;
        if (++since == PUBLISH_EVERY) {
            __atomic_store_n(r->tailp, r->tail, __ATOMIC_RELEASE);
            since = 0;
        }
    }
    __atomic_store_n(r->tailp, r->tail, __ATOMIC_RELEASE);
    return rc;
}
