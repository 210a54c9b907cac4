/*
 * lwIP's platform layer for NO_SYS=1: sys_now() in milliseconds from the
 * runtime clock (or a test clock), LWIP_RAND() from a xoshiro128** PRNG
 * seeded by getrandom(), lwIP diagnostics and failed assertions routed to
 * our log (never stdout). lwIP's heap is in mem.c.
 * All of it runs under the stack lock, so there is no locking here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "lwip/sys.h"

#include "clock.h"
#include "log.h"
#include "stk_priv.h"
#include "stk_test.h"

static uint64_t (*test_clock)(void);
static long assert_count;

static uint64_t turn_ns; /* the poll turn's time, 0 outside a turn */
/* Outside a turn: the time read at the first look since the caller took
 * the stack (a send() reads it once, not at each of its segments'
 * timestamps, RTT stamps and pacing checks); 0 until then. */
static uint64_t held_ns;

void
stk_clock_turn(uint64_t now_ns)
{
    turn_ns = now_ns;
    held_ns = 0;
}

void
stk_clock_release(void)
{
    held_ns = 0;
}

uint64_t
stk__now_ns(void)
{
    if (test_clock != NULL)
        return test_clock();
    if (turn_ns != 0)
        return turn_ns;
    if (held_ns == 0)
        held_ns = base_now_ns();
    return held_ns;
}

u32_t
sys_now(void)
{
    return (u32_t)(stk__now_ns() / 1000000u);
}

void
stk_test_set_clock(uint64_t (*now_ns)(void))
{
    test_clock = now_ns;
}

long
stk_test_asserts(void)
{
    return assert_count;
}

/* ---- PRNG: xoshiro128** (not for secrets: ISNs use isn.c) --------------- */

static uint32_t rng[4];
static bool rng_seeded;

static uint32_t
rotl(uint32_t x, int k)
{
    return (x << k) | (x >> (32 - k));
}

static void
rng_seed(void)
{
    ssize_t n = getrandom(rng, sizeof(rng), GRND_NONBLOCK);

    if (n != (ssize_t)sizeof(rng)) {
        /* No entropy yet (early boot): fall back to the clock. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        rng[0] = (uint32_t)ts.tv_nsec ^ 0x9e3779b9u;
        rng[1] = (uint32_t)ts.tv_sec ^ 0x7f4a7c15u;
        rng[2] = (uint32_t)(uintptr_t)&ts;
        rng[3] = 0x85ebca6bu;
    }
    if ((rng[0] | rng[1] | rng[2] | rng[3]) == 0)
        rng[0] = 1;
    rng_seeded = true;
}

uint32_t
stk_rand(void)
{
    uint32_t r, t;

    if (!rng_seeded)
        rng_seed();
    r = rotl(rng[1] * 5, 7) * 9;
    t = rng[1] << 9;
    rng[2] ^= rng[0];
    rng[3] ^= rng[1];
    rng[1] ^= rng[2];
    rng[0] ^= rng[3];
    rng[2] ^= t;
    rng[3] = rotl(rng[3], 11);
    return r;
}

/* ---- diagnostics --------------------------------------------------------- */

void
stk_lwip_diag(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    size_t n;

    if (base_log_level < BASE_LOG_DEBUG)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    n = strlen(buf);
    if (n > 0 && buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    BASE_DBG("lwip", "%s", buf);
}

void
stk_lwip_assert(const char *msg, const char *file, int line)
{
    assert_count++;
    BASE_ERR("lwip",
             "assertion \"%s\" failed at %s:%d: a bug in accel or lwIP; "
             "please report it with this line",
             msg, file, line);
#ifndef NDEBUG
    abort();
#endif
}
