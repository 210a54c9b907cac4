/*
 * The impairment engine of ACCEL_TEST_IMPAIR (impair.h), TEST-ONLY: it
 * damages traffic on purpose, as netem does on a kernel interface.
 *
 * A frame that reaches rt__imp_run at `now` goes through, in order:
 *   loss=P     dropped (the frame is let go through ops->drop);
 *   dup=P      a copy follows it through the rest (not lost or copied
 *              again);
 *   corrupt=P  one random bit flipped in its L4 data (the TCP or UDP
 *              payload; a segment without data gets it in its L4 header),
 *              checksums left as they were; only IPv4 frames;
 *   rate=MBIT  a link of that speed: the frame leaves once the link has
 *              sent the frames before it and itself (len * 8 / rate, the
 *              Ethernet frame without FCS, preamble or gap);
 *   delay=MS[:JITTER]  then MS more, plus a uniform draw in
 *              [-JITTER, +JITTER] (at least 0); a draw never makes a frame
 *              overtake the one queued before it (due times only grow, as
 *              with netem and a pfifo child), so jitter alone does not
 *              reorder, and under dense traffic the delays bunch up towards
 *              MS + JITTER;
 *   limit=N    frames that would wait (delay or rate) while N already do
 *              are dropped, as a full queue drops them (netem's limit,
 *              default 1000);
 *   reorder=P[:N]  when the frame is due to leave, it is held back and
 *              leaves right after the next N (default 1) frames, or after
 *              RT__IMP_HOLD_NS when fewer follow.
 * Each probability is one draw of a splitmix64 generator seeded from
 * seed=, drawn only for the impairments the spec has, so a spec and a seed
 * give the same decisions for the same frames every run. Counters go to
 * stats.def (test_impair_*).
 */
#include "impair.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Frames that leave in the run they arrive in may pass a full queue:
 * room for that many more in the ring. */
#define RING_SLACK 2048

/* ---- the engine --------------------------------------------------------- */

/* splitmix64 (Steele, Lea, Flood): one add and two multiplies per draw,
 * full period, passes BigCrush; plenty for picking frames. */
static uint64_t
next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A draw that comes out true with probability thr / 2^32; no draw for a
 * probability of 0, so impairments not asked for leave the stream alone. */
static bool
chance(struct rt__imp *im, uint64_t thr)
{
    return thr != 0 && (next64(&im->rng) >> 32) < thr;
}

uint64_t
rt__imp_rand(struct rt__imp *im)
{
    return next64(&im->rng);
}

void
rt__imp_reseed(struct rt__imp *im, uint64_t seed)
{
    im->rng = seed;
}

int
rt__imp_init(struct rt__imp *im, const struct base_impair_spec *sp,
             uint64_t seed, const struct rt__imp_ops *ops)
{
    uint32_t cap = 1;

    memset(im, 0, sizeof(*im));
    while (cap < sp->limit + RING_SLACK)
        cap <<= 1;
    im->q = calloc(cap, sizeof(*im->q));
    if (im->q == NULL)
        return -ENOMEM;
    im->cap = cap;
    im->sp = *sp;
    im->ops = ops;
    im->rng = seed;
    return 0;
}

void
rt__imp_clear(struct rt__imp *im, bool drop)
{
    for (; im->n > 0; im->n--) {
        if (drop)
            im->ops->drop(im->q[im->head].f);
        im->head = (im->head + 1) & (im->cap - 1);
    }
    for (uint32_t i = 0; drop && i < im->nhold; i++)
        im->ops->drop(im->hold[i].f);
    im->nhold = 0;
    im->head = 0;
    im->last_due = 0;
    im->link_free = 0;
}

void
rt__imp_fini(struct rt__imp *im)
{
    if (im->q == NULL)
        return;
    rt__imp_clear(im, true);
    free(im->q);
    im->q = NULL;
}

/* Flip one bit of an IPv4 frame's L4 data (its L4 header when it carries
 * none): true if a bit was flipped. */
static bool
corrupt(struct rt__imp *im, uint8_t *p, uint32_t len)
{
    uint32_t ihl, tot, l4len, hdr, start, span;
    uint64_t bit;
    uint8_t *l4;

    if (len < 14 + 20 || p[12] != 0x08 || p[13] != 0x00 || (p[14] >> 4) != 4)
        return false;
    ihl = (p[14] & 0x0fu) * 4u;
    tot = (uint32_t)(p[16] << 8 | p[17]);
    if (tot > len - 14)
        tot = len - 14;
    if (ihl < 20 || tot <= ihl)
        return false;
    l4 = p + 14 + ihl;
    l4len = tot - ihl;
    hdr = p[14 + 9] == 6 && l4len >= 20 ? (l4[12] >> 4) * 4u
          : p[14 + 9] == 17             ? 8u
                                        : 0u;
    if (hdr > l4len)
        hdr = l4len;
    start = l4len > hdr ? hdr : 0;
    span = l4len > hdr ? l4len - hdr : l4len;
    bit = next64(&im->rng) % ((uint64_t)span * 8u);
    l4[start + bit / 8] ^= (uint8_t)(1u << (bit % 8));
    return true;
}

