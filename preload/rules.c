/*
 * Per-application rules: the parser, the first-match matcher and the
 * combination with the built-in decision (rules.h).
 *
 * A line is a rule, a blank line or a comment ('#' to the end of the
 * line). A rule is an action word followed by selectors in any order,
 * each at most once:
 *
 *     accel|kernel [tcp|udp] [role listen|connect|udp-send|udp-recv]
 *                  [local ENDPOINT | remote ENDPOINT] [prog PATTERN]
 *     ENDPOINT = (* | A.B.C.D[/LEN] | [IPV6][/LEN]) [:PORT | :LOW-HIGH | :*]
 *              | IPV6[/LEN]      (no brackets: no ports, the colons are
 *                                 the address's)
 *
 * IPv4 prefixes are kept as IPv4-mapped IPv6 ones (::ffff:A.B.C.D/96+LEN):
 * one matcher serves both families, an IPv4 rule matches the mapped
 * address a dual-stack socket gives, and [::ffff:10.0.0.0]/104 is
 * 10.0.0.0/8. * matches every address of both families.
 *
 * The parser is strict: an unknown word, a selector given twice, an
 * address with host bits outside its prefix, a port range whose low end
 * is above its high end, or a selector that can never match its role
 * (local with connect, udp with listen, ...) is an error naming the file
 * and line, because a rule silently ignored would route sockets other
 * than the way the file reads.
 */
#include "rules.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORD_MAX 256

/* Where the parser is, for error lines. */
struct pos {
    const char *file;
    unsigned line;
    char *err;
    size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int
bad(const struct pos *p, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (p->errlen == 0)
        return -EINVAL;
    n = snprintf(p->err, p->errlen, "%s:%u: ", p->file, p->line);
    if (n < 0 || (size_t)n >= p->errlen)
        return -EINVAL;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* A decimal number of at most `max`, digits only. */
static bool
parse_num(const char *s, size_t n, unsigned long max, unsigned long *out)
{
    unsigned long v = 0;

    if (n == 0 || n > 10)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
        if (v > max)
            return false;
    }
    *out = v;
    return true;
}

static int
parse_ports(const struct pos *p, const char *kw, const char *s,
            struct pl_rule_end *e)
{
    const char *dash = strchr(s, '-');
    unsigned long lo, hi;

