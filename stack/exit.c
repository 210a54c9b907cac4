/*
 * The stack at process exit. When a process exits, Linux closes its
 * sockets for it: FIN for a connection whose data was all read, RST when
 * unread data remains, and the kernel then completes the close. Our stack
 * lives in the process, so at exit (atexit, before the port closes) every
 * connection the application still held open is closed here with the same
 * FIN-or-RST rule as close(2) (stk__tcp_close), and the frames go out.
 * Nobody is left to answer the peer afterwards: it sees the FIN (EOF, as
 * with Linux) or the RST at once, but its last ACK/FIN exchange gets no
 * reply, so its side of the close ends by its own timeout. So the runtime
 * lingers (boundedly, runtime/start.c) until the close handshakes are
 * done: the peer has acknowledged our data and FIN, and has sent its own
 * FIN (FIN-WAIT-2 ends), which the stack then acknowledges. Connections
 * the application already closed (no socket attached) are left alone.
 *
 * Runs under the stack lock; the caller flushes the tx buffer afterwards.
 */
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "stk.h"
#include "stk_priv.h"

int
stk_close_all_at_exit(void)
{
    struct tcp_pcb *pcb, *next;
    int n = 0;

    /* Closing may unlink and free the pcb: take the next one first. */
    for (pcb = tcp_active_pcbs; pcb != NULL; pcb = next) {
        struct stk_sock *s = pcb->callback_arg;

        next = pcb->next;
        if (s == NULL || s->pcb.tcp != pcb)
            continue;
        stk__tcp_close(s);
        n++;
    }
    return n;
}

int
stk_pending_output(bool peer_fin)
{
    struct tcp_pcb *pcb;
    int n = 0;

    for (pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
        if (pcb->unsent != NULL || pcb->unacked != NULL ||
            pcb->state == FIN_WAIT_1 || pcb->state == CLOSING ||
            pcb->state == LAST_ACK || (peer_fin && pcb->state == FIN_WAIT_2))
            n++;
    }
    return n;
}

uint64_t
stk_pending_bytes(void)
{
    struct tcp_pcb *pcb;
    uint64_t n = 0;

    for (pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next)
        n += pcb->snd_lbb - pcb->lastack;
    return n;
}
