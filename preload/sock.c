/*
 * The pl_sock object: creation, the UNDECIDED -> ACCEL / KERNEL
 * transitions, option records replayed into the stack socket, readiness
 * (stack events plus the kernel side of an INADDR_ANY socket), and the
 * blocking-wait building blocks every blocking operation uses: run one
 * non-blocking stack operation under the stack lock with a poll turn, then
 * rt_block() until something may have changed.
 *
 * Signals: rt_block() reports -EINTR when a handler ran. Linux restarts
 * socket calls for handlers installed with SA_RESTART unless the socket has
 * a timeout (signal(7)); we cannot tell which signal arrived, so a call is
 * restarted only when no installed handler lacks SA_RESTART and the socket
 * has no timeout for that direction. Otherwise it fails with EINTR.
 *
 * ---- Threads and locking: the library's model --------------------------
 *
 * Written here because the socket object is where the fd table, the
 * epoll code and the runtime meet. Any number of application threads may
 * call into the library at once, on the same or different fds; the
 * library's own threads are the progress thread (runtime/progress.c) and
 * DPDK's, which never enter the wrappers (base_in_lib).
 *
 * Locks, in the only order they nest (none is taken while holding one
 * further down the list):
 *   s->mu     per socket: the decision UNDECIDED -> ACCEL/KERNEL, the
 *             option records, the kernel side's setup (bind/listen of the
 *             kernel socket, s->kfd). Held across rt_start() (EAL start,
 *             once per process) and short non-blocking kernel calls on the
 *             socket's own fd; never across a wait.
 *   ep_mu     epoll interest lists and items (epoll.c).
 *   rt_lock   the stack lock (runtime/loop.c), one plain mutex per
 *             process: every stk_* call and every rt_poll (rx burst, lwIP
 *             input and timers, tx flush). lwIP's callbacks run under it
 *             and call the socket's notify (sock_notify: epoll ready list,
 *             rt_wakeup). Held for bounded work (one call, one poll turn),
 *             never across a sleep or a blocking libc call. The fork
 *             prepare handler holds it across fork() (runtime/start.c).
 *   rd_mu     epoll ready lists (epoll.c), a leaf under rt_lock.
 *   port lock (runtime/share.c) process-shared, after a fork shared the
 *             port; taken under rt_lock.
 * Lock-free: the fd table (fdtable.h: CAS slots, counted references), the
 * sleeper table and wakeups (runtime/block.c: atomics and one eventfd per
 * sleeping thread), the socket's flags (state, nonblock, kside, klisten,
 * timeouts, epoch, kfd: atomics).
 *
 * What may block while holding what: a blocking call (recv, send, accept,
 * connect, epoll_wait, poll, select) sleeps in rt_block() holding no lock,
 * only its reference on the socket; it loops on the non-blocking stack
 * operation under rt_lock. s->mu may be held for seconds by the first
 * rt_start(); rt_lock for one poll turn. A thread that needs the stack
 * while another polls waits for that turn only.
 *
 * References and lifetime: the fd table holds one reference per fd
 * number pointing at the object; every call in progress holds its own
 * from the lookup (pl_wrap_sock) to its return (pl_wrap_put). close()
 * removes the entry before the kernel close (a reused number never finds
 * a stale entry) and drops the table's reference; the object, its stack
 * socket, its epoll registrations and its kernel descriptor go with the
 * last reference, which may be the return of a call blocked in another
 * thread. That is Linux's behaviour, where a blocked call holds the file:
 * a recv or accept blocked on an fd another thread closes keeps waiting
 * and completes normally (the connection closes when it returns);
 * shutdown() wakes it (recv returns 0, accept EINVAL); an epoll set
 * forgets the socket only when its last reference goes (a dup keeps it).
 * destroy() takes rt_lock and ep_mu, so a reference that may be the last
 * is never dropped with either held (nor s->mu of that socket).
 *
 * fd numbers: once a call has looked its socket up, it never uses the
 * application's fd number for the kernel side again (the kernel accept
 * queue and UDP datagrams of an INADDR_ANY socket, readiness, waits):
 * another thread may close the number and the kernel give it to an
 * unrelated file. Those go through s->kfd, the socket's private duplicate
 * of its kernel socket (pl_sock_kside_on).
 *
 * The stack socket s->stk is written before the state becomes ACCEL
 * (release) and used only under rt_lock. A connect to loopback may move
 * an accelerated socket to the kernel while another thread is inside a
 * call on it: pl_sock_to_kernel() changes the state and closes the stack
 * socket under rt_lock, and pl_sock_run()/pl_sock_events() check the state
 * again under the lock, so the other call finishes on the kernel socket
 * (PL_SOCK_MOVED) instead of touching a freed stack socket.
 *
 * Wakeups: whoever polls (any application thread in the library, or the
 * progress thread) runs lwIP, whose callbacks end in rt_wakeup(), which
 * wakes every thread sleeping in rt_block() through its own eventfd; a
 * sleeper re-checks a generation counter before it sleeps, so no wakeup is
 * lost. A thread blocked in recv or epoll_wait therefore wakes when the
 * answer to another thread's send arrives, whichever thread received it.
 *
 * Fork: the fd table's slot bits are cleared in the child
 * (pl_fdt_atfork_child); a fork while another thread holds s->mu or
 * ep_mu leaves that lock held in the child, as with any mutex (a
 * multi-threaded program may only exec after fork, POSIX says).
 *
 * Tests: tests/integration/threads.sh (every case above, on the kernel and
 * accelerated, same results), tests/unit/preload/fdtable_threads_test.cc,
 * and both under ThreadSanitizer (-DACCEL_TSAN=ON, tools/test.sh's tsan
 * suite).
 */
