/*
 * accel-impaird: the userspace part of `accel-lab impair` (tools/accel-lab).
 * It runs in the kernel peer's namespace (accel-k<tag>) and receives, over
 * nfnetlink_queue (nfq.c), the IPv4 packets that iptables' NFQUEUE rules
 * send it: one queue for the packets arriving on veth-k (direction "in":
 * accel -> kernel peer) and one for those leaving it ("out"). It applies
 * the impairments the kernel cannot: delay with jitter, reordering and
 * corruption. Loss, duplication and the rate limit stay in the kernel
 * (nftables and HTB: see accel-lab), so a loss-only benchmark never pays
 * for a trip through user space.
 *
 * Delay: each packet gets a release time now + delay + a uniform draw in
 * [-jitter, +jitter] (never before now) and waits in a time-ordered heap;
 * with jitter, as with netem's tfifo, later packets can overtake earlier
 * ones. The verdict (NF_ACCEPT) is given at the release time; the packet
 * itself stays in the kernel's queue meanwhile (metadata-only copies when
 * nothing is corrupted).
 *
 * Reorder P: a P % chosen packet, once due, is held until the next packet
 * of its direction has been released, and goes right after it; if none
 * comes within REORDER_GAP_MS it goes anyway (counted as a timeout).
 *
 * Corrupt P: a P % chosen packet gets one random bit flipped in its L4
 * payload (in the L4 header when it has no payload); the IP header is left
 * valid, so the receiver finds a bad L4 checksum and drops the packet, as
 * it would after a bad wire. The kernel takes the mangled copy as it is
 * (nfqnl_mangle leaves ip_summed CHECKSUM_NONE: nothing recomputes it).
 *
 * Random choices come from one xoshiro256** generator per direction seeded
 * from --seed, three draws per packet whatever is enabled, so a run with
 * the same seed and the same packets makes the same choices.
 *
 * It must not lose packets: the queues are bound with a large maxlen and
 * fail-open (a packet the kernel cannot queue or hand over is accepted),
 * the iptables rules use --queue-bypass (no daemon bound: packets pass),
 * and on SIGTERM/SIGINT everything held is released before exit. A daemon
 * killed with SIGKILL drops what it held at that moment (the kernel drops
 * a dead listener's queue); the link is clean again right after.
 *
 * Counters go to --stats FILE as key=value lines, rewritten every 250 ms
 * when they changed, at SIGUSR1 and at exit (accel-lab impair --show).
 * Logs go to stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "nfq.h"

#define PROG "accel-impaird"
#define NDIR 2
#define REORDER_GAP_MS 5    /* longest hold of a reordered packet */
#define STATS_PERIOD_MS 250 /* stats file rewrite period (when changed) */
#define DEFAULT_MAXLEN 65536
#define RCVBUF (64 * 1024 * 1024)
#define NS_PER_MS 1000000ull
#define PPM 1000000u

static const char *const dir_name[NDIR] = {"in", "out"};

/* A packet held in the kernel's queue, waiting for its verdict. */
enum held_state {
    HELD_DELAY,   /* in the heap: released at due */
    HELD_REORDER, /* in the heap: at due, moves to its direction's wait list */
    HELD_WAIT,    /* in a wait list: released after the next packet */
};

struct held {
    uint64_t due;        /* ns, CLOCK_MONOTONIC (HELD_WAIT: the longest hold) */
    uint64_t seq;        /* arrival order: FIFO among equal due times */
    uint32_t id;         /* the kernel's packet id */
    uint8_t dir;         /* 0 in, 1 out */
    uint8_t state;       /* enum held_state */
    uint32_t len;        /* bytes at data */
    unsigned char *data; /* the corrupted packet, or NULL (unchanged) */
    struct held *next;   /* wait list or free list */
};

struct dir_stats {
    uint64_t packets;         /* handed to the daemon */
    uint64_t passed;          /* verdicts given */
    uint64_t delayed;         /* released later than they arrived */
    uint64_t reordered;       /* released right after a later packet */
    uint64_t reorder_timeout; /* chosen, but no later packet came in time */
    uint64_t corrupted;       /* one bit flipped */
    uint64_t held;            /* holding now */
    uint64_t held_max;
};

