/*
 * Interposed mmap/munmap. Only one caller is of interest: EAL's interrupt
 * thread in the first process of a memif port shared across fork, while it
 * runs the PMD's callbacks; the runtime places its shared maps at
 * addresses every child keeps free (runtime/share_memif.c). Every other
 * call goes straight to libc.
 *
 * Before the constructor filled the libc table, the calls go to the
 * kernel directly instead of resolving the symbol lazily: a sanitizer's
 * runtime maps memory through us while it initialises, and dlsym would
 * call into that very runtime (its malloc) half-initialised; for the same
 * reason these functions are not instrumented by ThreadSanitizer (its
 * mmap interceptor calls them before its shadow memory exists).
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libc.h"
#include "pl.h"
#include "rt.h"

/* The interposed definitions below are the library's exports. */
#pragma GCC visibility push(default)

#define PL_NO_TSAN __attribute__((no_sanitize_thread))

PL_NO_TSAN static inline __attribute__((always_inline)) bool
ours(const void *addr)
{
    return pl_unlikely(
               atomic_load_explicit(&rt_mf_armed, memory_order_relaxed)) &&
           addr == NULL && rt_mf_in_callbacks();
}

PL_NO_TSAN static void *
place(size_t len, int prot, int flags, int fd, off_t off)
{
    int err = 0;
    void *p = rt_mf_mmap(len, prot, flags, fd, off, &err);

    if (p == MAP_FAILED)
        errno = err;
    return p;
}

PL_NO_TSAN void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (ours(addr)) {
        void *p = place(len, prot, flags, fd, off);
        if (p != NULL)
            return p;
    }
    __typeof__(pl_libc.mmap) fn = PL_LIBC_LOAD(mmap);
    if (fn != NULL)
        return fn(addr, len, prot, flags, fd, off);
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* One function on 64-bit targets, as in glibc. */
_Static_assert(sizeof(off_t) == sizeof(off64_t), "mmap64 is mmap");
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
    __attribute__((alias("mmap")));

PL_NO_TSAN int
munmap(void *addr, size_t len)
{
    if (pl_unlikely(atomic_load_explicit(&rt_mf_armed, memory_order_relaxed)) &&
        rt_mf_in_callbacks() && rt_mf_munmap(addr, len))
        return 0;
    __typeof__(pl_libc.munmap) fn = PL_LIBC_LOAD(munmap);
    if (fn != NULL)
        return fn(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

#pragma GCC visibility pop