#include "sock.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "cfg.h"
#include "clock.h"
#include "epoll.h"
#include "libc.h"
#include "log.h"
#include "pl.h"
#include "route.h"
#include "rt.h"
#include "stats.h"
#include "stk.h"

/* After a fork (epoch changed): claim a connection the fork copied, or
 * find it taken by another process. Registers UDP sockets as served. */
static bool
revalidate(struct pl_sock *s, unsigned int cur)
{
    bool ok;

    if (atomic_load(&s->dead) || !rt_started())
        return false;
    rt_lock();
    if (atomic_load(&s->epoch) == cur) {
        rt_unlock();
        return true;
    }
    ok = rt_sock_claim(s->stk);
    if (ok)
        atomic_store(&s->epoch, cur);
    else
        atomic_store(&s->dead, true);
    rt_unlock();
    if (ok && s->type == SOCK_DGRAM)
        pl_sock_serve(s, RT_SERVE_ON);
    return ok;
}

bool
pl_sock_live(struct pl_sock *s)
{
    unsigned int cur;

    if (pl_sock_state(s) != PL_SOCK_ACCEL)
        return false;
    cur = atomic_load_explicit(&pl_fork_epoch, memory_order_relaxed);
    if (atomic_load_explicit(&s->epoch, memory_order_relaxed) == cur)
        return true;
    return revalidate(s, cur);
}

bool
pl_sock_meta(struct pl_sock *s)
{
    unsigned int cur;

    if (pl_sock_state(s) != PL_SOCK_ACCEL || atomic_load(&s->dead) ||
        !rt_started())
        return false;
    cur = atomic_load_explicit(&pl_fork_epoch, memory_order_relaxed);
    /* A UDP socket has nothing to claim: revalidating it registers it as
     * served, as before. A TCP socket is read as it is (a frozen
     * connection's copy holds its addresses and options). */
    if (atomic_load_explicit(&s->epoch, memory_order_relaxed) == cur ||
        s->type != SOCK_STREAM)
        return pl_sock_live(s);
    return true;
}

void
pl_sock_accept_wait(struct pl_sock *s, bool on, bool accept)
{
    if (!rt_started() || pl_sock_state(s) != PL_SOCK_ACCEL ||
        s->type != SOCK_STREAM || !stk_sock_is_listening(s->stk))
        return;
    rt_lock();
    rt_sock_accept_wait(s->stk, on, accept);
    rt_unlock();
}

