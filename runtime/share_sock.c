/*
 * The sharing protocol's one interface to preload (rt.h, "sockets of
 * processes that share the port"): what a socket of this process does
 * that other processes on the port must know of. Preload calls these and
 * nothing else of the sharing machinery; the flows, the services, the
 * held segments, the moved and pending connections and their timers stay
 * behind them (share_flow.c, share_serve.c, share_rx.c). The stack is
 * used only through its freeze/thaw/export/import operations.
 *
 * A connection's life across processes, and which function here moves it
 * along each edge, is the state diagram in docs/DESIGN.md section 8
 * ("A connection across processes").
 *
 * Every function runs with the stack lock held; each is cheap when the
 * port is not shared (one branch, or the local list of share_serve.c).
 */
#include <errno.h>
#include <unistd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <sys/epoll.h>

#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "share_int.h"
#include "stk.h"

/* A connection copied by fork: thaw it for this process and input the
 * segments held while it was frozen, or drop this copy when another
 * process has it. */
static bool
claim_copy(struct stk_sock *s, const struct stk_flow *f)
{
    if (rt__sh_flow_claim(f) > 0) {
        stk_sock_thaw(s);
        rt__sh_flow_replay(f);
        return true;
    }
    stk_sock_drop_frozen(s);
    return false;
}

bool
rt_sock_claim(struct stk_sock *s)
{
    static atomic_bool logged;
    struct stk_flow f;

    if (!stk_sock_frozen(s, &f))
        return true;
    if (claim_copy(s, &f)) {
        rt_poll();
        return true;
    }
    if (!atomic_exchange(&logged, true))
        BASE_INFO("fork", "a connection copied by fork is used by another "
                          "process; its copy here reports EBADF (logged "
                          "once)");
    return false;
}

int
rt_sock_accept(struct stk_sock *l, struct stk_sock **out, struct sockaddr *a,
               socklen_t *len)
{
    struct stk_flow f;
    int rc;

    for (;;) {
        rc = stk_sock_accept(l, out, a, len);
        /* Nothing queued here: one another process moved out, if any. */
        if (rc == -EAGAIN && rt__sh_migrate_in(l) > 0)
            rc = stk_sock_accept(l, out, a, len);
        if (rc != 0 || !stk_sock_frozen(*out, &f) || claim_copy(*out, &f))
            return rc;
        /* Queued before a fork and accepted first by another process:
         * this copy is gone; look at the next. */
        stk_sock_close(*out);
    }
}

void
rt_sock_serve(struct stk_sock *s, int how)
{
    int proto;
    uint16_t port;
    uint32_t lid;

    if (!stk_sock_service(s, &proto, &port, &lid))
        return;
    if (how == RT_SERVE_CLOSE && proto != IPPROTO_TCP)
        how = RT_SERVE_OFF; /* UDP: no copies are counted */
    rt__sh_serve(s, proto, port, lid, how);
    /* Connections waiting on the queue of a listener this process closes
     * go to a process that still serves the port (Linux's queue is
     * shared); after an epoll removal they move only if it lasts
     * (rt__share_export_unserved). */
    if (how == RT_SERVE_CLOSE)
        rt__sh_migrate_out(s);
}

void
rt_sock_accept_wait(struct stk_sock *l, bool on, bool accept)
{
    int proto;
    uint16_t port;
    uint32_t lid;

    if (stk_sock_service(l, &proto, &port, &lid) && proto == IPPROTO_TCP)
        rt__sh_serve_wait(proto, port, lid, on, accept);
}

void
rt_sock_accepted(struct stk_sock *l)
{
    int proto;
    uint16_t port;
    uint32_t lid;

    if (stk_sock_service(l, &proto, &port, &lid) && proto == IPPROTO_TCP)
        rt__sh_serve_accepted(proto, port, lid);
}

uint32_t
rt_sock_events(struct stk_sock *s, uint32_t *gen)
{
    uint32_t ev = stk_sock_events(s, gen);
    int proto;
    uint16_t port;
    uint32_t lid;

    /* A listener also reads as ready while connections another process
     * moved out wait for its port (rt__sh_migrate_out). Every look of
     * epoll comes here: nothing more while the port is not shared. */
    if (!(ev & EPOLLIN) && rt__shared &&
        stk_sock_service(s, &proto, &port, &lid) && proto == IPPROTO_TCP &&
        rt__sh_migrants(port))
        ev |= EPOLLIN | EPOLLRDNORM;
    return ev;
}

void
rt_sock_close(struct stk_sock *s, bool served)
{
    struct stk_flow f;

    if (served)
        rt_sock_serve(s, RT_SERVE_CLOSE);
    /* A connection copied by fork and never used here: the last copy is
     * closed for real, the others are dropped silently. */
    if (stk_sock_frozen(s, &f)) {
        if (rt__sh_flow_release(&f) > 0) {
            stk_sock_thaw(s);
            rt__sh_flow_replay(&f);
        } else {
            stk_sock_drop_frozen(s);
        }
    }
    stk_sock_close(s);
    rt_poll();
}

void
rt_sock_close_hold(struct stk_sock *s, bool served, int kfd)
{
    struct stk_flow f;
    bool flow = rt__steer4_on && stk_sock_flow(s, &f);

    rt_sock_close(s, served);
    if (flow)
        rt__steer4_hold(&f, kfd);
    else
        close(kfd);
}
