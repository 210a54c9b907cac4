/*
 * rt_block() behaviour on a real port (run inside a private namespace with
 * the ACCEL_* environment of a port): a timeout returns after about the
 * time asked; rt_wakeup() from another thread ends a long sleep at once; a
 * ready kernel fd in extra_fds ends it with its revents filled in; a
 * signal ends it with -EINTR; errno is never changed. The stack is a
 * stand-in that drops every frame (this file only). Prints one line per
 * check and exits 0 when all pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "inlib.h"
#include "rt.h"
#include "stk.h"

int
stk_init(const struct stk_netif_cfg *cfg)
{
    (void)cfg;
    return 0;
}

void
stk_input(const void *frame, uint16_t len)
{
    (void)frame;
    (void)len;
}

void
stk_timers(void)
{
}

uint32_t
stk_next_timer_ms(void)
{
    return 60000;
}

void
stk_clock_turn(uint64_t now_ns)
{
    (void)now_ns;
}

void
stk_clock_release(void)
{
}

static int failures;

static void
check(int ok, const char *what, double ms)
{
    printf("%s %s (%.1f ms)\n", ok ? "ok  " : "FAIL", what, ms);
    if (!ok)
        failures++;
}

static double
since_ms(uint64_t t0)
{
    return (double)(base_now_ns() - t0) / 1e6;
}

static void
msleep(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *
waker(void *arg)
{
    (void)arg;
    msleep(50);
    rt_wakeup();
    return NULL;
}

static int pipe_w;
static void *
writer(void *arg)
{
    (void)arg;
    msleep(50);
    if (write(pipe_w, "x", 1) != 1)
        return NULL;
    return NULL;
}

static pthread_t main_tid;
static void *
signaller(void *arg)
{
    (void)arg;
    msleep(50);
    pthread_kill(main_tid, SIGUSR1);
    return NULL;
}

static void
on_usr1(int sig)
{
    (void)sig;
}

int
main(void)
{
    struct sigaction sa;
    struct pollfd pfd;
    pthread_t t;
    uint64_t t0;
    int p[2], rc;
    double ms;

    base_in_lib = 1;
    rc = rt_start();
    base_in_lib = 0;
    if (rc != 0) {
        printf("start failed: %s\n", strerror(-rc));
        return 2;
    }
    main_tid = pthread_self();

    /* 1. Timeout. */
    errno = 1234;
    t0 = base_now_ns();
    rc = rt_block(RT_WAIT_POLL, NULL, 0, 100, NULL, rt_sig_count);
    ms = since_ms(t0);
    check(rc == 0 && ms >= 99 && ms < 400, "timeout 100 ms", ms);
    check(errno == 1234, "errno unchanged", 0);

    /* 2. rt_wakeup() from another thread ends a 5 s sleep. */
    pthread_create(&t, NULL, waker, NULL);
    t0 = base_now_ns();
    rc = rt_block(RT_WAIT_POLL, NULL, 0, 5000, NULL, rt_sig_count);
    ms = since_ms(t0);
    pthread_join(t, NULL);
    check(rc == 0 && ms >= 40 && ms < 1000, "rt_wakeup wakes a sleeper", ms);

    /* A wakeup with nobody asleep does not leave the next sleep short. */
    rt_wakeup();
    t0 = base_now_ns();
    rc = rt_block(RT_WAIT_POLL, NULL, 0, 100, NULL, rt_sig_count);
    ms = since_ms(t0);
    check(rc == 0 && ms >= 99, "stale wakeup does not cut the next sleep", ms);

    /* 3. A kernel fd in extra_fds. */
    if (pipe(p) != 0)
        return 2;
    pipe_w = p[1];
    pfd = (struct pollfd){.fd = p[0], .events = POLLIN};
    pthread_create(&t, NULL, writer, NULL);
    t0 = base_now_ns();
    rc = rt_block(RT_WAIT_POLL, &pfd, 1, 5000, NULL, rt_sig_count);
    ms = since_ms(t0);
    pthread_join(t, NULL);
    check(rc == 1 && (pfd.revents & POLLIN) && ms < 1000,
          "extra fd readable ends the wait", ms);
    /* Already readable: returns at once, spin or not. */
    t0 = base_now_ns();
    rc = rt_block(RT_WAIT_POLL, &pfd, 1, 5000, NULL, rt_sig_count);
    check(rc == 1 && since_ms(t0) < 50, "extra fd already readable",
          since_ms(t0));
    close(p[0]);
    close(p[1]);

    /* 4. A signal gives -EINTR. */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_create(&t, NULL, signaller, NULL);
    errno = 0;
    t0 = base_now_ns();
    rc = rt_block(RT_WAIT_POLL, NULL, 0, 5000, NULL, rt_sig_count);
    ms = since_ms(t0);
    pthread_join(t, NULL);
    check(rc == -EINTR && ms < 1000, "signal gives -EINTR", ms);
    check(errno == 0, "errno unchanged after EINTR", 0);

    /* 5. Timeout 0 only polls. */
    t0 = base_now_ns();
    rc = rt_block(RT_WAIT_POLL, NULL, 0, 0, NULL, rt_sig_count);
    check(rc == 0 && since_ms(t0) < 20, "timeout 0 returns at once",
          since_ms(t0));

    /* 6. Counted handlers (preload's trampoline): one that ran earlier in
     * the call, after sig0 was taken, ends the wait at once with -EINTR;
     * one that ran before the call does not. */
    atomic_store(&rt_sig_counted, true);
    {
        unsigned sig0 = rt_sig_count;

        rt_sig_count++; /* what the trampoline does when a handler runs */
        t0 = base_now_ns();
        rc = rt_block(RT_WAIT_POLL, NULL, 0, 5000, NULL, sig0);
        check(rc == -EINTR && since_ms(t0) < 50,
              "handler earlier in the call gives -EINTR at once", since_ms(t0));
    }
    t0 = base_now_ns();
    rc = rt_block(RT_WAIT_POLL, NULL, 0, 100, NULL, rt_sig_count);
    ms = since_ms(t0);
    check(rc == 0 && ms >= 99, "handler before the call: a full wait", ms);
    atomic_store(&rt_sig_counted, false);

    printf("%s\n", failures == 0 ? "all ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
