/*
 * Interposed mmap/munmap. Only one caller is of interest: EAL's interrupt
 * thread in the first process of a memif port shared across fork, while it
 * runs the PMD's callbacks; the runtime places its shared maps at
 * addresses every child keeps free (runtime/share_memif.c). Every other
 * call goes straight to libc.
 */
#include <sys/mman.h>

#include "libc.h"
#include "pl.h"
#include "rt.h"

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

static inline bool
ours(const void *addr)
{
    return pl_unlikely(
               atomic_load_explicit(&rt_mf_armed, memory_order_relaxed)) &&
           addr == NULL && rt_mf_in_callbacks();
}

static void *
place(size_t len, int prot, int flags, int fd, off_t off)
{
    int err = 0;
    void *p = rt_mf_mmap(len, prot, flags, fd, off, &err);

    if (p == MAP_FAILED)
        errno = err;
    return p;
}

void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (ours(addr)) {
        void *p = place(len, prot, flags, fd, off);
        if (p != NULL)
            return p;
    }
    return libc_mmap(addr, len, prot, flags, fd, off);
}

void *
mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    if (ours(addr)) {
        void *p = place(len, prot, flags, fd, (off_t)off);
        if (p != NULL)
            return p;
    }
    return libc_mmap64(addr, len, prot, flags, fd, off);
}

int
munmap(void *addr, size_t len)
{
    if (pl_unlikely(atomic_load_explicit(&rt_mf_armed, memory_order_relaxed)) &&
        rt_mf_in_callbacks() && rt_mf_munmap(addr, len))
        return 0;
    return libc_munmap(addr, len);
}

#pragma GCC visibility pop
