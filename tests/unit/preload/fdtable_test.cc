// The fd table: install/lookup/remove, reference counting and destroy,
// dup-style sharing, generation counters, range limits and concurrent
// lookups racing with removal (no use after free, destroy exactly once).
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "fdtable.h"

namespace
{

std::atomic<int> destroyed{0};

struct TestObj {
    pl_fd hdr;
    int payload;
};

void
destroy_obj(pl_fd *f)
{
    TestObj *o = reinterpret_cast<TestObj *>(f);
    o->payload = -1;
    destroyed++;
    delete o;
}

TestObj *
new_obj(int payload)
{
    TestObj *o = new TestObj;
    pl_fd_init(&o->hdr, PL_FD_SOCK, destroy_obj);
    o->payload = payload;
    return o;
}

class Fdt : public ::testing::Test
{
  protected:
    void
    SetUp() override
    {
        destroyed = 0;
    }
};

} // namespace

TEST_F(Fdt, EmptySlotIsNotOurs)
{
    EXPECT_EQ(pl_fdt_get(123456), nullptr);
    EXPECT_FALSE(pl_fdt_peek(123456));
    EXPECT_EQ(pl_fdt_get(-1), nullptr);
    EXPECT_EQ(pl_fdt_get(PL_FDT_MAX), nullptr);
}

TEST_F(Fdt, InstallLookupRemove)
{
    TestObj *o = new_obj(7);

    ASSERT_EQ(pl_fdt_install(1000, &o->hdr), 0);
    pl_fd_put(&o->hdr); // the creator's reference; the table keeps one
    EXPECT_EQ(destroyed, 0);
    EXPECT_TRUE(pl_fdt_peek(1000));

    pl_fd *f = pl_fdt_get(1000);
    ASSERT_EQ(f, &o->hdr);
    EXPECT_EQ(reinterpret_cast<TestObj *>(f)->payload, 7);
    pl_fd_put(f);

    pl_fd *old = pl_fdt_remove(1000);
    EXPECT_EQ(old, &o->hdr);
    EXPECT_FALSE(pl_fdt_peek(1000));
    EXPECT_EQ(destroyed, 0);
    pl_fd_put(old);
    EXPECT_EQ(destroyed, 1);
    EXPECT_EQ(pl_fdt_remove(1000), nullptr);
}

TEST_F(Fdt, ReferenceHeldByLookupOutlivesRemove)
{
    TestObj *o = new_obj(1);

    ASSERT_EQ(pl_fdt_install(1001, &o->hdr), 0);
    pl_fd_put(&o->hdr);
    pl_fd *f = pl_fdt_get(1001);
    pl_fd_put(pl_fdt_remove(1001)); // close while another thread uses it
    EXPECT_EQ(destroyed, 0);
    EXPECT_EQ(reinterpret_cast<TestObj *>(f)->payload, 1);
    pl_fd_put(f);
    EXPECT_EQ(destroyed, 1);
}

TEST_F(Fdt, DupSharesOneObjectUntilLastClose)
{
    TestObj *o = new_obj(3);

    ASSERT_EQ(pl_fdt_install(1002, &o->hdr), 0);
    pl_fd_put(&o->hdr);
    // dup(1002) -> 1003: the new number points at the same object.
    pl_fd *f = pl_fdt_get(1002);
    pl_fd_put(pl_fdt_exchange(1003, f));
    pl_fd_put(f);

    pl_fd *a = pl_fdt_get(1002), *b = pl_fdt_get(1003);
    EXPECT_EQ(a, b);
    pl_fd_put(a);
    pl_fd_put(b);

    pl_fd_put(pl_fdt_remove(1002));
    EXPECT_EQ(destroyed, 0);
    pl_fd_put(pl_fdt_remove(1003));
    EXPECT_EQ(destroyed, 1);
}

TEST_F(Fdt, Dup2OntoTrackedFdDropsTheTarget)
{
    TestObj *a = new_obj(1), *b = new_obj(2);

    ASSERT_EQ(pl_fdt_install(1004, &a->hdr), 0);
    ASSERT_EQ(pl_fdt_install(1005, &b->hdr), 0);
    pl_fd_put(&a->hdr);
    pl_fd_put(&b->hdr);
    pl_fd *f = pl_fdt_get(1004);
    pl_fd_put(pl_fdt_exchange(1005, f)); // b loses its only reference
    pl_fd_put(f);
    EXPECT_EQ(destroyed, 1);
    pl_fd *g = pl_fdt_get(1005);
    EXPECT_EQ(reinterpret_cast<TestObj *>(g)->payload, 1);
    pl_fd_put(g);
    pl_fd_put(pl_fdt_remove(1004));
    pl_fd_put(pl_fdt_remove(1005));
    EXPECT_EQ(destroyed, 2);
}

TEST_F(Fdt, InstallReplacesStaleEntry)
{
    TestObj *a = new_obj(1), *b = new_obj(2);

    ASSERT_EQ(pl_fdt_install(1006, &a->hdr), 0);
    pl_fd_put(&a->hdr);
    ASSERT_EQ(pl_fdt_install(1006, &b->hdr), 0); // number reused
    pl_fd_put(&b->hdr);
    EXPECT_EQ(destroyed, 1);
    pl_fd_put(pl_fdt_remove(1006));
    EXPECT_EQ(destroyed, 2);
}