    if (strcmp(s, "*") == 0)
        return 0;
    if (dash == NULL) {
        if (!parse_num(s, strlen(s), 65535, &lo))
            return bad(p,
                       "%s: bad port '%s' (expected 0..65535, LOW-HIGH or *)",
                       kw, s);
        hi = lo;
    } else if (!parse_num(s, (size_t)(dash - s), 65535, &lo) ||
               !parse_num(dash + 1, strlen(dash + 1), 65535, &hi)) {
        return bad(p,
                   "%s: bad port range '%s' (expected LOW-HIGH, each 0..65535)",
                   kw, s);
    } else if (lo > hi) {
        return bad(
            p, "%s: bad port range '%s' (the low port is above the high one)",
            kw, s);
    }
    e->lo = (uint16_t)lo;
    e->hi = (uint16_t)hi;
    return 0;
}

/* Clear the bits of a after its first plen. */
static void
mask6(struct in6_addr *a, unsigned plen)
{
    for (unsigned i = plen; i < 128; i++)
        a->s6_addr[i / 8] &= (uint8_t) ~(0x80u >> (i % 8));
}

/* True when a has a bit set after its first plen. */
static bool
host_bits6(const struct in6_addr *a, unsigned plen)
{
    struct in6_addr n = *a;

    mask6(&n, plen);
    return memcmp(&n, a, sizeof(n)) != 0;
}

/* ::ffff:a (a network order). */
static void
mapped(uint32_t a, struct in6_addr *out)
{
    memset(out, 0, sizeof(*out));
    out->s6_addr[10] = 0xff;
    out->s6_addr[11] = 0xff;
    memcpy(&out->s6_addr[12], &a, 4);
}

/* The address part of ENDPOINT in abuf (the original word s, for
 * errors): A.B.C.D[/LEN], [IPV6][/LEN] or IPV6[/LEN]; v6 tells which of
 * the IPv6 forms was written (1 bracketed, 2 bare). */
static int
parse_prefix(const struct pos *p, const char *kw, const char *s, char *abuf,
             int v6, struct pl_rule_end *e)
{
    char *slash = strchr(abuf, '/');
    unsigned long plen = v6 ? 128 : 32;
    struct in6_addr a6;
    struct in_addr in;
    unsigned shift = v6 ? 0 : 96;

    if (slash != NULL) {
        *slash = '\0';
        if (!parse_num(slash + 1, strlen(slash + 1), v6 ? 128 : 32, &plen))
            return bad(p, "%s '%s': bad prefix length '/%s' (expected %s)", kw,
                       s, slash + 1, v6 ? "/0../128" : "/0../32");
    }
    if (v6 == 1) { /* "[addr]": drop the brackets */
        size_t n = strlen(abuf);

        if (n < 2 || abuf[n - 1] != ']')
            return bad(p,
                       "%s '%s': bad address '%s' (expected [IPV6], "
                       "[IPV6]/LEN, optionally :PORTS after it)",
                       kw, s, abuf);
        abuf[n - 1] = '\0';
        abuf++;
    }
    if (v6 != 0 ? inet_pton(AF_INET6, abuf, &a6) != 1
                : inet_pton(AF_INET, abuf, &in) != 1)
        return bad(p,
                   "%s '%s': bad address '%s' (expected A.B.C.D, "
                   "A.B.C.D/LEN, [IPV6], [IPV6]/LEN or *)",
                   kw, s, abuf);
    if (v6 == 0)
        mapped(in.s_addr, &a6);
    if (host_bits6(&a6, (unsigned)plen + shift)) {
        struct in6_addr net = a6;
        char nbuf[INET6_ADDRSTRLEN];

        mask6(&net, (unsigned)plen + shift);
        if (v6 == 0)
            inet_ntop(AF_INET, &net.s6_addr[12], nbuf, sizeof(nbuf));
        else
            inet_ntop(AF_INET6, &net, nbuf, sizeof(nbuf));
        return bad(p,
                   "%s '%s': bad prefix: %s has bits set outside /%lu "
                   "(did you mean %s%s%s/%lu?)",
                   kw, s, abuf, plen, v6 == 1 ? "[" : "", nbuf,
                   v6 == 1 ? "]" : "", plen);
    }
    e->net = a6;
    e->plen = (uint8_t)(plen + shift);
    return 0;
}

/* ENDPOINT of `local`/`remote`: (* | A.B.C.D[/LEN] | [IPV6][/LEN])
 * [:PORTS], or IPV6[/LEN] without brackets and then without ports (its
 * colons leave no room for one). */
static int
parse_end(const struct pos *p, const char *kw, const char *s,
          struct pl_rule_end *e)
{
    const char *colon = strchr(s, ':');
    char abuf[WORD_MAX];
    size_t alen;
    int v6 = 0;

