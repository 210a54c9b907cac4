/*
 * --json: the chosen view's information as one JSON document on stdout:
 * {"processes": [...], "other_users_not_shown": N}. Each process carries
 * who it is, its counters (name -> value, the region's names), its port
 * (null without a snapshot), its sockets (the socket view's filter
 * applied in that view, all of them otherwise) and the sockets left on
 * the kernel that are still open. Strings are escaped and made valid
 * UTF-8 (ast_put_escaped), so the output always parses.
 */
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ast.h"

/* A small streaming writer: it places the commas. */
struct jw {
    FILE *f;
    bool comma; /* a value precedes at this level */
};

static void
sep(struct jw *w, const char *key)
{
    if (w->comma)
        fputc(',', w->f);
    if (key != NULL) {
        fputc('"', w->f);
        ast_put_escaped(w->f, key, true);
        fputs("\":", w->f);
    }
    w->comma = true;
}

static void
open_(struct jw *w, const char *key, char c)
{
    sep(w, key);
    fputc(c, w->f);
    w->comma = false;
}

static void
close_(struct jw *w, char c)
{
    fputc(c, w->f);
    w->comma = true;
}

static void
str(struct jw *w, const char *key, const char *v)
{
    sep(w, key);
    if (v == NULL) {
        fputs("null", w->f);
        return;
    }
    fputc('"', w->f);
    ast_put_escaped(w->f, v, true);
    fputc('"', w->f);
}

static void
u64(struct jw *w, const char *key, uint64_t v)
{
    sep(w, key);
    fprintf(w->f, "%" PRIu64, v);
}

static void
i64(struct jw *w, const char *key, int64_t v)
{
    sep(w, key);
    fprintf(w->f, "%" PRId64, v);
}

/* A number of seconds, or null when negative (unknown). */
static void
secs(struct jw *w, const char *key, double v)
{
    sep(w, key);
    if (v < 0)
        fputs("null", w->f);
    else
        fprintf(w->f, "%.3f", v);
}

static void
boolean(struct jw *w, const char *key, bool v)
{
    sep(w, key);
    fputs(v ? "true" : "false", w->f);
}

static const char *
family_name(uint8_t family)
{
    return family == AF_INET ? "inet" : family == AF_INET6 ? "inet6" : NULL;
}

static void
sock_obj(struct jw *w, const struct base_sr_sock *s)
{
    char a[64];

    open_(w, NULL, '{');
    i64(w, "fd", s->fd);
    str(w, "proto", ast_proto_name(s->proto));
    str(w, "family", family_name(s->family));
    str(w, "state", ast_sock_state_name(s->state));
    ast_addr_str(s->family, s->laddr, a, sizeof(a));
    str(w, "local", a);
    u64(w, "local_port", ntohs(s->lport));
    ast_addr_str(s->family, s->raddr, a, sizeof(a));
    str(w, "peer", a);
    u64(w, "peer_port", ntohs(s->rport));
    u64(w, "recv_q", s->rcvq);
    u64(w, "send_q", s->sndq);
    if (s->proto == IPPROTO_TCP) {
        u64(w, "retrans", s->retrans);
        u64(w, "lost", s->lost);
        u64(w, "rto_us", s->rto_us);
        u64(w, "rtt_us", s->srtt_us);
        u64(w, "rttvar_us", s->rttvar_us);
        u64(w, "mss", s->mss);
        u64(w, "cwnd", s->cwnd);
        u64(w, "ssthresh", s->ssthresh);
        u64(w, "bytes_acked", s->bytes_acked);
        u64(w, "bytes_received", s->bytes_received);
    }
    close_(w, '}');
}

static void
kern_obj(struct jw *w, const struct ast_kern_live *k)
{
    static const uint8_t zero[16];
    const struct base_sr_kern *r = k->rec;
    char a[64];

    open_(w, NULL, '{');
    i64(w, "fd", r->fd);
    str(w, "family", family_name(r->family));
    str(w, "proto", ast_proto_name(r->proto));
    u64(w, "proto_number", r->proto);
    str(w, "call", r->call);
    if (r->port == 0 && memcmp(r->addr, zero, 16) == 0) {
        str(w, "address", NULL);
    } else {
        ast_addr_str(r->family, r->addr, a, sizeof(a));
        str(w, "address", a);
    }
    u64(w, "port", ntohs(r->port));
    u64(w, "why", r->why);
    str(w, "reason", k->why);
    u64(w, "when_ns", r->when_ns);
    u64(w, "inode", r->inode);
    close_(w, '}');
}

static void
port_obj(struct jw *w, const struct ast_snap *s)
{
    const struct base_sr_port *p = &s->port;

    if (!s->have_port) {
        str(w, "port", NULL);
        return;
    }
    open_(w, "port", '{');
    for (const struct ast_port_field *pf = ast_port_fields; pf->name != NULL;
         pf++)
        u64(w, pf->name, ast_port_value(p, pf));
    u64(w, "pool_size", p->pool_size);
    u64(w, "pool_in_use", p->pool_in_use);
    u64(w, "queues", p->queues);
    boolean(w, "link_up", p->up != 0);
    close_(w, '}');
}

static void
process_obj(struct jw *w, const struct ast_snap *s, const struct ast_opts *o)
{
    const struct base_sr_hdr *h = &s->hdr;
    struct ast_kern_live *kl;
    unsigned unverified;
    size_t nk;
    char st[16];

    open_(w, NULL, '{');
    i64(w, "pid", s->pid);
    i64(w, "ppid", h->ppid);
    u64(w, "uid", h->uid);
    str(w, "user", s->user);
    str(w, "comm", h->comm);
    str(w, "cmdline", h->cmdline);
    str(w, "state", ast_state_name(h->state, st, sizeof(st)));
    str(w, "datapath", h->datapath);
    str(w, "iface", h->iface);
    str(w, "ip", h->ip);
    str(w, "ip6", h->ip6);
    i64(w, "port_owner_pid", h->port_owner_pid);
    secs(w, "uptime_s", ast_proc_uptime(h->starttime));
    u64(w, "created_ns", h->created_ns);
    secs(w, "snapshot_age_s", ast_snap_age(s));
    boolean(w, "sockets_fresh", s->socks_fresh);
    open_(w, "counters", '{');
    for (uint32_t i = 0; i < s->nctr; i++)
        u64(w, s->ctr[i].name, s->ctr[i].value);
    close_(w, '}');
    port_obj(w, s);
    u64(w, "sockets_total", h->socks_total);
    open_(w, "sockets", '[');
    for (uint32_t i = 0; i < s->nsocks; i++)
        if (o->view != AST_VIEW_SOCKS ||
            ast_sock_match(&o->filter, &s->socks[i]))
            sock_obj(w, &s->socks[i]);
    close_(w, ']');
    kl = ast_kern_live(s, &nk, &unverified);
    open_(w, "kernel_sockets", '[');
    for (size_t i = 0; kl != NULL && i < nk; i++)
        kern_obj(w, &kl[i]);
    close_(w, ']');
    u64(w, "kernel_sockets_unverified", unverified);
    free(kl);
    close_(w, '}');
}

void
ast_json_print(FILE *f, const struct ast_snap *snaps, size_t n, unsigned others,
               const struct ast_opts *o)
{
    struct jw w = {.f = f, .comma = false};

    open_(&w, NULL, '{');
    open_(&w, "processes", '[');
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            fputc('\n', f);
        process_obj(&w, &snaps[i], o);
    }
    close_(&w, ']');
    u64(&w, "other_users_not_shown", others);
    close_(&w, '}');
    fputc('\n', f);
}
