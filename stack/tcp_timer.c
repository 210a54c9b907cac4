/*
 * Every connection has one timer (as Linux's icsk_retransmit_timer): the
 * retransmission timeout, the tail loss probe or RACK's reordering window,
 * whichever was armed last. They live on a wheel of 1 ms slots, so arming,
 * re-arming and cancelling are O(1) at any number of connections, and the
 * poll loop's timer turn (stk_timers) runs only the slots whose time has
 * come. A deadline further away than the wheel's turn (1.024 s) waits in
 * its slot for the lap it belongs to. Deadlines are rounded up to the
 * millisecond: a timer never fires early, and at most 1 ms late when the
 * loop polls at least that often.
 *
 * Re-arming is lazy, as the RTO of a busy connection moves on with every
 * segment sent or acked: a deadline later than the slot the connection is
 * linked into only updates t_when, and cancelling only clears it; the slot,
 * when its time comes, drops the cancelled and moves the postponed on
 * (once per RTO or probe timeout per connection, instead of an unlink and
 * a link, each touching two other connections, per segment). Only an
 * earlier deadline, or the pcb leaving lwIP's active list or memory
 * (stk__timer_unlink), takes the connection off its slot at once.
 *
 * A connection leaves the wheel when its pcb leaves lwIP's active list
 * (TIME-WAIT, closed, frozen across fork: stk__timer_cancel from
 * pcb_hash.c) or is freed.
 *
 * Connections that pacing holds back (BBR: the next segment may not leave
 * yet) wait on a list that every tick runs tcp_output for; they go again
 * as far as pacing lets them, and wait again if there is more.
 */
#include <string.h>

#include "stk_priv.h"
#include "tcp_snd.h"

#define SLOTS 1024u
#define MASK (SLOTS - 1u)
#define NS_PER_TICK 1000000u

static struct stk_tcp_ext *slot[SLOTS];
static struct stk_tcp_ext *paced; /* held back by pacing */
static uint64_t nonempty[SLOTS / 64];
static uint64_t cur_tick; /* every tick up to this one has run */
static bool wheel_started;
static uint32_t armed;

static uint64_t
tick_of(uint64_t when)
{
    return (when + NS_PER_TICK - 1) / NS_PER_TICK;
}

static void
link_in(struct stk_tcp_ext *x)
{
    uint64_t t = tick_of(x->t_when);
    uint32_t s;

    if (t <= cur_tick)
        t = cur_tick + 1;
    s = (uint32_t)(t & MASK);
    x->t_tick = t;
    x->t_prev = NULL;
    x->t_next = slot[s];
    if (x->t_next != NULL)
        x->t_next->t_prev = x;
    slot[s] = x;
    nonempty[s / 64] |= 1ull << (s % 64);
    x->t_linked = true;
    armed++;
}

static void
unlink_x(struct stk_tcp_ext *x)
{
    uint32_t s = (uint32_t)(x->t_tick & MASK);

    if (x->t_prev != NULL) {
        x->t_prev->t_next = x->t_next;
    } else {
        slot[s] = x->t_next;
        if (slot[s] == NULL)
            nonempty[s / 64] &= ~(1ull << (s % 64));
    }
    if (x->t_next != NULL)
        x->t_next->t_prev = x->t_prev;
    x->t_next = x->t_prev = NULL;
    x->t_linked = false;
    armed--;
}

static void
wheel_start(void)
{
    if (!wheel_started) {
        cur_tick = tick_of(stk__now_ns()) - 1;
        wheel_started = true;
    }
}

void
stk__timer_arm(struct tcp_pcb *pcb, uint8_t kind, uint64_t when)
{
    struct stk_tcp_ext *x = &pcb->acc;

    wheel_start();
    x->t_kind = kind;
    x->t_when = when;
    if (x->t_linked) {
        if (tick_of(when) >= x->t_tick)
            return; /* its slot moves it on when the time comes */
        unlink_x(x);
    }
    link_in(x);
}

void
stk__timer_cancel(struct tcp_pcb *pcb)
{
    pcb->acc.t_when = 0; /* its slot drops it */
}

void
stk__timer_unlink(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (x->t_linked)
        unlink_x(x);
    x->t_when = 0;
}

