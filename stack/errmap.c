/*
 * lwIP err_t -> Linux -errno, in one table (compare lwIP src/api/err.c).
 * Every conversion in stack/ goes through stk_err_to_errno(); a unit test
 * checks each row. Values not in the table map to -EIO.
 */
#include <errno.h>

#include "stk_priv.h"

static const struct {
    err_t err;
    int neg_errno;
} errmap[] = {
    {ERR_OK, 0},
    {ERR_MEM, -ENOMEM},
    {ERR_BUF, -ENOBUFS},
    {ERR_TIMEOUT, -ETIMEDOUT},
    {ERR_RTE, -EHOSTUNREACH},
    {ERR_INPROGRESS, -EINPROGRESS},
    {ERR_VAL, -EINVAL},
    {ERR_WOULDBLOCK, -EAGAIN},
    {ERR_USE, -EADDRINUSE},
    {ERR_ALREADY, -EALREADY},
    {ERR_ISCONN, -EISCONN},
    {ERR_CONN, -ENOTCONN},
    {ERR_IF, -ENETDOWN},
    {ERR_ABRT, -ECONNABORTED},
    {ERR_RST, -ECONNRESET},
    {ERR_CLSD, -ENOTCONN},
    {ERR_ARG, -EINVAL},
};

int
stk_err_to_errno(int err)
{
    size_t i;

    for (i = 0; i < sizeof(errmap) / sizeof(errmap[0]); i++) {
        if (errmap[i].err == err)
            return errmap[i].neg_errno;
    }
    return -EIO;
}
