/*
 * ACCEL_TEST_IMPAIR on the port (TEST-ONLY: it damages this process's
 * traffic on purpose). One engine (impair.c) per direction, started with
 * the stack and used under the stack lock, at the few places every frame
 * of the process passes:
 *   tx  rt__tx_flush_locked (port.c): every frame this process sends on a
 *       DPDK port, alone or sharing it after fork (one queue or several);
 *       rt__rm_flush (remote.c): a joined process's packet socket;
 *   rx  the receive bursts: rx_burst_input (loop.c) and the shared turns'
 *       (share_rx.c), before anything looks at the frames, so in a fork
 *       family the process that receives for all impairs for all. A
 *       joined process receives nothing itself: dir=rx has no effect there.
 * Held frames (delay=, rate=, reorder=) are due at a time the poll loop
 * and the waits see (rt__impair_tx_due, rt__impair_next_ns through
 * rt_next_timer_ms and rt__impair_cap_wait), so they leave on time: a
 * sleeping thread wakes for them. Each hook tests rt__impair_active()
 * first: with the option empty, a never-taken branch on a read-only
 * global.
 *
 * Frames are mbufs on a port (dropped into the stash, copied with
 * rte_pktmbuf_copy) and heap copies in a joined process, whose send
 * buffers are reused at every flush.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "clock.h"
#include "impair.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "stats.h"

/* The rx engine's stream, apart from the tx engine's. */
#define RX_STREAM 0x6a09e667f3bcc909ull
/* At exit, how long held frames may still take to leave. */
#define EXIT_NS 1000000000ull

bool rt__impair_on;

static struct rt__imp tx, rx;
static bool tx_on, rx_on;
/* rt__imp_next of each engine after its last run: read without the lock
 * by threads about to sleep. */
static _Atomic uint64_t tx_next = UINT64_MAX, rx_next = UINT64_MAX;
static uint64_t fork_seed;

/* ---- frames: mbufs ----------------------------------------------------- */

static void
mb_drop(void *f)
{
    rt__mbuf_recycle(f);
}

static void *
mb_copy(void *f)
{
    struct rte_mbuf *m = f;

    return rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
}

static uint8_t *
mb_bytes(void *f, uint32_t *len)
{
    struct rte_mbuf *m = f;

    *len = m->data_len;
    return rte_pktmbuf_mtod(m, uint8_t *);
}

static const struct rt__imp_ops mb_ops = {mb_drop, mb_copy, mb_bytes};

/* ---- frames: heap copies (a joined process) ----------------------------- */

struct hframe {
    uint32_t len;
    uint8_t b[];
};

static void *
hf_new(const uint8_t *p, uint32_t len)
{
    struct hframe *h = malloc(sizeof(*h) + len);

    if (h != NULL) {
        h->len = len;
        memcpy(h->b, p, len);
    }
    return h;
}

static void
hf_drop(void *f)
{
    free(f);
}

static void *
hf_copy(void *f)
{
    struct hframe *h = f;

    return hf_new(h->b, h->len);
}

static uint8_t *
hf_bytes(void *f, uint32_t *len)
{
    struct hframe *h = f;

    *len = h->len;
    return h->b;
}

static const struct rt__imp_ops hf_ops = {hf_drop, hf_copy, hf_bytes};

/* ---- start, stop, fork -------------------------------------------------- */

static void
publish(void)
{
    atomic_store_explicit(&tx_next, tx_on ? rt__imp_next(&tx) : UINT64_MAX,
                          memory_order_relaxed);
    atomic_store_explicit(&rx_next, rx_on ? rt__imp_next(&rx) : UINT64_MAX,
                          memory_order_relaxed);
}