void
pl_sock_accepted(struct pl_sock *s)
{
    if (!rt_started() || pl_sock_state(s) != PL_SOCK_ACCEL)
        return;
    rt_lock();
    rt_sock_accepted(s->stk);
    rt_unlock();
}

void
pl_loop_turn(void)
{
    if (!rt_started())
        return;
    rt_set_tx_defer(base_cfg.tx_defer);
    rt_flush();
}

void
pl_sock_serve(struct pl_sock *s, int how)
{
    unsigned int mark =
        atomic_load_explicit(&pl_fork_epoch, memory_order_relaxed) + 1;

    if (pl_sock_state(s) != PL_SOCK_ACCEL || atomic_load(&s->dead) ||
        (s->type == SOCK_STREAM && !stk_sock_is_listening(s->stk)))
        return;
    if (how == RT_SERVE_ON && atomic_load(&s->served) == mark)
        return;
    rt_lock();
    rt_sock_serve(s->stk, how);
    rt_unlock();
    atomic_store(&s->served, how == RT_SERVE_ON ? mark : 0);
}

static bool
set(const char *v)
{
    return v != NULL && v[0] != '\0';
}

/* Acceleration half-configured (an address without a port or the other
 * way round): let the runtime name the missing variable, once. With no
 * ACCEL_* address or port at all the library stays silent. */
static bool
configured(void)
{
    static atomic_bool reported;

    if (rt_configured())
        return pl_rules_ok(); /* a bad rules file: nothing accelerated */
    if (!atomic_exchange(&reported, true) && base_cfg_load() == 0 &&
        (set(base_cfg.ip) || set(base_cfg.iface) || set(base_cfg.vdev)))
        (void)rt_start(); /* fails, logging one line */
    return false;
}

bool
pl_sock_candidate(int domain, int type, int protocol, enum pl_why *why)
{
    int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);

    *why = PL_WHY_COUNT;
    if (domain != AF_INET && domain != AF_INET6)
        return false;
    if (!configured()) {
        if (rt_configured()) /* and the rules file is bad (logged) */
            *why = PL_WHY_rules_file;
        return false;
    }
    if (base == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP)) {
        *why = base_cfg.tcp ? PL_WHY_COUNT : PL_WHY_config;
        return base_cfg.tcp;
    }
    if (base == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP)) {
        *why = base_cfg.udp ? PL_WHY_COUNT : PL_WHY_config;
        return base_cfg.udp;
    }
    *why = PL_WHY_type;
    return false;
}

void
pl_sock_net(struct pl_net *net)
{
    memset(net, 0, sizeof(*net));
    net->ip = base_cfg.ip_addr;
    net->mask = base_cfg.ip_mask;
    net->gw = base_cfg.gw_addr;
    net->has6 = base_cfg.has_ip6;
    net->has_gw6 = base_cfg.has_gw6;
    net->prefix6 = base_cfg.ip6_prefix;
    net->ip6 = base_cfg.ip6_addr;
    net->gw6 = base_cfg.gw6_addr;
    /* The link-local address and the interface exist once the data path
     * runs (a bind to fe80::...%if before that stays on the kernel). */
    if (net->has6 && rt_started()) {
        rt_lock();
        (void)stk_local_ll6(&net->ll6);
        net->ifindex = (uint32_t)stk_ifindex();
        rt_unlock();
    }
}

static void
sock_destroy(struct pl_fd *f)
{
    struct pl_sock *s = (struct pl_sock *)f;

    pl_ep_sock_gone(s);
    /* In a fork child on the kernel, the stack socket belongs to the
     * parent's stack: the child only forgets it. */
    if (pl_sock_state(s) == PL_SOCK_ACCEL && rt_started()) {
        int k = atomic_load(&s->kfd);

        rt_lock();
        /* Shared address: an active open's kernel socket keeps its port
         * until the stack's connection is gone (TIME-WAIT included). */
        if (k >= 0 && s->type == SOCK_STREAM && !atomic_load(&s->kside) &&
            pl_shared_addr()) {
            rt_sock_close_hold(s->stk, !atomic_load(&s->dead), k);
            atomic_store(&s->kfd, -1);
        } else {
            rt_sock_close(s->stk, !atomic_load(&s->dead));
        }
        rt_unlock();
    }
    if (atomic_load(&s->kfd) >= 0)
        libc_close(atomic_load(&s->kfd));
    pthread_mutex_destroy(&s->mu);
    free(s->opts);
    free(s);
}

