/*
 * -w SECONDS: redraw every SECONDS. The process list and a process's
 * summary become rate views (frames/s, Mbit/s, accepts/s, retrans/s,
 * drops/s from the change between two reads, 80 columns); the socket and
 * --reasons views are redrawn as they are. On a terminal each redraw
 * clears the screen (ANSI codes); otherwise the blocks follow each other
 * separated by a blank line, so the output can be read by a program.
 * The first block has no previous read: its rates show as "-". -c N ends
 * after N blocks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ast.h"

/* The values rates are computed from. */
enum {
    V_RX_FRAMES,
    V_TX_FRAMES,
    V_RX_BYTES,
    V_TX_BYTES,
    V_ACCEPT,
    V_CONNECT,
    V_RETRANS,
    V_DROPS,
    NV,
};

/* One process's values at one read. */
struct sample {
    int pid;
    uint64_t starttime; /* the same process, not a reused pid */
    uint64_t read_ns;
    uint64_t v[NV];
};

struct samples {
    struct sample *v;
    size_t n;
};

static void
take(const struct ast_snap *s, struct sample *out)
{
    out->pid = s->pid;
    out->starttime = s->hdr.starttime;
    out->read_ns = s->read_ns;
    out->v[V_RX_FRAMES] = ast_snap_value(s, "rx_frames");
    out->v[V_TX_FRAMES] = ast_snap_value(s, "tx_frames");
    out->v[V_RX_BYTES] = ast_snap_value(s, "rx_bytes");
    out->v[V_TX_BYTES] = ast_snap_value(s, "tx_bytes");
    out->v[V_ACCEPT] = ast_snap_value(s, "tcp_accept");
    out->v[V_CONNECT] = ast_snap_value(s, "tcp_connect");
    out->v[V_RETRANS] = ast_snap_value(s, "tcp_retrans_segs");
    out->v[V_DROPS] = ast_snap_drops(s);
}

/*
 * Per-second rates of cur against the previous read of the same process;
 * false when there is none (the first block, a new process).
 */
static bool
rates(const struct samples *prev, const struct sample *cur, double out[NV])
{
    for (size_t i = 0; i < prev->n; i++) {
        const struct sample *p = &prev->v[i];
        double dt;

        if (p->pid != cur->pid || p->starttime != cur->starttime)
            continue;
        if (cur->read_ns <= p->read_ns)
            return false;
        dt = (double)(cur->read_ns - p->read_ns) / 1e9;
        for (int k = 0; k < NV; k++)
            out[k] = cur->v[k] >= p->v[k] ? (double)(cur->v[k] - p->v[k]) / dt
                                          : 0; /* never negative */
        return true;
    }
    return false;
}

/* A rate in at most 7 characters: "12.5", "123.4k", "-" when unknown. */
static void
fmt_rate(bool valid, double v, char *buf, size_t len)
{
    static const char units[] = "kMGTPE";
    int u = -1;

    if (!valid) {
        snprintf(buf, len, "-");
        return;
    }
    while (v >= 9999.95 && u < 5) {
        v /= 1000.0;
        u++;
    }
    if (u < 0)
        snprintf(buf, len, "%.1f", v);
    else
        snprintf(buf, len, "%.1f%c", v, units[u]);
}

static void
print_list(FILE *f, const struct ast_collect *c, const struct samples *prev,
           struct samples *cur)
{
    fprintf(f, "%7s %-15s %7s %7s %7s %7s %6s %6s %6s\n", "PID", "COMMAND",
            "RX f/s", "TX f/s", "RX Mb/s", "TX Mb/s", "ACC/s", "RTX/s",
            "DROP/s");
    for (size_t i = 0; i < c->n; i++) {
        struct sample *s = &cur->v[cur->n++];
        char b[NV][16];
        double r[NV];
        bool ok;

        take(&c->snaps[i], s);
        ok = rates(prev, s, r);
        fmt_rate(ok, r[V_RX_FRAMES], b[0], sizeof(b[0]));
        fmt_rate(ok, r[V_TX_FRAMES], b[1], sizeof(b[1]));
        fmt_rate(ok, r[V_RX_BYTES] * 8 / 1e6, b[2], sizeof(b[2]));
        fmt_rate(ok, r[V_TX_BYTES] * 8 / 1e6, b[3], sizeof(b[3]));
        fmt_rate(ok, r[V_ACCEPT], b[4], sizeof(b[4]));
        fmt_rate(ok, r[V_RETRANS], b[5], sizeof(b[5]));
        fmt_rate(ok, r[V_DROPS], b[6], sizeof(b[6]));
        fprintf(f, "%7d %-15s %7s %7s %7s %7s %6s %6s %6s\n", s->pid,
                c->snaps[i].hdr.comm, b[0], b[1], b[2], b[3], b[4], b[5], b[6]);
    }
    if (c->n == 0)
        fprintf(f, "no accelerated process\n");
    ast_text_others(f, c->others);
}

