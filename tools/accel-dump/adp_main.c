/*
 * accel-dump: capture what a running accelerated process's stack sends and
 * receives, as tcpdump captures an interface. The process publishes a
 * capture ring in its live state region (base/statreg_layout.h,
 * "Capture"; the producer is base/statreg_cap.c); accel-dump takes the
 * capture (cap_on), reads the ring every few milliseconds and writes
 * what it reads:
 *
 *   -w FILE   a pcap file with nanosecond timestamps, or pcapng (--pcapng,
 *             or a FILE ending in .pcapng) with each frame's direction and
 *             a comment on the frames the stack dropped; "-" is stdout
 *   no -w     one line per frame, printed by tcpdump itself (`tcpdump -n
 *             -l -r -` fed a pcap stream on a pipe), or by accel-dump's
 *             own one-line printer when no tcpdump is on PATH
 *
 * The data path never waits for accel-dump: a frame that finds the ring
 * full is counted (cap_drops) and not copied, and the summary on stderr
 * says how many. A frame the stack dropped is still captured, marked:
 * pcapng and the own printer say why; plain pcap and tcpdump's lines
 * cannot, so they are only counted in the summary.
 *
 * The capture ends at -c COUNT frames, SIGINT, SIGTERM or SIGHUP, or when
 * the process exits (what it published is read first). Exit status: 0,
 * 1 for a runtime error (no such process, not allowed, captured by
 * another accel-dump, a write error, a corrupt ring), 2 for a usage error
 * or a bad filter.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adp_print.h"
#include "adp_region.h"
#include "adp_ring.h"
#include "adp_write.h"

#define PROG "accel-dump"

enum {
    EXIT_RUNTIME = 1,
    EXIT_USAGE = 2,
};

/* tcpdump's default and largest snapshot length; the data path copies
 * whole frames (cap_snaplen 0) from ADP_WHOLE_FRAME up. */
#define ADP_SNAPLEN_MAX 262144u
#define ADP_WHOLE_FRAME 65535u

#define POLL_NS 5000000ull    /* between two reads of an empty ring */
#define CHECK_NS 100000000ull /* between two looks at the target */
#define NS_PER_S 1000000000ull

/* What the frame callback tells the loop. */
enum {
    FRAME_COUNT = 1, /* -c COUNT reached */
    FRAME_WERR = 2,  /* the output failed (d->werr) */
};

struct dump_opts {
    const char *wfile; /* -w, or NULL */
    uint64_t count;    /* -c, 0: no limit */
    uint32_t snaplen;  /* of the output, 1..ADP_SNAPLEN_MAX */
    bool pcapng;
    pid_t pid;
    char *filter; /* the arguments after PID joined, or NULL */
};

struct dump {
    struct dump_opts o;
    struct adp_region reg;
    struct adp_ring ring;
    struct bpf_program prog;
    bool filtered;
    struct adp_writer w; /* -w, or pcap to tcpdump */
    bool own_print;      /* no -w and no tcpdump: adp_print to stdout */
    const char *out_name;
    pid_t tcpdump;
    pid_t self;
    int werr;
    uint64_t nread, accepted, written, marked;
    uint64_t drops_start, start_ns;
};

static volatile sig_atomic_t stop_signal;

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " [-w FILE [--pcapng]] [-c COUNT] [-s SNAPLEN] PID "
            "[FILTER...]\n"
            "       " PROG " --help\n"
            "\n"
            "Capture what the accel stack of process PID sends and receives, "
            "as tcpdump\n"
            "captures an interface, frames the stack dropped included "
            "(marked).\n"
            "\n"
            "Options:\n"
            "  -w FILE       write the frames to FILE as pcap with "
            "nanosecond timestamps\n"
            "                (\"-\": standard output); without -w, print "
            "one line per frame\n"
            "                with tcpdump (or a line of " PROG
            "'s own without tcpdump)\n"
            "  --pcapng      write pcapng instead (the default for a FILE "
            "ending in\n"
            "                .pcapng): each frame's direction, and why the "
            "stack dropped\n"
            "                it as a comment\n"
            "  -c COUNT      stop after COUNT frames\n"
            "  -s SNAPLEN    keep at most SNAPLEN bytes of each frame "
            "(default and 0:\n"
            "                %u, whole frames)\n"
            "  -h, --help    show this help and exit\n"
            "\n"
            "FILTER is a tcpdump filter expression (pcap-filter(7)); "
            "several arguments are\n"
            "joined with spaces. The capture ends at COUNT frames, on "
            "SIGINT or SIGTERM,\n"
            "or when PID exits; a summary goes to stderr. The process's "
            "data path never\n"
            "waits: frames that find the capture ring full are counted "
            "and reported.\n"
            "PID's region is read from %s (" ADP_DIR_ENV " overrides).\n"
            "\n"
            "Exit status: 0, 1 for a runtime error (no such accel process, "
            "not allowed,\n"
            "already captured, write error), 2 for a usage error or a bad "
            "filter.\n",
            ADP_SNAPLEN_MAX, BASE_SR_DIR);
}

