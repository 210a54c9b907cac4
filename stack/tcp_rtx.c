/*
 * The retransmission queue: one entry per segment of lwIP's pcb->unacked
 * (SYNs excepted), in sequence order, with what lwIP does not keep: when
 * the segment was last sent and its scoreboard bits (SACKed, lost,
 * retransmitted). lwIP's list stays the owner of the segments; segments
 * join here when tcp_output first sends them (always at the tail: new
 * data goes out in order and retransmissions stay in place, tcp_rexmit_inplace)
 * and leave from the head when a cumulative ACK frees them.
 *
 * A ring of entries in one allocation (lwIP's heap, so the stack tests'
 * leak checks see it), doubled when full: finding the entry of a sequence
 * number is a binary search, and the scoreboard walks are over contiguous
 * memory instead of lwIP's linked segments.
 */
#include <string.h>

#include "lwip/mem.h"

#include "stk_hooks.h"
#include "stk_test.h"

#include "stk_priv.h"
#include "tcp_snd.h"

struct stk_rtx {
    uint32_t cap, head, n; /* cap: a power of two */
    struct stk_rtx_ent e[];
};

#define RTX_MIN_CAP 16u

uint32_t
stk__rtx_count(const struct stk_tcp_ext *x)
{
    return x->q != NULL ? x->q->n : 0;
}

struct stk_rtx_ent *
stk__rtx_at(struct stk_tcp_ext *x, uint32_t i)
{
    struct stk_rtx *q = x->q;

    return &q->e[(q->head + i) & (q->cap - 1)];
}

int32_t
stk__rtx_find(struct stk_tcp_ext *x, uint32_t seq)
{
    uint32_t lo = 0, hi = stk__rtx_count(x);

    if (hi == 0 || TCP_SEQ_LT(seq, stk__rtx_at(x, 0)->seq) ||
        TCP_SEQ_GEQ(seq, stk__rtx_at(x, hi - 1)->end))
        return -1;
    while (lo + 1 < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (TCP_SEQ_LEQ(stk__rtx_at(x, mid)->seq, seq))
            lo = mid;
        else
            hi = mid;
    }
    return (int32_t)lo;
}

static bool
grow(struct stk_tcp_ext *x)
{
    struct stk_rtx *old = x->q, *q;
    uint32_t cap = old != NULL ? old->cap * 2 : RTX_MIN_CAP;

    q = mem_malloc((mem_size_t)(sizeof(*q) + cap * sizeof(q->e[0])));
    if (q == NULL)
        return false;
    q->cap = cap;
    q->head = 0;
    q->n = 0;
    if (old != NULL) {
        for (uint32_t i = 0; i < old->n; i++)
            q->e[i] = *stk__rtx_at(x, i);
        q->n = old->n;
        mem_free(old);
    }
    x->q = q;
    return true;
}

bool
stk__rtx_push(struct stk_tcp_ext *x, struct tcp_seg *seg, uint32_t seq,
              uint32_t end, uint64_t now)
{
    struct stk_rtx_ent *e;

    if ((x->q == NULL || x->q->n == x->q->cap) && !grow(x))
        return false;
    e = &x->q->e[(x->q->head + x->q->n) & (x->q->cap - 1)];
    x->q->n++;
    e->seq = seq;
    e->end = end;
    e->xmit_ns = now;
    e->seg = seg;
    e->flags = 0;
    return true;
}

void
stk__rtx_pop(struct stk_tcp_ext *x)
{
    struct stk_rtx *q = x->q;

    q->head = (q->head + 1) & (q->cap - 1);
    q->n--;
    if (q->n == 0)
        q->head = 0; /* a request/response connection reuses one line */
}

struct tcp_seg *
stk_tcp_unacked_tail(struct tcp_pcb *pcb)
{
    struct stk_tcp_ext *x = &pcb->acc;
    uint32_t n = stk__rtx_count(x);

    return n > 0 ? stk__rtx_at(x, n - 1)->seg : NULL;
}

void
stk__rtx_free(struct stk_tcp_ext *x)
{
    if (x->q != NULL)
        mem_free(x->q);
    x->q = NULL;
}

/* ---- test hooks (stk_test.h) ------------------------------------------- */

int
stk_test_tcp_check(const struct stk_sock *s)
{
    struct tcp_pcb *pcb = s->type == SOCK_STREAM ? s->pcb.tcp : NULL;
    struct stk_tcp_ext *x;
    struct tcp_seg *seg;
    uint32_t n, i = 0, sacked = 0, lost = 0, retrans = 0;

    if (pcb == NULL)
        return 0;
    x = &pcb->acc;
    n = stk__rtx_count(x);
    for (seg = pcb->unacked; seg != NULL; seg = seg->next) {
        struct stk_rtx_ent *e;

        if (TCPH_FLAGS(seg->tcphdr) & TCP_SYN)
            continue;
        if (i >= n)
            return -1; /* a segment the queue does not hold */
        e = stk__rtx_at(x, i++);
        if (e->seg != seg || e->seq != lwip_ntohl(seg->tcphdr->seqno) ||
            e->end != e->seq + TCP_TCPLEN(seg))
            return -2; /* out of step with lwIP's list */
        sacked += (e->flags & STK_RTX_SACKED) != 0;
        lost += (e->flags & STK_RTX_LOST) != 0;
        retrans += (e->flags & STK_RTX_RETRANS) != 0;
    }
    if (i != n || x->packets_out != n)
        return -3;
    if ((pcb->flags & TF_SACK) && x->sacked_out != sacked)
        return -4;
    if (x->lost_out != lost || x->retrans_out != retrans)
        return -5;
    return 0;
}