static void
sock_notify(void *ctx, uint32_t events)
{
    (void)events;
    pl_ep_sock_changed(ctx);
    rt_wakeup();
}

/* The one readiness callback of every stack socket (its context is the
 * pl_sock), registered before the first socket. */
void
pl_sock_init(void)
{
    stk_set_notify(sock_notify);
}

struct pl_sock *
pl_sock_new(int family, int type, bool nonblock)
{
    struct pl_sock *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return NULL;
    pl_fd_init(&s->hdr, PL_FD_SOCK, sock_destroy);
    pthread_mutex_init(&s->mu, NULL);
    s->type = type;
    s->kfamily = family;
    atomic_init(&s->family, family);
    atomic_init(&s->state, PL_SOCK_UNDECIDED);
    atomic_init(&s->nonblock, nonblock);
    atomic_init(&s->kfd, -1);
    return s;
}

struct pl_sock *
pl_sock_new_accepted(const struct pl_sock *l, struct stk_sock *stk,
                     bool nonblock)
{
    struct pl_sock *s = pl_sock_new(l->kfamily, SOCK_STREAM, nonblock);

    if (s == NULL)
        return NULL;
    atomic_init(&s->v6only, atomic_load(&l->v6only));
    s->stk = stk;
    s->epoch = atomic_load(&pl_fork_epoch);
    atomic_store_explicit(&s->state, PL_SOCK_ACCEL, memory_order_release);
    /* Under the stack lock, once s is complete: the connection is live in
     * the stack, and any thread's rt_poll may run its callbacks, which
     * read the socket's context and then s (found by ThreadSanitizer with a
     * thread-per-connection server). */
    rt_lock();
    stk_sock_set_ctx(stk, s);
    rt_unlock();
    return s;
}

/* The kernel socket of an accelerated fd stays O_NONBLOCK, so probing its
 * kernel side never blocks; F_GETFL reports the application's flag. */
static void
kernel_nonblock(int fd, bool on)
{
    int fl = libc_fcntl(fd, F_GETFL, 0);

    if (fl < 0)
        return;
    if (on != !!(fl & O_NONBLOCK))
        libc_fcntl(
            fd, F_SETFL,
            (unsigned long)(on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK)));
}

/* IPV6_V6ONLY of the kernel socket: what the application set, or
 * net.ipv6.bindv6only's default. */
static bool
kernel_v6only(int fd)
{
    int v = 0;
    socklen_t len = sizeof(v);

    return libc_getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len) == 0 &&
           v != 0;
}

bool
pl_sock_v6only(struct pl_sock *s, int fd)
{
    if (s->kfamily != AF_INET6)
        return false;
    return pl_sock_state(s) == PL_SOCK_UNDECIDED ? kernel_v6only(fd)
                                                 : atomic_load(&s->v6only);
}

enum pl_in6
pl_sock_view(struct pl_sock *s, int fd, bool bind, const struct sockaddr *a,
             socklen_t len, struct sockaddr_in *v4)
{
    if (pl_sock_af(s) != AF_INET6)
        return PL_IN6_ASIS;
    if (bind && a == NULL)
        return PL_IN6_BAD; /* EFAULT */
    /* Only a UDP connect or sendto takes a sockaddr_in (Linux's
     * ip6_datagram_connect, udpv6_sendmsg); bind never does. */
    return pl_in6_view(a, len, pl_sock_v6only(s, fd),
                       !bind && s->type == SOCK_DGRAM, v4);
}

const struct sockaddr *
pl_sock_route_addr(enum pl_in6 k, const struct sockaddr *a, socklen_t *len,
                   const struct sockaddr_in *v4)
{
    if (k != PL_IN6_V4)
        return a;
    *len = sizeof(*v4);
    return (const struct sockaddr *)v4;
}

