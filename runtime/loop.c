/*
 * The poll loop and the stack lock. rt_poll() is one turn, run by whichever
 * thread is inside the library (or the progress thread) with the lock held:
 * an rx burst whose frames are copied into the stack with stk_input(), the
 * lwIP timers when their deadline has passed, and a tx flush of everything
 * the stack queued. The clock is read once per rx burst (stk_clock_turn):
 * segments sent and ACKs taken in one burst share a time, as Linux's
 * per-segment tcp_mstamp, and a turn of several bursts (or one the
 * scheduler preempted) never measures an RTT against a stale clock. The timer
 * deadline is re-read from the stack on every turn (the stack may have
 * scheduled a new timer since) and kept in an atomic, so rt_next_timer_ms() can
 * be read without the lock by threads about to sleep.
 */
#include <pthread.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "clock.h"
#include "impair.h"
#include "rt.h"
#include "rt_int.h"
#include "statreg.h"
#include "stats.h"
#include "stk.h"

/* Safety cap on a cached deadline; the deadline is refreshed by every
 * rt_poll, and rt_block polls once just before it sleeps. */
#define TIMER_RECHECK_MS 1000

static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t timer_deadline_ns;
_Atomic uint64_t rt__last_app_poll_ns;
static uint64_t last_turn_ns; /* any thread's, under the stack lock */
_Atomic uint64_t rt__last_rx_ns;
_Atomic uint64_t rt__rx_gap_ns = UINT64_MAX;
__thread bool rt_tx_defer;
static uint16_t first_q; /* several queues: where the next turn starts */

/* Whether this poll sends what is queued (see rt_tx_defer): frames, and
 * sockets whose output the stack deferred (a frame or more each). */
bool
rt__tx_due(void)
{
    uint32_t q = rt__port.ntx + stk_output_pending();

    return (q > 0 && (!rt_tx_defer || q * 2 >= rt__port.burst)) ||
           atomic_load_explicit(&rt__tx_backlog, memory_order_relaxed) > 0 ||
           rt__impair_tx_pending();
}

void
rt_set_tx_defer(bool on)
{
    rt_tx_defer = on;
    stk_output_defer(on);
}

/* The turn's sending: the segments the stack deferred become frames
 * (stack/output.c), then every frame goes. Never from inside the stack:
 * a full tx queue flushes from lwIP's output (rt__tx_flush, frames only),
 * and lwIP must not be re-entered for a connection it is sending on. */
void
rt__tx_send_all(void)
{
    stk_output_flush();
    rt__tx_flush();
}

void
rt_flush(void)
{
    /* A peek without the lock (ntx is written under it, atomically so
     * that this read is defined); up is checked under the lock. */
    if (__atomic_load_n(&rt__port.ntx, __ATOMIC_RELAXED) == 0 &&
        stk_output_pending() == 0 &&
        atomic_load_explicit(&rt__tx_backlog, memory_order_relaxed) == 0 &&
        !rt__impair_tx_pending())
        return;
    rt_lock();
    if (rt__port.up)
        rt__tx_send_all();
    rt_unlock();
}

void
rt_tx_kick(void)
{
    if (rt__port.up && rt__tx_due())
        rt__tx_send_all();
}

void
rt_lock(void)
{
    pthread_mutex_lock(&stack_lock);
    /* A fork child has no progress thread (fork copies only the calling
     * thread): its first call into the stack starts one, whatever the call
     * (a daemon that only closes its copy of a listener and waits for its
     * workers must still answer the port when they are gone). */
    if (rt__dp->progress && rt__port.up &&
        !atomic_load_explicit(&rt__progress_running, memory_order_relaxed))
        rt__progress_ensure();
}

void
rt_unlock(void)
{
    stk_clock_release();
    pthread_mutex_unlock(&stack_lock);
}

bool
rt__trylock(void)
{
    return pthread_mutex_trylock(&stack_lock) == 0;
}

static void
run_timers(uint64_t now)
{
    uint32_t next;

    if (now >= atomic_load_explicit(&timer_deadline_ns, memory_order_relaxed))
        stk_timers();
    /* Re-read every turn: the stack may have scheduled a new timer (a new
     * connection) since the last one ran. */
    next = stk_next_timer_ms();
    if (next > TIMER_RECHECK_MS)
        next = TIMER_RECHECK_MS;
    atomic_store_explicit(&timer_deadline_ns, now + (uint64_t)next * 1000000u,
                          memory_order_relaxed);
}

/* End of a turn that received n frames: the receive gap rt_block's spin
 * looks at, and when an application thread last polled. */
static void
turn_done(uint64_t now, int n)
{
    if (n > 0) {
        uint64_t prev =
            atomic_load_explicit(&rt__last_rx_ns, memory_order_relaxed);
        atomic_store_explicit(&rt__rx_gap_ns, now - prev, memory_order_relaxed);
        atomic_store_explicit(&rt__last_rx_ns, now, memory_order_relaxed);
    }
    if (!rt__is_progress)
        atomic_store_explicit(&rt__last_app_poll_ns, now, memory_order_relaxed);
    last_turn_ns = now;
}

bool
rt_poll_due(void)
{
    return base_now_ns() - last_turn_ns >=
           (uint64_t)base_cfg.rx_interval_usec * 1000u;
}

/* Shared port (after a fork): frames other processes dispatched here,
 * then the timers, then, with the port lock, an rx burst dispatched
 * across the processes and the tx flush (runtime/share_rx.c). */
