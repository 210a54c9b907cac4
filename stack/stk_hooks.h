/*
 * lwIP hook declarations (LWIP_HOOK_FILENAME): included by lwIP's own
 * sources where hooks are called. Only plain C types and lwIP's struct
 * tags here, so it can be included before or after any lwIP header.
 */
#ifndef ACCEL_STK_HOOKS_H
#define ACCEL_STK_HOOKS_H

#include <stdint.h>

struct ip4_addr;
struct tcp_pcb;
struct tcp_pcb_listen;

/** RFC 6528 initial sequence number for a new connection (stack/isn.c):
 *  a keyed hash of the 4-tuple plus a clock. Ports in host order. */
uint32_t stk_isn_hook(const struct ip4_addr *local_ip, uint16_t local_port,
                      const struct ip4_addr *remote_ip, uint16_t remote_port);

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
                    const struct ip4_addr *local_ip, uint16_t local_port,
                    const struct ip4_addr *remote_ip, uint16_t remote_port);

#endif /* ACCEL_STK_HOOKS_H */
