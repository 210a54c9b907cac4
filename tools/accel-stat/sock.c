/*
 * The socket table view, shaped like `ss -tn` (numeric only): Netid,
 * State, Recv-Q, Send-Q, Local Address:Port, Peer Address:Port, Process.
 * States are Linux's numbers (base_sr_tcp_state) shown with ss's names.
 * Which sockets: -t/-u (neither: both); by default the non-listening ones,
 * -l the listening ones (LISTEN, and UNCONN, which is how ss -l shows an
 * unconnected UDP socket), -a all, --state NAME exactly those; then the
 * port and address filters. -i adds ss -i's line of TCP details.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ast.h"

#define STATE_BIT(s) (1u << (s))
#define ALL_STATES                                                             \
    (((1u << (BASE_SR_TCP_CLOSING + 1)) - 1) & ~1u) /* 1 ... CLOSING */
#define LISTENING_STATES                                                       \
    (STATE_BIT(BASE_SR_TCP_LISTEN) | STATE_BIT(BASE_SR_TCP_CLOSE))

static const struct {
    const char *name; /* --state's, ss's filter name */
    const char *ss;   /* ss's column */
} states[] = {
    [BASE_SR_TCP_ESTABLISHED] = {"established", "ESTAB"},
    [BASE_SR_TCP_SYN_SENT] = {"syn-sent", "SYN-SENT"},
    [BASE_SR_TCP_SYN_RECV] = {"syn-recv", "SYN-RECV"},
    [BASE_SR_TCP_FIN_WAIT1] = {"fin-wait-1", "FIN-WAIT-1"},
    [BASE_SR_TCP_FIN_WAIT2] = {"fin-wait-2", "FIN-WAIT-2"},
    [BASE_SR_TCP_TIME_WAIT] = {"time-wait", "TIME-WAIT"},
    [BASE_SR_TCP_CLOSE] = {"close", "UNCONN"},
    [BASE_SR_TCP_CLOSE_WAIT] = {"close-wait", "CLOSE-WAIT"},
    [BASE_SR_TCP_LAST_ACK] = {"last-ack", "LAST-ACK"},
    [BASE_SR_TCP_LISTEN] = {"listening", "LISTEN"},
    [BASE_SR_TCP_CLOSING] = {"closing", "CLOSING"},
};

#define NSTATES (sizeof(states) / sizeof(states[0]))

const char *
ast_sock_state_ss(uint8_t state)
{
    return state < NSTATES && states[state].ss != NULL ? states[state].ss
                                                       : "UNKNOWN";
}

const char *
ast_sock_state_name(uint8_t state)
{
    return state < NSTATES && states[state].name != NULL ? states[state].name
                                                         : "unknown";
}

uint32_t
ast_sock_state_parse(const char *name)
{
    for (size_t i = 1; i < NSTATES; i++)
        if (strcmp(name, states[i].name) == 0)
            return STATE_BIT(i);
    /* ss's other names for sets of states. */
    if (strcmp(name, "closed") == 0)
        return STATE_BIT(BASE_SR_TCP_CLOSE);
    if (strcmp(name, "all") == 0)
        return ALL_STATES;
    if (strcmp(name, "connected") == 0)
        return ALL_STATES & ~LISTENING_STATES;
    return 0;
}

uint32_t
ast_sock_default_states(bool all, bool listening)
{
    if (all)
        return ALL_STATES;
    return listening ? LISTENING_STATES : ALL_STATES & ~LISTENING_STATES;
}

/* The socket's address as IPv6 (IPv4 mapped), for --addr. */
static void
as_v6(uint8_t family, const uint8_t addr[16], uint8_t out[16])
{
    if (family == AF_INET) {
        memset(out, 0, 10);
        out[10] = out[11] = 0xff;
        memcpy(out + 12, addr, 4);
    } else {
        memcpy(out, addr, 16);
    }
}

bool
ast_sock_match(const struct ast_filter *f, const struct base_sr_sock *s)
{
    int lport = ntohs(s->lport), rport = ntohs(s->rport);

    if ((f->tcp || f->udp) && !(f->tcp && s->proto == IPPROTO_TCP) &&
        !(f->udp && s->proto == IPPROTO_UDP))
        return false;
    if (s->state >= 32 || !(f->states & STATE_BIT(s->state)))
        return false;
    if (f->port >= 0 && lport != f->port && rport != f->port)
        return false;
    if ((f->sport >= 0 && lport != f->sport) ||
        (f->dport >= 0 && rport != f->dport))
        return false;
    if (f->have_addr) {
        uint8_t l[16], r[16];

        as_v6(s->family, s->laddr, l);
        as_v6(s->family, s->raddr, r);
        if (memcmp(l, f->addr, 16) != 0 && memcmp(r, f->addr, 16) != 0)
            return false;
    }
    return true;
}

void
ast_addr_str(uint8_t family, const uint8_t addr[16], char *buf, size_t len)
{
    if (inet_ntop(family == AF_INET ? AF_INET : AF_INET6, addr, buf,
                  (socklen_t)len) == NULL)
        snprintf(buf, len, "?");
}

void
ast_endpoint_str(uint8_t family, const uint8_t addr[16], uint16_t port_n,
                 char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN], p[8];

    ast_addr_str(family, addr, a, sizeof(a));
    if (port_n == 0)
        snprintf(p, sizeof(p), "*");
    else
        snprintf(p, sizeof(p), "%u", ntohs(port_n));
    if (family == AF_INET)
        snprintf(buf, len, "%s:%s", a, p);
    else
        snprintf(buf, len, "[%s]:%s", a, p);
}

