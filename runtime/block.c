/*
 * Blocking waits. rt_block() first spins for the budget of its call kind
 * (ACCEL_POLL_USEC_RECV, _SEND, _ACCEPT, _CONNECT, _EPOLL, _POLL, _SELECT,
 * each ACCEL_POLL_USEC unless set; or, right after traffic,
 * ACCEL_SPIN_AFTER_RX_USEC if longer), polling the
 * port under the stack lock (and, every SPIN_FD_CHECK turns, the caller's
 * kernel fds with a zero timeout). A signal handler that runs ends the
 * wait with EINTR, as in the kernel: while every handler is counted by
 * preload's trampoline (rt_sig_counted), the spin watches rt_sig_count;
 * otherwise it runs with signals blocked and looks for pending ones every
 * SPIN_FD_CHECK turns. Then it sleeps in the kernel with a raw
 * ppoll system call (libaccel.so interposes ppoll) on: the port's rx wait
 * fds, this thread's own wakeup eventfd and the caller's fds, the timeout
 * cut to the next lwIP timer. The port's wait fds are the AF_XDP/AF_PACKET
 * sockets the PMD opened (POLLIN while its rx ring holds frames), found by
 * scanning the process's fds around port start-up and by the notes preload
 * sends through rt_note_port_socket(); for memif, the rx queue's interrupt
 * eventfd, armed before the sleep; with neither, sleeps are cut to 1 ms.
 *
 * Wakeups: each sleeping thread owns an eventfd in a slot table. rt_wakeup()
 * bumps a generation counter and writes the eventfd of every slot marked
 * sleeping, so it costs one atomic load when nobody sleeps. A sleeper marks
 * its slot, then re-reads the generation before it sleeps, so a wakeup is
 * never lost between its last check and the ppoll. Each thread drains only
 * its own eventfd, so no thread can eat another's wakeup.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_pause.h>

#include "clock.h"
#include "impair.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "stats.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

#define SPIN_FD_CHECK 64
#define MAX_SLEEPERS 64
#define STACK_PFDS 64
/* Without an rx wait fd (memif in DPDK 22.11 has no rx interrupt), a
 * sleeper naps: NAP_MIN_NS after traffic, doubling while idle up to
 * NAP_MAX_NS, so a ping-pong stays fast and an idle process stays cheap.
 * A napping thread's timer slack is cut to NAP_SLACK_NS: with Linux's
 * default 50 us, every 50 us nap lasted 100 us, and a pipelined load
 * whose two ends take turns going idle (redis-benchmark -P 16 against
 * redis-server over memif) ran at 1.2M req/s instead of 2.0M. */
#define NAP_MIN_NS 50000
#define NAP_MAX_NS 1000000
#define NAP_SLACK_NS 1000UL
static __thread int64_t nap_ns = NAP_MIN_NS;
static __thread bool nap_slack_set;

struct sleeper_slot {
    _Atomic int fd;       /* eventfd of the owning thread, -1 if free */
    _Atomic int sleeping; /* 1 while the owner may be inside ppoll */
};

static struct sleeper_slot slots[MAX_SLEEPERS];
static _Atomic uint64_t wake_gen;
_Atomic int rt__sleepers;
/* Threads inside rt_block (spinning or sleeping): with none, a wakeup has
 * nobody to tell and costs one load (no locked add on the hot path). */
static _Atomic int waiters;

static pthread_once_t slots_once = PTHREAD_ONCE_INIT;
static bool slots_ready; /* slots_init ran: the fds below are real */
static pthread_key_t slot_key;
static __thread int my_slot = -1;

/* ---- this thread's wakeup eventfd --------------------------------------- */

static void
slot_release(void *arg)
{
    int slot = (int)(intptr_t)arg - 1;
    int fd;

    if (slot < 0 || slot >= MAX_SLEEPERS)
        return;
    fd = atomic_exchange(&slots[slot].fd, -1);
    if (fd >= 0)
        syscall(SYS_close, fd);
}

