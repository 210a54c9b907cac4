/*
 * Mixed epoll instances (see epoll.h). The application's epoll fd stays a
 * plain kernel instance for its kernel fds; our sockets live in an
 * interest list of our own:
 *
 *  - ACCEL sockets report the stack's readiness (stk_sock_events) plus
 *    POLLIN of their kernel side; EPOLLET reports when the stack's event
 *    generation moved (or the kernel side signalled an edge) since the last
 *    report, EPOLLONESHOT disables the item after one report;
 *  - UNDECIDED sockets report their kernel socket's readiness.
 *
 * A wait looks only at the items on the instance's ready list, as Linux's
 * epoll does: the stack's notify callback (any change of a socket's state,
 * under rt_lock) queues the socket's items, and so do ADD/MOD and an edge
 * on the kernel side. An item that reported level-triggered readiness, and
 * every listener (connections another process moved out make it readable
 * without a local event), stay queued and are looked at again by the next
 * wait; an item found not ready leaves the list until its next event. So
 * a wait costs O(ready items), not O(items): nginx with thousands of idle
 * keep-alive connections pays nothing for them.
 *
 * An item whose socket has a kernel side (UNDECIDED, or kside) is also
 * registered (edge-triggered, ONESHOT stripped) in the instance's private
 * shadow epoll fd, which validates epoll_ctl exactly as Linux and wakes
 * waiters on kernel-side traffic; a socket that gains a kernel side later
 * has its items registered then (pl_ep_sock_kside). The others (accepted
 * and connected TCP sockets: the connection-per-request case) cost no
 * system call: our interest list answers EEXIST and ENOENT as Linux's
 * does. Every wait looks at the kernel side (the application's epoll fd
 * and the shadow: an epoll_wait with no timeout costs ~0.1 us), so a
 * kernel fd ready before the call is reported by it, as on Linux; with
 * ACCEL_EPOLL_KERNEL_USEC set, a wait that finds stack events looks at
 * most that often. A wait that finds nothing blocks in rt_block() on both
 * fds (or plain ppoll when the data path never started).
 *
 * Nesting: an instance inside another (epoll_ctl(outer, ADD, inner)) is
 * registered in the outer's kernel instance as on Linux (its errors:
 * EINVAL for itself, ELOOP for a cycle; the inner's kernel fds wake it)
 * and, for the inner's stack sockets, by an item of the outer's own list
 * that watches the inner (it->inner, on the inner's `watchers` list).
 * Every event queued on the inner's ready list (a socket's change, ADD,
 * MOD, a kernel edge) queues its watchers too, as Linux's ep_poll_callback
 * wakes the inner's poll queue; a watcher reports EPOLLIN while an item
 * of the inner is ready (a look at its ready list that takes nothing off
 * it), edge-triggered once per such event. poll() and select() on the
 * inner fd see the same (pl_ep_poll_ready). While any nesting exists the
 * one-load shortcut of pl_ep_sock_changed is off (an item of an inner set
 * nobody waits on stays queued, and its later events must still reach
 * the outer).
 *
 * Locks: the epoll lock (ep_mu) guards the interest lists and the items;
 * the ready lock (rd_mu) guards the ready lists, the items' `queued` flags
 * and the sockets' membership lists as the notify callback walks them. The
 * ready lock is a leaf: the notify callback takes it under rt_lock, and
 * nothing takes another lock while holding it. Order: s->mu -> ep_mu ->
 * rt_lock -> rd_mu.
 */
#include "epoll.h"
#include "clock.h"
#include "stk.h"

#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "libc.h"
#include "log.h"
#include "pl.h"
#include "rt.h"

#define EP_MAX_EVENTS ((int)(INT_MAX / sizeof(struct epoll_event)))
#define EXCL_OK_BITS                                                           \
    (EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLWAKEUP | EPOLLET |        \
     EPOLLEXCLUSIVE)
#define FLAG_BITS (EPOLLET | EPOLLONESHOT | EPOLLEXCLUSIVE | EPOLLWAKEUP)
#define EP_MAX_NESTS 4 /* Linux's: instances nested below the outermost */

