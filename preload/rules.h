/*
 * Per-application rules (ACCEL_RULES): a first-match list of "accel" and
 * "kernel" rules selecting sockets by protocol, role, local or remote
 * address/prefix and port range, and program name. The syntax is
 * documented at the top of tools/rules.conf; in short, one rule a line:
 *
 *     kernel  udp  remote 10.0.0.0/8:53
 *     accel   tcp  role listen  local *:8000-8100  prog nginx
 *     kernel  tcp  remote [fd00::]/8:443
 *     kernel  prog redis-cli
 *
 * Pure functions: parse text into a table, match a query against it, and
 * combine the match with the built-in decision of decide.h. No file
 * access, configuration, logging or errno (route.c does that).
 * Addresses are network byte order, ports host order. IPv4 and IPv6
 * addresses share one space: IPv4 as ::ffff:a.b.c.d (pl_rule_end).
 */
#ifndef ACCEL_PL_RULES_H
#define ACCEL_PL_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "decide.h"

#ifdef __cplusplus
extern "C" {
#endif

enum pl_rule_action {
    PL_RULE_NONE = 0, /* no rule matched: the built-in decision applies */
    PL_RULE_ACCEL,
    PL_RULE_KERNEL,
};

enum pl_rule_proto {
    PL_RULE_ANY_PROTO = 0,
    PL_RULE_TCP,
    PL_RULE_UDP,
};

/* The moment a socket's route is decided. listen and udp-recv have a
 * local endpoint (the bind address), connect and udp-send a remote one. */
enum pl_rule_role {
    PL_RULE_ANY_ROLE = 0,
    PL_RULE_LISTEN,   /* TCP bind, or listen on an unbound socket */
    PL_RULE_CONNECT,  /* TCP connect */
    PL_RULE_UDP_SEND, /* UDP sendto/connect before any bind */
    PL_RULE_UDP_RECV, /* UDP bind */
};

#define PL_RULE_PROG_MAX 128

/** An address/prefix and port range; set false: not a selector. One
 *  address space for both families: an IPv4 prefix A.B.C.D/LEN is kept
 *  as ::ffff:A.B.C.D/(96+LEN), so it also matches the IPv4-mapped form
 *  of its addresses (dual-stack sockets), and [::ffff:10.0.0.0]/104 is
 *  10.0.0.0/8. * is ::/0. */
struct pl_rule_end {
    bool set;
    struct in6_addr net; /* bits after plen are zero */
    uint8_t plen;        /* 0..128; 0 = any address */
    uint16_t lo, hi;     /* inclusive, host order */
};

struct pl_rule {
    enum pl_rule_action action;
    enum pl_rule_proto proto;
    enum pl_rule_role role;
    struct pl_rule_end local, remote;
    char prog[PL_RULE_PROG_MAX]; /* fnmatch(3) pattern; "" = any program */
    unsigned line;               /* line number in the file */
};

struct pl_rules {
    struct pl_rule *v;
    size_t n, cap;
};

/** One endpoint of a query, of either family (pl_rule_addr_from). */
struct pl_rule_addr {
    struct in6_addr addr; /* IPv4 as ::ffff:a.b.c.d */
    uint16_t port;        /* host order */
    bool dual_any;        /* addr is :: of a dual-stack AF_INET6 socket,
                             which stands for 0.0.0.0 too: rules matching
                             either match it */
};

/** What is being decided. local is given for listen/udp-recv, remote for
 *  connect/udp-send (NULL otherwise: rules selecting it do not match);
 *  prog NULL: rules with a prog pattern do not match. */
struct pl_rule_query {
    enum pl_rule_proto proto;
    enum pl_rule_role role;
    const struct pl_rule_addr *local, *remote;
    const char *prog;
};

/**
 * Parse a rules file's text (len bytes, need not be NUL-terminated) into
 * *out (which must be zeroed or freed). `file` names the text in errors.
 * Returns 0, -EINVAL with one line "FILE:LINE: problem" in err (and *out
 * empty), or -ENOMEM.
 */
int pl_rules_parse(const char *text, size_t len, const char *file,
                   struct pl_rules *out, char *err, size_t errlen);

/**
 * The query endpoint for the AF_INET or AF_INET6 address a (len bytes):
 * an IPv4 address as ::ffff:a.b.c.d, so rules for it match whichever form
 * the socket used. dual: a was given to an AF_INET6 socket without
 * IPV6_V6ONLY, whose :: then also stands for 0.0.0.0. Returns 0,
 * -EAFNOSUPPORT (another family, a NULL) or -EINVAL (len too short).
 */
int pl_rule_addr_from(const struct sockaddr *a, socklen_t len, bool dual,
                      struct pl_rule_addr *out);

/**
 * The first rule matching a socket of type `type` (SOCK_STREAM or
 * SOCK_DGRAM) at bind (bind true: a is the local endpoint, role listen or
 * udp-recv) or at connect/sendto (a is the remote endpoint, role connect
 * or udp-send), a being AF_INET or AF_INET6 (dual as for
 * pl_rule_addr_from), for program prog (NULL: rules with a prog pattern
 * do not match). NULL when none matches or a is not an address of those
 * families.
 */
const struct pl_rule *pl_rules_match_addr(const struct pl_rules *r, int type,
                                          bool bind, const struct sockaddr *a,
                                          socklen_t len, bool dual,
                                          const char *prog);

/** Free the table (safe twice). */
void pl_rules_free(struct pl_rules *r);

/** Drop the rules whose prog pattern does not match prog, and clear the
 *  pattern of those that do: the table then serves queries without prog
 *  (the program name is fixed for the life of the process image). */
void pl_rules_for_prog(struct pl_rules *r, const char *prog);

/** The first rule matching q, or NULL. */
const struct pl_rule *pl_rules_match(const struct pl_rules *r,
                                     const struct pl_rule_query *q);

/**
 * Decision for bind(a) of a socket of type SOCK_STREAM (role listen) or
 * SOCK_DGRAM (role udp-recv): pl_route_bind(), turned into KERNEL by a
 * matching kernel rule. An accel rule cannot accelerate what the built-in
 * decision leaves on the kernel (an address the stack does not own).
 * *hit (may be NULL) is set to the matching rule or NULL.
 */
enum pl_route pl_rules_route_bind(const struct pl_rules *r, int type,
                                  const struct sockaddr *a, socklen_t len,
                                  const struct pl_net *net, const char *prog,
                                  const struct pl_rule **hit);

/**
 * Decision for connect(a) of a SOCK_STREAM socket (role connect) or
 * connect/sendto(a) of a SOCK_DGRAM one (role udp-send): a kernel rule
 * sends it to the kernel, an accel rule accelerates it when the stack can
 * reach a (DNS included: the built-in "port 53 stays on the kernel" is a
 * default that an explicit accel rule overrides), no rule leaves
 * pl_route_connect()'s decision.
 */
enum pl_route pl_rules_route_connect(const struct pl_rules *r, int type,
                                     const struct sockaddr *a, socklen_t len,
                                     const struct pl_net *net, const char *prog,
                                     const struct pl_rule **hit);

/** "listen", "connect", "udp-send", "udp-recv" or "any". */
const char *pl_rules_role_name(enum pl_rule_role role);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_PL_RULES_H */
