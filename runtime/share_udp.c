/*
 * UDP datagrams queued when a process forks. fork() copies the stack, so
 * a datagram already on a UDP socket's queue is in every process of the
 * fork, where Linux has one queue and gives each datagram to one reader
 * (socat UDP-RECVFROM,fork: the parent peeks, forks, the child reads; the
 * parent must then see nothing). Before the copy, each socket's untagged
 * datagrams get a tag from the region (stk_fork_tag_udp, from
 * rt__share_prepare); the first process to read one of a tag's datagrams
 * claims the tag, and the others drop their copies of it when they next
 * look at the socket (stack/sock_udp.c). A peek claims nothing.
 *
 * The region keeps SH_UDP_TAGS entries, reused in turn: an entry holds
 * the tag's generation and its owner's slot + 1 (0: unclaimed) in one
 * word, changed by compare-and-swap, without the port lock. A datagram
 * whose entry was reused since (SH_UDP_TAGS tagged forks later, its
 * socket never read) counts as another process's: dropped.
 */
#include "share_int.h"

#define TAG_IDX_BITS 12
#define TAG_GEN_MASK ((1u << (32 - TAG_IDX_BITS)) - 1u)

_Static_assert(SH_UDP_TAGS == 1u << TAG_IDX_BITS, "tag layout");
_Static_assert(SH_SLOTS < 255, "owner in 8 bits");

static uint32_t
udp_tag(void)
{
    uint32_t n, idx, gen;

    if (rt__sh == NULL)
        return 0;
    n = atomic_fetch_add(&rt__sh->udp_tag_next, 1);
    idx = n & (SH_UDP_TAGS - 1);
    gen = ((n >> TAG_IDX_BITS) & (TAG_GEN_MASK >> 1)) + 1; /* never 0 */
    atomic_store(&rt__sh->udp_tag[idx], gen << 8);
    return gen << TAG_IDX_BITS | idx;
}

static int
udp_claim(uint32_t tag, bool take)
{
    _Atomic uint32_t *e;
    uint32_t v, gen = tag >> TAG_IDX_BITS, mine = (uint32_t)rt__sh_me + 1;

    if (rt__sh == NULL)
        return 1;
    e = &rt__sh->udp_tag[tag & (SH_UDP_TAGS - 1)];
    v = atomic_load(e);
    for (;;) {
        if (v >> 8 != gen)
            return -1; /* reused: long gone */
        if ((v & 0xff) == mine)
            return 1;
        if ((v & 0xff) != 0)
            return -1;
        if (!take)
            return 0;
        if (atomic_compare_exchange_weak(e, &v, gen << 8 | mine))
            return 1;
    }
}

const struct stk_flow_ops rt__sh_flow_ops = {.note = rt__sh_flow_note,
                                             .reserve = rt__sh_flow_reserve,
                                             .udp_tag = udp_tag,
                                             .udp_claim = udp_claim};
