/*
 * accel-stat's command line: the view (process list, one process's
 * summary, the socket table, the sockets left on the kernel), its format
 * (text, --json, --prometheus), -w's redraws and the socket filters. Short
 * options group as ss's do (-tlni); a long option takes its value as
 * --opt=VALUE or as the next argument. Every mistake is one line on
 * stderr and exit status 2.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

#define WATCH_MAX_S 3600.0

void
ast_usage(FILE *f)
{
    fprintf(f,
            "usage: " AST_PROG " [PID]                the processes, or one "
            "process's summary\n"
            "       " AST_PROG " -a PID               ... with every "
            "counter\n"
            "       " AST_PROG " -t|-u|-l [-a] [-i] [FILTERS] [PID]  the "
            "sockets, like ss -tn\n"
            "       " AST_PROG " --reasons [PID]      the sockets left on "
            "the kernel, and why\n"
            "       " AST_PROG " -w [SECONDS] [-c N] [PID]  redraw with "
            "per-second rates\n"
            "       " AST_PROG " --json | --prometheus [PID] [...]\n"
            "\n"
            "Shows what accelerated processes publish in " BASE_SR_DIR
            "/" BASE_SR_PREFIX "PID\n"
            "(readable by their user and root). It only reads: the process is "
            "never stopped\nor waited for. Regions of dead processes are "
            "removed on the way.\n"
            "\n"
            "Options:\n"
            "  -h, --help          show this help and exit\n"
            "  -a, --all           every counter (summary); every state "
            "(sockets)\n"
            "  -t, --tcp           TCP sockets\n"
            "  -u, --udp           UDP sockets\n"
            "  -l, --listening     listening sockets only (and unconnected "
            "UDP)\n"
            "  -i, --info          TCP details: rto, rtt/rttvar, mss, cwnd, "
            "ssthresh, bytes\n"
            "  -n, --numeric, -p   accepted for ss's habits: always numeric, "
            "always the pid\n"
            "  --port N            local or remote port N\n"
            "  --sport N, --dport N  local, remote port N\n"
            "  --addr ADDR         local or remote address (IPv4 or IPv6)\n"
            "  --state NAME        established, syn-sent, syn-recv, "
            "fin-wait-1, fin-wait-2,\n"
            "                      time-wait, close, close-wait, last-ack, "
            "listening,\n"
            "                      closing (or all, connected); repeat for "
            "several\n"
            "  --reasons           sockets left on the kernel, still open, "
            "with the reason\n"
            "  -w, --watch[=SECONDS]  redraw every SECONDS (default 1) with "
            "rates; a number\n"
            "                      from 0.1 to 3600 right after -w is its "
            "SECONDS\n"
            "  -c, --count N       with -w: stop after N redraws\n"
            "  --json              the view as JSON\n"
            "  --prometheus        counters and gauges in Prometheus's text "
            "format\n"
            "\n"
            "Environment: ACCEL_STAT_DIR, the directory of the regions "
            "(default " BASE_SR_DIR ").\n"
            "Exit status: 0; 1 when PID has no region or it cannot be read; "
            "2 usage.\n");
}

/* Parsing state: the raw flags before they become a view. */
struct parse {
    struct ast_opts *o;
    bool tcp, udp, listening, socks, reasons, json, prom, have_count;
    uint32_t states; /* --state, OR-ed */
};

static int
bad(const char *fmt, const char *arg)
{
    fprintf(stderr, AST_PROG ": ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see " AST_PROG " --help)\n");
    return AST_EXIT_USAGE;
}

static int
parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int
parse_seconds(const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= 0.1) ||
        v > WATCH_MAX_S)
        return -1;
    *out = v;
    return 0;
}

static int
parse_addr(const char *arg, uint8_t out[16])
{
    char buf[INET6_ADDRSTRLEN + 2];
    size_t n = strlen(arg);
    struct in_addr a4;

    if (n >= 2 && arg[0] == '[' && arg[n - 1] == ']' && n - 2 < sizeof(buf)) {
        memcpy(buf, arg + 1, n - 2);
        buf[n - 2] = '\0';
        arg = buf;
    }
    if (inet_pton(AF_INET, arg, &a4) == 1) {
        memset(out, 0, 10);
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &a4, 4);
        return 0;
    }
    return inet_pton(AF_INET6, arg, out) == 1 ? 0 : -1;
}

