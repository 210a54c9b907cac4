// The test-only impairment engine of ACCEL_TEST_IMPAIR (runtime/impair.c):
// its parser (and the configuration's check of the option), and each
// impairment on fake frames with a fake clock: the fractions of loss,
// duplication and corruption (wide bounds, fixed seeds), where a corrupted
// bit lands, the order reorder= makes, the release times of delay=,
// jitter and rate=, the queue limit, the output cap, the determinism of a
// seed, and that every frame is accounted for (none leaked, none freed
// twice).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "base_test_util.h"

extern "C" {
#include "impair.h"
#include "stats.h"
}

namespace
{

// ---- fake frames --------------------------------------------------------

struct Frame {
    int id;
    bool copy;
    std::vector<uint8_t> b;
};

int live; // frames alive (made by the test or copied by the engine)

void
fr_drop(void *f)
{
    delete static_cast<Frame *>(f);
    live--;
}

void *
fr_copy(void *f)
{
    Frame *c = new Frame(*static_cast<Frame *>(f));
    c->copy = true;
    live++;
    return c;
}

uint8_t *
fr_bytes(void *f, uint32_t *len)
{
    Frame *fr = static_cast<Frame *>(f);
    *len = (uint32_t)fr->b.size();
    return fr->b.data();
}

const rt__imp_ops ops = {fr_drop, fr_copy, fr_bytes};

const size_t ETH = 14, IP = 20, TCP = 20;

// An Ethernet/IPv4/TCP frame with `data` bytes of payload.
Frame *
tcp_frame(int id, size_t data)
{
    Frame *f =
        new Frame{id, false, std::vector<uint8_t>(ETH + IP + TCP + data)};
    uint8_t *p = f->b.data();
    size_t tot = IP + TCP + data;

    live++;
    p[12] = 0x08, p[13] = 0x00;
    p[14] = 0x45, p[16] = (uint8_t)(tot >> 8), p[17] = (uint8_t)tot;
    p[14 + 9] = 6;
    p[ETH + IP + 12] = 5 << 4;
    for (size_t i = 0; i < data; i++)
        p[ETH + IP + TCP + i] = (uint8_t)(id + i);
    return f;
}

// A frame of len bytes that is not IPv4 (an ARP request's type).
Frame *
arp_frame(int id, size_t len = 42)
{
    Frame *f = new Frame{id, false, std::vector<uint8_t>(len, 0x5a)};
    live++;
    f->b[12] = 0x08, f->b[13] = 0x06;
    return f;
}

// ---- the engine under test -----------------------------------------------

class Impair : public ::testing::Test
{
  protected:
    rt__imp im{};
    bool inited = false;

    void
    SetUp() override
    {
        memset(&base_stats, 0, sizeof(base_stats));
        live = 0;
    }

    void
    TearDown() override
    {
        if (inited)
            rt__imp_fini(&im);
        EXPECT_EQ(live, 0) << "frames leaked or freed twice";
        memset(&base_stats, 0, sizeof(base_stats));
    }

    void
    start(const char *spec)
    {
        base_impair_spec sp;
        char err[512] = "";
        ASSERT_EQ(base_impair_parse(spec, &sp, err, sizeof(err)), 0) << err;
        ASSERT_EQ(rt__imp_init(&im, &sp, sp.seed, &ops), 0);
        inited = true;
    }

    // The frames in go in at now; what leaves (at most cap) comes back.
    std::vector<Frame *>
    run(std::vector<Frame *> in, uint64_t now, uint32_t cap = 512)
    {
        std::vector<void *> v(std::max<size_t>(in.size(), cap));
        for (size_t i = 0; i < in.size(); i++)
            v[i] = in[i];
        uint32_t k = rt__imp_run(&im, v.data(), (uint32_t)in.size(), cap, now);
        EXPECT_LE(k, cap);
        std::vector<Frame *> out;
        for (uint32_t i = 0; i < k; i++)
            out.push_back(static_cast<Frame *>(v[i]));
        return out;
    }

    // n TCP frames (ids first..first+n-1) at now, in bursts of 32; all
    // that leave, in order.
    std::vector<Frame *>
    feed(int first, int n, uint64_t now, size_t data = 100)
    {
        std::vector<Frame *> out;
        for (int i = 0; i < n; i += 32) {
            std::vector<Frame *> in;
            for (int j = i; j < n && j < i + 32; j++)
                in.push_back(tcp_frame(first + j, data));
            for (Frame *f : run(in, now))
                out.push_back(f);
        }
        return out;
    }