struct dir {
    int enabled;
    uint16_t queue;
    uint64_t rng[4];
    struct held *wait_head, *wait_tail; /* HELD_WAIT, in order of arrival */
    struct dir_stats st;
};

struct opts {
    int queue[NDIR]; /* -1: direction not impaired by the daemon */
    uint64_t delay_ns, jitter_ns;
    uint32_t reorder_ppm, corrupt_ppm;
    uint64_t seed;
    int cpu; /* -1: not pinned */
    uint32_t maxlen;
    const char *pid_file, *stats_file;
};

static struct opts opt = {
    .queue = {-1, -1},
    .cpu = -1,
    .maxlen = DEFAULT_MAXLEN,
};
static struct dir dirs[NDIR];
static struct nfq nfq;

static struct held *pool, *free_list;
static struct held **heap;
static size_t heap_len, pool_cap;
static uint64_t seq_next, pool_full, updates;
static bool stats_dirty = true;

static volatile sig_atomic_t got_stop, got_usr1;

/* --- random numbers: xoshiro256** seeded by splitmix64 ---------------- */

static uint64_t
splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t
rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t
rng_next(uint64_t s[4])
{
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static void
rng_seed(uint64_t s[4], uint64_t seed, unsigned stream)
{
    uint64_t x = seed ^ (0x5851f42d4c957f2dull * (stream + 1));

    for (int i = 0; i < 4; i++)
        s[i] = splitmix64(&x);
}

/* True with probability ppm / 1e6 (consumes one draw either way). */
static bool
chance(uint64_t s[4], uint32_t ppm)
{
    return rng_next(s) % PPM < ppm;
}

/* --- time --------------------------------------------------------------- */

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- the time-ordered heap of held packets ------------------------------ */

static bool
before(const struct held *a, const struct held *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void
heap_push(struct held *h)
{
    size_t i = heap_len++;

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(h, heap[parent]))
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = h;
}

static struct held *
heap_pop(void)
{
    struct held *top = heap[0], *last = heap[--heap_len];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= heap_len)
            break;
        if (c + 1 < heap_len && before(heap[c + 1], heap[c]))
            c++;
        if (!before(heap[c], last))
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (heap_len > 0)
        heap[i] = last;
    return top;
}

/* --- holding and releasing ---------------------------------------------- */

static struct held *
held_get(void)
{
    struct held *h = free_list;

    if (h != NULL)
        free_list = h->next;
    return h;
}

static void
held_put(struct held *h)
{
    free(h->data);
    h->data = NULL;
    h->next = free_list;
    free_list = h;
}

static void
give_verdict(struct dir *d, uint32_t id, const unsigned char *data,
             uint32_t len)
{
    /* On a send failure the packet stays in the kernel's queue until exit;
     * nfq counts it (send_errors). */
    (void)nfq_accept(&nfq, d->queue, id, data, len);
    d->st.passed++;
    stats_dirty = true;
}

static void
release_held(struct held *h)
{
    struct dir *d = &dirs[h->dir];

    give_verdict(d, h->id, h->data, h->len);
    d->st.held--;
    held_put(h);
}

/* A packet that was not chosen for reordering has gone: every packet of
 * its direction waiting for a successor goes right after it. */
static void
release_waiting(struct dir *d)
{
    while (d->wait_head != NULL) {
        struct held *h = d->wait_head;
        d->wait_head = h->next;
        d->st.reordered++;
        release_held(h);
    }
    d->wait_tail = NULL;
}

static void
wait_for_successor(struct held *h, uint64_t now)
{
    struct dir *d = &dirs[h->dir];

    h->state = HELD_WAIT;
    h->due = now + REORDER_GAP_MS * NS_PER_MS;
    h->next = NULL;
    if (d->wait_tail != NULL)
        d->wait_tail->next = h;
    else
        d->wait_head = h;
    d->wait_tail = h;
}

