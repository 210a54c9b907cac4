/*
 * lwIP hook declarations (LWIP_HOOK_FILENAME): included by lwIP's own
 * sources where hooks are called. Only plain C types and lwIP's struct
 * tags here, so it can be included before or after any lwIP header.
 */
#ifndef ACCEL_STK_HOOKS_H
#define ACCEL_STK_HOOKS_H

#include <stdint.h>

#include <stdbool.h>

struct ip_addr;
struct ip6_addr;
struct netif;
struct pbuf;
struct tcp_hdr;
struct tcp_pcb;
struct tcp_pcb_listen;
struct tcp_seg;

/** RFC 6528 initial sequence number for a new connection (stack/isn.c):
 *  a keyed hash of the 4-tuple plus a clock. Ports in host order. */
uint32_t stk_isn_hook(const struct ip_addr *local_ip, uint16_t local_port,
                      const struct ip_addr *remote_ip, uint16_t remote_port);

/** The next hop for an IPv6 destination off-link: the configured gateway
 *  (stack/netif.c), or NULL for lwIP's router list. */
const struct ip6_addr *stk_nd6_gateway(struct netif *netif,
                                       const struct ip6_addr *dest);

/** A SYN was refused because the listener's accept queue is full
 *  (patches/0001-tcp-listen-overflow-hook.patch). */
void stk_listen_overflow_hook(struct tcp_pcb_listen *lpcb);

/* Hashed TCP demultiplexing (stack/pcb_hash.c, patches/0004): pcbs, the
 * address of one of lwIP's PCB list heads; ports in host order. */
/** pcb was put on the list pcbs. */
void stk_pcb_hash_reg(struct tcp_pcb **pcbs, struct tcp_pcb *pcb);
/** pcb is about to leave the list pcbs. */
void stk_pcb_hash_rmv(struct tcp_pcb **pcbs, struct tcp_pcb *pcb);
/** Where TCP_RMV, right after stk_pcb_hash_rmv, starts looking for pcb's
 *  predecessor (patches/0006): that predecessor when the table knows it,
 *  else the list's head. */
struct tcp_pcb *stk_pcb_rmv_from(struct tcp_pcb **pcbs, struct tcp_pcb *pcb);
/** pcb, on the TIME-WAIT list, was ended by a new SYN (patches/0003):
 *  hide it from lookups until tcp_slowtmr frees it. */
void stk_pcb_tw_retire(struct tcp_pcb *pcb);
/** tcp_slowtmr's TIME-WAIT walk (patches/0005) starts: *pcb and *prev are
 *  where the last one stopped (or the head and NULL); returns how many
 *  pcbs to look at: an eighth of the list, at least STK_TW_WALK_MIN. */
uint32_t stk_pcb_tw_walk_from(struct tcp_pcb **pcb, struct tcp_pcb **prev);
/** ... and stopped at pcb (NULL: the end), prev being the one before. */
void stk_pcb_tw_walk_at(struct tcp_pcb *pcb, struct tcp_pcb *prev);
/** The next PCB of the list pcbs after `after` (NULL: the first) that
 *  matches the 4-tuple (listen list: the local port), or NULL. */
struct tcp_pcb *
stk_pcb_hash_lookup(struct tcp_pcb **pcbs, struct tcp_pcb *after,
                    const struct ip_addr *local_ip, uint16_t local_port,
                    const struct ip_addr *remote_ip, uint16_t remote_port);

/* A packet (payload at its IP header) that waited for a neighbour nobody
 * answered, about to be freed (patch 0039, neigh_unres.c). */
void stk_etharp_unresolved(struct pbuf *p);
void stk_nd6_unresolved(struct pbuf *p);

/* accel's TCP sender (patch 0008, LWIP_TCP_SENDER_HOOKS; stack/tcp_*.c).
 * An ACK for pcb, before lwIP frees the segments it acknowledges: the
 * options (optlen bytes, opt1len of them after hdr, the rest at opt2),
 * the segment's TCP length, and the window's right edge before it. */
void stk_tcp_ack_in(struct tcp_pcb *pcb, const struct tcp_hdr *hdr,
                    uint16_t optlen, uint16_t opt1len, const uint8_t *opt2,
                    uint32_t ackno, uint16_t tcplen, uint32_t old_right_edge);