/* An option that takes a value: --opt=VALUE, --opt VALUE, -xVALUE, -x V. */
static int
take_value(const char *name, const char *inl, int argc, char **argv, int *i,
           const char **val)
{
    if (inl != NULL) {
        *val = inl;
        return 0;
    }
    if (*i + 1 >= argc)
        return bad("%s needs a value", name);
    *val = argv[++*i];
    return 0;
}

static int
port_option(const char *name, const char *val, int *out)
{
    long v;

    if (parse_long(val, 0, 65535, &v) != 0)
        return bad("%s takes a port number, 0 to 65535", name);
    *out = (int)v;
    return 0;
}

/* A long option with a value (or -w's optional one). */
static int
long_value_option(struct parse *p, const char *name, const char *inl, int argc,
                  char **argv, int *i)
{
    struct ast_filter *f = &p->o->filter;
    const char *val;
    long v;

    if (take_value(name, inl, argc, argv, i, &val) != 0)
        return AST_EXIT_USAGE;
    p->socks = p->socks || strcmp(name, "--count") != 0;
    if (strcmp(name, "--port") == 0)
        return port_option(name, val, &f->port);
    if (strcmp(name, "--sport") == 0)
        return port_option(name, val, &f->sport);
    if (strcmp(name, "--dport") == 0)
        return port_option(name, val, &f->dport);
    if (strcmp(name, "--addr") == 0) {
        f->have_addr = true;
        return parse_addr(val, f->addr) == 0
                   ? 0
                   : bad("--addr %s is not an IPv4 or IPv6 address", val);
    }
    if (strcmp(name, "--state") == 0) {
        uint32_t st = ast_sock_state_parse(val);

        p->states |= st;
        return st != 0 ? 0 : bad("--state %s: unknown state", val);
    }
    /* --count */
    if (parse_long(val, 1, LONG_MAX, &v) != 0)
        return bad("--count %s: give a number of redraws, 1 or more", val);
    p->o->count = v;
    p->have_count = true;
    return 0;
}

/* -w / --watch: SECONDS is optional, taken when the next argument is one. */
static int
watch_option(struct parse *p, const char *inl, int argc, char **argv, int *i)
{
    double s;

    p->o->watch_s = 1.0;
    if (inl != NULL) {
        if (parse_seconds(inl, &p->o->watch_s) != 0)
            return bad("-w %s: give SECONDS, 0.1 to 3600", inl);
        return 0;
    }
    if (*i + 1 < argc && parse_seconds(argv[*i + 1], &s) == 0) {
        p->o->watch_s = s;
        (*i)++;
    }
    return 0;
}

static const struct {
    const char *name;
    bool value; /* takes a value */
} long_opts[] = {
    {"--port", true}, {"--sport", true}, {"--dport", true},
    {"--addr", true}, {"--state", true}, {"--count", true},
};

static int
flag(struct parse *p, char c)
{
    switch (c) {
    case 'h':
        p->o->help = true;
        return 0;
    case 'a':
        p->o->all = true;
        return 0;
    case 't':
        p->tcp = p->socks = true;
        return 0;
    case 'u':
        p->udp = p->socks = true;
        return 0;
    case 'l':
        p->listening = p->socks = true;
        return 0;
    case 'i':
        p->o->info = p->socks = true;
        return 0;
    case 'n':
    case 'p':
        return 0;
    default:
        return -1;
    }
}

