/*
 * Hashed demultiplexing for lwIP's TCP input. lwIP keeps its TCP PCBs in
 * singly linked lists and tcp_input walks them for every segment: active
 * connections, then TIME-WAIT, then listeners; at thousands of
 * connections that walk is the cost of a segment. Patch 0004 gives us
 * three hooks: a PCB joins a list (after TCP_REG), a PCB leaves one
 * (before TCP_RMV, and where tcp_slowtmr unlinks by hand), and tcp_input
 * asks for the PCBs of a list that may match the segment. This file keeps
 * one open-addressing table over the three lists and answers those
 * questions; the lists themselves stay lwIP's, untouched.
 *
 * Keys: a connection (active or TIME-WAIT list) by its 4-tuple, a listener
 * by its local port alone (tcp_input then picks the specific address
 * before the wildcard among them, as it always did). Each slot holds the
 * PCB, its list and the 32-bit hash, so probing compares slot words and
 * dereferences only the PCB that matches. The hash is SipHash-1-3 keyed
 * with getrandom() bytes: a peer choosing its addresses and ports cannot
 * aim them at one run of slots without the key.
 *
 * The table is linear probing over a power-of-two array kept at most half
 * full (it doubles at half, halves below an eighth, never under
 * PH_MIN_SLOTS), deletion shifts later entries back, so there are no
 * tombstones and a lookup stops at the first empty slot. Memory comes from
 * malloc (16 bytes a slot: 2 MB at 65k connections). If it cannot grow
 * when full, the table is dropped for good and lookups walk lwIP's lists
 * (without the move-to-front lwIP did): slower, never wrong.
 *
 * lwIP never has two PCBs with the same 4-tuple on the active and
 * TIME-WAIT lists (tcp_connect refuses it, tcp_listen_input only runs when
 * both lookups failed) nor two listeners with the same address and port,
 * so at most one candidate of a list matches: the order in which
 * candidates come cannot change which PCB tcp_input takes.
 *
 * Removal (patch 0006): lwIP's TCP_RMV finds the PCB before the one it
 * removes by walking its singly linked list from the head, where new
 * connections go, so removing old ones walked nearly the whole list (10000
 * clients closing at once: a quarter of nginx's worker time). Each active
 * PCB's slot also holds its predecessor on lwIP's list, kept by the same
 * hooks (a PCB joins at the head; one that leaves hands its predecessor to
 * its successor), and TCP_RMV starts its walk there, after checking that
 * it still points at the PCB being removed. The TIME-WAIT list keeps the
 * walk: retired PCBs (stk_pcb_tw_retire) stay on it out of the table.
 *
 * Calls come from lwIP with the stack lock held; nothing here blocks.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "log.h"
#include "siphash.h"
#include "stk_hooks.h"
#include "stk_priv.h"
#include "stk_test.h"

/* pcb->flags bit lwIP does not use (its TF_* stop at 0x1000): a TIME-WAIT
 * pcb already out of the table, waiting for tcp_slowtmr. */
#define STK_TF_TW_RETIRED 0x8000U
_Static_assert(sizeof(tcpflags_t) >= 2 && TF_SACK < STK_TF_TW_RETIRED,
               "STK_TF_TW_RETIRED must be a bit lwIP leaves unused");
#define PH_MIN_SLOTS 1024u /* 16 KB: the table's size when (nearly) empty */

enum ph_list { PH_NONE = 0, PH_ACTIVE, PH_TW, PH_LISTEN };

struct ph_slot {
    uint32_t hash;
    uint32_t list;        /* enum ph_list */
    struct tcp_pcb *pcb;  /* NULL: empty */
    struct tcp_pcb *prev; /* active list: the PCB before pcb (NULL: head) */
};