/* Release what is due at now: heap entries, then wait-list timeouts. */
static void
release_due(uint64_t now)
{
    while (heap_len > 0 && heap[0]->due <= now) {
        struct held *h = heap_pop();
        struct dir *d = &dirs[h->dir];

        if (h->state == HELD_REORDER) {
            wait_for_successor(h, now);
            continue;
        }
        release_held(h);
        release_waiting(d);
    }
    for (int i = 0; i < NDIR; i++) {
        struct dir *d = &dirs[i];
        /* Wait lists are in order of their deadlines (a fixed gap). */
        while (d->wait_head != NULL && d->wait_head->due <= now) {
            struct held *h = d->wait_head;
            d->wait_head = h->next;
            if (d->wait_head == NULL)
                d->wait_tail = NULL;
            d->st.reorder_timeout++;
            release_held(h);
        }
    }
}

/* Release everything held, in release order (at exit). */
static void
release_all(void)
{
    while (heap_len > 0) {
        struct held *h = heap_pop();
        release_held(h);
    }
    for (int i = 0; i < NDIR; i++)
        release_waiting(&dirs[i]);
}

static uint64_t
next_deadline(void)
{
    uint64_t t = UINT64_MAX;

    if (heap_len > 0)
        t = heap[0]->due;
    for (int i = 0; i < NDIR; i++)
        if (dirs[i].wait_head != NULL && dirs[i].wait_head->due < t)
            t = dirs[i].wait_head->due;
    return t;
}

/* --- corruption ---------------------------------------------------------- */

/* Flip one random bit of the L4 payload of the IPv4 packet p (of the L4
 * header when there is no payload). False when there is nothing after the
 * IP header to flip. */