    // Event-driven: frames arrive at the given times, the fake clock goes
    // to the next arrival or the engine's next due time; returns each
    // frame's (id, leave time) in leaving order.
    std::vector<std::pair<int, uint64_t>>
    timeline(const std::vector<uint64_t> &arrive, size_t data = 100)
    {
        std::vector<std::pair<int, uint64_t>> left;
        size_t next = 0;
        for (int guard = 0; guard < 100000; guard++) {
            uint64_t t = rt__imp_next(&im);
            if (next < arrive.size() && arrive[next] <= t)
                t = arrive[next];
            if (t == UINT64_MAX)
                break;
            std::vector<Frame *> in;
            while (next < arrive.size() && arrive[next] == t) {
                in.push_back(tcp_frame((int)next, data));
                next++;
            }
            for (Frame *f : run(in, t)) {
                left.emplace_back(f->id, t);
                fr_drop(f);
            }
        }
        return left;
    }
};

void
drop_all(std::vector<Frame *> &v)
{
    for (Frame *f : v)
        fr_drop(f);
    v.clear();
}

std::vector<int>
ids(const std::vector<Frame *> &v)
{
    std::vector<int> r;
    for (Frame *f : v)
        r.push_back(f->id);
    return r;
}

const uint64_t MS = 1000000;

} // namespace

// ---- parsing ---------------------------------------------------------------

TEST(ImpairParse, EmptyIsNoImpairment)
{
    base_impair_spec sp;
    ASSERT_EQ(base_impair_parse("", &sp, nullptr, 0), 0);
    EXPECT_EQ(sp.loss | sp.dup | sp.corrupt | sp.reorder, 0u);
    EXPECT_EQ(sp.delay_ns | sp.jitter_ns | sp.rate_bps, 0u);
    EXPECT_EQ(sp.limit, 1000u);
    EXPECT_EQ(sp.reorder_gap, 1u);
    EXPECT_TRUE(sp.tx);
    EXPECT_FALSE(sp.rx);
    EXPECT_FALSE(sp.seed_set);
}

TEST(ImpairParse, EveryKey)
{
    base_impair_spec sp;
    char err[512] = "";
    ASSERT_EQ(
        base_impair_parse("loss=1,dup=0.5,reorder=2:3,delay=5:1,corrupt=0.1,"
                          "rate=500,seed=7,dir=both,limit=64",
                          &sp, err, sizeof(err)),
        0)
        << err;
    EXPECT_EQ(sp.loss, (1ull << 32) / 100);
    EXPECT_EQ(sp.dup, (1ull << 32) / 200);
    EXPECT_EQ(sp.corrupt, (1ull << 32) / 1000);
    EXPECT_EQ(sp.reorder, (2ull << 32) / 100);
    EXPECT_EQ(sp.reorder_gap, 3u);
    EXPECT_EQ(sp.delay_ns, 5 * MS);
    EXPECT_EQ(sp.jitter_ns, 1 * MS);
    EXPECT_EQ(sp.rate_bps, 500000000u);
    EXPECT_EQ(sp.limit, 64u);
    EXPECT_EQ(sp.seed, 7u);
    EXPECT_TRUE(sp.seed_set);
    EXPECT_TRUE(sp.tx && sp.rx);
    ASSERT_EQ(base_impair_parse("dir=rx", &sp, err, sizeof(err)), 0) << err;
    EXPECT_TRUE(!sp.tx && sp.rx);
}

TEST(ImpairParse, Decimals)
{
    base_impair_spec sp;
    ASSERT_EQ(base_impair_parse("loss=0.000001,dup=100,delay=0.25,rate=0.5",
                                &sp, nullptr, 0),
              0);
    EXPECT_EQ(sp.loss, 42u); // 1e-8 of 2^32
    EXPECT_EQ(sp.dup, 1ull << 32);
    EXPECT_EQ(sp.delay_ns, 250000u);
    EXPECT_EQ(sp.rate_bps, 500000u);
    ASSERT_EQ(base_impair_parse("seed=18446744073709551615", &sp, nullptr, 0),
              0);
    EXPECT_EQ(sp.seed, UINT64_MAX);
}

