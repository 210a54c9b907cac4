/*
 * Mixed epoll instances (see epoll.h). The application's epoll fd stays a
 * plain kernel instance for its kernel fds; our sockets live in an
 * interest list scanned at wait time:
 *
 *  - ACCEL sockets report the stack's readiness (stk_sock_events) plus
 *    POLLIN of their kernel side; EPOLLET reports when the stack's event
 *    generation moved (or the kernel side signalled an edge) since the last
 *    report, EPOLLONESHOT disables the item after one report;
 *  - UNDECIDED sockets report their kernel socket's readiness.
 *
 * Each item is also registered (edge-triggered, ONESHOT stripped) in the
 * instance's private shadow epoll fd, which validates epoll_ctl exactly as
 * Linux and wakes waiters on kernel-side traffic. A wait checks both
 * sources without blocking, alternating which goes first, and otherwise
 * blocks in rt_block() on the application's epoll fd and the shadow fd
 * (or plain ppoll when the data path never started).
 *
 * The scan is O(items) per wait: correctness first; an O(ready) list fed
 * by the stack's notify callback is the planned optimisation.
 */
#include "epoll.h"
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

struct pl_ep_item {
    struct pl_epoll *ep;
    struct pl_sock *s; /* no reference: s unlinks itself before it dies */
    int fd;
    uint32_t events;
    epoll_data_t data;
    uint32_t last_gen;
    bool pending;  /* report current readiness once (ADD/MOD, kernel edge) */
    bool disabled; /* EPOLLONESHOT fired */
    struct pl_ep_item *next, *prev; /* circular list of the instance */
    struct pl_ep_item *s_next;      /* list of the socket */
};

struct pl_epoll {
    struct pl_fd hdr;
    int epfd;   /* last number the application used for it */
    int shadow; /* -1 until the first socket is added */
    struct pl_ep_item *head;
    int nitems;
    bool toggle;
};

static pthread_mutex_t ep_mu = PTHREAD_MUTEX_INITIALIZER;

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
    it->s_next = it->s->ep_items;
    it->s->ep_items = it;
}

