// errmap: one test per row of stack/errmap.c's err_t -> -errno table.
#include <cerrno>

#include <gtest/gtest.h>

extern "C" {
#include "stk_priv.h"
}

#define ERRMAP_ROW(err, neg)                                                   \
    TEST(errmap, err)                                                          \
    {                                                                          \
        EXPECT_EQ(stk_err_to_errno(err), neg);                                 \
    }

ERRMAP_ROW(ERR_OK, 0)
ERRMAP_ROW(ERR_MEM, -ENOMEM)
ERRMAP_ROW(ERR_BUF, -ENOBUFS)
ERRMAP_ROW(ERR_TIMEOUT, -ETIMEDOUT)
ERRMAP_ROW(ERR_RTE, -EHOSTUNREACH)
ERRMAP_ROW(ERR_INPROGRESS, -EINPROGRESS)
ERRMAP_ROW(ERR_VAL, -EINVAL)
ERRMAP_ROW(ERR_WOULDBLOCK, -EAGAIN)
ERRMAP_ROW(ERR_USE, -EADDRINUSE)
ERRMAP_ROW(ERR_ALREADY, -EALREADY)
ERRMAP_ROW(ERR_ISCONN, -EISCONN)
ERRMAP_ROW(ERR_CONN, -ENOTCONN)
ERRMAP_ROW(ERR_IF, -ENETDOWN)
ERRMAP_ROW(ERR_ABRT, -ECONNABORTED)
ERRMAP_ROW(ERR_RST, -ECONNRESET)
ERRMAP_ROW(ERR_CLSD, -ENOTCONN)
ERRMAP_ROW(ERR_ARG, -EINVAL)

TEST(errmap, unknown_value_is_eio)
{
    EXPECT_EQ(stk_err_to_errno(-100), -EIO);
}