struct pl_ep_item {
    struct pl_epoll *ep;
    struct pl_sock *s;      /* no reference: s unlinks itself before it dies */
    struct pl_epoll *inner; /* instead of s: the nested instance watched */
    struct pl_ep_item *w_next; /* the inner's watchers (rd_mu) */
    int fd;
    uint32_t events;
    epoll_data_t data;
    uint32_t last_gen;
    uint64_t scan; /* the instance's scan that last took it (ep_mu) */
    bool pending;  /* report current readiness once (ADD/MOD, kernel edge) */
    bool disabled; /* EPOLLONESHOT fired */
    bool queued;   /* on the instance's ready list (rd_mu) */
    bool kreg;     /* registered in the instance's shadow */
    struct pl_ep_item *next, *prev;         /* circular list of the instance */
    struct pl_ep_item *s_next;              /* list of the socket */
    struct pl_ep_item *r_next, *r_prev;     /* ready list (rd_mu) */
    struct pl_ep_item *l_next;              /* a wait's private copy (ep_mu) */
    struct pl_ep_item *lis_next, *lis_prev; /* the instance's listeners */
    bool on_lis;                            /* on that list (ep_mu) */
};

struct pl_epoll {
    struct pl_fd hdr;
    int epfd;   /* last number the application used for it */
    int shadow; /* -1 until the first socket is added */
    struct pl_ep_item *head;
    int nitems;
    bool toggle;
    uint64_t kpoll_ns;                  /* last look at the kernel side */
    struct pl_ep_item *r_head, *r_tail; /* ready list (rd_mu) */
    unsigned fork_epoch;                /* pl_fork_epoch at the last scan */
    uint64_t scan;                      /* scans so far (ep_mu) */
    /* Items whose socket listens (ep_mu): a blocking wait marks them as
     * waiting for connections, without a walk over every item (an nginx
     * worker holds thousands of connections and one or two listeners). */
    struct pl_ep_item *lis;
    /* Items of other instances watching this one (nesting; rd_mu), and
     * the events queued here since it was made (their edges). */
    struct pl_ep_item *watchers;
    uint32_t wgen;
};

static pthread_mutex_t ep_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rd_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int nested; /* watcher items in the process */

static void drain_shadow(struct pl_epoll *ep);
static bool is_listener(const struct pl_sock *s);

/* Put it on its instance's ready list. rd_mu held. */
static void
rd_queue(struct pl_ep_item *it)
{
    struct pl_epoll *ep = it->ep;

    if (it->queued)
        return;
    it->queued = true;
    it->r_next = NULL;
    it->r_prev = ep->r_tail;
    if (ep->r_tail != NULL)
        ep->r_tail->r_next = it;
    else
        ep->r_head = it;
    ep->r_tail = it;
}

/* Take it off its instance's ready list, in O(1): when 10000 clients
 * close at once, every one of their items is queued and nginx closes them
 * one by one (a walk of the list per close took 0.3-0.7 s of the worker's
 * time, the stall a new client saw right after). rd_mu held. */
static void
rd_remove(struct pl_ep_item *it)
{
    struct pl_epoll *ep = it->ep;

    if (!it->queued)
        return;
    if (it->r_prev != NULL)
        it->r_prev->r_next = it->r_next;
    else
        ep->r_head = it->r_next;
    if (it->r_next != NULL)
        it->r_next->r_prev = it->r_prev;
    else
        ep->r_tail = it->r_prev;
    it->queued = false;
}

/* An event for it: on its ready list, and every instance watching its
 * instance is told (Linux wakes the instance's poll queue at each event,
 * queued already or not). depth: Linux's limit of nested instances.
 * rd_mu held. */
static void
rd_notify(struct pl_ep_item *it, int depth)
{
    struct pl_epoll *ep = it->ep;

    rd_queue(it);
    if (ep->watchers == NULL || depth > EP_MAX_NESTS)
        return;
    ep->wgen++;
    for (struct pl_ep_item *w = ep->watchers; w != NULL; w = w->w_next)
        rd_notify(w, depth + 1);
}

static void
queue_item(struct pl_ep_item *it)
{
    pthread_mutex_lock(&rd_mu);
    rd_notify(it, 0);
    pthread_mutex_unlock(&rd_mu);
}

/* Called for every change of the socket's stack state (several per
 * segment): while its items wait on their ready lists, it costs one load.
 * A wait that takes an item clears the flag before it looks at the
 * socket's state (under rt_lock, after any change a skipped call saw). */
