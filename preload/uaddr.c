/*
 * Buffers the application passes that no mapping can hold. The stack
 * copies from and to the application's buffers in user space, where a bad
 * pointer is a SIGSEGV; Linux copies in the kernel and fails the call with
 * EFAULT. The ranges checked here need no system call: the first page
 * (never mapped while vm.mmap_min_addr is at least a page, the default is
 * 64 KiB: a NULL or small-integer pointer), a range that wraps around, and
 * one reaching past the top of the user address space (x86-64's 47-bit
 * TASK_SIZE: a kernel or non-canonical address). A pointer into an
 * unmapped or read-only page inside the user range is not detected (see
 * docs/LIMITATIONS.md).
 */
#include "sock.h"

#include <stdint.h>

#define UADDR_MIN 4096u
#if defined(__x86_64__)
#define UADDR_END 0x7ffffffff000ull /* TASK_SIZE with 4-level paging */
#else
#define UADDR_END UINTPTR_MAX
#endif

bool
pl_uaddr_bad(const struct iovec *iov, size_t n)
{
    if (n > 0 && (uintptr_t)iov < UADDR_MIN) /* the iovec array itself */
        return true;
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)iov[i].iov_base;
        size_t len = iov[i].iov_len;

        if (len == 0)
            continue;
        if (a < UADDR_MIN || a + len < a || (uint64_t)(a + len) > UADDR_END)
            return true;
    }
    return false;
}