static struct {
    struct ph_slot *v;
    uint32_t mask; /* slots - 1; 0 while v is NULL */
    uint32_t count;
    uint64_t key[2];
    bool keyed;
    bool failed;    /* out of memory once: lookups walk the lists */
    long anomalies; /* removals of PCBs the table did not hold */
    /* The PCB the RMV hook last saw leave, and its predecessor. */
    struct tcp_pcb *rmv_pcb, *rmv_prev;
    long rmv_shortcuts; /* removals that started at the kept predecessor */
} ph = {
#ifdef STK_PCB_HASH_OFF
    .failed = true, /* built without the table: lwIP walks its lists */
#endif
};

static void tw_note(struct tcp_pcb *pcb, bool in);

static enum ph_list
list_of(struct tcp_pcb **pcbs)
{
    if (pcbs == &tcp_active_pcbs)
        return PH_ACTIVE;
    if (pcbs == &tcp_tw_pcbs)
        return PH_TW;
    if (pcbs == &tcp_listen_pcbs.pcbs)
        return PH_LISTEN;
    return PH_NONE; /* tcp_bound_pcbs: never searched by tcp_input */
}

static void
keygen(void)
{
    if (getrandom(ph.key, sizeof(ph.key), 0) != (ssize_t)sizeof(ph.key)) {
        ph.key[0] = ((uint64_t)stk_rand() << 32) | stk_rand();
        ph.key[1] = ((uint64_t)stk_rand() << 32) | stk_rand();
    }
    ph.keyed = true;
}

/* Ports in host order (as in the PCB). For a listener only the port
 * counts (lip and rip NULL, rport 0). An IPv6 4-tuple hashes its 128-bit
 * addresses. */
static uint32_t
hash4(const ip_addr_t *lip, uint16_t lport, const ip_addr_t *rip,
      uint16_t rport)
{
    uint64_t m[5];

    if (lip != NULL && IP_IS_V6(lip)) {
        memcpy(&m[0], ip_2_ip6(lip)->addr, 16);
        memcpy(&m[2], ip_2_ip6(rip)->addr, 16);
        m[4] = ((uint64_t)lport << 16) | rport;
        return (uint32_t)base_siphash(ph.key, m, 5, 1, 3);
    }
    m[0] = lip == NULL ? 0
                       : ((uint64_t)ip4_addr_get_u32(ip_2_ip4(lip)) << 32) |
                             ip4_addr_get_u32(ip_2_ip4(rip));
    m[1] = ((uint64_t)lport << 16) | rport;
    return (uint32_t)base_siphash(ph.key, m, 2, 1, 3);
}

static uint32_t
hash_pcb(const struct tcp_pcb *pcb, enum ph_list list)
{
    if (list == PH_LISTEN)
        return hash4(NULL, pcb->local_port, NULL, 0);
    return hash4(&pcb->local_ip, pcb->local_port, &pcb->remote_ip,
                 pcb->remote_port);
}

/* The slot of pcb on list, or NULL. */
static struct ph_slot *
slot_of(struct tcp_pcb *pcb, enum ph_list list)
{
    uint32_t i;

    if (ph.v == NULL)
        return NULL;
    for (i = hash_pcb(pcb, list) & ph.mask; ph.v[i].pcb != NULL;
         i = (i + 1) & ph.mask)
        if (ph.v[i].pcb == pcb)
            return &ph.v[i];
    return NULL;
}

/* Place every entry of old (nold slots) into a fresh table of n slots.
 * False (old table kept) when malloc fails. */
static bool
rehash(uint32_t n)
{
    struct ph_slot *v = calloc(n, sizeof(*v));
    struct ph_slot *old = ph.v;
    uint32_t nold = ph.v ? ph.mask + 1 : 0;
    uint32_t i, j;

    if (v == NULL)
        return false;
    for (i = 0; i < nold; i++) {
        if (old[i].pcb == NULL)
            continue;
        for (j = old[i].hash & (n - 1); v[j].pcb != NULL; j = (j + 1) & (n - 1))
            ;
        v[j] = old[i];
    }
    free(old);
    ph.v = v;
    ph.mask = n - 1;
    return true;
}

