/*
 * Process slots (share_int.h): the holder of the port lock checks the
 * other processes' liveness tokens every SWEEP_NS; a process gone (killed,
 * exited without cleanup, or exec'd) has its ring and its stash of
 * recycled mbufs given back to the pool, its connections
 * removed (their peers get a RST from the stack that receives their next
 * segment), its copies of frozen connections released and its services
 * withdrawn.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "clock.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "share_int.h"
#include "stats.h"
#include "stk.h"

/* ---- slots ------------------------------------------------------------ */

void
rt__sh_slot_cleanup(int i)
{
    struct sh_slot *s = &rt__sh->slot[i];
    struct rte_mbuf *m;
    unsigned conns = 0;

    while ((m = rt__sh_ring_get(&s->rx)) != NULL)
        rt__sh_mbuf_free(m);
    if (!rt__remote)
        rt__stash_drain(&s->stash); /* a joined process's is empty */
    rt__sh_q_release(i);
    for (uint32_t k = 0; k < SH_FLOWS; k++) {
        struct sh_flow *e = &rt__sh->flow[k];

        while (e->used) {
            if (e->frozen && (e->holders & (1ull << i))) {
                e->holders &= ~(1ull << i);
                if (e->holders != 0)
                    break;
            } else if (e->frozen || e->owner != i) {
                break;
            }
            conns++;
            rt__sh_flow_erase(
                e); /* may move the next entry into k: look again */
        }
    }
    for (int k = 0; k < SH_SVCS; k++) {
        struct sh_svc *v = &rt__sh->svc[k];
        if (!v->used)
            continue;
        for (int j = 0; j < v->n;)
            if (v->v[j].slot == i)
                v->v[j] = v->v[--v->n];
            else
                j++;
    }
    rt__sh_svc_drop_copies(i);
    atomic_store(&s->sleepers, 0);
    atomic_store(&s->active, false);
    rt__sh->remote_mask &= ~(1ull << i);
    s->remote = false;
    if (i != rt__sh_me)
        BASE_INFO("share", "process %d is gone: %u connections released",
                  atomic_load(&s->pid), conns);
    atomic_store(&s->state, SLOT_FREE);
}

/* True if the region is mapped in pid at addr (where that process maps
 * it: the same address in a fork family, another in a joined process). */
static bool
maps_have_region(int pid, uintptr_t addr)
{
    char path[64], buf[4096], want[32];
    size_t wl, keep = 0;
    long fd, n;
    bool found = false;

    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    wl = (size_t)snprintf(want, sizeof(want), "%" PRIxPTR "-", addr);
    fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    while (!found && (n = syscall(SYS_read, (int)fd, buf + keep,
                                  sizeof(buf) - 1 - keep)) > 0) {
        char *line = buf, *nl;
        buf[keep + (size_t)n] = '\0';
        while ((nl = strchr(line, '\n')) != NULL) {
            if (strncmp(line, want, wl) == 0) {
                found = true;
                break;
            }
            line = nl + 1;
        }
        keep = strlen(line);
        memmove(buf, line, keep);
    }
    syscall(SYS_close, (int)fd);
    return found;
}

bool
rt__sh_slot_alive(int i)
{
    struct sh_slot *s = &rt__sh->slot[i];
    int pid = atomic_load(&s->pid), rc;

    if (!s->tokenless) {
        rc = pthread_mutex_trylock(&s->token);
        if (rc == EBUSY)
            return true;
        if (rc == EOWNERDEAD)
            pthread_mutex_consistent(&s->token);
        if (rc == 0 || rc == EOWNERDEAD)
            pthread_mutex_unlock(&s->token);
        s->tokenless = true;
    }
    /* Its token holder is gone: the process died or exec'd, or only the
     * thread that took the token ended. */
    if (syscall(SYS_kill, pid, 0) != 0 && errno == ESRCH)
        return false;
    return maps_have_region(pid, s->map_addr);
}

/* now: the caller's clock reading, taken before the port lock. Times
 * written by other processes under the lock may be later than it: they
 * are compared signed, and a reservation's age is measured with the clock
 * read here, under the lock. (A reservation judged against an earlier
 * reading looked ~2^64 ns old: the slot was freed while its child was
 * starting and given to a second child; the first child's exit then
 * cleaned up the second's connections.) */
void
rt__sh_sweep(uint64_t now)
{
    if ((int64_t)(now - rt__sh->last_sweep_ns) < (int64_t)SWEEP_NS)
        return;
    now = base_now_ns();
    rt__sh->last_sweep_ns = now;
    for (int i = 0; i < SH_SLOTS; i++) {
        int st = atomic_load(&rt__sh->slot[i].state);

        if (i == rt__sh_me || st == SLOT_FREE)
            continue;
        if (st == SLOT_RESERVED) {
            if ((int64_t)(now - rt__sh->slot[i].reserved_ns) >
                (int64_t)RESERVE_TIMEOUT_NS)
                atomic_store(&rt__sh->slot[i].state, SLOT_FREE);
            continue;
        }
        if (!rt__sh_slot_alive(i))
            rt__sh_slot_cleanup(i);
    }
}
