/*
 * --prometheus: Prometheus's text exposition format (0.0.4), for a scrape
 * through a wrapper or node_exporter's textfile collector. Every metric
 * family is written once, its # HELP and # TYPE first, then one sample per
 * process labelled {pid, comm}:
 *
 *   accel_up                       gauge: 1 while the data path runs
 *   accel_<counter>_total          counter: each counter of the region,
 *                                  by the region's own names
 *   accel_port_<field>_total       counter: the port's ethdev counters
 *   accel_pool_mbufs, accel_pool_mbufs_in_use   gauges: the mbuf pool
 *   accel_snapshot_age_seconds     gauge: age of the port's figures
 *   accel_sockets{proto,state}     gauge: accelerated sockets by state,
 *                                  counted from the socket table
 *
 * Label values are escaped as the format says (\\, \", \n) and made valid
 * UTF-8; names keep only [a-zA-Z0-9_].
 */
#include <inttypes.h>
#include <netinet/in.h>
#include <string.h>

#include "ast.h"

#define NAME_MAX_LEN 160

/* "accel_" + name + suffix, every other character made '_'. */
static void
metric_name(const char *name, const char *suffix, char *buf, size_t len)
{
    size_t n;

    snprintf(buf, len, "accel_%s%s", name, suffix);
    n = strlen(buf);
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_'))
            buf[i] = '_';
    }
}

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{pid="..",comm=".."[,extra]} value */
static void
sample(FILE *f, const char *name, const struct ast_snap *s, const char *extra,
       uint64_t v)
{
    fprintf(f, "%s{pid=\"%d\",comm=\"", name, s->pid);
    ast_put_escaped(f, s->hdr.comm, false);
    fprintf(f, "\"%s} %" PRIu64 "\n", extra != NULL ? extra : "", v);
}

/* Is metric (from the counter names) already written? */
static bool
written_before(const struct ast_snap *snaps, size_t upto_snap, uint32_t upto,
               const char *metric)
{
    char other[NAME_MAX_LEN];

    for (size_t i = 0; i <= upto_snap; i++) {
        uint32_t n = i == upto_snap ? upto : snaps[i].nctr;

        for (uint32_t k = 0; k < n; k++) {
            metric_name(snaps[i].ctr[k].name, "_total", other, sizeof(other));
            if (strcmp(other, metric) == 0)
                return true;
        }
    }
    return false;
}

/* The counter of s whose metric is metric (the first), or NULL. */
static const struct ast_counter *
find_metric(const struct ast_snap *s, const char *metric)
{
    char name[NAME_MAX_LEN];

    for (uint32_t k = 0; k < s->nctr; k++) {
        metric_name(s->ctr[k].name, "_total", name, sizeof(name));
        if (strcmp(name, metric) == 0)
            return &s->ctr[k];
    }
    return NULL;
}

/* Each counter family once, in the order of first appearance. */
static void
print_counters(FILE *f, const struct ast_snap *snaps, size_t n)
{
    char metric[NAME_MAX_LEN], help[NAME_MAX_LEN + 32];

    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < snaps[i].nctr; k++) {
            metric_name(snaps[i].ctr[k].name, "_total", metric, sizeof(metric));
            if (written_before(snaps, i, k, metric))
                continue;
            snprintf(help, sizeof(help), "accel counter %s",
                     snaps[i].ctr[k].name);
            family(f, metric, "counter", help);
            for (size_t j = i; j < n; j++) {
                const struct ast_counter *c = find_metric(&snaps[j], metric);

                if (c != NULL)
                    sample(f, metric, &snaps[j], NULL, c->value);
            }
        }
    }
}

static void
print_port(FILE *f, const struct ast_snap *snaps, size_t n)
{
    char metric[NAME_MAX_LEN], help[NAME_MAX_LEN];
    bool any = false;

    for (size_t i = 0; i < n; i++)
        any = any || snaps[i].have_port;
    if (!any)
        return;
    for (const struct ast_port_field *pf = ast_port_fields; pf->name != NULL;
         pf++) {
        char name[32];

        snprintf(name, sizeof(name), "port_%s", pf->name);
        metric_name(name, "_total", metric, sizeof(metric));
        snprintf(help, sizeof(help), "accel port counter %s (ethdev)",
                 pf->name);
        family(f, metric, "counter", help);
        for (size_t i = 0; i < n; i++)
            if (snaps[i].have_port)
                sample(f, metric, &snaps[i], NULL,
                       ast_port_value(&snaps[i].port, pf));
    }
    family(f, "accel_pool_mbufs", "gauge", "mbufs in the pool");
    for (size_t i = 0; i < n; i++)
        if (snaps[i].have_port)
            sample(f, "accel_pool_mbufs", &snaps[i], NULL,
                   snaps[i].port.pool_size);
    family(f, "accel_pool_mbufs_in_use", "gauge", "mbufs of the pool in use");
    for (size_t i = 0; i < n; i++)
        if (snaps[i].have_port)
            sample(f, "accel_pool_mbufs_in_use", &snaps[i], NULL,
                   snaps[i].port.pool_in_use);
}

static void
print_age(FILE *f, const struct ast_snap *snaps, size_t n)
{
    bool head = false;

    for (size_t i = 0; i < n; i++) {
        double age = ast_snap_age(&snaps[i]);

        if (age < 0)
            continue;
        if (!head)
            family(f, "accel_snapshot_age_seconds", "gauge",
                   "age of the port snapshot");
        head = true;
        fprintf(f, "accel_snapshot_age_seconds{pid=\"%d\",comm=\"",
                snaps[i].pid);
        ast_put_escaped(f, snaps[i].hdr.comm, false);
        fprintf(f, "\"} %.3f\n", age);
    }
}

static void
print_sockets(FILE *f, const struct ast_snap *snaps, size_t n)
{
    static const uint8_t protos[] = {IPPROTO_TCP, IPPROTO_UDP};

    family(f, "accel_sockets", "gauge",
           "accelerated sockets by protocol and state (socket table)");
    for (size_t i = 0; i < n; i++) {
        uint32_t count[2][32] = {{0}};

        for (uint32_t k = 0; k < snaps[i].nsocks; k++) {
            const struct base_sr_sock *s = &snaps[i].socks[k];
            int p = s->proto == IPPROTO_TCP   ? 0
                    : s->proto == IPPROTO_UDP ? 1
                                              : -1;

            if (p >= 0 && s->state < 32)
                count[p][s->state]++;
        }
        for (int p = 0; p < 2; p++) {
            for (int st = 0; st < 32; st++) {
                char extra[64];

                if (count[p][st] == 0)
                    continue;
                snprintf(extra, sizeof(extra), ",proto=\"%s\",state=\"%s\"",
                         ast_proto_name(protos[p]),
                         ast_sock_state_name((uint8_t)st));
                sample(f, "accel_sockets", &snaps[i], extra, count[p][st]);
            }
        }
    }
}

void
ast_prom_print(FILE *f, const struct ast_snap *snaps, size_t n)
{
    family(f, "accel_up", "gauge",
           "1 while the process runs its data path (up or joined)");
    for (size_t i = 0; i < n; i++)
        sample(f, "accel_up", &snaps[i], NULL,
               snaps[i].hdr.state == BASE_SR_UP ||
                   snaps[i].hdr.state == BASE_SR_JOINED);
    print_counters(f, snaps, n);
    print_port(f, snaps, n);
    print_age(f, snaps, n);
    print_sockets(f, snaps, n);
}