TEST(ImpairParse, RejectsMalformedWithOneLine)
{
    for (const char *bad : {"loss",           "loss=",
                            "loss=101",       "loss=-1",
                            "loss=1.0000001", "loss=1%",
                            "loss=.",         "los=1",
                            "LOSS=1",         "loss=1,loss=2",
                            "loss=1,",        ",loss=1",
                            "loss=1 ",        "loss=1,,dup=1",
                            "delay=5:",       "delay=x",
                            "delay=60001",    "delay=1:60001",
                            "rate=0",         "rate=abc",
                            "rate=100001",    "limit=0",
                            "limit=16385",    "limit=1.5",
                            "seed=-1",        "seed=18446744073709551616",
                            "dir=up",         "dir=",
                            "reorder=1:0",    "reorder=1:101",
                            "reorder=:2"}) {
        base_impair_spec sp;
        char err[512] = "";
        EXPECT_EQ(base_impair_parse(bad, &sp, err, sizeof(err)), -EINVAL)
            << bad;
        std::string e = err;
        EXPECT_EQ(e.rfind(std::string("ACCEL_TEST_IMPAIR=") + bad + ": ", 0),
                  0u)
            << e;
        EXPECT_NE(e.find("set ACCEL_TEST_IMPAIR to KEY=VALUE items"),
                  std::string::npos)
            << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
}

TEST(ImpairParse, ConfigurationChecksTheOption)
{
    Parsed bad(Env{"ACCEL_TEST_IMPAIR=loss=1,delay=x"});
    EXPECT_EQ(bad.rc, -EINVAL);
    EXPECT_EQ(bad.err.rfind("ACCEL_TEST_IMPAIR=loss=1,delay=x: 'delay=x' is "
                            "not MS[:JITTER_MS]",
                            0),
              0u)
        << bad.err;
    Parsed good(Env{"ACCEL_TEST_IMPAIR=loss=0.3,seed=1"});
    ASSERT_EQ(good.rc, 0) << good.err;
    EXPECT_STREQ(good.cfg.test_impair, "loss=0.3,seed=1");
    Parsed off(Env{"ACCEL_IP=10.0.0.2/24"});
    ASSERT_EQ(off.rc, 0) << off.err;
    EXPECT_STREQ(off.cfg.test_impair, "");
}

// ---- loss, duplication, corruption -----------------------------------------

TEST_F(Impair, LossDropsItsFractionAndKeepsOrder)
{
    const int n = 100000;
    start("loss=10,seed=1");
    std::vector<Frame *> out = feed(0, n, 0);
    double kept = (double)out.size() / n;
    EXPECT_GT(kept, 0.89);
    EXPECT_LT(kept, 0.91);
    EXPECT_EQ(base_stats.test_impair_dropped, (uint64_t)(n - out.size()));
    std::vector<int> got = ids(out);
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
    EXPECT_EQ(std::set<int>(got.begin(), got.end()).size(), got.size());
    drop_all(out);
}

TEST_F(Impair, NothingAskedChangesNothing)
{
    start("seed=3");
    std::vector<Frame *> out = feed(0, 1000, 0);
    ASSERT_EQ(out.size(), 1000u);
    for (int i = 0; i < 1000; i++) {
        Frame *ref = tcp_frame(i, 100);
        EXPECT_EQ(out[i]->id, i);
        EXPECT_EQ(out[i]->b, ref->b);
        fr_drop(ref);
    }
    drop_all(out);
    EXPECT_EQ(rt__imp_next(&im), UINT64_MAX);
}

TEST_F(Impair, DupSendsACopyRightAfterTheOriginal)
{
    const int n = 50000;
    start("dup=5,seed=2");
    std::vector<Frame *> out = feed(0, n, 0);
    double extra = (double)(out.size() - n) / n;
    EXPECT_GT(extra, 0.04);
    EXPECT_LT(extra, 0.06);
    EXPECT_EQ(base_stats.test_impair_duplicated, (uint64_t)(out.size() - n));
    int next = 0;
    for (size_t i = 0; i < out.size(); i++) {
        if (out[i]->copy) {
            ASSERT_GT(i, 0u);
            EXPECT_EQ(out[i]->id, out[i - 1]->id);
            EXPECT_FALSE(out[i - 1]->copy);
            EXPECT_EQ(out[i]->b, out[i - 1]->b);
        } else {
            EXPECT_EQ(out[i]->id, next++);
        }
    }
    EXPECT_EQ(next, n);
    drop_all(out);
}

// Which bits of f differ from a pristine frame of the same id and size.
static std::vector<size_t>
flipped(const Frame *f, size_t data)
{
    Frame *ref = data == SIZE_MAX ? arp_frame(f->id, f->b.size())
                                  : tcp_frame(f->id, data);
    std::vector<size_t> bits;
    for (size_t i = 0; i < f->b.size(); i++)
        for (int k = 0; k < 8; k++)
            if (((f->b[i] ^ ref->b[i]) >> k) & 1)
                bits.push_back(i * 8 + (size_t)k);
    fr_drop(ref);
    return bits;
}

TEST_F(Impair, CorruptFlipsOneBitOfTheL4Data)
{
    const int n = 20000;
    start("corrupt=20,seed=4");
    std::vector<Frame *> out = feed(0, n, 0, 100);
    ASSERT_EQ(out.size(), (size_t)n);
    int bad = 0;
    std::set<size_t> where;
    for (Frame *f : out) {
        std::vector<size_t> b = flipped(f, 100);
        if (b.empty())
            continue;
        bad++;
        ASSERT_EQ(b.size(), 1u);
        EXPECT_GE(b[0] / 8, ETH + IP + TCP) << "outside the TCP payload";
        EXPECT_LT(b[0] / 8, ETH + IP + TCP + 100);
        where.insert(b[0]);
    }
    EXPECT_GT(bad, n * 18 / 100);
    EXPECT_LT(bad, n * 22 / 100);
    EXPECT_EQ(base_stats.test_impair_corrupted, (uint64_t)bad);
    EXPECT_GT(where.size(), 400u) << "the bit is not drawn at random";
    drop_all(out);
}

TEST_F(Impair, CorruptHitsTheHeaderOfADatalessSegmentAndSkipsNonIp)
{
    start("corrupt=100,seed=5");
    std::vector<Frame *> out = feed(0, 200, 0, 0); // pure ACKs
    for (Frame *f : out) {
        std::vector<size_t> b = flipped(f, 0);
        ASSERT_EQ(b.size(), 1u);
        EXPECT_GE(b[0] / 8, ETH + IP);
        EXPECT_LT(b[0] / 8, ETH + IP + TCP);
    }
    drop_all(out);
    out = run({arp_frame(1), arp_frame(2, 60)}, 0);
    ASSERT_EQ(out.size(), 2u);
    for (Frame *f : out)
        EXPECT_TRUE(flipped(f, SIZE_MAX).empty());
    EXPECT_EQ(base_stats.test_impair_corrupted, 200u);
    drop_all(out);
}

// ---- reordering ------------------------------------------------------------

// For each frame, how many frames with a higher id left before it.
static std::vector<int>
overtaken(const std::vector<int> &order)
{
    std::vector<int> r;
    for (size_t i = 0; i < order.size(); i++) {
        int k = 0;
        for (size_t j = 0; j < i; j++)
            k += order[j] > order[i];
        r.push_back(k);
    }
    return r;
}

TEST_F(Impair, ReorderSendsAHeldFrameAfterTheNextOne)
{
    const int n = 5000;
    start("reorder=10,seed=6");
    std::vector<Frame *> out = feed(0, n, 0);
    // The last ones held have nobody after them: they leave at the timeout.
    for (Frame *f : run({}, RT__IMP_HOLD_NS))
        out.push_back(f);
    std::vector<int> order = ids(out);
    ASSERT_EQ(order.size(), (size_t)n);
    EXPECT_EQ(std::set<int>(order.begin(), order.end()).size(), (size_t)n);
    std::vector<int> ov = overtaken(order);
    int moved = 0, not_one = 0;
    for (int k : ov) {
        moved += k > 0;
        not_one += k > 1;
    }
    EXPECT_EQ(not_one, 0) << "a held frame waited for more than one";
    EXPECT_EQ(base_stats.test_impair_reordered, (uint64_t)moved);
    EXPECT_GT(moved, n * 8 / 100);
    EXPECT_LT(moved, n * 12 / 100);
    drop_all(out);
}

TEST_F(Impair, ReorderGapOfThree)
{
    const int n = 5000;
    start("reorder=5:3,seed=7");
    std::vector<Frame *> out = feed(0, n, 0);
    std::vector<Frame *> tail = run({}, RT__IMP_HOLD_NS);
    std::vector<int> order = ids(out);
    std::vector<int> ov = overtaken(order);
    int moved = 0;
    for (int k : ov) {
        EXPECT_TRUE(k == 0 || k == 3) << k;
        moved += k > 0;
    }
    EXPECT_GT(moved, n * 3 / 100);
    EXPECT_LT(moved, n * 7 / 100);
    drop_all(out);
    drop_all(tail);
}

TEST_F(Impair, AHeldFrameWithNobodyAfterItLeavesAtTheTimeout)
{
    start("reorder=100");
    EXPECT_TRUE(run({tcp_frame(1, 10)}, 10 * MS).empty());
    EXPECT_EQ(rt__imp_next(&im), 10 * MS + RT__IMP_HOLD_NS);
    EXPECT_TRUE(run({}, 10 * MS + RT__IMP_HOLD_NS - 1).empty());
    std::vector<Frame *> out = run({}, 10 * MS + RT__IMP_HOLD_NS);
    EXPECT_EQ(ids(out), std::vector<int>{1});
    EXPECT_EQ(base_stats.test_impair_reordered, 0u) << "nobody went before it";
    EXPECT_EQ(rt__imp_next(&im), UINT64_MAX);
    drop_all(out);
}

// ---- delay, jitter, rate, limit ---------------------------------------------

TEST_F(Impair, DelayHoldsFramesUntilDue)
{
    const uint64_t t0 = 1000 * MS;
    start("delay=5");
    EXPECT_TRUE(feed(0, 32, t0).empty());
    EXPECT_EQ(rt__imp_next(&im), t0 + 5 * MS);
    EXPECT_TRUE(run({}, t0 + 5 * MS - 1).empty());
    std::vector<Frame *> out = run({}, t0 + 5 * MS);
    std::vector<int> want(32);
    for (int i = 0; i < 32; i++)
        want[i] = i;
    EXPECT_EQ(ids(out), want);
    EXPECT_EQ(base_stats.test_impair_delayed, 32u);
    EXPECT_EQ(rt__imp_next(&im), UINT64_MAX);
    drop_all(out);
}

TEST_F(Impair, JitterStaysInItsWindow)
{
    start("delay=5:2,seed=8");
    std::vector<uint64_t> arrive;
    for (int i = 0; i < 2000; i++)
        arrive.push_back(1000 * MS + (uint64_t)i * 5 * MS); // sparse
    auto left = timeline(arrive);
    ASSERT_EQ(left.size(), arrive.size());
    int early = 0, late = 0;
    for (size_t i = 0; i < left.size(); i++) {
        EXPECT_EQ(left[i].first, (int)i);
        uint64_t d = left[i].second - arrive[i];
        EXPECT_GE(d, 3 * MS);
        EXPECT_LE(d, 7 * MS);
        early += d < 4 * MS;
        late += d > 6 * MS;
    }
    // Uniform over [3, 7] ms: a quarter below 4, a quarter above 6.
    EXPECT_GT(early, 400);
    EXPECT_LT(early, 600);
    EXPECT_GT(late, 400);
    EXPECT_LT(late, 600);
}

TEST_F(Impair, JitterNeverReorders)
{
    // Frames 100 us apart with +-2 ms of jitter: each waits for the one
    // before it (netem with a pfifo child), so they leave in order, late
    // rather than early.
    start("delay=5:2,seed=9");
    std::vector<uint64_t> arrive;
    for (int i = 0; i < 2000; i++)
        arrive.push_back(1000 * MS + (uint64_t)i * 100000);
    auto left = timeline(arrive);
    ASSERT_EQ(left.size(), arrive.size());
    for (size_t i = 0; i < left.size(); i++) {
        EXPECT_EQ(left[i].first, (int)i) << "jitter reordered";
        uint64_t d = left[i].second - arrive[i];
        EXPECT_GE(d, 3 * MS);
        EXPECT_LE(d, 7 * MS);
    }
}

TEST_F(Impair, RateSpacesFramesByTheirLength)
{
    start("rate=8"); // 8 Mbit/s: a 1000-byte frame takes 1 ms
    std::vector<uint64_t> arrive(10, 0);
    auto left = timeline(arrive, 1000 - ETH - IP - TCP);
    ASSERT_EQ(left.size(), 10u);
    for (int i = 0; i < 10; i++) {
        EXPECT_EQ(left[i].first, i);
        EXPECT_EQ(left[i].second, (uint64_t)(i + 1) * MS);
    }
    EXPECT_EQ(base_stats.test_impair_rate_held, 9u);
    // An idle link sends the next frame at once (its own time only).
    auto again = timeline({20 * MS}, 1000 - ETH - IP - TCP);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].second, 21 * MS);
    EXPECT_EQ(base_stats.test_impair_rate_held, 9u);
}