static bool
corrupt(unsigned char *p, uint32_t len, uint64_t draw)
{
    uint32_t ihl, tot, l4, start;

    if (len < 20 || (p[0] >> 4) != 4)
        return false;
    ihl = (uint32_t)(p[0] & 0x0f) * 4;
    tot = ((uint32_t)p[2] << 8) | p[3];
    if (tot > len)
        tot = len; /* a truncated copy: only what we have */
    if (ihl < 20 || ihl >= tot)
        return false;
    l4 = ihl;
    start = l4;
    /* Only the first fragment carries the L4 header. */
    if ((((uint32_t)p[6] << 8 | p[7]) & 0x1fff) == 0) {
        if (p[9] == 6 && tot >= l4 + 20)
            start = l4 + (uint32_t)(p[l4 + 12] >> 4) * 4;
        else if (p[9] == 17 || p[9] == 1)
            start = l4 + 8; /* UDP header, ICMP header + id/seq */
        if (start >= tot)
            start = l4; /* no payload: a header bit then */
    }
    {
        uint64_t bit = draw % ((uint64_t)(tot - start) * 8);
        p[start + bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    return true;
}

/* --- one packet ---------------------------------------------------------- */

static struct dir *
dir_of_queue(uint16_t queue)
{
    for (int i = 0; i < NDIR; i++)
        if (dirs[i].enabled && dirs[i].queue == queue)
            return &dirs[i];
    return NULL;
}

static void
handle(const struct nfq_pkt *p, uint64_t now)
{
    struct dir *d = dir_of_queue(p->queue);
    uint64_t r_corrupt, r_jitter, delay;
    bool do_corrupt, do_reorder, corrupted = false;
    struct held *h;

    if (d == NULL) { /* not ours: never leave a packet without a verdict */
        (void)nfq_accept(&nfq, p->queue, p->id, NULL, 0);
        return;
    }
    d->st.packets++;
    stats_dirty = true;
    /* Three draws per packet, always, so that each choice depends only on
     * the seed and the packet's position in its direction's stream. */
    do_corrupt = chance(d->rng, opt.corrupt_ppm);
    r_corrupt = rng_next(d->rng);
    do_reorder = chance(d->rng, opt.reorder_ppm);
    r_jitter = rng_next(d->rng);

    if (do_corrupt && p->payload != NULL && p->len == p->orig_len)
        corrupted = corrupt(p->payload, p->len, r_corrupt);
    if (corrupted)
        d->st.corrupted++;

    delay = opt.delay_ns;
    if (opt.jitter_ns > 0) {
        uint64_t span = 2 * opt.jitter_ns + 1;
        int64_t j = (int64_t)(r_jitter % span) - (int64_t)opt.jitter_ns;
        delay = (j < 0 && (uint64_t)-j > delay) ? 0 : delay + (uint64_t)j;
    }
    if (delay == 0 && !do_reorder) {
        give_verdict(d, p->id, corrupted ? p->payload : NULL, p->len);
        release_waiting(d);
        return;
    }
    h = held_get();
    if (h == NULL) { /* cannot happen with pool_cap >= the queues' maxlen */
        pool_full++;
        give_verdict(d, p->id, corrupted ? p->payload : NULL, p->len);
        release_waiting(d);
        return;
    }
    h->id = p->id;
    h->dir = (uint8_t)(d - dirs);
    h->state = do_reorder ? HELD_REORDER : HELD_DELAY;
    h->due = now + delay;
    h->seq = seq_next++;
    h->len = 0;
    h->data = NULL;
    if (corrupted) {
        h->data = malloc(p->len);
        if (h->data != NULL) {
            memcpy(h->data, p->payload, p->len);
            h->len = p->len;
        } /* else: released unchanged; counted as corrupted all the same */
    }
    if (delay > 0)
        d->st.delayed++;
    d->st.held++;
    if (d->st.held > d->st.held_max)
        d->st.held_max = d->st.held;
    heap_push(h);
}

/* --- stats --------------------------------------------------------------- */

static void
write_stats(void)
{
    char tmp[4096];
    FILE *f;

    if (opt.stats_file == NULL)
        return;
    snprintf(tmp, sizeof(tmp), "%s.tmp", opt.stats_file);
    f = fopen(tmp, "w");
    if (f == NULL) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", tmp, strerror(errno));
        return;
    }
    updates++;
    fprintf(f, "pid=%d\nupdates=%" PRIu64 "\n", (int)getpid(), updates);
    for (int i = 0; i < NDIR; i++) {
        const struct dir_stats *s = &dirs[i].st;
        const char *n = dir_name[i];
        if (!dirs[i].enabled)
            continue;
        fprintf(f,
                "%s_packets=%" PRIu64 "\n%s_passed=%" PRIu64
                "\n%s_delayed=%" PRIu64 "\n%s_reordered=%" PRIu64
                "\n%s_reorder_timeouts=%" PRIu64 "\n%s_corrupted=%" PRIu64
                "\n%s_held=%" PRIu64 "\n%s_held_max=%" PRIu64 "\n",
                n, s->packets, n, s->passed, n, s->delayed, n, s->reordered, n,
                s->reorder_timeout, n, s->corrupted, n, s->held, n,
                s->held_max);
    }
    fprintf(f,
            "verdict_errors=%" PRIu64 "\nsend_errors=%" PRIu64
            "\npool_full=%" PRIu64 "\n",
            nfq.verdict_errors, nfq.send_errors, pool_full);
    if (fclose(f) != 0 || rename(tmp, opt.stats_file) != 0)
        fprintf(stderr, PROG ": cannot write %s: %s\n", opt.stats_file,
                strerror(errno));
    stats_dirty = false;
}

/* --- options ------------------------------------------------------------- */

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " [--queue-in N] [--queue-out N] [--delay-ms MS]\n"
            "       [--jitter-ms MS] [--reorder P] [--corrupt P] [--seed N]\n"
            "       [--cpu N] [--maxlen N] [--pid-file F] [--stats F]\n"
            "P is a percentage (0-100, decimals allowed). Started by\n"
            "`accel-lab impair` in the kernel peer's netns.\n");
}

static int
bad(const char *name, const char *val, const char *why)
{
    fprintf(stderr, PROG ": %s '%s': %s\n", name, val, why);
    return -1;
}

static int
parse_u64(const char *name, const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v > max)
        return bad(name, s, "expected a whole number in range");
    *out = v;
    return 0;
}

/* A decimal number in [0, max]; -1 (after one line on stderr) otherwise. */
static int
parse_num(const char *name, const char *s, double max, const char *what,
          double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= 0 && v <= max))
        return bad(name, s, what);
    *out = v;
    return 0;
}

static int
parse_ms(const char *name, const char *s, uint64_t *ns)
{
    double v;

    if (parse_num(name, s, 60000, "expected milliseconds, 0-60000", &v) < 0)
        return -1;
    *ns = (uint64_t)llround(v * 1e6);
    return 0;
}

static int
parse_pct(const char *name, const char *s, uint32_t *ppm)
{
    double v;

    if (parse_num(name, s, 100, "expected a percentage, 0-100", &v) < 0)
        return -1;
    *ppm = (uint32_t)llround(v * 10000.0);
    return 0;
}

