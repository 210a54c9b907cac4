// Slot bookkeeping of the fork model (runtime/share_slot.c): a slot
// reserved for a child that has not started yet survives the sweep, and is
// given back only when the child never comes.
#include <gtest/gtest.h>

#include "share_probe.h"

namespace
{

class ShareSlot : public ::testing::Test
{
  protected:
    void
    SetUp() override
    {
        ASSERT_EQ(sp_setup(), 0);
    }
    void
    TearDown() override
    {
        sp_teardown();
    }
};

// The sweeper read its clock, then waited for the port lock while another
// process reserved a slot for its child: the reservation is younger than
// the sweeper's reading. It used to look 2^64 ns old, the slot went back
// to the free list and a second fork got it too (two processes in one
// slot: the first one's exit cleaned up the second one's connections).
TEST_F(ShareSlot, ReservationNewerThanTheSweepersClockStays)
{
    uint64_t before = sp_now();

    sp_reserve(3, before + 1000000); // 1 ms after the sweeper's reading
    sp_sweep(before);
    EXPECT_EQ(sp_state(3), SP_RESERVED);
}

TEST_F(ShareSlot, RecentReservationStays)
{
    uint64_t now = sp_now();

    sp_reserve(5, now - 1000000000ull); // 1 s ago: the child is starting
    sp_sweep(now);
    EXPECT_EQ(sp_state(5), SP_RESERVED);
}

TEST_F(ShareSlot, AbandonedReservationIsFreed)
{
    uint64_t now = sp_now();

    sp_reserve(7, now - 11000000000ull); // 11 s: the fork never completed
    sp_sweep(now);
    EXPECT_EQ(sp_state(7), SP_FREE);
}

} // namespace