TEST_F(Impair, RateThenDelay)
{
    start("rate=8,delay=2");
    auto left = timeline(std::vector<uint64_t>(5, 0), 1000 - ETH - IP - TCP);
    ASSERT_EQ(left.size(), 5u);
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(left[i].second, (uint64_t)(i + 3) * MS);
}

TEST_F(Impair, LimitDropsWhatAFullQueueCannotHold)
{
    start("rate=8,limit=5");
    auto left = timeline(std::vector<uint64_t>(10, 0), 1000 - ETH - IP - TCP);
    ASSERT_EQ(left.size(), 5u);
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(left[i].first, i);
    EXPECT_EQ(base_stats.test_impair_queue_dropped, 5u);
}

TEST_F(Impair, LimitSparesFramesThatLeaveAtOnce)
{
    start("limit=1");
    std::vector<Frame *> out = feed(0, 64, 0);
    EXPECT_EQ(out.size(), 64u);
    EXPECT_EQ(base_stats.test_impair_queue_dropped, 0u);
    drop_all(out);
}

TEST_F(Impair, OutputCapLeavesTheRestDueInOrder)
{
    start("delay=1");
    EXPECT_TRUE(feed(0, 100, 0).empty());
    std::vector<int> got;
    for (int r = 0; r < 4; r++) {
        std::vector<Frame *> out = run({}, MS + (uint64_t)r, 32);
        EXPECT_EQ(out.size(), r < 3 ? 32u : 4u);
        for (Frame *f : out)
            got.push_back(f->id);
        drop_all(out);
        if (r < 3) {
            EXPECT_LE(rt__imp_next(&im), MS + (uint64_t)r) << "due now";
        }
    }
    ASSERT_EQ(got.size(), 100u);
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
}