/* A decimal number in [min, max] into *v; false otherwise. */
static bool
number(const char *s, unsigned long long min, unsigned long long max,
       unsigned long long *v)
{
    char *end;

    if (s[0] < '0' || s[0] > '9')
        return false;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno == 0 && *end == '\0' && *v >= min && *v <= max;
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* The arguments from i on joined with spaces (malloc'd), or NULL. */
static char *
join(int argc, char **argv, int i)
{
    size_t len = 1;
    char *s;

    if (i >= argc)
        return NULL;
    for (int k = i; k < argc; k++)
        len += strlen(argv[k]) + 1;
    s = calloc(1, len);
    if (s == NULL)
        return NULL;
    for (int k = i; k < argc; k++) {
        if (k > i)
            strcat(s, " ");
        strcat(s, argv[k]);
    }
    return s;
}

/* 0 after filling o, -1 for --help (shown), or EXIT_USAGE. */
static int
parse_args(int argc, char **argv, struct dump_opts *o)
{
    static const struct option longs[] = {
        {"help", no_argument, NULL, 'h'},
        {"pcapng", no_argument, NULL, 'P'},
        {NULL, 0, NULL, 0},
    };
    unsigned long long v;
    int c;

    memset(o, 0, sizeof(*o));
    o->snaplen = ADP_SNAPLEN_MAX;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:hs:w:", longs, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (!number(optarg, 1, UINT64_MAX, &v)) {
                fprintf(stderr,
                        PROG ": -c needs a count of frames above 0, "
                             "not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            o->count = v;
            break;
        case 's':
            if (!number(optarg, 0, UINT32_MAX, &v)) {
                fprintf(stderr,
                        PROG ": -s needs a snapshot length in bytes, not "
                             "'%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            o->snaplen =
                v == 0 || v > ADP_SNAPLEN_MAX ? ADP_SNAPLEN_MAX : (uint32_t)v;
            break;
        case 'w':
            if (optarg[0] == '\0') {
                fprintf(stderr, PROG ": -w needs a FILE, or - for standard "
                                     "output\n");
                return EXIT_USAGE;
            }
            o->wfile = optarg;
            break;
        case 'P':
            o->pcapng = true;
            break;
        case 'h':
            usage(stdout);
            return -1;
        case ':':
            fprintf(stderr,
                    PROG ": option -%c needs a value (see " PROG " --help)\n",
                    optopt);
            return EXIT_USAGE;
        default:
            if (optopt != 0)
                fprintf(stderr,
                        PROG ": unknown option -%c (see " PROG " --help)\n",
                        optopt);
            else
                fprintf(stderr,
                        PROG ": unknown option '%s' (see " PROG " --help)\n",
                        argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!number(argv[optind], 1, INT_MAX, &v)) {
        fprintf(stderr,
                PROG ": '%s' is not a process id (see " PROG " --help)\n",
                argv[optind]);
        return EXIT_USAGE;
    }
    o->pid = (pid_t)v;
    if (o->pcapng && o->wfile == NULL) {
        fprintf(stderr, PROG ": --pcapng goes with -w FILE\n");
        return EXIT_USAGE;
    }
    if (o->wfile != NULL && ends_with(o->wfile, ".pcapng"))
        o->pcapng = true;
    o->filter = join(argc, argv, optind + 1);
    if (o->filter == NULL && optind + 1 < argc) {
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_RUNTIME;
    }
    return 0;
}

/* Compile the filter with libpcap as tcpdump does; EXIT_USAGE with
 * libpcap's message when it does not compile. */
static int
compile_filter(struct dump *d)
{
    pcap_t *p;
    int rc = 0;

    if (d->o.filter == NULL || d->o.filter[0] == '\0')
        return 0;
    p = pcap_open_dead(DLT_EN10MB, (int)d->o.snaplen);
    if (p == NULL) {
        fprintf(stderr, PROG ": libpcap: cannot compile filters\n");
        return EXIT_RUNTIME;
    }
    if (pcap_compile(p, &d->prog, d->o.filter, 1, PCAP_NETMASK_UNKNOWN) != 0) {
        fprintf(stderr, PROG ": %s\n", pcap_geterr(p));
        rc = EXIT_USAGE;
    } else {
        d->filtered = true;
    }
    pcap_close(p);
    return rc;
}

static uint64_t
now_ns(clockid_t clk)
{
    struct timespec ts;

    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void
on_signal(int sig)
{
    stop_signal = sig;
}

static void
signals(void)
{
    struct sigaction sa;

    /* Writes restart (a pcap record is never cut in two); the sleep
     * between two reads ends at once whatever SA_RESTART says. A second
     * signal finds the default action: it ends an accel-dump blocked on
     * a stalled reader, and the data path stops copying 3 s later. */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* A reader that goes away (tcpdump, `| head`) is a write error here,
     * not a death: the capture must be given back. */
    signal(SIGPIPE, SIG_IGN);
}

/*
 * tcpdump prints the lines: `tcpdump -n -l -r -` with a pipe on its stdin.
 * It runs in its own process group so that a Ctrl-C reaches accel-dump
 * only: tcpdump then prints what it was given and ends at the pipe's end.
 * 0, or -errno (ENOENT: no tcpdump on PATH).
 */
static int
spawn_tcpdump(struct dump *d)
{
    char *argv[] = {"tcpdump", "-n", "-l", "-r", "-", NULL};
    extern char **environ;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t def;
    int fds[2], rc;

    if (pipe2(fds, O_CLOEXEC) != 0)
        return -errno;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], STDIN_FILENO);
    posix_spawnattr_init(&at);
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGHUP);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at,
                             POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
    rc = posix_spawnp(&d->tcpdump, "tcpdump", &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fds[0]);
    if (rc == 0)
        d->w.f = fdopen(fds[1], "w");
    if (rc != 0 || d->w.f == NULL) {
        close(fds[1]);
        if (rc == 0) { /* fdopen failed: tcpdump reads an empty pipe */
            rc = errno;
            waitpid(d->tcpdump, NULL, 0);
        }
        d->tcpdump = 0;
        return -rc;
    }
    return 0;
}

/* Open what the frames go to. 0, or EXIT_RUNTIME after one line. */
static int
open_output(struct dump *d)
{
    const struct base_sr_hdr *h = d->reg.h;
    char ifname[sizeof(h->iface) + 1], desc[128];
    int rc;

    d->w.snaplen = d->o.snaplen;
    d->w.fmt = d->o.pcapng ? ADP_PCAPNG : ADP_PCAP;
    if (d->o.wfile != NULL && strcmp(d->o.wfile, "-") == 0) {
        d->w.f = stdout;
        d->out_name = "standard output";
    } else if (d->o.wfile != NULL) {
        d->w.f = fopen(d->o.wfile, "wbe");
        d->out_name = d->o.wfile;
        if (d->w.f == NULL) {
            fprintf(stderr, PROG ": cannot write %s: %s\n", d->o.wfile,
                    strerror(errno));
            return EXIT_RUNTIME;
        }
    } else {
        rc = spawn_tcpdump(d);
        if (rc == -ENOENT || rc == -EACCES) {
            fprintf(stderr, PROG ": no tcpdump to print the frames: one "
                                 "line of " PROG "'s own per frame\n");
            d->own_print = true;
            d->out_name = "standard output";
            return 0;
        }
        if (rc != 0) {
            fprintf(stderr, PROG ": cannot run tcpdump: %s\n", strerror(-rc));
            return EXIT_RUNTIME;
        }
        d->out_name = "tcpdump";
    }
    snprintf(ifname, sizeof(ifname), "%.*s", (int)sizeof(h->iface), h->iface);
    snprintf(desc, sizeof(desc),
             "accel process %d (%.*s): what its stack sends and receives",
             (int)d->o.pid, (int)sizeof(h->comm), h->comm);
    rc = adp_write_begin(&d->w, ifname, desc);
    if (rc != 0) {
        fprintf(stderr, PROG ": %s: %s\n", d->out_name, strerror(-rc));
        return EXIT_RUNTIME;
    }
    return 0;
}

/* Each record read: cut to the snapshot length, filter, write, count. */
static int
on_frame(void *arg, const struct adp_frame *in)
{
    struct dump *d = arg;
    struct adp_frame f = *in;
    int rc;

    /* The data path cuts frames to cap_snaplen; a capture taken over from
     * a dead accel-dump may still run with that one's length. */
    if (f.caplen > d->o.snaplen)
        f.caplen = d->o.snaplen;
    if (d->filtered) {
        struct pcap_pkthdr ph = {.caplen = f.caplen, .len = f.origlen};

        if (pcap_offline_filter(&d->prog, &ph, f.data) == 0)
            return 0;
    }
    d->accepted++;
    rc =
        d->own_print ? adp_print_frame(stdout, &f) : adp_write_frame(&d->w, &f);
    if (rc != 0) {
        d->werr = -rc;
        return FRAME_WERR;
    }
    d->written++;
    if (f.drop != BASE_SR_CAP_KEPT)
        d->marked++;
    return d->o.count != 0 && d->written >= d->o.count ? FRAME_COUNT : 0;
}

static int
flush_output(struct dump *d)
{
    FILE *f = d->own_print ? stdout : d->w.f;

    errno = 0;
    if (fflush(f) == 0)
        return 0;
    d->werr = errno != 0 ? errno : EIO;
    return FRAME_WERR;
}

/* The output failed: a reader that went away ends the capture quietly. */
static int
write_failed(struct dump *d)
{
    if (d->werr == EPIPE)
        return 0; /* tcpdump's own status decides, see finish() */
    fprintf(stderr, PROG ": %s: %s\n", d->out_name, strerror(d->werr));
    return EXIT_RUNTIME;
}

/* The capture is not ours any more: the data path gave up on us (we did
 * not run for 3 s: stopped, swapped out) or another accel-dump took it. */
static int
lost_capture(struct dump *d, pid_t owner)
{
    pid_t holder = owner;

    if (owner == 0 && adp_cap_resume(&d->reg, d->self, &holder) == 0) {
        fprintf(stderr,
                PROG ": the capture of %d had stopped (" PROG " did not "
                     "run for 3 s); resumed, frames are missing\n",
                (int)d->o.pid);
        return 0;
    }
    fprintf(stderr, PROG ": the capture of %d was taken over by " PROG " %d\n",
            (int)d->o.pid, (int)holder);
    return EXIT_RUNTIME;
}

/* Read the ring until a stop; the exit status. */
static int
capture(struct dump *d)
{
    uint64_t last_check = now_ns(CLOCK_MONOTONIC);
    const char *gone = NULL;
    char err[256];

    for (;;) {
        uint64_t before = d->nread;
        pid_t owner;
        int rc;

        adp_cap_alive(&d->reg);
        rc = adp_ring_read(&d->ring, on_frame, d, &d->nread, err, sizeof(err));
        if (d->nread != before && rc != FRAME_WERR && flush_output(d) != 0)
            rc = FRAME_WERR;
        if (rc == ADP_RING_CORRUPT) {
            fprintf(stderr, PROG ": %s: capture ended\n", err);
            return EXIT_RUNTIME;
        }
        if (rc == FRAME_WERR)
            return write_failed(d);
        if (rc == FRAME_COUNT)
            return 0;
        if (gone != NULL) { /* and its last frames are read */
            fprintf(stderr, PROG ": process %d %s\n", (int)d->o.pid, gone);
            return 0;
        }
        if (stop_signal != 0)
            return 0;
        owner = adp_cap_owner(&d->reg);
        if (owner != d->self && (rc = lost_capture(d, owner)) != 0)
            return rc;
        if (now_ns(CLOCK_MONOTONIC) - last_check >= CHECK_NS) {
            last_check = now_ns(CLOCK_MONOTONIC);
            gone = adp_region_gone(&d->reg);
            if (gone != NULL)
                continue; /* one more read: what it published last */
        }
        if (d->nread == before) {
            struct timespec ts = {0, (long)POLL_NS};

            nanosleep(&ts, NULL); /* a signal ends it early */
        }
    }
}

static void
plural(uint64_t n, const char *one, const char *many)
{
    fprintf(stderr, "%" PRIu64 " %s\n", n, n == 1 ? one : many);
}

/* Give the capture back, close the output, wait for tcpdump, sum up. */
static int
finish(struct dump *d, int status)
{
    uint64_t drops = __atomic_load_n(&d->reg.h->cap_drops, __ATOMIC_RELAXED) -
                     d->drops_start;
    struct adp_write_stats st = {
        .start_ns = d->start_ns,
        .end_ns = now_ns(CLOCK_REALTIME),
        .ring_drops = drops,
        .accepted = d->accepted,
        .written = d->written,
    };
    int rc, ws = 0;

    adp_cap_release(&d->reg, d->self);
    if (d->own_print) {
        fflush(stdout);
    } else if (d->w.f != NULL) {
        rc = d->werr == 0 ? adp_write_end(&d->w, &st) : 0;
        if (rc != 0 && rc != -EPIPE && status == 0) {
            fprintf(stderr, PROG ": %s: %s\n", d->out_name, strerror(-rc));
            status = EXIT_RUNTIME;
        }
        if (d->w.f != stdout && fclose(d->w.f) != 0 && errno != EPIPE &&
            status == 0 && d->werr == 0) {
            fprintf(stderr, PROG ": %s: %s\n", d->out_name, strerror(errno));
            status = EXIT_RUNTIME;
        }
    }
    if (d->tcpdump > 0) {
        while (waitpid(d->tcpdump, &ws, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
            fprintf(stderr, PROG ": tcpdump failed (%s %d)\n",
                    WIFEXITED(ws) ? "status" : "signal",
                    WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
            if (status == 0)
                status = EXIT_RUNTIME;
        }
    }
    plural(d->written, "frame captured", "frames captured");
    if (d->filtered)
        plural(d->nread, "frame received by filter",
               "frames received by filter");
    plural(drops,
           "frame dropped by the ring (the writer was too slow; the data "
           "path did not wait)",
           "frames dropped by the ring (the writer was too slow; the data "
           "path did not wait)");
    plural(d->marked, "frame the stack dropped (marked)",
           "frames the stack dropped (marked)");
    return status;
}

/* Take the capture of d->o.pid; 0 or EXIT_RUNTIME after one line. */
static int
claim(struct dump *d)
{
    const struct base_sr_hdr *h = d->reg.h;
    uint32_t region_snap = d->o.snaplen >= ADP_WHOLE_FRAME ? 0 : d->o.snaplen;
    pid_t holder = 0;

    if (adp_cap_claim(&d->reg, region_snap, d->self, &holder) != 0) {
        fprintf(stderr, PROG ": %d is being captured by " PROG " %d\n",
                (int)d->o.pid, (int)holder);
        return EXIT_RUNTIME;
    }
    d->drops_start = __atomic_load_n(&h->cap_drops, __ATOMIC_RELAXED);
    d->start_ns = now_ns(CLOCK_REALTIME);
    adp_region_ring(&d->reg, &d->ring);
    return 0;
}

static void
banner(const struct dump *d)
{
    const struct base_sr_hdr *h = d->reg.h;

    fprintf(stderr, PROG ": capturing %d (%.*s)", (int)d->o.pid,
            (int)sizeof(h->comm), h->comm);
    if (h->iface[0] != '\0')
        fprintf(stderr, " on %.*s", (int)sizeof(h->iface), h->iface);
    fprintf(stderr, ", link-type EN10MB (Ethernet), snapshot length %u bytes\n",
            d->o.snaplen);
    if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == BASE_SR_KERNEL_ONLY)
        fprintf(stderr,
                PROG ": %d has no data path yet (all its sockets are on "
                     "the kernel): frames appear once it has one\n",
                (int)d->o.pid);
}

/* From the filter on: the capture, start to summary; the exit status. */
static int
run(struct dump *d)
{
    char err[PATH_MAX + 256];
    int rc;

    rc = compile_filter(d);
    if (rc != 0)
        return rc;
    if (adp_region_open(&d->reg, adp_region_dir(), d->o.pid, err,
                        sizeof(err)) != ADP_OPEN_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        return EXIT_RUNTIME;
    }
    d->self = getpid();
    signals();
    rc = claim(d);
    if (rc == 0) {
        rc = open_output(d);
        if (rc != 0)
            adp_cap_release(&d->reg, d->self);
    }
    if (rc == 0) {
        banner(d);
        rc = finish(d, capture(d));
    }
    adp_region_close(&d->reg);
    return rc;
}

int
main(int argc, char **argv)
{
    struct dump d;
    int rc;

    memset(&d, 0, sizeof(d));
    d.reg.fd = -1;
    rc = parse_args(argc, argv, &d.o);
    if (rc != 0)
        return rc < 0 ? 0 : rc; /* -1: --help shown */
    rc = run(&d);
    if (d.filtered)
        pcap_freecode(&d.prog);
    free(d.o.filter);
    return rc;
}