    *e = (struct pl_rule_end){.set = true, .lo = 0, .hi = 65535};
    if (s[0] == '[') {
        const char *close = strchr(s, ']');

        v6 = 1;
        colon = close != NULL ? strchr(close, ':') : NULL;
    } else if (colon != NULL && strchr(colon + 1, ':') != NULL &&
               memchr(s, '.', (size_t)(colon - s)) == NULL) {
        /* Two colons and no dotted quad before them: a bare IPv6
         * address (10.0.0.1:80:81 stays an IPv4 endpoint's bad port). */
        v6 = 2;
        colon = NULL;
    }
    alen = colon != NULL ? (size_t)(colon - s) : strlen(s);
    if (alen == 0)
        return bad(p, "%s '%s': missing address (write *%s for any address)",
                   kw, s, s);
    memcpy(abuf, s, alen);
    abuf[alen] = '\0';
    if (strcmp(abuf, "*") != 0) {
        int rc = parse_prefix(p, kw, s, abuf, v6, e);

        if (rc < 0)
            return rc;
    }
    if (colon == NULL)
        return 0;
    return parse_ports(p, kw, colon + 1, e);
}

static bool
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The next word of line[*at..n) into w; 0 at the end (or a comment),
 * -1 when the word is too long, -2 on a NUL byte. */
static int
next_word(const char *line, size_t n, size_t *at, char w[WORD_MAX])
{
    size_t i = *at, len = 0;

    while (i < n && is_space(line[i]))
        i++;
    if (i >= n || line[i] == '#')
        return 0;
    while (i < n && line[i] != '#' && !is_space(line[i])) {
        if (line[i] == '\0')
            return -2;
        if (len + 1 >= WORD_MAX)
            return -1;
        w[len++] = line[i++];
    }
    w[len] = '\0';
    *at = i;
    return 1;
}

static bool
role_is_tcp(enum pl_rule_role r)
{
    return r == PL_RULE_LISTEN || r == PL_RULE_CONNECT;
}

static bool
role_has_local(enum pl_rule_role r)
{
    return r == PL_RULE_LISTEN || r == PL_RULE_UDP_RECV;
}

const char *
pl_rules_role_name(enum pl_rule_role role)
{
    switch (role) {
    case PL_RULE_LISTEN:
        return "listen";
    case PL_RULE_CONNECT:
        return "connect";
    case PL_RULE_UDP_SEND:
        return "udp-send";
    case PL_RULE_UDP_RECV:
        return "udp-recv";
    default:
        return "any";
    }
}

/* Checks that need the whole rule. */
static int
check_rule(const struct pos *p, struct pl_rule *x)
{
    const char *rn = pl_rules_role_name(x->role);

    if (x->role != PL_RULE_ANY_ROLE) {
        enum pl_rule_proto want =
            role_is_tcp(x->role) ? PL_RULE_TCP : PL_RULE_UDP;

        if (x->proto != PL_RULE_ANY_PROTO && x->proto != want)
            return bad(p, "role %s is for %s sockets, not %s", rn,
                       want == PL_RULE_TCP ? "tcp" : "udp",
                       want == PL_RULE_TCP ? "udp" : "tcp");
        x->proto = want;
    }
    if (x->local.set && x->remote.set)
        return bad(p, "local and remote in one rule never match: local "
                      "selects listen and udp-recv, remote selects connect "
                      "and udp-send (write two rules)");
    if (x->local.set && x->role != PL_RULE_ANY_ROLE && !role_has_local(x->role))
        return bad(p,
                   "local never matches role %s (no local address is "
                   "chosen yet): use remote",
                   rn);
    if (x->remote.set && role_has_local(x->role))
        return bad(p,
                   "remote never matches role %s (there is no peer "
                   "yet): use local",
                   rn);
    return 0;
}

/* One line: 1 and *x for a rule, 0 for nothing, -EINVAL (err set). */
static int
parse_line(const struct pos *p, const char *line, size_t n, struct pl_rule *x)
{
    char w[WORD_MAX], v[WORD_MAX];
    size_t at = 0;
    int rc;

    *x = (struct pl_rule){.line = p->line};
    rc = next_word(line, n, &at, w);
    if (rc == 0)
        return 0;
    for (;;) {
        if (rc == -1)
            return bad(p, "word longer than %d characters", WORD_MAX - 1);
        if (rc == -2)
            return bad(p, "NUL byte (not a text file?)");
        if (rc == 0)
            break;
        if (x->action == PL_RULE_NONE) {
            if (strcmp(w, "accel") == 0)
                x->action = PL_RULE_ACCEL;
            else if (strcmp(w, "kernel") == 0)
                x->action = PL_RULE_KERNEL;
            else
                return bad(p,
                           "unknown action '%s' (a rule starts with "
                           "accel or kernel)",
                           w);
        } else if (strcmp(w, "tcp") == 0 || strcmp(w, "udp") == 0) {
            enum pl_rule_proto pr = w[0] == 't' ? PL_RULE_TCP : PL_RULE_UDP;

            if (x->proto == pr)
                return bad(p, "'%s' given twice", w);
            if (x->proto != PL_RULE_ANY_PROTO)
                return bad(p, "tcp and udp in one rule: write one rule "
                              "for each, or neither for both");
            x->proto = pr;
        } else if (strcmp(w, "role") == 0 || strcmp(w, "local") == 0 ||
                   strcmp(w, "remote") == 0 || strcmp(w, "prog") == 0) {
            rc = next_word(line, n, &at, v);
            if (rc == -1)
                return bad(p, "word longer than %d characters", WORD_MAX - 1);
            if (rc == -2)
                return bad(p, "NUL byte (not a text file?)");
            if (rc == 0)
                return bad(p, "'%s' needs a value (%s)", w,
                           w[0] == 'r' && w[1] == 'o'
                               ? "listen, connect, udp-send or udp-recv"
                           : w[0] == 'p' ? "a program name or pattern"
                                         : "ADDRESS[/LEN][:PORTS], * for any");
            if (w[0] == 'r' && w[1] == 'o') {
                if (x->role != PL_RULE_ANY_ROLE)
                    return bad(p, "'role' given twice");
                if (strcmp(v, "listen") == 0)
                    x->role = PL_RULE_LISTEN;
                else if (strcmp(v, "connect") == 0)
                    x->role = PL_RULE_CONNECT;
                else if (strcmp(v, "udp-send") == 0)
                    x->role = PL_RULE_UDP_SEND;
                else if (strcmp(v, "udp-recv") == 0)
                    x->role = PL_RULE_UDP_RECV;
                else
                    return bad(p,
                               "unknown role '%s' (expected listen, "
                               "connect, udp-send or udp-recv)",
                               v);
            } else if (w[0] == 'p') {
                if (x->prog[0] != '\0')
                    return bad(p, "'prog' given twice");
                if (strlen(v) >= PL_RULE_PROG_MAX)
                    return bad(p, "prog pattern longer than %d characters",
                               PL_RULE_PROG_MAX - 1);
                strcpy(x->prog, v);
            } else {
                struct pl_rule_end *e = w[0] == 'l' ? &x->local : &x->remote;

                if (e->set)
                    return bad(p, "'%s' given twice", w);
                rc = parse_end(p, w, v, e);
                if (rc < 0)
                    return rc;
            }
        } else {
            return bad(p,
                       "unknown keyword '%s' (expected tcp, udp, role, "
                       "local, remote or prog)",
                       w);
        }
        rc = next_word(line, n, &at, w);
    }
    rc = check_rule(p, x);
    return rc < 0 ? rc : 1;
}

static int
push(struct pl_rules *r, const struct pl_rule *x)
{
    if (r->n == r->cap) {
        size_t cap = r->cap != 0 ? r->cap * 2 : 8;
        struct pl_rule *v = realloc(r->v, cap * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = *x;
    return 0;
}

int
pl_rules_parse(const char *text, size_t len, const char *file,
               struct pl_rules *out, char *err, size_t errlen)
{
    struct pos p = {.file = file, .err = err, .errlen = errlen};
    size_t i = 0, start;
    struct pl_rule x;
    int rc;

    *out = (struct pl_rules){0};
    if (errlen > 0)
        err[0] = '\0';
    while (i < len) {
        p.line++;
        start = i;
        while (i < len && text[i] != '\n')
            i++;
        rc = parse_line(&p, text + start, i - start, &x);
        if (rc > 0)
            rc = push(out, &x);
        if (rc < 0) {
            pl_rules_free(out);
            return rc;
        }
        i++; /* the newline */
    }
    return 0;
}

void
pl_rules_free(struct pl_rules *r)
{
    free(r->v);
    *r = (struct pl_rules){0};
}

void
pl_rules_for_prog(struct pl_rules *r, const char *prog)
{
    size_t k = 0;

    for (size_t i = 0; i < r->n; i++) {
        struct pl_rule *x = &r->v[i];

        if (x->prog[0] != '\0' &&
            (prog == NULL || fnmatch(x->prog, prog, 0) != 0))
            continue;
        x->prog[0] = '\0';
        r->v[k++] = *x;
    }
    r->n = k;
}

/* True when a is inside net/plen. */
static bool
in_prefix(const struct in6_addr *a, const struct in6_addr *net, unsigned plen)
{
    unsigned bytes = plen / 8, bits = plen % 8;

    if (memcmp(a->s6_addr, net->s6_addr, bytes) != 0)
        return false;
    return bits == 0 || ((a->s6_addr[bytes] ^ net->s6_addr[bytes]) &
                         (uint8_t)(0xff00u >> bits)) == 0;
}

static bool
end_match(const struct pl_rule_end *e, const struct pl_rule_addr *a)
{
    static const struct in6_addr any4 = {
        {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0}}};

    if (!e->set)
        return true;
    if (a == NULL)
        return false;
    if (a->port < e->lo || a->port > e->hi)
        return false;
    return in_prefix(&a->addr, &e->net, e->plen) ||
           (a->dual_any && in_prefix(&any4, &e->net, e->plen));
}

const struct pl_rule *
pl_rules_match(const struct pl_rules *r, const struct pl_rule_query *q)
{
    for (size_t i = 0; r != NULL && i < r->n; i++) {
        const struct pl_rule *x = &r->v[i];

        if (x->proto != PL_RULE_ANY_PROTO && x->proto != q->proto)
            continue;
        if (x->role != PL_RULE_ANY_ROLE && x->role != q->role)
            continue;
        if (!end_match(&x->local, q->local) ||
            !end_match(&x->remote, q->remote))
            continue;
        if (x->prog[0] != '\0' &&
            (q->prog == NULL || fnmatch(x->prog, q->prog, 0) != 0))
            continue;
        return x;
    }
    return NULL;
}

int
pl_rule_addr_from(const struct sockaddr *a, socklen_t len, bool dual,
                  struct pl_rule_addr *out)
{
    memset(out, 0, sizeof(*out));
    if (a == NULL)
        return -EAFNOSUPPORT;
    if (a->sa_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)a;

        if (len < sizeof(*sin))
            return -EINVAL;
        mapped(sin->sin_addr.s_addr, &out->addr);
        out->port = ntohs(sin->sin_port);
        return 0;
    }
    if (a->sa_family == AF_INET6) {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)a;

        /* Linux takes the 24-byte RFC 2133 form (no scope id). */
        if (len < offsetof(struct sockaddr_in6, sin6_scope_id))
            return -EINVAL;
        out->addr = sin6->sin6_addr;
        out->port = ntohs(sin6->sin6_port);
        out->dual_any = dual && IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr);
        return 0;
    }
    return -EAFNOSUPPORT;
}

