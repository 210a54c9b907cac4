/*
 * c2c: what one cache line's round trip between two CPUs costs now. One
 * thread pinned to CPU_A and one to CPU_B bounce a counter in a freshly
 * mapped page: A stores an odd value, B waits for it and stores the next
 * even one, A waits for that; each round trip moves the line twice. On a
 * VM the figure is the hypervisor's current placement of the two vCPUs
 * (this project's 2-vCPU guest sees about 95 ns near and 415 ns far; the
 * placement changes after seconds to minutes), and it bounds anything
 * built on shared memory between the two CPUs: memif rings, in topology B
 * of bench/latency and bench/http, which run this right before and right
 * after every point.
 *
 * After ROUND_TRIPS / 10 round trips of warm-up (both threads running and
 * the line in play), it times ROUND_TRIPS round trips in 10 batches and
 * reports the median batch's mean: an interruption of one thread (a tick,
 * a hypervisor exit) slows one batch, not the figure.
 *
 * usage: c2c CPU_A CPU_B [ROUND_TRIPS]   (default 200000; under 0.1 s when
 * near, 0.2 s when far) prints one JSON object on stdout; bad arguments:
 * one line on stderr, exit 2; a CPU that cannot be used: exit 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { NBATCH = 10 };

static _Atomic uint64_t *line; /* the bounced line: start of its own page */
static uint64_t total;         /* round trips of the run, warm-up included */

static uint64_t
now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* B's side: answer every odd value with the next even one. */
static void *
pong(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < total; i++) {
        while (atomic_load_explicit(line, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(line, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

/* A's side: n round trips from round trip *next on. */
static void
ping(uint64_t *next, uint64_t n)
{
    for (uint64_t i = *next; i < *next + n; i++) {
        atomic_store_explicit(line, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(line, memory_order_acquire) != 2 * i + 2)
            ;
    }
    *next += n;
}

/* A whole decimal number in [lo, hi], or -1. */
static long
number(const char *s, long lo, long hi)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return v;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
    long cpu_a = argc > 2 ? number(argv[1], 0, CPU_SETSIZE - 1) : -1;
    long cpu_b = argc > 2 ? number(argv[2], 0, CPU_SETSIZE - 1) : -1;
    long rt = argc > 3 ? number(argv[3], 1000, 100000000) : 200000;
    double batch_ns[NBATCH];
    uint64_t per, next = 0;
    pthread_attr_t attr;
    pthread_t thr;
    cpu_set_t set;
    int err;

    if (argc < 3 || argc > 4 || cpu_a < 0 || cpu_b < 0 || rt < 0 ||
        cpu_a == cpu_b) {
        fprintf(stderr,
                "usage: c2c CPU_A CPU_B [ROUND_TRIPS] (two different CPUs, "
                "1000 <= ROUND_TRIPS <= 100000000)\n");
        return 2;
    }
    per = (uint64_t)rt / NBATCH;
    total = per * NBATCH + (uint64_t)rt / 10;
    line = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (line == MAP_FAILED) {
        fprintf(stderr, "c2c: mmap: %s\n", strerror(errno));
        return 1;
    }
    atomic_store(line, 0);

    CPU_ZERO(&set);
    CPU_SET(cpu_a, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        fprintf(stderr, "c2c: cannot run on CPU %ld: %s\n", cpu_a,
                strerror(errno));
        return 1;
    }
    /* B is pinned before it runs: a B that could not be would leave A
     * spinning for ever. */
    CPU_ZERO(&set);
    CPU_SET(cpu_b, &set);
    pthread_attr_init(&attr);
    err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
    if (!err)
        err = pthread_create(&thr, &attr, pong, NULL);
    pthread_attr_destroy(&attr);
    if (err) {
        fprintf(stderr, "c2c: cannot start a thread on CPU %ld: %s\n", cpu_b,
                strerror(err));
        return 1;
    }

    ping(&next, (uint64_t)rt / 10);
    for (int b = 0; b < NBATCH; b++) {
        uint64_t t0 = now_ns();

        ping(&next, per);
        batch_ns[b] = (double)(now_ns() - t0) / (double)per;
    }
    pthread_join(thr, NULL);
    qsort(batch_ns, NBATCH, sizeof(batch_ns[0]), cmp_double);
    printf("{\"cpu_a\": %ld, \"cpu_b\": %ld, \"round_trips\": %llu, "
           "\"ns_per_round_trip\": %.1f, \"batch_min_ns\": %.1f, "
           "\"batch_max_ns\": %.1f}\n",
           cpu_a, cpu_b, (unsigned long long)(per * NBATCH),
           (batch_ns[NBATCH / 2 - 1] + batch_ns[NBATCH / 2]) / 2, batch_ns[0],
           batch_ns[NBATCH - 1]);
    return 0;
}