static void
slots_init(void)
{
    for (int i = 0; i < MAX_SLEEPERS; i++)
        atomic_store(&slots[i].fd, -1);
    pthread_key_create(&slot_key, slot_release);
    slots_ready = true;
}

/* The calling thread's slot, created on first use; -1 if none is free. */
static int
my_sleeper_slot(void)
{
    long fd;

    if (my_slot >= 0)
        return my_slot;
    pthread_once(&slots_once, slots_init);
    fd = syscall(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0)
        return -1;
    /* Keep it away from the low numbers applications use and close. */
    fd = rt__fd_move_high((int)fd);
    for (int i = 0; i < MAX_SLEEPERS; i++) {
        int expect = -1;
        if (atomic_compare_exchange_strong(&slots[i].fd, &expect, (int)fd)) {
            my_slot = i;
            pthread_setspecific(slot_key, (void *)(intptr_t)(i + 1));
            return i;
        }
    }
    syscall(SYS_close, (int)fd);
    return -1;
}

void
rt_wakeup(void)
{
    uint64_t one = 1;

    if (atomic_load(&waiters) == 0)
        return;
    atomic_fetch_add(&wake_gen, 1);
    if (atomic_load(&rt__sleepers) == 0)
        return;
    for (int i = 0; i < MAX_SLEEPERS; i++) {
        if (atomic_load(&slots[i].sleeping)) {
            int fd = atomic_load(&slots[i].fd);
            if (fd >= 0)
                syscall(SYS_write, fd, &one, sizeof(one));
        }
    }
}

/* ---- the port's wait fds ------------------------------------------------- */

#define MAX_NOTES 16
static int notes[MAX_NOTES];
static int nnotes;
static bool scanning;
static unsigned char before[4096 / 8]; /* port sockets open before start */

static bool
is_port_socket(int fd)
{
    int dom = 0;
    socklen_t len = sizeof(dom);

    if (syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) != 0)
        return false;
    return dom == AF_XDP || dom == AF_PACKET;
}

/* Call fn for every open fd below 4096 (via /proc/self/fd) but the
 * placeholders fdplace.c holds while the port starts (some 800 dups of
 * /dev/null: a getsockopt each would be a millisecond of the start). */
