/*
 * Route decisions of pl_sock (sock_ctl.c, sock_io.c) with the process's
 * per-application rules (rules.h) on top of the built-in ones (decide.h).
 *
 * The rule table is read once per process image, by the first call of any
 * function here (sock.c asks pl_rules_ok() when the configuration makes a
 * first socket a candidate); a fork child inherits it. Thread-safe.
 * Nothing here touches errno.
 */
#ifndef ACCEL_PL_ROUTE_H
#define ACCEL_PL_ROUTE_H

#include <stdbool.h>
#include <sys/socket.h>

#include "decide.h"
#include "why.h"

/** Load the rules (ACCEL_RULES, or the system file when that is unset and
 *  the file exists). False when the file could not be read or parsed:
 *  that was logged in one error line, and nothing may be accelerated. */
bool pl_rules_ok(void);

/** bind(a) of an undecided socket of type SOCK_STREAM (role listen) or
 *  SOCK_DGRAM (role udp-recv). fd is for the debug log only. a is an
 *  AF_INET address (or one the kernel must judge). For PL_ROUTE_KERNEL,
 *  *why (if why is not NULL) says why. */
enum pl_route pl_sock_route_bind(int type, int fd, const struct sockaddr *a,
                                 socklen_t len, enum pl_why *why);

/** listen() on an unbound undecided TCP socket (role listen, local
 *  0.0.0.0:0): PL_ROUTE_ACCEL_ANY or PL_ROUTE_KERNEL. */
enum pl_route pl_sock_route_listen(int fd, enum pl_why *why);

/** The same for a native IPv6 address a (a sockaddr_in6 the kernel would
 *  take; `::` of an IPV6_V6ONLY socket included): decide.h's
 *  pl_route_bind6/pl_route_connect6 with the rules. dual: the socket is
 *  not IPV6_V6ONLY (its `::` also matches IPv4 wildcard rules). */
enum pl_route pl_sock_route_bind6(int type, int fd, const struct sockaddr *a,
                                  socklen_t len, bool dual, enum pl_why *why);
enum pl_route pl_sock_route_connect6(int type, int fd, const struct sockaddr *a,
                                     socklen_t len, enum pl_why *why);

/** connect(a) (role connect or udp-send) or sendto(a) (udp-send) of a
 *  socket of type `type`. fd < 0: not logged (per-datagram checks). */
enum pl_route pl_sock_route_connect(int type, int fd, const struct sockaddr *a,
                                    socklen_t len, enum pl_why *why);

#endif /* ACCEL_PL_ROUTE_H */