/** A segment for pcb (any state tcp_process handles), before lwIP looks
 *  at it (patch 0030, stack/tcp_validate.c): LWIP_TCP_VALIDATE_PASS,
 *  _DROP or _DROP_ACK. Options as for stk_tcp_ack_in. */
int stk_tcp_validate(struct tcp_pcb *pcb, const struct tcp_hdr *hdr,
                     uint16_t optlen, uint16_t opt1len, const uint8_t *opt2,
                     uint32_t seqno, uint32_t ackno, uint8_t flags,
                     uint16_t tcplen);
/** SYN cookies (patch 0032, stack/syncookie.c). A SYN finds the listen
 *  backlog full: non-zero when a cookie SYN-ACK went instead. */
int stk_tcp_syn_full(struct tcp_pcb_listen *lpcb, const struct tcp_hdr *hdr,
                     uint16_t optlen, uint16_t opt1len, const uint8_t *opt2,
                     uint32_t seqno);
/** An ACK reached lpcb: 2 and *pcb, the connection a valid cookie
 *  describes; 1: drop it; 0: not a cookie (lwIP resets). */
int stk_tcp_listen_ack(struct tcp_pcb_listen *lpcb, const struct tcp_hdr *hdr,
                       uint16_t optlen, uint16_t opt1len, const uint8_t *opt2,
                       uint32_t seqno, uint32_t ackno, struct tcp_pcb **pcb);
/** A pure ACK to a TIME-WAIT pcb (patch 0041): non-zero when it answers a
 *  SYN cookie sent for its 4-tuple within two minutes (a new connection
 *  whose SYN never reached the stack). */
int stk_tcp_tw_cookie(const struct tcp_hdr *hdr, uint32_t seqno,
                      uint32_t ackno);
/** ... and after: loss detection, congestion control, the timer. */
void stk_tcp_ack_done(struct tcp_pcb *pcb);
/** SYN-SENT: the SYN seg was acknowledged (it is about to be freed). */
void stk_tcp_syn_acked(struct tcp_pcb *pcb, struct tcp_seg *seg);
/** tcp_output starts: retransmit what is marked lost. */
void stk_tcp_output_begin(struct tcp_pcb *pcb);
/** May tcp_output send seg, the next new segment, now (congestion
 *  window)? */
int stk_tcp_may_send(struct tcp_pcb *pcb, struct tcp_seg *seg);
/** seg went out (new, or sent again). */
void stk_tcp_seg_sent(struct tcp_pcb *pcb, struct tcp_seg *seg);
/** The connections lwIP's tcp_fasttmr and tcp_slowtmr walk (patch 0036,
 *  tcp_tick.c): the first, the next. */
struct tcp_pcb *stk_tcp_tick_first(void);
struct tcp_pcb *stk_tcp_tick_next(struct tcp_pcb *pcb);
/** tcp_slowtmr looked at pcb (still active): off the list if idle. */
void stk_tcp_tick_done(struct tcp_pcb *pcb);
/** tcp_slowtmr starts: parked keepalives now due rejoin the list. */
void stk_tcp_tick_slow(void);
/** pcb is about to be freed. */
void stk_tcp_pcb_free(struct tcp_pcb *pcb);
/** The last segment of pcb->unacked, or NULL (patch 0014). */
struct tcp_seg *stk_tcp_unacked_tail(struct tcp_pcb *pcb);

/* The receiver (patch 0009; stack/tcp_rx.c): D-SACK blocks, and the
 * out-of-order segments' bounds. */
void stk_tcp_dsack_set(struct tcp_pcb *pcb, uint32_t left, uint32_t right);
int stk_tcp_dsack_pending(const struct tcp_pcb *pcb);
void stk_tcp_dsack_get(const struct tcp_pcb *pcb, uint32_t *left,
                       uint32_t *right);
void stk_tcp_dsack_sent(struct tcp_pcb *pcb);
void stk_tcp_ooseq_add(struct tcp_seg *seg);
void stk_tcp_ooseq_del(struct tcp_seg *seg);
void stk_tcp_ooseq_dropped(struct tcp_pcb *pcb, struct tcp_seg *seg);
/** Out-of-order segments pcb may hold now (lwIP's
 *  TCP_OOSEQ_PBUFS_LIMIT). */
uint16_t stk_tcp_ooseq_limit(const struct tcp_pcb *pcb);

#endif /* ACCEL_STK_HOOKS_H */