void
pl_sock_name_v4(const struct sockaddr_in6 *n6, socklen_t n6len,
                struct sockaddr *out, socklen_t *len)
{
    struct sockaddr_in v4;

    memset(&v4, 0, sizeof(v4));
    v4.sin_family = AF_INET;
    if (n6len >= (socklen_t)sizeof(*n6) && n6->sin6_family == AF_INET6) {
        v4.sin_port = n6->sin6_port;
        memcpy(&v4.sin_addr, &n6->sin6_addr.s6_addr[12], 4);
    }
    if (out != NULL)
        memcpy(out, &v4, *len < sizeof(v4) ? *len : sizeof(v4));
    *len = sizeof(v4);
}

enum pl_route
pl_sock_decide_remote(struct pl_sock *s, int fd, enum pl_in6 k,
                      const struct sockaddr *a, socklen_t len,
                      const struct sockaddr_in *v4, const char *call)
{
    socklen_t rlen = len;
    const struct sockaddr *ra;
    enum pl_why why = PL_WHY_dest;
    enum pl_route r;
    int rc;

    if (k == PL_IN6_BAD)
        return PL_ROUTE_PASS;
    ra = pl_sock_route_addr(k, a, &rlen, v4);
    r = k == PL_IN6_NATIVE ? pl_sock_route_connect6(s->type, fd, a, len, &why)
                           : pl_sock_route_connect(s->type, fd, ra, rlen, &why);
    if (r == PL_ROUTE_PASS)
        return r;
    if (r != PL_ROUTE_KERNEL) {
        rc = pl_sock_accelerate(s, fd);
        if (rc < 0) {
            why = pl_sock_accel_why(rc);
            r = PL_ROUTE_KERNEL;
        }
    }
    if (r == PL_ROUTE_KERNEL)
        pl_sock_to_kernel(s, fd, why, call, a, len);
    return r;
}

int
pl_sock_kbind_any(struct pl_sock *s, int fd)
{
    struct sockaddr_in sin;
    struct sockaddr_in6 s6;
    socklen_t len = sizeof(s6);
    int rc;

    rt_lock();
    rc = stk_sock_getname(s->stk, (struct sockaddr *)&s6, &len, false);
    rt_unlock();
    memcpy(&sin, &s6, sizeof(sin)); /* the port is at the same place */
    if (rc < 0)
        return rc;
    if (sin.sin_port == 0)
        return -EINVAL;
    if (s->kfamily == AF_INET6) {
        memset(&s6, 0, sizeof(s6));
        s6.sin6_family = AF_INET6;
        s6.sin6_port = sin.sin_port;
        rc = libc_bind(fd, (struct sockaddr *)&s6, sizeof(s6));
    } else {
        sin.sin_addr.s_addr = htonl(INADDR_ANY);
        rc = libc_bind(fd, (struct sockaddr *)&sin, sizeof(sin));
    }
    if (rc < 0)
        return -errno;
    pl_sock_kside_on(s, fd);
    return 0;
}

int
pl_sock_accelerate(struct pl_sock *s, int fd)
{
    struct stk_sock *stk;
    int rc;

    /* On failure the runtime has logged one line naming the variable. */
    rc = rt_start();
    if (rc < 0) {
        BASE_DBG("fd", "fd %d: data path unavailable (%s), kernel socket", fd,
                 strerror(-rc));
        return -ENODEV;
    }
    rt_lock();
    if (s->kfamily == AF_INET6)
        atomic_store(&s->v6only, kernel_v6only(fd));
    rc = stk_sock_create(s->type, &stk);
    if (rc == 0 && s->kfamily == AF_INET6 &&
        (rc = stk_sock_set_inet6(stk, atomic_load(&s->v6only))) < 0)
        stk_sock_close(stk);
    if (rc == 0) {
        stk_sock_set_ctx(stk, s);
        for (int i = 0; i < s->nopts; i++)
            stk_sock_setsockopt(stk, s->opts[i].level, s->opts[i].name,
                                s->opts[i].val, s->opts[i].len);
        BASE_STAT_INC(sock_accel);
    }
    rt_unlock();
    if (rc < 0) {
        BASE_INFO("fd", "fd %d: no stack socket (%s), kernel fallback", fd,
                  strerror(-rc));
        return -ENOBUFS;
    }
    kernel_nonblock(fd, true);
    s->stk = stk;
    s->epoch = atomic_load(&pl_fork_epoch);
    atomic_store_explicit(&s->state, PL_SOCK_ACCEL, memory_order_release);
    return 0;
}

