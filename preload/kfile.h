/*
 * The kernel file behind the number of an accepted accelerated socket.
 *
 * Every fd we hand out must be a real kernel descriptor (the number is the
 * application's, and fstat, exec inheritance and close-on-exec are the
 * kernel's). An accepted connection lives in the stack, so its descriptor
 * needs no socket of its own: it is a duplicate of one per-process
 * template of its family (an unconnected TCP socket), which costs a dup instead
 * of a socket() and a TCP close per connection (2.4 us here, 20 % of the
 * server's CPU with a connection per request).
 *
 * Nothing may change the template's state where another socket could see
 * it. So before anything that writes kernel state of the open file (a
 * socket option the stack does not keep, file status flags other than
 * O_NONBLOCK, F_SETOWN and the other fcntl/ioctl requests, a dup), the
 * socket gets a kernel socket of its own under the same number
 * (pl_kfile_own). Options the stack keeps are validated on the template
 * and read back from the stack, so the template's copy is never seen.
 *
 * Return convention: fd or -errno. Nothing here touches errno.
 */
#ifndef ACCEL_PL_KFILE_H
#define ACCEL_PL_KFILE_H

#include "sock.h"

/** A new descriptor on the template of family (AF_INET or AF_INET6;
 *  flags: SOCK_CLOEXEC), or -errno. */
int pl_kfile_shared(int family, int flags);

/** Give s, known at fd, a kernel socket of its own if it still shares the
 *  template. On failure s keeps the template (logged once). */
void pl_kfile_own(struct pl_sock *s, int fd);

/** Same for whatever fd is, before a kernel call that writes the open
 *  file's state (fcntl, ioctl, dup). */
void pl_kfile_own_fd(int fd);

#endif /* ACCEL_PL_KFILE_H */
