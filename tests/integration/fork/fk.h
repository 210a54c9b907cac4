/*
 * Helpers shared by the fork test programs (tests/integration/fork/): step
 * reporting ("ok: STEP" / "FAIL: STEP: why" on stdout, flushed before any
 * fork so a child never repeats a parent's buffered line), exact reads and
 * writes on blocking fds, the byte pattern used for bulk transfers, and a
 * poll-driven echo round trip of many bytes through one socket.
 */
#ifndef FK_H
#define FK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** Print "FAIL: STEP: why" (with the pid when not the main process), exit 1. */
void fk_die(const char *step, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/** Print "ok: STEP" and flush. */
void fk_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Mark this process as a child: fk_die prints "child PID" in its lines. */
void fk_set_child(void);

/** Parse "a.b.c.d" + port into a sockaddr_in; dies on a bad address. */
struct sockaddr_in fk_addr(const char *ip, int port);

/** TCP listener on ip:port (SO_REUSEADDR, backlog 128). */
int fk_listen(const char *ip, int port);

/** TCP connection to ip:port (blocking). */
int fk_connect(const char *ip, int port);

/** Write all of buf (send MSG_NOSIGNAL; write for non-sockets); returns 0,
 * or -errno. */
int fk_write_all(int fd, const void *buf, size_t len);

/** Read exactly len bytes; returns len, the count before EOF, or -errno. */
ssize_t fk_read_exact(int fd, void *buf, size_t len);

/** Byte @p off of the bulk pattern. */
static inline unsigned char
fk_pattern(uint64_t off)
{
    return (unsigned char)((off * 2654435761u) >> 13 ^ off ^ 0xa5);
}

/**
 * Send @p len pattern bytes through @p fd to an echo peer while reading
 * the echo back (poll, MSG_DONTWAIT), and compare. Returns NULL on
 * success or a static description of the first problem.
 */
const char *fk_echo_bulk(int fd, size_t len);

/** The IPv4 address of a socket's local (or peer) end as text. */
const char *fk_sockname(int fd, int peer);

#endif