void
pl_sock_to_kernel(struct pl_sock *s, int fd, enum pl_why why, const char *call,
                  const struct sockaddr *a, socklen_t len)
{
    struct pl_fd *cur;
    bool was_accel = pl_sock_live(s);

    if (was_accel) {
        /* Other threads may be inside a call on s (a blocked UDP receive):
         * the state changes under the stack lock together with the close,
         * and every use of s->stk checks the state under that lock, so none
         * touches the freed stack socket (the pointer is left as it is:
         * readers without the lock never dereference it once the state
         * says KERNEL). */
        rt_lock();
        atomic_store_explicit(&s->state, PL_SOCK_KERNEL, memory_order_release);
        stk_sock_close(s->stk);
        rt_poll();
        rt_unlock();
        kernel_nonblock(fd, atomic_load(&s->nonblock));
    } else {
        atomic_store_explicit(&s->state, PL_SOCK_KERNEL, memory_order_release);
    }
    pl_why_note(fd, why, call, a, len);
    pl_ep_sock_to_kernel(s);
    /* Drop the entry if it is still this object (the common case without
     * dups); the caller holds a reference, so no destroy happens here. */
    cur = pl_fdt_get(fd);
    if (cur == &s->hdr)
        pl_fd_put(pl_fdt_exchange(fd, NULL));
    pl_fd_put(cur);
}

void
pl_sock_kfd_own(struct pl_sock *s, int fd)
{
    int k;

    if (atomic_load(&s->kfd) < 0) {
        k = rt_fd_dup_high(fd);
        if (k < 0)
            BASE_DBG("fd",
                     "fd %d: no descriptor above the base (%s): the "
                     "kernel side uses the application's number",
                     fd, strerror(-k));
        else
            atomic_store_explicit(&s->kfd, k, memory_order_release);
    }
}

void
pl_sock_kside_on(struct pl_sock *s, int fd)
{
    pl_sock_kfd_own(s, fd);
    atomic_store(&s->kside, true);
    pl_ep_sock_kside(s);
}

void
pl_sock_record_opt(struct pl_sock *s, int level, int name, const void *val,
                   socklen_t len)
{
    struct pl_opt *o = NULL;

    if (val == NULL || len > PL_OPT_VAL_MAX) {
        BASE_DBG("fd", "option %d/%d (len %u) not replayed", level, name,
                 (unsigned int)len);
        return;
    }
    for (int i = 0; i < s->nopts; i++)
        if (s->opts[i].level == level && s->opts[i].name == name)
            o = &s->opts[i];
    if (o == NULL && s->opts == NULL &&
        (s->opts = calloc(PL_OPT_MAX, sizeof(*s->opts))) == NULL) {
        BASE_WARN("fd",
                  "out of memory: option %d/%d is not replayed into the "
                  "stack socket, which keeps its default",
                  level, name);
        return;
    }
    if (o == NULL) {
        if (s->nopts == PL_OPT_MAX) {
            BASE_WARN("fd",
                      "more than %d socket options set before bind/connect: "
                      "option %d/%d is not replayed into the stack socket, "
                      "which keeps its default; set it again after "
                      "bind/connect if it matters",
                      PL_OPT_MAX, level, name);
            return;
        }
        o = &s->opts[s->nopts++];
    }
    o->level = level;
    o->name = name;
    o->len = len;
    memcpy(o->val, val, len);
}

int
pl_sock_set_nonblock(struct pl_sock *s, int fd, bool on)
{
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->nonblock, on);
    if (pl_sock_state(s) != PL_SOCK_ACCEL)
        kernel_nonblock(fd, on);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static bool
kernel_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};

    return libc_poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

