/*
 * The real libc functions behind every interposed name, generated from
 * intercept.def. Library code calls libc_<name>() and never the plain name
 * (a CI check enforces it): the plain name is our own wrapper.
 *
 * pl_libc_resolve_all() runs once from the constructor and fills the table
 * with dlsym(RTLD_NEXT). A forwarder reached before that (another library's
 * constructor calling read/socket/...) resolves its own symbol lazily; while
 * a resolution is running in the calling thread (dlsym may malloc, and an
 * interposed malloc may call read) the basic rows use libc's __read/__write/
 * __close aliases and the other rows fail with ENOSYS instead of recursing.
 *
 * Thread-safety: concurrent resolutions store the same value; loads and
 * stores are atomic. Nothing here takes a lock.
 */
#ifndef ACCEL_PL_LIBC_H
#define ACCEL_PL_LIBC_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

struct pl_libc {
#define PL_SYM(ret, name, params, args) ret(*name) params;
#define PL_SYM_BASIC(ret, name, params, args, alias) ret(*name) params;
#define PL_SYM_OPT(ret, name, params, args) ret(*name) params;
#define PL_SYM_VA(ret, name, fixed, fparams, fargs) ret(*name) fixed;
#include "intercept.def"
#undef PL_SYM
#undef PL_SYM_BASIC
#undef PL_SYM_OPT
#undef PL_SYM_VA
};

/** The table; entries are NULL until resolved. */
extern struct pl_libc pl_libc;

/** Resolve every row with dlsym(RTLD_NEXT). Logs each missing required
 *  symbol. Returns 0, or -ENOENT when a required symbol is missing. */
int pl_libc_resolve_all(void);

/** Resolve one symbol (lazy path). NULL when missing or when called
 *  recursively from inside a resolution in this thread. */
void *pl__libc_resolve_one(const char *name, void **slot);

/* Aliases exported by glibc, usable without dlsym. */
extern ssize_t __read(int fd, void *buf, size_t n);
extern ssize_t __write(int fd, const void *buf, size_t n);
extern int __close(int fd);

#define PL_LIBC_LOAD(name) __atomic_load_n(&pl_libc.name, __ATOMIC_ACQUIRE)

#define PL_SYM(ret, name, params, args)                                        \
    static inline ret libc_##name params                                       \
    {                                                                          \
        __typeof__(pl_libc.name) fn = PL_LIBC_LOAD(name);                      \
        if (__builtin_expect(fn == NULL, 0)) {                                 \
            fn = (__typeof__(fn))pl__libc_resolve_one(#name,                   \
                                                      (void **)&pl_libc.name); \
            if (fn == NULL) {                                                  \
                errno = ENOSYS;                                                \
                return (ret)-1;                                                \
            }                                                                  \
        }                                                                      \
        return fn args;                                                        \
    }
#define PL_SYM_OPT(ret, name, params, args) PL_SYM(ret, name, params, args)
#define PL_SYM_BASIC(ret, name, params, args, alias)                           \
    static inline ret libc_##name params                                       \
    {                                                                          \
        __typeof__(pl_libc.name) fn = PL_LIBC_LOAD(name);                      \
        if (__builtin_expect(fn == NULL, 0)) {                                 \
            fn = (__typeof__(fn))pl__libc_resolve_one(#name,                   \
                                                      (void **)&pl_libc.name); \
            if (fn == NULL)                                                    \
                fn = alias;                                                    \
        }                                                                      \
        return fn args;                                                        \
    }
#define PL_SYM_VA(ret, name, fixed, fparams, fargs)                            \
    static inline ret libc_##name fparams                                      \
    {                                                                          \
        __typeof__(pl_libc.name) fn = PL_LIBC_LOAD(name);                      \
        if (__builtin_expect(fn == NULL, 0)) {                                 \
            fn = (__typeof__(fn))pl__libc_resolve_one(#name,                   \
                                                      (void **)&pl_libc.name); \
            if (fn == NULL) {                                                  \
                errno = ENOSYS;                                                \
                return (ret)-1;                                                \
            }                                                                  \
        }                                                                      \
        return fn fargs;                                                       \
    }
#include "intercept.def"
#undef PL_SYM
#undef PL_SYM_BASIC
#undef PL_SYM_OPT
#undef PL_SYM_VA

#endif /* ACCEL_PL_LIBC_H */