static void
for_each_fd(void (*fn)(int fd))
{
    char buf[4096];
    long dfd, n;

    dfd = syscall(SYS_openat, AT_FDCWD, "/proc/self/fd",
                  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    while ((n = syscall(SYS_getdents64, (int)dfd, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            char *end;
            long fd = strtol(d->d_name, &end, 10);

            if (*end == '\0' && d->d_name[0] != '\0' && fd != dfd &&
                fd < 4096 && !rt__fd_reserved((int)fd))
                fn((int)fd);
            off += d->d_reclen;
        }
    }
    syscall(SYS_close, (int)dfd);
}

static void
mark_before(int fd)
{
    if (is_port_socket(fd))
        before[fd / 8] |= (unsigned char)(1u << (fd % 8));
}

static void
add_wait_fd(int fd)
{
    if (rt__port.wait_kind == RT__WAIT_INTR)
        return;
    if (fd >= 0 && fd < 4096 && (before[fd / 8] & (1u << (fd % 8))))
        return;
    if (!is_port_socket(fd))
        return;
    for (int i = 0; i < rt__port.nwait; i++)
        if (rt__port.wait_fds[i] == fd)
            return;
    if (rt__port.nwait < RT__MAX_WAIT_FDS) {
        rt__port.wait_fds[rt__port.nwait++] = fd;
        rt__port.wait_kind = RT__WAIT_SOCK;
    }
}

void
rt__port_fds_scan_begin(void)
{
    memset(before, 0, sizeof(before));
    nnotes = 0;
    scanning = true;
    for_each_fd(mark_before);
}

void
rt__port_fds_scan_end(void)
{
    scanning = false;
    for_each_fd(add_wait_fd);
    for (int i = 0; i < nnotes; i++)
        add_wait_fd(notes[i]);
    nnotes = 0;
}

void
rt_note_port_socket(int fd, int domain)
{
    (void)domain;
    /* Only sockets created while the port starts (under the start lock)
     * belong to the port. */
    if (scanning && nnotes < MAX_NOTES)
        notes[nnotes++] = fd;
}

/* ---- sleeping ------------------------------------------------------------ */

/* ppoll(2) with a timeout in nanoseconds (-1: none). */
static long
raw_ppoll_ns(struct pollfd *pfds, int n, int64_t timeout_ns,
             const void *sigmask)
{
    struct timespec ts, *tp = NULL;

    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        tp = &ts;
    }
    return syscall(SYS_ppoll, pfds, (unsigned long)n, tp, sigmask,
                   sigmask != NULL ? (size_t)(_NSIG / 8) : (size_t)0);
}

static long
raw_ppoll(struct pollfd *pfds, int n, int timeout_ms, const void *sigmask)
{
    return raw_ppoll_ns(
        pfds, n, timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000, sigmask);
}

/* Zero-timeout check of the caller's fds: count of ready ones, or -errno. */
static int
check_extra(struct pollfd *extra, int nextra)
{
    long r;

    if (nextra <= 0)
        return 0;
    r = raw_ppoll(extra, nextra, 0, NULL);
    return r < 0 ? -errno : (int)r;
}

/* Last poll before sleeping, under the lock: picks up frames already
 * queued, refreshes the timer deadline after whatever the caller just did
 * to the stack, and arms the rx interrupt first (RT__WAIT_INTR) since
 * frames that arrived before arming raise none. Returns frames received. */
static int
poll_before_sleep(void)
{
    bool intr = rt__port.wait_kind == RT__WAIT_INTR;
    int n;

    rt_lock();
    if (intr)
        rt__port_intr_arm();
    n = rt_poll();
    if (n > 0 && intr)
        rt__port_intr_disarm();
    rt_unlock();
    return n;
}

/* Port fd i for a sleeper: with several queues shared after fork, only
 * the queues this process polls (another owner's frames would wake it
 * for nothing); poll() skips a negative fd. */
static int
port_wait_fd(int i)
{
    if (rt__port.nwait == rt__port.nq && !rt__dp->watches_queue((unsigned)i))
        return -1;
    return rt__port.wait_fds[i];
}

static int
sleep_once(struct pollfd *extra, int nextra, int ms, const void *sigmask,
           uint64_t gen0)
{
    struct pollfd stack_pfds[STACK_PFDS], *pfds = stack_pfds;
    int nport = rt__port.nwait, slot, total, ready = 0, rc = 0;
    long r;
    int t, n, sefd = -1;
    int64_t timeout_ns;
    bool napping = false;

    if (poll_before_sleep() > 0)
        return 0;
    if (!rt__dp->sleep_begin(&sefd))
        return 0; /* frames were handed to us meanwhile */
    if (sefd >= 0)
        nport++;
    t = rt_next_timer_ms();
    if (ms < 0 || t < ms)
        ms = t;
    slot = my_sleeper_slot();
    timeout_ns = ms < 0 ? -1 : (int64_t)ms * 1000000;
    if ((rt__port.wait_kind == RT__WAIT_NONE || slot < 0) &&
        (timeout_ns < 0 || timeout_ns > nap_ns)) {
        napping = true;
        timeout_ns = nap_ns;
        if (!nap_slack_set) {
            nap_slack_set = true;
            syscall(SYS_prctl, PR_SET_TIMERSLACK, NAP_SLACK_NS, 0UL, 0UL, 0UL);
        }
    }
    if (rt__impair_active()) /* held frames leave on time */
        timeout_ns = rt__impair_cap_wait(timeout_ns);
    total = nport + (slot >= 0 ? 1 : 0) + nextra;
    if (total > STACK_PFDS) {
        pfds = malloc(sizeof(*pfds) * (size_t)total);
        if (pfds == NULL) {
            if (sefd >= 0)
                rt__dp->sleep_end(false);
            return -ENOMEM;
        }
    }
    for (int i = 0; i < rt__port.nwait; i++)
        pfds[i] = (struct pollfd){.fd = port_wait_fd(i), .events = POLLIN};
    if (sefd >= 0)
        pfds[nport - 1] = (struct pollfd){.fd = sefd, .events = POLLIN};
    if (slot >= 0)
        pfds[nport] = (struct pollfd){.fd = atomic_load(&slots[slot].fd),
                                      .events = POLLIN};
    for (int i = 0; i < nextra; i++) {
        extra[i].revents = 0;
        pfds[total - nextra + i] = extra[i];
    }

    if (slot >= 0)
        atomic_store(&slots[slot].sleeping, 1);
    atomic_fetch_add(&rt__sleepers, 1);
    if (atomic_load(&wake_gen) != gen0)
        r = raw_ppoll(pfds + total - nextra, nextra, 0, sigmask);
    else
        r = raw_ppoll_ns(pfds, total, timeout_ns, sigmask);
    if (r < 0)
        rc = -errno;
    atomic_fetch_sub(&rt__sleepers, 1);
    if (slot >= 0) {
        uint64_t v;
        atomic_store(&slots[slot].sleeping, 0);
        if (pfds[nport].revents != 0)
            syscall(SYS_read, pfds[nport].fd, &v, sizeof(v));
    }
    if (sefd >= 0)
        rt__dp->sleep_end(r > 0 && pfds[nport - 1].revents != 0);
    for (int i = 0; i < nextra; i++) {
        extra[i].revents = pfds[total - nextra + i].revents;
        if (extra[i].revents != 0)
            ready++;
    }
    if (pfds != stack_pfds)
        free(pfds);

    rt_lock();
    BASE_STAT_INC(sleeps);
    if (rt__port.wait_kind == RT__WAIT_INTR)
        rt__port_intr_disarm();
    n = rt_poll();
    rt_unlock();
    if (n > 0)
        nap_ns = NAP_MIN_NS;
    else if (napping && nap_ns < NAP_MAX_NS)
        nap_ns = nap_ns * 2 > NAP_MAX_NS ? NAP_MAX_NS : nap_ns * 2;
    return rc < 0 ? rc : ready;
}

/* How long rt_block spins before sleeping: the kind's budget, or, while
 * traffic flows (the last two receives less than RECENT_RX_NS apart, the
 * last one less than RECENT_RX_NS ago), ACCEL_SPIN_AFTER_RX_USEC if
 * longer. Under load the next frame usually comes within microseconds, and
 * catching it by spinning saves a sleep and a wakeup (a cross-CPU IPI,
 * tens of microseconds in a VM): measured with nginx under wrk on this
 * 2-vCPU machine, 50 us gives 2-3x the requests per second and a 40x lower
 * p99 latency. Without a stream of traffic (a lone ARP, a request every
 * few milliseconds) the wait sleeps at once, so an idle process costs
 * nothing. */
#define RECENT_RX_NS 1000000u

static uint32_t
spin_budget_usec(enum rt_wait_kind kind, uint64_t now)
{
    uint32_t spin = rt_wait_spin_usec(&base_cfg, kind);
    uint64_t last = atomic_load_explicit(&rt__last_rx_ns, memory_order_relaxed);

    if (base_cfg.spin_after_rx_usec > spin && last + RECENT_RX_NS > now &&
        atomic_load_explicit(&rt__rx_gap_ns, memory_order_relaxed) <
            RECENT_RX_NS)
        spin = base_cfg.spin_after_rx_usec;
    return spin;
}

/* True if a signal is pending that the wait mask eff would let through:
 * the wait must end with EINTR as the kernel's would. */
static bool
signal_ready(const sigset_t *eff)
{
    sigset_t pend, notblocked;

    sigemptyset(&pend);
    if (syscall(SYS_rt_sigpending, &pend, (size_t)(_NSIG / 8)) != 0)
        return false;
    sigemptyset(&notblocked);
    sigfillset(&notblocked);
    for (int sig = 1; sig < _NSIG; sig++)
        if (sigismember(eff, sig) == 1)
            sigdelset(&notblocked, sig);
    sigandset(&pend, &pend, &notblocked);
    return !sigisemptyset(&pend);
}

/* Count one spin outcome (the counters are written under the lock). */
static void
count_locked(uint64_t *counter)
{
    rt_lock();
    (*counter)++;
    rt_unlock();
}

__thread volatile unsigned rt_sig_count;
_Atomic bool rt_sig_counted;

/* Block every signal, keeping the thread's mask in *orig. */
static void
block_all(sigset_t *orig)
{
    sigset_t all;

    sigfillset(&all);
    sigemptyset(orig);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, orig, (size_t)(_NSIG / 8));
}

