// The fd table under the access pattern of a multi-threaded program: many
// threads doing what the close, dup/dup2 and lookup wrappers do, on a small
// set of fd numbers, all at once (run under ThreadSanitizer by the tsan
// suite: -DACCEL_TSAN=ON). Checks: a reference taken by a lookup keeps the
// object alive and intact whatever other threads close or dup over it,
// every object is destroyed exactly once, and nothing is left behind.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "fdtable.h"

namespace
{

std::atomic<int> made{0}, destroyed{0};

struct Obj {
    pl_fd hdr;
    std::atomic<int> alive; // 1 until destroy
    int payload;            // written once before the object is published
};

void
destroy_obj(pl_fd *f)
{
    Obj *o = reinterpret_cast<Obj *>(f);
    o->alive.store(0);
    destroyed++;
    delete o;
}

Obj *
new_obj(int payload)
{
    Obj *o = new Obj;
    pl_fd_init(&o->hdr, PL_FD_SOCK, destroy_obj);
    o->alive.store(1);
    o->payload = payload;
    made++;
    return o;
}

// What the wrappers do, one call each.
void
do_socket(int fd, int payload)
{
    Obj *o = new_obj(payload);
    pl_fdt_install(fd, &o->hdr); // the kernel gave us this number
    pl_fd_put(&o->hdr);
}

void
do_close(int fd)
{
    pl_fd_put(pl_fdt_remove(fd));
}

void
do_dup(int from, int to)
{
    pl_fd *f = pl_fdt_get(from);
    pl_fd_put(pl_fdt_exchange(to, f));
    pl_fd_put(f);
}

// A data-path call: look up, use the object for a while, drop it.
bool
do_use(int fd)
{
    pl_fd *f = pl_fdt_get(fd);
    bool ok = true;

    if (f == nullptr)
        return true;
    Obj *o = reinterpret_cast<Obj *>(f);
    for (int i = 0; i < 20; i++) {
        if (o->alive.load() != 1 || o->payload < 0)
            ok = false;
        std::this_thread::yield();
    }
    pl_fd_put(f);
    return ok;
}

} // namespace

TEST(FdtThreads, CloseDupAndUseFromManyThreads)
{
    const int base = 3000, nfds = 16, threads = 6, ops = 20000;
    std::atomic<long> bad{0};
    std::vector<std::thread> th;

    made = 0;
    destroyed = 0;
    for (int t = 0; t < threads; t++)
        th.emplace_back([&, t] {
            std::mt19937 rng(1234 + t);
            for (int i = 0; i < ops; i++) {
                int fd = base + (int)(rng() % nfds);
                switch (rng() % 8) {
                case 0:
                    do_socket(fd, t * ops + i);
                    break;
                case 1:
                    do_close(fd);
                    break;
                case 2:
                    do_dup(fd, base + (int)(rng() % nfds));
                    break;
                default:
                    if (!do_use(fd))
                        bad++;
                }
            }
        });
    for (auto &t : th)
        t.join();
    for (int fd = base; fd < base + nfds; fd++)
        do_close(fd);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(made.load(), 0);
    EXPECT_EQ(destroyed.load(), made.load());
}

// Objects that other lists reach without a reference (epoll items) are
// taken with tryref: it never resurrects an object whose last reference
// went, while threads keep closing and reinstalling the number.
TEST(FdtThreads, TryrefNeverResurrects)
{
    const int fd = 3100, rounds = 20000;
    std::atomic<bool> stop{false};
    std::atomic<long> bad{0};

    made = 0;
    destroyed = 0;
    std::thread reader([&] {
        while (!stop.load()) {
            pl_fd *f = pl_fdt_get(fd);
            if (f == nullptr)
                continue;
            // Holding a reference, tryref must succeed.
            if (!pl_fd_tryref(f))
                bad++;
            else
                pl_fd_put(f);
            if (reinterpret_cast<Obj *>(f)->alive.load() != 1)
                bad++;
            pl_fd_put(f);
        }
    });
    for (int i = 0; i < rounds; i++) {
        do_socket(fd, i);
        do_close(fd);
    }
    stop = true;
    reader.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(destroyed.load(), made.load());
}
