/*
 * Shared network helpers for the differential scenarios and the peer:
 * the lab addresses, the peer's service ports, the byte pattern and hash
 * used to check bulk transfers, and small loops (read exactly n bytes,
 * wait for poll events, ask the peer to connect back).
 *
 * Both worlds use the same addresses: the subject is 10.200.0.2 (kernel
 * address in the reference namespace, the accelerated stack's address in
 * the lab), the kernel peer is 10.200.0.1.
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
