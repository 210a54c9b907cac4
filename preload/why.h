/*
 * Why a socket is left on the kernel (issue: no socket may silently stay
 * there). Every AF_INET/AF_INET6 socket the library leaves on the kernel
 * gets one reason: an info line naming the fd, the call's address and the
 * reason, and the ACCEL_STATS counter kernel_why_NAME. The reasons are
 * listed once, in base/why.def (the counters are base's).
 */
#ifndef ACCEL_PL_WHY_H
#define ACCEL_PL_WHY_H

#include <stdbool.h>
#include <sys/socket.h>

enum pl_why {
#define PL_WHY(name, warns, text) PL_WHY_##name,
#include "why.def"
#undef PL_WHY
    PL_WHY_COUNT
};

/** The reason's text. */
const char *pl_why_text(enum pl_why why);

/**
 * Log why fd stays on the kernel (info; a warning, once per reason and
 * process, when a bind or listen, a server's socket, stays there for a
 * reason the user did not ask for: a server on the kernel is what a user
 * of accel-run least expects) and count it. a/len: the address of the call
 * that decided (NULL: none). Takes the stack lock for the counter.
 */
void pl_why_note(int fd, enum pl_why why, const char *call,
                 const struct sockaddr *a, socklen_t len);

#endif /* ACCEL_PL_WHY_H */
