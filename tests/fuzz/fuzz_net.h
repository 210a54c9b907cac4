/*
 * The stack fixture the frame and socket-call fuzzers share: the stack on
 * a fake netif (frames out are parsed, not kept), a virtual clock, a peer
 * that answers ARP and neighbour solicitations, a table of the TCP flows
 * seen leaving the stack (so a harness can aim segments at a connection's
 * real sequence numbers), frame builders, and the per-input reset with
 * its leak check. lwIP has global state and is initialised once per
 * process: every input starts from the same state (no sockets, no
 * connections, empty neighbour caches) and fn_end() aborts the process
 * when an input left anything behind.
 */
#ifndef ACCEL_TESTS_FUZZ_NET_H
#define ACCEL_TESTS_FUZZ_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stk.h"

/* Addresses (IPv4 host order). */
#define FN_STACK_IP 0x0a000002u /* 10.0.0.2/24 */
#define FN_PEER_IP 0x0a000001u  /* 10.0.0.1 */
extern const uint8_t fn_stack_mac[6], fn_peer_mac[6];
extern const uint8_t fn_stack_ip6[16], fn_peer_ip6[16]; /* fd00:200::2, ::1 */
extern const uint8_t fn_stack_ll6[16], fn_peer_ll6[16];

/* Largest frame built or accepted. */
#define FN_FRAME_MAX 9018

/* A TCP connection as the stack's output shows it (its port, the peer's),
 * and where the peer stands. Sequence numbers: snd_nxt is the stack's
 * next one (highest seen + length), rcv_nxt what it acknowledged last,
 * peer_nxt the peer's next (its ISN + 1 + what it sent in order). */
struct fn_flow {
    bool used, v6;
    uint16_t sport, pport;
    uint32_t snd_nxt, rcv_nxt, peer_nxt;
    bool acked; /* rcv_nxt is valid */
    bool syn;   /* the stack sent a SYN (active open) not answered yet */
};
#define FN_FLOWS 16
extern struct fn_flow fn_flows[FN_FLOWS];

/* Segment the builders make. */
struct fn_seg {
    uint16_t sport, dport; /* the peer's, the stack's */
    uint32_t seq, ack;
    uint8_t flags; /* FIN 1 SYN 2 RST 4 PSH 8 ACK 16 URG 32 */
    uint16_t win, urp;
    const uint8_t *opt; /* TCP options, padded here to 4 bytes */
    size_t optlen;      /* at most 40 */
    const uint8_t *data;
    size_t len;
};

/** Once per process: the stack up with both address families. */
void fn_init(void);
/** Start of an input: the baseline is checked at its end. */
void fn_begin(void);
/** End of an input: abort what is left (connections, TIME-WAIT,
 *  neighbour and ARP entries, reassembly), then abort() the process if
 *  lwIP memory, sockets, listener groups or lookup entries did not come
 *  back to the baseline, or an lwIP assertion failed. The harness closes
 *  its sockets first. */
void fn_end(void);
/** Abort the process when an lwIP assertion failed (after each step). */
void fn_check(void);

/** Advance the virtual clock by ms, running the timers as they fall due. */
void fn_advance(uint32_t ms);
/** One frame into the stack, then the peer's answers to its ARP and
 *  neighbour solicitations. */
void fn_input(const uint8_t *frame, size_t len);

/** Send the peer's answers to the ARP requests and neighbour
 *  solicitations the stack sent since (after a socket call). */
void fn_pump(void);

/** Build an Ethernet frame from the peer carrying a TCP segment (IPv4
 *  10.0.0.1 -> 10.0.0.2 or IPv6 fd00:200::1 -> ::2) into buf
 *  (FN_FRAME_MAX); returns its length. */
size_t fn_tcp(uint8_t *buf, bool v6, const struct fn_seg *s);
/** The same for a UDP datagram. */
size_t fn_udp(uint8_t *buf, bool v6, uint16_t sport, uint16_t dport,
              const uint8_t *data, size_t len);
/** Recompute the IPv4 header and TCP/UDP/ICMP/ICMPv6 checksums of a frame
 *  in place, as far as its headers allow (fragments: the IP header only). */
void fn_fix_csum(uint8_t *f, size_t len);
/** Rewrite a frame as sent from the peer to the stack: MACs, and the
 *  IPv4/IPv6 source and destination (ARP: sender and target). */
void fn_readdress(uint8_t *f, size_t len);

/** The flow of the stack's port sport and the peer's pport, or NULL. */
struct fn_flow *fn_flow_find(bool v6, uint16_t sport, uint16_t pport);
/** A new flow entry (the oldest one is reused when the table is full). */
struct fn_flow *fn_flow_add(bool v6, uint16_t sport, uint16_t pport);

/** An AF_INET or AF_INET6 address (ip host order, a6 16 bytes) into ss;
 *  returns its length. */
socklen_t fn_sin(struct sockaddr_storage *ss, uint32_t ip, uint16_t port);
socklen_t fn_sin6(struct sockaddr_storage *ss, const uint8_t *a6,
                  uint16_t port);
/** A socket of type (SOCK_STREAM/SOCK_DGRAM), AF_INET6 dual-stack when v6,
 *  or NULL. */
struct stk_sock *fn_socket(int type, bool v6);
/** Read and drop what s holds (up to a few reads), with room for
 *  control messages. */
void fn_drain_sock(struct stk_sock *s);

#endif