// ---- seeds, clearing --------------------------------------------------------

TEST_F(Impair, ASeedGivesTheSameDecisionsEveryRun)
{
    auto once = [this](const char *spec) {
        start(spec);
        std::vector<Frame *> out = feed(0, 3000, 0);
        for (Frame *f : run({}, RT__IMP_HOLD_NS))
            out.push_back(f);
        std::vector<int> r;
        for (Frame *f : out)
            r.push_back(f->copy ? -f->id : f->id);
        drop_all(out);
        rt__imp_fini(&im);
        inited = false;
        return r;
    };
    const char *a = "loss=5,dup=5,reorder=5,seed=11";
    std::vector<int> first = once(a);
    EXPECT_EQ(once(a), first);
    EXPECT_NE(once("loss=5,dup=5,reorder=5,seed=12"), first);
}

TEST_F(Impair, ClearDropsOrForgetsWhatIsHeld)
{
    start("delay=5,reorder=100");
    std::vector<Frame *> kept;
    for (int i = 0; i < 3; i++)
        kept.push_back(tcp_frame(i, 10));
    EXPECT_TRUE(run(kept, 0).empty());
    rt__imp_clear(&im, false); // a fork child: the parent's frames
    EXPECT_EQ(live, 3);
    EXPECT_EQ(rt__imp_next(&im), UINT64_MAX);
    drop_all(kept);
    EXPECT_TRUE(feed(10, 40, 0).empty());          // delayed
    std::vector<Frame *> out = run({}, 5 * MS, 1); // one out, others held
    EXPECT_EQ(out.size(), 1u);
    drop_all(out);
    EXPECT_EQ(live, 39);
    rt__imp_clear(&im, true);
    EXPECT_EQ(live, 0);
    EXPECT_EQ(rt__imp_next(&im), UINT64_MAX);
}
