/*
 * The live state region: what a running accelerated process publishes for
 * accel-stat (tools/accel-stat), one file per process in /dev/shm,
 * "accel-stat-<pid>", mode 0600 (its owner and root read it; nobody else).
 * The process writes it (base/statreg.c); readers only map it read-only
 * and never wait for the process. This header is the whole contract: the
 * layout is versioned (BASE_SR_VERSION), and a reader finds every part
 * through the offsets in the header, so parts may grow at the end.
 *
 * Counters are self-describing: the names (and the reasons of sockets
 * left on the kernel) are NUL-separated strings in the region, in the
 * order of the values, so a reader needs no table of its own.
 *
 * Consistency: the counters are plain 64-bit words the data path
 * increments under its stack lock (aligned loads never tear on the
 * supported 64-bit targets); the port snapshot and the socket table are
 * rewritten together under a sequence count (snap_seq: odd while being
 * written; a reader copies and retries while it was odd or changed); each
 * record of the kernel ring has its own sequence count the same way.
 *
 * Everything is in the host's byte order except the addresses and ports
 * of sockets, which are in network byte order (as in struct sockaddr).
 */
#ifndef ACCEL_BASE_STATREG_LAYOUT_H
#define ACCEL_BASE_STATREG_LAYOUT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BASE_SR_MAGIC 0x5441545343434100ull /* "\0ACCSTAT", little-endian */
#define BASE_SR_VERSION 1u
#define BASE_SR_DIR "/dev/shm"
#define BASE_SR_PREFIX "accel-stat-" /* then the pid in decimal */

/* Region states (base_sr_hdr.state). */
enum base_sr_state {
    BASE_SR_KERNEL_ONLY = 0, /* no data path in this process (yet) */
    BASE_SR_UP = 1,          /* the data path runs */
    BASE_SR_JOINED = 2,      /* runs on another process's port (exec) */
    BASE_SR_EXITING = 3,     /* exit began; the file goes away next */
};

struct base_sr_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t hdr_size; /* sizeof(struct base_sr_hdr) of the writer */
    uint64_t size;     /* of the whole file */
    int32_t pid, ppid;
    uint32_t uid;
    uint32_t state; /* enum base_sr_state */
    /* /proc/<pid>/stat's starttime (clock ticks after boot): a file whose
     * pid now runs another program, or no program, is stale. */
    uint64_t starttime;
    uint64_t created_ns; /* CLOCK_REALTIME */
    char comm[16];
    char cmdline[256]; /* the arguments joined with spaces, truncated */
    char datapath[160];
    char iface[32];
    char ip[64], ip6[64];
    int32_t port_owner_pid; /* the process whose port this one uses */
    uint32_t pad0;

    /* Counters: nstats uint64_t at stats_off; their names, NUL-separated
     * in the same order, at names_off (names_len bytes). */
    uint32_t nstats, stats_off, names_off, names_len;
    /* The reasons a socket stays on the kernel: nwhy NUL-separated texts
     * at why_off (why_len bytes); base_sr_kern.why indexes them, and
     * counter "kernel_why_<name>" counts each. */
    uint32_t nwhy, why_off, why_len, pad1;

    /* Snapshot of the port and of the socket table, under snap_seq. */
    uint32_t snap_seq; /* atomic: odd while the snapshot is written */
    uint32_t snap_interval_ms;
    uint64_t snap_ns;  /* CLOCK_MONOTONIC of the last snapshot, 0: none */
    uint32_t port_off; /* struct base_sr_port */
    uint32_t sock_off; /* sock_max struct base_sr_sock */
    uint32_t sock_max, sock_size;
    uint32_t nsocks;      /* entries of the last snapshot */
    uint32_t socks_total; /* sockets the process had (nsocks <= it) */
    /* A reader asking for the socket table: it stores CLOCK_MONOTONIC +
     * a few seconds here, and the process fills the table at its
     * snapshots until then (otherwise only the port part is refreshed). */
    uint64_t want_socks_until_ns; /* atomic */

    /* Sockets left on the kernel: a ring of the latest kern_max decisions
     * (struct base_sr_kern), kern_next counts every decision; a reader
     * shows a record while /proc/<pid>/fd/<fd> is still "socket:[inode]". */
    uint32_t kern_off, kern_max, kern_size, pad2;
    uint64_t kern_next; /* atomic */

    /* Capture (accel-dump): while cap_on is set, every frame this
     * process's stack receives or sends is copied into a ring of
     * cap_size bytes at cap_off (a power of two), up to cap_snaplen bytes
     * of each, as struct base_sr_cap records. One producer (the data
     * path, under its stack lock) and one consumer (accel-dump): the
     * producer writes records at cap_head and publishes cap_head
     * (release); the consumer reads from cap_tail up to cap_head and
     * publishes cap_tail. A record never straddles the end: where the
     * next one would, the producer writes a BASE_SR_CAP_WRAP word and
     * goes on at offset 0. A frame that does not fit is not copied and
     * counted in cap_drops: the data path never waits. accel-dump sets
     * cap_snaplen, then cap_on to its pid, and refreshes cap_alive_ns
     * (CLOCK_MONOTONIC) at least every second; the data path notices
     * cap_on within a snapshot interval and stops by itself when
     * cap_alive_ns is more than 3 s old (accel-dump killed). */
    uint32_t cap_off, cap_size;
    uint32_t cap_on;      /* atomic: the capturing accel-dump's pid, or 0 */
    uint32_t cap_snaplen; /* 0: whole frames */
    uint64_t cap_head, cap_tail;    /* atomic, bytes ever written/read */
    uint64_t cap_frames, cap_drops; /* atomic, copied / no room */
    uint64_t cap_alive_ns;          /* atomic */
};