int
rt_block(enum rt_wait_kind kind, struct pollfd *extra, int nextra,
         int timeout_ms, const void *sigmask, unsigned sig0)
{
    return rt_block_until(kind, extra, nextra, timeout_ms, sigmask, sig0, NULL,
                          NULL);
}

int
rt_block_until(enum rt_wait_kind kind, struct pollfd *extra, int nextra,
               int timeout_ms, const void *sigmask, unsigned sig0,
               bool (*ready)(void *), void *arg)
{
    int saved = errno, rc = 0, ms;
    uint64_t now = base_now_ns(), gen0;
    uint64_t end =
        timeout_ms >= 0 ? now + (uint64_t)timeout_ms * 1000000u : UINT64_MAX;
    sigset_t orig, eff;
    bool masked = false;
    uint32_t spin_usec;
    /* Every handler counts its runs (preload's trampoline) and the wait
     * has no mask of its own: the spin watches the count. */
    bool counted = sigmask == NULL &&
                   atomic_load_explicit(&rt_sig_counted, memory_order_relaxed);

    /* A handler ran since the call began: the kernel's call would have
     * found the signal pending before it slept. */
    if (counted && timeout_ms != 0 && rt_sig_count != sig0) {
        if (rt_started())
            count_locked(&base_stats.wait_signals_early);
        return -EINTR;
    }
    if (!rt_started()) {
        long r = raw_ppoll(extra, nextra, timeout_ms, sigmask);
        rc = r < 0 ? -errno : (int)r;
        errno = saved;
        return rc;
    }
    /* Counted before the generation is read: from here on every wakeup
     * bumps it. */
    atomic_fetch_add(&waiters, 1);
    gen0 = atomic_load(&wake_gen);
    rt_flush(); /* what this thread deferred goes out before it waits */
    if (ready != NULL) {
        bool now_ready;

        rt_lock();
        now_ready = ready(arg);
        rt_unlock();
        if (now_ready)
            goto out;
    }
    spin_usec = spin_budget_usec(kind, now);
    if (spin_usec > 0 && timeout_ms != 0) {
        uint64_t spin_end = now + (uint64_t)spin_usec * 1000u;

        /* Otherwise, spin with every signal blocked, so one that arrives
         * turns into EINTR: it stays pending, the spin sees it and stops,
         * and the ppoll below, run with the wait's mask, takes it at
         * once. */
        if (!counted) {
            block_all(&orig);
            eff = sigmask != NULL ? *(const sigset_t *)sigmask : orig;
            masked = true;
        }
        if (spin_end > end)
            spin_end = end;
        for (unsigned turn = 1;; turn++) {
            bool hit;
            int n;

            rt_lock();
            if (turn == 1)
                BASE_STAT_INC(wait_spins);
            n = rt_poll();
            hit = n > 0 || atomic_load(&wake_gen) != gen0;
            if (n > 0)
                BASE_STAT_INC(spin_rx);
            if (hit)
                BASE_STAT_INC(wait_spin_hits);
            rt_unlock();
            if (hit)
                goto out;
            if (counted && rt_sig_count != sig0) {
                count_locked(&base_stats.wait_spin_signals);
                rc = -EINTR;
                goto out;
            }
            if (turn % SPIN_FD_CHECK == 0) {
                rc = check_extra(extra, nextra);
                if (rc > 0)
                    count_locked(&base_stats.wait_spin_hits);
                else if (rc == -EINTR) /* the handler ran in that ppoll */
                    count_locked(&base_stats.wait_spin_signals);
                if (rc != 0)
                    goto out;
                if (!counted && signal_ready(&eff)) {
                    count_locked(&base_stats.wait_spin_signals);
                    break;
                }
            }
            now = base_now_ns();
            if (now >= spin_end)
                break;
            rte_pause();
        }
    }
    if (timeout_ms == 0 || now >= end) {
        rt_lock();
        rt_poll();
        rt_unlock();
        rc = check_extra(extra, nextra);
        goto out;
    }
    if (counted && spin_usec > 0) {
        /* The sleep takes a signal atomically with the wait's mask: block
         * them from here, then look at the count once more. */
        block_all(&orig);
        eff = orig;
        masked = true;
        if (rt_sig_count != sig0) {
            rc = -EINTR;
            goto out;
        }
    }
    ms = timeout_ms < 0 ? -1 : (int)((end - now + 999999u) / 1000000u);
    rc = sleep_once(extra, nextra, ms, masked ? &eff : sigmask, gen0);
out:
    atomic_fetch_sub(&waiters, 1);
    if (masked)
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &orig, NULL,
                (size_t)(_NSIG / 8));
    errno = saved;
    return rc;
}

