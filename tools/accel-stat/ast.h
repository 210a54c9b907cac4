/*
 * accel-stat: the reader of the live state regions accelerated processes
 * publish in /dev/shm (base/statreg_layout.h is the whole contract). The
 * tool maps them read-only and never waits for the process: every copy is
 * bounded (seqlock retries with a limit), and the one word it ever writes,
 * want_socks_until_ns, goes through a separate writable mapping.
 *
 * Files, one concern each (all functions ast_):
 *   opts.c      the command line and --help
 *   proc.c      /proc: is a pid alive and the same process, its fds, users
 *   region.c    find, open, validate and map regions; stale ones removed
 *   snap.c      copy a region (counters by name, the port and socket table
 *               under snap_seq, the kernel ring record by record)
 *   request.c   ask processes for a fresh socket table, wait a bounded time
 *   sock.c      the socket table: states, filters, the ss-like view
 *   kern.c      --reasons: the sockets left on the kernel, still open
 *   fmt_text.c  the process list and the one-process summary
 *   fmt_json.c  --json;  fmt_prom.c  --prometheus
 *   view.c      collect the copies a view needs, draw it in its format
 *   watch.c     -w: redraws with per-second rates
 *   util.c      number, time and text helpers shared by the views
 *   main.c      picks the view
 *
 * Return conventions: functions returning int give 0 on success or an
 * exit status (AST_EXIT_*) after printing the reason on stderr, unless
 * their comment says otherwise.
 */
#ifndef ACCEL_TOOLS_ACCEL_STAT_AST_H
#define ACCEL_TOOLS_ACCEL_STAT_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "statreg_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AST_PROG "accel-stat"

enum {
    AST_EXIT_OK = 0,
    AST_EXIT_FAIL = 1,  /* no such process, no access */
    AST_EXIT_USAGE = 2, /* bad command line */
};

/* ---- opts.c --------------------------------------------------------- */

enum ast_view {
    AST_VIEW_LIST,    /* no PID: one line per process */
    AST_VIEW_SUMMARY, /* PID: the summary */
    AST_VIEW_SOCKS,   /* -t -u -l -i or a filter: the socket table */
    AST_VIEW_REASONS, /* --reasons: the sockets left on the kernel */
};

enum ast_format {
    AST_FMT_TEXT,
    AST_FMT_JSON,
    AST_FMT_PROM,
};

/* Which sockets the socket view shows. */
struct ast_filter {
    bool tcp, udp;    /* neither set: both */
    uint32_t states;  /* bit (1 << enum base_sr_tcp_state) per state */
    int port;         /* local or remote port, -1: any */
    int sport, dport; /* local, remote port, -1: any */
    bool have_addr;
    uint8_t addr[16]; /* IPv6, or IPv4 mapped (::ffff:a.b.c.d) */
};

struct ast_opts {
    enum ast_view view;
    enum ast_format format;
    int pid;   /* 0: every process */
    bool all;  /* -a: every counter (summary), every state (sockets) */
    bool info; /* -i: TCP details under each socket */
    bool help;
    struct ast_filter filter;
    double watch_s; /* -w: seconds between redraws, 0: no watch */
    long count;     /* -c: redraws before exiting, 0: until interrupted */
};

/* Parse argv into *o. 0, or AST_EXIT_USAGE after one line on stderr. */
int ast_opts_parse(int argc, char **argv, struct ast_opts *o);
void ast_usage(FILE *f);

/* ---- proc.c --------------------------------------------------------- */

enum ast_liveness {
    AST_PROC_GONE = 0,    /* no such process (or a zombie) */
    AST_PROC_ALIVE = 1,   /* running; *starttime is set */
    AST_PROC_UNKNOWN = 2, /* /proc did not say: never treated as gone */
};

/* Is pid running, and since when (field 22 of /proc/<pid>/stat)? */
enum ast_liveness ast_proc_state(int pid, uint64_t *starttime);

/*
 * 1 when /proc/<pid>/fd/<fd> is exactly "socket:[inode]" (the fd still is
 * that socket), 0 when it is not, -1 when /proc cannot be read (EACCES).
 */
int ast_proc_fd_is_socket(int pid, int fd, uint64_t inode);

/* Seconds the process has been running (from its starttime), or -1. */
double ast_proc_uptime(uint64_t starttime);

/* The user name of uid, or its number, into buf. */
void ast_user_name(uint32_t uid, char *buf, size_t len);