#define BASE_SR_CAP_WRAP                                                       \
    0xffffffffu /* rec_len: the rest of the ring is                            \
                   unused, go on at offset 0 */

/* Capture record directions and drop marks. */
enum base_sr_cap_dir {
    BASE_SR_CAP_RX = 1,
    BASE_SR_CAP_TX = 2,
};
enum base_sr_cap_drop {
    BASE_SR_CAP_KEPT = 0,
    BASE_SR_CAP_DROP_STACK = 1, /* the stack dropped it (rx_drop_stack) */
    BASE_SR_CAP_DROP_NOBUF = 2, /* no stack memory for it (rx_drop_nobuf) */
    BASE_SR_CAP_DROP_TXBUF = 3, /* no mbuf to send it (tx_drop_nombuf) */
    BASE_SR_CAP_DROP_PORT = 4,  /* before the stack: the port flagged a bad
                                   checksum, or a chained mbuf
                                   (rx_drop_stack) */
    BASE_SR_CAP_DROP_SHARE = 5, /* before the stack: for another process
                                   of the family, which could not take it
                                   (share_drop_*) */
};

/* One captured frame: the header, then caplen bytes, padded to 8. */
struct base_sr_cap {
    uint32_t rec_len; /* header + data, a multiple of 8 */
    uint32_t caplen, origlen;
    uint8_t dir, drop; /* enum base_sr_cap_dir, enum base_sr_cap_drop */
    uint16_t pad;
    uint64_t ts_ns; /* CLOCK_REALTIME */
};

/* The port (ethdev counters, mbuf pool use), as of snap_ns. */
struct base_sr_port {
    uint64_t ipackets, opackets, ibytes, obytes;
    uint64_t imissed, ierrors, oerrors, rx_nombuf;
    uint32_t pool_size, pool_in_use; /* mbufs */
    uint32_t queues, up;
    uint64_t reserved[6];
};

/* TCP states: Linux's numbering (include/net/tcp_states.h), as ss shows
 * them; UDP sockets are BASE_SR_TCP_CLOSE when unconnected (ss's UNCONN)
 * and BASE_SR_TCP_ESTABLISHED when connected. */
enum base_sr_tcp_state {
    BASE_SR_TCP_ESTABLISHED = 1,
    BASE_SR_TCP_SYN_SENT,
    BASE_SR_TCP_SYN_RECV,
    BASE_SR_TCP_FIN_WAIT1,
    BASE_SR_TCP_FIN_WAIT2,
    BASE_SR_TCP_TIME_WAIT,
    BASE_SR_TCP_CLOSE,
    BASE_SR_TCP_CLOSE_WAIT,
    BASE_SR_TCP_LAST_ACK,
    BASE_SR_TCP_LISTEN,
    BASE_SR_TCP_CLOSING,
};

/* One accelerated socket (128 bytes). Addresses are IPv6, or IPv4 in the
 * first 4 bytes when family is AF_INET. */
struct base_sr_sock {
    int32_t fd;
    uint8_t family; /* AF_INET or AF_INET6: the application's view */
    uint8_t proto;  /* IPPROTO_TCP or IPPROTO_UDP */
    uint8_t state;  /* enum base_sr_tcp_state */
    uint8_t pad;
    uint8_t laddr[16], raddr[16];
    uint16_t lport, rport; /* network byte order */
    /* Bytes waiting to be read and not yet acknowledged by the peer (for
     * a listener: connections waiting in accept, and its backlog). */
    uint32_t rcvq, sndq;
    uint32_t retrans; /* segments retransmitted (tcpi_total_retrans) */
    uint32_t srtt_us, rttvar_us;
    uint32_t cwnd, ssthresh; /* segments */
    uint32_t mss, pad1;
    uint64_t bytes_acked, bytes_received;
    uint32_t rto_us, lost;
    uint8_t reserved[24];
};

/* One socket the library left on the kernel (64 bytes). */
struct base_sr_kern {
    uint32_t seq; /* atomic: odd while written */
    int32_t fd;
    uint64_t inode;   /* the socket's, as /proc/<pid>/fd/<fd> shows it */
    uint64_t when_ns; /* CLOCK_REALTIME */
    uint8_t family, proto, why, pad;
    uint16_t port; /* network byte order; with addr, the call's address */
    uint8_t addr[16];
    char call[10]; /* the call that decided: "bind", "connect", ... */
    uint8_t reserved[8];
};

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BASE_STATREG_LAYOUT_H */