uint32_t
pl_sock_events(struct pl_sock *s, int fd, uint32_t *gen)
{
    uint32_t ev;

    if (!pl_sock_live(s))
        return 0;
    rt_lock();
    if (pl_sock_state(s) != PL_SOCK_ACCEL) { /* moved to the kernel */
        rt_unlock();
        return 0;
    }
    ev = rt_sock_events(s->stk, gen);
    rt_unlock();
    if (!(ev & EPOLLIN) && atomic_load(&s->kside) &&
        kernel_readable(pl_sock_kfd(s, fd)))
        ev |= EPOLLIN | EPOLLRDNORM;
    return ev;
}

struct ready_arg {
    struct pl_sock *s;
    uint32_t want;
};

/* rt_block_until's condition for a socket call's wait: the event it waits
 * for (or an error or hang-up, which the retried call reports), or the
 * socket is no longer the stack's. Not for send: a write may need more
 * room than the EPOLLOUT mark promises, and would then retry in a loop. */
static bool
sock_ready(void *arg)
{
    const struct ready_arg *r = arg;

    if (pl_sock_state(r->s) != PL_SOCK_ACCEL)
        return true;
    return (stk_sock_events(r->s->stk, NULL) &
            (r->want | EPOLLERR | EPOLLHUP)) != 0;
}

int
pl_sock_wait(struct pl_sock *s, int fd, uint32_t want, int64_t deadline,
             enum rt_wait_kind kind, unsigned *sig0)
{
    struct pollfd pfd = {.fd = pl_sock_kfd(s, fd), .events = POLLIN};
    int n = ((want & EPOLLIN) && atomic_load(&s->kside)) ? 1 : 0;
    int ms = pl_ms_left(deadline);
    int rc;

    if (ms == 0)
        return -EAGAIN;
    rc = rt_block_until(kind, n ? &pfd : NULL, n, ms, NULL, *sig0,
                        kind == RT_WAIT_SEND ? NULL : sock_ready,
                        &(struct ready_arg){s, want});
    if (rc == -EINTR)
        *sig0 = rt_sig_count; /* that handler is spent if the call restarts */
    return rc < 0 ? rc : 0;
}

bool
pl_sock_restart(const struct pl_sock *s, bool send)
{
    struct sigaction sa;

    if (atomic_load(send ? &s->sndtimeo : &s->rcvtimeo) != 0)
        return false;
    for (int sig = 1; sig < NSIG; sig++) {
        if (libc_sigaction(sig, NULL, &sa) != 0)
            continue;
        if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN &&
            !(sa.sa_flags & SA_RESTART))
            return false;
    }
    return true;
}

int64_t
pl_sock_deadline(const struct pl_sock *s, bool send)
{
    int64_t t = atomic_load(send ? &s->sndtimeo : &s->rcvtimeo);

    return t > 0 ? pl_deadline(t) : -1;
}

int64_t
pl_deadline(int64_t timeout_ns)
{
    if (timeout_ns < 0)
        return -1;
    return (int64_t)base_now_ns() + timeout_ns;
}

int
pl_ms_left(int64_t deadline)
{
    int64_t left;

    if (deadline < 0)
        return -1;
    left = deadline - (int64_t)base_now_ns();
    if (left <= 0)
        return 0;
    left = (left + 999999) / 1000000;
    return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

ssize_t
pl_sock_run(struct pl_sock *s, pl_stk_op op, void *arg)
{
    ssize_t rc;

    rt_lock();
    if (pl_sock_state(s) != PL_SOCK_ACCEL) {
        rt_unlock();
        return PL_SOCK_MOVED;
    }
    rc = op(s->stk, arg);
    /* An event loop's call that did its work does not poll the port: its
     * next wait does (one poll per turn, not one per call), unless the
     * last poll is older than ACCEL_RX_INTERVAL_USEC (a turn through
     * thousands of ready sockets would leave the port's rings to fill). */
    if (rc != -EAGAIN && rt_tx_defer) {
        if (rt_poll_due())
            rt_poll();
        else
            rt_tx_kick();
    } else if (rt_poll() > 0 && rc == -EAGAIN) {
        rc = op(s->stk, arg);
        rt_poll();
    }
    rt_unlock();
    return rc;
}