/* ---- region.c ------------------------------------------------------- */

/* One region, open and mapped read-only. */
struct ast_region {
    int pid;
    int fd;
    const unsigned char *map;
    size_t size;
    char path[4096];
};

/* What opening a region found. */
enum ast_open_rc {
    AST_OPEN_OK = 0,
    AST_OPEN_NONE,   /* no file, or a stale one (removed when possible) */
    AST_OPEN_EACCES, /* a live process of another user */
    AST_OPEN_SKIP,   /* live but not usable (newer version, not ready) */
    AST_OPEN_ERROR,  /* an unexpected error, printed */
};

/* The directory of the regions: $ACCEL_STAT_DIR, or BASE_SR_DIR. */
const char *ast_dir(void);

/*
 * Open the region of pid in dir: checked (magic, version, sizes) and the
 * process checked alive and the same (starttime). A stale region is
 * removed when we may (one line on stderr) and reported AST_OPEN_NONE.
 * A newer version says so on stderr; with loud, every SKIP and ERROR
 * says why (for a PID given on the command line).
 */
enum ast_open_rc ast_region_open(const char *dir, int pid, bool loud,
                                 struct ast_region *r);
void ast_region_close(struct ast_region *r);

/* Every usable region of dir, by pid; *others counts AST_OPEN_EACCES. */
struct ast_region_list {
    struct ast_region *v;
    size_t n;
    unsigned others;
};

/* 0, or AST_EXIT_FAIL when dir cannot be read (printed). */
int ast_region_scan(const char *dir, struct ast_region_list *l);
void ast_region_list_free(struct ast_region_list *l);

/* ---- snap.c --------------------------------------------------------- */

struct ast_counter {
    const char *name;
    uint64_t value;
};

/* A copy of one region, consistent part by part. */
struct ast_snap {
    int pid;
    struct base_sr_hdr hdr; /* strings NUL-terminated */
    uint64_t read_ns;       /* CLOCK_MONOTONIC of the copy */
    char user[33];

    struct ast_counter *ctr; /* in the region's order */
    uint32_t nctr;
    char *names; /* storage of ctr[].name */

    const char **why; /* the reasons' texts, indexed by base_sr_kern.why */
    uint32_t nwhy;
    char *whys;

    bool have_snap; /* the port and the socket table below are valid */
    bool have_port;
    struct base_sr_port port;
    struct base_sr_sock *socks;
    uint32_t nsocks;
    bool socks_asked; /* the table was requested for this copy ... */
    bool socks_fresh; /* ... and the process refreshed it since */

    struct base_sr_kern *kern; /* consistent ring records, newest first */
    uint32_t nkern;
};

/* Copy r into *s (ast_snap_free it). 0, or -1 on allocation failure. */
int ast_snap_read(const struct ast_region *r, struct ast_snap *s);
void ast_snap_free(struct ast_snap *s);

/* The counter called name, or NULL when the region has no such counter. */
const struct ast_counter *ast_snap_counter(const struct ast_snap *s,
                                           const char *name);
/* Its value, or 0 when missing. */
uint64_t ast_snap_value(const struct ast_snap *s, const char *name);
/* The sum of every counter whose name contains "drop". */
uint64_t ast_snap_drops(const struct ast_snap *s);

/* The port's counters (struct base_sr_port) by name, for every view. */
struct ast_port_field {
    const char *name;
    size_t off; /* of a uint64_t in struct base_sr_port */
};
extern const struct ast_port_field ast_port_fields[]; /* ends with NULL */
uint64_t ast_port_value(const struct base_sr_port *p,
                        const struct ast_port_field *pf);

/* "up", "joined", "kernel-only", "exiting" or "state N". */
const char *ast_state_name(uint32_t state, char *buf, size_t len);

/* Age of the last snapshot in seconds, or -1 when there is none. */
double ast_snap_age(const struct ast_snap *s);

/* ---- request.c ------------------------------------------------------ */

/*
 * Ask the processes of v for their socket table (want_socks_until_ns =
 * now + 3 s through a writable mapping, when we may open the file
 * O_RDWR), then wait up to 1.5 s, polling every 20 ms, until each of
 * those running a data path has taken a snapshot after the request.
 * Returns the time of the request (CLOCK_MONOTONIC).
 */
uint64_t ast_request_socks(struct ast_region *v, size_t n);