static int
parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t n;
        int rc = 0;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (v == NULL) {
            fprintf(stderr, PROG ": %s needs a value\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--queue-in") == 0 || strcmp(a, "--queue-out") == 0) {
            rc = parse_u64(a, v, 65535, &n);
            opt.queue[a[8] == 'i' ? 0 : 1] = (int)n;
        } else if (strcmp(a, "--delay-ms") == 0) {
            rc = parse_ms(a, v, &opt.delay_ns);
        } else if (strcmp(a, "--jitter-ms") == 0) {
            rc = parse_ms(a, v, &opt.jitter_ns);
        } else if (strcmp(a, "--reorder") == 0) {
            rc = parse_pct(a, v, &opt.reorder_ppm);
        } else if (strcmp(a, "--corrupt") == 0) {
            rc = parse_pct(a, v, &opt.corrupt_ppm);
        } else if (strcmp(a, "--seed") == 0) {
            rc = parse_u64(a, v, UINT64_MAX, &opt.seed);
        } else if (strcmp(a, "--cpu") == 0) {
            rc = parse_u64(a, v, CPU_SETSIZE - 1, &n);
            opt.cpu = (int)n;
        } else if (strcmp(a, "--maxlen") == 0) {
            rc = parse_u64(a, v, 1u << 20, &n);
            if (rc == 0 && n == 0)
                rc = bad(a, v, "must be at least 1");
            opt.maxlen = (uint32_t)n;
        } else if (strcmp(a, "--pid-file") == 0) {
            opt.pid_file = v;
        } else if (strcmp(a, "--stats") == 0) {
            opt.stats_file = v;
        } else {
            fprintf(stderr, PROG ": unknown option '%s'\n", a);
            return -1;
        }
        if (rc < 0)
            return -1;
    }
    if (opt.queue[0] < 0 && opt.queue[1] < 0) {
        fprintf(stderr, PROG ": give --queue-in, --queue-out or both\n");
        return -1;
    }
    if (opt.queue[0] == opt.queue[1]) {
        fprintf(stderr, PROG ": --queue-in and --queue-out must differ\n");
        return -1;
    }
    return 0;
}

/* --- main ---------------------------------------------------------------- */

static void
on_signal(int sig)
{
    if (sig == SIGUSR1)
        got_usr1 = 1;
    else
        got_stop = 1;
}

static int
setup_signals(sigset_t *waitmask)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigset_t block;

    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGUSR1);
    /* Blocked except inside ppoll: a signal cannot slip in between the
     * flag checks and the wait. */
    if (sigprocmask(SIG_BLOCK, &block, waitmask) < 0)
        return -errno;
    sigdelset(waitmask, SIGTERM);
    sigdelset(waitmask, SIGINT);
    sigdelset(waitmask, SIGUSR1);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static int