/* Give up on the table (out of memory with no free slot left). */
static void
fail_over(void)
{
    free(ph.v);
    ph.v = NULL;
    ph.mask = 0;
    ph.count = 0;
    ph.failed = true;
    BASE_ERR("stack", "pcb_hash: out of memory growing the connection table; "
                      "TCP input walks lwIP's lists from now on (slower with "
                      "many connections): free memory and restart the "
                      "program to get the table back");
}

void
stk_pcb_hash_reg(struct tcp_pcb **pcbs, struct tcp_pcb *pcb)
{
    enum ph_list list = list_of(pcbs);
    uint32_t h, i, slots;

    if (list == PH_TW)
        tw_note(pcb, true);
    if (list == PH_ACTIVE)
        stk__tcp_pcb_listed(pcb, true);
    if (list == PH_ACTIVE || list == PH_TW)
        stk__flow_note(pcb, true, list == PH_TW);
    if (list == PH_ACTIVE && pcb->state == SYN_SENT)
        stk__steer_pcb(pcb, true);
    if (list == PH_NONE || ph.failed)
        return;
    if (!ph.keyed)
        keygen();
    slots = ph.v ? ph.mask + 1 : 0;
    if ((ph.count + 1) * 2 > slots) {
        uint32_t want = slots ? slots * 2 : PH_MIN_SLOTS;
        /* Growing can fail: go on more than half full while a slot stays
         * empty (probes must end on one), else walk the lists. */
        if (want == 0 || !rehash(want)) {
            if (ph.count + 1 >= slots) {
                fail_over();
                return;
            }
        }
    }
    h = hash_pcb(pcb, list);
    for (i = h & ph.mask; ph.v[i].pcb != NULL; i = (i + 1) & ph.mask)
        ;
    ph.v[i].hash = h;
    ph.v[i].list = list;
    ph.v[i].pcb = pcb;
    ph.v[i].prev = NULL; /* TCP_REG puts it at the head */
    ph.count++;
    if (list == PH_ACTIVE && pcb->next != NULL) {
        struct ph_slot *n = slot_of(pcb->next, PH_ACTIVE);

        if (n != NULL)
            n->prev = pcb;
    }
}

/* Empty slot i and move back the entries of its run that may live there
 * (linear probing deletion without tombstones, Knuth 6.4 algorithm R). */
static void
erase(uint32_t i)
{
    uint32_t j = i, home;

    for (;;) {
        j = (j + 1) & ph.mask;
        if (ph.v[j].pcb == NULL)
            break;
        home = ph.v[j].hash & ph.mask;
        /* Entry j may move to i unless its home lies cyclically in (i, j]. */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        ph.v[i] = ph.v[j];
        i = j;
    }
    ph.v[i].pcb = NULL;
    ph.count--;
}

/* Out of the table (lwIP unlinks pcb from the list pcbs, or a retired
 * TIME-WAIT pcb stays on the list, hidden). */
static void
hash_rmv(struct tcp_pcb **pcbs, struct tcp_pcb *pcb)
{
    enum ph_list list = list_of(pcbs);
    uint32_t i, n;

    if (list == PH_NONE)
        return;
    if (list == PH_TW && (pcb->flags & STK_TF_TW_RETIRED) != 0)
        return; /* stk_pcb_tw_retire took it out already */
    if (list == PH_ACTIVE || list == PH_TW)
        stk__flow_note(pcb, false, list == PH_TW);
    if (ph.failed)
        return;
    if (ph.v != NULL) {
        struct ph_slot *sl = slot_of(pcb, list);

        if (sl != NULL) {
            i = (uint32_t)(sl - ph.v);
            goto found;
        }
        /* Not where its 4-tuple says: lwIP changed the tuple of a listed
         * PCB, or removes one it never listed. Never leave it behind. */
        for (i = 0; i <= ph.mask; i++) {
            if (ph.v[i].pcb == pcb) {
                ph.anomalies++;
                goto found;
            }
        }
    }
    ph.anomalies++;
    return;
found:
    if (list == PH_ACTIVE) {
        /* Its successor's predecessor becomes its own (before erase moves
         * entries around). */
        struct ph_slot *n =
            pcb->next != NULL ? slot_of(pcb->next, PH_ACTIVE) : NULL;

        ph.rmv_prev = ph.v[i].prev;
        if (n != NULL)
            n->prev = ph.v[i].prev;
    }
    erase(i);
    n = ph.mask + 1;
    if (n > PH_MIN_SLOTS && ph.count * 8 < n)
        rehash(n / 2); /* on failure the larger table simply stays */
}