static void
print_process(FILE *f, const struct ast_snap *snap, const struct samples *prev,
              struct samples *cur)
{
    static const struct {
        const char *label;
        int v;
        double scale; /* of the rate: bytes -> Mbit */
        const char *unit;
    } rows[] = {
        {"rx frames", V_RX_FRAMES, 1, "/s"},
        {"tx frames", V_TX_FRAMES, 1, "/s"},
        {"rx bytes", V_RX_BYTES, 8 / 1e6, "Mbit/s"},
        {"tx bytes", V_TX_BYTES, 8 / 1e6, "Mbit/s"},
        {"tcp accepts", V_ACCEPT, 1, "/s"},
        {"tcp connects", V_CONNECT, 1, "/s"},
        {"tcp retransmits", V_RETRANS, 1, "/s"},
        {"drops", V_DROPS, 1, "/s"},
    };
    struct sample *s = &cur->v[cur->n++];
    char up[32], st[16];
    double r[NV];
    bool ok;

    take(snap, s);
    ok = rates(prev, s, r);
    ast_fmt_duration(ast_proc_uptime(snap->hdr.starttime), up, sizeof(up));
    fprintf(f, "process %d (%s), state %s, uptime %s\n", snap->pid,
            snap->hdr.comm, ast_state_name(snap->hdr.state, st, sizeof(st)),
            up);
    fprintf(f, "  %-16s %20s %14s\n", "", "total", "per second");
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char rate[16];

        fmt_rate(ok, r[rows[i].v] * rows[i].scale, rate, sizeof(rate));
        fprintf(f, "  %-16s %20" PRIu64 " %14s %s\n", rows[i].label,
                s->v[rows[i].v], rate, rows[i].unit);
    }
    if (snap->have_port)
        fprintf(f, "  pool: %" PRIu32 " of %" PRIu32 " mbufs in use\n",
                snap->port.pool_in_use, snap->port.pool_size);
    fprintf(f,
            "  sockets: %" PRIu64 " accelerated, %" PRIu64 " on the kernel\n",
            ast_snap_value(snap, "sock_accel"),
            ast_snap_value(snap, "sock_kernel"));
}

/* One block: the header line, then the view. */
static void
draw(FILE *f, const struct ast_opts *o, const struct ast_collect *c,
     const struct samples *prev, struct samples *cur)
{
    char when[16];
    time_t t = time(NULL);
    struct tm tm;

    strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
    fprintf(f, AST_PROG " every %.1f s at %s\n", o->watch_s, when);
    if (o->view == AST_VIEW_LIST || o->view == AST_VIEW_SUMMARY) {
        if (o->pid != 0 && c->n == 1)
            print_process(f, &c->snaps[0], prev, cur);
        else
            print_list(f, c, prev, cur);
        return;
    }
    ast_render(f, o, c);
}

static void
sleep_until(uint64_t deadline_ns)
{
    struct timespec ts = {
        .tv_sec = (time_t)(deadline_ns / 1000000000ull),
        .tv_nsec = (long)(deadline_ns % 1000000000ull),
    };

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

int
ast_watch(const struct ast_opts *o)
{
    uint64_t interval = (uint64_t)(o->watch_s * 1e9), next = ast_now_ns();
    struct samples prev = {0}, cur = {0};
    bool tty = isatty(STDOUT_FILENO) == 1;
    int rc = AST_EXIT_OK;

    for (long i = 0; o->count == 0 || i < o->count; i++) {
        struct ast_collect c;

        if (i > 0) {
            next += interval;
            if (next < ast_now_ns()) /* fell behind: from now on */
                next = ast_now_ns();
            sleep_until(next);
        }
        rc = ast_collect(o, o->view == AST_VIEW_SOCKS, &c);
        if (rc != 0)
            break;
        cur.v = calloc(c.n != 0 ? c.n : 1, sizeof(*cur.v));
        cur.n = 0;
        if (cur.v == NULL) {
            ast_collect_free(&c);
            fprintf(stderr, AST_PROG ": out of memory\n");
            rc = AST_EXIT_FAIL;
            break;
        }
        if (tty)
            fputs("\033[H\033[2J", stdout);
        else if (i > 0)
            fputc('\n', stdout);
        draw(stdout, o, &c, &prev, &cur);
        fflush(stdout);
        ast_collect_free(&c);
        free(prev.v);
        prev = cur;
        cur.v = NULL;
    }
    free(prev.v);
    return rc;
}