setup(void)
{
    int copy = opt.corrupt_ppm > 0, rc;

    if (opt.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(opt.cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0) {
            fprintf(stderr, PROG ": cannot pin to CPU %d: %s\n", opt.cpu,
                    strerror(errno));
            return -1;
        }
    }
    /* Delays are in milliseconds; the default 50 us timer slack would
     * add its own jitter to every release. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

    pool_cap = (size_t)opt.maxlen * NDIR;
    pool = calloc(pool_cap, sizeof(*pool));
    heap = calloc(pool_cap, sizeof(*heap));
    if (pool == NULL || heap == NULL) {
        fprintf(stderr, PROG ": out of memory for %zu held packets\n",
                pool_cap);
        return -1;
    }
    for (size_t i = pool_cap; i-- > 0;)
        held_put(&pool[i]);

    rc = nfq_open(&nfq, copy, RCVBUF);
    if (rc < 0) {
        fprintf(stderr, PROG ": netlink socket: %s\n", strerror(-rc));
        return -1;
    }
    for (int i = 0; i < NDIR; i++) {
        if (opt.queue[i] < 0)
            continue;
        dirs[i].enabled = 1;
        dirs[i].queue = (uint16_t)opt.queue[i];
        rng_seed(dirs[i].rng, opt.seed, (unsigned)i);
        rc = nfq_bind(&nfq, dirs[i].queue, copy, opt.maxlen);
        if (rc < 0) {
            fprintf(stderr, PROG ": cannot bind queue %d (%s): %s%s\n",
                    opt.queue[i], dir_name[i], strerror(-rc),
                    rc == -EBUSY ? " (another accel-impaird holds it)" : "");
            return -1;
        }
    }
    return 0;
}

static int
write_pid_file(void)
{
    FILE *f;

    if (opt.pid_file == NULL)
        return 0;
    f = fopen(opt.pid_file, "w");
    if (f == NULL || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", opt.pid_file,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* Receive and handle what is waiting, at most a few batches so that due
 * releases are not starved by a flood. */
static int
receive(void)
{
    struct nfq_pkt pkts[NFQ_BATCH];

    for (int round = 0; round < 8; round++) {
        int n = nfq_recv(&nfq, pkts, NFQ_BATCH);
        uint64_t now = now_ns();

        if (n < 0)
            return n;
        for (int i = 0; i < n; i++)
            handle(&pkts[i], now);
        release_due(now);
        nfq_flush(&nfq);
        if (n < NFQ_BATCH)
            break;
    }
    return 0;
}

static void
drain_and_exit(void)
{
    uint64_t total = 0;

    /* The rules are gone by now (accel-lab removes them first): release
     * what is held, then what is still arriving. */
    release_all();
    nfq_flush(&nfq);
    opt.delay_ns = opt.jitter_ns = 0;
    opt.reorder_ppm = opt.corrupt_ppm = 0;
    for (int round = 0; round < 1000; round++) {
        struct nfq_pkt pkts[NFQ_BATCH];
        int n = nfq_recv(&nfq, pkts, NFQ_BATCH);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++)
            handle(&pkts[i], now_ns());
        nfq_flush(&nfq);
    }
    write_stats();
    for (int i = 0; i < NDIR; i++)
        total += dirs[i].st.packets;
    fprintf(stderr, PROG ": exiting after %" PRIu64 " packets\n", total);
    if (opt.pid_file != NULL)
        unlink(opt.pid_file);
    nfq_close(&nfq);
}

int
main(int argc, char **argv)
{
    sigset_t waitmask;
    uint64_t next_stats = 0;

    if (parse_args(argc, argv) < 0) {
        usage(stderr);
        return 2;
    }
    if (setup_signals(&waitmask) < 0 || setup() < 0)
        return 1;
    write_stats();
    if (write_pid_file() < 0)
        return 1;
    fprintf(stderr,
            PROG ": queues in=%d out=%d delay=%.3f ms jitter=%.3f ms "
                 "reorder=%u ppm corrupt=%u ppm seed=%" PRIu64 " cpu=%d\n",
            opt.queue[0], opt.queue[1], opt.delay_ns / 1e6, opt.jitter_ns / 1e6,
            opt.reorder_ppm, opt.corrupt_ppm, opt.seed, opt.cpu);

    while (!got_stop) {
        struct pollfd pfd = {.fd = nfq.fd, .events = POLLIN};
        uint64_t now = now_ns(), deadline;
        struct timespec ts;

        release_due(now);
        nfq_flush(&nfq);
        if (got_usr1 || (stats_dirty && now >= next_stats)) {
            got_usr1 = 0;
            write_stats();
            next_stats = now + STATS_PERIOD_MS * NS_PER_MS;
        }
        deadline = next_deadline();
        if (stats_dirty && next_stats < deadline)
            deadline = next_stats;
        if (deadline == UINT64_MAX) {
            deadline = now + 1000 * NS_PER_MS;
        }
        deadline = deadline > now ? deadline - now : 0;
        ts.tv_sec = (time_t)(deadline / 1000000000ull);
        ts.tv_nsec = (long)(deadline % 1000000000ull);
        if (ppoll(&pfd, 1, &ts, &waitmask) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, PROG ": poll: %s\n", strerror(errno));
            break;
        }
        if (pfd.revents & POLLIN) {
            int rc = receive();
            if (rc < 0) {
                fprintf(stderr, PROG ": receive: %s\n", strerror(-rc));
                break;
            }
        }
    }
    drain_and_exit();
    return 0;
}