TEST_F(Fdt, GenerationBumpsOnEveryChange)
{
    TestObj *o = new_obj(1);
    uint32_t g0 = pl_fdt_gen(1007);

    ASSERT_EQ(pl_fdt_install(1007, &o->hdr), 0);
    uint32_t g1 = pl_fdt_gen(1007);
    EXPECT_NE(g0, g1);
    pl_fd *f = pl_fdt_get(1007); // lookups do not change it
    pl_fd_put(f);
    EXPECT_EQ(pl_fdt_gen(1007), g1);
    pl_fd_put(pl_fdt_remove(1007));
    EXPECT_NE(pl_fdt_gen(1007), g1);
    pl_fd_put(&o->hdr);
}

TEST_F(Fdt, OutOfRangeInstallFails)
{
    TestObj *o = new_obj(1);

    EXPECT_EQ(pl_fdt_install(-5, &o->hdr), -EBADF);
    EXPECT_EQ(pl_fdt_install(PL_FDT_MAX, &o->hdr), -EBADF);
    EXPECT_EQ(pl_fdt_exchange(PL_FDT_MAX + 1, &o->hdr), (pl_fd *)-1);
    pl_fd_put(&o->hdr);
    EXPECT_EQ(destroyed, 1); // no reference leaked by the failures
}

TEST_F(Fdt, HighFdNumbersWork)
{
    TestObj *o = new_obj(9);
    int fd = PL_FDT_MAX - 1;

    ASSERT_EQ(pl_fdt_install(fd, &o->hdr), 0);
    pl_fd_put(&o->hdr);
    pl_fd *f = pl_fdt_get(fd);
    EXPECT_EQ(f, &o->hdr);
    pl_fd_put(f);
    pl_fd_put(pl_fdt_remove(fd));
    EXPECT_EQ(destroyed, 1);
}

TEST_F(Fdt, TryrefFailsOnceDestroyStarted)
{
    pl_fd f;
    pl_fd_init(&f, PL_FD_EPOLL, [](pl_fd *) { destroyed++; });
    EXPECT_TRUE(pl_fd_tryref(&f));
    pl_fd_put(&f);
    pl_fd_put(&f);
    EXPECT_EQ(destroyed, 1);
    EXPECT_FALSE(pl_fd_tryref(&f));
}

TEST_F(Fdt, ForeachVisitsInstalledEntries)
{
    TestObj *o = new_obj(1);
    int seen = 0;

    ASSERT_EQ(pl_fdt_install(5000, &o->hdr), 0);
    pl_fd_put(&o->hdr);
    pl_fdt_foreach(
        [](int fd, pl_fd *, void *arg) {
            if (fd == 5000)
                ++*static_cast<int *>(arg);
        },
        &seen);
    EXPECT_EQ(seen, 1);
    pl_fd_put(pl_fdt_remove(5000));
}

// Readers take references while a writer keeps swapping the object at the
// same fd: every object is destroyed exactly once, and no reader ever sees
// a destroyed object (payload -1) while it holds a reference.
TEST_F(Fdt, ConcurrentGetAndExchange)
{
    const int fd = 2000, min_rounds = 20000, readers = 3;
    const long min_hits = 2000;
    std::atomic<bool> stop{false};
    std::atomic<int> started{0};
    std::atomic<long> bad{0}, hits{0};
    std::vector<std::thread> th;
    int made = 0;

    for (int r = 0; r < readers; r++)
        th.emplace_back([&] {
            started++;
            while (!stop.load()) {
                pl_fd *f = pl_fdt_get(fd);
                if (f == nullptr)
                    continue;
                if (reinterpret_cast<TestObj *>(f)->payload < 0)
                    bad++;
                hits++;
                pl_fd_put(f);
            }
        });
    while (started.load() < readers)
        std::this_thread::yield();
    // Keep swapping until the readers really overlapped with the writer
    // (on 2 vCPUs they may not be scheduled during the first rounds);
    // bounded so a broken table cannot hang the test.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int i = 0; i < min_rounds || hits.load() < min_hits; i++) {
        TestObj *o = new_obj(i);
        made++;
        pl_fd_put(pl_fdt_exchange(fd, &o->hdr));
        pl_fd_put(&o->hdr);
        if (i % 3 == 0)
            pl_fd_put(pl_fdt_remove(fd));
        if ((i & 1023) == 0 && std::chrono::steady_clock::now() > deadline)
            break;
    }
    pl_fd_put(pl_fdt_remove(fd));
    stop = true;
    for (auto &t : th)
        t.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GE(hits.load(), min_hits);
    EXPECT_EQ(destroyed.load(), made);
}

// Several threads install different objects at the same slot with CAS:
// exactly one reference per replaced object comes back to its replacer.
TEST_F(Fdt, ConcurrentInstallersLoseNothing)
{
    const int fd = 2001, per = 5000, writers = 4;
    std::vector<std::thread> th;

    for (int w = 0; w < writers; w++)
        th.emplace_back([&, w] {
            for (int i = 0; i < per; i++) {
                TestObj *o = new_obj(w * per + i);
                pl_fdt_install(fd, &o->hdr);
                pl_fd_put(&o->hdr);
            }
        });
    for (auto &t : th)
        t.join();
    pl_fd_put(pl_fdt_remove(fd));
    EXPECT_EQ(destroyed.load(), per * writers);
}
