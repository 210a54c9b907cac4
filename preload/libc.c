/*
 * Resolution of the real libc functions listed in intercept.def. The
 * constructor calls pl_libc_resolve_all() once; forwarders reached earlier
 * resolve their own row lazily through pl__libc_resolve_one(). A
 * thread-local flag stops recursion: dlsym may allocate, and a malloc
 * interposed by the application may call one of our wrappers, which must
 * then not call dlsym again (the basic rows fall back to glibc's __read,
 * __write and __close aliases instead). Missing required symbols are
 * reported with a raw write to stderr, because the logger itself writes
 * through libc_write.
 */
#include "libc.h"

#include <dlfcn.h>
#include <string.h>

struct pl_libc pl_libc;

static __thread int resolving;

void *
pl__libc_resolve_one(const char *name, void **slot)
{
    void *p;

    if (resolving)
        return NULL;
    resolving = 1;
    p = dlsym(RTLD_NEXT, name);
    resolving = 0;
    if (p != NULL)
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p;
}

static void
report_missing(const char *name)
{
    static const char pre[] = "accel: error libc: required symbol ";
    static const char post[] = " not found; accelerated sockets disabled\n";

    (void)!__write(2, pre, sizeof(pre) - 1);
    (void)!__write(2, name, strlen(name));
    (void)!__write(2, post, sizeof(post) - 1);
}

int
pl_libc_resolve_all(void)
{
    int rc = 0;

#define RESOLVE(name, required)                                                \
    do {                                                                       \
        if (pl__libc_resolve_one(#name, (void **)&pl_libc.name) == NULL &&     \
            (required)) {                                                      \
            report_missing(#name);                                             \
            rc = -ENOENT;                                                      \
        }                                                                      \
    } while (0)
#define PL_SYM(ret, name, params, args) RESOLVE(name, 1);
#define PL_SYM_BASIC(ret, name, params, args, alias) RESOLVE(name, 1);
#define PL_SYM_OPT(ret, name, params, args) RESOLVE(name, 0);
#define PL_SYM_VA(ret, name, fixed, fparams, fargs) RESOLVE(name, 1);
#include "intercept.def"
#undef PL_SYM
#undef PL_SYM_BASIC
#undef PL_SYM_OPT
#undef PL_SYM_VA
#undef RESOLVE
    return rc;
}