struct tcp_pcb *
stk_pcb_hash_lookup(struct tcp_pcb **pcbs, struct tcp_pcb *after,
                    const struct ip_addr *lip, uint16_t lport,
                    const struct ip_addr *rip, uint16_t rport)
{
    enum ph_list list = list_of(pcbs);
    bool passed = after == NULL;
    struct ph_slot *s;
    uint32_t h, i;

    if (ph.failed || list == PH_NONE)
        return after != NULL ? after->next : *pcbs;
    if (ph.v == NULL)
        return NULL;
    h = list == PH_LISTEN ? hash4(NULL, lport, NULL, 0)
                          : hash4(lip, lport, rip, rport);
    for (i = h & ph.mask;; i = (i + 1) & ph.mask) {
        s = &ph.v[i];
        if (s->pcb == NULL)
            return NULL;
        if (s->hash != h || s->list != (uint32_t)list)
            continue;
        if (!passed) {
            passed = s->pcb == after;
            continue;
        }
        if (s->pcb->local_port != lport)
            continue;
        if (list == PH_LISTEN || (s->pcb->remote_port == rport &&
                                  ip_addr_cmp(&s->pcb->remote_ip, rip) &&
                                  ip_addr_cmp(&s->pcb->local_ip, lip)))
            return s->pcb;
    }
}

/* A TIME-WAIT pcb ended early by a new SYN for its port pair (patch 0003)
 * stays on lwIP's TIME-WAIT list until tcp_slowtmr's next tick frees it:
 * unlinking it now would walk that list, and at thousands of connections a
 * second that walk is the cost of a connection. Out of the table, lookups
 * no longer see it; the flag (a bit lwIP leaves unused) keeps the later
 * unlink from looking for it again. */
void
stk_pcb_hash_rmv(struct tcp_pcb **pcbs, struct tcp_pcb *pcb)
{
    if (pcbs == &tcp_tw_pcbs)
        tw_note(pcb, false); /* it leaves lwIP's list */
    if (pcbs == &tcp_active_pcbs)
        stk__tcp_pcb_listed(pcb, false);
    ph.rmv_pcb = pcb;
    ph.rmv_prev = NULL;
    hash_rmv(pcbs, pcb);
}

struct tcp_pcb *
stk_pcb_rmv_from(struct tcp_pcb **pcbs, struct tcp_pcb *pcb)
{
    struct tcp_pcb *p = ph.rmv_pcb == pcb ? ph.rmv_prev : NULL;

    ph.rmv_pcb = ph.rmv_prev = NULL;
    /* Checked: a PCB the hooks did not see move would only cost a walk. */
    if (p != NULL && pcbs == &tcp_active_pcbs && p->next == pcb) {
        ph.rmv_shortcuts++;
        return p;
    }
    return *pcbs;
}

/* ---- tcp_slowtmr's TIME-WAIT walk, in parts (patch 0005) --------------
 *
 * 28k TIME-WAIT pcbs (a server closing 100k connections a second) took
 * 6.5 ms to walk, every 200 ms tick. Each tick now looks at an eighth of
 * the list (at least STK_TW_WALK_MIN), from where the last one stopped,
 * so a whole pass takes at most 8 ticks and TIME-WAIT ends at most 1.6 s
 * late; the walk keeps up with any arrival rate (the list holds at least
 * 60 s of arrivals, a pass takes 1.6 s). The resume point is its pcb and the
 * one before it (lwIP's list is singly linked); insertions happen at the
 * head, before it, and the RMV hook forgets it when either leaves. */
#define STK_TW_WALK_MIN 1024u

static uint32_t tw_count;
static struct tcp_pcb *tw_at, *tw_prev;

