/*
 * The shared flow table (share_int.h): TCP 4-tuple -> the process whose
 * stack holds the connection, or "frozen" (copied by a fork, not claimed
 * yet: its segments are held until a process claims it). Open addressing
 * with linear probing, keyed by SipHash. Each stack reports the
 * connections it adds and removes (stk_set_flow_ops); the reports are
 * applied under the port lock, always before the process transmits, so an
 * owner is on record before its SYN or SYN-ACK leaves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "share_int.h"
#include "stats.h"
#include "stk.h"

/* Flow reports waiting for the port lock (stack lock held). */
struct flow_op {
    struct stk_flow f;
    bool add, tw;
};
static struct flow_op *ops;
static uint32_t capops;
uint32_t rt__sh_nops;

/* ---- flow table (port lock held) -------------------------------------- */

void
rt__sh_flow_canon(const struct stk_flow *f, struct stk_flow *out)
{
    uint64_t w[4], k;

    *out = *f;
    if (!f->v6)
        return;
    /* An IPv6 flow's two addresses as one 64-bit key, keyed SipHash so
     * that no peer can choose addresses that collide with another flow
     * (the stack's own lip/rip are only an XOR fold of them). */
    memcpy(w, f->lip6, 16);
    memcpy(w + 2, f->rip6, 16);
    k = base_siphash(rt__sh->key, w, 4, 2, 4);
    memset(out, 0, sizeof(*out));
    out->lip = (uint32_t)(k >> 32);
    out->rip = (uint32_t)k;
    out->lport = f->lport;
    out->rport = f->rport;
}

/* The hash of a flow already in the table's form. */
static uint32_t
hash_canon(const struct stk_flow *c)
{
    uint64_t w[2] = {(uint64_t)c->lip << 32 | c->rip,
                     (uint64_t)c->lport << 16 | c->rport};

    return (uint32_t)base_siphash(rt__sh->key, w, 2, 1, 3);
}

uint32_t
rt__sh_flow_hash(const struct stk_flow *f)
{
    struct stk_flow c;

    rt__sh_flow_canon(f, &c);
    return hash_canon(&c);
}

static bool
flow_eq(const struct sh_flow *e, const struct stk_flow *f)
{
    return e->lip == f->lip && e->rip == f->rip && e->lport == f->lport &&
           e->rport == f->rport;
}

/* Two flows (either form) are the same connection. */
static bool
flow_same(const struct stk_flow *a, const struct stk_flow *b)
{
    struct stk_flow ca, cb;

    rt__sh_flow_canon(a, &ca);
    rt__sh_flow_canon(b, &cb);
    return ca.lip == cb.lip && ca.rip == cb.rip && ca.lport == cb.lport &&
           ca.rport == cb.rport;
}

struct sh_flow *
rt__sh_flow_find(const struct stk_flow *f0)
{
    struct stk_flow c, *f = &c;

    rt__sh_flow_canon(f0, &c);
    for (uint32_t i = hash_canon(f) & (SH_FLOWS - 1); rt__sh->flow[i].used;
         i = (i + 1) & (SH_FLOWS - 1))
        if (flow_eq(&rt__sh->flow[i], f))
            return &rt__sh->flow[i];
    return NULL;
}

struct sh_flow *
rt__sh_flow_insert(const struct stk_flow *f0)
{
    static bool full_logged;
    struct stk_flow c, *f = &c;
    uint32_t i;

    rt__sh_flow_canon(f0, &c);
    for (i = hash_canon(f) & (SH_FLOWS - 1); rt__sh->flow[i].used;
         i = (i + 1) & (SH_FLOWS - 1))
        if (flow_eq(&rt__sh->flow[i], f))
            return &rt__sh->flow[i];
    if (rt__sh->nflows >= SH_FLOW_MAX) {
        if (!full_logged)
            BASE_ERR("share",
                     "flow table full (%u connections across the "
                     "processes); new connections may be reset: spread the "
                     "load over more interfaces or close idle connections",
                     SH_FLOW_MAX);
        full_logged = true;
        return NULL;
    }
    memset(&rt__sh->flow[i], 0, sizeof(rt__sh->flow[i]));
    rt__sh->flow[i].lip = f->lip;
    rt__sh->flow[i].rip = f->rip;
    rt__sh->flow[i].lport = f->lport;
    rt__sh->flow[i].rport = f->rport;
    rt__sh->flow[i].used = 1;
    rt__sh->nflows++;
    return &rt__sh->flow[i];
}

/* The entry names this process as the connection's only owner (live, not
 * in TIME-WAIT); segments held for it stay until replayed or freed. */
void
rt__sh_flow_take(struct sh_flow *e)
{
    e->owner = (uint8_t)rt__sh_me;
    e->frozen = 0;
    e->holders = 0;
    e->tw = 0;
}

static void
held_free(const struct stk_flow *f)
{
    for (int i = 0; i < SH_HELD; i++) {
        struct sh_held *h = &rt__sh->held[i];
        if (h->m != NULL && flow_same(&h->f, f)) {
            rt__sh_mbuf_free(h->m);
            h->m = NULL;
        }
    }
}