void
pl_ep_sock_changed(struct pl_sock *s)
{
    if ((atomic_load_explicit(&s->ep_queued, memory_order_relaxed) &&
         atomic_load_explicit(&nested, memory_order_relaxed) == 0) ||
        __atomic_load_n(&s->ep_items, __ATOMIC_RELAXED) == NULL)
        return;
    pthread_mutex_lock(&rd_mu);
    for (struct pl_ep_item *it = s->ep_items; it != NULL; it = it->s_next)
        rd_notify(it, 0);
    atomic_store_explicit(&s->ep_queued, true, memory_order_relaxed);
    pthread_mutex_unlock(&rd_mu);
}

static void
ep_link(struct pl_epoll *ep, struct pl_ep_item *it)
{
    if (ep->head == NULL) {
        it->next = it->prev = it;
        ep->head = it;
    } else {
        it->next = ep->head;
        it->prev = ep->head->prev;
        it->prev->next = it;
        ep->head->prev = it;
    }
    ep->nitems++;
    pthread_mutex_lock(&rd_mu);
    if (it->inner != NULL) {
        it->w_next = it->inner->watchers;
        it->inner->watchers = it;
        atomic_fetch_add(&nested, 1);
    } else {
        it->s_next = it->s->ep_items;
        __atomic_store_n(&it->s->ep_items, it, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&rd_mu);
}

/* On or off its instance's list of listeners. ep_mu held. */
static void
lis_add(struct pl_ep_item *it)
{
    struct pl_epoll *ep = it->ep;

    if (it->on_lis)
        return;
    it->lis_prev = NULL;
    it->lis_next = ep->lis;
    if (ep->lis != NULL)
        ep->lis->lis_prev = it;
    ep->lis = it;
    it->on_lis = true;
}

static void
lis_del(struct pl_ep_item *it)
{
    if (!it->on_lis)
        return;
    if (it->lis_prev != NULL)
        it->lis_prev->lis_next = it->lis_next;
    else
        it->ep->lis = it->lis_next;
    if (it->lis_next != NULL)
        it->lis_next->lis_prev = it->lis_prev;
    it->on_lis = false;
}

/* Unlink it from its instance (not from the socket's list). */
static void
ep_unlink(struct pl_ep_item *it)
{
    struct pl_epoll *ep = it->ep;

    lis_del(it);
    pthread_mutex_lock(&rd_mu);
    rd_remove(it);
    pthread_mutex_unlock(&rd_mu);
    if (it->next == it) {
        ep->head = NULL;
    } else {
        it->prev->next = it->next;
        it->next->prev = it->prev;
        if (ep->head == it)
            ep->head = it->next;
    }
    ep->nitems--;
}

/* Unlink it from its socket's list (a watcher: its inner's). */
static void
sock_unlink(struct pl_ep_item *it)
{
    struct pl_ep_item **pp;

    pthread_mutex_lock(&rd_mu);
    if (it->inner != NULL) {
        for (pp = &it->inner->watchers; *pp != NULL && *pp != it;)
            pp = &(*pp)->w_next;
        if (*pp != NULL) {
            *pp = it->w_next;
            atomic_fetch_sub(&nested, 1);
        }
    } else {
        for (pp = &it->s->ep_items; *pp != NULL && *pp != it;)
            pp = &(*pp)->s_next;
        if (*pp != NULL)
            __atomic_store_n(pp, it->s_next, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&rd_mu);
}

/* The item of (fd, s) in ep: looked up in the socket's memberships (one or
 * two), not in the instance's list. ep_mu held. */
static struct pl_ep_item *
ep_find(struct pl_epoll *ep, int fd, struct pl_sock *s)
{
    for (struct pl_ep_item *it = s->ep_items; it != NULL; it = it->s_next)
        if (it->ep == ep && it->fd == fd)
            return it;
    return NULL;
}

static void
ep_destroy(struct pl_fd *f)
{
    struct pl_epoll *ep = (struct pl_epoll *)f;

    pthread_mutex_lock(&ep_mu);
    while (ep->head != NULL) {
        struct pl_ep_item *it = ep->head;

        ep_unlink(it);
        sock_unlink(it);
        free(it);
    }
    /* Closed for good: it leaves the instances it was nested in, as Linux
     * (eventpoll_release). */
    while (ep->watchers != NULL) {
        struct pl_ep_item *w = ep->watchers;

        ep_unlink(w);
        sock_unlink(w);
        free(w);
    }
    pthread_mutex_unlock(&ep_mu);
    if (ep->shadow >= 0)
        libc_close(ep->shadow);
    free(ep);
}

int
pl_ep_track(int epfd)
{
    struct pl_epoll *ep = calloc(1, sizeof(*ep));
    int rc;

    if (ep == NULL)
        return -ENOMEM;
    pl_fd_init(&ep->hdr, PL_FD_EPOLL, ep_destroy);
    ep->epfd = epfd;
    ep->shadow = -1;
    ep->fork_epoch = atomic_load(&pl_fork_epoch);
    rc = pl_fdt_install(epfd, &ep->hdr);
    pl_fd_put(&ep->hdr);
    return rc;
}

int
pl_ep_is_plain(const struct pl_epoll *ep)
{
    return __atomic_load_n(&ep->nitems, __ATOMIC_RELAXED) == 0;
}

/* op on the shadow (created on first use). ep_mu held. */
static int
shadow_ctl(struct pl_epoll *ep, int op, int fd, struct epoll_event *kev)
{
    if (ep->shadow < 0) {
        ep->shadow = libc_epoll_create1(EPOLL_CLOEXEC);
        if (ep->shadow < 0)
            return -errno;
    }
    return libc_epoll_ctl(ep->shadow, op, fd, kev) < 0 ? -errno : 0;
}

/* The item of ep watching the nested instance `in` as fd. ep_mu held. */
static struct pl_ep_item *
watcher_find(struct pl_epoll *ep, int fd, struct pl_epoll *in)
{
    struct pl_ep_item *w;

    pthread_mutex_lock(&rd_mu);
    for (w = in->watchers; w != NULL; w = w->w_next)
        if (w->ep == ep && w->fd == fd)
            break;
    pthread_mutex_unlock(&rd_mu);
    return w;
}

/* epoll_ctl(epfd, op, fd) where fd is another instance, `in`: the kernel
 * registration first (Linux's checks: itself, cycles, depth; and the
 * inner's kernel fds), then ep's item watching in's stack sockets. */
static int
nest_ctl(struct pl_epoll *ep, int epfd, int op, int fd, struct pl_epoll *in,
         struct epoll_event *ev)
{
    struct pl_ep_item *w;
    int rc = (int)pl_sysret(libc_epoll_ctl(epfd, op, fd, ev));

    if (rc < 0)
        return rc;
    pthread_mutex_lock(&ep_mu);
    w = watcher_find(ep, fd, in);
    switch (op) {
    case EPOLL_CTL_ADD:
        if (w == NULL) {
            w = calloc(1, sizeof(*w));
            if (w == NULL) {
                libc_epoll_ctl(epfd, EPOLL_CTL_DEL, fd, ev);
                rc = -ENOMEM;
                break;
            }
            w->ep = ep;
            w->inner = in;
            w->fd = fd;
            ep_link(ep, w);
        }
        /* fall through */
    case EPOLL_CTL_MOD:
        if (w == NULL)
            break;
        w->events = ev->events;
        w->data = ev->data;
        w->pending = true;
        w->disabled = false;
        w->last_gen = in->wgen;
        queue_item(w);
        break;
    case EPOLL_CTL_DEL:
        if (w != NULL) {
            ep_unlink(w);
            sock_unlink(w);
            free(w);
        }
        break;
    }
    pthread_mutex_unlock(&ep_mu);
    return rc;
}

int
pl_ep_ctl(struct pl_epoll *ep, int epfd, int op, int fd, struct epoll_event *ev)
{
    struct epoll_event kev = {.data.fd = fd};
    struct pl_ep_item *it;
    struct pl_sock *s;
    struct pl_fd *f;
    bool kreg;
    int rc = 0;

    ep->epfd = epfd;
    f = pl_fdt_get(fd);
    if (pl_epoll_of(f) != NULL && pl_epoll_of(f) != ep) {
        rc = nest_ctl(ep, epfd, op, fd, pl_epoll_of(f), ev);
        pl_fd_put(f);
        return rc;
    }
    s = pl_sock_of(f);
    if (s == NULL || pl_sock_state(s) == PL_SOCK_KERNEL) {
        pl_fd_put(f);
        return (int)pl_sysret(libc_epoll_ctl(epfd, op, fd, ev));
    }
    if (pl_sock_state(s) == PL_SOCK_ACCEL && !pl_sock_live(s)) {
        pl_fd_put(f);
        return -EBADF;
    }
    if (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD) {
        if (ev == NULL) {
            pl_fd_put(f);
            return -EFAULT;
        }
        if ((ev->events & EPOLLEXCLUSIVE) &&
            (op == EPOLL_CTL_MOD || (ev->events & ~EXCL_OK_BITS))) {
            pl_fd_put(f);
            return -EINVAL;
        }
        kev.events = (ev->events | EPOLLET) & ~EPOLLONESHOT;
    } else if (op != EPOLL_CTL_DEL) {
        pl_fd_put(f);
        return ev == NULL ? -EFAULT : -EINVAL; /* Linux copies ev first */
    }
    /* A listener in an epoll set is served by this process (several
     * processes after fork: new connections come to those that wait). */
    if (op != EPOLL_CTL_DEL)
        pl_sock_serve(s, RT_SERVE_ON);
    else if (s->type == SOCK_STREAM)
        pl_sock_serve(s, RT_SERVE_OFF);
    pthread_mutex_lock(&ep_mu);
    it = ep_find(ep, fd, s);
    /* ep_modify is never reached for an exclusive registration */
    if (op == EPOLL_CTL_MOD && it != NULL && (it->events & EPOLLEXCLUSIVE)) {
        rc = -EINVAL;
        goto out;
    }
    kreg = it != NULL ? it->kreg
                      : (pl_sock_state(s) == PL_SOCK_UNDECIDED ||
                         atomic_load(&s->kside));
    if (kreg) {
        rc = shadow_ctl(ep, op, fd, &kev);
        if (rc < 0)
            goto out;
    } else if (op == EPOLL_CTL_ADD && it != NULL) {
        rc = -EEXIST;
        goto out;
    }
    switch (op) {
    case EPOLL_CTL_ADD:
        if (it == NULL) {
            it = calloc(1, sizeof(*it));
            if (it == NULL) {
                if (kreg)
                    libc_epoll_ctl(ep->shadow, EPOLL_CTL_DEL, fd, &kev);
                rc = -ENOMEM;
                goto out;
            }
            it->ep = ep;
            it->s = s;
            it->fd = fd;
            it->kreg = kreg;
            ep_link(ep, it);
            if (is_listener(s))
                lis_add(it);
        }
        /* fall through */
    case EPOLL_CTL_MOD:
        if (it == NULL) {
            rc = -ENOENT;
            break;
        }
        it->events = ev->events;
        it->data = ev->data;
        it->pending = true;
        it->disabled = false;
        queue_item(it);
        /* The edge the shadow reports for this (re)arming is the one
         * `pending` stands for: take it now, not at a later wait. */
        if (it->kreg)
            drain_shadow(ep);
        break;
    case EPOLL_CTL_DEL:
        if (it == NULL) {
            rc = -ENOENT;
            break;
        }
        ep_unlink(it);
        sock_unlink(it);
        free(it);
        break;
    }
out:
    pthread_mutex_unlock(&ep_mu);
    pl_fd_put(f);
    return rc;
}

/* Queue the items whose kernel side signalled an edge. ep_mu held. */
static void
drain_shadow(struct pl_epoll *ep)
{
    struct epoll_event kev[64];
    int k;

    if (ep->shadow < 0)
        return;
    do {
        k = libc_epoll_wait(ep->shadow, kev, 64, 0);
        for (int i = 0; i < k; i++) {
            struct pl_fd *f = pl_fdt_get(kev[i].data.fd);
            struct pl_sock *s = pl_sock_of(f);
            struct pl_ep_item *it =
                s != NULL ? ep_find(ep, kev[i].data.fd, s) : NULL;

            /* The kernel socket of an accelerated socket matters only
             * for its kernel side's POLLIN (kside); its other edges (a
             * MOD re-arming the shadow reports it writable) are not ours
             * to report. */
            if (it != NULL &&
                (pl_sock_state(s) == PL_SOCK_UNDECIDED ||
                 ((kev[i].events & EPOLLIN) && atomic_load(&s->kside)))) {
                it->pending = true;
                queue_item(it);
            }
            pl_fd_put(f);
        }
    } while (k == 64);
}

static uint32_t
kernel_events(int fd, uint32_t want)
{
    struct pollfd p = {.fd = fd, .events = (short)(want & 0xffff)};

    if (libc_poll(&p, 1, 0) != 1)
        return 0;
    return (uint32_t)(unsigned short)p.revents;
}

static bool
is_listener(const struct pl_sock *s)
{
    return s->type == SOCK_STREAM && pl_sock_state(s) == PL_SOCK_ACCEL &&
           stk_sock_is_listening(s->stk);
}

/* A fork since the last wait: every connection the fork copied is frozen
 * (stack/fork.c) and its segments are held until a process uses it, so
 * none of them raises an event. A wait is a use: queue every item, and
 * the scan claims (pl_sock_live) what this process waits on, replaying
 * what arrived meanwhile. A Redis snapshot child or a system() child
 * never touches the parent's connections; the parent's next epoll_wait
 * takes them back. ep_mu held. */
static void
requeue_after_fork(struct pl_epoll *ep)
{
    unsigned cur = atomic_load_explicit(&pl_fork_epoch, memory_order_relaxed);
    struct pl_ep_item *it = ep->head;

    if (ep->fork_epoch == cur)
        return;
    ep->fork_epoch = cur;
    if (it == NULL)
        return;
    pthread_mutex_lock(&rd_mu);
    do {
        rd_queue(it);
        it = it->next;
    } while (it != ep->head);
    pthread_mutex_unlock(&rd_mu);
}

/* Take up to k items from the head of ep's ready list, linked by l_next:
 * a notify from now on queues an item anew. It stops at an item this scan
 * already took (a notify queued it again meanwhile: the next wait looks at
 * it, so no wait reports an item twice). The rest of the list stays as it
 * is: with thousands of ready items (10000 clients) and nginx's 512 events
 * per wait, taking and re-queueing the whole list at every wait was 14 %
 * of the worker's time. ep_mu held. */
static struct pl_ep_item *
take_some(struct pl_epoll *ep, int k, uint64_t scan)
{
    struct pl_ep_item *list = NULL, **tail = &list, *it;

    pthread_mutex_lock(&rd_mu);
    while (k-- > 0 && (it = ep->r_head) != NULL && it->scan != scan) {
        rd_remove(it);
        if (it->s != NULL)
            atomic_store_explicit(&it->s->ep_queued, false,
                                  memory_order_relaxed);
        it->scan = scan;
        *tail = it;
        tail = &it->l_next;
    }
    *tail = NULL;
    pthread_mutex_unlock(&rd_mu);
    return list;
}

static bool inner_ready(struct pl_epoll *ep, int depth);

/* What the item's file reports now (*gen: its event generation, for
 * EPOLLET), before the item's own mask. ep_mu held. */
static uint32_t
item_events(struct pl_ep_item *it, uint32_t *gen, int depth)
{
    struct pl_sock *s = it->s;

    *gen = 0;
    if (it->inner != NULL) {
        /* The nested instance: EPOLLIN while one of its stack items is
         * ready. Level-triggered, its kernel side is the outer kernel
         * instance's to report (it is registered there). */
        *gen = it->inner->wgen;
        if (!(it->events & EPOLLET) &&
            (kernel_events(it->inner->epfd, EPOLLIN) & EPOLLIN))
            return 0;
        return depth < EP_MAX_NESTS && inner_ready(it->inner, depth + 1)
                   ? EPOLLIN
                   : 0;
    }
    if (pl_sock_live(s))
        return pl_sock_events(s, it->fd, gen);
    if (pl_sock_state(s) == PL_SOCK_UNDECIDED)
        return kernel_events(it->fd, it->events & ~FLAG_BITS);
    return 0;
}

/* Would the item report now? (Nothing changes: a look from outside.) */
static bool
item_ready(struct pl_ep_item *it, int depth)
{
    uint32_t gen, ev;

    if (it->disabled)
        return false;
    ev = item_events(it, &gen, depth);
    if ((ev & (it->events | EPOLLERR | EPOLLHUP) & ~FLAG_BITS) == 0)
        return false;
    return !(it->events & EPOLLET) || it->pending || gen != it->last_gen;
}

/* Does an item on ep's ready list report now (Linux's
 * ep_read_events_proc, for poll on an epoll fd)? The list stays as it is.
 * ep_mu held. */
static bool
inner_ready(struct pl_epoll *ep, int depth)
{
    struct pl_ep_item **v, *it;
    size_t n = 0, cap = 0;
    bool ready = false;

    pthread_mutex_lock(&rd_mu);
    for (it = ep->r_head; it != NULL; it = it->r_next)
        cap++;
    v = cap != 0 ? malloc(cap * sizeof(*v)) : NULL;
    for (it = ep->r_head; v != NULL && it != NULL; it = it->r_next)
        v[n++] = it;
    pthread_mutex_unlock(&rd_mu);
    /* The items stay: unlinking and freeing one takes ep_mu. */
    for (size_t i = 0; i < n && !ready; i++)
        ready = item_ready(v[i], depth);
    free(v);
    return ready;
}

bool
pl_ep_poll_ready(struct pl_epoll *ep)
{
    bool ready;

    pthread_mutex_lock(&ep_mu);
    if (rt_started()) {
        rt_lock();
        rt_poll();
        rt_unlock();
    }
    ready = inner_ready(ep, 0);
    pthread_mutex_unlock(&ep_mu);
    return ready;
}

/* Look at one item taken from the ready list: true (and *out filled) if
 * it reports; *keep if it goes back on the list (a level-triggered item
 * that reported, a listener). ep_mu held. */
static bool
look(struct pl_ep_item *it, struct epoll_event *out, bool *keep)
{
    uint32_t ev, gen, ready;

    *keep = false;
    if (it->disabled)
        return false;
    ev = item_events(it, &gen, 0);
    *keep = it->s != NULL && is_listener(it->s);
    ready = ev & (it->events | EPOLLERR | EPOLLHUP) & ~FLAG_BITS;
    if (ready == 0)
        return false;
    if ((it->events & EPOLLET) && !it->pending && gen == it->last_gen)
        return false;
    it->last_gen = gen;
    it->pending = false;
    if (it->events & EPOLLONESHOT)
        it->disabled = true;
    else if (!(it->events & EPOLLET))
        *keep = true; /* level-triggered: still ready until consumed */
    out->events = ready;
    out->data = it->data;
    return true;
}

/* Report the ready items of the ready list into out[0..max); with kernel,
 * look at the kernel side first. ep_mu held. */
static int
scan_socks(struct pl_epoll *ep, struct epoll_event *out, int max, bool kernel)
{
    struct pl_ep_item *it, *next, *list, *again = NULL, **again_tail = &again;
    uint64_t scan;
    bool keep;
    int n = 0;

    if (kernel)
        drain_shadow(ep);
    if (ep->head == NULL)
        return 0;
    requeue_after_fork(ep);
    if (rt_started()) {
        rt_lock();
        rt_poll();
        rt_unlock();
    }
    scan = ++ep->scan;
    /* take_some hands out at most max - n items, each reports at most once */
    while (n < max && (list = take_some(ep, max - n, scan)) != NULL) {
        for (it = list; it != NULL; it = next) {
            next = it->l_next;
            if (look(it, &out[n], &keep))
                n++;
            if (keep) {
                *again_tail = it;
                again_tail = &it->l_next;
            }
        }
    }
    *again_tail = NULL;
    if (again != NULL) {
        pthread_mutex_lock(&rd_mu);
        for (it = again; it != NULL; it = it->l_next)
            rd_queue(it);
        pthread_mutex_unlock(&rd_mu);
    }
    return n;
}

/* The kernel side is due: every wait, unless ACCEL_EPOLL_KERNEL_USEC
 * allows skipping it for a while (the data path must be running: until
 * then nothing else reports). */
static bool
kernel_due(const struct pl_epoll *ep, uint64_t now)
{
    uint64_t every = (uint64_t)base_cfg.epoll_kernel_usec * 1000;

    return every == 0 || !rt_started() || now - ep->kpoll_ns >= every;
}

static int
collect(struct pl_epoll *ep, int epfd, struct epoll_event *evs, int max)
{
    uint64_t now = base_now_ns();
    bool kernel = kernel_due(ep, now);
    int n = 0, k;

    for (;;) {
        /* Alternate which side goes first, so neither starves. */
        ep->toggle = !ep->toggle;
        if (kernel && ep->toggle) {
            k = libc_epoll_wait(epfd, evs, max, 0);
            if (k < 0)
                return -errno;
            n = k;
        }
        if (n < max) {
            pthread_mutex_lock(&ep_mu);
            n += scan_socks(ep, evs + n, max - n, kernel);
            pthread_mutex_unlock(&ep_mu);
        }
        if (kernel && !ep->toggle && n < max) {
            k = libc_epoll_wait(epfd, evs + n, max - n, 0);
            if (k < 0)
                return n > 0 ? n : -errno;
            n += k;
        }
        if (kernel)
            ep->kpoll_ns = now;
        if (n > 0 || kernel)
            return n;
        kernel = true; /* no stack event: look at the kernel side now */
    }
}

static void
mark_listeners(struct pl_epoll *ep, bool on)
{
    pthread_mutex_lock(&ep_mu);
    for (struct pl_ep_item *it = ep->lis; it != NULL; it = it->lis_next)
        if (!it->disabled && (it->events & EPOLLIN) && is_listener(it->s))
            pl_sock_accept_wait(it->s, on, false);
    pthread_mutex_unlock(&ep_mu);
}

int
pl_ep_wait(struct pl_epoll *ep, int epfd, struct epoll_event *evs, int max,
           int64_t timeout_ns, const sigset_t *mask)
{
    int64_t deadline = pl_deadline(timeout_ns);
    unsigned sig0 = rt_sig_count; /* handlers that run from here on count */
    struct pollfd pfd[2];
    struct timespec ts;
    int n, ms, rc;

    if (max <= 0 || max > EP_MAX_EVENTS)
        return -EINVAL;
    if (evs == NULL)
        return -EFAULT;
    ep->epfd = epfd;
    pl_loop_turn();
    for (;;) {
        n = collect(ep, epfd, evs, max);
        if (n != 0)
            return n;
        ms = pl_ms_left(deadline);
        if (ms == 0)
            return 0;
        pfd[0] = (struct pollfd){.fd = epfd, .events = POLLIN};
        pfd[1] = (struct pollfd){.fd = ep->shadow, .events = POLLIN};
        if (rt_started()) {
            /* Listeners in the set: this process waits for connections. */
            mark_listeners(ep, true);
            rc = rt_block(RT_WAIT_EPOLL, pfd, 2, ms, mask, sig0);
            mark_listeners(ep, false);
        } else {
            ts.tv_sec = ms / 1000;
            ts.tv_nsec = (long)(ms % 1000) * 1000000;
            rc = (int)pl_sysret(libc_ppoll(pfd, 2, ms < 0 ? NULL : &ts, mask));
        }
        if (rc == -EINTR)
            return -EINTR;
    }
}

void
pl_ep_sock_listening(struct pl_sock *s)
{
    pthread_mutex_lock(&ep_mu);
    for (struct pl_ep_item *it = s->ep_items; it != NULL; it = it->s_next)
        lis_add(it);
    pthread_mutex_unlock(&ep_mu);
}

void
pl_ep_sock_gone(struct pl_sock *s)
{
    pthread_mutex_lock(&ep_mu);
    while (s->ep_items != NULL) {
        struct pl_ep_item *it = s->ep_items;

        ep_unlink(it);
        sock_unlink(it);
        free(it);
    }
    pthread_mutex_unlock(&ep_mu);
}

void
pl_ep_sock_kside(struct pl_sock *s)
{
    struct epoll_event kev;
    int rc;

    pthread_mutex_lock(&ep_mu);
    for (struct pl_ep_item *it = s->ep_items; it != NULL; it = it->s_next) {
        if (it->kreg)
            continue;
        kev.events = (it->events | EPOLLET) & ~EPOLLONESHOT;
        kev.data.fd = it->fd;
        rc = shadow_ctl(it->ep, EPOLL_CTL_ADD, it->fd, &kev);
        if (rc == 0)
            it->kreg = true;
        else
            BASE_WARN("ep",
                      "fd %d: its kernel side cannot join the epoll set (%s): "
                      "kernel-side traffic is seen only at the next stack "
                      "event; if this repeats, free memory or raise "
                      "fs.epoll.max_user_watches",
                      it->fd, strerror(-rc));
    }
    pthread_mutex_unlock(&ep_mu);
}

void
pl_ep_sock_to_kernel(struct pl_sock *s)
{
    struct epoll_event kev;

    pthread_mutex_lock(&ep_mu);
    while (s->ep_items != NULL) {
        struct pl_ep_item *it = s->ep_items;

        sock_unlink(it);
        kev.events = it->disabled ? (it->events & EPOLLET) : it->events;
        kev.data = it->data;
        if (it->kreg)
            libc_epoll_ctl(it->ep->shadow, EPOLL_CTL_DEL, it->fd, &kev);
        if (libc_epoll_ctl(it->ep->epfd, EPOLL_CTL_ADD, it->fd, &kev) < 0)
            BASE_WARN("ep",
                      "fd %d lost its epoll registration moving to the "
                      "kernel (%s): epoll_wait no longer reports it; free "
                      "memory or raise fs.epoll.max_user_watches",
                      it->fd, strerror(errno));
        ep_unlink(it);
        free(it);
    }
    pthread_mutex_unlock(&ep_mu);
}

void
pl_ep_atfork_child(void)
{
    pthread_mutex_init(&ep_mu, NULL);
    pthread_mutex_init(&rd_mu, NULL);
}