const char *
ast_proto_name(uint8_t proto)
{
    switch (proto) {
    case IPPROTO_TCP:
        return "tcp";
    case IPPROTO_UDP:
        return "udp";
    default:
        return "?";
    }
}

/* One row: a socket of one process. */
struct row {
    const struct ast_snap *snap;
    const struct base_sr_sock *sock;
    char local[INET6_ADDRSTRLEN + 10], peer[INET6_ADDRSTRLEN + 10];
};

static int
by_pid_fd(const void *a, const void *b)
{
    const struct row *x = a, *y = b;

    if (x->snap->pid != y->snap->pid)
        return (x->snap->pid > y->snap->pid) - (x->snap->pid < y->snap->pid);
    return (x->sock->fd > y->sock->fd) - (x->sock->fd < y->sock->fd);
}

/* ss -i's line: rto, rtt/rttvar (ms), mss, cwnd, ssthresh, bytes. */
static void
print_info(FILE *f, const struct base_sr_sock *s)
{
    if (s->proto != IPPROTO_TCP)
        return;
    fprintf(f, "\t rto:%g rtt:%.3f/%.3f mss:%" PRIu32 " cwnd:%" PRIu32,
            s->rto_us / 1000.0, s->srtt_us / 1000.0, s->rttvar_us / 1000.0,
            s->mss, s->cwnd);
    if (s->ssthresh != 0 && s->ssthresh < 0x7fffffff)
        fprintf(f, " ssthresh:%" PRIu32, s->ssthresh);
    fprintf(f,
            " bytes_acked:%" PRIu64 " bytes_received:%" PRIu64
            " retrans:%" PRIu32 " lost:%" PRIu32 "\n",
            s->bytes_acked, s->bytes_received, s->retrans, s->lost);
}

/* A note for each process whose table was not refreshed when asked. */
static void
print_notes(FILE *f, const struct ast_snap *snaps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct ast_snap *s = &snaps[i];
        double age = ast_snap_age(s);

        if (!s->socks_asked || s->socks_fresh ||
            (s->hdr.state != BASE_SR_UP && s->hdr.state != BASE_SR_JOINED))
            continue;
        if (age < 0)
            fprintf(f,
                    "note: %d (%s) took no snapshot within 1.5 s and has "
                    "none yet: no sockets to show\n",
                    s->pid, s->hdr.comm);
        else
            fprintf(f,
                    "note: %d (%s) did not refresh its socket table within "
                    "1.5 s: shown as of its last snapshot, %.1f s ago\n",
                    s->pid, s->hdr.comm, age);
    }
}

void
ast_sock_print(FILE *f, const struct ast_snap *snaps, size_t n,
               const struct ast_opts *o)
{
    size_t total = 0, nrows = 0, wl = 20, wp = 20;
    struct row *rows;

    for (size_t i = 0; i < n; i++)
        total += snaps[i].nsocks;
    rows = calloc(total != 0 ? total : 1, sizeof(*rows));
    if (rows == NULL) {
        fprintf(stderr, AST_PROG ": out of memory\n");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < snaps[i].nsocks; k++) {
            const struct base_sr_sock *s = &snaps[i].socks[k];
            struct row *r = &rows[nrows];

            if (!ast_sock_match(&o->filter, s))
                continue;
            r->snap = &snaps[i];
            r->sock = s;
            ast_endpoint_str(s->family, s->laddr, s->lport, r->local,
                             sizeof(r->local));
            ast_endpoint_str(s->family, s->raddr, s->rport, r->peer,
                             sizeof(r->peer));
            wl = strlen(r->local) > wl ? strlen(r->local) : wl;
            wp = strlen(r->peer) > wp ? strlen(r->peer) : wp;
            nrows++;
        }
    }
    qsort(rows, nrows, sizeof(*rows), by_pid_fd);
    fprintf(f, "%-5s %-10s %6s %6s %-*s %-*s %s\n", "Netid", "State", "Recv-Q",
            "Send-Q", (int)wl, "Local Address:Port", (int)wp,
            "Peer Address:Port", "Process");
    for (size_t i = 0; i < nrows; i++) {
        const struct base_sr_sock *s = rows[i].sock;

        fprintf(f, "%-5s %-10s %6" PRIu32 " %6" PRIu32 " %-*s %-*s ",
                ast_proto_name(s->proto), ast_sock_state_ss(s->state), s->rcvq,
                s->sndq, (int)wl, rows[i].local, (int)wp, rows[i].peer);
        fputc('"', f);
        ast_put_escaped(f, rows[i].snap->hdr.comm, false);
        fprintf(f, "\",pid=%d,fd=%" PRId32 "\n", rows[i].snap->pid, s->fd);
        if (o->info)
            print_info(f, s);
    }
    for (size_t i = 0; i < n; i++)
        if (snaps[i].have_snap && snaps[i].hdr.socks_total > snaps[i].nsocks)
            fprintf(f,
                    "note: %d (%s) has %" PRIu32 " sockets; its table holds "
                    "%" PRIu32 "\n",
                    snaps[i].pid, snaps[i].hdr.comm, snaps[i].hdr.socks_total,
                    snaps[i].nsocks);
    print_notes(f, snaps, n);
    free(rows);
}
