/*
 * The progress thread ("accel-progress"). It keeps TCP moving (ACKs,
 * retransmits, timers, queued accepts) while no application thread is in
 * the library. Every ACCEL_PROGRESS_USEC it checks when an application
 * thread last ran rt_poll: if that was within the period, or an application
 * thread is asleep in rt_block on the port's fds (it will poll as soon as
 * frames arrive), it only sleeps; otherwise it polls the port itself and
 * then sleeps on the port's wait fds, so frames arriving while the
 * application computes are handled without waiting for the next period.
 * It runs with rt_in_lib set and every signal blocked, so the application's
 * signals go to the application's threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "inlib.h"
#include "log.h"
#include "rt.h"
#include "rt_int.h"

__thread bool rt__is_progress;

static uint64_t period_ns;

static void
sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *
progress_main(void *arg)
{
    sigset_t all;

    (void)arg;
    rt_in_lib = 1;
    rt__is_progress = true;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        uint64_t now = rt_now_ns();
        uint64_t last =
            atomic_load_explicit(&rt__last_app_poll_ns, memory_order_relaxed);

        if (atomic_load(&rt__sleepers) > 0) {
            sleep_ns(period_ns);
        } else if (now - last < period_ns) {
            sleep_ns(last + period_ns - now);
        } else {
            int ms = (int)(period_ns / 1000000u);
            int t;

            rt_lock();
            rt_poll();
            rt_unlock();
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
        RT_ERR("progress",
               "cannot start the progress thread: %s; set "
               "ACCEL_PROGRESS_USEC=0 to run without it",
               strerror(rc));
        return -rc;
    }
    pthread_setname_np(tid, "accel-progress");
    return 0;
}