static int
long_option(struct parse *p, const char *a, int argc, char **argv, int *i)
{
    static const struct {
        const char *name;
        char flag;
    } flags[] = {{"--help", 'h'},    {"--all", 'a'},       {"--tcp", 't'},
                 {"--udp", 'u'},     {"--listening", 'l'}, {"--info", 'i'},
                 {"--numeric", 'n'}, {"--processes", 'p'}};
    const char *eq = strchr(a, '=');
    size_t len = eq != NULL ? (size_t)(eq - a) : strlen(a);
    char name[32];

    if (len >= sizeof(name))
        return bad("unknown option '%s'", a);
    memcpy(name, a, len);
    name[len] = '\0';
    if (strcmp(name, "--watch") == 0)
        return watch_option(p, eq != NULL ? eq + 1 : NULL, argc, argv, i);
    for (size_t k = 0; k < sizeof(long_opts) / sizeof(long_opts[0]); k++)
        if (strcmp(name, long_opts[k].name) == 0)
            return long_value_option(p, name, eq != NULL ? eq + 1 : NULL, argc,
                                     argv, i);
    if (eq != NULL)
        return bad("option '%s' takes no value", a);
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
        if (strcmp(name, flags[k].name) == 0)
            return flag(p, flags[k].flag);
    if (strcmp(name, "--reasons") == 0)
        p->reasons = true;
    else if (strcmp(name, "--json") == 0)
        p->json = true;
    else if (strcmp(name, "--prometheus") == 0)
        p->prom = true;
    else
        return bad("unknown option '%s'", a);
    return 0;
}

/* -tlni, -w2, -c 3: a group of short options. */
static int
short_options(struct parse *p, const char *a, int argc, char **argv, int *i)
{
    for (const char *c = a + 1; *c != '\0'; c++) {
        if (*c == 'w')
            return watch_option(p, c[1] != '\0' ? c + 1 : NULL, argc, argv, i);
        if (*c == 'c')
            return long_value_option(p, "--count", c[1] != '\0' ? c + 1 : NULL,
                                     argc, argv, i);
        if (flag(p, *c) != 0) {
            char opt[3] = {'-', *c, '\0'};

            return bad("unknown option '%s'", opt);
        }
    }
    return 0;
}

static int
positional(struct parse *p, const char *a)
{
    long v;

    if (p->o->pid != 0)
        return bad("one PID at most ('%s' is one too many)", a);
    if (parse_long(a, 1, INT_MAX, &v) != 0)
        return bad("'%s' is not a process id", a);
    p->o->pid = (int)v;
    return 0;
}

/* Turn the flags into the view, the format and the state filter. */
static int
finish(struct parse *p)
{
    struct ast_opts *o = p->o;

    if (p->json && p->prom)
        return bad("%s: choose one format", "--json and --prometheus");
    if (p->reasons && p->socks)
        return bad("%s", "--reasons shows its own list: no socket options");
    if (p->have_count && o->watch_s == 0)
        return bad("%s", "-c counts the redraws of -w: add -w");
    if (o->watch_s > 0 && (p->json || p->prom))
        return bad("%s", "-w redraws a terminal view: not with --json or "
                         "--prometheus");
    o->format = p->json ? AST_FMT_JSON : p->prom ? AST_FMT_PROM : AST_FMT_TEXT;
    if (p->reasons)
        o->view = AST_VIEW_REASONS;
    else if (p->socks)
        o->view = AST_VIEW_SOCKS;
    else if (o->pid != 0 || o->all)
        o->view = AST_VIEW_SUMMARY;
    else
        o->view = AST_VIEW_LIST;
    o->filter.tcp = p->tcp;
    o->filter.udp = p->udp;
    if (p->states != 0)
        o->filter.states =
            p->listening ? p->states & ast_sock_default_states(false, true)
                         : p->states;
    else
        o->filter.states = ast_sock_default_states(o->all, p->listening);
    return 0;
}

int
ast_opts_parse(int argc, char **argv, struct ast_opts *o)
{
    struct parse p;
    int i, rc = 0;

    memset(o, 0, sizeof(*o));
    memset(&p, 0, sizeof(p));
    p.o = o;
    o->filter.port = o->filter.sport = o->filter.dport = -1;
    for (i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--") == 0) {
            for (i++; i < argc && rc == 0; i++)
                rc = positional(&p, argv[i]);
            break;
        }
        if (strncmp(a, "--", 2) == 0)
            rc = long_option(&p, a, argc, argv, &i);
        else if (a[0] == '-' && a[1] != '\0')
            rc = short_options(&p, a, argc, argv, &i);
        else
            rc = positional(&p, a);
    }
    if (rc != 0 || o->help)
        return rc;
    return finish(&p);
}
