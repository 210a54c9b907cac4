/*
 * The process's rule table and the route decisions that use it
 * (route.h). ACCEL_RULES names the rules file; when it is unset or empty,
 * the system file PL_RULES_SYSTEM_FILE (installed from tools/rules.conf)
 * is read if it exists, and without either there are no rules. A file
 * that cannot be read or does not parse is reported in one error line,
 * "FILE:LINE: problem (the program runs on the kernel stack)", and then
 * nothing in the process is accelerated: half a rule set could accelerate
 * what the file meant to keep on the kernel.
 *
 * The table is filtered for this program's name once (rules.h
 * pl_rules_for_prog), so a decision is a scan of the rules that can apply,
 * with no pattern matching; a process without rules pays one branch.
 */
#include "route.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "libc.h"
#include "log.h"
#include "rules.h"
#include "sock.h"

#ifndef PL_RULES_SYSTEM_FILE
#define PL_RULES_SYSTEM_FILE "/etc/accel/rules.conf"
#endif

#define RULES_FILE_MAX (1u << 20)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static struct pl_rules rules; /* immutable once loaded */
static bool rules_bad;
static char rules_path[BASE_CFG_STR_MAX];

/* The whole file into a malloc'd buffer; 0 or -errno with err set. */
static int
read_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    size_t cap = 4096, n = 0;
    char *buf = NULL, *nb;
    ssize_t r;
    int fd, rc = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: cannot open the rules file: %s", path,
                 strerror(-rc));
        return rc;
    }
    for (;;) {
        if (n == cap || buf == NULL) {
            cap = buf == NULL ? cap : cap * 2;
            nb = realloc(buf, cap);
            if (nb == NULL) {
                rc = -ENOMEM;
                snprintf(err, errlen, "%s: out of memory", path);
                break;
            }
            buf = nb;
        }
        r = libc_read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            snprintf(err, errlen, "%s: cannot read the rules file: %s", path,
                     strerror(-rc));
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > RULES_FILE_MAX) {
            rc = -EFBIG;
            snprintf(err, errlen, "%s: larger than %u bytes: not a rules file",
                     path, RULES_FILE_MAX);
            break;
        }
    }
    libc_close(fd);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *text = buf;
    *len = n;
    return 0;
}

static void
load(void)
{
    const char *path = base_cfg.rules;
    char err[512], *text = NULL;
    size_t len = 0;
    int rc;

    if (base_cfg_load() != 0)
        return; /* logged; the library accelerates nothing anyway */
    if (path == NULL || path[0] == '\0') {
        path = PL_RULES_SYSTEM_FILE;
        if (access(path, F_OK) != 0)
            return;
    }
    snprintf(rules_path, sizeof(rules_path), "%s", path);
    rc = read_file(path, &text, &len, err, sizeof(err));
    if (rc == 0) {
        rc = pl_rules_parse(text, len, path, &rules, err, sizeof(err));
        if (rc == -ENOMEM)
            snprintf(err, sizeof(err), "%s: out of memory", path);
        free(text);
    }
    if (rc != 0) {
        BASE_ERR("rules",
                 "%s (the program runs on the kernel stack until the rules "
                 "file is fixed)",
                 err);
        rules_bad = true;
        return;
    }
    rc = (int)rules.n;
    pl_rules_for_prog(&rules, program_invocation_short_name);
    BASE_INFO("rules", "%s: %d rules, %zu of them for program %s", path, rc,
              rules.n, program_invocation_short_name);
}

bool
pl_rules_ok(void)
{
    pthread_once(&load_once, load);
    return !rules_bad;
}

static void
log_hit(int fd, const char *role, const struct sockaddr *a,
        const struct pl_rule *hit, enum pl_route r)
{
    const struct sockaddr_in *sin = (const struct sockaddr_in *)a;
    char ab[INET_ADDRSTRLEN];

    if (fd < 0 || hit == NULL || base_log_level < BASE_LOG_DEBUG)
        return;
    inet_ntop(AF_INET, &sin->sin_addr, ab, sizeof(ab));
    if (r == PL_ROUTE_KERNEL && hit->action == PL_RULE_ACCEL)
        BASE_DBG("rules",
                 "fd %d: %s %s:%u: kernel, although %s:%u says accel (the "
                 "stack cannot serve this address)",
                 fd, role, ab, ntohs(sin->sin_port), rules_path, hit->line);
    else
        BASE_DBG("rules", "fd %d: %s %s:%u: %s (%s:%u)", fd, role, ab,
                 ntohs(sin->sin_port),
                 r == PL_ROUTE_KERNEL ? "kernel" : "accel", rules_path,
                 hit->line);
}

