/*
 * The capture ring of the live state region (statreg_layout.h, "Capture"):
 * the producer side. The stack calls base_sr_cap_reserve() for every
 * frame it receives or sends while base_sr_capturing is set (one load of
 * a plain global when nobody captures), copies the frame into the
 * record, and base_sr_cap_commit() marks whether the frame was dropped
 * and publishes it. A frame sent while a received one is being handled
 * (an ACK out of the input path) nests: its record follows, and the head
 * is published when the outermost record is done, so the reader never
 * sees a record before its drop mark. No room: the frame is counted in
 * cap_drops and not copied; nothing here waits or makes a system call.
 * The snapshot tick (statreg.c) starts and stops the capture.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "statreg.h"
#include "statreg_int.h"

_Atomic bool base_sr_capturing;

static uint32_t snaplen;
static uint64_t head;        /* bytes reserved so far (producer's own) */
static unsigned depth;       /* reservations not yet committed */
static int64_t realtime_off; /* CLOCK_REALTIME - base_now_ns() */

static inline _Atomic uint64_t *
a64(uint64_t *p)
{
    return (_Atomic uint64_t *)p;
}

void
base_sr__cap_tick(struct base_sr_hdr *h, uint64_t now_ns)
{
    uint32_t on = atomic_load_explicit((_Atomic uint32_t *)&h->cap_on,
                                       memory_order_acquire);
    uint64_t alive =
        atomic_load_explicit(a64(&h->cap_alive_ns), memory_order_relaxed);
    struct timespec ts;

    if (on != 0 && now_ns > alive && now_ns - alive > 3000000000ull) {
        /* accel-dump stopped refreshing: gone */
        atomic_compare_exchange_strong((_Atomic uint32_t *)&h->cap_on, &on, 0u);
        on = 0;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    realtime_off =
        (int64_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) -
        (int64_t)now_ns;
    if (on != 0 &&
        !atomic_load_explicit(&base_sr_capturing, memory_order_relaxed) &&
        depth == 0) {
        snaplen = h->cap_snaplen;
        head = atomic_load_explicit(a64(&h->cap_head), memory_order_relaxed);
        atomic_store_explicit(&base_sr_capturing, true, memory_order_relaxed);
    } else if (on == 0) {
        atomic_store_explicit(&base_sr_capturing, false, memory_order_relaxed);
    }
}

void
base_sr__cap_stop(void)
{
    atomic_store_explicit(&base_sr_capturing, false, memory_order_relaxed);
    depth = 0;
}

struct base_sr_cap *
base_sr_cap_reserve(uint8_t dir, uint32_t origlen, uint32_t *caplen)
{
    struct base_sr_hdr *h = base_sr__hdr();
    uint32_t cl, rec, size, off;
    uint64_t tail, need;
    struct base_sr_cap *r;
    uint8_t *ring;

    if (h == NULL || !atomic_load_explicit((_Atomic uint32_t *)&h->cap_on,
                                           memory_order_relaxed))
        return NULL;
    size = h->cap_size;
    ring = (uint8_t *)h + h->cap_off;
    cl = snaplen != 0 && origlen > snaplen ? snaplen : origlen;
    rec = (uint32_t)((sizeof(*r) + cl + 7u) & ~7u);
    off = (uint32_t)(head & (size - 1u));
    need = rec <= size - off ? rec : (uint64_t)(size - off) + rec;
    tail = atomic_load_explicit(a64(&h->cap_tail), memory_order_acquire);
    if (rec > size / 2 || head + need - tail > size) {
        atomic_fetch_add_explicit(a64(&h->cap_drops), 1, memory_order_relaxed);
        return NULL;
    }
    if (rec > size - off) {
        *(uint32_t *)(ring + off) = BASE_SR_CAP_WRAP;
        head += size - off;
        off = 0;
    }
    r = (struct base_sr_cap *)(ring + off);
    r->rec_len = rec;
    r->caplen = cl;
    r->origlen = origlen;
    r->dir = dir;
    r->drop = BASE_SR_CAP_KEPT;
    r->pad = 0;
    r->ts_ns = (uint64_t)((int64_t)base_now_ns() + realtime_off);
    head += rec;
    depth++;
    *caplen = cl;
    return r;
}

void
base_sr_cap_commit(struct base_sr_cap *r, uint8_t drop)
{
    struct base_sr_hdr *h = base_sr__hdr();

    r->drop = drop;
    if (h == NULL)
        return;
    atomic_fetch_add_explicit(a64(&h->cap_frames), 1, memory_order_relaxed);
    if (--depth != 0)
        return;
    atomic_store_explicit(a64(&h->cap_head), head, memory_order_release);
}