static void
tw_note(struct tcp_pcb *pcb, bool in)
{
    if (in) {
        tw_count++;
        return;
    }
    tw_count--;
    if (pcb == tw_at || pcb == tw_prev)
        tw_at = tw_prev = NULL;
}

uint32_t
stk_pcb_tw_walk_from(struct tcp_pcb **pcb, struct tcp_pcb **prev)
{
    if (tw_at != NULL && tw_prev != NULL && tw_prev->next == tw_at) {
        *pcb = tw_at;
        *prev = tw_prev;
    } else {
        *pcb = tcp_tw_pcbs;
        *prev = NULL;
    }
    return tw_count / 8 > STK_TW_WALK_MIN ? tw_count / 8 : STK_TW_WALK_MIN;
}

void
stk_pcb_tw_walk_at(struct tcp_pcb *pcb, struct tcp_pcb *prev)
{
    /* Stopped at the head: next time starts at the (new) head anyway. */
    tw_at = prev != NULL ? pcb : NULL;
    tw_prev = tw_at != NULL ? prev : NULL;
}

void
stk_pcb_tw_retire(struct tcp_pcb *pcb)
{
    hash_rmv(&tcp_tw_pcbs, pcb); /* still on lwIP's list: no tw_note */
    pcb->flags |= STK_TF_TW_RETIRED;
}

/* ---- test hooks (stk_test.h) ------------------------------------------- */

bool
stk_test_pcb_hash_enabled(void)
{
#ifdef LWIP_HOOK_TCP_PCB_LOOKUP
    return !ph.failed;
#else
    return false;
#endif
}

long
stk_test_pcb_hash_entries(void)
{
    return ph.count;
}

long
stk_test_pcb_hash_slots(void)
{
    return ph.v ? (long)ph.mask + 1 : 0;
}

long
stk_test_tw_count(void)
{
    return (long)tw_count;
}

long
stk_test_pcb_hash_anomalies(void)
{
    return ph.anomalies;
}

long
stk_test_pcb_rmv_shortcuts(void)
{
    return ph.rmv_shortcuts;
}

bool
stk_test_pcb_is_active_head(const struct stk_sock *s)
{
    return s->pcb.tcp != NULL && s->pcb.tcp == tcp_active_pcbs;
}

/* Is pcb in the table under list, where a lookup of its key finds it? */
static bool
indexed(struct tcp_pcb *pcb, enum ph_list list)
{
    struct tcp_pcb *c = NULL;
    ip_addr_t lip = pcb->local_ip, rip = pcb->remote_ip;
    struct tcp_pcb **pcbs = list == PH_ACTIVE ? &tcp_active_pcbs
                            : list == PH_TW   ? &tcp_tw_pcbs
                                              : &tcp_listen_pcbs.pcbs;

    do {
        c = stk_pcb_hash_lookup(pcbs, c, &lip, pcb->local_port, &rip,
                                pcb->remote_port);
    } while (c != NULL && c != pcb);
    return c == pcb;
}

int
stk_test_pcb_hash_check(void)
{
    struct tcp_pcb *p, *prev;
    long n = 0;

    if (!stk_test_pcb_hash_enabled())
        return 0;
    for (p = tcp_active_pcbs, prev = NULL; p != NULL;
         prev = p, p = p->next, n++) {
        struct ph_slot *sl = slot_of(p, PH_ACTIVE);

        if (!indexed(p, PH_ACTIVE))
            return -1;
        if (sl == NULL || sl->prev != prev)
            return -5; /* the predecessor TCP_RMV would start from */
    }
    for (p = tcp_tw_pcbs; p != NULL; p = p->next) {
        if ((p->flags & STK_TF_TW_RETIRED) != 0)
            continue; /* out of the table on purpose, until tcp_slowtmr */
        if (!indexed(p, PH_TW))
            return -2;
        n++;
    }
    for (p = tcp_listen_pcbs.pcbs; p != NULL; p = p->next, n++)
        if (!indexed(p, PH_LISTEN))
            return -3;
    return n == (long)ph.count ? 0 : -4;
}
