/*
 * Which connections lwIP's periodic TCP timers look at. tcp_fasttmr (every
 * 100 ms: delayed ACKs, a FIN that did not fit, data the application
 * refused) and tcp_slowtmr (every 200 ms: persist probes, keepalive, the
 * FIN-WAIT-2, SYN-RCVD and LAST-ACK timeouts, old out-of-order data, ending
 * a connection whose retransmissions ran out) walked every active pcb on
 * each tick: at a million idle connections, fifteen million pcb visits a
 * second for nothing. Patch 0036 makes both walk the tick list instead:
 *
 *  - a connection joins it when it is touched: it enters the active list
 *    (a SYN-RCVD or SYN-SENT pcb), tcp_output runs for it (at the end of
 *    every segment's input, on every send, retransmission or window update:
 *    stk_tcp_output_begin), or the socket layer changes something only a
 *    timer acts on (close, shutdown, SO_KEEPALIVE, the retransmission timer
 *    giving up: stk__tick_touch);
 *  - tcp_slowtmr, after looking at a connection, lets it go when nothing
 *    in it is timed (stk__tick_done): established or CLOSE-WAIT, no ACK
 *    owed, nothing unsent, refused or out of order, no persist probing, no
 *    keepalive probe outstanding. The retransmission and loss-probe timers
 *    are ours and on their own wheel (tcp_timer.c), not lwIP's ticks.
 *
 * Everything that can give a connection a timed duty is one of those
 * touches, so the walks do exactly the work lwIP's did, on the
 * connections that had anything in the last tick or two and those with a
 * duty pending. The walks cost O(connections touched) per tick, which is
 * bounded by the segments and calls that touched them.
 *
 * Keepalive is the one duty of an idle connection, and it is due hours
 * away: such a connection is parked on a wheel of slow ticks (4096 slots
 * of 200 ms, one lap 819 s) at the tick its probe is due
 * (pcb->tmr + keep_idle), and goes back on the tick list then; tcp_slowtmr
 * sends the probe as before and keeps it while probes are outstanding. A
 * deadline beyond one lap waits in its slot for its lap: a parked
 * connection is looked at once per lap (9 times in Linux's default 2 h).
 * If the connection was touched meanwhile (pcb->tmr moved on), tcp_slowtmr
 * finds nothing due and parks it again at the new deadline.
 *
 * Calls come from lwIP and the socket layer with the stack lock held.
 */
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "stk_hooks.h"
#include "stk_priv.h"
#include "tcp_snd.h"

#define KA_SLOTS 4096u
#define KA_MASK (KA_SLOTS - 1u)

static struct stk_tcp_ext *ticking; /* the tick list's head */
static uint32_t nticking;
static struct stk_tcp_ext *ka_slot[KA_SLOTS];
static uint32_t nparked;
static uint32_t ka_last; /* the last slow tick whose slot ran */
static bool ka_started;

static void
tick_unlink(struct stk_tcp_ext *x)
{
    if (x->k_prev != NULL)
        x->k_prev->k_next = x->k_next;
    else
        ticking = x->k_next;
    if (x->k_next != NULL)
        x->k_next->k_prev = x->k_prev;
    x->k_next = x->k_prev = NULL;
    x->k_linked = false;
    nticking--;
}

static void
ka_unlink(struct stk_tcp_ext *x)
{
    if (x->ka_prev != NULL)
        x->ka_prev->ka_next = x->ka_next;
    else
        ka_slot[x->ka_due & KA_MASK] = x->ka_next;
    if (x->ka_next != NULL)
        x->ka_next->ka_prev = x->ka_prev;
    x->ka_next = x->ka_prev = NULL;
    x->ka_linked = false;
    nparked--;
}

void
stk__tick_touch(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (x->k_linked || !x->k_active)
        return;
    x->k_prev = NULL;
    x->k_next = ticking;
    if (ticking != NULL)
        ticking->k_prev = x;
    ticking = x;
    x->k_linked = true;
    nticking++;
}

static void
tick_forget(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (x->k_linked)
        tick_unlink(x);
    if (x->ka_linked)
        ka_unlink(x);
}

void
stk__tick_listed(struct tcp_pcb *pcb, bool active)
{
    pcb->acc.k_active = active;
    if (active)
        stk__tick_touch(pcb);
    else
        tick_forget(pcb);
}

struct tcp_pcb *
stk_tcp_tick_first(void)
{
    return ticking != NULL ? STK_PCB_OF(ticking) : NULL;
}

struct tcp_pcb *
stk_tcp_tick_next(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *n = pcb->acc.k_next;

    return n != NULL ? STK_PCB_OF(n) : NULL;
}

/* Something in the connection needs one of lwIP's ticks. */
static bool
has_timed_duty(const struct tcp_pcb *pcb)
{
    if (pcb->state != ESTABLISHED && pcb->state != CLOSE_WAIT)
        return true; /* handshake and closing timeouts, FIN retransmission */
    if (pcb->flags & (TF_ACK_DELAY | TF_ACK_NOW | TF_CLOSEPEND))
        return true;
    if (pcb->unsent != NULL || pcb->refused_data != NULL || pcb->ooseq != NULL)
        return true;
    if (pcb->persist_backoff > 0 || pcb->nrtx > 0)
        return true;
    return ip_get_option(pcb, SOF_KEEPALIVE) && pcb->keep_cnt_sent > 0;
}

static void
park(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t due = pcb->tmr + pcb->keep_idle / TCP_SLOW_INTERVAL + 1u;

    if (x->ka_linked && x->ka_due != due)
        ka_unlink(x);
    /* Due already (tcp_keepalive failed this tick): stay on the tick list. */
    if ((int32_t)(due - tcp_ticks) <= 0) {
        if (x->ka_linked)
            ka_unlink(x);
        return;
    }
    if (!x->ka_linked) {
        x->ka_due = due;
        x->ka_prev = NULL;
        x->ka_next = ka_slot[due & KA_MASK];
        if (x->ka_next != NULL)
            x->ka_next->ka_prev = x;
        ka_slot[due & KA_MASK] = x;
        x->ka_linked = true;
        nparked++;
    }
    tick_unlink(x);
}

void
stk_tcp_tick_done(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;

    if (!x->k_linked || has_timed_duty(pcb))
        return;
    if (ip_get_option(pcb, SOF_KEEPALIVE)) {
        park(pcb);
        return;
    }
    if (x->ka_linked) /* keepalive turned off */
        ka_unlink(x);
    tick_unlink(x);
}

/* tcp_slowtmr begins (tcp_ticks just moved): the parked connections whose
 * keepalive is due go back on the tick list, before the walk. */
void
stk_tcp_tick_slow(void)
{
    if (!ka_started) {
        ka_last = tcp_ticks - 1u;
        ka_started = true;
    }
    /* Every slow tick's slot once, also those a late poll skipped (at most
     * one lap: a longer gap has looked at every slot). */
    for (uint32_t n = 0; ka_last != tcp_ticks && n < KA_SLOTS; n++) {
        struct stk_tcp_ext *x, *next;

        ka_last++;
        for (x = ka_slot[ka_last & KA_MASK]; x != NULL; x = next) {
            next = x->ka_next;
            if ((int32_t)(x->ka_due - tcp_ticks) <= 0) {
                ka_unlink(x);
                stk__tick_touch(STK_PCB_OF(x));
            }
        }
    }
    ka_last = tcp_ticks;
}

uint32_t
stk_test_tick_listed(void)
{
    return nticking;
}

uint32_t
stk_test_tick_parked(void)
{
    return nparked;
}
