// The af_xdp ring repair after a process died in the middle of a burst
// (runtime/xsk_repair.c, rt__xsk_rings_fix): each ring's cursor goes back
// to the kernel's index the way its own ring needs, and rings in step are
// left alone. The port test (tests/port, --die-mid-burst) runs it on the
// real PMD; this one pins the rule of each ring, the completion ring's
// above all (resetting its cursor instead would free mbufs twice, which no
// frame-level test would notice at once).
#include <gtest/gtest.h>

#include <cstdint>

extern "C" {
#include "xsk_repair.h"
}

namespace
{

// A ring as the kernel maps it: producer, consumer, then the entries.
struct FakeRing {
    uint32_t producer = 0, consumer = 0;
    uint64_t entries[8] = {};
    rt__xsk_ring ring{};

    FakeRing(uint32_t prod, uint32_t cons, uint32_t cached_prod,
             uint32_t cached_cons)
    {
        producer = prod;
        consumer = cons;
        ring.cached_prod = cached_prod;
        ring.cached_cons = cached_cons;
        ring.size = 8;
        ring.mask = 7;
        ring.producer = &producer;
        ring.consumer = &consumer;
        ring.ring = entries;
    }
};

struct Rings {
    FakeRing rx, fill, comp, tx;
    struct rt__xsk_rings r = {};

    Rings(FakeRing a, FakeRing b, FakeRing c, FakeRing d)
        : rx(a), fill(b), comp(c), tx(d)
    {
        rx.ring.producer = &rx.producer, rx.ring.consumer = &rx.consumer;
        fill.ring.producer = &fill.producer;
        fill.ring.consumer = &fill.consumer;
        comp.ring.producer = &comp.producer;
        comp.ring.consumer = &comp.consumer;
        tx.ring.producer = &tx.producer, tx.ring.consumer = &tx.consumer;
        r.rx = &rx.ring, r.fill = &fill.ring, r.comp = &comp.ring;
        r.tx = &tx.ring;
    }
};

TEST(XskRepair, InStepRingsAreLeftAlone)
{
    // The kernel's side is ahead (frames waiting, free slots): the PMD's
    // own cursors equal the shared indexes, as at the end of any burst.
    Rings k({12, 10, 12, 10}, {40, 38, 40, 46}, {7, 5, 7, 5}, {20, 18, 20, 26});
    rt__xsk_fixed n{};

    rt__xsk_rings_fix(&k.r, &n);
    EXPECT_EQ(n.rx + n.fill + n.comp + n.tx, 0u);
    EXPECT_EQ(k.rx.ring.cached_cons, 10u);
    EXPECT_EQ(k.fill.ring.cached_prod, 40u);
    EXPECT_EQ(k.comp.consumer, 5u);
    EXPECT_EQ(k.tx.ring.cached_prod, 20u);
}

TEST(XskRepair, EachRingBackInStepItsOwnWay)
{
    // rx: 3 peeked, not released; fill: 4 reserved, not submitted;
    // completion: 2 peeked (maybe freed), not released; tx: 5 reserved.
    rt__xsk_fixed n{};
    Rings m({15, 10, 15, 13}, {40, 38, 44, 46}, {7, 5, 7, 7}, {20, 18, 25, 26});

    rt__xsk_rings_fix(&m.r, &n);
    // rx: read again from the kernel's consumer index.
    EXPECT_EQ(n.rx, 3u);
    EXPECT_EQ(m.rx.ring.cached_cons, 10u);
    EXPECT_EQ(m.rx.consumer, 10u);
    // fill and tx: the reservation is dropped.
    EXPECT_EQ(n.fill, 4u);
    EXPECT_EQ(m.fill.ring.cached_prod, 40u);
    EXPECT_EQ(m.fill.producer, 40u);
    EXPECT_EQ(n.tx, 5u);
    EXPECT_EQ(m.tx.ring.cached_prod, 20u);
    EXPECT_EQ(m.tx.producer, 20u);
    // completion: taken as done, the cursor kept (never freed twice).
    EXPECT_EQ(n.comp, 2u);
    EXPECT_EQ(m.comp.consumer, 7u);
    EXPECT_EQ(m.comp.ring.cached_cons, 7u);
}

TEST(XskRepair, IndexesWrapAround)
{
    // 32-bit indexes run on past 2^32: the distance is what counts.
    Rings k({3, 0xfffffffeu, 3, 2}, {0, 0, 0, 0}, {0, 0, 0, 0},
            {0xfffffffdu, 0, 1, 0});
    rt__xsk_fixed n{};

    rt__xsk_rings_fix(&k.r, &n);
    EXPECT_EQ(n.rx, 4u);
    EXPECT_EQ(k.rx.ring.cached_cons, 0xfffffffeu);
    EXPECT_EQ(n.tx, 4u);
    EXPECT_EQ(k.tx.ring.cached_prod, 0xfffffffdu);
}

} // namespace
