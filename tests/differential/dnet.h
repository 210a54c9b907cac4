/*
 * Shared network helpers for the differential scenarios and the peer:
 * the lab addresses, the peer's service ports, the byte pattern and hash
 * used to check bulk transfers, and small loops (read exactly n bytes,
 * wait for poll events, ask the peer to connect back).
 *
 * Both worlds use the same addresses: the subject is 10.200.0.2 and
 * fd00:200::2 (kernel addresses in the reference namespace, the
 * accelerated stack's ACCEL_IP and ACCEL_IP6 in the lab), the kernel peer
 * is 10.200.0.1 and fd00:200::1. The peer serves every port on both.
 */
#ifndef DIFF_DNET_H
#define DIFF_DNET_H

#include <signal.h>

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define D_PEER_IP "10.200.0.1"
#define D_SUBJ_IP "10.200.0.2"
#define D_NONLOCAL_IP "10.200.0.99"

/* IPv6: native addresses, and the IPv4 ones in IPv4-mapped form (what an
 * AF_INET6 socket uses to reach them). */
#define D_PEER_IP6 "fd00:200::1"
#define D_SUBJ_IP6 "fd00:200::2"
#define D_NONLOCAL_IP6 "fd00:200::99"
#define D_PEER_MAPPED "::ffff:10.200.0.1"
#define D_SUBJ_MAPPED "::ffff:10.200.0.2"
#define D_NONLOCAL_MAPPED "::ffff:10.200.0.99"

/* Peer services (see peer.c for what each does). */
enum {
    D_ECHO = 7001,     /* TCP echo, closes after the client's EOF */
    D_CLOSE = 7002,    /* accept then close (FIN) */
    D_RST = 7003,      /* accept, read 1 byte, SO_LINGER 0 close (RST) */
    D_SINK = 7004,     /* read to EOF, reply "bytes=N fnv=H\n", close */
    D_SOURCE = 7005,   /* read "N\n", send N pattern bytes, close */
    D_HOLD = 7006,     /* accept, never read, close after 10 s */
    D_UDP_ECHO = 7007, /* UDP echo (zero-length included) */
    D_CTRL = 7008,     /* connect-back control, see d_connect_back() */
    D_REFUSED = 7009,  /* nothing listens (TCP RST / ICMP unreachable) */
    D_DEAF = 7010,     /* IPv4: full accept queue, SYNs go unanswered */
};

/* Subject listening ports: D_LPORT_BASE + scenario number (+ small k). */
#define D_LPORT_BASE 20000

/** sockaddr_in for ip:port. */
struct sockaddr_in d_sin(const char *ip, int port);

/** TCP socket connected to the peer's @p port (traced); exits on failure. */
int d_connect(int port);

/**
 * TCP socket connected to D_RST with the go-ahead byte sent: the peer's
 * RST is on its way (wait for it with d_wait(fd, 0)).
 */
int d_connect_rst(void);

/** TCP socket bound to D_SUBJ_IP:@p port with SO_REUSEADDR, listening. */
int d_listen(int port);

/**
 * Ask the peer to open a TCP connection to D_SUBJ_IP:@p port and then act
 * per @p mode: "hold" (read to EOF, close), "send:TEXT" (send TEXT, read to
 * EOF, close), "echo", "close" (close at once), "rst" (SO_LINGER 0 close).
 * Returns 0 once the peer reports its connect succeeded (traced); exits
 * on failure.
 */
int d_connect_back(int port, const char *mode);

/** Read until @p n bytes or EOF/error; returns bytes read (or -errno). */
ssize_t d_read_full(int fd, void *buf, size_t n);

/** Write all @p n bytes (blocking fd); returns n or -errno. */
ssize_t d_write_full(int fd, const void *buf, size_t n);

/** poll() @p fd for @p events until something is reported; returns revents. */
int d_wait(int fd, int events);

/** Byte @p off of the shared bulk pattern. */
static inline unsigned char
d_pattern(uint64_t off)
{
    return (unsigned char)((off * 131u) ^ (off >> 9) ^ 0x5a);
}

/** sockaddr_in6 for [ip]:port, any IPv6 text form ("::ffff:a.b.c.d"
 *  too); flowinfo and scope_id 0. Exits on a malformed @p ip. */
struct sockaddr_in6 d_sin6(const char *ip, int port);

/** sockaddr_in6 for the IPv4-mapped form of the dotted @p ip4. */
struct sockaddr_in6 d_sin6_mapped(const char *ip4, int port);

/** 1 when @p a holds an IPv4-mapped address (::ffff:a.b.c.d), else 0. */
int d_is_mapped(const struct sockaddr_in6 *a);

/** AF_INET6 TCP socket connected to the peer's [@p ip]:@p port (a native
 *  or mapped address); exits on failure. */
int d_connect6(const char *ip, int port);

/**
 * AF_INET6 TCP socket bound to [@p ip]:@p port with SO_REUSEADDR,
 * listening; @p v6only 0 or 1 sets IPV6_V6ONLY before the bind, -1 leaves
 * the default.
 */
int d_listen6(const char *ip, int port, int v6only);

/** d_connect_back() to the subject's address @p ip (IPv4 or IPv6 text)
 *  instead of D_SUBJ_IP. */
int d_connect_back_to(const char *ip, int port, const char *mode);

/**
 * d_connect_back_to() that may fail: returns 0 once the peer's connect
 * succeeded, or -1 with the peer's errno name traced (say ECONNREFUSED:
 * nothing listens there for that family). Exits only when the control
 * connection itself fails.
 */
int d_connect_back_try(const char *ip, int port, const char *mode);

/** FNV-1a over @p len bytes, continuing from @p h (start: D_FNV_INIT). */
#define D_FNV_INIT 2166136261u
uint32_t d_fnv(uint32_t h, const void *buf, size_t len);

/** Arm a one-shot 100 ms SIGALRM whose handler counts into d_alarms,
 *  installed with SA_RESTART when @p restart (for the EINTR scenarios). */
extern volatile sig_atomic_t d_alarms;
void d_alarm_arm(int restart);

/** Die with a trace line: a setup step failed, the rest is meaningless. */
void d_fatal(int line, const char *what) __attribute__((noreturn));

#endif