void
stk__pace_wait(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (x->p_linked)
        return;
    wheel_start();
    x->p_prev = NULL;
    x->p_next = paced;
    if (paced != NULL)
        paced->p_prev = x;
    paced = x;
    x->p_linked = true;
}

void
stk__pace_cancel(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (!x->p_linked)
        return;
    if (x->p_prev != NULL)
        x->p_prev->p_next = x->p_next;
    else
        paced = x->p_next;
    if (x->p_next != NULL)
        x->p_next->p_prev = x->p_prev;
    x->p_next = x->p_prev = NULL;
    x->p_linked = false;
}

/* Each held-back connection sends what pacing now allows. */
static void
run_paced(void)
{
    struct stk_tcp_ext *x = paced, *next;

    paced = NULL; /* tcp_output may put them back */
    for (; x != NULL; x = next) {
        next = x->p_next;
        x->p_next = x->p_prev = NULL;
        x->p_linked = false;
        tcp_output(STK_PCB_OF(x));
    }
}

static void
fire(struct stk_tcp_ext *x, uint64_t now)
{
    struct tcp_pcb *pcb = STK_PCB_OF(x);

    switch (x->t_kind) {
    case STK_T_RTO:
        stk__rto_fire(pcb, now);
        break;
    case STK_T_TLP:
        stk__tlp_fire(pcb, now);
        break;
    case STK_T_REO:
        stk__reo_fire(pcb, now);
        break;
    default:
        break;
    }
}

static void
run_slot(uint32_t s, uint64_t tick, uint64_t now)
{
    struct stk_tcp_ext *x = slot[s], *next;

    /* Take the whole slot: what fires may arm timers into it again. */
    slot[s] = NULL;
    nonempty[s / 64] &= ~(1ull << (s % 64));
    for (; x != NULL; x = next) {
        next = x->t_next;
        x->t_next = x->t_prev = NULL;
        x->t_linked = false;
        armed--;
        if (x->t_when == 0)
            continue; /* cancelled */
        if (tick_of(x->t_when) > tick) {
            link_in(x); /* postponed, or a later lap */
            continue;
        }
        x->t_when = 0;
        fire(x, now);
    }
}

void
stk__tcp_timers(uint64_t now)
{
    uint64_t tick = now / NS_PER_TICK, t;

    if (!wheel_started || tick <= cur_tick)
        return;
    if (armed == 0) {
        cur_tick = tick;
        run_paced();
        return;
    }
    /* The nonempty slots from cur_tick + 1 to tick, a bitmap word at a
     * time: after a long step (a descheduled process) this is at most
     * SLOTS / 64 words, not SLOTS ticks. */
    t = tick - cur_tick > SLOTS ? tick - SLOTS + 1 : cur_tick + 1;
    while (t <= tick) {
        uint32_t s = (uint32_t)(t & MASK);
        uint64_t bits = nonempty[s / 64] >> (s % 64);

        if (bits == 0) {
            t += 64 - s % 64; /* the next word */
            continue;
        }
        t += (uint64_t)__builtin_ctzll(bits);
        if (t > tick)
            break;
        cur_tick = t - 1; /* arming while firing lands after t */
        run_slot((uint32_t)(t & MASK), tick, now);
        t++;
    }
    cur_tick = tick;
    run_paced();
}

uint64_t
stk__tcp_timers_next(void)
{
    uint32_t start, w, s;
    uint64_t bits;

    if (paced != NULL)
        return (cur_tick + 1) * NS_PER_TICK; /* the next tick */
    if (armed == 0)
        return 0;
    /* The first nonempty slot after cur_tick, a bitmap word at a time
     * (this runs at every poll turn). */
    start = (uint32_t)((cur_tick + 1) & MASK);
    w = start / 64;
    bits = nonempty[w] & (~0ull << (start % 64));
    for (uint32_t k = 0; k <= SLOTS / 64; k++) {
        if (bits != 0) {
            s = w * 64 + (uint32_t)__builtin_ctzll(bits);
            return (cur_tick + 1 + ((s - start) & MASK)) * NS_PER_TICK;
        }
        w = (w + 1) % (SLOTS / 64);
        bits = nonempty[w];
    }
    return (cur_tick + SLOTS) * NS_PER_TICK;
}

/* A fork child's wheel is a copy of its parent's: the entries point into
 * the copied pcbs, which is what it holds. Nothing to do. */