/* Unlink it from its instance (not from the socket's list). */
static void
ep_unlink(struct pl_ep_item *it)
{
    struct pl_epoll *ep = it->ep;

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

static void
sock_unlink(struct pl_ep_item *it)
{
    struct pl_ep_item **pp = &it->s->ep_items;

    while (*pp != NULL && *pp != it)
        pp = &(*pp)->s_next;
    if (*pp != NULL)
        *pp = it->s_next;
}

static struct pl_ep_item *
ep_find(struct pl_epoll *ep, int fd, struct pl_sock *s)
{
    struct pl_ep_item *it = ep->head;

    if (it == NULL)
        return NULL;
    do {
        if (it->fd == fd && it->s == s)
            return it;
        it = it->next;
    } while (it != ep->head);
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
    rc = pl_fdt_install(epfd, &ep->hdr);
    pl_fd_put(&ep->hdr);
    return rc;
}

int
pl_ep_is_plain(const struct pl_epoll *ep)
{
    return __atomic_load_n(&ep->nitems, __ATOMIC_RELAXED) == 0;
}

int
pl_ep_ctl(struct pl_epoll *ep, int epfd, int op, int fd, struct epoll_event *ev)
{
    struct epoll_event kev = {.data.fd = fd};
    struct pl_ep_item *it;
    struct pl_sock *s;
    struct pl_fd *f;
    int rc = 0;

    ep->epfd = epfd;
    f = pl_fdt_get(fd);
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
    }
    /* A listener in an epoll set is served by this process (several
     * processes after fork: new connections come to those that wait). */
    if (op != EPOLL_CTL_DEL)
        pl_sock_serve(s, RT_SERVE_ON);
    else if (s->type == SOCK_STREAM)
        pl_sock_serve(s, RT_SERVE_OFF);
    pthread_mutex_lock(&ep_mu);
    if (ep->shadow < 0) {
        ep->shadow = libc_epoll_create1(EPOLL_CLOEXEC);
        if (ep->shadow < 0) {
            rc = -errno;
            goto out;
        }
    }
    if (libc_epoll_ctl(ep->shadow, op, fd, &kev) < 0) {
        rc = -errno;
        goto out;
    }
    it = ep_find(ep, fd, s);
    switch (op) {
    case EPOLL_CTL_ADD:
        if (it == NULL) {
            it = calloc(1, sizeof(*it));
            if (it == NULL) {
                libc_epoll_ctl(ep->shadow, EPOLL_CTL_DEL, fd, &kev);
                rc = -ENOMEM;
                goto out;
            }
            it->ep = ep;
            it->s = s;
            it->fd = fd;
            ep_link(ep, it);
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
        break;
    case EPOLL_CTL_DEL:
        if (it != NULL) {
            ep_unlink(it);
            sock_unlink(it);
            free(it);
        }
        break;
    }
out:
    pthread_mutex_unlock(&ep_mu);
    pl_fd_put(f);
    return rc;
}

/* Mark items whose kernel side signalled an edge. ep_mu held. */
static void
drain_shadow(struct pl_epoll *ep)
{
    struct epoll_event kev[64];
    struct pl_ep_item *it;
    int k;

    if (ep->shadow < 0)
        return;
    do {
        k = libc_epoll_wait(ep->shadow, kev, 64, 0);
        for (int i = 0; i < k; i++) {
            it = ep->head;
            if (it == NULL)
                break;
            do {
                if (it->fd == kev[i].data.fd)
                    it->pending = true;
                it = it->next;
            } while (it != ep->head);
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

/* Report ready items into out[0..max). ep_mu held. */
static int
scan_socks(struct pl_epoll *ep, struct epoll_event *out, int max)
{
    struct pl_ep_item *it, *first, *last = NULL;
    uint32_t ev, gen, ready;
    int n = 0;

    drain_shadow(ep);
    if (ep->head == NULL)
        return 0;
    if (rt_started()) {
        rt_lock();
        rt_poll();
        rt_unlock();
    }
    it = first = ep->head;
    do {
        struct pl_sock *s = it->s;

        if (it->disabled)
            goto next;
        gen = 0;
        if (pl_sock_live(s))
            ev = pl_sock_events(s, it->fd, &gen);
        else if (pl_sock_state(s) == PL_SOCK_UNDECIDED)
            ev = kernel_events(it->fd, it->events & ~FLAG_BITS);
        else
            ev = 0;
        ready = ev & (it->events | EPOLLERR | EPOLLHUP) & ~FLAG_BITS;
        if (ready == 0)
            goto next;
        if ((it->events & EPOLLET) && !it->pending && gen == it->last_gen)
            goto next;
        it->last_gen = gen;
        it->pending = false;
        if (it->events & EPOLLONESHOT)
            it->disabled = true;
        out[n].events = ready;
        out[n].data = it->data;
        n++;
        last = it;
    next:
        it = it->next;
    } while (it != first && n < max);
    /* Fairness: the next scan starts after the last item reported. */
    if (n == max && last != NULL)
        ep->head = last->next;
    return n;
}

static int
collect(struct pl_epoll *ep, int epfd, struct epoll_event *evs, int max)
{
    int n = 0, k;

    ep->toggle = !ep->toggle;
    if (ep->toggle) {
        pthread_mutex_lock(&ep_mu);
        n = scan_socks(ep, evs, max);
        pthread_mutex_unlock(&ep_mu);
        if (n < max) {
            k = libc_epoll_wait(epfd, evs + n, max - n, 0);
            if (k < 0)
                return n > 0 ? n : -errno;
            n += k;
        }
    } else {
        k = libc_epoll_wait(epfd, evs, max, 0);
        if (k < 0)
            return -errno;
        n = k;
        if (n < max) {
            pthread_mutex_lock(&ep_mu);
            n += scan_socks(ep, evs + n, max - n);
            pthread_mutex_unlock(&ep_mu);
        }
    }
    return n;
}

static void
mark_listeners(struct pl_epoll *ep, bool on)
{
    struct pl_ep_item *it;

    pthread_mutex_lock(&ep_mu);
    it = ep->head;
    if (it != NULL) {
        do {
            if (!it->disabled && (it->events & EPOLLIN) &&
                pl_sock_state(it->s) == PL_SOCK_ACCEL &&
                it->s->type == SOCK_STREAM && stk_sock_is_listening(it->s->stk))
                pl_sock_accept_wait(it->s, on, false);
            it = it->next;
        } while (it != ep->head);
    }
    pthread_mutex_unlock(&ep_mu);
}

int
pl_ep_wait(struct pl_epoll *ep, int epfd, struct epoll_event *evs, int max,
           int64_t timeout_ns, const sigset_t *mask)
{
    int64_t deadline = pl_deadline(timeout_ns);
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
            rc = rt_block(pfd, 2, ms, mask);
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
pl_ep_sock_gone(struct pl_sock *s)
{
    pthread_mutex_lock(&ep_mu);
    while (s->ep_items != NULL) {
        struct pl_ep_item *it = s->ep_items;

        s->ep_items = it->s_next;
        ep_unlink(it);
        free(it);
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

        s->ep_items = it->s_next;
        kev.events = it->disabled ? (it->events & EPOLLET) : it->events;
        kev.data = it->data;
        libc_epoll_ctl(it->ep->shadow, EPOLL_CTL_DEL, it->fd, &kev);
        if (libc_epoll_ctl(it->ep->epfd, EPOLL_CTL_ADD, it->fd, &kev) < 0)
            RT_WARN("ep", "fd %d lost its epoll registration (%s)", it->fd,
                    strerror(errno));
        ep_unlink(it);
        free(it);
    }
    pthread_mutex_unlock(&ep_mu);
}

void
pl_ep_atfork_child(void)
{
    pthread_mutex_init(&ep_mu, NULL);
}