/* The rules loaded (once per process) and the stack's addressing. */
static void
ready(struct pl_net *net)
{
    pthread_once(&load_once, load);
    pl_sock_net(net);
}

/* Why a decision that said kernel did: the rule that hit, or the
 * built-in reason for the address. */
static void
set_why(enum pl_why *why, enum pl_route r, bool bind, const struct sockaddr *a,
        const struct pl_rule *hit)
{
    if (why == NULL || r != PL_ROUTE_KERNEL)
        return;
    if (hit != NULL && hit->action == PL_RULE_KERNEL)
        *why = PL_WHY_rule;
    else if (bind)
        *why = PL_WHY_local_addr;
    else if (((const struct sockaddr_in *)a)->sin_port == htons(53))
        *why = PL_WHY_dns;
    else
        *why = PL_WHY_dest;
}

enum pl_route
pl_sock_route_bind(int type, int fd, const struct sockaddr *a, socklen_t len,
                   enum pl_why *why)
{
    const struct pl_rule *hit;
    struct pl_net net;
    enum pl_route r;

    ready(&net);
    r = pl_rules_route_bind(&rules, type, a, len, &net, NULL, &hit);
    log_hit(fd, type == SOCK_STREAM ? "listen" : "udp-recv", a, hit, r);
    set_why(why, r, true, a, hit);
    return r;
}

/* A native IPv6 address (decide.h pl_route_bind6/connect6) with the
 * rules on top: a kernel rule keeps it there, an accel rule lifts only
 * the DNS default, as for IPv4. */
static enum pl_route
route6(int type, int fd, bool bind, const struct sockaddr *a, socklen_t len,
       bool dual, enum pl_why *why)
{
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)a;
    const struct pl_rule *hit = NULL;
    struct pl_net net;
    enum pl_route r;

    ready(&net);
    r = bind ? pl_route_bind6(s6, &net) : pl_route_connect6(s6, &net);
    if (rules.n > 0)
        hit = pl_rules_match_addr(&rules, type, bind, a, len, dual, NULL);
    if (hit != NULL && hit->action == PL_RULE_KERNEL)
        r = PL_ROUTE_KERNEL;
    else if (hit != NULL && !bind && r == PL_ROUTE_KERNEL && net.has6 &&
             s6->sin6_port == htons(53)) {
        struct sockaddr_in6 other = *s6;

        other.sin6_port = htons(54); /* the same address but for DNS */
        r = pl_route_connect6(&other, &net);
    }
    if (fd >= 0 && hit != NULL && base_log_level >= BASE_LOG_DEBUG)
        BASE_DBG("rules", "fd %d: %s [ipv6]:%u: %s (%s:%u)", fd,
                 bind ? "bind" : "connect", ntohs(s6->sin6_port),
                 r == PL_ROUTE_KERNEL ? "kernel" : "accel", rules_path,
                 hit->line);
    if (why != NULL && r == PL_ROUTE_KERNEL) {
        if (hit != NULL && hit->action == PL_RULE_KERNEL)
            *why = PL_WHY_rule;
        else if (!net.has6)
            *why = IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ? PL_WHY_v6only
                                                           : PL_WHY_ipv6;
        else if (!bind && s6->sin6_port == htons(53))
            *why = PL_WHY_dns;
        else
            *why = bind ? PL_WHY_local_addr : PL_WHY_dest;
    }
    return r;
}

enum pl_route
pl_sock_route_bind6(int type, int fd, const struct sockaddr *a, socklen_t len,
                    bool dual, enum pl_why *why)
{
    return route6(type, fd, true, a, len, dual, why);
}

enum pl_route
pl_sock_route_connect6(int type, int fd, const struct sockaddr *a,
                       socklen_t len, enum pl_why *why)
{
    return route6(type, fd, false, a, len, false, why);
}

enum pl_route
pl_sock_route_listen(int fd, enum pl_why *why)
{
    struct sockaddr_in any = {.sin_family = AF_INET};

    return pl_sock_route_bind(SOCK_STREAM, fd, (struct sockaddr *)&any,
                              sizeof(any), why);
}

enum pl_route
pl_sock_route_connect(int type, int fd, const struct sockaddr *a, socklen_t len,
                      enum pl_why *why)
{
    const struct pl_rule *hit;
    struct pl_net net;
    enum pl_route r;

    ready(&net);
    r = pl_rules_route_connect(&rules, type, a, len, &net, NULL, &hit);
    log_hit(fd, type == SOCK_STREAM ? "connect" : "udp-send", a, hit, r);
    set_why(why, r, false, a, hit);
    return r;
}