/* When frame f, reaching the queue at now, may leave: after the link
 * (rate=) has sent it, at *link, and then the delay with its jitter
 * (*delayed: some). *wait: it had to wait for the link. */
static uint64_t
due_time(struct rt__imp *im, void *f, uint64_t now, uint64_t *link, bool *wait,
         bool *delayed)
{
    uint64_t t = now;
    int64_t extra = (int64_t)im->sp.delay_ns;
    uint32_t len;

    *wait = im->sp.rate_bps != 0 && im->link_free > now;
    if (im->sp.rate_bps != 0) {
        im->ops->bytes(f, &len);
        if (*wait)
            t = im->link_free;
        t += (uint64_t)len * 8000000000ull / im->sp.rate_bps;
    }
    *link = t;
    if (im->sp.jitter_ns != 0) {
        uint64_t j = im->sp.jitter_ns;

        extra += (int64_t)(next64(&im->rng) % (2 * j + 1)) - (int64_t)j;
    }
    *delayed = extra > 0;
    return extra > 0 ? t + (uint64_t)extra : t;
}

/* Queue f until its due time, or drop it when the queue is full. */
static void
enqueue(struct rt__imp *im, void *f, uint64_t now)
{
    uint64_t due, link;
    bool wait, delayed;

    due = due_time(im, f, now, &link, &wait, &delayed);
    if (due < im->last_due)
        due = im->last_due; /* jitter never reorders */
    if (im->n == im->cap || (due > now && im->n >= im->sp.limit)) {
        BASE_STAT_INC(test_impair_queue_dropped);
        im->ops->drop(f);
        return;
    }
    if (im->sp.rate_bps != 0)
        im->link_free = link;
    if (wait)
        BASE_STAT_INC(test_impair_rate_held);
    if (delayed)
        BASE_STAT_INC(test_impair_delayed);
    im->last_due = due;
    im->q[(im->head + im->n) & (im->cap - 1)] = (struct rt__imp_slot){f, due};
    im->n++;
}

/* The held frames whose turn came (left == 0), oldest first, while there
 * is room in v. */
static void
emit_held(struct rt__imp *im, void **v, uint32_t *out, uint32_t cap)
{
    uint32_t k = 0;

    for (uint32_t i = 0; i < im->nhold; i++) {
        if (im->hold[i].left == 0 && *out < cap) {
            v[(*out)++] = im->hold[i].f;
            if (im->hold[i].passed)
                BASE_STAT_INC(test_impair_reordered);
            continue;
        }
        im->hold[k++] = im->hold[i];
    }
    im->nhold = k;
}

uint32_t
rt__imp_run(struct rt__imp *im, void **v, uint32_t n, uint32_t cap,
            uint64_t now)
{
    uint32_t out = 0;

    for (uint32_t i = 0; i < n; i++) {
        void *f = v[i], *c = NULL;
        uint8_t *b;
        uint32_t len;

        if (chance(im, im->sp.loss)) {
            BASE_STAT_INC(test_impair_dropped);
            im->ops->drop(f);
            continue;
        }
        if (chance(im, im->sp.dup)) {
            c = im->ops->copy(f);
            if (c != NULL)
                BASE_STAT_INC(test_impair_duplicated);
        }
        for (void *g = f; g != NULL; g = c, c = NULL) {
            if (chance(im, im->sp.corrupt)) {
                b = im->ops->bytes(g, &len);
                if (corrupt(im, b, len))
                    BASE_STAT_INC(test_impair_corrupted);
            }
            enqueue(im, g, now);
        }
    }
    /* What leaves now: frames whose turn came after others left, then
     * the due ones, each perhaps held back (reorder=) behind the next. */
    emit_held(im, v, &out, cap);
    while (out < cap && im->n > 0 && im->q[im->head].due <= now) {
        void *f = im->q[im->head].f;

        im->head = (im->head + 1) & (im->cap - 1);
        im->n--;
        if (im->nhold < RT__IMP_HOLD_MAX && chance(im, im->sp.reorder)) {
            im->hold[im->nhold].f = f;
            im->hold[im->nhold].left = im->sp.reorder_gap;
            im->hold[im->nhold].passed = false;
            im->hold[im->nhold].since = now;
            im->nhold++;
            continue;
        }
        v[out++] = f;
        for (uint32_t i = 0; i < im->nhold; i++) {
            if (im->hold[i].left > 0) {
                im->hold[i].left--;
                im->hold[i].passed = true;
            }
        }
        emit_held(im, v, &out, cap);
    }
    for (uint32_t i = 0; i < im->nhold; i++)
        if (now - im->hold[i].since >= RT__IMP_HOLD_NS)
            im->hold[i].left = 0;
    emit_held(im, v, &out, cap);
    if (im->n == 0)
        im->head = 0;
    return out;
}

uint64_t
rt__imp_next(const struct rt__imp *im)
{
    uint64_t t = im->n > 0 ? im->q[im->head].due : UINT64_MAX;

    for (uint32_t i = 0; i < im->nhold; i++) {
        uint64_t h =
            im->hold[i].left == 0 ? 0 : im->hold[i].since + RT__IMP_HOLD_NS;
        if (h < t)
            t = h;
    }
    return t;
}