/* ---- sock.c --------------------------------------------------------- */

/* ss's name (ESTAB, LISTEN, UNCONN...) and --state's (established...). */
const char *ast_sock_state_ss(uint8_t state);
const char *ast_sock_state_name(uint8_t state);
/* The state bit of a --state NAME (0: unknown name). */
uint32_t ast_sock_state_parse(const char *name);
/* The states shown without --state: -a all, -l listening, or the rest. */
uint32_t ast_sock_default_states(bool all, bool listening);

bool ast_sock_match(const struct ast_filter *f, const struct base_sr_sock *s);

/* "10.0.0.1" or "fd00::1" (the family's text form). */
void ast_addr_str(uint8_t family, const uint8_t addr[16], char *buf,
                  size_t len);
/* "10.0.0.1:80", "[fd00::1]:80", port 0 as "*". */
void ast_endpoint_str(uint8_t family, const uint8_t addr[16], uint16_t port_n,
                      char *buf, size_t len);
const char *ast_proto_name(uint8_t proto);

/* The socket view of snaps (text). */
void ast_sock_print(FILE *f, const struct ast_snap *snaps, size_t n,
                    const struct ast_opts *o);

/* ---- kern.c --------------------------------------------------------- */

/* A kernel ring record whose fd still is that socket. */
struct ast_kern_live {
    const struct base_sr_kern *rec;
    const char *why; /* the reason's text */
};

/*
 * The records of s still open (readlink check), one per (fd, inode), by
 * fd: a malloc'd array (free it) of *n entries; *unverified counts those
 * /proc did not let us check.
 */
struct ast_kern_live *ast_kern_live(const struct ast_snap *s, size_t *n,
                                    unsigned *unverified);

/* The --reasons view (text). */
void ast_kern_print(FILE *f, const struct ast_snap *snaps, size_t n);

/* ---- fmt_text.c, fmt_json.c, fmt_prom.c ----------------------------- */

void ast_text_list(FILE *f, const struct ast_snap *snaps, size_t n);
/* "N processes of other users not shown: run as root", when N > 0. */
void ast_text_others(FILE *f, unsigned others);
void ast_text_summary(FILE *f, const struct ast_snap *s, bool all);

void ast_json_print(FILE *f, const struct ast_snap *snaps, size_t n,
                    unsigned others, const struct ast_opts *o);
void ast_prom_print(FILE *f, const struct ast_snap *snaps, size_t n);

/* ---- watch.c -------------------------------------------------------- */

/* Redraw the chosen view every o->watch_s seconds; the exit status. */
int ast_watch(const struct ast_opts *o);

/* ---- view.c: shared by main.c and watch.c ------------------------- */

/* The snapshots a view needs: the PID's, or every readable process's. */
struct ast_collect {
    struct ast_snap *snaps;
    size_t n;
    unsigned others;
};

/*
 * Open and copy the regions for o (the PID's, or all); ask for the socket
 * table first when with_socks. 0 or an exit status (printed).
 */
int ast_collect(const struct ast_opts *o, bool with_socks,
                struct ast_collect *c);
void ast_collect_free(struct ast_collect *c);

/* Draw the view of o from c in o's format. */
void ast_render(FILE *f, const struct ast_opts *o, const struct ast_collect *c);

/* ---- util.c --------------------------------------------------------- */

uint64_t ast_now_ns(void);      /* CLOCK_MONOTONIC */
uint64_t ast_realtime_ns(void); /* CLOCK_REALTIME */
void ast_sleep_ns(uint64_t ns);

/* A count in at most 6 characters: "123456", "1.2M", "123.4G". */
void ast_fmt_count(uint64_t v, char *buf, size_t len);
/* "3d 04:05:06", "04:05:06". */
void ast_fmt_duration(double seconds, char *buf, size_t len);
/* Copy at most width characters of s, ending in '~' when cut. */
void ast_fmt_trunc(const char *s, size_t width, char *buf, size_t len);

/* Replace the control characters of s by '?' (text from a region). */
void ast_printable(char *s);

/*
 * Write s to f with bad UTF-8 replaced by U+FFFD and, for JSON, control
 * characters, quotes and backslashes escaped (json) or, for Prometheus
 * label values, backslash, quote and newline escaped (!json).
 */
void ast_put_escaped(FILE *f, const char *s, bool json);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_TOOLS_ACCEL_STAT_AST_H */