void
rt__block_atfork_child(void)
{
    /* The parent's threads' eventfds: this process has copies of the
     * descriptors, which still wake the parent's threads. Close ours.
     * (Before any thread waited, the table holds zeros, not fds: leave
     * fd 0 alone.) */
    for (int i = 0; slots_ready && i < MAX_SLEEPERS; i++) {
        int fd = atomic_exchange(&slots[i].fd, -1);
        atomic_store(&slots[i].sleeping, 0);
        if (fd >= 0)
            syscall(SYS_close, fd);
    }
    atomic_store(&rt__sleepers, 0);
    atomic_store(&waiters, 0);
    if (my_slot >= 0)
        pthread_setspecific(slot_key, NULL);
    my_slot = -1;
    nap_ns = NAP_MIN_NS;
}

/* Progress thread: sleep on the port's fds only (no wakeup slot). */
int
rt__sleep_port(int timeout_ms)
{
    struct pollfd pfds[RT__MAX_WAIT_FDS + 1];
    int n = rt__port.nwait, sefd = -1;
    long r;

    if (poll_before_sleep() > 0)
        return 1;
    if (rt__port.wait_kind == RT__WAIT_NONE)
        n = 0; /* a timed sleep of one period */
    for (int i = 0; i < n; i++)
        pfds[i] = (struct pollfd){.fd = port_wait_fd(i), .events = POLLIN};
    if (!rt__dp->sleep_begin(&sefd))
        return 1;
    if (sefd >= 0)
        pfds[n++] = (struct pollfd){.fd = sefd, .events = POLLIN};
    r = raw_ppoll(pfds, n, timeout_ms, NULL);
    if (sefd >= 0)
        rt__dp->sleep_end(r > 0 && pfds[n - 1].revents != 0);
    if (rt__port.wait_kind == RT__WAIT_INTR || r > 0) {
        rt_lock();
        if (rt__port.wait_kind == RT__WAIT_INTR)
            rt__port_intr_disarm();
        /* What woke this thread is handled here: sleep_end consumed the
         * slot's eventfd, which an application thread that went to sleep
         * meanwhile also waits on (the progress thread, seeing it asleep,
         * would not poll again, and the frames would wait for a timer:
         * 100 ms for a joined process's first ARP reply). */
        if (r > 0)
            rt_poll();
        rt_unlock();
    }
    return r < 0 ? -errno : (int)r;
}