/* Linear probing deletion without tombstones (as stack/pcb_hash.c). */
void
rt__sh_flow_erase(struct sh_flow *e)
{
    uint32_t i = (uint32_t)(e - rt__sh->flow), j = i, home;
    struct stk_flow f = {
        .lip = e->lip, .rip = e->rip, .lport = e->lport, .rport = e->rport};

    if (e->frozen)
        held_free(&f);
    for (;;) {
        struct stk_flow g;

        j = (j + 1) & (SH_FLOWS - 1);
        if (!rt__sh->flow[j].used)
            break;
        g = (struct stk_flow){.lip = rt__sh->flow[j].lip,
                              .rip = rt__sh->flow[j].rip,
                              .lport = rt__sh->flow[j].lport,
                              .rport = rt__sh->flow[j].rport};
        home = hash_canon(&g) & (SH_FLOWS - 1);
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        rt__sh->flow[i] = rt__sh->flow[j];
        i = j;
    }
    rt__sh->flow[i].used = 0;
    rt__sh->nflows--;
}

void
rt__sh_ops_apply(void)
{
    for (uint32_t k = 0; k < rt__sh_nops; k++) {
        struct sh_flow *e;

        if (ops[k].add) {
            e = rt__sh_flow_insert(&ops[k].f);
            if (e != NULL) {
                if (e->frozen)
                    held_free(&ops[k].f);
                rt__sh_flow_take(e);
                e->tw = ops[k].tw;
            }
        } else {
            e = rt__sh_flow_find(&ops[k].f);
            if (e != NULL && !e->frozen && e->owner == rt__sh_me)
                rt__sh_flow_erase(e);
        }
    }
    rt__sh_nops = 0;
}

void
rt__sh_flow_note(const struct stk_flow *f, bool add, bool tw)
{
    if (rt__sh_nops == capops) {
        uint32_t cap = capops ? capops * 2 : 256;
        struct flow_op *n = realloc(ops, cap * sizeof(*ops));
        if (n == NULL) {
            /* Apply now rather than lose the report. */
            rt__sh_port_lock();
            rt__sh_ops_apply();
            rt__sh_port_unlock();
            if (rt__sh_nops == capops)
                return;
        } else {
            ops = n;
            capops = cap;
        }
    }
    ops[rt__sh_nops].f = *f;
    ops[rt__sh_nops].add = add;
    ops[rt__sh_nops].tw = tw;
    rt__sh_nops++;
    if (rt__sh_port_held)
        rt__sh_ops_apply();
}

/* An active open's 4-tuple, reserved across the processes before its
 * port is taken (stack/fork.c); the add report that follows confirms it. */
bool
rt__sh_flow_reserve(const struct stk_flow *f, bool take)
{
    bool locked = !rt__sh_port_held, ok = true;
    struct sh_flow *e;

    if (locked)
        rt__sh_port_lock();
    rt__sh_ops_apply();
    e = rt__sh_flow_find(f);
    if (take) {
        /* Any entry (another process's connection, or a TIME-WAIT
         * anywhere) makes the 4-tuple unavailable. */
        if (e != NULL || (e = rt__sh_flow_insert(f)) == NULL) {
            ok = false;
        } else {
            rt__sh_flow_take(e);
        }
    } else if (e != NULL && !e->frozen && e->owner == rt__sh_me) {
        rt__sh_flow_erase(e);
    }
    if (locked)
        rt__sh_port_unlock();
    return ok;
}

/* ---- claiming connections copied by fork ------------------------------ */

int
rt__sh_flow_claim(const struct stk_flow *f)
{
    struct sh_flow *e;
    int r = 0;

    if (!rt__shared)
        return -ENODEV;
    rt__sh_port_lock();
    rt__sh_ops_apply();
    e = rt__sh_flow_find(f);
    if (e != NULL && e->frozen && (e->holders & (1ull << rt__sh_me))) {
        rt__sh_flow_take(e);
        r = 1;
        BASE_STAT_INC(share_claims);
    } else if (e != NULL && !e->frozen && e->owner == rt__sh_me) {
        r = 1;
    }
    rt__sh_port_unlock();
    return r;
}

int
rt__sh_flow_release(const struct stk_flow *f)
{
    struct sh_flow *e;
    int r = 0;

    if (!rt__shared)
        return 0;
    rt__sh_port_lock();
    e = rt__sh_flow_find(f);
    if (e != NULL && e->frozen && (e->holders & (1ull << rt__sh_me))) {
        if (e->holders == (1ull << rt__sh_me)) {
            rt__sh_flow_take(e);
            r = 1; /* the last copy: the caller closes it for real */
        } else {
            e->holders &= ~(1ull << rt__sh_me);
        }
    }
    rt__sh_port_unlock();
    return r;
}

void
rt__sh_flow_replay(const struct stk_flow *f)
{
    struct rte_mbuf *got[64];
    int n, from = 0;

    if (!rt__shared)
        return;
    if (rt__remote) {
        /* A joined process cannot read the port's mbufs: the segments go,
         * and the peer sends them again. */
        rt__sh_port_lock();
        held_free(f);
        rt__sh_port_unlock();
        return;
    }
    do { /* TCP puts them back in order */
        n = 0;
        rt__sh_port_lock();
        for (; from < SH_HELD && n < 64; from++) {
            struct sh_held *h = &rt__sh->held[from];
            if (h->m != NULL && flow_same(&h->f, f)) {
                got[n++] = h->m;
                h->m = NULL;
            }
        }
        rt__sh_port_unlock();
        for (int i = 0; i < n; i++) {
            stk_input(rte_pktmbuf_mtod(got[i], const void *), got[i]->data_len);
            rte_pktmbuf_free(got[i]);
        }
    } while (from < SH_HELD);
}
