// errno at the wrapper boundary: pl_exit turns -e into errno = e and -1,
// restores the caller's errno on success, and clears the in-library mark.
#include <gtest/gtest.h>

#include <cerrno>
#include <sys/types.h>

extern "C" {
#include "inlib.h"
ssize_t pl_test_exit(int errno_before, ssize_t rc, int *inlib_after);
int pl_test_leave(int errno_before, int *inlib_during);
}

TEST(PlExit, NegativeErrnoBecomesMinusOneAndErrno)
{
    int inlib = -1;

    EXPECT_EQ(pl_test_exit(0, -ECONNREFUSED, &inlib), -1);
    EXPECT_EQ(errno, ECONNREFUSED);
    EXPECT_EQ(inlib, 0);
    EXPECT_EQ(pl_test_exit(EINTR, -EAGAIN, &inlib), -1);
    EXPECT_EQ(errno, EAGAIN);
}

TEST(PlExit, SuccessRestoresCallersErrno)
{
    int inlib = -1;

    EXPECT_EQ(pl_test_exit(ENOENT, 42, &inlib), 42);
    EXPECT_EQ(errno, ENOENT);
    EXPECT_EQ(inlib, 0);
    EXPECT_EQ(pl_test_exit(0, 0, &inlib), 0);
    EXPECT_EQ(errno, 0);
}

TEST(PlExit, LargeCountsPassThrough)
{
    int inlib = -1;
    ssize_t big = (ssize_t)1 << 40;

    EXPECT_EQ(pl_test_exit(EBADF, big, &inlib), big);
    EXPECT_EQ(errno, EBADF);
}

TEST(PlLeave, RestoresErrnoAndMark)
{
    int during = 0;

    EXPECT_EQ(pl_test_leave(EPIPE, &during), EPIPE);
    EXPECT_EQ(during, 1);
    EXPECT_EQ(base_in_lib, 0);
}
