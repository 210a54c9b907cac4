/*
 * The progress thread ("accel-progress"). It keeps TCP moving (ACKs,
 * retransmits, timers, queued accepts) while no application thread is in
 * the library. Every ACCEL_PROGRESS_USEC it checks when an application
 * thread last ran rt_poll: if that was within the period, or an application
 * thread is asleep in rt_block on the port's fds (it will poll as soon as
 * frames arrive), it only sleeps; otherwise it polls the port itself and
 * then sleeps on the port's wait fds, so frames arriving while the
 * application computes are handled without waiting for the next period.
 * It runs with base_in_lib set and every signal blocked, so the application's
 * signals go to the application's threads. With the port shared by several
 * processes (runtime/share.c), it does not wait on the port while another
 * process's application polls it (a forked master would otherwise take
 * every frame's wakeup), and a fork child starts its own on its first poll.
 *
 * So by default an idle process costs no CPU: the thread sleeps in the
 * kernel until a frame arrives or the next lwIP timer is due (at most one
 * period). ACCEL_PROGRESS_SPIN=1 asks for the other trade: the thread polls
 * the port without sleeping (one CPU kept busy, pinned with
 * ACCEL_PROGRESS_CPU), so frames are handled within microseconds even
 * while every application thread computes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include <rte_pause.h>

#include "cfg.h"
#include "clock.h"
#include "inlib.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"
#include "statreg.h"

__thread bool rt__is_progress;

static uint64_t period_ns;
/* A fork child has no progress thread (fork copies only the calling
 * thread): its first call into the stack (rt_lock) starts one. */
atomic_bool rt__progress_running;

static void
sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ACCEL_PROGRESS_SPIN=1: poll for ever, never sleep. The pause between
 * turns lets an application thread that wants the lock take it. */
static void
spin_forever(void)
{
    for (;;) {
        rt_lock();
        rt_poll();
        rt_unlock();
        base_sr_tick(base_now_ns(), rt_lock, rt_unlock);
        for (int i = 0; i < 16; i++)
            rte_pause();
    }
}

static void *
progress_main(void *arg)
{
    sigset_t all;

    (void)arg;
    base_in_lib = 1;
    rt__is_progress = true;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    if (base_cfg.progress_spin)
        spin_forever();
    for (;;) {
        uint64_t now = base_now_ns();
        uint64_t since;

        /* The live state region (accel-stat): a snapshot when due. */
        base_sr_tick(now, rt_lock, rt_unlock);
        since = base_ns_since(now, atomic_load_explicit(&rt__last_app_poll_ns,
                                                        memory_order_relaxed));

        if (atomic_load(&rt__sleepers) > 0) {
            sleep_ns(period_ns);
        } else if (since < period_ns) {
            sleep_ns(period_ns - since);
        } else {
            int ms = (int)(period_ns / 1000000u);
            int t;

            rt_lock();
            rt_poll();
            rt_unlock();
            /* Several processes on the port (fork) and another one's
             * application is polling it: it receives for everyone, so
             * this thread only looks at this process's share once a
             * period instead of waking at every frame. */
            if (base_ns_since(base_now_ns(), rt__dp->others_polled_ns()) <
                period_ns) {
                sleep_ns(period_ns);
                continue;
            }
            t = rt_next_timer_ms();
            if (t < ms)
                ms = t;
            if (ms < 1)
                ms = 1;
            rt__sleep_port(ms);
        }
    }
    return NULL;
}

int
rt__progress_start(uint32_t period_usec)
{
    pthread_t tid;
    pthread_attr_t attr;
    int rc;

    period_ns = (uint64_t)period_usec * 1000u;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    rc = pthread_create(&tid, &attr, progress_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        BASE_ERR("progress",
                 "cannot start the progress thread: %s; set "
                 "ACCEL_PROGRESS_USEC=0 to run without it",
                 strerror(rc));
        return -rc;
    }
    pthread_setname_np(tid, "accel-progress");
    if (base_cfg.progress_cpu != BASE_CFG_WORD) {
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(base_cfg.progress_cpu, &set);
        rc = pthread_setaffinity_np(tid, sizeof(set), &set);
        if (rc != 0)
            BASE_WARN("progress",
                      "ACCEL_PROGRESS_CPU=%u: cannot pin the progress thread "
                      "there: %s; it runs unpinned (set a CPU this process may "
                      "use, see taskset -p)",
                      base_cfg.progress_cpu, strerror(rc));
    }
    atomic_store(&rt__progress_running, true);
    return 0;
}

static void
no_lock(void)
{
}

void
rt__progress_ensure(void)
{
    sigset_t all, old;

    if (atomic_load(&rt__progress_running) || period_ns == 0)
        return;
    /* one attempt: a failure is logged once */
    atomic_store(&rt__progress_running, true);
    /* A fork child's own region, made by this application thread (the
     * stack lock is held: no lock to take) rather than by the thread's
     * first tick, whose transient fds would take the application's
     * lowest free numbers for a moment (see start_stack). */
    base_sr_ensure(no_lock, no_lock);
    /* The thread must never take the application's signals. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    (void)rt__progress_start((uint32_t)(period_ns / 1000u));
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void
rt__progress_atfork_child(void)
{
    atomic_store(&rt__progress_running, false);
}
