/*
 * Deferred TCP output within one event-loop turn (Linux's autocork, for
 * the turn). A thread that runs an event loop (the runtime's tx deferral,
 * ACCEL_TX_DEFER) sends nothing before the turn ends anyway; its sendmsg
 * therefore leaves the new segments on lwIP's unsent queue and puts the
 * socket on a list, and stk_output_flush() runs tcp_output for each one
 * just before the runtime sends the turn's frames.
 *
 * What it buys: a close() or shutdown(SHUT_WR) that follows the last write
 * in the same turn finds the data still unsent, and lwIP sets FIN on its
 * last segment (tcp_send_fin), so the response and the FIN reach the peer
 * in one segment. As separate segments the peer could read the response
 * and close first (a client then holds the TIME-WAIT, not the server,
 * and runs out of ports under a connection-per-request load), or see the
 * data before the FIN where Linux's loopback-fast peer would not. Several
 * writes in one turn also leave as full segments instead of one each.
 *
 * All of it runs under the stack lock; the count is also read without it.
 */
#include <stdatomic.h>

#include "lwip/tcp.h"

#include "stk_priv.h"

static __thread bool defer_on;
static struct stk_sock *out_head;
static _Atomic unsigned out_n;

void
stk_output_defer(bool on)
{
    defer_on = on;
}

unsigned
stk_output_pending(void)
{
    return atomic_load_explicit(&out_n, memory_order_relaxed);
}

void
stk__tcp_output_soon(struct stk_sock *s)
{
    if (!defer_on) {
        tcp_output(s->pcb.tcp);
        return;
    }
    if (s->out_pending)
        return;
    s->out_pending = true;
    s->out_next = out_head;
    out_head = s;
    atomic_store_explicit(&out_n, stk_output_pending() + 1,
                          memory_order_relaxed);
}

void
stk__output_forget(struct stk_sock *s)
{
    struct stk_sock **pp;

    if (!s->out_pending)
        return;
    for (pp = &out_head; *pp != NULL; pp = &(*pp)->out_next) {
        if (*pp == s) {
            *pp = s->out_next;
            break;
        }
    }
    s->out_pending = false;
    atomic_store_explicit(&out_n, stk_output_pending() - 1,
                          memory_order_relaxed);
}

void
stk_output_flush(void)
{
    /* Taken whole first: tcp_output may fill the port's tx queue, whose
     * flush comes back here and finds the list empty. */
    struct stk_sock *s = out_head;

    out_head = NULL;
    atomic_store_explicit(&out_n, 0, memory_order_relaxed);
    while (s != NULL) {
        struct stk_sock *next = s->out_next;

        s->out_pending = false;
        s->out_next = NULL;
        /* The connection may have been reset or closed meanwhile: lwIP
         * then freed the pcb (NULL here) or already sent (close). */
        if (s->pcb.tcp != NULL && !s->frozen)
            tcp_output(s->pcb.tcp);
        s = next;
    }
}
