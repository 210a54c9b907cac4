/*
 * The two text views that are not tables of sockets: the process list
 * (one line per process, 80 columns) and a process's summary (who it is,
 * its data path and port, the main counters in groups, every counter with
 * -a). Counters are found by name in the region's own table, never by
 * position; a name the region does not have shows as "-".
 */
#include <inttypes.h>
#include <string.h>

#include "ast.h"

/* The counters of the summary, by group. */
static const char *const frame_ctrs[] = {"rx_frames", "rx_bytes", "tx_frames",
                                         "tx_bytes", NULL};
static const char *const tcp_ctrs[] = {"tcp_connect",
                                       "tcp_accept",
                                       "tcp_rst_sent",
                                       "tcp_listen_overflow",
                                       "tcp_retrans_segs",
                                       "tcp_fast_retrans",
                                       "tcp_slowstart_retrans",
                                       "tcp_rto",
                                       "tcp_rto_abort",
                                       "tcp_tlp",
                                       "tcp_ofo_queued",
                                       "tcp_ofo_drop",
                                       NULL};
static const char *const udp_ctrs[] = {"udp_rx_drop_full", NULL};
static const char *const sock_ctrs[] = {"sock_accel", "sock_kernel", NULL};

void
ast_text_list(FILE *f, const struct ast_snap *snaps, size_t n)
{
    fprintf(f, "%7s %-8s %-15s %-11s %-10s %9s %6s %6s\n", "PID", "USER",
            "COMMAND", "STATE", "DATA PATH", "ACC/KERN", "RX FRM", "TX FRM");
    for (size_t i = 0; i < n; i++) {
        const struct ast_snap *s = &snaps[i];
        char user[16], dp[16], socks[24], a[8], k[8], rx[8], tx[8], st[16];

        ast_fmt_trunc(s->user, 8, user, sizeof(user));
        ast_fmt_trunc(s->hdr.datapath[0] != '\0' ? s->hdr.datapath : "-", 10,
                      dp, sizeof(dp));
        ast_fmt_count(ast_snap_value(s, "sock_accel"), a, sizeof(a));
        ast_fmt_count(ast_snap_value(s, "sock_kernel"), k, sizeof(k));
        snprintf(socks, sizeof(socks), "%s/%s", a, k);
        ast_fmt_count(ast_snap_value(s, "rx_frames"), rx, sizeof(rx));
        ast_fmt_count(ast_snap_value(s, "tx_frames"), tx, sizeof(tx));
        fprintf(f, "%7d %-8s %-15s %-11s %-10s %9s %6s %6s\n", s->pid, user,
                s->hdr.comm, ast_state_name(s->hdr.state, st, sizeof(st)), dp,
                socks, rx, tx);
    }
}

void
ast_text_others(FILE *f, unsigned others)
{
    if (others > 0)
        fprintf(f, "%u process%s of other users not shown: run as root\n",
                others, others == 1 ? "" : "es");
}

/* Name-value pairs, two to a line: *k counts the pairs of the block. */
static void
put_pair(FILE *f, const char *name, const char *val, size_t *k)
{
    fprintf(f, "%s  %-22s %14s", *k % 2 == 1 ? " " : "", name, val);
    if (++*k % 2 == 0)
        fputc('\n', f);
}

static void
put_u64(FILE *f, const char *name, uint64_t v, size_t *k)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%" PRIu64, v);
    put_pair(f, name, buf, k);
}

static void
end_pairs(FILE *f, size_t k)
{
    if (k % 2 == 1)
        fputc('\n', f);
}

/* A group of counters by name: "-" for those the region lacks. */
static void
print_group(FILE *f, const struct ast_snap *s, const char *title,
            const char *const *names)
{
    size_t k = 0;

    fprintf(f, "%s\n", title);
    for (size_t i = 0; names[i] != NULL; i++) {
        const struct ast_counter *c = ast_snap_counter(s, names[i]);

        if (c != NULL)
            put_u64(f, names[i], c->value, &k);
        else
            put_pair(f, names[i], "-", &k);
    }
    end_pairs(f, k);
}

/* Every non-zero counter whose name contains "drop". */
static void
print_drops(FILE *f, const struct ast_snap *s)
{
    size_t k = 0;

    fprintf(f, "drops\n");
    for (uint32_t i = 0; i < s->nctr; i++)
        if (strstr(s->ctr[i].name, "drop") != NULL && s->ctr[i].value != 0)
            put_u64(f, s->ctr[i].name, s->ctr[i].value, &k);
    if (k == 0)
        fprintf(f, "  none\n");
    end_pairs(f, k);
}

static void
print_port(FILE *f, const struct ast_snap *s)
{
    const struct base_sr_port *p = &s->port;
    size_t k = 0;

    if (!s->have_port) {
        fprintf(f, "port       none yet (no data path, or no snapshot)\n");
        return;
    }
    fprintf(f, "port       as of %.1f s ago, %" PRIu32 " queue%s, link %s\n",
            ast_snap_age(s), p->queues, p->queues == 1 ? "" : "s",
            p->up ? "up" : "down");
    for (const struct ast_port_field *pf = ast_port_fields; pf->name != NULL;
         pf++)
        put_u64(f, pf->name, ast_port_value(p, pf), &k);
    end_pairs(f, k);
    fprintf(f, "  pool: %" PRIu32 " of %" PRIu32 " mbufs in use\n",
            p->pool_in_use, p->pool_size);
}

static void
print_all(FILE *f, const struct ast_snap *s)
{
    fprintf(f, "counters (%" PRIu32 ")\n", s->nctr);
    for (uint32_t i = 0; i < s->nctr; i++)
        fprintf(f, "  %-30s %20" PRIu64 "\n", s->ctr[i].name, s->ctr[i].value);
}

void
ast_text_summary(FILE *f, const struct ast_snap *s, bool all)
{
    const struct base_sr_hdr *h = &s->hdr;
    char up[32], st[16];

    ast_fmt_duration(ast_proc_uptime(h->starttime), up, sizeof(up));
    fprintf(f,
            "process    %d (%s), parent %" PRId32 ", user %s (uid %" PRIu32
            "), uptime %s\n",
            s->pid, h->comm, h->ppid, s->user, h->uid, up);
    fprintf(f, "command    %s\n", h->cmdline);
    fprintf(f, "state      %s", ast_state_name(h->state, st, sizeof(st)));
    if (h->state == BASE_SR_JOINED)
        fprintf(f, " (on the port of process %" PRId32 ")", h->port_owner_pid);
    fprintf(f, "\ndata path  %s\n", h->datapath[0] != '\0' ? h->datapath : "-");
    fprintf(f, "interface  %s  ip %s  ip6 %s\n",
            h->iface[0] != '\0' ? h->iface : "-",
            h->ip[0] != '\0' ? h->ip : "-", h->ip6[0] != '\0' ? h->ip6 : "-");
    print_port(f, s);
    print_group(f, s, "frames", frame_ctrs);
    print_group(f, s, "tcp", tcp_ctrs);
    print_group(f, s, "udp", udp_ctrs);
    print_drops(f, s);
    print_group(f, s, "sockets", sock_ctrs);
    if (all)
        print_all(f, s);
}