int
rt__poll_shared(void)
{
    uint64_t bytes = 0, now = base_now_ns();
    int n, mine;

    stk_clock_turn(now);
    mine = rt__share_drain();
    run_timers(now);
    /* Deferred output into frames now: the burst below sends them under
     * the port lock, which stk_output_flush must not run under (a full tx
     * queue flushes from inside it). */
    if (rt__tx_due())
        stk_output_flush();
    n = rt__share_rx(now, &bytes);
    rt__share_export_unserved();
    run_timers(now); /* the deadline, after what the input scheduled */
    BASE_STAT_ADD(rx_frames, (uint64_t)n);
    BASE_STAT_ADD(rx_bytes, bytes);
    n += mine;
    turn_done(now, n);
    stk_clock_turn(0);
    return n;
}

/* A process that joined another's port (runtime/remote.c): the frames
 * dispatched to it, copied into its cells, then the timers and the tx
 * flush. It never receives from the port itself. */
int
rt__poll_joined(void)
{
    uint64_t now = base_now_ns();
    int n;

    stk_clock_turn(now);
    n = rt__rm_drain();
    run_timers(now);
    rt__share_export_unserved();
    run_timers(now);
    BASE_STAT_ADD(rx_frames, (uint64_t)n);
    turn_done(now, n);
    if (rt__tx_due())
        rt__tx_send_all();
    stk_clock_turn(0);
    return n;
}

void
rt__capture_dropped(const struct rte_mbuf *m, uint8_t mark)
{
    uint32_t cl;
    struct base_sr_cap *r =
        base_sr_cap_reserve(BASE_SR_CAP_RX, m->pkt_len, &cl);

    if (r == NULL)
        return;
    if (cl > m->data_len)
        cl = m->data_len; /* the first segment only */
    r->caplen = cl;
    memcpy(base_sr_cap_data(r), rte_pktmbuf_mtod(m, const void *), cl);
    base_sr_cap_commit(r, mark);
}

/* One rx burst (a burst from each queue in turn when one process polls
 * several), input into the stack: how many frames it took. */
static uint16_t
rx_burst_input(uint64_t *bytes)
{
    struct rte_mbuf *pkts[RT__MAX_BURST];
    uint16_t n = 0;

    for (uint16_t k = 0; k < rt__port.nq && n < rt__port.burst; k++)
        n += rte_eth_rx_burst(rt__port.port_id,
                              (uint16_t)((first_q + k) % rt__port.nq), pkts + n,
                              (uint16_t)(rt__port.burst - n));
    if (rt__port.nq > 1)
        first_q = (uint16_t)((first_q + 1) % rt__port.nq);
    if (rt__impair_active()) /* ACCEL_TEST_IMPAIR, dir=rx */
        n = rt__impair_rx(pkts, n, (uint16_t)rt__port.burst);
    for (uint16_t i = 0; i < n; i++) {
        struct rte_mbuf *m = pkts[i];

        if (i + 1 < n)
            rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
        *bytes += m->pkt_len;
        if (m->nb_segs != 1 ||
            (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
                RTE_MBUF_F_RX_IP_CKSUM_BAD ||
            (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) ==
                RTE_MBUF_F_RX_L4_CKSUM_BAD) {
            BASE_STAT_INC(rx_drop_stack);
            RT_CAPTURE_DROPPED(m, BASE_SR_CAP_DROP_PORT);
        } else
            stk_input(rte_pktmbuf_mtod(m, const void *), m->data_len);
        rt__mbuf_recycle(m);
    }
    return n;
}

int
rt_poll(void)
{
    BASE_STAT_INC(polls);
    if (!rt__port.up)
        return 0;
    return rt__dp->poll();
}

/* This process alone on its port: rx bursts until the ring is empty or
 * the budget spent, then the timers and the tx flush. */
int
rt__poll_own(void)
{
    uint64_t bytes = 0, now;
    uint32_t n = 0;
    uint16_t got;

    do {
        now = base_now_ns();
        stk_clock_turn(now);
        got = rx_burst_input(&bytes);
        n += got;
    } while (rt__rx_again(got, n));
    BASE_STAT_ADD(rx_frames, n);
    BASE_STAT_ADD(rx_bytes, bytes);
    turn_done(now, (int)n);
    run_timers(now);
    if (rt__tx_due())
        rt__tx_send_all();
    stk_clock_turn(0);
    return (int)n;
}

int
rt_next_timer_ms(void)
{
    uint64_t now = base_now_ns();
    uint64_t d = atomic_load_explicit(&timer_deadline_ns, memory_order_relaxed);

    /* Frames ACCEL_TEST_IMPAIR holds leave when due. */
    if (rt__impair_active()) {
        uint64_t h = rt__impair_next_ns();
        d = h < d ? h : d;
    }
    if (d <= now)
        return 0;
    /* Frames wait in the tx backlog: try the ring again within 1 ms. */
    if (atomic_load_explicit(&rt__tx_backlog, memory_order_relaxed) > 0 &&
        d - now > 1000000u)
        return 1;
    /* Round up so a sleep never ends just before the deadline. */
    return (int)((d - now + 999999u) / 1000000u);
}

void
rt__loop_atfork_child(void)
{
    /* Another thread may have held the lock at fork time. */
    pthread_mutex_init(&stack_lock, NULL);
}

void
rt__loop_reset(void)
{
    atomic_store(&timer_deadline_ns, 0);
    atomic_store(&rt__last_app_poll_ns, 0);
    atomic_store(&rt__last_rx_ns, 0);
    atomic_store(&rt__rx_gap_ns, UINT64_MAX);
}
