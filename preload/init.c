/*
 * Library start and fork handling. The constructor resolves the libc table
 * (libc.c) and only then lets wrappers do more than pass through; nothing
 * else starts here: the configuration is read at the first socket() and
 * the data path (DPDK, stack) at the first socket that needs it.
 *
 * fork (pthread_atfork child handler, so fork() needs no wrapper): the
 * child releases fd-table slot locks and the epoll lock held by threads
 * that do not exist in it, bumps the fork epoch and tells the runtime. A
 * socket accelerated before the fork is then claimed at its first use in
 * either process (one of them wins it; the other's copy reports EBADF) when
 * the port is shared, and reports EBADF in the child when it is not
 * (docs/DESIGN.md section 8). exec needs
 * nothing: kernel fds survive it and the library starts afresh.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "epoll.h"
#include "fdtable.h"
#include "libc.h"
#include "pl.h"
#include "rt.h"
#include "sock.h"
#include "statreg.h"

atomic_bool pl__ready;
atomic_uint pl_fork_epoch;

static void
atfork_prepare(void)
{
    rt_atfork_prepare();
}

static void
atfork_parent(void)
{
    /* The child shares the port: the parent's sockets revalidate at their
     * next use too (its connections were frozen by the fork). */
    if (rt_atfork_parent())
        atomic_fetch_add(&pl_fork_epoch, 1);
}

static void
atfork_child(void)
{
    pl_fdt_atfork_child();
    pl_ep_atfork_child();
    atomic_fetch_add(&pl_fork_epoch, 1);
    rt_atfork_child();
}

__attribute__((constructor)) static void
pl_init(void)
{
    int saved = errno;

    if (pl_libc_resolve_all() == 0 &&
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child) == 0) {
        pl_signals_init();
        pl_sock_init();
        base_sr_set_socks_fn(pl_sr_socks);
        /* A region of this pid is an earlier program's: exec keeps the
         * pid. It is made again at this program's first socket. */
        {
            char path[64];

            base_sr_path((int)getpid(), path, sizeof(path));
            syscall(SYS_unlink, path);
        }
        atomic_store(&pl__ready, true);
    }
    errno = saved;
}