int
rt__impair_start(void)
{
    struct base_impair_spec sp;
    char err[512];
    uint64_t seed;

    if (base_cfg.test_impair[0] == '\0')
        return 0;
    if (base_impair_parse(base_cfg.test_impair, &sp, err, sizeof(err)) != 0) {
        BASE_ERR("impair", "%s", err); /* base_cfg_load checked it already */
        return -EINVAL;
    }
    seed = sp.seed;
    if (!sp.seed_set &&
        getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
        seed = base_now_ns() ^ ((uint64_t)getpid() << 32);
    if ((sp.tx &&
         rt__imp_init(&tx, &sp, seed, rt__remote ? &hf_ops : &mb_ops) != 0) ||
        (sp.rx && !rt__remote &&
         rt__imp_init(&rx, &sp, seed ^ RX_STREAM, &mb_ops) != 0)) {
        BASE_ERR("impair",
                 "ACCEL_TEST_IMPAIR: no memory for %u held frames; lower its "
                 "limit= or unset it",
                 sp.limit);
        rt__imp_fini(&tx);
        return -ENOMEM;
    }
    tx_on = sp.tx;
    rx_on = sp.rx && !rt__remote;
    rt__impair_on = true;
    BASE_WARN("impair",
              "ACCEL_TEST_IMPAIR=%s: TEST-ONLY, this process damages the "
              "frames it %s on purpose (seed=%llu)%s; unset it outside "
              "tests",
              base_cfg.test_impair,
              tx_on && rx_on ? "sends and receives"
              : tx_on        ? "sends"
                             : "receives",
              (unsigned long long)seed,
              sp.rx && rt__remote ? "; dir=rx has no effect in a process "
                                    "that joined another's port"
                                  : "");
    return 0;
}

void
rt__impair_exit(void)
{
    struct timespec ts = {0, 200000};
    uint64_t end;

    if (!rt__impair_on)
        return;
    end = base_now_ns() + EXIT_NS;
    while (rt__impair_next_ns() != UINT64_MAX && base_now_ns() < end) {
        rt_poll();
        rt_unlock();
        nanosleep(&ts, NULL);
        rt_lock();
    }
    if (tx_on)
        rt__imp_clear(&tx, true);
    if (rx_on)
        rt__imp_clear(&rx, true);
    publish();
}

void
rt__impair_atfork_prepare(void)
{
    if (rt__impair_on)
        fork_seed = rt__imp_rand(tx_on ? &tx : &rx);
}

void
rt__impair_atfork_child(void)
{
    /* The parent sends what it held; a joined process's are copies in
     * memory that is the child's own now. */
    if (tx_on) {
        rt__imp_clear(&tx, rt__remote);
        rt__imp_reseed(&tx, fork_seed);
    }
    if (rx_on) {
        rt__imp_clear(&rx, false);
        rt__imp_reseed(&rx, fork_seed ^ RX_STREAM);
    }
    publish();
}

/* ---- the hooks ---------------------------------------------------------- */

/* The n mbufs of v through im; those that leave now (at most cap) back in
 * v: their count. */
static uint32_t
run_mbufs(struct rt__imp *im, struct rte_mbuf **v, uint32_t n, uint32_t cap)
{
    void *f[RT__MAX_BURST];
    uint32_t k;

    for (uint32_t i = 0; i < n; i++)
        f[i] = v[i];
    k = rt__imp_run(im, f, n, cap, base_now_ns());
    for (uint32_t i = 0; i < k; i++)
        v[i] = f[i];
    publish();
    return k;
}

uint32_t
rt__impair_tx(struct rte_mbuf **v, uint32_t n)
{
    return tx_on ? run_mbufs(&tx, v, n, RT__MAX_BURST) : n;
}

uint32_t
rt__impair_tx_copies(uint8_t *base, size_t stride, uint16_t *lens, uint32_t n)
{
    void *f[RT__MAX_BURST];
    uint32_t k, m = 0;

    if (!tx_on)
        return n;
    for (uint32_t i = 0; i < n; i++) {
        f[m] = hf_new(base + i * stride, lens[i]);
        if (f[m] != NULL)
            m++;
        else
            BASE_STAT_INC(tx_drop_nombuf);
    }
    k = rt__imp_run(&tx, f, m, RT__MAX_BURST, base_now_ns());
    for (uint32_t i = 0; i < k; i++) {
        struct hframe *h = f[i];

        memcpy(base + i * stride, h->b, h->len);
        lens[i] = (uint16_t)h->len;
        free(h);
    }
    publish();
    return k;
}

uint16_t
rt__impair_rx(struct rte_mbuf **v, uint16_t n, uint16_t cap)
{
    return rx_on ? (uint16_t)run_mbufs(&rx, v, n, cap) : n;
}

bool
rt__impair_tx_due(void)
{
    return atomic_load_explicit(&tx_next, memory_order_relaxed) <=
           base_now_ns();
}

uint64_t
rt__impair_next_ns(void)
{
    uint64_t t = atomic_load_explicit(&tx_next, memory_order_relaxed);
    uint64_t r = atomic_load_explicit(&rx_next, memory_order_relaxed);

    return r < t ? r : t;
}

int64_t
rt__impair_cap_wait(int64_t timeout_ns)
{
    uint64_t next = rt__impair_next_ns(), now;
    int64_t left;

    if (next == UINT64_MAX)
        return timeout_ns;
    now = base_now_ns();
    left = next > now ? (int64_t)(next - now) : 0;
    return timeout_ns < 0 || left < timeout_ns ? left : timeout_ns;
}