const struct pl_rule *
pl_rules_match_addr(const struct pl_rules *r, int type, bool bind,
                    const struct sockaddr *a, socklen_t len, bool dual,
                    const char *prog)
{
    struct pl_rule_addr ep;
    bool tcp = type == SOCK_STREAM;
    struct pl_rule_query q = {
        .proto = tcp ? PL_RULE_TCP : PL_RULE_UDP,
        .role = bind ? (tcp ? PL_RULE_LISTEN : PL_RULE_UDP_RECV)
                     : (tcp ? PL_RULE_CONNECT : PL_RULE_UDP_SEND),
        .local = bind ? &ep : NULL,
        .remote = bind ? NULL : &ep,
        .prog = prog,
    };

    if (pl_rule_addr_from(a, len, dual, &ep) != 0)
        return NULL;
    return pl_rules_match(r, &q);
}

enum pl_route
pl_rules_route_bind(const struct pl_rules *r, int type,
                    const struct sockaddr *a, socklen_t len,
                    const struct pl_net *net, const char *prog,
                    const struct pl_rule **hit)
{
    enum pl_route route = pl_route_bind(a, len, net);
    const struct pl_rule *m = NULL;

    if (route != PL_ROUTE_PASS && r != NULL && r->n > 0)
        m = pl_rules_match_addr(r, type, true, a, len, false, prog);
    if (hit != NULL)
        *hit = m;
    if (m != NULL && m->action == PL_RULE_KERNEL)
        return PL_ROUTE_KERNEL;
    return route;
}

enum pl_route
pl_rules_route_connect(const struct pl_rules *r, int type,
                       const struct sockaddr *a, socklen_t len,
                       const struct pl_net *net, const char *prog,
                       const struct pl_rule **hit)
{
    enum pl_route route = pl_route_connect(a, len, net);
    const struct pl_rule *m = NULL;

    if (route != PL_ROUTE_PASS && r != NULL && r->n > 0)
        m = pl_rules_match_addr(r, type, false, a, len, false, prog);
    if (hit != NULL)
        *hit = m;
    if (m == NULL)
        return route;
    if (m->action == PL_RULE_KERNEL)
        return PL_ROUTE_KERNEL;
    return pl_addr_routable(((const struct sockaddr_in *)a)->sin_addr.s_addr,
                            net)
               ? PL_ROUTE_ACCEL
               : PL_ROUTE_KERNEL;
}
